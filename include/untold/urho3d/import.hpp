// untold/urho3d/import.hpp - a Urho3D model (+ animations) as the neutral
// scene of convert/model.hpp, for `untold cook`.
//
// Reads: a model that open_model accepted, and animations that
// open_animation accepted. Produces one mesh per geometry (its LOD0; further
// LODs over the same vertex buffer and primitive become mesh::lods, others
// separate meshes), one placeholder material per geometry slot ("slot N":
// .mdl files carry no materials), the skeleton (parents reordered so a parent
// precedes its children), one skin per distinct bone mapping, morph targets
// and animation channels. Everything that has no place in the scene, or was
// changed on the way, is listed in scene.report with a count and a reason.
//
// Conventions (docs/urho3d.md): Urho3D is left-handed, Y up, clockwise
// front faces; the scene is right-handed, Y up, counter-clockwise. The
// importer mirrors Z: positions, normals, tangent xyz, morph deltas and
// translations have z negated; quaternions (w, x, y, z) become
// (x, y, z, w) = (-x, -y, z, w); 3x4 offset matrices M become S M S with
// S = diag(1, 1, -1); triangle winding is reversed. Tangent w is kept:
// Urho3D's shaders build the bitangent as cross(tangent, normal) * w, glTF
// as cross(normal, tangent) * w, and the mirror flips the cross product
// once more, so the two sign changes cancel.
//
// Rejects: whatever open_model / open_animation reject (import_files runs
// them with deep checks); U3D-BLEND-INDEX for a weighted blend index outside
// the geometry's palette; U3D-FINITE for a bone whose finite values make
// its rest or bind matrix overflow; R-LIMITS past the input's budget (untold/budget.hpp:
// everything the scene holds is charged before it is built). Names that are
// not valid UTF-8 get '?' for each invalid byte (reported). Safe on
// untrusted input when given bytes (import_files); import_model's
// precondition is a model and animations the readers accepted. No
// recursion; linear in the input size (a morph that lists a vertex many
// times costs its entries, not entries x the meshes drawing that vertex).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../convert/model.hpp"
#include "../matrix.hpp"
#include "animation.hpp"
#include "model.hpp"

namespace untold::urho3d {

namespace detail {

/// Up to four components of element `e` of one vertex, as floats.
inline std::size_t read_element(const std::byte* vertex, const vertex_element& e, float out[4]) noexcept {
  const std::byte* p = vertex + e.offset;
  switch (e.type) {
    case element_type::int32:
      out[0] = static_cast<float>(load_le_unchecked<std::int32_t>(p));
      return 1;
    case element_type::float32:
    case element_type::vector2:
    case element_type::vector3:
    case element_type::vector4: {
      const std::size_t n = element_size(e.type) / 4;
      for (std::size_t k = 0; k < n; ++k) out[k] = load_le_unchecked<float>(p + 4 * k);
      return n;
    }
    case element_type::ubyte4:
      for (std::size_t k = 0; k < 4; ++k) out[k] = static_cast<float>(std::to_integer<std::uint8_t>(p[k]));
      return 4;
    case element_type::ubyte4_norm:
      for (std::size_t k = 0; k < 4; ++k) out[k] = static_cast<float>(std::to_integer<std::uint8_t>(p[k])) / 255.0f;
      return 4;
  }
  return 0;
}

/// Urho3D (w, x, y, z), left-handed -> scene (x, y, z, w), right-handed (Z mirrored).
[[nodiscard]] constexpr std::array<float, 4> mirror_rotation(const quat_wxyz& q) noexcept {
  return {-q[1], -q[2], q[3], q[0]};
}
[[nodiscard]] constexpr std::array<float, 3> mirror_point(const float3& v) noexcept { return {v[0], v[1], -v[2]}; }

/// A 3x4 row-major Urho3D matrix M -> column-major 4x4 of S M S, S = diag(1, 1, -1).
[[nodiscard]] constexpr mat4 mirror_matrix(const std::array<float, 12>& m) noexcept {
  constexpr float s[4] = {1, 1, -1, 1};
  mat4 out{};
  for (std::size_t row = 0; row < 3; ++row)
    for (std::size_t col = 0; col < 4; ++col) out[col * 4 + row] = s[row] * s[col] * m[row * 4 + col];
  out[15] = 1;
  return out;
}

/// The triangle list of a draw, winding reversed for the mirrored scene; strips
/// and fans become lists. `remap` turns buffer vertices into mesh vertices.
inline void triangles(const index_buffer& ib, const lod_level& l, const std::vector<std::uint32_t>& remap,
                      std::vector<std::uint32_t>& out, std::uint64_t& leftover) {
  const std::size_t first = l.index_start, n = l.index_count;
  auto idx = [&](std::size_t i) { return remap[ib.at(first + i)]; };
  switch (l.primitive) {
    case primitive_type::triangle_list:
      for (std::size_t t = 0; t + 2 < n; t += 3) out.insert(out.end(), {idx(t), idx(t + 2), idx(t + 1)});
      leftover += n % 3;
      return;
    case primitive_type::triangle_strip:
      for (std::size_t t = 0; t + 2 < n; ++t) {
        if (t % 2 == 0) out.insert(out.end(), {idx(t), idx(t + 2), idx(t + 1)});
        else out.insert(out.end(), {idx(t), idx(t + 1), idx(t + 2)});
      }
      return;
    case primitive_type::triangle_fan:
      for (std::size_t t = 1; t + 1 < n; ++t) out.insert(out.end(), {idx(0), idx(t + 1), idx(t)});
      return;
    default:  // lines and points: no winding
      for (std::size_t i = 0; i < n; ++i) out.push_back(idx(i));
      return;
  }
}

/// Which elements of a vertex buffer feed which scene stream; the rest are
/// counted per semantic in `dropped`. Computed once per buffer.
struct stream_selection {
  bool done = false;
  const vertex_element *position = nullptr, *normal = nullptr, *tangent = nullptr, *uv0 = nullptr, *uv1 = nullptr,
                       *color = nullptr, *weights = nullptr, *indices = nullptr;
  std::vector<const vertex_element*> extra_uvs;
  std::uint64_t dropped[9] = {};
};

inline stream_selection select_streams(const vertex_buffer& vb, bool skinned) {
  stream_selection sel;
  sel.done = true;
  std::vector<bool> consumed(vb.elements.size(), false);
  auto take = [&](element_semantic sem, std::uint8_t index, auto accept) -> const vertex_element* {
    for (std::size_t k = 0; k < vb.elements.size(); ++k)
      if (!consumed[k] && vb.elements[k].semantic == sem && vb.elements[k].index == index && accept(vb.elements[k].type)) {
        consumed[k] = true;
        return &vb.elements[k];
      }
    return nullptr;
  };
  auto floaty3 = [](element_type t) { return t == element_type::vector3 || t == element_type::vector4; };
  auto floaty2 = [](element_type t) { return t == element_type::vector2; };
  sel.position = take(element_semantic::position, 0, floaty3);
  sel.normal = take(element_semantic::normal, 0, floaty3);
  sel.tangent = take(element_semantic::tangent, 0, floaty3);
  sel.uv0 = take(element_semantic::texcoord, 0, floaty2);
  sel.uv1 = take(element_semantic::texcoord, 1, floaty2);
  for (std::uint8_t t = 2; t < 8; ++t)
    if (const vertex_element* e = take(element_semantic::texcoord, t, floaty2)) sel.extra_uvs.push_back(e);
  sel.color = take(element_semantic::color, 0, [](element_type t) {
    return t == element_type::ubyte4_norm || t == element_type::vector4 || t == element_type::vector3;
  });
  if (skinned) {
    sel.weights = take(element_semantic::blend_weights, 0, [](element_type t) { return t == element_type::vector4; });
    sel.indices = take(element_semantic::blend_indices, 0, [](element_type t) { return t == element_type::ubyte4; });
    if (sel.weights == nullptr || sel.indices == nullptr) {
      for (std::size_t k = 0; k < vb.elements.size(); ++k)  // half a skin is no skin: report both as dropped
        if (&vb.elements[k] == sel.weights || &vb.elements[k] == sel.indices) consumed[k] = false;
      sel.weights = sel.indices = nullptr;
    }
  }
  for (std::size_t k = 0; k < vb.elements.size(); ++k)
    if (!consumed[k]) ++sel.dropped[static_cast<std::size_t>(vb.elements[k].semantic)];
  return sel;
}

[[nodiscard]] constexpr convert::topology scene_topology(primitive_type p) noexcept {
  switch (p) {
    case primitive_type::line_list: return convert::topology::line_list;
    case primitive_type::point_list: return convert::topology::point_list;
    case primitive_type::line_strip: return convert::topology::line_strip;
    default: return convert::topology::triangle_list;  // strips and fans are converted
  }
}

}  // namespace detail

/// About the bytes `m` and `animations` were read from (their data views,
/// records and names): the input size a budget of import_model's own is
/// made for when the caller passes none.
[[nodiscard]] inline std::uint64_t stored_bytes(const model& m, std::span<const animation> animations) noexcept {
  std::uint64_t n = 0;
  for (const vertex_buffer& vb : m.vertex_buffers) n += 16 + vb.data.size() + 4 * vb.elements.size();
  for (const index_buffer& ib : m.index_buffers) n += 8 + ib.data.size();
  for (const geometry& g : m.geometries) n += 8 + 4 * g.bone_mapping.size() + 24 * g.lods.size();
  for (const morph& mo : m.morphs) {
    n += 5 + mo.name.size();
    for (const morph_buffer& mb : mo.buffers) n += 12 + mb.data.size();
  }
  for (const bone& b : m.bones) n += 94 + b.name.size();
  for (const animation& a : animations)
    for (const track& t : a.tracks) n += 6 + t.name.size() + t.keys.size();
  return n;
}

struct import_options {
  untold::limits limits{};
  /// The input's budget (budget.hpp), shared by the readers, the importer
  /// and the writer; none: each stage makes its own from `limits`.
  untold::budget* budget = nullptr;
};

/// Fills a scene from `m` and `animations` (see the header comment).
/// Preconditions: `m` came from open_model and each animation from
/// open_animation (their views alive). `name` names the root node.
/// Everything the scene holds is charged to options.budget before it is
/// allocated, and the work of every loop to its work meter.
/// Errors: R-LIMITS when the LOD draw ranges exceed draw_budget(m), the
/// dense morph deltas would exceed limits.max_total_bytes, or the budget
/// runs out; U3D-BLEND-INDEX.
[[nodiscard]] inline result<convert::scene> import_model(const model& m, std::span<const animation> animations = {},
                                                         std::string_view name = "model",
                                                         const import_options& options = {}) {
  using convert::no_ref;
  const untold::limits& limits = options.limits;
  untold::budget own(limits, stored_bytes(m, animations));
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::limit_exceeded);
  };
  const auto visit = [&budget](std::uint64_t items, const char* what) {
    return budget.charge_work(items, what, errc::limit_exceeded);
  };
  UNTOLD_TRY(check_draw_budget(m));
  convert::scene s;
  std::uint64_t renamed = 0;  // names from the file that are not valid UTF-8
  const auto scene_name = [&renamed](std::string_view raw) {
    std::string clean = convert::sanitized_utf8(raw);
    renamed += clean != raw ? 1 : 0;
    return clean;
  };
  s.name = scene_name(name);
  convert::conversion_report& rep = s.report;
  rep.changed("coordinate system", "", "Urho3D is left-handed Y-up: Z mirrored (positions, normals, tangents, "
                                       "translations, morph deltas), quaternions (w,x,y,z) -> (-x,-y,z,w), "
                                       "offset matrices S*M*S, triangle winding reversed");

  // ---- skeleton: parents first, iteratively (open_model proved the chains end at roots)
  const std::size_t bone_count = m.bones.size();
  std::uint64_t name_bytes = 0;
  for (const bone& b : m.bones) name_bytes += b.name.size();
  UNTOLD_TRY(hold(bone_count * (sizeof(convert::joint) + 5 * sizeof(std::uint32_t)) + name_bytes, "joints"));
  std::vector<std::uint32_t> joint_of(bone_count, no_ref);
  if (bone_count != 0) {
    std::vector<std::uint32_t> child_start(bone_count + 1, 0), children(bone_count);
    for (std::size_t b = 0; b < bone_count; ++b)
      if (m.bones[b].parent != b) ++child_start[m.bones[b].parent + 1];
    for (std::size_t b = 0; b < bone_count; ++b) child_start[b + 1] += child_start[b];
    std::vector<std::uint32_t> fill(child_start.begin(), child_start.end() - 1);
    for (std::size_t b = 0; b < bone_count; ++b)
      if (m.bones[b].parent != b) children[fill[m.bones[b].parent]++] = static_cast<std::uint32_t>(b);
    std::vector<std::uint32_t> order;
    order.reserve(bone_count);
    for (std::size_t b = 0; b < bone_count; ++b)
      if (m.bones[b].parent == b) order.push_back(static_cast<std::uint32_t>(b));
    for (std::size_t head = 0; head < order.size(); ++head)
      for (std::uint32_t k = child_start[order[head]]; k < child_start[order[head] + 1]; ++k) order.push_back(children[k]);
    if (order.size() != bone_count) return make_error(errc::u3d_bone_parent);  // not from open_model
    convert::skeleton sk;
    sk.name = s.name;
    sk.node = 0;
    for (std::uint32_t b : order) {
      joint_of[b] = static_cast<std::uint32_t>(sk.joints.size());
      const bone& src = m.bones[b];
      convert::joint j;
      j.name = scene_name(src.name);
      j.parent = src.parent == b ? no_ref : joint_of[src.parent];
      j.rest.translation = detail::mirror_point(src.position);
      j.rest.rotation = detail::mirror_rotation(src.rotation);
      j.rest.scale = src.scale;
      j.inverse_bind = detail::mirror_matrix(src.offset_matrix);
      // Finite values can still make the matrices a .untold joint stores
      // overflow (a huge scale, a near-singular offset matrix): U3D-FINITE
      // names the bone instead of the writer refusing a transform.
      const mat4 rest = j.rest.matrix(), bind = inverse_affine(j.inverse_bind);
      for (const mat4* derived : {&rest, &bind})
        if (const auto bad = detail::first_non_finite(*derived))
          return detail::not_finite(derived == &rest ? "bone.restTransform" : "bone.bindTransform", b, bad)
              .with_subject(src.name);
      sk.joints.push_back(std::move(j));
    }
    s.skeletons.push_back(std::move(sk));
    std::uint64_t shapes = 0;
    for (const bone& b : m.bones) shapes += (b.collision_mask != 0 ? 1 : 0);
    rep.dropped("bone collision shapes", "skeleton", "the scene has no per-joint bounding sphere/box", shapes);
  }

  // ---- materials: one placeholder per geometry slot
  UNTOLD_TRY(hold(m.geometries.size() * (sizeof(convert::material) + sizeof(convert::mesh) + 32), "geometries"));
  for (std::size_t g = 0; g < m.geometries.size(); ++g) {
    convert::material mat;
    mat.name = "slot " + std::to_string(g);
    s.materials.push_back(std::move(mat));
  }
  rep.info("placeholder materials", "", ".mdl files have no materials, only geometry slots: one 'slot N' per geometry",
           m.geometries.size());

  // ---- skins: one per distinct bone mapping (an empty mapping indexes the whole skeleton)
  std::vector<std::uint32_t> skin_of(m.geometries.size(), no_ref);
  if (bone_count != 0) {
    std::map<std::vector<std::uint32_t>, std::uint32_t> known;  // O(mapping length x log) per geometry
    std::uint32_t whole_skeleton = no_ref;
    for (std::size_t g = 0; g < m.geometries.size(); ++g) {
      const std::vector<std::uint32_t>& mapping = m.geometries[g].bone_mapping;
      if (mapping.empty() && whole_skeleton != no_ref) {
        skin_of[g] = whole_skeleton;
        continue;
      }
      std::vector<std::uint32_t> joints;
      UNTOLD_TRY(hold(2 * sizeof(std::uint32_t) * (mapping.empty() ? bone_count : mapping.size()), "skins"));
      if (mapping.empty()) {
        for (std::size_t b = 0; b < bone_count; ++b) joints.push_back(joint_of[b]);
      } else {
        for (std::uint32_t b : mapping) joints.push_back(joint_of[b]);
      }
      const auto [it, added] = known.emplace(joints, static_cast<std::uint32_t>(s.skins.size()));
      if (added) s.skins.push_back({0, std::move(joints)});
      skin_of[g] = it->second;
      if (mapping.empty()) whole_skeleton = it->second;
    }
  }

  // ---- meshes
  convert::node root;
  root.name = s.name;
  std::vector<std::vector<std::uint32_t>> remaps(m.vertex_buffers.size());
  std::vector<detail::stream_selection> selections(m.vertex_buffers.size());  // per buffer, computed once
  std::uint64_t leftover_indices = 0, converted_strips = 0, non_triangle = 0, separate_lods = 0;
  std::uint64_t dropped_elements[9] = {};
  std::vector<std::pair<std::size_t, std::uint32_t>> mesh_sources;  // (scene mesh, vertex buffer) for morphs
  std::vector<std::vector<std::uint32_t>> mesh_vertex_lists;         // buffer vertex of each mesh vertex
  for (std::size_t g = 0; g < m.geometries.size(); ++g) {
    const geometry& geo = m.geometries[g];
    // Group the LODs into meshes: LOD0 plus the LODs sharing its buffer and primitive.
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t l = 0; l < geo.lods.size(); ++l) {
      const lod_level& lod = geo.lods[l];
      if (l != 0 && lod.vertex_buffer == geo.lods[0].vertex_buffer && lod.primitive == geo.lods[0].primitive) {
        groups[0].push_back(l);
      } else {
        groups.push_back({l});
        if (l != 0) ++separate_lods;
      }
    }
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const std::vector<std::size_t>& lods = groups[gi];
      const lod_level& first = geo.lods[lods[0]];
      const vertex_buffer& vb = m.vertex_buffers[first.vertex_buffer];
      const index_buffer& ib = m.index_buffers[first.index_buffer];
      std::vector<std::uint32_t>& remap = remaps[first.vertex_buffer];
      if (remap.empty()) {
        UNTOLD_TRY(hold(std::uint64_t{vb.vertex_count} * sizeof(std::uint32_t), "vertex remap"));
        remap.assign(vb.vertex_count, no_ref);
      }
      // Compact: the vertices these LODs draw, in first-use order. Each
      // index becomes at most 3 (strips and fans) plus one vertex reference.
      std::vector<std::uint32_t> used;
      for (std::size_t li : lods) {
        const lod_level& l = geo.lods[li];
        UNTOLD_TRY(visit(l.index_count, "indices"));
        UNTOLD_TRY(hold(std::uint64_t{l.index_count} * 4 * sizeof(std::uint32_t), "indices"));
        const index_buffer& lib = m.index_buffers[l.index_buffer];
        for (std::uint32_t i = 0; i < l.index_count; ++i) {
          const std::uint32_t v = lib.at(std::size_t{l.index_start} + i);
          if (v >= vb.vertex_count) return make_error(errc::u3d_index_value, {.record_index = static_cast<std::uint32_t>(g), .field = "index", .value = v, .has_value = true});
          if (remap[v] == no_ref) {
            remap[v] = static_cast<std::uint32_t>(used.size());
            used.push_back(v);
          }
        }
      }
      convert::mesh out;
      out.name = "geometry " + std::to_string(g) + (gi == 0 ? "" : " LOD " + std::to_string(lods[0]));
      out.material = static_cast<std::uint32_t>(g);
      out.primitive = detail::scene_topology(first.primitive);
      if (first.primitive == primitive_type::triangle_strip || first.primitive == primitive_type::triangle_fan)
        ++converted_strips;
      if (out.primitive != convert::topology::triangle_list) ++non_triangle;

      if (!selections[first.vertex_buffer].done) {
        selections[first.vertex_buffer] = detail::select_streams(vb, bone_count != 0);
        for (std::size_t k = 0; k < 9; ++k) dropped_elements[k] += selections[first.vertex_buffer].dropped[k];
      }
      const detail::stream_selection& sel = selections[first.vertex_buffer];
      const vertex_element* pos_el = sel.position;
      const vertex_element* nrm_el = sel.normal;
      const vertex_element* tan_el = sel.tangent;
      const vertex_element* uv0_el = sel.uv0;
      const vertex_element* uv1_el = sel.uv1;
      const vertex_element* col_el = sel.color;
      const vertex_element* weights_el = sel.weights;
      const vertex_element* indices_el = sel.indices;
      const std::vector<const vertex_element*>& extra_uv = sel.extra_uvs;
      if (pos_el == nullptr) {
        rep.dropped("mesh without positions", out.name, "its vertex buffer has no float position element");
        for (std::uint32_t v : used) remap[v] = no_ref;
        continue;
      }
      const std::size_t n = used.size();
      const std::uint64_t floats_per_vertex = 3 + (nrm_el != nullptr ? 3 : 0) + (tan_el != nullptr ? 4 : 0) +
                                              (uv0_el != nullptr ? 2 : 0) + (uv1_el != nullptr ? 2 : 0) +
                                              (col_el != nullptr ? 4 : 0) + 2 * extra_uv.size() +
                                              (indices_el != nullptr ? 6 : 0);  // weights + joints (4 x u16)
      UNTOLD_TRY(hold(n * floats_per_vertex * sizeof(float), "mesh vertices"));
      out.positions.reserve(3 * n);
      float c[4];
      for (std::uint32_t v : used) {
        const std::byte* vertex = vb.vertex(v);
        detail::read_element(vertex, *pos_el, c);
        out.positions.insert(out.positions.end(), {c[0], c[1], -c[2]});
        if (nrm_el != nullptr) {
          detail::read_element(vertex, *nrm_el, c);
          out.normals.insert(out.normals.end(), {c[0], c[1], -c[2]});
        }
        if (tan_el != nullptr) {
          const std::size_t k = detail::read_element(vertex, *tan_el, c);
          out.tangents.insert(out.tangents.end(), {c[0], c[1], -c[2], k == 4 ? (c[3] < 0 ? -1.0f : 1.0f) : 1.0f});
        }
        if (uv0_el != nullptr) {
          detail::read_element(vertex, *uv0_el, c);
          out.uv0.insert(out.uv0.end(), {c[0], c[1]});
        }
        if (uv1_el != nullptr) {
          detail::read_element(vertex, *uv1_el, c);
          out.uv1.insert(out.uv1.end(), {c[0], c[1]});
        }
        if (col_el != nullptr) {
          const std::size_t k = detail::read_element(vertex, *col_el, c);
          out.colors.insert(out.colors.end(), {c[0], c[1], c[2], k == 4 ? c[3] : 1.0f});
        }
        if (indices_el != nullptr) {
          detail::read_element(vertex, *weights_el, c);
          std::array<float, 4> w{c[0], c[1], c[2], c[3]};
          std::array<std::uint16_t, 4> j{};
          const std::size_t palette = s.skins[skin_of[g]].joints.size();
          for (std::size_t k = 0; k < 4; ++k) {
            const auto bi = std::to_integer<std::uint8_t>(vertex[indices_el->offset + k]);
            if (bi >= palette) {
              if (w[k] != 0) return make_error(errc::u3d_blend_index, {.record_index = static_cast<std::uint32_t>(g), .field = "blendIndex", .value = bi, .has_value = true});
              j[k] = 0;  // an unweighted slot: any joint will do
            } else {
              j[k] = bi;
            }
          }
          out.joints.push_back(j);
          out.weights.push_back(w);
        }
      }
      out.extra_uvs.resize(extra_uv.size());
      for (std::size_t e = 0; e < extra_uv.size(); ++e)
        for (std::uint32_t v : used) {
          detail::read_element(vb.vertex(v), *extra_uv[e], c);
          out.extra_uvs[e].insert(out.extra_uvs[e].end(), {c[0], c[1]});
        }
      if (indices_el != nullptr) out.skin = skin_of[g];
      detail::triangles(ib, first, remap, out.indices, leftover_indices);
      for (std::size_t li = 1; li < lods.size(); ++li) {
        const lod_level& l = geo.lods[lods[li]];
        convert::lod_level level;
        level.switch_distance = l.distance;
        detail::triangles(m.index_buffers[l.index_buffer], l, remap, level.indices, leftover_indices);
        out.lods.push_back(std::move(level));
      }
      for (std::uint32_t v : used) remap[v] = no_ref;  // reset only what this mesh touched
      if (gi == 0) root.meshes.push_back(static_cast<std::uint32_t>(s.meshes.size()));
      mesh_sources.emplace_back(s.meshes.size(), first.vertex_buffer);
      mesh_vertex_lists.push_back(std::move(used));
      s.meshes.push_back(std::move(out));
    }
  }
  s.nodes.push_back(std::move(root));
  rep.changed("triangle strips and fans", "", "converted to triangle lists (winding reversed)", converted_strips);
  rep.info("non-triangle primitives", "", "line/point meshes kept with their topology; a triangle-only target drops them",
           non_triangle);
  rep.info("LOD levels with another vertex buffer or primitive", "",
           "written as separate meshes named '... LOD k', not attached to the root node", separate_lods);
  rep.dropped("indices past the last whole triangle", "", "a triangle list's index count is not a multiple of 3",
              leftover_indices);
  static constexpr const char* element_names[9] = {"position elements", "normal elements", "binormals",
                                                    "tangent elements", "texture coordinates (cube maps, instance matrices or non-2D)",
                                                    "colour sets beyond the first", "blend weights", "blend indices",
                                                    "object indices"};
  for (std::size_t k = 0; k < 9; ++k)
    rep.dropped(element_names[k], "", "no matching stream in the scene (vertex buffers x elements)", dropped_elements[k]);

  // ---- morphs: dense deltas per mesh built from the morphed buffer.
  // Urho3D adds every listed delta (AnimatedModel::ApplyMorph: vertex +=
  // delta x weight), so a vertex listed twice moves by the sum: each morph
  // buffer's entries are first summed per buffer vertex, then each distinct
  // vertex is written into every (mesh, mesh vertex) it became (a CSR list
  // per buffer vertex). Work: the entries plus, per distinct vertex, its
  // mesh vertices; memory: the targets, charged to the budget (and capped
  // by limits.max_total_bytes) before they are allocated.
  std::uint64_t morph_targets = 0, morph_bytes = 0;
  if (!m.morphs.empty()) {
    std::vector<std::vector<std::uint32_t>> first_of(m.vertex_buffers.size());  // CSR offsets per buffer vertex
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> owners(m.vertex_buffers.size());
    std::vector<std::vector<std::uint32_t>> slot_of(m.vertex_buffers.size());  // buffer vertex -> its sum, or no_ref
    for (std::size_t b = 0; b < m.vertex_buffers.size(); ++b) {
      bool any = false;
      std::uint64_t listed = 0;
      for (std::size_t k = 0; k < mesh_sources.size(); ++k)
        if (mesh_sources[k].second == b) {
          any = true;
          listed += mesh_vertex_lists[k].size();
        }
      if (!any) continue;
      UNTOLD_TRY(visit(mesh_sources.size() + listed, "morph vertex owners"));
      UNTOLD_TRY(hold((2 * (std::uint64_t{m.vertex_buffers[b].vertex_count} + 1)) * sizeof(std::uint32_t) +
                          listed * 2 * sizeof(std::uint32_t),
                      "morph vertex owners"));
      std::vector<std::uint32_t> count(std::size_t{m.vertex_buffers[b].vertex_count} + 1, 0);
      for (std::size_t k = 0; k < mesh_sources.size(); ++k)
        if (mesh_sources[k].second == b)
          for (std::uint32_t v : mesh_vertex_lists[k]) ++count[v + 1];
      for (std::size_t v = 1; v < count.size(); ++v) count[v] += count[v - 1];
      owners[b].resize(count.back());
      std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
      for (std::size_t k = 0; k < mesh_sources.size(); ++k)
        if (mesh_sources[k].second == b)
          for (std::size_t local = 0; local < mesh_vertex_lists[k].size(); ++local)
            owners[b][fill[mesh_vertex_lists[k][local]]++] = {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(local)};
      first_of[b] = std::move(count);
      slot_of[b].assign(m.vertex_buffers[b].vertex_count, no_ref);
    }
    std::vector<std::uint32_t> target_of(mesh_sources.size(), no_ref);
    std::vector<std::uint32_t> distinct;  // buffer vertices of one morph buffer, in first-listed order
    std::vector<float3> sums;             // per distinct vertex: position, normal, tangent deltas
    constexpr std::uint32_t bits[3] = {morph_position, morph_normal, morph_tangent};
    for (const morph& mo : m.morphs) {
      const std::string morph_name = scene_name(mo.name);
      for (const morph_buffer& mb : mo.buffers) {
        if (first_of[mb.buffer].empty()) continue;
        std::vector<std::uint32_t>& slot = slot_of[mb.buffer];
        UNTOLD_TRY(visit(mb.vertex_count, "morph vertices"));
        const std::uint64_t scratch = std::uint64_t{mb.vertex_count} * (sizeof(std::uint32_t) + 3 * sizeof(float3));
        UNTOLD_TRY(hold(scratch, "morph sums"));
        distinct.clear();
        sums.clear();
        for (std::uint32_t i = 0; i < mb.vertex_count; ++i) {
          const std::uint32_t bv = mb.vertex_index(i);
          if (slot[bv] == no_ref) {
            slot[bv] = static_cast<std::uint32_t>(distinct.size());
            distinct.push_back(bv);
            sums.resize(sums.size() + 3, float3{0, 0, 0});
          }
          for (std::size_t k = 0; k < 3; ++k) {
            const float3 d = mb.delta(i, bits[k]);
            float3& sum = sums[3 * std::size_t{slot[bv]} + k];
            for (std::size_t c = 0; c < 3; ++c) sum[c] += d[c];
          }
        }
        std::uint32_t streams = 0;
        for (std::uint32_t bit : bits) streams += (mb.mask & bit) != 0 ? 1 : 0;
        std::vector<std::uint32_t> touched;  // meshes, in first-touch order
        std::vector<convert::morph_target> targets;
        for (std::size_t d = 0; d < distinct.size(); ++d) {
          const std::uint32_t bv = distinct[d];
          slot[bv] = no_ref;  // ready for the next morph buffer
          const std::uint32_t begin = first_of[mb.buffer][bv], end = first_of[mb.buffer][bv + 1];
          UNTOLD_TRY(visit(end - begin, "morph vertices"));
          for (std::uint32_t o = begin; o < end; ++o) {
            const std::uint32_t k = owners[mb.buffer][o].first, local = owners[mb.buffer][o].second;
            if (target_of[k] == no_ref) {
              const std::uint64_t bytes = std::uint64_t{mesh_vertex_lists[k].size()} * 3 * streams * sizeof(float);
              morph_bytes += bytes;
              if (morph_bytes > limits.max_total_bytes)
                return make_error(errc::limit_exceeded).at_field("morph deltas").with_value(morph_bytes)
                    .with_limit(limits.max_total_bytes).with_subject(mo.name);
              UNTOLD_TRY(hold(bytes + sizeof(convert::morph_target) + mo.name.size(), "morph deltas"));
              const std::size_t n = mesh_vertex_lists[k].size() * 3;
              convert::morph_target t;
              t.name = morph_name;
              t.default_weight = mo.weight;
              if ((mb.mask & morph_position) != 0) t.position_deltas.assign(n, 0.0f);
              if ((mb.mask & morph_normal) != 0) t.normal_deltas.assign(n, 0.0f);
              if ((mb.mask & morph_tangent) != 0) t.tangent_deltas.assign(n, 0.0f);
              target_of[k] = static_cast<std::uint32_t>(targets.size());
              targets.push_back(std::move(t));
              touched.push_back(k);
            }
            convert::morph_target& t = targets[target_of[k]];
            std::vector<float>* streams_of[3] = {&t.position_deltas, &t.normal_deltas, &t.tangent_deltas};
            for (std::size_t s3 = 0; s3 < 3; ++s3) {
              std::vector<float>& deltas = *streams_of[s3];
              if (deltas.empty()) continue;
              const float3& sum = sums[3 * d + s3];
              deltas[3 * std::size_t{local}] = sum[0];
              deltas[3 * std::size_t{local} + 1] = sum[1];
              deltas[3 * std::size_t{local} + 2] = -sum[2];
            }
          }
        }
        for (std::uint32_t k : touched) {
          s.meshes[mesh_sources[k].first].morphs.push_back(std::move(targets[target_of[k]]));
          target_of[k] = no_ref;
          ++morph_targets;
        }
        budget.release_memory(scratch);
      }
    }
  }
  rep.info("morph targets", "", "carried as dense per-mesh deltas (Urho3D stores sparse per-buffer deltas)", morph_targets);
  std::uint64_t ranges = 0;
  for (const vertex_buffer& vb : m.vertex_buffers) ranges += vb.morph_range_count != 0 ? 1 : 0;
  rep.info("morph ranges", "", "a GPU upload hint of Urho3D, derived again from the morphs", ranges);
  rep.info("bounding box and geometry centres", "", "derived data: recomputed from the vertices",
           1 + (m.geometry_centers.empty() ? 0 : 1));
  rep.changed("geometry centres", "",
              "not finite in the file (Urho3D only sorts by them): the centre of the geometry's bounding box instead",
              non_finite_centers(m));

  // ---- animations: tracks drive joints by bone name (sorted lookup: tracks x log bones)
  std::vector<std::pair<std::string_view, std::uint32_t>> by_name;
  UNTOLD_TRY(hold(bone_count * sizeof(by_name[0]), "bone names"));
  for (std::size_t b = 0; b < bone_count; ++b) by_name.emplace_back(m.bones[b].name, joint_of[b]);
  std::stable_sort(by_name.begin(), by_name.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const animation& a : animations) {
    convert::animation out;
    out.name = scene_name(a.name);
    out.duration = a.length;
    std::uint64_t unmatched = 0, weighted = 0;
    for (const track& t : a.tracks) {
      std::uint32_t joint = no_ref;  // the first bone of that name, like Urho3D's Skeleton::GetBone
      const auto hit = std::lower_bound(by_name.begin(), by_name.end(), t.name,
                                        [](const auto& x, std::string_view n) { return x.first < n; });
      if (hit != by_name.end() && hit->first == t.name) joint = hit->second;
      if (joint == no_ref) {
        ++unmatched;
        continue;
      }
      if (t.weight != 1.0f) ++weighted;
      std::uint64_t floats_per_key = 0, channels = 0;  // time + values of each channel
      constexpr std::pair<std::uint8_t, std::uint64_t> components[] = {
          {channel_position, 3}, {channel_rotation, 4}, {channel_scale, 3}};
      for (const auto& [bit, n] : components)
        if ((t.mask & bit) != 0) floats_per_key += 1 + n, ++channels;
      UNTOLD_TRY(visit(std::uint64_t{t.keyframe_count} * channels, "keyframes"));
      UNTOLD_TRY(hold(std::uint64_t{t.keyframe_count} * floats_per_key * sizeof(float) +
                          channels * sizeof(convert::animation_channel),
                      "keyframes"));
      auto channel = [&](convert::anim_path path, std::uint8_t bit) {
        if ((t.mask & bit) == 0 || t.keyframe_count == 0) return;
        convert::animation_channel ch;
        ch.skeleton = 0;
        ch.joint = joint;
        ch.path = path;
        ch.interp = convert::interpolation::linear;
        ch.times.reserve(t.keyframe_count);
        for (std::uint32_t k = 0; k < t.keyframe_count; ++k) {
          const keyframe key = t.key(k);
          ch.times.push_back(key.time);
          if (path == convert::anim_path::translation) {
            const auto p = detail::mirror_point(key.position);
            ch.values.insert(ch.values.end(), p.begin(), p.end());
          } else if (path == convert::anim_path::rotation) {
            const auto q = detail::mirror_rotation(key.rotation);
            ch.values.insert(ch.values.end(), q.begin(), q.end());
          } else {
            ch.values.insert(ch.values.end(), key.scale.begin(), key.scale.end());
          }
        }
        out.channels.push_back(std::move(ch));
      };
      channel(convert::anim_path::translation, channel_position);
      channel(convert::anim_path::rotation, channel_rotation);
      channel(convert::anim_path::scale, channel_scale);
    }
    const std::string where = "animation '" + out.name + "'";
    rep.dropped("tracks without a matching bone", where, "the track names no bone of the model", unmatched);
    rep.dropped("track weights", where, "the scene's channels have no per-track blend weight", weighted);
    rep.dropped("variant tracks", where, "rbfx attribute animation has no place in the scene", a.variant_tracks.size());
    s.animations.push_back(std::move(out));
  }
  if (!animations.empty())
    rep.info("animation keys", "", "Urho3D keys are bone-local TRS replacing the bind pose, interpolated linearly",
             animations.size());
  rep.changed("names", "", "not valid UTF-8 (Urho3D names are bytes): each invalid byte became '?'", renamed);
  UNTOLD_TRY(convert::validate_model(s));
  return s;
}

/// Parses a .mdl and .ani files (deep checks) and imports them, every stage
/// charging one budget: options.budget, or one made from options.limits for
/// the files' total size. Preconditions: none; safe on untrusted input.
/// `name` names the root node.
[[nodiscard]] inline result<convert::scene> import_files(byte_span mdl, std::span<const byte_span> ani_files,
                                                         std::string_view name = "model",
                                                         const import_options& options = {}) {
  std::uint64_t input_bytes = mdl.size();
  for (byte_span file : ani_files) input_bytes += file.size();
  untold::budget own(options.limits, input_bytes);
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  auto m = open_model(mdl, {.limits = options.limits, .deep_checks = true, .budget = &budget});
  if (!m) return m.error();
  std::vector<animation> animations;
  for (byte_span file : ani_files) {
    auto a = open_animation(file, {.limits = options.limits, .deep_checks = true, .budget = &budget});
    if (!a) return a.error();
    animations.push_back(std::move(*a));
  }
  return import_model(*m, animations, name, {.limits = options.limits, .budget = &budget});
}

}  // namespace untold::urho3d
