// untold/convert/to_pmdl.hpp - the Pragma writer of the neutral scene: one
// PMDL model (binary UDM, ".pmdl_b") in the layout Pragma's Model::Save
// writes and Model::LoadFromAssetData reads, which is also what
// udm::import_pmdl reads back.
//
//   convert::conversion_report report;
//   auto bytes = convert::to_pmdl(scene, {}, report);   // result<std::vector<std::byte>>
//   write_file("model.pmdl_b", *bytes);
//
// Mapping (docs/convert.md has the table; the reverse of udm/pmdl.hpp):
//   Units: positions, bone and key translations are divided by
//   options.metres_per_unit (0.025, as the importer's default), each value
//   chosen so that the importer's multiplication gives back the same float
//   (always possible for values an import produced; others are within a
//   float step, `changed` with a count).
//   Axes and winding are kept (Pragma is +Y up, counter-clockwise fronts).
//   node -> a mesh group per node that draws meshes or has no children
//   (named after the node, in node order; meshes no node draws go to a
//   group "default"), holding
//   one mesh whose sub-meshes are the node's meshes: a mesh drawn by n
//   nodes is written n times (`changed`). A static mesh's node world
//   transform is baked into its vertices (`changed`; Pragma has no node
//   hierarchy); a skinned mesh stays in bind space. Every group is a base
//   mesh group (shown by default).
//   mesh -> a PMESH sub-mesh: vertices as Pragma's 48-byte struct {pos, uv,
//   n, t} (ArrayLz4; absent normals, uvs or tangents are written as zero,
//   `changed`), indices UInt16 when every index fits, else UInt32
//   (ArrayLz4; non-indexed meshes get 0..n-1, strips and fans are unrolled,
//   line strips become line lists: `changed`), geometryType Triangles, Lines
//   or Points, uv1 and further uv sets as uvSets "uv1", "uv2" ..., up to 4
//   influences as vertexWeights {Vector4i id, Vector4 w} (id -1 = unused
//   slot, ids are bone indices), skinMaterialIndex. Vertex colours, morph
//   targets and LOD levels are `dropped`.
//   skeleton -> the PSKEL skeleton (the first skinned mesh's, else the
//   first; others `dropped`), bones nested under `children`, bone index =
//   joint position, pose = rest pose; Pragma derives the bind pose from the
//   rest poses, so inverse binds that disagree with them are `dropped`. A
//   scene without a skeleton gets a one-bone skeleton "root" (Pragma's
//   loader requires one; the sample files have it too: `info`).
//   material -> materials[] (names; skins[0] maps skin material i to
//   material i). Factors, textures and samplers are `dropped` (Pragma keeps
//   them in .pmat files, not written) unless the material is a placeholder.
//   animation -> a PANI clip as pragma::animation::Animation::Save writes it:
//   nodes[0] {type "bone", set: UInt16 bone indices}, channels (ArrayLz4 of
//   {node, property position|rotation|scale, times, values}), duration and
//   fps (the smallest rate, up to 255, that puts every key on a frame, else
//   30: Pragma plays clips as frames, `changed`). Step and cubic-spline
//   channels are `changed` (Pragma interpolates frames linearly; cubic
//   splines keep their key values), node and morph-weight channels `dropped`.
//   Names: UDM keys (bones, groups, clips) are made unique, at most 255
//   bytes, without NULs, `fallback<N>` when empty (`changed` with a count).
//   Lights and cameras are `dropped`.
//
// The output is read back by udm::open_document, pmdl_from_document and
// check_pmdl_values before success is returned: a file they reject is that
// error. Errors: validate_model's; invalid_argument (field
// "metres_per_unit") for a unit that is not finite and positive; UDM-LIMITS
// when the output exceeds the budget (options.budget, else one made from
// the scene's size), a count exceeds limits.max_records or the bone
// hierarchy is deeper than limits.max_depth allows. Deterministic: the same
// scene gives the same bytes. The scene comes from an importer (not from
// file bytes), but its sizes may come from a hostile file: every stage is
// charged to the budget before it allocates.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../error.hpp"
#include "../matrix.hpp"
#include "../udm/pmdl.hpp"
#include "../udm/writer.hpp"
#include "model.hpp"

namespace untold::convert {

struct to_pmdl_options {
  untold::limits limits{};
  /// The budget of the input the scene came from (budget.hpp), shared with
  /// its importer; none: one made from `limits` for the scene's size.
  untold::budget* budget = nullptr;
  /// Metres per Pragma unit, as udm::pmdl_import_options (x 0.025: a
  /// 72-unit player is 1.8 m). 1 writes metres as units.
  float metres_per_unit = 0.025f;
};

namespace detail {

/// The Pragma value s whose import, s * metres_per_unit in float, gives back
/// `x` exactly when such a float exists (the quotient or a neighbour of it:
/// every value an import produced has one), else the nearest quotient,
/// counted in `inexact` (its import is then within a float step of x).
[[nodiscard]] inline float to_pragma_units(float x, float metres_per_unit, std::uint64_t& inexact) noexcept {
  if (metres_per_unit == 1.0f) return x;
  const float s = static_cast<float>(static_cast<double>(x) / static_cast<double>(metres_per_unit));
  for (const float candidate : {s, std::nextafter(s, HUGE_VALF), std::nextafter(s, -HUGE_VALF)})
    if (candidate * metres_per_unit == x) return candidate;
  ++inexact;
  return s;
}

/// The keys of one UDM element being written, and the next "_N" suffix to
/// try per base name (so n equal names cost n lookups, not n^2).
struct key_set {
  std::set<std::string> taken;
  std::map<std::string, std::uint64_t> next_suffix;
};

/// `name` as a UDM key no other in `keys` has: NULs removed, cut to 255
/// bytes at a UTF-8 boundary, `fallback` when empty, "_N" appended while it
/// is taken. Adds it to `keys`; counts a key that differs from `name`.
inline std::string unique_key(std::string_view name, std::string_view fallback, key_set& keys, std::uint64_t& renamed) {
  std::string base;
  for (const char c : name)
    if (c != '\0') base.push_back(c);
  if (base.empty()) base = fallback;
  const auto cut = [](std::string s, std::size_t max) {
    if (s.size() <= max) return s;
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
    s.resize(n);
    return s;
  };
  std::string key = cut(base, 255);
  if (keys.taken.count(key) != 0) {
    std::uint64_t& n = keys.next_suffix[base];
    do {
      const std::string suffix = std::string(1, '_').append(std::to_string(++n));  // not "_" + ...: GCC 12 -O3 -Wrestrict
      key = cut(base, 255 - suffix.size()) + suffix;
    } while (keys.taken.count(key) != 0);
  }
  renamed += key != name ? 1 : 0;
  keys.taken.insert(key);
  return key;
}

/// True when `m` carries nothing but its name (an importer's placeholder).
[[nodiscard]] inline bool is_placeholder(const material& m) noexcept {
  const material d{};
  return m.base_color == d.base_color && m.emissive == d.emissive && m.emissive_strength == d.emissive_strength &&
         m.metallic == d.metallic && m.roughness == d.roughness && m.normal_scale == d.normal_scale &&
         m.occlusion_strength == d.occlusion_strength && m.alpha == d.alpha && m.alpha_cutoff == d.alpha_cutoff &&
         m.double_sided == d.double_sided && m.transmission == d.transmission && !m.base_color_texture.used() &&
         !m.metallic_roughness_texture.used() && !m.normal_texture.used() && !m.occlusion_texture.used() &&
         !m.emissive_texture.used() && m.other_textures.empty();
}

/// The smallest frame rate in 1..255 that puts every key time and the
/// duration on a frame (within 1e-4 s), or 0. A rate's test stops at its first miss; `scanned`
/// counts the key times tested (at most 255 x the keys).
[[nodiscard]] inline std::uint32_t frame_rate_of(float duration, std::span<const animation_channel* const> channels,
                                                 std::uint64_t& scanned) {
  for (std::uint32_t fps = 1; fps <= 255; ++fps) {
    bool fits = true;
    for (const animation_channel* c : channels) {
      for (const float t : c->times) {
        ++scanned;
        const double frames = static_cast<double>(t) * fps;
        if (std::fabs(frames - std::round(frames)) > 1e-4 * fps) {
          fits = false;
          break;
        }
      }
      if (!fits) break;
    }
    const double frames = static_cast<double>(duration) * fps;
    if (fits && std::fabs(frames - std::round(frames)) <= 1e-4 * fps) return fps;
  }
  return 0;
}

}  // namespace detail

/// Writes `s` as a Pragma model; see the header comment for the mapping,
/// the errors and the report.
[[nodiscard]] inline result<std::vector<std::byte>> to_pmdl(const scene& s, const to_pmdl_options& options,
                                                            conversion_report& report) {
  namespace u = untold::udm;
  UNTOLD_TRY(validate_model(s));
  detail::report_dropped_extras(s, report, "a PMDL has no place for application data");
  const float unit = options.metres_per_unit;
  if (!untold::detail::is_finite(unit) || !(unit > 0))
    return make_error(errc::invalid_argument).at_field("metres_per_unit").with_float(unit);
  std::uint64_t inexact = 0;
  const auto units = [unit, &inexact](float x) { return detail::to_pragma_units(x, unit, inexact); };
  const auto product = untold::budget::product;
  untold::budget own(options.limits, payload_bytes(s));
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::udm_limit);
  };
  const auto visit = [&budget](std::uint64_t items, const char* what) {
    return budget.charge_work(items, what, errc::udm_limit);
  };
  const auto too_many = [&options](const char* field, std::uint64_t count) -> status {
    if (count <= options.limits.max_records) return {};
    return make_error(errc::udm_limit).at_field(field).with_value(count).with_limit(options.limits.max_records);
  };
  std::uint64_t renamed = 0;

  // ---- the skeleton: the first skinned mesh's, else the first --------------------------
  const std::uint32_t skeleton_index = detail::primary_skeleton(s);
  report.dropped("skeletons", "", "a PMDL holds one skeleton", s.skeletons.size() - (skeleton_index == no_ref ? 0 : 1));
  u::property bones_element = u::make_element();
  if (skeleton_index == no_ref) {
    u::property root = u::make_element();
    root.add("index", u::make_value<std::uint32_t>(0));
    root.add("pose", u::make_value(u::scaled_transform{}));
    bones_element.add("root", std::move(root));
    report.info("skeleton", "", "a one-bone skeleton 'root' is written: Pragma's loader requires a skeleton", 1);
  } else {
    const skeleton& sk = s.skeletons[skeleton_index];
    const std::size_t n = sk.joints.size();
    UNTOLD_TRY(too_many("bones", n));
    UNTOLD_TRY(visit(n, "bones"));
    UNTOLD_TRY(hold(product(n, sizeof(u::property) + sizeof(mat4) + 2 * sizeof(std::uint32_t) + 2 * 64), "bones"));
    // Depth: root > assetData > skeleton > assetData > bones > bone, then two
    // levels (children, bone) per generation; parents come first.
    std::vector<std::uint32_t> depth(n, 0);
    std::vector<std::vector<std::uint32_t>> children(n);
    std::vector<std::uint32_t> roots;
    std::vector<mat4> world(n);
    std::uint64_t unbound = 0;
    for (std::uint32_t j = 0; j < n; ++j) {
      const joint& jt = sk.joints[j];
      const mat4 local = jt.rest.matrix();
      if (jt.parent == no_ref) {
        roots.push_back(j);
        world[j] = local;
      } else {
        depth[j] = depth[jt.parent] + 1;
        children[jt.parent].push_back(j);
        world[j] = multiply(world[jt.parent], local);
      }
      if (6 + 2 * std::uint64_t{depth[j]} > options.limits.max_depth)
        return make_error(errc::udm_limit).at_field("bone depth").with_value(depth[j]).with_limit(options.limits.max_depth);
      const mat4 derived = inverse_affine(world[j]);
      for (std::size_t k = 0; k < 16; ++k)
        if (std::fabs(derived[k] - jt.inverse_bind[k]) > 1e-4f * (1 + std::fabs(jt.inverse_bind[k]))) {
          ++unbound;
          break;
        }
    }
    detail::key_set taken;
    std::vector<std::string> names(n);
    for (std::uint32_t j = 0; j < n; ++j) names[j] = detail::unique_key(sk.joints[j].name, "bone" + std::to_string(j), taken, renamed);
    // Children have higher positions than their parents: build from the last joint back.
    std::vector<u::property> built(n);
    for (std::uint32_t j = static_cast<std::uint32_t>(n); j-- > 0;) {
      const transform& rest = sk.joints[j].rest;
      u::property b = u::make_element();
      b.add("index", u::make_value<std::uint32_t>(j));
      b.add("pose", u::make_value(u::scaled_transform{
                        {units(rest.translation[0]), units(rest.translation[1]), units(rest.translation[2])},
                        {rest.rotation[0], rest.rotation[1], rest.rotation[2], rest.rotation[3]},
                        {rest.scale[0], rest.scale[1], rest.scale[2]}}));
      if (!children[j].empty()) {
        u::property& kids = b.add("children", u::make_element());
        for (const std::uint32_t c : children[j]) kids.add(names[c], std::move(built[c]));
      }
      built[j] = std::move(b);
    }
    for (const std::uint32_t r : roots) bones_element.add(names[r], std::move(built[r]));
    report.dropped("inverse bind matrices", "skeleton",
                   "Pragma derives the bind pose from the bones' reference poses; these disagree with them", unbound);
  }

  // ---- materials: names; skin 0 maps skin material i to material i -------------------------
  UNTOLD_TRY(too_many("materials", s.materials.size()));
  UNTOLD_TRY(hold(product(s.materials.size(), sizeof(u::property) + 64), "materials"));
  std::vector<u::property> material_names;
  std::vector<std::uint32_t> skin_materials;
  std::uint64_t parameters = 0;
  for (std::uint32_t i = 0; i < s.materials.size(); ++i) {
    const material& m = s.materials[i];
    std::string name = m.name.empty() ? "material" + std::to_string(i) : m.name;
    renamed += name != m.name ? 1 : 0;
    material_names.push_back(u::make_string(name));
    skin_materials.push_back(i);
    parameters += detail::is_placeholder(m) ? 0 : 1;
  }
  report.dropped("material parameters", "",
                 "a PMDL names its materials; factors, textures and samplers live in .pmat files, which are not written",
                 parameters);
  report.dropped("textures", "", "referenced from .pmat material files, which are not written", s.textures.size());

  // ---- node world transforms, parents first (validate_model proved the order) ------------
  const std::vector<mat4> world = detail::world_transforms(s);
  // Groups: (node or no_ref, its meshes), in node order: nodes that draw
  // meshes and leaves (an empty group keeps its name), then the meshes no
  // node draws.
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> groups;
  {
    std::vector<std::uint8_t> drawn(s.meshes.size(), 0);
    std::uint64_t instanced = 0;
    std::vector<std::uint8_t> has_children(s.nodes.size(), 0);
    for (const node& n : s.nodes)
      if (n.parent != no_ref) has_children[n.parent] = 1;
    for (std::uint32_t n = 0; n < s.nodes.size(); ++n) {
      if (s.nodes[n].meshes.empty() && has_children[n] != 0) continue;
      groups.emplace_back(n, s.nodes[n].meshes);
      for (const std::uint32_t m : s.nodes[n].meshes) {
        instanced += drawn[m] != 0 ? 1 : 0;
        drawn[m] = 1;
      }
    }
    std::vector<std::uint32_t> loose;
    for (std::uint32_t m = 0; m < s.meshes.size(); ++m)
      if (drawn[m] == 0) loose.push_back(m);
    if (!loose.empty()) groups.emplace_back(no_ref, std::move(loose));
    std::uint64_t grouping = 0;
    for (std::uint32_t n = 0; n < s.nodes.size(); ++n) grouping += s.nodes[n].meshes.empty() && has_children[n] != 0 ? 1 : 0;
    report.info("nodes that only group others", "", "no mesh group: their transforms are in the meshes below them",
                grouping);
    report.changed("instanced meshes", "", "a mesh drawn by several nodes is written once per drawing", instanced);
  }
  UNTOLD_TRY(too_many("mesh groups", groups.size()));

  // ---- sub-meshes -----------------------------------------------------------------------
  const u::struct_layout vertex_layout{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4},
                                       {"pos", "uv", "n", "t"}};
  const u::struct_layout weight_layout{{u::type::vector4i, u::type::vector4}, {"id", "w"}};
  detail::key_set group_keys;
  u::property mesh_groups = u::make_element();
  std::vector<std::uint32_t> base_groups;
  float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // render bounds, in Pragma units
  bool any_vertex = false;
  std::uint64_t baked = 0, skinned_placed = 0, lost_skins = 0, unrolled = 0, zero_streams = 0, colours = 0, morphs = 0,
                lods = 0, skipped = 0, no_material = 0;
  for (const auto& [node_index, mesh_list] : groups) {
    const std::string group_name =
        detail::unique_key(node_index == no_ref ? std::string_view("default") : std::string_view(s.nodes[node_index].name),
                           "group" + std::to_string(base_groups.size()), group_keys, renamed);
    std::vector<u::property> sub_meshes;
    for (const std::uint32_t mi : mesh_list) {
      const mesh& m = s.meshes[mi];
      const std::size_t v = m.vertex_count();
      if (v == 0) {
        ++skipped;
        continue;
      }
      UNTOLD_TRY(too_many("vertices", v));
      const bool skinned = m.skin != no_ref && s.skins[m.skin].skeleton == skeleton_index;
      lost_skins += m.skin != no_ref && !skinned ? 1 : 0;
      const bool place = node_index != no_ref && !skinned && world[node_index] != identity_matrix;
      baked += place ? 1 : 0;
      skinned_placed += node_index != no_ref && skinned && world[node_index] != identity_matrix ? 1 : 0;
      const mat4& to_world = place ? world[node_index] : identity_matrix;
      const mat4 normal_matrix = inverse_affine(to_world);  // normals: its transpose, read by rows
      const float det = detail::linear_determinant(to_world);
      const bool flip = place && det < 0;  // a mirroring transform turns the fronts around
      zero_streams += (m.normals.empty() ? 1 : 0) + (m.uv0.empty() ? 1 : 0) + (m.tangents.empty() ? 1 : 0);
      colours += m.colors.empty() ? 0 : 1;
      morphs += m.morphs.size();
      lods += m.lods.size();

      // Indices: triangle lists (strips and fans unrolled), line lists, points.
      const bool triangles = m.primitive == topology::triangle_list || m.primitive == topology::triangle_strip ||
                             m.primitive == topology::triangle_fan;
      const bool lines = m.primitive == topology::line_list || m.primitive == topology::line_strip;
      const std::size_t source_count = m.indices.empty() ? v : m.indices.size();
      UNTOLD_TRY(visit(source_count, "indices"));
      UNTOLD_TRY(hold(product(source_count, 3 * sizeof(std::uint32_t)), "indices"));
      std::vector<std::uint32_t> list;
      if (triangles) {
        list = detail::triangle_list(m, m.indices);
        if (flip)
          for (std::size_t t = 0; t + 2 < list.size(); t += 3) std::swap(list[t + 1], list[t + 2]);
      } else {
        std::vector<std::uint32_t> source = m.indices;
        if (source.empty())
          for (std::uint32_t i = 0; i < v; ++i) source.push_back(i);
        if (m.primitive == topology::line_strip)
          for (std::size_t i = 1; i < source.size(); ++i) list.insert(list.end(), {source[i - 1], source[i]});
        else
          list = std::move(source);
        if (m.primitive == topology::line_list) list.resize(list.size() / 2 * 2);
      }
      unrolled += m.primitive == topology::triangle_strip || m.primitive == topology::triangle_fan ||
                          m.primitive == topology::line_strip
                      ? 1
                      : 0;
      UNTOLD_TRY(too_many("indices", list.size()));

      // Vertices: Pragma's 48-byte struct.
      const std::uint64_t vertex_bytes = product(v, vertex_layout.size());
      UNTOLD_TRY(visit(v, "vertices"));
      UNTOLD_TRY(hold(product(vertex_bytes, 2), "vertices"));  // the struct bytes and their LZ4 copy
      std::vector<std::byte> vb(vertex_bytes);
      for (std::size_t i = 0; i < v; ++i) {
        std::byte* p = vb.data() + i * vertex_layout.size();
        const float* q = &m.positions[3 * i];
        float pos[3];
        for (int c = 0; c < 3; ++c)
          pos[c] = place ? to_world[c] * q[0] + to_world[4 + c] * q[1] + to_world[8 + c] * q[2] + to_world[12 + c] : q[c];
        for (float& c : pos) c = units(c);
        for (int c = 0; c < 3; ++c) {
          lo[c] = any_vertex ? std::min(lo[c], pos[c]) : pos[c];
          hi[c] = any_vertex ? std::max(hi[c], pos[c]) : pos[c];
        }
        any_vertex = true;
        u::store_value(p, u::vec3{pos[0], pos[1], pos[2]});
        if (!m.uv0.empty()) u::store_value(p + 12, u::vec2{m.uv0[2 * i], m.uv0[2 * i + 1]});
        const auto direction = [&](const float* d, bool normal) {
          float r[3];
          if (!place) return u::vec3{d[0], d[1], d[2]};
          for (int c = 0; c < 3; ++c)
            r[c] = normal ? normal_matrix[c * 4] * d[0] + normal_matrix[c * 4 + 1] * d[1] + normal_matrix[c * 4 + 2] * d[2]
                          : to_world[c] * d[0] + to_world[4 + c] * d[1] + to_world[8 + c] * d[2];
          const float len = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
          if (len > 0)
            for (float& x : r) x /= len;
          return u::vec3{r[0], r[1], r[2]};
        };
        if (!m.normals.empty()) u::store_value(p + 20, direction(&m.normals[3 * i], true));
        if (!m.tangents.empty()) {
          const u::vec3 t = direction(&m.tangents[4 * i], false);
          u::store_value(p + 32, u::vec4{t.x, t.y, t.z, m.tangents[4 * i + 3] < 0 ? -1.0f : 1.0f});
        }
      }
      u::property data = u::make_element();
      data.add("pose", u::make_value(u::scaled_transform{}));
      data.add("geometryType", u::make_string(triangles ? "Triangles" : lines ? "Lines" : "Points"));
      auto vertices = u::compress_array(u::make_struct_array(vertex_layout, static_cast<std::uint32_t>(v), std::move(vb)));
      if (!vertices) return vertices.error();
      data.add("vertices", std::move(*vertices));
      const bool narrow = std::all_of(list.begin(), list.end(), [](std::uint32_t x) { return x <= 0xFFFF; });
      UNTOLD_TRY(hold(product(list.size(), narrow ? 4 : 8), "indices"));
      result<u::property> indices = make_error(errc::invalid_argument);
      if (narrow) {
        std::vector<std::uint16_t> narrowed(list.begin(), list.end());
        indices = u::compress_array(u::make_array<std::uint16_t>(narrowed));
      } else {
        indices = u::compress_array(u::make_array<std::uint32_t>(list));
      }
      if (!indices) return indices.error();
      data.add("indices", std::move(*indices));
      std::uint32_t skin_material = 0;
      if (m.material != no_ref) skin_material = m.material;
      else no_material += s.materials.empty() ? 0 : 1;
      data.add("skinMaterialIndex", u::make_value<std::uint32_t>(skin_material));
      u::property uv_sets = u::make_element();
      std::vector<const std::vector<float>*> sets;
      if (!m.uv1.empty()) sets.push_back(&m.uv1);
      for (const std::vector<float>& e : m.extra_uvs) sets.push_back(&e);
      for (std::size_t k = 0; k < sets.size(); ++k) {
        UNTOLD_TRY(hold(product(v, 2 * 2 * sizeof(float)), "uv sets"));
        std::vector<u::vec2> uvs(v);
        for (std::size_t i = 0; i < v; ++i) uvs[i] = {(*sets[k])[2 * i], (*sets[k])[2 * i + 1]};
        auto set = u::compress_array(u::make_array<u::vec2>(uvs));
        if (!set) return set.error();
        uv_sets.add("uv" + std::to_string(k + 1), std::move(*set));
      }
      if (!sets.empty()) data.add("uvSets", std::move(uv_sets));  // Pragma writes no empty uvSets
      if (skinned) {
        const std::vector<std::uint32_t>& palette = s.skins[m.skin].joints;
        const std::uint64_t weight_bytes = product(v, weight_layout.size());
        UNTOLD_TRY(hold(product(weight_bytes, 2), "vertex weights"));
        std::vector<std::byte> wb(weight_bytes);
        for (std::size_t i = 0; i < v; ++i) {
          std::int32_t ids[4];
          float ws[4];
          for (int k = 0; k < 4; ++k) {
            const bool used = m.weights[i][k] != 0;
            ids[k] = used ? static_cast<std::int32_t>(palette[m.joints[i][k]]) : -1;
            ws[k] = used ? m.weights[i][k] : 0.0f;
          }
          u::store_value(wb.data() + i * weight_layout.size(), u::vec4i{ids[0], ids[1], ids[2], ids[3]});
          u::store_value(wb.data() + i * weight_layout.size() + 16, u::vec4{ws[0], ws[1], ws[2], ws[3]});
        }
        auto weights = u::compress_array(u::make_struct_array(weight_layout, static_cast<std::uint32_t>(v), std::move(wb)));
        if (!weights) return weights.error();
        data.add("vertexWeights", std::move(*weights));
      }
      sub_meshes.push_back(u::make_asset("PMESH", 1, std::move(data)));
    }
    u::property mesh_element = u::make_element();
    mesh_element.add("subMeshes", u::make_array_of(u::type::element, std::move(sub_meshes)));
    u::property group = u::make_element();
    group.add("index", u::make_value<std::uint32_t>(static_cast<std::uint32_t>(base_groups.size())));
    group.add("meshes", u::make_array_of(u::type::element, {std::move(mesh_element)}));
    base_groups.push_back(static_cast<std::uint32_t>(base_groups.size()));
    mesh_groups.add(group_name, std::move(group));
  }
  report.changed("node hierarchy", "", "a mesh group per node that draws meshes; static meshes' node transforms are "
                 "baked into their vertices (Pragma has no node hierarchy)", baked);
  report.info("skinned mesh placement", "", "skinned meshes stay in bind space; their node transform is not applied",
              skinned_placed);
  report.dropped("skins of another skeleton", "", "a PMDL holds one skeleton: the mesh is written unskinned", lost_skins);
  report.changed("strips and fans", "", "unrolled into triangle and line lists", unrolled);
  report.changed("absent vertex streams", "", "Pragma's vertex always has uv, normal and tangent: written as zero",
                 zero_streams);
  report.changed("meshes without a material", "", "a sub-mesh names a skin material: material 0 is used", no_material);
  report.dropped("vertex colours", "", "Pragma's vertex has no colour", colours);
  report.dropped("morph targets", "", "not written (Pragma keeps them as vertex animations with flexes)", morphs);
  report.dropped("LOD levels", "", "not written (Pragma's LODs are mesh group replacements)", lods);
  report.dropped("empty meshes", "", "a mesh without vertices has no sub-mesh", skipped);
  report.dropped("lights", "", "scene objects in Pragma, not model data", s.lights.size());
  report.dropped("cameras", "", "scene objects in Pragma, not model data", s.cameras.size());

  // ---- animations: one PANI clip each ------------------------------------------------------
  u::property clips = u::make_element();
  detail::key_set clip_keys;
  UNTOLD_TRY(too_many("animations", s.animations.size()));
  for (std::size_t ai = 0; ai < s.animations.size(); ++ai) {
    const animation& a = s.animations[ai];
    const std::string where = std::string("clip '").append(a.name).append("'");
    std::uint64_t weight_channels = 0, node_channels = 0, other_skeleton = 0, duplicates = 0, step = 0, cubic = 0,
                  wide = 0;
    // The channels this clip keeps, ordered by (bone, path) (deterministic;
    // a stable sort keeps the first of a duplicate first). Sorting, not a
    // per-bone table: clips x bones would not be linear.
    struct slot_channel {
      std::uint32_t joint;
      std::uint32_t slot;  // 0 position, 1 rotation, 2 scale
      const animation_channel* channel;
    };
    UNTOLD_TRY(visit(a.channels.size(), "animation channels"));
    UNTOLD_TRY(hold(product(a.channels.size(), 2 * sizeof(slot_channel)), "animation channels"));
    std::vector<slot_channel> sorted;
    for (const animation_channel& c : a.channels) {
      if (c.path == anim_path::weights) { ++weight_channels; continue; }
      if (c.skeleton == no_ref) { ++node_channels; continue; }
      if (c.skeleton != skeleton_index) { ++other_skeleton; continue; }
      if (c.joint > 0xFFFF) { ++wide; continue; }
      sorted.push_back({c.joint, c.path == anim_path::translation ? 0u : c.path == anim_path::rotation ? 1u : 2u, &c});
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const slot_channel& l, const slot_channel& r) {
      return std::pair(l.joint, l.slot) < std::pair(r.joint, r.slot);
    });
    std::vector<slot_channel> kept_slots;
    std::vector<const animation_channel*> kept;
    for (const slot_channel& c : sorted) {
      if (!kept_slots.empty() && kept_slots.back().joint == c.joint && kept_slots.back().slot == c.slot) {
        ++duplicates;
        continue;
      }
      kept_slots.push_back(c);
      kept.push_back(c.channel);
      step += c.channel->interp == interpolation::step ? 1 : 0;
      cubic += c.channel->interp == interpolation::cubic_spline ? 1 : 0;
    }
    float duration = a.duration;
    for (const animation_channel* c : kept)
      if (!c->times.empty()) duration = std::max(duration, c->times.back());
    std::uint64_t scanned = 0;
    std::uint32_t fps = detail::frame_rate_of(duration, kept, scanned);
    UNTOLD_TRY(visit(scanned, "animation key times"));  // linear (<= 255 x the keys), charged as done
    report.changed("frame rate", where,
                   "Pragma plays clips as frames: keys off a frame grid of up to 255 fps are sampled at 30 fps",
                   fps == 0 ? 1 : 0);
    if (fps == 0) fps = 30;
    std::vector<std::uint16_t> set;  // the animated bones; node n is set[n]
    std::vector<u::property> channels;
    const char* const property_names[3] = {"position", "rotation", "scale"};
    for (const slot_channel& sc : kept_slots) {
      if (set.empty() || set.back() != sc.joint) set.push_back(static_cast<std::uint16_t>(sc.joint));
      const auto node = static_cast<std::uint16_t>(set.size() - 1);
      const std::size_t slot = sc.slot;
      const animation_channel* c = sc.channel;
      const std::size_t width = slot == 1 ? 4 : 3;
      const std::size_t stride = width * (c->interp == interpolation::cubic_spline ? 3 : 1);
      const std::size_t skip = c->interp == interpolation::cubic_spline ? width : 0;
      UNTOLD_TRY(too_many("animation keys", c->times.size()));
      UNTOLD_TRY(hold(product(c->times.size(), 2 * (width + 1) * sizeof(float)), "animation keys"));
      u::property ch = u::make_element();
      ch.add("node", u::make_value<std::uint16_t>(node));
      ch.add("property", u::make_string(property_names[slot]));
      ch.add("times", u::make_array<float>(c->times));
      if (slot == 1) {
        std::vector<u::quat> q(c->times.size());
        for (std::size_t k = 0; k < q.size(); ++k) {
          const float* x = c->values.data() + k * stride + skip;
          q[k] = {x[0], x[1], x[2], x[3]};
        }
        ch.add("values", u::make_array<u::quat>(q));
      } else {
        std::vector<u::vec3> v3(c->times.size());
        for (std::size_t k = 0; k < v3.size(); ++k) {
          const float* x = c->values.data() + k * stride + skip;
          v3[k] = slot == 0 ? u::vec3{units(x[0]), units(x[1]), units(x[2])} : u::vec3{x[0], x[1], x[2]};
        }
        ch.add("values", u::make_array<u::vec3>(v3));
      }
      channels.push_back(std::move(ch));
    }
    report.dropped("morph weight channels", where, "a PMDL clip drives bones (Pragma's flex animations are not written)",
                   weight_channels);
    report.dropped("node channels", where, "a PMDL clip drives the model's bones", node_channels);
    report.dropped("channels of another skeleton", where, "a PMDL holds one skeleton", other_skeleton);
    report.dropped("channels of bones past 65535", where, "clip nodes name bones with 16-bit indices", wide);
    report.dropped("duplicate channels", where, "a second channel of one path on one joint", duplicates);
    report.changed("step channels", where, "Pragma interpolates frames linearly", step);
    report.changed("cubic-spline channels", where, "key values kept, tangents dropped (linear)", cubic);
    u::property node = u::make_element();
    node.add("type", u::make_string("bone"));
    node.add("set", u::make_array<std::uint16_t>(set));
    u::property data = u::make_element();
    data.add("fps", u::make_value<std::uint8_t>(static_cast<std::uint8_t>(fps)));
    data.add("duration", u::make_value<float>(duration));
    data.add("nodes", u::make_array_of(u::type::element, {std::move(node)}));
    auto packed = u::compress_array(u::make_array_of(u::type::element, std::move(channels)));
    if (!packed) return packed.error();
    data.add("channels", std::move(*packed));
    u::property clip = u::make_asset("PANI", 1, std::move(data));
    clip.add("index", u::make_value<std::uint32_t>(static_cast<std::uint32_t>(ai)));
    clips.add(detail::unique_key(a.name, "animation" + std::to_string(ai), clip_keys, renamed), std::move(clip));
  }
  report.changed("names", "",
                 "UDM keys (groups, bones, clips) are unique within their element, at most 255 bytes, without NULs; "
                 "empty names (materials too) get one",
                 renamed);

  // ---- the model --------------------------------------------------------------------------
  u::property model = u::make_element();
  model.add("materialPaths", u::make_array_of(u::type::string, {}));
  model.add("materials", u::make_array_of(u::type::string, std::move(material_names)));
  u::property bounds = u::make_element();
  bounds.add("min", u::make_value(u::vec3{lo[0], lo[1], lo[2]}));  // Pragma units already
  bounds.add("max", u::make_value(u::vec3{hi[0], hi[1], hi[2]}));
  model.add("render", u::make_element()).add("bounds", std::move(bounds));
  u::property skeleton_data = u::make_element();
  skeleton_data.add("bones", std::move(bones_element));
  model.add("skeleton", u::make_asset("PSKEL", 1, std::move(skeleton_data)));
  model.add("baseMeshGroups", u::make_array<std::uint32_t>(base_groups));
  u::property skin = u::make_element();
  skin.add("materials", u::make_array<std::uint32_t>(skin_materials));
  model.add("skins", u::make_array_of(u::type::element, {std::move(skin)}));
  if (!s.animations.empty()) model.add("animations", std::move(clips));
  model.add("meshGroups", std::move(mesh_groups));
  report.changed("units", "", "metres written as Pragma units (/ " + std::to_string(unit) + ")", unit != 1.0f ? 1 : 0);
  report.changed("unit conversion", "",
                 "no Pragma float scales back to these values exactly: the nearest is written (within a float step)",
                 inexact);

  u::write_options wo;
  wo.limits = options.limits;
  wo.budget = &budget;
  wo.verify = false;  // read back below, through the model checks as well
  auto bytes = u::write_binary(u::make_asset("PMDL", 1, std::move(model)), wo);
  if (!bytes) return bytes.error();
  {
    auto doc = u::open_document(*bytes, {.limits = options.limits});
    if (!doc) return doc.error();
    auto back = u::pmdl_from_document(*doc);
    if (!back) return back.error();
    UNTOLD_TRY(u::check_pmdl_values(*back));
  }
  return std::move(*bytes);
}

}  // namespace untold::convert
