// untold/extension_rules.hpp - the rules of the engine extension tables and
// plugin chunks: R-EXT-RANGES, R-MORPH-* (plus R-STRING for their strings)
// and their deep checks. The records, views and plugin envelope are in
// extension_records.hpp; extensions.hpp includes both.
//
// Index semantics the library checks (see docs/extensions.md):
//   - a joint's parentJointIndex and a skin mapping's skeletonJointIndex are
//     indices *within* a skeleton (0 = its firstJointRecordIndex), as the
//     reference engine reads them;
//   - a skin finds its skeleton by skeletonEntityId == skeleton.entityId;
//   - the joint indices of a skinned vertex index the skin's own mapping
//     (0 .. jointCount-1).
// Every check is linear (or n log n) in the table sizes, whatever ranges and
// references the file declares.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "detail/lean_std.hpp"
#include "error.hpp"
#include "extension_records.hpp"
#include "format.hpp"
#include "packing.hpp"
#include "records.hpp"
#include "validate.hpp"
#include "view.hpp"

namespace untold {

// ---- shared algorithms -----------------------------------------------------------------

namespace detail {

/// Visits rows 0..count-1 of a parent forest parents first, iteratively and
/// in O(count): visit(row, parent) runs once per row, where `parent` is a row
/// visited before, or none for a root, for a parent_of(row) that is none or
/// >= count, and for the link that would close a cycle. Returns the first row
/// whose parent link closed a cycle, or none. Safe for any parent values.
/// Counts two steps of validation_work per row.
template <class ParentOf, class Visit>
std::uint32_t visit_parents_first(std::uint32_t count, ParentOf&& parent_of, Visit&& visit) {
  constexpr std::uint8_t unvisited = 0, on_path = 1, done = 2;
  std::vector<std::uint8_t> state(count, unvisited);
  std::vector<std::uint32_t> path;
  std::uint32_t first_cycle = none;
  for (std::uint32_t start = 0; start < count; ++start) {
    // Climb until a root, a visited row, or a row already on this path.
    for (std::uint32_t row = start; state[row] == unvisited;) {
      ++validation_work;
      state[row] = on_path;
      path.push_back(row);
      const std::uint32_t parent = parent_of(row);
      if (parent == none || parent >= count) break;
      if (state[parent] == on_path) {
        if (first_cycle == none) first_cycle = row;
        break;
      }
      row = parent;
    }
    // Unwind from the top: each row's parent is done by now, or the row is a root.
    while (!path.empty()) {
      const std::uint32_t row = path.back();
      path.pop_back();
      ++validation_work;
      const std::uint32_t parent = parent_of(row);
      const bool linked = parent != none && parent < count && state[parent] == done;
      state[row] = done;
      visit(row, linked ? parent : none);
    }
  }
  return first_cycle;
}

/// R-EXT-RANGES: [first, first + count) of a record of `table` lies inside a
/// table of `size` records (overflow-safe). Reports `first_field` when first
/// alone is past the end, else `count_field`.
template <class = void>
status check_record_range(const asset& a, chunk_type table, std::size_t row, std::uint32_t first,
                          std::uint32_t count, std::uint64_t size, const char* first_field,
                          const char* count_field) {
  if (first > size) return record_error(errc::extension_range, a, table, row, first_field, first);
  if (std::uint64_t{first} + count > size)
    return record_error(errc::extension_range, a, table, row, count_field, count);
  return {};
}

/// R-STRING for string fields of extension table R.
template <class R>
status check_string_fields(const asset& a, const string_validator& strings,
                           std::initializer_list<std::pair<std::uint32_t R::*, const char*>> fields) {
  const auto rows = a.table<R>();
  for (std::size_t row = 0; row < rows.size(); ++row) {
    const R r = rows[row];
    for (const auto& [member, field] : fields)
      if (!strings.valid(r.*member))
        return record_error(errc::bad_string, a, record_traits<R>::table, row, field, r.*member);
  }
  return {};
}

[[nodiscard]] inline std::optional<std::uint64_t> chunk_size(const asset& a, chunk_type type) noexcept {
  const auto row = a.find_chunk(type);
  if (!row) return std::nullopt;
  return a.chunks()[*row].uncompressed_size;
}

}  // namespace detail

// ---- rules (R-EXT-RANGES, R-STRING) ----------------------------------------------------

// R-STRING: every string reference of the extension tables.
template <class = void>
status validate_extension_strings(const asset& a, const string_validator& strings) {
  UNTOLD_TRY(detail::check_string_fields<skeleton_record>(a, strings, {{&skeleton_record::name_offset, "nameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<skeleton_joint_record>(
      a, strings, {{&skeleton_joint_record::joint_path_offset, "jointPathOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<animation_clip_record>(
      a, strings, {{&animation_clip_record::name_offset, "nameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<animation_channel_record>(
      a, strings, {{&animation_channel_record::joint_path_offset, "jointPathOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<light_record>(a, strings, {{&light_record::name_offset, "nameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<camera_record>(a, strings, {{&camera_record::name_offset, "nameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<color_management_record>(
      a, strings,
      {{&color_management_record::view_transform_name_offset, "viewTransformNameOffset"},
       {&color_management_record::look_name_offset, "lookNameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<color_grade_lut_record>(
      a, strings, {{&color_grade_lut_record::lut_uri_offset, "lutUriOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<morph_target_record>(a, strings,
                                                              {{&morph_target_record::name_offset, "nameOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<morph_driver_record>(
      a, strings, {{&morph_driver_record::joint_path_offset, "jointPathOffset"}}));
  UNTOLD_TRY(detail::check_string_fields<muscle_record>(
      a, strings,
      {{&muscle_record::name_offset, "nameOffset"},
       {&muscle_record::forward_joint_offset, "forwardJointOffset"},
       {&muscle_record::forward_tip_joint_offset, "forwardTipJointOffset"},
       {&muscle_record::origin_joint_offset, "originJointOffset"},
       {&muscle_record::origin_tip_joint_offset, "originTipJointOffset"},
       {&muscle_record::insertion_joint_offset, "insertionJointOffset"},
       {&muscle_record::insertion_tip_joint_offset, "insertionTipJointOffset"},
       {&muscle_record::driver_joint_offset, "driverJointOffset"}}));
  return {};
}

namespace detail {
/// A signed 64-bit value as an order-preserving u64 (sign bit flipped), so
/// range_extrema can compare it (biased_key reads them back).
[[nodiscard]] constexpr std::uint64_t bias_signed(std::int64_t v) noexcept {
  return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
}
/// A biased (bias_signed) little-endian u64 as extrema (range_extrema key).
struct biased_key {
  using value = extrema<std::uint64_t, 1>;
  static value read(const std::byte* p) noexcept {
    const auto v = load_le_unchecked<std::uint64_t>(p);
    return {{v}, {v}};
  }
};
/// Joint-table rows whose parent checks would exceed this many steps in total
/// are only range-checked (see validate_skeletons): 2 x the joint count plus
/// a constant, so validation stays linear in the file size.
[[nodiscard]] constexpr std::uint64_t cycle_check_budget(std::uint64_t joint_count) noexcept {
  return 2 * joint_count + 4096;
}
}  // namespace detail

// R-EXT-RANGES (skeletons, joints): each skeleton's joint range lies inside
// the joint table. Inside a skeleton a joint's parentJointIndex is NONE or a
// joint of that skeleton (index within it) and parent chains have no cycle.
// Skeleton ranges may overlap (the format allows it; a shared joint is then
// read in each skeleton's frame). A joint that no skeleton covers belongs to
// no hierarchy; its parent must still be NONE or a row of the joint table.
//
// Linear in the tables however ranges overlap: each distinct range's largest
// parent comes from a range query; a range whose joints all come after their
// parents in table order (what exporters write) is acyclic by that query
// alone; other ranges are walked, within a budget of
// detail::cycle_check_budget(joints) steps in total. A file that needs more
// (partially overlapping ranges of joints stored children-first) breaks the
// library's stricter rule: rejected at firstJointRecordIndex, unless
// open_options::relaxed_extension_ranges, which skips those walks (the
// library's own parent walks treat a cycle link as a root).
template <class = void>
status validate_skeletons(const asset& a) {
  const auto skeletons = a.table<skeleton_record>();
  const auto joints = a.table<skeleton_joint_record>();
  const std::uint64_t joint_count = joints.size();
  struct owned_range {
    std::uint32_t first, count, row;
  };
  std::vector<owned_range> ranges;
  for (std::uint32_t row = 0; row < skeletons.size(); ++row) {
    const skeleton_record s = skeletons[row];
    UNTOLD_TRY(detail::check_record_range(a, chunk_type::skeleton_table, row, s.first_joint_record_index,
                                          s.joint_record_count, joint_count, "firstJointRecordIndex",
                                          "jointRecordCount"));
    if (s.joint_record_count != 0) ranges.push_back({s.first_joint_record_index, s.joint_record_count, row});
  }
  detail::sort(ranges.begin(), ranges.end(), [](const owned_range& x, const owned_range& y) {
    if (x.first != y.first) return x.first < y.first;
    return x.count != y.count ? x.count < y.count : x.row < y.row;
  });

  const auto joint_error = [&](std::uint64_t row, std::uint32_t parent) {
    return detail::record_error(errc::extension_range, a, chunk_type::skeleton_joint_table, row, "parentJointIndex",
                                parent);
  };
  // Per joint row: parent + 1 (0 for NONE), and parent - row (biased; 0 for NONE).
  std::vector<std::byte> parent_plus_one(joint_count * 4), parent_minus_row(joint_count * 8);
  detail::validation_work += joint_count;
  for (std::uint32_t row = 0; row < joint_count; ++row) {
    const std::uint32_t parent = joints[row].parent_joint_index;
    store_le_unchecked<std::uint32_t>(parent_plus_one.data() + 4 * std::size_t{row}, parent == none ? 0 : parent + 1);
    store_le_unchecked<std::uint64_t>(parent_minus_row.data() + 8 * std::size_t{row},
                                      parent == none ? 0 : detail::bias_signed(std::int64_t{parent} - row));
  }
  detail::range_extrema<detail::index_key<std::uint32_t>> largest_parent(parent_plus_one.data(), 4, joint_count);
  detail::range_extrema<detail::biased_key> parent_order(parent_minus_row.data(), 8, joint_count);

  std::vector<std::int64_t> coverage(joint_count + 1, 0);  // +1 at a range start, -1 past its end
  std::uint64_t budget = detail::cycle_check_budget(joint_count);
  std::vector<std::uint32_t> parents;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const owned_range& r = ranges[i];
    if (i > 0 && r.first == ranges[i - 1].first && r.count == ranges[i - 1].count) continue;  // checked once
    ++detail::validation_work;
    ++coverage[r.first];
    --coverage[std::uint64_t{r.first} + r.count];
    if (largest_parent.query(r.first, r.count).hi[0] > r.count)
      for (std::uint32_t local = 0;; ++local)  // the first offending joint
        if (const std::uint32_t parent = joints[r.first + local].parent_joint_index; parent != none && parent >= r.count)
          return joint_error(r.first + local, parent);
    // Every parent earlier in the table than its child: local parent < local
    // index for any frame start, so no cycle.
    if (parent_order.query(r.first, r.count).hi[0] < detail::bias_signed(-std::int64_t{r.first})) continue;
    if (r.count > budget) {
      if (a.relaxed_extension_ranges()) continue;
      return detail::record_error(errc::extension_range, a, chunk_type::skeleton_table, r.row,
                                  "firstJointRecordIndex", r.first);
    }
    budget -= r.count;
    parents.resize(r.count);
    detail::validation_work += r.count;
    for (std::uint32_t local = 0; local < r.count; ++local) parents[local] = joints[r.first + local].parent_joint_index;
    const std::uint32_t cycle = detail::visit_parents_first(
        r.count, [&](std::uint32_t local) { return parents[local]; }, [](std::uint32_t, std::uint32_t) {});
    if (cycle != none) return joint_error(r.first + cycle, parents[cycle]);
  }
  detail::validation_work += joint_count;
  std::int64_t covering = 0;
  for (std::uint32_t row = 0; row < joint_count; ++row) {
    covering += coverage[row];
    if (covering != 0) continue;
    const std::uint32_t parent = joints[row].parent_joint_index;
    if (parent != none && parent >= joint_count) return joint_error(row, parent);
  }
  return {};
}

/// The mapping records a skin can use: [firstJointMappingIndex, + jointCount)
/// cut to the mapping table. All jointCount of them in a validated asset
/// unless it was opened with open_options::relaxed_extension_ranges. Safe for
/// any record.
[[nodiscard]] inline record_view<skin_joint_mapping_record> view_skin_mappings(const asset& a,
                                                                               const skin_record& skin) noexcept {
  const std::uint64_t size = a.table<skin_joint_mapping_record>().size();
  const std::uint64_t first = skin.first_joint_mapping_index;
  const std::uint64_t usable = first >= size ? 0 : std::min<std::uint64_t>(skin.joint_count, size - first);
  return a.records<skin_joint_mapping_record>(usable == 0 ? 0 : first, usable);
}

/// How many vertices of its mesh a skin's per-vertex data covers: the
/// smaller of the skin's and the mesh's vertexCount (the format lets them
/// differ; an engine skins vertices [0, this) and leaves the others
/// unskinned). 0 when meshRecordIndex names no mesh. Safe for any record.
[[nodiscard]] inline std::uint32_t skinned_vertex_count(const asset& a, const skin_record& skin) noexcept {
  const auto meshes = a.meshes();
  return skin.mesh_record_index < meshes.size() ? std::min(skin.vertex_count, meshes[skin.mesh_record_index].vertex_count)
                                                : 0;
}

// R-EXT-RANGES (skins): meshRecordIndex < meshCount; the mapping range
// [firstJointMappingIndex, + jointCount) lies inside the mapping table (the
// library's stricter rule: per-vertex joint indices are bounded by jointCount,
// so a shorter mapping would let them index past the table;
// open_options::relaxed_extension_ranges accepts it, and the skin then uses
// the mappings in range, view_skin_mappings); with vertexCount > 0,
// JOINT_INDEX_DATA and JOINT_WEIGHT_DATA exist and hold [offset, offset +
// vertexCount * 8 / * 16) (overflow-safe); when skeletonEntityId names a
// skeleton, every skeletonJointIndex of the skin's mappings is < that
// skeleton's jointRecordCount (the smallest one if several skeletons carry
// the id). A skin's vertexCount may differ from its mesh's (0 included; see
// skinned_vertex_count), and a skin whose skeletonEntityId names no skeleton
// is accepted, as the reference engine does (it then has no skeleton). Skins
// may share mapping records; range queries keep the check linear in the
// table sizes.
template <class = void>
status validate_skins(const asset& a) {
  const auto skins = a.table<skin_record>();
  const auto meshes = a.meshes();
  const auto mappings = a.table<skin_joint_mapping_record>();
  const auto index_bytes = detail::chunk_size(a, chunk_type::joint_index_data);
  const auto weight_bytes = detail::chunk_size(a, chunk_type::joint_weight_data);

  // Smallest joint count per skeleton entityId.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> joints_of;
  for (const skeleton_record& s : a.table<skeleton_record>()) joints_of.emplace_back(s.entity_id, s.joint_record_count);
  detail::sort(joints_of.begin(), joints_of.end());

  // Largest mapped value per skin by range query: skins may share mapping
  // records, so scanning each skin's range could be quadratic.
  detail::chunk_extrema<detail::index_key<std::uint32_t>> mapped(mappings.bytes(), 4);
  for (std::uint32_t row = 0; row < skins.size(); ++row) {
    const skin_record s = skins[row];
    ++detail::validation_work;
    const auto fail = [&](const char* field, std::uint64_t value) {
      return detail::record_error(errc::extension_range, a, chunk_type::skin_table, row, field, value);
    };
    if (s.mesh_record_index >= meshes.size()) return fail("meshRecordIndex", s.mesh_record_index);
    if (!a.relaxed_extension_ranges())
      UNTOLD_TRY(detail::check_record_range(a, chunk_type::skin_table, row, s.first_joint_mapping_index, s.joint_count,
                                            mappings.size(), "firstJointMappingIndex", "jointCount"));
    if (s.vertex_count > 0) {
      if (!index_bytes || !checked_range(s.joint_index_data_offset, s.vertex_count, 8, *index_bytes))
        return fail("jointIndexDataOffset", s.joint_index_data_offset);
      if (!weight_bytes || !checked_range(s.joint_weight_data_offset, s.vertex_count, 16, *weight_bytes))
        return fail("jointWeightDataOffset", s.joint_weight_data_offset);
    }
    const std::uint64_t usable = view_skin_mappings(a, s).size();
    const auto skeleton = detail::lower_bound(joints_of.begin(), joints_of.end(), std::pair{s.skeleton_entity_id, 0u});
    if (usable == 0 || s.skeleton_entity_id == none || skeleton == joints_of.end() ||
        skeleton->first != s.skeleton_entity_id)
      continue;
    const std::uint32_t bound = skeleton->second;
    if (mapped.query(std::uint64_t{s.first_joint_mapping_index} * 4, usable).hi[0] < bound) continue;
    for (std::uint64_t pos = s.first_joint_mapping_index;; ++pos)  // the first offending mapping
      if (const std::uint32_t value = mappings[pos].skeleton_joint_index; value >= bound)
        return detail::record_error(errc::extension_range, a, chunk_type::skin_joint_mapping_table, pos,
                                    "skeletonJointIndex", value);
  }
  return {};
}

// R-EXT-RANGES (animation): each clip's channel range lies inside the channel
// table; each channel's translation and rotation keyframe ranges lie inside
// their tables.
template <class = void>
status validate_animations(const asset& a) {
  const auto clips = a.table<animation_clip_record>();
  const auto channels = a.table<animation_channel_record>();
  const std::uint64_t translations = a.table<translation_keyframe_record>().size();
  const std::uint64_t rotations = a.table<rotation_keyframe_record>().size();
  for (std::size_t row = 0; row < clips.size(); ++row) {
    const animation_clip_record c = clips[row];
    UNTOLD_TRY(detail::check_record_range(a, chunk_type::animation_clip_table, row, c.first_channel_record_index,
                                          c.channel_record_count, channels.size(), "firstChannelRecordIndex",
                                          "channelRecordCount"));
  }
  for (std::size_t row = 0; row < channels.size(); ++row) {
    const animation_channel_record c = channels[row];
    UNTOLD_TRY(detail::check_record_range(a, chunk_type::animation_channel_table, row, c.first_translation_index,
                                          c.translation_count, translations, "firstTranslationIndex",
                                          "translationCount"));
    UNTOLD_TRY(detail::check_record_range(a, chunk_type::animation_channel_table, row, c.first_rotation_index,
                                          c.rotation_count, rotations, "firstRotationIndex", "rotationCount"));
  }
  return {};
}

// R-MORPH-MESH: a morph target's meshRecordIndex < meshCount. R-MORPH-RANGE:
// with entryCount > 0, MORPH_TARGET_DATA exists and its entries
// [firstEntryIndex, + entryCount) lie inside it (overflow-safe; the chunk
// table's size is used, so this holds before the data is loaded). Targets
// may share entries.
template <class = void>
status validate_morph_targets(const asset& a) {
  const auto targets = a.table<morph_target_record>();
  const std::uint64_t mesh_count = a.meshes().size();
  const std::uint64_t entries = detail::chunk_size(a, chunk_type::morph_target_data).value_or(0) /
                                record_traits<morph_target_entry>::size();
  const bool have_data = a.find_chunk(chunk_type::morph_target_data).has_value();
  for (std::uint32_t row = 0; row < targets.size(); ++row) {
    const morph_target_record t = targets[row];
    ++detail::validation_work;
    if (t.mesh_record_index >= mesh_count)
      return detail::record_error(errc::morph_mesh, a, chunk_type::morph_target_table, row, "meshRecordIndex",
                                  t.mesh_record_index);
    if (t.entry_count == 0) continue;
    if (!have_data || t.first_entry_index >= entries)
      return detail::record_error(errc::morph_range, a, chunk_type::morph_target_table, row, "firstEntryIndex",
                                  t.first_entry_index);
    if (std::uint64_t{t.first_entry_index} + t.entry_count > entries)
      return detail::record_error(errc::morph_range, a, chunk_type::morph_target_table, row, "entryCount",
                                  t.entry_count);
  }
  return {};
}

// R-MORPH-DRIVER: a morph driver's targetIndex < the morph target count.
template <class = void>
status validate_morph_drivers(const asset& a) {
  const auto drivers = a.table<morph_driver_record>();
  const std::uint64_t target_count = a.table<morph_target_record>().size();
  for (std::uint32_t row = 0; row < drivers.size(); ++row) {
    const std::uint32_t target = drivers[row].target_index;
    if (target >= target_count)
      return detail::record_error(errc::morph_driver, a, chunk_type::morph_driver_table, row, "targetIndex", target);
  }
  return {};
}

// R-EXT-RANGES (lights): lightType is a known light_type (1..4).
template <class = void>
status validate_lights(const asset& a) {
  const auto lights = a.table<light_record>();
  for (std::size_t row = 0; row < lights.size(); ++row) {
    const std::uint32_t type = lights[row].light_type;
    if (!is_known_light_type(type))
      return detail::record_error(errc::extension_range, a, chunk_type::light_table, row, "lightType", type);
  }
  return {};
}

// R-EXT-RANGES (color management): the table holds at most one record.
template <class = void>
status validate_color_management(const asset& a) {
  const auto row = a.find_chunk(chunk_type::color_management_table);
  if (!row || a.chunks()[*row].element_count <= 1) return {};
  return make_error(errc::extension_range,
                    {.chunk_index = *row, .chunk_type = static_cast<std::uint32_t>(chunk_type::color_management_table),
                     .field = "elementCount", .value = a.chunks()[*row].element_count, .has_value = true});
}

/// R-EXT-RANGES (plugin envelope) for chunk-table row `row`: a loaded plugin
/// chunk (type >= 0x8000) must start with a valid envelope (magic, version 1,
/// non-blank UTF-8 id without NUL, id inside the payload). Other rows and
/// plugin chunks not loaded yet pass (byte-range loading checks them when
/// they load). Safe on untrusted input.
template <class = void>
status validate_plugin_chunk(const asset& a, std::uint32_t row) {
  if (row >= a.chunks().size() || !is_plugin_chunk_type(a.chunks()[row].chunk_type) || !a.is_loaded(row)) return {};
  const auto parsed = parse_plugin_chunk(a.payload(row));
  if (parsed) return {};
  error e = parsed.error();
  e.context.chunk_index = row;
  e.context.chunk_type = a.chunks()[row].chunk_type;
  return e;
}

/// Every R-EXT-RANGES rule and the R-STRING references of the extension
/// tables (R-STRING first), with `strings` built over the asset's string
/// table. Precondition: the asset's directory passed and its metadata tables
/// are loaded (asset_loader stage 3 runs it after validate_records). Linear in
/// the table sizes. Safe on untrusted input.
template <class = void>
status validate_extensions(const asset& a, const string_validator& strings) {
  UNTOLD_TRY(validate_extension_strings(a, strings));
  UNTOLD_TRY(validate_skeletons(a));
  UNTOLD_TRY(validate_skins(a));
  UNTOLD_TRY(validate_animations(a));
  UNTOLD_TRY(validate_lights(a));
  UNTOLD_TRY(validate_color_management(a));
  UNTOLD_TRY(validate_morph_targets(a));
  UNTOLD_TRY(validate_morph_drivers(a));
  for (std::uint32_t row = 0; row < a.chunks().size(); ++row) UNTOLD_TRY(validate_plugin_chunk(a, row));
  return {};
}

/// validate_extensions with its own pass over the string table.
template <class = void>
status validate_extensions(const asset& a) {
  return validate_extensions(a, string_validator(a.payload(chunk_type::string_table)));
}

// ---- deep checks (opt-in; linear in data size) ----------------------------------------

// R-EXT-RANGES (deep, joint indices): every joint index of a skinned vertex is
// < its skin's jointCount (< its mappings in range, when relaxed). Error: skin table, skin row, field "jointIndexData",
// value = the vertex. Skins may share joint data (and meshes), so each skin's
// largest index comes from a range query over JOINT_INDEX_DATA, not a scan
// of its range: linear in the chunk size, however many skins there are.
// Skins whose data is not loaded are skipped.
template <class = void>
status validate_joint_indices_deep(const asset& a) {
  const auto skins = a.table<skin_record>();
  detail::chunk_extrema<detail::index_key<std::uint16_t, 4>> largest(a.payload(chunk_type::joint_index_data), 8);
  for (std::size_t row = 0; row < skins.size(); ++row) {
    const skin_record s = skins[row];
    ++detail::validation_work;
    const auto vertices = view_joint_indices(a, s);  // empty when not loaded (or out of range)
    // jointCount, or the mappings in range when relaxed let a skin have fewer.
    const std::uint64_t joints = view_skin_mappings(a, s).size();
    if (vertices.empty() || largest.query(s.joint_index_data_offset, s.vertex_count).hi[0] < joints) continue;
    for (std::size_t v = 0;; ++v)  // the first offending vertex
      for (const std::uint16_t joint : vertices[v].joints)
        if (joint >= joints)
          return detail::record_error(errc::extension_range, a, chunk_type::skin_table, row, "jointIndexData", v);
  }
  return {};
}

// R-MORPH-VERTEX (deep): every entry of a morph target names a vertex of its
// mesh (vertexIndex < the mesh's vertexCount). Error: morph target table,
// target row, field "vertexIndex", value = the vertex index, limit = the
// vertexCount, subject "entry N" (the entry's row in MORPH_TARGET_DATA).
// Targets may share entries, so each target's largest vertex index comes
// from a range query: linear in the data, however many targets there are.
// Targets whose data is not loaded are skipped.
template <class = void>
status validate_morph_vertices_deep(const asset& a) {
  const auto targets = a.table<morph_target_record>();
  const auto meshes = a.meshes();
  const auto entries = a.table<morph_target_entry>();
  constexpr std::size_t stride = 16;
  detail::chunk_extrema<detail::index_key<std::uint32_t>> largest(entries.bytes(), stride);
  for (std::uint32_t row = 0; row < targets.size(); ++row) {
    const morph_target_record t = targets[row];
    ++detail::validation_work;
    if (t.entry_count == 0 || t.mesh_record_index >= meshes.size() ||
        std::uint64_t{t.first_entry_index} + t.entry_count > entries.size())
      continue;  // not loaded, or reported by validate_morph_targets
    const std::uint32_t vertex_count = meshes[t.mesh_record_index].vertex_count;
    if (largest.query(std::uint64_t{t.first_entry_index} * stride, t.entry_count).hi[0] < vertex_count) continue;
    for (std::uint64_t e = t.first_entry_index;; ++e)  // the first offending entry
      if (const std::uint32_t v = entries[e].vertex_index; v >= vertex_count) {
        error err = detail::record_error(errc::morph_vertex, a, chunk_type::morph_target_table, row, "vertexIndex", v);
        err.context.limit = vertex_count;
        err.context.has_limit = true;
        char where[32] = "entry ";
        std::size_t n = 6;
        char digits[24];
        std::size_t d = 0;
        do digits[d++] = static_cast<char>('0' + e % 10), e /= 10;
        while (e != 0);
        while (d > 0) where[n++] = digits[--d];
        return err.with_subject(std::string_view(where, n));
      }
  }
  return {};
}

namespace detail {
// Keyframe times of table K: finite and non-decreasing inside every channel's
// range. One prefix count of "bad" keys (non-finite, or earlier than the key
// before it) makes each channel O(1), however channel ranges overlap.
template <class K>
status check_keyframe_times(const asset& a, std::uint32_t animation_channel_record::*first_member,
                            std::uint32_t animation_channel_record::*count_member) {
  const auto keys = a.table<K>();
  std::vector<std::uint32_t> bad_before(keys.size() + 1, 0);
  float previous = 0;
  detail::validation_work += keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const float t = keys[i].time;
    const bool bad = !detail::is_finite(t) || (i > 0 && t < previous);
    bad_before[i + 1] = bad_before[i] + (bad ? 1u : 0u);
    previous = t;
  }
  const auto channels = a.table<animation_channel_record>();
  detail::validation_work += channels.size();
  for (const animation_channel_record& c : channels) {
    const std::uint64_t first = c.*first_member, count = c.*count_member;
    if (count == 0 || first + count > keys.size()) continue;  // ranges: validate_animations
    // Inside the range a key is bad when non-finite or earlier than its
    // predecessor; the first key only needs to be finite.
    if (detail::is_finite(keys[first].time) && bad_before[first + count] == bad_before[first + 1]) continue;
    std::uint64_t key = first;
    if (detail::is_finite(keys[first].time))
      for (key = first + 1; bad_before[key + 1] == bad_before[key];) ++key;
    error_context ctx;
    ctx.chunk_index = a.find_chunk(record_traits<K>::table).value_or(no_index);
    ctx.chunk_type = static_cast<std::uint32_t>(record_traits<K>::table);
    ctx.record_index = static_cast<std::uint32_t>(key);
    ctx.field = "time";
    return make_error(errc::extension_range, ctx);
  }
  return {};
}
}  // namespace detail

// R-EXT-RANGES (deep, keyframes): translation and rotation keyframe times are
// finite and non-decreasing within each channel. Error: keyframe table, the
// offending key's row, field "time" (no value: it is a float).
template <class = void>
status validate_keyframes_deep(const asset& a) {
  UNTOLD_TRY(detail::check_keyframe_times<translation_keyframe_record>(
      a, &animation_channel_record::first_translation_index, &animation_channel_record::translation_count));
  UNTOLD_TRY(detail::check_keyframe_times<rotation_keyframe_record>(
      a, &animation_channel_record::first_rotation_index, &animation_channel_record::rotation_count));
  return {};
}

// R-FINITE (deep, extension transforms): joint bind and rest transforms,
// light and camera local transforms.
template <class = void>
status validate_extension_transforms_deep(const asset& a) {
  const auto joints = a.table<skeleton_joint_record>();
  for (std::size_t row = 0; row < joints.size(); ++row) {
    const skeleton_joint_record j = joints[row];
    const char* field = !detail::all_finite(j.bind_transform)   ? "bindTransform"
                        : !detail::all_finite(j.rest_transform) ? "restTransform"
                                                                : nullptr;
    if (field) return detail::record_error(errc::not_finite, a, chunk_type::skeleton_joint_table, row, field, 0);
  }
  const auto lights = a.table<light_record>();
  for (std::size_t row = 0; row < lights.size(); ++row)
    if (!detail::all_finite(lights[row].local_transform))
      return detail::record_error(errc::not_finite, a, chunk_type::light_table, row, "localTransform", 0);
  const auto cameras = a.table<camera_record>();
  for (std::size_t row = 0; row < cameras.size(); ++row)
    if (!detail::all_finite(cameras[row].local_transform))
      return detail::record_error(errc::not_finite, a, chunk_type::camera_table, row, "localTransform", 0);
  const auto targets = a.table<morph_target_record>();
  for (std::size_t row = 0; row < targets.size(); ++row)
    if (!detail::is_finite(targets[row].position_scale))
      return detail::record_error(errc::not_finite, a, chunk_type::morph_target_table, row, "positionScale", 0);
  // Deltas are added to positions and normals: a non-finite one would make
  // them non-finite. One pass over the whole chunk (targets may share entries).
  const auto entries = a.table<morph_target_entry>();
  detail::validation_work += entries.size();
  for (std::size_t row = 0; row < entries.size(); ++row) {
    const morph_target_entry e = entries[row];
    for (int k = 0; k < 3; ++k) {
      const char* field = (e.position_delta[k] & 0x7C00u) == 0x7C00u ? "positionDelta"
                          : (e.normal_delta[k] & 0x7C00u) == 0x7C00u ? "normalDelta"
                                                                      : nullptr;
      if (field) return detail::record_error(errc::not_finite, a, chunk_type::morph_target_data, row, field, 0);
    }
  }
  const auto drivers = a.table<morph_driver_record>();
  for (std::size_t row = 0; row < drivers.size(); ++row) {
    const morph_driver_record d = drivers[row];
    const char* field = !detail::all_finite(d.pose_rotation) ? "poseRotation"
                        : !detail::is_finite(d.radius)       ? "radius"
                                                             : nullptr;
    if (field) return detail::record_error(errc::not_finite, a, chunk_type::morph_driver_table, row, field, 0);
  }
  return {};
}

/// The deep checks of the extension tables (joint index values, keyframe
/// times, extension transforms). Edge index values are checked by
/// validate_deep (R-INDEX-VALUE). Precondition: every chunk is loaded and
/// validate_extensions passed. Linear in the data sizes. Safe on untrusted input.
template <class = void>
status validate_extensions_deep(const asset& a) {
  UNTOLD_TRY(validate_joint_indices_deep(a));
  UNTOLD_TRY(validate_morph_vertices_deep(a));
  UNTOLD_TRY(validate_keyframes_deep(a));
  UNTOLD_TRY(validate_extension_transforms_deep(a));
  return {};
}

}  // namespace untold
