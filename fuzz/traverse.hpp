// fuzz/traverse.hpp - walk everything an accepted asset exposes, checking the
// guarantees the reader gives (SECURITY.md): every accessor stays in bounds
// and every reference a validated record holds resolves.
//
// Shared by the fuzz targets (fuzz_open, fuzz_ranges, fuzz_roundtrip) and the
// exhaustive mutation test (tests/unit/test_mutation.cpp). Out-of-bounds
// reads are the sanitizers' to catch; broken invariants come back as text.
//
//   const std::string problem = untold_fuzz::traverse(*asset, deep_checks_passed);
//   if (!problem.empty()) untold_fuzz::die(problem);
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <untold/compression.hpp>
#include <untold/extensions.hpp>
#include <untold/reader.hpp>
#include <untold/scene.hpp>
#include <untold/vertex_decode.hpp>

#include "die.hpp"

namespace untold_fuzz {

inline untold::byte_span as_span(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

inline bool same_bytes(untold::byte_span a, untold::byte_span b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

/// Bit-for-bit equality of two values of the same size (NaNs included).
template <class A, class B>
bool same_bits(const A& a, const B& b) {
  static_assert(sizeof(A) == sizeof(B));
  return std::memcmp(&a, &b, sizeof(A)) == 0;
}

/// Decodes `stored` at `declared` bytes three ways - untold::decompress, a
/// fresh decompressor and decompress_into (the reader's growing decoder) -
/// and dies unless they agree in verdict and bytes, or a failure lacks a
/// rule id. Returns decompress's status; its bytes are in `out`.
inline untold::status decode_three_ways(untold::compression method, untold::byte_span stored, std::size_t declared,
                                        std::vector<std::byte>& out) {
  out.assign(declared, std::byte{0});
  std::vector<std::byte> again(declared), grown;
  const auto first = untold::decompress(method, stored, out);
  untold::decompressor fresh;
  const auto second = fresh.decompress(method, stored, again);
  if (static_cast<bool>(first) != static_cast<bool>(second)) die("decompressor and decompress disagree");
  const auto third = untold::decompress_into(method, stored, declared, grown);
  if (static_cast<bool>(first) != static_cast<bool>(third)) die("decompress_into and decompress disagree");
  if (third && !same_bytes(out, grown)) die("decompress_into decoded other bytes");
  if (!third && !grown.empty()) die("decompress_into kept bytes after failing");
  if (first && !same_bytes(out, again)) die("two decodes differ");
  if (!first) {
    const std::string_view id = first.error().rule_id();
    if (!(id.starts_with("R-") || id.starts_with("E-"))) die("codec error without a rule id");
  }
  return first;
}

/// Bitwise equality of two records (they hold floats, and NaN != NaN).
template <class R>
bool same_record(const R& x, const R& y, std::uint32_t format_version = untold::max_format_version) {
  std::array<std::byte, 256> bx{}, by{};
  static_assert(untold::codec<R>::size() <= bx.size());
  untold::codec<R>::encode(x, bx, format_version);
  untold::codec<R>::encode(y, by, format_version);
  return bx == by;
}

/// Independent UTF-8 check (not the validator's own), the oracle for R-STRING.
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if (b < 0x80) { ++i; continue; }
    if ((b & 0xE0) == 0xC0) { n = 1; cp = b & 0x1Fu; min = 0x80; }
    else if ((b & 0xF0) == 0xE0) { n = 2; cp = b & 0x0Fu; min = 0x800; }
    else if ((b & 0xF8) == 0xF0) { n = 3; cp = b & 0x07u; min = 0x10000; }
    else return false;
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

/// Is this record field a string-table reference? (By its spec name.)
inline bool is_string_field(std::string_view name) {
  const auto ends_with = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  return ends_with("ameOffset") || ends_with("riOffset") || ends_with("PathOffset");
}

class traversal {
 public:
  traversal(const untold::asset& a, bool deep) : a_(a), deep_(deep) {}

  /// Empty when every property held; else the first broken one.
  std::string run() {
    chunks();
    core_tables();
    extension_tables();
    scene();
    return problem_;
  }
  /// A value that depends on every byte read, so nothing is optimised away.
  [[nodiscard]] std::uint64_t checksum() const { return sum_; }

 private:
  const untold::asset& a_;
  bool deep_;
  std::string problem_;
  std::uint64_t sum_ = 0;

  void fail(const std::string& what) {
    if (problem_.empty()) problem_ = what;
  }
  void touch(untold::byte_span bytes) {
    for (const std::byte b : bytes) sum_ = sum_ * 31 + static_cast<std::uint8_t>(b);
  }

  void chunks() {
    const auto rows = a_.chunks();
    if (rows.size() != a_.header().chunk_count) fail("chunk count");
    for (std::uint32_t row = 0; row < rows.size(); ++row) {
      if (!a_.is_loaded(row)) fail("chunk not loaded " + std::to_string(row));
      const auto payload = a_.payload(row);
      if (payload.size() != rows[row].uncompressed_size) fail("payload size of chunk " + std::to_string(row));
      touch(payload);
      const std::uint32_t type = rows[row].chunk_type;
      if (untold::is_known_chunk_type(type) && a_.find_chunk(static_cast<untold::chunk_type>(type)) != row)
        fail("find_chunk of type " + std::to_string(type));
    }
    for (const std::uint32_t row : a_.raw_chunks()) {
      if (row >= rows.size() || untold::is_known_chunk_type(rows[row].chunk_type)) fail("raw chunk row");
      touch(a_.payload(row));
    }
    for (const untold::plugin_chunk_view& p : untold::plugin_chunks(a_)) {
      if (!valid_utf8(p.plugin_id)) fail("plugin id");
      touch(p.payload);
    }
    std::size_t plugins = 0;
    for (const auto& c : rows) plugins += untold::is_plugin_chunk_type(c.chunk_type) ? 1 : 0;
    if (plugins != untold::plugin_chunks(a_).size()) fail("a plugin chunk with a bad envelope was accepted");
    touch(a_.strings().bytes());
  }

  void string_ref(std::uint32_t offset, const char* where) {
    if (offset == untold::none) {
      if (!a_.string(offset).empty()) fail(std::string("NONE string in ") + where);
      return;
    }
    const auto s = a_.strings().at(offset);
    if (!s) return fail(std::string("unresolved string in ") + where);
    if (!valid_utf8(*s)) fail(std::string("invalid UTF-8 string in ") + where);
    if (a_.string(offset) != *s) fail(std::string("string() differs in ") + where);
    sum_ += s->size();
  }

  /// Every record of table R, decoded by index, by iterator and by records();
  /// all must agree, and every string field must resolve.
  template <class R>
  untold::record_view<R> table(const char* name) {
    const auto view = a_.table<R>();
    const auto row = a_.find_chunk(untold::record_traits<R>::table);
    const std::uint64_t expected = row ? a_.chunks()[*row].element_count : 0;
    if (view.size() != expected) fail(std::string("record count of ") + name);
    if (a_.template records<R>(0, view.size()).size() != view.size()) fail(std::string("records() of ") + name);
    std::size_t i = 0;
    for (const R& r : view) {
      if (!same_record(r, view[i])) fail(std::string("iterator differs from operator[] in ") + name);
      const auto one = a_.template records<R>(i, 1);
      if (one.size() != 1 || !same_record(one[0], r)) fail(std::string("records(i, 1) in ") + name);
      visit_strings(r, name);
      ++i;
    }
    if (i != view.size()) fail(std::string("iteration length of ") + name);
    if (view.at(view.size())) fail(std::string("at(size) of ") + name);
    return view;
  }

  template <class R>
  bool same_record(const R& x, const R& y) const {
    return untold_fuzz::same_record(x, y, a_.format_version());
  }

  template <class R>
  void visit_strings(const R& r, const char* table_name) {
    auto visitor = [&](const auto& field, const char* field_name) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::uint32_t>) {
        if (is_string_field(field_name)) string_ref(field, table_name);
      }
    };
    untold::record_traits<R>::fields(visitor, r, a_.format_version());
  }

  void core_tables() {
    const auto entities = table<untold::entity_record>("entities");
    const auto meshes = table<untold::mesh_record>("meshes");
    const auto materials = table<untold::material_record>("materials");
    const auto textures = table<untold::texture_record>("textures");
    const auto& h = a_.header();
    if (h.entity_count != entities.size() || h.mesh_count != meshes.size() || h.material_count != materials.size() ||
        h.texture_ref_count != textures.size())
      fail("header counts");

    for (std::uint32_t row = 0; row < entities.size(); ++row) {
      const auto e = entities[row];
      if (a_.entity_row(e.entity_id) != row) fail("entity_row");
      if (a_.records<untold::mesh_record>(e.first_mesh_record_index, e.mesh_record_count).size() !=
          e.mesh_record_count)
        fail("entity mesh range");
      // The parent chain ends at a root within entity-count steps.
      std::uint32_t parent = e.parent_entity_id;
      for (std::size_t steps = 0; parent != untold::none; ++steps) {
        const auto p = a_.entity_row(parent);
        if (!p || steps > entities.size()) return fail("entity parent chain");
        parent = entities[*p].parent_entity_id;
      }
    }
    std::vector<untold::pbr_vertex> bulk;
    for (std::uint32_t row = 0; row < meshes.size(); ++row) mesh(meshes[row], bulk, materials.size());
    for (const auto& m : materials) {
      for (const std::uint32_t t : {m.base_color_texture, m.normal_texture, m.metallic_texture, m.roughness_texture,
                                    m.emissive_texture, m.occlusion_texture, m.height_texture})
        if (t != untold::none && !textures.at(t)) fail("material texture index");
    }
    for (const auto& t : textures)
      if (t.texture_format > untold::max_texture_format) fail("texture format");
  }

  void mesh(const untold::mesh_record& m, std::vector<untold::pbr_vertex>& bulk, std::size_t material_count) {
    if (!a_.entity_row(m.entity_id)) fail("mesh entity");
    if (m.material_index != untold::none && m.material_index >= material_count) fail("mesh material");
    const std::uint32_t isize = untold::index_size(m.index_type);
    if (isize == 0) return fail("index type");

    const auto vertex_bytes = a_.vertices(m);
    if (vertex_bytes.size() != std::uint64_t{m.vertex_count} * 32) return fail("vertex byte count");
    const auto view = untold::pbr_vertex_view::from_bytes(vertex_bytes);
    if (!view || view->size() != m.vertex_count) return fail("pbr_vertex_view");
    bulk.resize(view->size());
    if (!untold::decode_pbr_vertices(vertex_bytes, std::span(bulk))) return fail("bulk decode");
    std::size_t v = 0;
    const float slack = untold::bounds_tolerance(m.local_bounds);
    for (const untold::pbr_vertex& vertex : *view) {
      const untold::pbr_vertex one = (*view)[v];
      if (std::memcmp(&one, &vertex, sizeof one) != 0 || std::memcmp(&one, &bulk[v], sizeof one) != 0)
        fail("vertex decodes differ");
      const auto p = view->position(v);
      sum_ += static_cast<std::uint64_t>(view->packed(v).normal) + view->normal_packed(v);
      if (deep_) {
        for (int axis = 0; axis < 3; ++axis)
          if (!std::isfinite(p[axis]) || p[axis] < m.local_bounds.min[axis] - slack ||
              p[axis] > m.local_bounds.max[axis] + slack)
            fail("deep-checked vertex outside its bounds");
      }
      ++v;
    }
    if (v != m.vertex_count) fail("vertex iteration length");

    const auto indices = untold::view_indices(a_, m);
    if (indices.size() != m.index_count || a_.indices(m).size() != std::uint64_t{m.index_count} * isize)
      return fail("index count");
    const auto edges = untold::view_edge_indices(a_, m);
    if (edges.size() != m.edge_index_count()) return fail("edge index count");
    for (const auto* list : {&indices, &edges}) {
      std::size_t i = 0;
      for (const std::uint32_t index : *list) {
        if (index != (*list)[i++]) fail("index iteration");
        if (deep_ && index >= m.vertex_count) fail("deep-checked index out of range");
        sum_ += index;
      }
    }
  }

  void extension_tables() {
    table<untold::skeleton_record>("skeletons");
    table<untold::skeleton_joint_record>("skeleton joints");
    const auto skins = table<untold::skin_record>("skins");
    table<untold::skin_joint_mapping_record>("skin joint mappings");
    table<untold::animation_clip_record>("animation clips");
    table<untold::animation_channel_record>("animation channels");
    table<untold::translation_keyframe_record>("translation keyframes");
    table<untold::rotation_keyframe_record>("rotation keyframes");
    table<untold::light_record>("lights");
    table<untold::camera_record>("cameras");
    table<untold::color_management_record>("color management");
    table<untold::color_grade_lut_record>("color grade LUTs");
    for (const auto& s : skins) {
      const auto joints = untold::view_joint_indices(a_, s);
      const auto weights = untold::view_joint_weights(a_, s);
      if (joints.size() != s.vertex_count || weights.size() != s.vertex_count) fail("skin vertex data");
      for (const auto& j : joints)
        for (const auto index : j.joints) sum_ += index;
      for (const auto& w : weights) sum_ += static_cast<std::uint64_t>(w.weights[0] == 0.0f);
    }
  }

  /// The joined views of scene.hpp (the first rows of each table: resolving
  /// a mesh costs O(skins), so all of them would be quadratic by design).
  void scene() {
    const auto walk = untold::walk_scene(a_);
    const auto entities = a_.entities();
    if (walk.order.size() != entities.size() || walk.parent_row.size() != entities.size() ||
        walk.world.size() != entities.size())
      return fail("scene walk size");
    for (std::uint32_t row = 0; row < entities.size(); ++row) {
      const std::uint32_t parent = entities[row].parent_entity_id;
      const std::uint32_t expected = parent == untold::none ? untold::none : a_.entity_row(parent).value_or(0);
      if (walk.parent_row[row] != expected) fail("scene walk parent");
    }
    constexpr std::uint32_t rows = 256;
    const auto count = [](std::size_t n) { return static_cast<std::uint32_t>(std::min<std::size_t>(n, rows)); };
    for (std::uint32_t i = 0; i < count(a_.meshes().size()); ++i) {
      const auto m = untold::resolve_mesh(a_, i);
      if (!m || m->vertices.size() != std::uint64_t{m->record.vertex_count} * 32 ||
          m->indices.size() != m->record.index_count || !m->entity_row)
        fail("resolve_mesh");
    }
    if (untold::resolve_mesh(a_, static_cast<std::uint32_t>(a_.meshes().size()))) fail("resolve_mesh past the end");
    for (std::uint32_t i = 0; i < count(a_.materials().size()); ++i)
      if (!untold::resolve_material(a_, i)) fail("resolve_material");
    for (std::uint32_t i = 0; i < count(a_.table<untold::skeleton_record>().size()); ++i)
      if (!untold::resolve_skeleton(a_, i)) fail("resolve_skeleton");
    for (std::uint32_t i = 0; i < count(a_.table<untold::skin_record>().size()); ++i) {
      const auto skin = untold::resolve_skin(a_, i);
      if (!skin || skin->joint_indices.size() != skin->record.vertex_count) fail("resolve_skin");
    }
    for (std::uint32_t i = 0; i < count(a_.table<untold::animation_clip_record>().size()); ++i) {
      const auto clip = untold::resolve_clip(a_, i);
      if (!clip || clip->channels.size() != clip->record.channel_record_count) fail("resolve_clip");
    }
  }
};

/// Traverses `a`; empty when every property held. `deep` = the asset passed
/// the deep checks, so index values and vertex bounds are checked too.
inline std::string traverse(const untold::asset& a, bool deep, std::uint64_t* checksum = nullptr) {
  traversal t(a, deep);
  std::string problem = t.run();
  if (checksum) *checksum = t.checksum();
  return problem;
}

/// The option sets every input is opened with: [0] the defaults, [1] deep
/// checks (may only reject more than [0]), then small limits, a caller that
/// lifts the per-chunk cap but keeps a total one, and a relaxed header size
/// without hash verification.
/// The lifted set also lifts the expansion cap (limits::max_expansion), so
/// highly compressed chunks reach the decoder (bounded by 1 MiB in total).
inline std::vector<untold::open_options> option_sets() {
  const untold::open_options defaults{}, deep{.deep_checks = true};
  untold::open_options small{};
  small.limits = {.max_chunks = 16, .max_chunk_bytes = 1 << 16, .max_total_bytes = 1 << 17, .max_records = 256};
  untold::open_options lifted{.deep_checks = true};
  lifted.limits.max_chunk_bytes = ~std::uint64_t{0};
  lifted.limits.max_total_bytes = 1 << 20;
  lifted.limits.max_expansion = ~std::uint32_t{0};
  return {defaults, deep, small, lifted,
          untold::open_options{.verify_hash = false, .relaxed_header_size = true}};
}

/// Opens `file` with `options`; a rejection must name a rule, an accepted
/// asset must traverse cleanly. Returns whether it was accepted.
inline bool open_and_traverse(untold::byte_span file, const untold::open_options& options) {
  auto a = untold::open(file, options);
  if (!a) {
    const std::string_view id = a.error().rule_id();
    if (!(id.starts_with("R-") || id.starts_with("E-"))) die("rejection without a rule id: " + a.error().describe());
    return false;
  }
  const std::string problem = traverse(*a, options.deep_checks);
  if (!problem.empty()) die(problem);
  return true;
}

/// fuzz_open's properties for one input: open_and_traverse under every
/// option set; deep checks only ever reject more; the scene walk survives
/// the input read directly as an entity table.
inline void check_open(untold::byte_span file) {
  const auto sets = option_sets();
  std::vector<bool> accepted;
  for (const untold::open_options& options : sets) accepted.push_back(open_and_traverse(file, options));
  if (accepted[1] && !accepted[0]) die("deep checks accepted what the default open rejected");
  // The scene walk is safe on entity tables that were never validated.
  if (const auto raw = untold::record_view<untold::entity_record>::make(file.first(file.size() - file.size() % 136)))
    if (untold::walk_scene(*raw, untold::identity_matrix).order.size() != raw->size()) die("raw scene walk");
}

}  // namespace untold_fuzz
