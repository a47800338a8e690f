// untold/convert/to_assetc.hpp - the assetc writer of the neutral scene: a
// .hmesh (geometry, SKIN/SKEL, LODs, meshlets when the caller makes them),
// its .hmat (material rows in dense slot order) and a .hanim when clips
// animate the skeleton. The stage behind `untold build` (docs/assetc-build.md)
// and `untold convert --to assetc`.
//
//   convert::to_assetc_options o;
//   o.source_ref = "models/chair";          // names the MTRL and texture refs (assetc/fnv.hpp)
//   convert::conversion_report report;
//   auto out = convert::to_assetc(scene, o, report);   // result<assetc_output>
//   write_file("chair.hmesh", out->hmesh); write_file("chair.hmat", out->hmat);
//
// The library does no mesh optimisation itself (it is header-only and needs
// no meshoptimizer): the caller's hooks in to_assetc_options reorder a
// submesh's vertices (`optimise`), build its meshlets (`build_meshlets`) and
// its LOD levels (`build_lods`); without them the vertex order is the
// scene's first use, no MLET/MLVR/MLTR/MLBN is written and the scene's own
// lod_levels are the LODs. The tool supplies meshoptimizer-based hooks
// (tools/pipeline/assetc_build.cpp). Hook preconditions are stated on each.
//
// Mapping (docs/convert.md has the table):
//   meshes -> submeshes. With merge_meshes (assetc's mesh.merge: true) every
//   drawing of a mesh by a node becomes a submesh with the node's world
//   transform baked into its vertices (a mirroring transform flips the
//   winding); meshes no node draws are `dropped`. Without it every mesh is
//   one submesh in its own space and the node transforms are `dropped`.
//   Skinned meshes are never baked and emitted once (further instances
//   `dropped`). Only triangle lists are kept (other primitives `dropped`).
//   Each submesh holds the vertices its indices use, in first-use order,
//   encoded as GpuVertex (unit normal and tangent, octahedral; uv0 as f32):
//   absent normals become +Z, absent tangents one perpendicular to the
//   normal (DESC's tangent flag set only when every mesh had tangents);
//   uv sets beyond uv0, vertex colours and morph targets are `dropped`.
//   skeleton -> SKEL: the first skin's skeleton (other skeletons `dropped`,
//   their meshes static); SKIN joint indices are skeleton joints; the static
//   submeshes of a skinned file are bound rigidly to joint 0 (`changed`).
//   Joint names are not stored (`info`).
//   LODs -> LODI/LODT: every submesh gets the file's level count (the
//   longest list); a level equal to the one before it, or missing, is a
//   stalled row (index count 0: "reuse the previous level"); switch
//   distances are `dropped` (assetc stores none).
//   materials -> .hmat rows, one per material a submesh uses, in first-use
//   order (unused ones are left out: `info`); MTRL holds hash_ref("<source_ref>/<leaf>") (material_leaf: the
//   lowercased unique name, else material_<index>). Emissive strength is
//   folded into the factor (`changed`); uv sets other than 0 and texture
//   transforms `dropped`, non-PBR texture slots `dropped`, transmission
//   `dropped`, sampler wrap modes other than repeat and sampler filters
//   `dropped` (a .hmat row has no sampler state); extras `dropped`.
//   textures -> refs hash_ref("<source_ref>/tex_<texture index>"): the
//   `place_texture` hook is asked once per texture a used material
//   references (with its first use's colour space) and says whether the
//   runtime file exists; a slot whose texture was not placed is left empty.
//   animations -> .hanim clips of the skeleton's joint channels (step and
//   linear kept; cubic splines sampled at their keys, `changed`); morph
//   weight channels, channels on other nodes and clips left empty `dropped`.
//   Lights and cameras `dropped`.
//
// Every output is read back by the strict readers with deep checks
// (open_hmesh, open_hmat, open_hanim) before success is returned (the
// write_* functions do it). Errors: validate_model's; HM-LIMITS past the
// budget (options.budget, else one made from the scene's size) ;
// invalid_argument for more than 65535 joints or a position / uv that is not
// finite (field "positions" / "uvs", record = the vertex, subject = the
// submesh); an error a hook returns. Deterministic: the same scene and hooks
// give the same bytes. Not for untrusted scenes in the sense of file input:
// the scene comes from an importer.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../assetc/fnv.hpp"
#include "../assetc/hanim.hpp"
#include "../assetc/hmat.hpp"
#include "../assetc/hmesh.hpp"
#include "../budget.hpp"
#include "../detail/first_use.hpp"
#include "../error.hpp"
#include "../matrix.hpp"
#include "../vertex.hpp"
#include "model.hpp"

namespace untold::convert {

/// One submesh on its way to the file: its own vertices (local indices),
/// unit normals, tangents xyzw, uv0, and SKIN rows when skinned (empty: static).
struct assetc_submesh {
  std::vector<float> positions, normals, tangents, uvs;
  std::vector<std::uint32_t> indices;
  std::vector<assetc::skin_vertex> skin;
  /// The scene's LOD levels over these vertices (local indices), level 1 first.
  std::vector<std::vector<std::uint32_t>> lods;
  std::uint32_t source_material = no_ref;
  bool has_tangents = true;
  [[nodiscard]] std::size_t vertex_count() const noexcept { return positions.size() / 3; }
};

/// The meshlet chunks as written: MLVR holds `base_vertex + local vertex`,
/// MLTR is dense, offsets count elements (assetc::meshlet).
struct assetc_meshlets {
  std::vector<assetc::meshlet> meshlets;
  std::vector<std::uint32_t> vertices;
  std::vector<assetc::meshlet_triangle> triangles;
  std::vector<assetc::meshlet_bound> bounds;
};

/// How a material uses a texture (its first use decides).
enum class assetc_texture_role : std::uint8_t { color, linear_data, normal };

struct assetc_texture_use {
  std::uint32_t texture = no_ref;  // index into scene.textures
  bool srgb = false;               // colour data (base colour, emissive)
  assetc_texture_role role = assetc_texture_role::color;
  std::uint64_t ref = 0;           // the hash the .hmat rows will carry
};

struct to_assetc_options {
  untold::limits limits{};
  /// The budget of the input the scene came from (budget.hpp), shared with
  /// its importer; none: one made from `limits` for the scene's size.
  untold::budget* budget = nullptr;
  /// The asset's runtime ref (assetc::source_ref of its source path, e.g.
  /// "models/chair"): MTRL and texture refs are named under it.
  std::string source_ref{};
  /// assetc's mesh.merge: bake node transforms, one submesh per drawing.
  bool merge_meshes = true;
  /// Reorders one submesh's vertices and indices (and its `lods`, which
  /// index the same vertices) in place; must keep every vertex the indices
  /// or lods use and every array's per-vertex size. Empty: order kept.
  std::function<void(assetc_submesh&)> optimise{};
  /// Appends the meshlets of one submesh's LOD0 to `out` (MLVR values are
  /// base_vertex + local vertex); they must cover its triangles exactly
  /// (HM-MESHLET-COVER) within meshlet_max_vertices/triangles. Empty: no meshlets.
  std::function<void(const assetc_submesh&, std::uint32_t base_vertex, assetc_meshlets& out)> build_meshlets{};
  std::uint32_t meshlet_max_vertices = 0;  // DESC's build parameters
  std::uint32_t meshlet_max_triangles = 0;
  /// The LOD levels of one submesh, level 1 first, each a triangle list over
  /// its vertices (empty: stalled). Empty hook: the scene's own levels.
  std::function<std::vector<std::vector<std::uint32_t>>(const assetc_submesh&)> build_lods{};
  /// Whether the runtime file of a texture exists (the caller writes it):
  /// true references it, false leaves the slots empty (the hook reports why);
  /// an error ends the conversion. Called once per used texture, in texture
  /// order. Empty: every used texture is referenced.
  std::function<result<bool>(const assetc_texture_use&, conversion_report&)> place_texture{};
};

struct assetc_output {
  std::vector<std::byte> hmesh;
  std::vector<std::byte> hmat;
  std::vector<std::byte> hanim;  // empty when no clip animates the skeleton
  std::vector<assetc_texture_use> textures;  // the placed ones, texture order
  std::uint64_t triangles = 0, vertices = 0, meshlets = 0;
};

namespace detail {

struct assetc_v3 {
  float x = 0, y = 0, z = 0;
};
inline assetc_v3 sub(assetc_v3 a, assetc_v3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline assetc_v3 mul(assetc_v3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(assetc_v3 a, assetc_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline assetc_v3 normalised(assetc_v3 v, assetc_v3 fallback) {
  const float l = std::sqrt(dot(v, v));
  return untold::detail::is_finite(l) && l > 1e-20f ? mul(v, 1.0f / l) : fallback;
}
inline assetc_v3 any_tangent(assetc_v3 n) {
  const assetc_v3 axis = std::fabs(n.x) < 0.9f ? assetc_v3{1, 0, 0} : assetc_v3{0, 1, 0};
  return normalised(sub(axis, mul(n, dot(n, axis))), {1, 0, 0});
}

/// Copies the vertices of `m` its indices (then its LODs) use, transformed
/// by `world` (identity: untouched); a mirroring transform flips the
/// winding to stay CCW. Precondition: validate_model accepted the scene.
inline assetc_submesh gather_submesh(const mesh& m, const mat4& world, const skin* sk) {
  assetc_submesh b;
  b.source_material = m.material;
  untold::detail::first_use_numbering local(m.vertex_count());
  for (std::uint32_t i : m.indices) b.indices.push_back(local(i));
  for (const lod_level& level : m.lods) {
    b.lods.emplace_back();
    for (std::uint32_t i : level.indices) b.lods.back().push_back(local(i));
  }
  const bool identity = world == identity_matrix;
  // Normals transform by the cofactor matrix (inverse transpose times det).
  const mat4& w = world;
  const float c00 = w[5] * w[10] - w[6] * w[9], c01 = w[6] * w[8] - w[4] * w[10], c02 = w[4] * w[9] - w[5] * w[8];
  const float c10 = w[2] * w[9] - w[1] * w[10], c11 = w[0] * w[10] - w[2] * w[8], c12 = w[1] * w[8] - w[0] * w[9];
  const float c20 = w[1] * w[6] - w[2] * w[5], c21 = w[2] * w[4] - w[0] * w[6], c22 = w[0] * w[5] - w[1] * w[4];
  const float det = w[0] * c00 + w[4] * c10 + w[8] * c20;
  const float sign = det < 0 ? -1.0f : 1.0f;
  b.has_tangents = !m.tangents.empty();
  for (std::uint32_t src : local.order()) {
    assetc_v3 p{m.positions[3 * src], m.positions[3 * src + 1], m.positions[3 * src + 2]};
    assetc_v3 nn{0, 0, 1};
    if (!m.normals.empty()) nn = {m.normals[3 * src], m.normals[3 * src + 1], m.normals[3 * src + 2]};
    assetc_v3 t{0, 0, 0};
    float hand = 1;
    if (!m.tangents.empty()) {
      t = {m.tangents[4 * src], m.tangents[4 * src + 1], m.tangents[4 * src + 2]};
      hand = m.tangents[4 * src + 3] < 0 ? -1.0f : 1.0f;
    }
    if (!identity) {
      p = {w[0] * p.x + w[4] * p.y + w[8] * p.z + w[12], w[1] * p.x + w[5] * p.y + w[9] * p.z + w[13],
           w[2] * p.x + w[6] * p.y + w[10] * p.z + w[14]};
      nn = mul(assetc_v3{c00 * nn.x + c01 * nn.y + c02 * nn.z, c10 * nn.x + c11 * nn.y + c12 * nn.z,
                         c20 * nn.x + c21 * nn.y + c22 * nn.z},
               sign);
      t = {w[0] * t.x + w[4] * t.y + w[8] * t.z, w[1] * t.x + w[5] * t.y + w[9] * t.z, w[2] * t.x + w[6] * t.y + w[10] * t.z};
      hand *= sign;
    }
    nn = normalised(nn, {0, 0, 1});
    t = m.tangents.empty() ? any_tangent(nn) : normalised(sub(t, mul(nn, dot(nn, t))), any_tangent(nn));
    b.positions.insert(b.positions.end(), {p.x, p.y, p.z});
    b.normals.insert(b.normals.end(), {nn.x, nn.y, nn.z});
    b.tangents.insert(b.tangents.end(), {t.x, t.y, t.z, hand});
    if (!m.uv0.empty()) b.uvs.insert(b.uvs.end(), {m.uv0[2 * src], m.uv0[2 * src + 1]});
    else b.uvs.insert(b.uvs.end(), {0.0f, 0.0f});
    if (sk != nullptr) {
      assetc::skin_vertex sv;
      for (std::size_t k = 0; k < 4; ++k) {
        const std::uint16_t palette = m.joints[src][k];
        sv.joints[k] = static_cast<std::uint16_t>(palette < sk->joints.size() ? sk->joints[palette] : 0);
        sv.weights[k] = m.weights[src][k];
      }
      b.skin.push_back(sv);
    }
  }
  if (det < 0) {
    for (std::size_t i = 0; i + 2 < b.indices.size(); i += 3) std::swap(b.indices[i + 1], b.indices[i + 2]);
    for (auto& level : b.lods)
      for (std::size_t i = 0; i + 2 < level.size(); i += 3) std::swap(level[i + 1], level[i + 2]);
  }
  return b;
}

/// BNDS of xyz positions: box, its centre, the radius around that centre.
inline assetc::mesh_bounds bounds_of(std::span<const float> pos) {
  assetc::mesh_bounds bb;
  if (pos.empty()) return bb;
  bb.min = {pos[0], pos[1], pos[2]};
  bb.max = bb.min;
  for (std::size_t i = 0; i + 2 < pos.size(); i += 3)
    for (std::size_t c = 0; c < 3; ++c) {
      bb.min[c] = std::min(bb.min[c], pos[i + c]);
      bb.max[c] = std::max(bb.max[c], pos[i + c]);
    }
  for (std::size_t c = 0; c < 3; ++c) bb.center[c] = 0.5f * (bb.min[c] + bb.max[c]);
  float r2 = 0;
  for (std::size_t i = 0; i + 2 < pos.size(); i += 3) {
    const float dx = pos[i] - bb.center[0], dy = pos[i + 1] - bb.center[1], dz = pos[i + 2] - bb.center[2];
    r2 = std::max(r2, dx * dx + dy * dy + dz * dz);
  }
  bb.radius = std::sqrt(r2);
  return bb;
}

}  // namespace detail

/// Writes `s` as assetc runtime files; see the header comment for the
/// mapping, the hooks, the errors and the report.
[[nodiscard]] inline result<assetc_output> to_assetc(const scene& s, const to_assetc_options& options,
                                                     conversion_report& rep) {
  namespace ac = untold::assetc;
  UNTOLD_TRY(validate_model(s));
  detail::report_dropped_extras(s, rep, "assetc files have no place for application data");
  const auto product = untold::budget::product;
  const auto sum = untold::budget::sum;
  // What the scene draws (a mesh once per node drawing it when merged): the
  // size a budget of our own is made for.
  std::vector<std::uint64_t> drawings(s.meshes.size(), options.merge_meshes ? 0 : 1);
  if (options.merge_meshes)
    for (const node& n : s.nodes)
      for (std::uint32_t mi : n.meshes) ++drawings[mi];
  std::uint64_t scene_bytes = 0;
  for (std::size_t mi = 0; mi < s.meshes.size(); ++mi) {
    const mesh& m = s.meshes[mi];
    std::uint64_t bytes = product(sum(sum(m.positions.size(), m.normals.size()), sum(m.tangents.size(), m.uv0.size())),
                                  sizeof(float));
    bytes = sum(bytes, product(sum(m.indices.size(), product(m.joints.size(), 6)), 4));
    for (const lod_level& l : m.lods) bytes = sum(bytes, product(l.indices.size(), 4));
    scene_bytes = sum(scene_bytes, product(bytes, std::max<std::uint64_t>(drawings[mi], 1)));
  }
  for (const animation& a : s.animations)
    for (const animation_channel& c : a.channels) scene_bytes = sum(scene_bytes, product(c.values.size() + c.times.size(), 4));
  untold::budget own(options.limits, scene_bytes);
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::hm_limit_exceeded);
  };

  // Skeleton of the first skin; its other skins (same skeleton) are fine too.
  const std::uint32_t skeleton = s.skins.empty() ? no_ref : s.skins[0].skeleton;
  std::set<std::uint32_t> other_skeletons;
  for (const skin& k : s.skins)
    if (k.skeleton != skeleton) other_skeletons.insert(k.skeleton);
  rep.dropped("skeletons beyond the first skin's", "", "a .hmesh holds one skeleton; their meshes are static (bind pose)",
              other_skeletons.size());

  // Which meshes become submeshes, with which transform.
  std::vector<assetc_submesh> subs;
  std::uint64_t non_triangle = 0, unplaced = 0, skinned_instances = 0, morphs = 0, uv1 = 0, colours = 0, empty = 0;
  std::vector<char> placed(s.meshes.size(), 0), skinned_done(s.meshes.size(), 0);
  std::uint64_t switch_distances = 0;
  const auto add_sub = [&](std::uint32_t mi, const mat4& world) -> status {
    const mesh& m = s.meshes[mi];
    if (m.primitive != topology::triangle_list) {
      non_triangle += m.indices.size() / (m.primitive == topology::line_list ? 2 : 1);
      return {};
    }
    if (m.indices.empty()) {
      ++empty;
      return {};
    }
    const bool skinned = m.skin != no_ref && s.skins[m.skin].skeleton == skeleton && !m.joints.empty();
    if (skinned && skinned_done[mi]) {
      ++skinned_instances;
      return {};
    }
    // The copy: remap + vertex streams (19 floats and a SKIN row per vertex) + indices.
    std::uint64_t lod_indices = 0;
    for (const lod_level& l : m.lods) {
      lod_indices = sum(lod_indices, l.indices.size());
      switch_distances += l.switch_distance != 0 ? 1 : 0;
    }
    UNTOLD_TRY(hold(sum(product(m.vertex_count(), 4 + 13 * 4 + sizeof(ac::skin_vertex)),
                        product(sum(m.indices.size(), lod_indices), 4)), "submesh vertices"));
    UNTOLD_TRY(budget.charge_work(sum(m.indices.size(), lod_indices), "submesh indices", errc::hm_limit_exceeded));
    skinned_done[mi] = skinned ? 1 : 0;
    if (!m.morphs.empty()) morphs += m.morphs.size();
    if (!m.uv1.empty() || !m.extra_uvs.empty()) ++uv1;
    if (!m.colors.empty()) ++colours;
    // Skinned meshes are never baked (glTF ignores a skinned node's transform).
    subs.push_back(detail::gather_submesh(m, skinned ? identity_matrix : world, skinned ? &s.skins[m.skin] : nullptr));
    return {};
  };
  std::vector<mat4> world(s.nodes.size(), identity_matrix);
  for (std::size_t n = 0; n < s.nodes.size(); ++n) {
    const mat4 local = s.nodes[n].local.matrix();
    world[n] = s.nodes[n].parent == no_ref ? local : untold::multiply(world[s.nodes[n].parent], local);
  }
  if (options.merge_meshes) {
    bool baked = false;
    for (std::size_t n = 0; n < s.nodes.size(); ++n)
      for (std::uint32_t mi : s.nodes[n].meshes) {
        placed[mi] = 1;
        baked |= world[n] != identity_matrix;
        UNTOLD_TRY(add_sub(mi, world[n]));
      }
    for (std::size_t mi = 0; mi < s.meshes.size(); ++mi) unplaced += placed[mi] ? 0 : 1;
    rep.changed("node transforms", "", "baked into world-space vertices (mesh.merge: true)", baked ? 1 : 0);
  } else {
    for (std::uint32_t mi = 0; mi < s.meshes.size(); ++mi) UNTOLD_TRY(add_sub(mi, identity_matrix));
    bool any = false;
    for (const node& n : s.nodes) any |= n.local.matrix() != identity_matrix;
    rep.dropped("node transforms", "", "mesh.merge: false keeps geometry source-local; the hierarchy is not stored",
                any ? 1 : 0);
  }
  rep.dropped("line/point primitives", "", "a .hmesh holds triangles only", non_triangle);
  rep.dropped("meshes placed by no node", "", "mesh.merge: true emits what the node graph draws", unplaced);
  rep.dropped("further instances of a skinned mesh", "", "skinned meshes are emitted once, unbaked", skinned_instances);
  rep.dropped("morph targets", "", "a .hmesh has no morph data", morphs);
  rep.dropped("uv sets beyond uv0", "", "GpuVertex carries uv0 only (meshes)", uv1);
  rep.dropped("vertex colours", "", "GpuVertex has no colour (meshes)", colours);
  rep.info("meshes without triangles", "", "nothing to emit", empty);
  rep.dropped("lights", "", "a .hmesh has no lights", s.lights.size());
  rep.dropped("cameras", "", "a .hmesh has no cameras", s.cameras.size());
  rep.dropped("LOD switch distances", "", "LODT stores levels, not when to use them", switch_distances);

  const bool any_skin = std::any_of(subs.begin(), subs.end(), [](const assetc_submesh& b) { return !b.skin.empty(); });
  std::uint64_t rigid = 0;
  for (assetc_submesh& b : subs) {
    if (any_skin && b.skin.empty()) {
      rigid += b.vertex_count();
      b.skin.assign(b.vertex_count(), ac::skin_vertex{{0, 0, 0, 0}, {1, 0, 0, 0}});
    }
    if (options.optimise) options.optimise(b);
  }
  rep.changed("static vertices in a skinned mesh", "", "bound rigidly to joint 0 (SKIN covers every vertex)", rigid);

  // Materials: dense first-use slots, refs by the seed's naming rule.
  std::vector<std::uint32_t> source_material;
  for (const assetc_submesh& b : subs) source_material.push_back(b.source_material);
  const ac::material_slots slots = ac::dense_material_slots(source_material);
  std::vector<std::string_view> names;
  for (const material& m : s.materials) names.push_back(m.name);
  const std::vector<std::uint64_t> mtrl = ac::material_hashes(options.source_ref, names, slots.used);
  rep.info("materials no submesh uses", "", "MTRL and the .hmat hold the used ones, in first-use order",
           s.materials.size() - slots.used.size());

  // Textures: every image a used material references, colour space by first use.
  struct texture_use {
    assetc_texture_use use;
    bool first = true;
  };
  std::map<std::uint32_t, texture_use> uses;
  for (std::uint32_t mi : slots.used) {
    const material& m = s.materials[mi];
    const std::pair<const texture_slot*, assetc_texture_role> refs[] = {
        {&m.base_color_texture, assetc_texture_role::color}, {&m.metallic_roughness_texture, assetc_texture_role::linear_data},
        {&m.normal_texture, assetc_texture_role::normal},    {&m.occlusion_texture, assetc_texture_role::linear_data},
        {&m.emissive_texture, assetc_texture_role::color}};
    for (const auto& [slot, role] : refs) {
      if (!slot->used()) continue;
      texture_use& u = uses[slot->texture];
      const bool srgb = role == assetc_texture_role::color;
      if (u.first) {
        u = {{slot->texture, srgb, role, ac::hash_ref(ac::texture_ref(options.source_ref, slot->texture))}, false};
      } else if (u.use.srgb != srgb) {
        rep.changed("texture colour space", "image " + std::to_string(slot->texture),
                    "used as sRGB and as linear data; the first use wins");
      }
    }
  }
  assetc_output out;
  std::set<std::uint32_t> placed_textures;
  for (const auto& [ti, u] : uses) {
    if (options.place_texture) {
      auto ok = options.place_texture(u.use, rep);
      if (!ok) return ok.error();
      if (!*ok) continue;
    }
    placed_textures.insert(ti);
    out.textures.push_back(u.use);
  }

  // .hmat rows in slot order.
  std::vector<ac::material> rows;
  for (std::uint32_t mi : slots.used) {
    const material& m = s.materials[mi];
    const std::string where = "material '" + m.name + "'";
    ac::material row;
    row.base_color = m.base_color;
    row.emissive = {m.emissive[0] * m.emissive_strength, m.emissive[1] * m.emissive_strength,
                    m.emissive[2] * m.emissive_strength};
    if (m.emissive_strength != 1.0f) rep.changed("emissive strength", where, "folded into the emissive factor");
    row.metallic = m.metallic;
    row.roughness = m.roughness;
    row.normal_scale = m.normal_scale;
    row.occlusion_strength = m.occlusion_strength;
    row.alpha_cutoff = m.alpha_cutoff;
    const auto alpha = m.alpha == alpha_mode::mask    ? ac::alpha_mode::mask
                       : m.alpha == alpha_mode::blend ? ac::alpha_mode::blend
                                                      : ac::alpha_mode::opaque;
    row.flags = ac::material::make_flags(m.double_sided, alpha);
    const auto ref = [&](const texture_slot& t, const char* slot_name) -> std::uint64_t {
      if (!t.used() || placed_textures.count(t.texture) == 0) return 0;
      if (t.uv_set != 0)
        rep.dropped(std::string("uv set ") + std::to_string(t.uv_set) + " of " + slot_name, where,
                    "GpuVertex carries uv0 only; the texture is sampled with uv0");
      if (t.has_transform && (t.offset != std::array<float, 2>{0, 0} || t.scale != std::array<float, 2>{1, 1} || t.rotation != 0))
        rep.dropped(std::string("KHR_texture_transform of ") + slot_name, where, "a .hmat row has no uv transform");
      if (t.wrap != std::array<wrap_mode, 2>{wrap_mode::repeat, wrap_mode::repeat})
        rep.dropped(std::string("sampler wrap of ") + slot_name, where, "a .hmat row has no sampler state (repeat)");
      if (t.mag_filter != texture_filter::unset || t.min_filter != texture_filter::unset)
        rep.dropped(std::string("sampler filters of ") + slot_name, where, "a .hmat row has no sampler state");
      return ac::hash_ref(ac::texture_ref(options.source_ref, t.texture));
    };
    row.base_color_tex = ref(m.base_color_texture, "baseColor");
    row.metallic_roughness_tex = ref(m.metallic_roughness_texture, "metallicRoughness");
    row.normal_tex = ref(m.normal_texture, "normal");
    row.occlusion_tex = ref(m.occlusion_texture, "occlusion");
    row.emissive_tex = ref(m.emissive_texture, "emissive");
    if (!m.other_textures.empty())
      rep.dropped("non-PBR texture slots", where, "a .hmat row has five PBR slots", m.other_textures.size());
    if (m.transmission != 0) rep.dropped("transmission", where, "a .hmat row has no transmission factor");
    rows.push_back(row);
  }

  // LOD levels: the hook's, else the scene's; every submesh gets the longest count.
  std::vector<std::vector<std::vector<std::uint32_t>>> levels(subs.size());
  std::size_t lod_count = 0;
  for (std::size_t si = 0; si < subs.size(); ++si) {
    levels[si] = options.build_lods ? options.build_lods(subs[si]) : std::move(subs[si].lods);
    lod_count = std::max(lod_count, levels[si].size());
  }
  if (lod_count > 0xFFFFu) return make_error(errc::hm_limit_exceeded).at_field("lods").with_value(lod_count);

  // Geometry arrays.
  std::vector<std::byte> vertices;
  std::vector<std::uint32_t> indices, lodi;
  assetc_meshlets ml;
  std::vector<ac::submesh> submeshes;
  std::vector<ac::skin_vertex> skin_rows;
  std::vector<ac::mesh_lod> lods;
  std::vector<float> all_positions;
  bool all_tangents = !subs.empty();
  for (std::size_t si = 0; si < subs.size(); ++si) {
    const assetc_submesh& b = subs[si];
    const auto base = static_cast<std::uint32_t>(vertices.size() / gpu_vertex_stride);
    gpu_vertex_input in;
    in.positions = b.positions;
    in.normals = b.normals;
    in.tangents = b.tangents;
    in.uvs = b.uvs;
    auto encoded = encode_gpu_vertices(in);
    if (!encoded) {
      error e = encoded.error();
      return e.with_subject("submesh " + std::to_string(si));
    }
    vertices.insert(vertices.end(), encoded->begin(), encoded->end());
    all_positions.insert(all_positions.end(), b.positions.begin(), b.positions.end());
    all_tangents &= b.has_tangents;
    skin_rows.insert(skin_rows.end(), b.skin.begin(), b.skin.end());

    ac::submesh sm;
    sm.first_index = static_cast<std::uint32_t>(indices.size());
    sm.index_count = static_cast<std::uint32_t>(b.indices.size());
    sm.base_vertex = base;
    sm.material_slot = slots.slot_of_submesh[si];
    sm.bounds = detail::bounds_of(b.positions);
    for (std::uint32_t i : b.indices) indices.push_back(i + base);

    // Meshlets (LOD0 only).
    sm.first_meshlet = static_cast<std::uint32_t>(ml.meshlets.size());
    if (options.build_meshlets) options.build_meshlets(b, base, ml);
    const std::size_t count = ml.meshlets.size() - sm.first_meshlet;
    sm.meshlet_count = static_cast<std::uint32_t>(count);
    out.meshlets += count;

    // LODs: a level equal to the previous one (or missing) is a stalled row.
    for (std::size_t k = 0; k < lod_count; ++k) {
      ac::mesh_lod lod;
      lod.first_index = static_cast<std::uint32_t>(lodi.size());
      const std::vector<std::uint32_t>* level = k < levels[si].size() ? &levels[si][k] : nullptr;
      const std::vector<std::uint32_t>& previous = k == 0 ? b.indices : levels[si][k - 1];
      if (level != nullptr && *level != previous) {
        lod.index_count = static_cast<std::uint32_t>(level->size());
        for (const std::uint32_t i : *level) lodi.push_back(i + base);
      }
      lods.push_back(lod);
    }
    submeshes.push_back(sm);
    out.triangles += b.indices.size() / 3;
    out.vertices += b.vertex_count();
  }

  // Skeleton and clips.
  std::vector<ac::joint> joints;
  if (any_skin) {
    const convert::skeleton& k = s.skeletons[skeleton];
    if (k.joints.size() > 65535)
      return make_error(errc::invalid_argument).at_field("joints").with_value(k.joints.size()).with_limit(65535);
    for (const joint& jt : k.joints) {
      ac::joint o;
      o.inverse_bind = jt.inverse_bind;
      o.bind_translation = jt.rest.translation;
      o.bind_rotation = jt.rest.rotation;
      o.bind_scale = jt.rest.scale;
      o.parent = jt.parent == no_ref ? -1 : static_cast<std::int32_t>(jt.parent);
      joints.push_back(o);
    }
    std::uint64_t named = 0;
    for (const joint& jt : k.joints) named += jt.name.empty() ? 0 : 1;
    rep.info("joint names", "skeleton", "SKEL stores none; clips address joints by index", named);
  }
  std::vector<std::vector<ac::anim_channel_input>> clip_channels;
  std::vector<std::vector<float>> sampled;  // cubic-spline key values, kept alive for the inputs
  std::vector<ac::anim_clip_input> clips;
  std::uint64_t morph_channels = 0, node_channels = 0, empty_clips = 0, cubic = 0;
  for (const animation& a : s.animations) {
    std::vector<ac::anim_channel_input> chans;
    for (const animation_channel& c : a.channels) {
      if (c.path == anim_path::weights) {
        ++morph_channels;
        continue;
      }
      if (!any_skin || c.skeleton != skeleton) {
        ++node_channels;
        continue;
      }
      ac::anim_channel_input in;
      in.joint = c.joint;
      in.path = c.path == anim_path::translation ? ac::anim_path::translation
                : c.path == anim_path::rotation  ? ac::anim_path::rotation
                                                 : ac::anim_path::scale;
      in.interp = c.interp == interpolation::step ? ac::anim_interp::step : ac::anim_interp::linear;
      in.times = c.times;
      in.values = c.values;
      if (c.interp == interpolation::cubic_spline) {
        // (in-tangent, value, out-tangent) per key: the values, linearly.
        const std::size_t width = c.path == anim_path::rotation ? 4 : 3;
        UNTOLD_TRY(hold(product(c.times.size(), width * sizeof(float)), "spline keys"));
        std::vector<float> values;
        for (std::size_t k = 0; k < c.times.size(); ++k)
          values.insert(values.end(), c.values.begin() + static_cast<std::ptrdiff_t>((3 * k + 1) * width),
                        c.values.begin() + static_cast<std::ptrdiff_t>((3 * k + 2) * width));
        sampled.push_back(std::move(values));
        ++cubic;
      }
      chans.push_back(in);
    }
    if (chans.empty()) {
      ++empty_clips;
      continue;
    }
    clip_channels.push_back(std::move(chans));
    clips.push_back({.name = a.name, .duration = a.duration, .channels = {}});
  }
  // The spline channels' values now live in `sampled` (no more reallocation).
  for (std::size_t ci = 0, k = 0; ci < clip_channels.size(); ++ci) {
    for (ac::anim_channel_input& in : clip_channels[ci])
      if (in.values.size() != in.times.size() * ac::components_of(in.path)) in.values = sampled[k++];
    clips[ci].channels = clip_channels[ci];
  }
  rep.dropped("morph weight channels", "", "a .hanim animates joints only", morph_channels);
  rep.dropped("channels on non-joint nodes", "", "a .hanim animates the skeleton's joints only", node_channels);
  rep.dropped("clips without joint channels", "", "nothing left for a .hanim", empty_clips);
  rep.changed("cubic-spline channels", "", "their key values, interpolated linearly (a .hanim has step and linear)",
              cubic);

  ac::hmesh_input in;
  in.vertices = vertices;
  in.indices = indices;
  in.flags = all_tangents ? ac::desc_flag_tangents : std::uint8_t{0};
  in.bounds = detail::bounds_of(all_positions);
  in.meshlets = ml.meshlets;
  in.meshlet_vertices = ml.vertices;
  in.meshlet_triangles = ml.triangles;
  in.meshlet_bounds = ml.bounds;
  in.meshlet_max_vertices = options.meshlet_max_vertices;
  in.meshlet_max_triangles = options.meshlet_max_triangles;
  in.materials = mtrl;
  in.submeshes = submeshes;
  if (any_skin) {
    in.skin = skin_rows;
    in.skeleton = joints;
  }
  in.lod_count = submeshes.empty() ? 0 : static_cast<std::uint32_t>(lod_count);
  if (in.lod_count != 0) {
    in.lod_indices = lodi;
    in.lods = lods;
  }
  // The files about to be made (each writer reads its bytes back, deep).
  std::uint64_t file_bytes = sum(product(vertices.size(), 2), product(sum(indices.size(), lodi.size()), 4));
  file_bytes = sum(file_bytes, product(sum(ml.vertices.size(), ml.meshlets.size()), 52));
  file_bytes = sum(file_bytes, product(rows.size(), ac::hmat_row_size));
  UNTOLD_TRY(budget.charge_output(file_bytes, "assetc files", errc::hm_limit_exceeded));
  UNTOLD_TRY(hold(file_bytes, "assetc files"));
  auto hmesh = ac::write_hmesh(in);
  if (!hmesh) return hmesh.error();
  auto hmat = ac::write_hmat(rows);
  if (!hmat) return hmat.error();
  out.hmesh = std::move(*hmesh);
  out.hmat = std::move(*hmat);
  if (!clips.empty()) {
    auto hanim = ac::write_hanim(clips);
    if (!hanim) return hanim.error();
    out.hanim = std::move(*hanim);
  }
  return out;
}

}  // namespace untold::convert
