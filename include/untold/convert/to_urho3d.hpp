// untold/convert/to_urho3d.hpp - the Urho3D writer of the neutral scene: a
// .mdl (UMD2, or rbfx's UMD3 version 2 when a morph has a default weight),
// one .ani per animation clip, and a material list.
//
//   convert::conversion_report report;
//   auto out = convert::to_urho3d(scene, {}, report);   // result<urho3d_output>
//   write_file("Model.mdl", out->model);
//   for (auto& [name, bytes] : out->animations) write_file(name, bytes);   // "Walk.ani"
//   write_file("Model.txt", out->material_list);
//
// Mapping (docs/convert.md has the table; the reverse of urho3d/import.hpp):
//   Coordinates: the scene is right-handed, Urho3D left-handed (Y up both):
//   Z is mirrored (positions, normals, tangent xyz, morph deltas,
//   translations), quaternions (x, y, z, w) become (w, -x, -y, z), inverse
//   bind matrices M become S M S (S = diag(1, 1, -1)) and triangle winding
//   is reversed.
//   mesh -> one geometry per drawing (a mesh drawn by n nodes gives n
//   geometries, `changed`; one drawn by no node gives one), with its own
//   vertex and index buffer; LOD levels become the geometry's further LODs
//   over the same buffers (switch distance kept). A static mesh's node world
//   transform is baked into its vertices (`changed`); a skinned mesh stays in
//   bind space (glTF ignores a skinned mesh's node transform too). Vertex
//   elements: POSITION, NORMAL, COLOR (UBYTE4_NORM), TEXCOORD 0 and 1,
//   TEXCOORD 2..7 for further uv sets (Urho3D's stock shaders read two:
//   `info`), TANGENT (VECTOR4), BLENDWEIGHTS + BLENDINDICES (UBYTE4) for
//   skinned meshes, each geometry's bone mapping its skin palette. Strips and
//   fans are unrolled into lists. Index buffers are 16-bit up to 65535
//   vertices, else 32-bit.
//   skeleton -> the model's bones (the first skinned mesh's skeleton, else
//   the first skeleton; others `dropped`): bind TRS = rest pose, offset
//   matrix = inverse bind; collision shapes none.
//   morph targets -> model morphs by name (every mesh's target of one name
//   is one morph with a buffer per geometry), vertices whose deltas are not
//   zero; the default weight needs UMD3 version 2 (written then).
//   animation -> one UANI per clip, a track per joint with the union of its
//   translation, rotation and scale key times (channels with other times are
//   sampled there, linearly / by nlerp: `changed`); step and cubic-spline
//   channels keep their key values (`changed`); morph-weight and node
//   channels are `dropped` (.ani tracks drive bones).
//   material -> a line of the material list: "Materials/NAME.xml" per
//   geometry in geometry order, the format Urho3D's
//   StaticModel::ApplyMaterialList reads ("" for a geometry without a
//   material). The materials' own parameters, textures, sampler and texture
//   transforms are `dropped` (no material XML is written).
//   Lights, cameras and the node hierarchy are `dropped` (scene nodes, not
//   model data).
//
// Every output is read back by the strict readers with deep checks
// (urho3d::open_model, open_animation) before success is returned: a file
// they reject is that error. Errors: validate_model's; R-LIMITS when the
// output exceeds the budget (options.budget, else one made from the scene's
// size) or a count exceeds limits.max_records; invalid_argument (field
// "bones") for more than 255 joints in a skin palette of one geometry.
// Deterministic: the same scene gives the same bytes. Not for untrusted
// scenes in the sense of file input: the scene comes from an importer.
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
#include "../packing.hpp"
#include "../urho3d/animation.hpp"
#include "../urho3d/model.hpp"
#include "model.hpp"

namespace untold::convert {

struct to_urho3d_options {
  untold::limits limits{};
  /// The budget of the input the scene came from (budget.hpp), shared with
  /// its importer; none: one made from `limits` for the scene's size.
  untold::budget* budget = nullptr;
};

struct urho3d_output {
  std::vector<std::byte> model;  // .mdl
  /// One .ani per clip: a file name ("NAME.ani", unsafe characters as '_',
  /// "_N" before the extension for a name taken) and its bytes.
  std::vector<std::pair<std::string, std::vector<std::byte>>> animations;
  /// One line per geometry: "Materials/NAME.xml" or "" (ApplyMaterialList's format).
  std::string material_list;
};

namespace detail {

/// A name as a file name: characters other than letters, digits, '-', '_',
/// '.' and space become '_'; empty or dot-only names become `fallback`.
[[nodiscard]] inline std::string file_name(std::string_view name, std::string_view fallback) {
  std::string out;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == ' ';
    out.push_back(ok ? c : '_');
  }
  if (out.find_first_not_of('.') == std::string::npos) out = fallback;
  return out;
}

/// Scene (x, y, z, w), right-handed -> Urho3D (w, x, y, z), left-handed.
[[nodiscard]] constexpr urho3d::quat_wxyz to_urho_rotation(const float* q) noexcept { return {q[3], -q[0], -q[1], q[2]}; }

/// Column-major 4x4 scene matrix M -> Urho3D's 3x4 row-major S M S.
[[nodiscard]] constexpr std::array<float, 12> to_urho_matrix(const mat4& m) noexcept {
  constexpr float s[4] = {1, 1, -1, 1};
  std::array<float, 12> out{};
  for (std::size_t row = 0; row < 3; ++row)
    for (std::size_t col = 0; col < 4; ++col) out[row * 4 + col] = s[row] * s[col] * m[col * 4 + row];
  return out;
}

/// Linear interpolation of a channel's value at `t` (nlerp for rotations;
/// cubic splines use their key values). Precondition: !times.empty().
inline void sample(const animation_channel& c, float t, float* out) {
  const std::size_t width = c.path == anim_path::rotation ? 4 : 3;
  const std::size_t stride = width * (c.interp == interpolation::cubic_spline ? 3 : 1);
  const std::size_t skip = c.interp == interpolation::cubic_spline ? width : 0;
  const auto value = [&](std::size_t k) { return c.values.data() + k * stride + skip; };
  const auto after = std::upper_bound(c.times.begin(), c.times.end(), t);
  if (after == c.times.begin() || after == c.times.end() || c.interp == interpolation::step) {
    const std::size_t k = after == c.times.begin() ? 0 : static_cast<std::size_t>(after - c.times.begin()) - 1;
    std::copy(value(k), value(k) + width, out);
    return;
  }
  const std::size_t k1 = static_cast<std::size_t>(after - c.times.begin()), k0 = k1 - 1;
  const float span = c.times[k1] - c.times[k0];
  const float f = span > 0 ? (t - c.times[k0]) / span : 0;
  const float* a = value(k0);
  const float* b = value(k1);
  float sign = 1;
  if (width == 4 && a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0) sign = -1;  // shortest arc
  for (std::size_t i = 0; i < width; ++i) out[i] = a[i] + (sign * b[i] - a[i]) * f;
  if (width == 4) {
    const float len = std::sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
    if (len > 0)
      for (std::size_t i = 0; i < 4; ++i) out[i] /= len;
  }
}

}  // namespace detail

/// Writes `s` as Urho3D files; see the header comment for the mapping,
/// the errors and the report.
[[nodiscard]] inline result<urho3d_output> to_urho3d(const scene& s, const to_urho3d_options& options,
                                                     conversion_report& report) {
  UNTOLD_TRY(validate_model(s));
  const auto product = untold::budget::product;
  const auto sum = untold::budget::sum;
  untold::budget own(options.limits, payload_bytes(s));
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::limit_exceeded);
  };
  const auto visit = [&budget](std::uint64_t items, const char* what) {
    return budget.charge_work(items, what, errc::limit_exceeded);
  };

  detail::report_dropped_extras(s, report, "Urho3D files have no place for application data");

  // ---- the skeleton: the first skinned mesh's, else the first --------------------------
  const std::uint32_t skeleton_index = detail::primary_skeleton(s);
  report.dropped("skeletons", "", "a .mdl holds one skeleton", s.skeletons.size() - (skeleton_index == no_ref ? 0 : 1));
  std::vector<std::string> bone_names;  // kept alive: urho3d::bone views them
  urho3d::model model;
  if (skeleton_index != no_ref) {
    const skeleton& sk = s.skeletons[skeleton_index];
    UNTOLD_TRY(visit(sk.joints.size(), "bones"));
    UNTOLD_TRY(hold(product(sk.joints.size(), sizeof(urho3d::bone) + 32), "bones"));
    std::map<std::string, std::uint64_t> seen;
    std::uint64_t nuls = 0;
    for (std::size_t j = 0; j < sk.joints.size(); ++j) {
      std::string name = sk.joints[j].name;
      const std::size_t before = name.size();
      name.erase(std::remove(name.begin(), name.end(), '\0'), name.end());
      nuls += name.size() != before ? 1 : 0;
      ++seen[name];
      bone_names.push_back(std::move(name));
    }
    for (std::size_t j = 0; j < sk.joints.size(); ++j) {
      const joint& jt = sk.joints[j];
      urho3d::bone b;
      b.name = bone_names[j];
      b.parent = jt.parent == no_ref ? static_cast<std::uint32_t>(j) : jt.parent;
      b.position = {jt.rest.translation[0], jt.rest.translation[1], -jt.rest.translation[2]};
      b.rotation = detail::to_urho_rotation(jt.rest.rotation.data());
      b.scale = jt.rest.scale;
      b.offset_matrix = detail::to_urho_matrix(jt.inverse_bind);
      model.bones.push_back(b);
    }
    std::uint64_t duplicates = 0;
    for (const auto& [name, n] : seen) duplicates += n - 1;
    report.dropped("duplicate bone names", "skeleton", "animation tracks address bones by name: only the first "
                   "of a name is animated", duplicates);
    report.changed("bone names", "skeleton", "NUL characters removed (Urho3D names are C strings)", nuls);
  }

  // ---- node world transforms, parents first (validate_model proved the order) ------------
  const std::vector<mat4> world = detail::world_transforms(s);
  // Every drawing: (mesh, node or no_ref), in mesh order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> drawings;
  {
    std::vector<std::vector<std::uint32_t>> drawn_by(s.meshes.size());
    for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
      for (std::uint32_t m : s.nodes[n].meshes) drawn_by[m].push_back(n);
    std::uint64_t instanced = 0;
    for (std::uint32_t m = 0; m < s.meshes.size(); ++m) {
      if (drawn_by[m].empty()) drawings.emplace_back(m, no_ref);
      for (std::uint32_t n : drawn_by[m]) drawings.emplace_back(m, n);
      instanced += drawn_by[m].size() > 1 ? drawn_by[m].size() - 1 : 0;
    }
    report.changed("instanced meshes", "", "a mesh drawn by several nodes becomes one geometry per drawing", instanced);
  }

  // ---- geometries ------------------------------------------------------------------------
  std::vector<std::vector<std::byte>> storage;  // vertex, index and morph bytes the model views
  storage.reserve(2 * drawings.size());
  std::vector<std::uint32_t> geometry_of_drawing(drawings.size(), no_ref);
  std::vector<std::uint8_t> placed(drawings.size(), 0);  // the node transform is baked into the vertices
  std::uint64_t baked = 0, skinned_placed = 0, lost_skins = 0, extra_uv_sets = 0, dropped_uv_sets = 0, skipped = 0;
  std::uint64_t unrolled = 0, colour_rounding = 0, many_bones = 0;
  constexpr std::size_t max_extra_uvs = 6;  // TEXCOORD 2..7, what the importer reads back
  float3 lo{0, 0, 0}, hi{0, 0, 0};
  bool any_vertex = false;
  for (std::size_t d = 0; d < drawings.size(); ++d) {
    const auto [mi, ni] = drawings[d];
    const mesh& m = s.meshes[mi];
    const std::string where = std::string("mesh '").append(m.name).append("'");
    const std::size_t v = m.vertex_count();
    if (v == 0) {
      ++skipped;
      continue;
    }
    if (model.geometries.size() >= options.limits.max_records)
      return make_error(errc::limit_exceeded).at_field("geometries").with_value(model.geometries.size() + 1)
          .with_limit(options.limits.max_records);
    const bool skinned = m.skin != no_ref && s.skins[m.skin].skeleton == skeleton_index;
    if (m.skin != no_ref && !skinned) ++lost_skins;
    std::vector<std::uint32_t> palette;
    if (skinned) {
      palette = s.skins[m.skin].joints;
      if (palette.size() > 256)
        return make_error(errc::invalid_argument).at_field("bones").with_value(palette.size()).with_limit(256)
            .with_subject(m.name);
      many_bones += palette.size() > 64 ? 1 : 0;
    }
    // Placement: a static mesh's node transform is baked in; det < 0 flips the winding once more.
    const bool place = ni != no_ref && !skinned && world[ni] != identity_matrix;
    const mat4 to_world = ni == no_ref ? identity_matrix : world[ni];
    const mat4 inv = inverse_affine(to_world);
    const float det = detail::linear_determinant(to_world);
    const bool flip = place && det < 0;
    baked += place ? 1 : 0;
    placed[d] = place ? 1 : 0;
    skinned_placed += ni != no_ref && skinned && world[ni] != identity_matrix ? 1 : 0;
    const auto point = [&](const float* p) -> float3 {
      if (!place) return {p[0], p[1], p[2]};
      const mat4& w = to_world;
      return {w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12], w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13],
              w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14]};
    };
    const auto direction = [&](const float* p, bool normal) -> float3 {
      if (!place) return {p[0], p[1], p[2]};
      float3 r;
      for (int c = 0; c < 3; ++c)  // normals: inverse transpose; tangents: the matrix itself
        r[c] = normal ? inv[c * 4] * p[0] + inv[c * 4 + 1] * p[1] + inv[c * 4 + 2] * p[2]
                      : to_world[c] * p[0] + to_world[4 + c] * p[1] + to_world[8 + c] * p[2];
      const float len = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
      if (len > 0)
        for (float& x : r) x /= len;
      return r;
    };

    // Layout, in Urho3D's legacy element order.
    std::vector<urho3d::vertex_element> elements;
    using sem = urho3d::element_semantic;
    using et = urho3d::element_type;
    elements.push_back({et::vector3, sem::position, 0, 0});
    if (!m.normals.empty()) elements.push_back({et::vector3, sem::normal, 0, 0});
    if (!m.colors.empty()) elements.push_back({et::ubyte4_norm, sem::color, 0, 0});
    if (!m.uv0.empty()) elements.push_back({et::vector2, sem::texcoord, 0, 0});
    if (!m.uv1.empty()) elements.push_back({et::vector2, sem::texcoord, 1, 0});
    const std::size_t extra = std::min(m.extra_uvs.size(), max_extra_uvs);
    for (std::size_t e = 0; e < extra; ++e)
      elements.push_back({et::vector2, sem::texcoord, static_cast<std::uint8_t>(2 + e), 0});
    extra_uv_sets += extra;
    dropped_uv_sets += m.extra_uvs.size() - extra;
    if (!m.tangents.empty()) elements.push_back({et::vector4, sem::tangent, 0, 0});
    if (skinned) {
      elements.push_back({et::vector4, sem::blend_weights, 0, 0});
      elements.push_back({et::ubyte4, sem::blend_indices, 0, 0});
    }
    const std::uint32_t stride = urho3d::layout(elements);

    // Indices: triangle lists with the winding reversed; lines and points as they are.
    const bool triangles = m.primitive == topology::triangle_list || m.primitive == topology::triangle_strip ||
                           m.primitive == topology::triangle_fan;
    unrolled += m.primitive == topology::triangle_strip || m.primitive == topology::triangle_fan ? 1 : 0;
    std::vector<std::vector<std::uint32_t>> levels;  // LOD0 and the mesh's LODs
    std::uint64_t index_total = 0;
    for (std::size_t l = 0; l <= m.lods.size(); ++l) {
      const std::vector<std::uint32_t>& source = l == 0 ? m.indices : m.lods[l - 1].indices;
      UNTOLD_TRY(visit(source.size() + (source.empty() ? v : 0), "indices"));
      UNTOLD_TRY(hold(product(source.empty() ? v : source.size(), 3 * sizeof(std::uint32_t)), "indices"));
      std::vector<std::uint32_t> list;
      if (triangles) {
        list = detail::triangle_list(m, source);
        for (std::size_t t = 0; t + 2 < list.size(); t += 3)
          if (!flip) std::swap(list[t + 1], list[t + 2]);
      } else if (source.empty()) {
        for (std::uint32_t i = 0; i < v; ++i) list.push_back(i);
      } else {
        list = source;
      }
      index_total += list.size();
      levels.push_back(std::move(list));
    }
    const std::uint32_t index_size = v > 0xFFFF ? 4 : 2;
    const std::uint64_t vertex_bytes = product(v, stride), index_bytes = product(index_total, index_size);
    UNTOLD_TRY(visit(v, "vertices"));
    UNTOLD_TRY(hold(sum(vertex_bytes, index_bytes), "geometry buffers"));
    UNTOLD_TRY(budget.charge_output(sum(vertex_bytes, index_bytes), "geometry buffers", errc::limit_exceeded));
    if (v > 0xFFFFFFFFu || index_total > 0xFFFFFFFFu)
      return make_error(errc::limit_exceeded).at_field("vertexCount").with_value(v).with_limit(0xFFFFFFFFu);

    std::vector<std::byte>& vb_bytes = storage.emplace_back(vertex_bytes);
    for (std::size_t i = 0; i < v; ++i) {
      std::byte* p = vb_bytes.data() + i * stride;
      const auto put = [&p](float f) {
        store_le_unchecked<float>(p, f);
        p += 4;
      };
      const float3 pos = point(&m.positions[3 * i]);
      put(pos[0]), put(pos[1]), put(-pos[2]);
      const float3 urho_pos{pos[0], pos[1], -pos[2]};
      for (int c = 0; c < 3; ++c) {
        lo[c] = any_vertex ? std::min(lo[c], urho_pos[c]) : urho_pos[c];
        hi[c] = any_vertex ? std::max(hi[c], urho_pos[c]) : urho_pos[c];
      }
      any_vertex = true;
      if (!m.normals.empty()) {
        const float3 n = direction(&m.normals[3 * i], true);
        put(n[0]), put(n[1]), put(-n[2]);
      }
      if (!m.colors.empty()) {
        for (int c = 0; c < 4; ++c) {
          const float x = m.colors[4 * i + c];
          const std::uint8_t byte = pack_unorm8(x);
          colour_rounding += static_cast<float>(byte) / 255.0f != x ? 1 : 0;
          *p++ = static_cast<std::byte>(byte);
        }
      }
      for (const std::vector<float>* uv : {&m.uv0, &m.uv1})
        if (!uv->empty()) put((*uv)[2 * i]), put((*uv)[2 * i + 1]);
      for (std::size_t e = 0; e < extra; ++e) put(m.extra_uvs[e][2 * i]), put(m.extra_uvs[e][2 * i + 1]);
      if (!m.tangents.empty()) {
        const float3 t = direction(&m.tangents[4 * i], false);
        put(t[0]), put(t[1]), put(-t[2]), put(m.tangents[4 * i + 3] < 0 ? -1.0f : 1.0f);
      }
      if (skinned) {
        for (int c = 0; c < 4; ++c) put(m.weights[i][c]);
        for (int c = 0; c < 4; ++c) *p++ = static_cast<std::byte>(m.joints[i][c]);
      }
    }
    std::vector<std::byte>& ib_bytes = storage.emplace_back(index_bytes);
    urho3d::geometry g;
    g.bone_mapping = palette;
    std::size_t at = 0;
    const auto primitive = [&] {
      switch (m.primitive) {
        case topology::line_list: return urho3d::primitive_type::line_list;
        case topology::line_strip: return urho3d::primitive_type::line_strip;
        case topology::point_list: return urho3d::primitive_type::point_list;
        default: return urho3d::primitive_type::triangle_list;
      }
    }();
    for (std::size_t l = 0; l < levels.size(); ++l) {
      urho3d::lod_level lod;
      lod.distance = l == 0 ? 0.0f : m.lods[l - 1].switch_distance;
      lod.primitive = primitive;
      lod.vertex_buffer = static_cast<std::uint32_t>(model.vertex_buffers.size());
      lod.index_buffer = static_cast<std::uint32_t>(model.index_buffers.size());
      lod.index_start = static_cast<std::uint32_t>(at);
      lod.index_count = static_cast<std::uint32_t>(levels[l].size());
      for (const std::uint32_t x : levels[l]) {
        if (index_size == 2) store_le_unchecked<std::uint16_t>(ib_bytes.data() + 2 * at, static_cast<std::uint16_t>(x));
        else store_le_unchecked<std::uint32_t>(ib_bytes.data() + 4 * at, x);
        ++at;
      }
      g.lods.push_back(lod);
    }
    urho3d::vertex_buffer vb;
    vb.vertex_count = static_cast<std::uint32_t>(v);
    vb.elements = std::move(elements);
    vb.vertex_size = stride;
    vb.data = vb_bytes;
    model.vertex_buffers.push_back(std::move(vb));
    model.index_buffers.push_back({static_cast<std::uint32_t>(index_total), index_size, ib_bytes});
    geometry_of_drawing[d] = static_cast<std::uint32_t>(model.geometries.size());
    model.geometries.push_back(std::move(g));
  }
  report.changed("coordinate system", "", "the scene is right-handed, Urho3D left-handed: Z mirrored (positions, "
                 "normals, tangents, translations, morph deltas), quaternions (x,y,z,w) -> (w,-x,-y,z), inverse bind "
                 "matrices S*M*S, triangle winding reversed");
  report.changed("node transforms", "", "baked into the vertices of the static meshes they draw (a .mdl has no nodes)",
                 baked);
  report.info("skinned mesh placement", "", "skinned meshes stay in bind space; their node transform is not applied",
              skinned_placed);
  report.dropped("skins of another skeleton", "", "a .mdl holds one skeleton: the mesh is written unskinned", lost_skins);
  report.info("uv sets beyond the second", "", "written as TEXCOORD 2..7; Urho3D's stock shaders read two", extra_uv_sets);
  report.dropped("uv sets beyond the eighth", "", "TEXCOORD 2..7 hold six more sets", dropped_uv_sets);
  report.changed("triangle strips and fans", "", "unrolled into triangle lists", unrolled);
  report.changed("vertex colours", "", "stored as UBYTE4_NORM: components rounded to 1/255", colour_rounding);
  report.info("skin palettes over 64 bones", "", "Urho3D's default shaders skin with 64 matrices per geometry; "
              "rbfx and custom builds with more", many_bones);
  report.dropped("empty meshes", "", "a mesh without vertices has no geometry", skipped);

  // ---- morphs: one per name, a buffer per geometry whose mesh has a target of that name --------
  std::vector<std::string> morph_names;  // kept alive: urho3d::morph views them
  {
    std::map<std::string, std::size_t> morph_of;
    for (const mesh& m : s.meshes)
      for (const morph_target& t : m.morphs)
        if (morph_of.emplace(t.name, morph_names.size()).second) morph_names.push_back(t.name);
    model.morphs.resize(morph_names.size());
    std::uint64_t weights = 0, disagreeing = 0;
    std::vector<std::uint8_t> weight_set(morph_names.size(), 0);
    for (std::size_t k = 0; k < morph_names.size(); ++k) {
      morph_names[k].erase(std::remove(morph_names[k].begin(), morph_names[k].end(), '\0'), morph_names[k].end());
      model.morphs[k].name = morph_names[k];
    }
    for (std::size_t d = 0; d < drawings.size(); ++d) {
      if (geometry_of_drawing[d] == no_ref) continue;
      const mesh& m = s.meshes[drawings[d].first];
      // A baked mesh's deltas turn with it (the node transform's linear part).
      const mat4 linear = placed[d] ? world[drawings[d].second] : identity_matrix;
      const auto delta = [&linear](const float* p) -> float3 {
        return {linear[0] * p[0] + linear[4] * p[1] + linear[8] * p[2],
                linear[1] * p[0] + linear[5] * p[1] + linear[9] * p[2],
                linear[2] * p[0] + linear[6] * p[1] + linear[10] * p[2]};
      };
      const std::uint32_t buffer = model.geometries[geometry_of_drawing[d]].lods[0].vertex_buffer;
      urho3d::vertex_buffer& vb = model.vertex_buffers[buffer];
      std::uint32_t first = no_ref, last = 0;
      for (const morph_target& t : m.morphs) {
        const std::size_t k = morph_of.at(t.name);
        urho3d::morph& mo = model.morphs[k];
        if (!weight_set[k]) {
          mo.weight = t.default_weight;
          weight_set[k] = 1;
        } else if (mo.weight != t.default_weight) {
          ++disagreeing;
        }
        weights += t.default_weight != 0 ? 1 : 0;
        urho3d::morph_buffer mb;
        mb.buffer = buffer;
        mb.mask = (t.position_deltas.empty() ? 0 : urho3d::morph_position) |
                  (t.normal_deltas.empty() ? 0 : urho3d::morph_normal) |
                  (t.tangent_deltas.empty() ? 0 : urho3d::morph_tangent);
        if (mb.mask == 0) mb.mask = urho3d::morph_position;  // a target that moves nothing: zero positions
        const std::size_t v = m.vertex_count();
        UNTOLD_TRY(visit(v, "morph vertices"));
        const auto moved = [&](std::size_t i) {
          for (const std::vector<float>* d3 : {&t.position_deltas, &t.normal_deltas, &t.tangent_deltas})
            if (!d3->empty() && ((*d3)[3 * i] != 0 || (*d3)[3 * i + 1] != 0 || (*d3)[3 * i + 2] != 0)) return true;
          return false;
        };
        std::vector<std::uint32_t> listed;
        for (std::size_t i = 0; i < v; ++i)
          if (moved(i)) listed.push_back(static_cast<std::uint32_t>(i));
        if (listed.empty()) listed.push_back(0);  // keep the target on this geometry
        const std::uint64_t bytes = product(listed.size(), mb.stride());
        UNTOLD_TRY(hold(bytes, "morph vertices"));
        UNTOLD_TRY(budget.charge_output(bytes, "morph vertices", errc::limit_exceeded));
        std::vector<std::byte>& data = storage.emplace_back(bytes);
        std::byte* p = data.data();
        for (const std::uint32_t i : listed) {
          store_le_unchecked<std::uint32_t>(p, i);
          p += 4;
          for (const std::vector<float>* d3 : {&t.position_deltas, &t.normal_deltas, &t.tangent_deltas}) {
            if (d3->empty()) {
              if (d3 == &t.position_deltas && (mb.mask & urho3d::morph_position) != 0) p += 12;  // zero-filled
              continue;
            }
            const float3 moved_by = delta(&(*d3)[3 * i]);
            store_le_unchecked<float>(p, moved_by[0]);
            store_le_unchecked<float>(p + 4, moved_by[1]);
            store_le_unchecked<float>(p + 8, -moved_by[2]);
            p += 12;
          }
          first = std::min(first, i);
          last = std::max(last, i);
        }
        mb.vertex_count = static_cast<std::uint32_t>(listed.size());
        mb.data = data;
        mo.buffers.push_back(mb);
      }
      if (first != no_ref) {
        vb.morph_range_start = first;
        vb.morph_range_count = last - first + 1;
      }
    }
    if (weights != 0) {
      model.kind = urho3d::model_kind::umd3;
      model.version = urho3d::max_model_version;
      report.info("morph default weights", "", "written as rbfx's UMD3 version 2 (UMD2 has no morph weights)", weights);
    }
    report.dropped("morph default weights", "", "one weight per morph name: meshes disagree, the first is kept",
                   disagreeing);
  }

  // ---- bounds and centres (derived) ------------------------------------------------------
  model.bounds_min = lo;
  model.bounds_max = hi;
  for (const urho3d::geometry& g : model.geometries) {
    const urho3d::vertex_buffer& vb = model.vertex_buffers[g.lods[0].vertex_buffer];
    float3 a{0, 0, 0}, b{0, 0, 0};
    for (std::uint32_t i = 0; i < vb.vertex_count; ++i)
      for (int c = 0; c < 3; ++c) {
        const float x = load_le_unchecked<float>(vb.vertex(i) + 4 * c);
        a[c] = i == 0 ? x : std::min(a[c], x);
        b[c] = i == 0 ? x : std::max(b[c], x);
      }
    model.geometry_centers.push_back({(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2});
  }

  urho3d_output out;
  auto mdl = urho3d::write_model(model);
  if (!mdl) return mdl.error();
  UNTOLD_TRY(budget.charge_output(mdl->size(), "model", errc::limit_exceeded));
  {
    auto check = urho3d::open_model(*mdl, {.limits = options.limits, .deep_checks = true});
    if (!check) return check.error();
  }
  out.model = std::move(*mdl);

  // ---- material list --------------------------------------------------------------------------
  for (std::size_t d = 0; d < drawings.size(); ++d) {
    if (geometry_of_drawing[d] == no_ref) continue;
    const std::uint32_t mat = s.meshes[drawings[d].first].material;
    if (mat != no_ref) {
      out.material_list.append("Materials/")
          .append(detail::file_name(s.materials[mat].name, "material" + std::to_string(mat)))
          .append(".xml");
    }
    out.material_list.push_back('\n');
  }
  UNTOLD_TRY(budget.charge_output(out.material_list.size(), "material list", errc::limit_exceeded));
  report.dropped("material parameters", "",
                 "the material list names Materials/NAME.xml per geometry; factors, textures, samplers and texture "
                 "transforms are not written (no material XML)", s.materials.size());
  report.dropped("textures", "", "referenced from material XML, which is not written", s.textures.size());
  report.dropped("lights", "", "scene nodes in Urho3D, not model data", s.lights.size());
  report.dropped("cameras", "", "scene nodes in Urho3D, not model data", s.cameras.size());
  report.dropped("node hierarchy", "", "a .mdl has geometries, not nodes (their transforms are baked)", s.nodes.size());

  // ---- animations: one UANI per clip ------------------------------------------------------------
  std::set<std::string> taken;
  for (std::size_t ai = 0; ai < s.animations.size(); ++ai) {
    const animation& a = s.animations[ai];
    const std::string where = std::string("clip '").append(a.name).append("'");
    std::uint64_t weight_channels = 0, node_channels = 0, other_skeleton = 0, resampled = 0, step = 0, cubic = 0;
    // Channels per bone, in bone order (deterministic).
    std::vector<std::array<const animation_channel*, 3>> per_bone(model.bones.size(), {nullptr, nullptr, nullptr});
    std::uint64_t duplicates = 0;
    for (const animation_channel& c : a.channels) {
      if (c.path == anim_path::weights) { ++weight_channels; continue; }
      if (c.skeleton == no_ref) { ++node_channels; continue; }
      if (c.skeleton != skeleton_index) { ++other_skeleton; continue; }
      const std::size_t slot = c.path == anim_path::translation ? 0 : c.path == anim_path::rotation ? 1 : 2;
      if (c.times.empty()) continue;
      if (per_bone[c.joint][slot] != nullptr) { ++duplicates; continue; }
      per_bone[c.joint][slot] = &c;
      step += c.interp == interpolation::step ? 1 : 0;
      cubic += c.interp == interpolation::cubic_spline ? 1 : 0;
    }
    urho3d::animation ani;
    ani.kind = urho3d::animation_kind::uani;
    std::string clip_name = a.name;
    clip_name.erase(std::remove(clip_name.begin(), clip_name.end(), '\0'), clip_name.end());
    ani.name = clip_name;
    ani.length = a.duration;
    std::vector<std::vector<std::byte>> keys;  // the tracks view them
    keys.reserve(per_bone.size());
    for (std::size_t b = 0; b < per_bone.size(); ++b) {
      const auto& channels = per_bone[b];
      if (channels[0] == nullptr && channels[1] == nullptr && channels[2] == nullptr) continue;
      std::vector<float> times;
      for (const animation_channel* c : channels)
        if (c != nullptr) times.insert(times.end(), c->times.begin(), c->times.end());
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
      for (const animation_channel* c : channels)
        if (c != nullptr && c->times.size() != times.size()) ++resampled;
      urho3d::track t;
      t.name = model.bones[b].name;
      t.mask = static_cast<std::uint8_t>((channels[0] != nullptr ? urho3d::channel_position : 0) |
                                         (channels[1] != nullptr ? urho3d::channel_rotation : 0) |
                                         (channels[2] != nullptr ? urho3d::channel_scale : 0));
      t.keyframe_count = static_cast<std::uint32_t>(times.size());
      const std::uint64_t bytes = product(times.size(), t.stride());
      UNTOLD_TRY(visit(times.size(), "keyframes"));
      UNTOLD_TRY(hold(sum(bytes, product(times.size(), sizeof(float))), "keyframes"));
      UNTOLD_TRY(budget.charge_output(bytes, "keyframes", errc::limit_exceeded));
      std::vector<std::byte>& data = keys.emplace_back(bytes);
      std::byte* p = data.data();
      const auto put = [&p](float f) {
        store_le_unchecked<float>(p, f);
        p += 4;
      };
      for (const float time : times) {
        put(time);
        float v[4];
        if (channels[0] != nullptr) {
          detail::sample(*channels[0], time, v);
          put(v[0]), put(v[1]), put(-v[2]);
        }
        if (channels[1] != nullptr) {
          detail::sample(*channels[1], time, v);
          const auto q = detail::to_urho_rotation(v);
          for (const float x : q) put(x);
        }
        if (channels[2] != nullptr) {
          detail::sample(*channels[2], time, v);
          put(v[0]), put(v[1]), put(v[2]);
        }
      }
      t.keys = data;
      ani.tracks.push_back(t);
    }
    report.dropped("morph weight channels", where, ".ani tracks drive bones (rbfx variant tracks are not written)",
                   weight_channels);
    report.dropped("node channels", where, ".ani tracks drive the model's bones", node_channels);
    report.dropped("channels of another skeleton", where, "a .mdl holds one skeleton", other_skeleton);
    report.dropped("duplicate channels", where, "a second channel of one path on one joint", duplicates);
    report.changed("resampled channels", where,
                   "a track has one key list: channels of a joint are sampled at the union of their times", resampled);
    report.changed("step channels", where, "Urho3D interpolates keys linearly", step);
    report.changed("cubic-spline channels", where, "key values kept, tangents dropped (linear)", cubic);
    auto bytes = urho3d::write_animation(ani);
    if (!bytes) return bytes.error();
    auto check = urho3d::open_animation(*bytes, {.limits = options.limits, .deep_checks = true});
    if (!check) return check.error();
    const std::string base = detail::file_name(a.name, "animation" + std::to_string(ai));
    std::string file = base;
    for (int n = 1; taken.count(file) != 0; ++n) file = base + "_" + std::to_string(n);
    taken.insert(file);
    UNTOLD_TRY(budget.charge_output(bytes->size(), "animations", errc::limit_exceeded));
    out.animations.emplace_back(file + ".ani", std::move(*bytes));
  }
  return out;
}

}  // namespace untold::convert
