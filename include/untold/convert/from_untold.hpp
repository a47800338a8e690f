// untold/convert/from_untold.hpp - a validated .untold asset (and its LOD
// files) as the neutral scene of convert/model.hpp: the importer that lets a
// cooked file go on to any writer (Urho3D, .untold again, ...).
//
//   auto a = untold::open(bytes, {.deep_checks = true});
//   auto s = convert::from_untold(*a);              // result<scene>
//   for (auto& e : s->report.entries) ...           // what the scene could not hold
//
// Mapping (docs/convert.md has the table):
//   entity -> node (parents first; localTransform decomposed into T*R*S, a
//   matrix with shear `changed`; the header's rootTransform, when not the
//   identity, is baked into the root nodes, `changed`). Mesh records ->
//   meshes drawn by their entity's node; records that store the same vertex
//   and index range with the same name and material, and no skin or morph
//   target, become one mesh drawn by several nodes (instancing). Vertices
//   are decoded with the bulk decoder (vertex_decode.hpp): positions,
//   normals, tangents, uv0 always; uv1, colour and tangents are left out when
//   every vertex holds the format's default (PBR_STATIC_V1 stores every
//   field; `info`). Indices widened to 32 bits. Edge indices `dropped`.
//   material -> material (metallic and roughness textures form the glTF
//   metallic-roughness slot when they are one texture read from B and G, else
//   `dropped`); the height texture -> other_textures "height" (its scale,
//   midlevel and remap `dropped`). texture -> texture (sRGB flag; other
//   usage flags `dropped`); an image in the untold.images chunk -> its bytes
//   in texture::embedded, the uri its name.
//   skeleton -> skeleton (joints reordered parents first; name = last path
//   segment; rest = decomposed restTransform; inverse bind = inverse of
//   bindTransform). skin -> skin (one per distinct skeleton + palette) and
//   the mesh's joints/weights. clip -> animation: each channel's translation
//   and rotation keys -> linear channels on the joint its path names.
//   morph target -> dense deltas on its mesh (position x positionScale,
//   normals when flagged). light / camera -> light / camera at the entity's
//   node (a record whose entity is no entity gets a node of its own from its
//   localTransform, `changed`); cones and fov from degrees to radians.
//   LOD files (fileType lod, in level order): a mesh record whose vertices
//   equal the base file's becomes a lod_level of that mesh; switch distances
//   are not stored in .untold (0).
//   Dropped with counts: colour management, colour-grade LUTs, morph
//   drivers, muscles, light falloff/source power/exposure/flags, camera
//   flags, entity/joint/clip/channel flags, plugin and unknown chunks other
//   than untold.images and untold.integrity (block digests: `info`, a
//   writer computes its own), channels whose joint path names no joint.
//
// Precondition: `a` (and each LOD file) was returned by untold::open with
// deep checks and is fully loaded. Safe on any such asset; on an asset that
// is not (a made-up record), a reference that does not resolve is an error
// value (errc::invalid_argument with the table's chunk type, the record and
// the field), never a read outside a view. Everything the scene holds is
// charged to options.budget (R-LIMITS) before it is allocated, and every
// loop to its work meter. Linear in the file size (plus n log n sorts).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../asset.hpp"
#include "../budget.hpp"
#include "../error.hpp"
#include "../extensions.hpp"
#include "../images.hpp"
#include "../integrity.hpp"
#include "../matrix.hpp"
#include "../scene.hpp"
#include "../vertex_decode.hpp"
#include "../vertex_quant.hpp"
#include "model.hpp"

namespace untold::convert {

struct from_untold_options {
  untold::limits limits{};
  /// The input's budget (budget.hpp), shared with the writer that follows;
  /// none: one made from `limits` for the assets' payload bytes.
  untold::budget* budget = nullptr;
};

/// Bytes of every loaded chunk payload of `a`: the input size an importer's
/// own budget is made for. Safe for any asset.
[[nodiscard]] inline std::uint64_t payload_bytes(const asset& a) noexcept {
  std::uint64_t n = 0;
  for (std::size_t row = 0; row < a.chunks().size(); ++row) n = untold::budget::sum(n, a.payload(row).size());
  return n;
}

/// A column-major affine matrix as T * R * S, and whether that product gives
/// the matrix back (within 1e-5 relative: no shear, no projective row).
struct decomposed_transform {
  transform trs{};
  bool exact = true;
};

/// Decomposes `m` (see decomposed_transform). A negative determinant puts
/// the mirror into scale x. Safe for any values (a singular or non-finite
/// matrix gives an inexact result, never NaN rotations).
[[nodiscard]] inline decomposed_transform decompose(const mat4& m) noexcept {
  decomposed_transform out;
  transform& t = out.trs;
  t.translation = {m[12], m[13], m[14]};
  float s[3];
  for (int c = 0; c < 3; ++c)
    s[c] = std::sqrt(m[c * 4] * m[c * 4] + m[c * 4 + 1] * m[c * 4 + 1] + m[c * 4 + 2] * m[c * 4 + 2]);
  const float det = m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) +
                    m[8] * (m[1] * m[6] - m[5] * m[2]);
  if (det < 0) s[0] = -s[0];
  t.scale = {s[0], s[1], s[2]};
  if (s[0] != 0 && s[1] != 0 && s[2] != 0 && untold::detail::is_finite(det)) {
    float r[9];  // rotation, column-major 3x3
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) r[c * 3 + k] = m[c * 4 + k] / s[c];
    // Shepperd: the largest of w, x, y, z first, for a stable square root.
    const float trace = r[0] + r[4] + r[8];
    float q[4];  // x y z w
    if (trace > 0) {
      const float k = std::sqrt(trace + 1.0f) * 2;
      q[3] = 0.25f * k, q[0] = (r[5] - r[7]) / k, q[1] = (r[6] - r[2]) / k, q[2] = (r[1] - r[3]) / k;
    } else if (r[0] > r[4] && r[0] > r[8]) {
      const float k = std::sqrt(1.0f + r[0] - r[4] - r[8]) * 2;
      q[3] = (r[5] - r[7]) / k, q[0] = 0.25f * k, q[1] = (r[3] + r[1]) / k, q[2] = (r[6] + r[2]) / k;
    } else if (r[4] > r[8]) {
      const float k = std::sqrt(1.0f + r[4] - r[0] - r[8]) * 2;
      q[3] = (r[6] - r[2]) / k, q[0] = (r[3] + r[1]) / k, q[1] = 0.25f * k, q[2] = (r[7] + r[5]) / k;
    } else {
      const float k = std::sqrt(1.0f + r[8] - r[0] - r[4]) * 2;
      q[3] = (r[1] - r[3]) / k, q[0] = (r[6] + r[2]) / k, q[1] = (r[7] + r[5]) / k, q[2] = 0.25f * k;
    }
    const float len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (len > 0 && untold::detail::is_finite(len)) t.rotation = {q[0] / len, q[1] / len, q[2] / len, q[3] / len};
  }
  const mat4 back = t.matrix();
  float largest = 1;
  for (int i = 0; i < 16; ++i) largest = std::max(largest, std::fabs(m[i]));
  for (int i = 0; i < 16; ++i)
    if (!(std::fabs(back[i] - m[i]) <= 1e-5f * largest)) out.exact = false;
  return out;
}

namespace detail {

/// The last '/'-separated segment of a joint path (its joint's own name).
[[nodiscard]] inline std::string_view joint_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// An unresolvable reference of a record (only on an asset that was not
/// validated): invalid_argument naming the table, the record and the field.
[[nodiscard]] inline error unresolved(chunk_type table, std::size_t record, const char* field,
                                      std::uint64_t value) noexcept {
  error e = make_error(errc::invalid_argument).at_field(field).at_record(record).with_value(value);
  e.context.chunk_type = static_cast<std::uint32_t>(table);
  return e;
}

[[nodiscard]] inline bool is_identity(const mat4& m) noexcept { return m == identity_matrix; }

}  // namespace detail

/// Imports `a` (and `lod_files`, the fileType-lod files of its LOD levels 1,
/// 2, ... in order) into a scene; see the header comment for the mapping,
/// preconditions and errors.
[[nodiscard]] inline result<scene> from_untold(const asset& a, std::span<const asset* const> lod_files = {},
                                               const from_untold_options& options = {}) {
  std::uint64_t input_bytes = payload_bytes(a);
  for (const asset* lod : lod_files)
    if (lod != nullptr) input_bytes = untold::budget::sum(input_bytes, payload_bytes(*lod));
  untold::budget own(options.limits, input_bytes);
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::limit_exceeded);
  };
  const auto visit = [&budget](std::uint64_t items, const char* what) {
    return budget.charge_work(items, what, errc::limit_exceeded);
  };
  const auto product = untold::budget::product;
  const auto sum = untold::budget::sum;

  scene s;
  conversion_report& rep = s.report;
  std::uint64_t renamed = 0;  // names that are not valid UTF-8 (a validated file has none)
  const auto scene_name = [&renamed](std::string_view raw) {
    std::string clean = sanitized_utf8(raw);
    renamed += clean != raw ? 1 : 0;
    return clean;
  };

  // ---- entities -> nodes, parents first -------------------------------------------------
  const auto entities = a.entities();
  const scene_walk walk = walk_scene(a.entities());  // without the root transform: baked below
  UNTOLD_TRY(visit(entities.size(), "entities"));
  UNTOLD_TRY(hold(product(entities.size(), sizeof(node) + 2 * sizeof(std::uint32_t)), "nodes"));
  std::vector<std::uint32_t> node_of(entities.size(), no_ref);
  const mat4& root = a.header().root_transform;
  std::uint64_t sheared = 0, entity_flags = 0, baked = 0;
  for (const std::uint32_t row : walk.order) {
    const entity_record e = entities[row];
    node n;
    const std::string_view raw_name = a.string(e.name_offset);
    UNTOLD_TRY(hold(raw_name.size(), "node names"));
    n.name = scene_name(raw_name);
    n.parent = walk.parent_row[row] == none ? no_ref : node_of[walk.parent_row[row]];
    mat4 local = e.local_transform;
    if (n.parent == no_ref && !detail::is_identity(root)) {
      local = multiply(root, local);
      ++baked;
    }
    const decomposed_transform d = decompose(local);
    n.local = d.trs;
    sheared += d.exact ? 0 : 1;
    entity_flags += e.flags != 0 ? 1 : 0;
    node_of[row] = static_cast<std::uint32_t>(s.nodes.size());
    s.nodes.push_back(std::move(n));
  }
  rep.changed("root transform", "", "the header's rootTransform is baked into the root nodes' transforms", baked);
  rep.changed("entity transforms", "", "shear or a projective row: stored as the nearest translation, rotation, scale",
              sheared);
  rep.dropped("entity flags", "", "the scene's nodes have no flags", entity_flags);
  rep.info("entity bounds", "", "derived data: recomputed from the vertices by a writer", entities.size());
  const auto node_of_entity = [&](std::uint32_t entity_id) -> std::uint32_t {
    const auto row = a.entity_row(entity_id);
    return row && *row < node_of.size() ? node_of[*row] : no_ref;
  };

  // ---- textures (embedded images from the untold.images chunk) ---------------------------
  auto images = embedded_images(a, options.limits);
  if (!images) return images.error();
  const auto textures = a.textures();
  UNTOLD_TRY(visit(textures.size(), "textures"));
  std::uint64_t texture_flags = 0;
  for (std::uint32_t i = 0; i < textures.size(); ++i) {
    const texture_record t = textures[i];
    const std::string_view uri = a.string(t.uri_offset), name = a.string(t.name_offset);
    const auto image = find_embedded_image(*images, uri);
    UNTOLD_TRY(hold(sum(sizeof(texture) + uri.size() + name.size(), image ? image->size() : 0), "textures"));
    texture out;
    out.name = scene_name(name);
    out.uri = scene_name(image ? uri.substr(1) : uri);
    out.format = t.texture_format <= max_texture_format ? static_cast<texture_format>(t.texture_format)
                                                        : texture_format::unknown;
    out.width = t.width;
    out.height = t.height;
    out.mip_count = t.mip_count;
    out.srgb = (t.flags & texture_flags::srgb) != 0;
    if (image) out.embedded.assign(image->begin(), image->end());
    texture_flags += (t.flags & ~texture_flags::srgb) != 0 ? 1 : 0;
    s.textures.push_back(std::move(out));
  }
  rep.dropped("texture usage flags", "", "the scene's textures carry the sRGB flag only (normal map, LUT, height, ...)",
              texture_flags);

  // ---- materials ---------------------------------------------------------------------------
  const auto materials = a.materials();
  UNTOLD_TRY(visit(materials.size(), "materials"));
  UNTOLD_TRY(hold(product(materials.size(), sizeof(material)), "materials"));
  std::uint64_t split_metal = 0, height_params = 0, material_flags_left = 0;
  for (std::uint32_t i = 0; i < materials.size(); ++i) {
    const material_record r = materials[i];
    const auto slot = [&](std::uint32_t t, const char* field) -> result<texture_slot> {
      if (t == none) return texture_slot{};
      if (t >= s.textures.size()) return detail::unresolved(chunk_type::material_table, i, field, t);
      return texture_slot{.texture = t};
    };
    material m;
    const std::string_view name = a.string(r.name_offset);
    UNTOLD_TRY(hold(name.size(), "material names"));
    m.name = scene_name(name);
    m.base_color = r.base_color_factor;
    m.emissive = r.emissive_factor;
    m.normal_scale = r.normal_scale;
    m.metallic = r.metallic_factor;
    m.roughness = r.roughness_factor;
    m.occlusion_strength = r.occlusion_strength;
    m.alpha_cutoff = r.alpha_cutoff;
    m.alpha = r.alpha_mode() == untold::alpha_mode::mask    ? alpha_mode::mask
              : r.alpha_mode() == untold::alpha_mode::blend ? alpha_mode::blend
                                                            : alpha_mode::opaque;
    m.double_sided = r.double_sided();
    m.transmission = r.transmission_factor;
    const auto base = slot(r.base_color_texture, "baseColorTexture");
    const auto normal = slot(r.normal_texture, "normalTexture");
    const auto occlusion = slot(r.occlusion_texture, "occlusionTexture");
    const auto emissive = slot(r.emissive_texture, "emissiveTexture");
    const auto metallic = slot(r.metallic_texture, "metallicTexture");
    const auto roughness = slot(r.roughness_texture, "roughnessTexture");
    const auto height = slot(r.height_texture, "heightTexture");
    for (const auto* x : {&base, &normal, &occlusion, &emissive, &metallic, &roughness, &height})
      if (!*x) return x->error();
    m.base_color_texture = *base;
    m.normal_texture = *normal;
    m.occlusion_texture = *occlusion;
    m.emissive_texture = *emissive;
    // glTF's metallic-roughness texture: one texture, metallic in B, roughness in G.
    const bool gltf_pair = r.metallic_texture == r.roughness_texture &&
                           r.metallic_channel() == texture_channel::b && r.roughness_channel() == texture_channel::g;
    if (r.metallic_texture != none && gltf_pair) {
      m.metallic_roughness_texture = *metallic;
    } else {
      split_metal += (r.metallic_texture != none ? 1 : 0) + (r.roughness_texture != none ? 1 : 0);
    }
    if (r.height_texture != none) {
      m.other_textures.emplace_back("height", r.height_texture);
      const material_record defaults{};
      height_params += r.height_scale != defaults.height_scale || r.height_midlevel != defaults.height_midlevel ||
                               r.height_remap_min != defaults.height_remap_min ||
                               r.height_remap_max != defaults.height_remap_max
                           ? 1
                           : 0;
    }
    material_flags_left +=
        (r.flags & ~(material_flags::alpha_mode_mask | material_flags::double_sided)) != 0 ? 1 : 0;
    s.materials.push_back(std::move(m));
  }
  rep.dropped("metallic/roughness textures", "",
              "not one texture read from B (metallic) and G (roughness), glTF's layout: the scene has no other",
              split_metal);
  rep.dropped("height parameters", "", "the scene keeps the height texture (other_textures) but not its scale, "
              "midlevel or remap", height_params);
  rep.dropped("material flags", "", "bits beyond the alpha mode and double-sided", material_flags_left);

  // ---- meshes ------------------------------------------------------------------------------
  const auto mesh_records = a.meshes();
  const auto skins = a.table<skin_record>();
  const auto targets = a.table<morph_target_record>();
  UNTOLD_TRY(visit(sum(sum(mesh_records.size(), skins.size()), targets.size()), "mesh records"));
  UNTOLD_TRY(hold(product(mesh_records.size(), sizeof(mesh) + 2 * sizeof(std::uint32_t)), "meshes"));
  std::vector<std::uint8_t> deforms(mesh_records.size(), 0);  // skinned or morphed: never instanced
  for (const skin_record& k : skins)
    if (k.mesh_record_index < deforms.size()) deforms[k.mesh_record_index] = 1;
  for (const morph_target_record& t : targets)
    if (t.mesh_record_index < deforms.size()) deforms[t.mesh_record_index] = 1;
  std::vector<std::uint32_t> mesh_of(mesh_records.size(), no_ref);
  // (vertex range, index range, index type, material, name) -> scene mesh, for instancing.
  using geometry_key = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint32_t,
                                  std::uint32_t, std::string_view>;
  std::map<geometry_key, std::uint32_t> shared;
  std::uint64_t instanced = 0, edge_indices = 0, implicit_streams = 0, mesh_flags = 0;
  for (std::uint32_t i = 0; i < mesh_records.size(); ++i) {
    const mesh_record r = mesh_records[i];
    const std::string_view name = a.string(r.mesh_name_offset);
    const std::uint32_t at = node_of_entity(r.entity_id);
    edge_indices += r.edge_index_count();
    mesh_flags += r.flags != 0 ? 1 : 0;
    if (r.material_index != none && r.material_index >= s.materials.size())
      return detail::unresolved(chunk_type::mesh_table, i, "materialIndex", r.material_index);
    const geometry_key key{r.vertex_data_offset, r.vertex_data_size_bytes, r.index_data_offset,
                           r.index_data_size_bytes, r.index_type, r.material_index, name};
    if (deforms[i] == 0) {
      const auto it = shared.find(key);
      if (it != shared.end()) {
        mesh_of[i] = it->second;
        if (at != no_ref) s.nodes[at].meshes.push_back(it->second);
        ++instanced;
        continue;
      }
    }
    const byte_span vertex_bytes = a.vertices(r);
    const index_view index_bytes = view_indices(a, r);
    const std::uint32_t stride = vertex_stride_of(a.header().vertex_layout);
    if (vertex_bytes.size() != std::uint64_t{r.vertex_count} * stride)
      return detail::unresolved(chunk_type::mesh_table, i, "vertexDataSizeBytes", r.vertex_data_size_bytes);
    if (index_bytes.size() != r.index_count)
      return detail::unresolved(chunk_type::mesh_table, i, "indexDataSizeBytes", r.index_data_size_bytes);
    const std::uint64_t v = r.vertex_count;
    UNTOLD_TRY(visit(sum(v, r.index_count), "vertices"));
    UNTOLD_TRY(hold(sum(product(v, 18 * sizeof(float)), product(r.index_count, sizeof(std::uint32_t))) + name.size(),
                    "mesh vertices"));
    mesh m;
    m.name = scene_name(name);
    m.material = r.material_index == none ? no_ref : r.material_index;
    m.positions.resize(3 * v);
    m.normals.resize(3 * v);
    m.tangents.resize(4 * v);
    m.uv0.resize(2 * v);
    m.uv1.resize(2 * v);
    m.colors.resize(4 * v);
    if (stride == vertex_stride_pbr_quant_v1) {
      for (std::size_t k = 0; k < v; ++k) {
        const pbr_vertex q = decode_quant_vertex(vertex_bytes.data() + k * stride, r.local_bounds);
        std::copy_n(q.position.begin(), 3, m.positions.begin() + static_cast<std::ptrdiff_t>(3 * k));
        std::copy_n(q.normal.begin(), 3, m.normals.begin() + static_cast<std::ptrdiff_t>(3 * k));
        std::copy_n(q.tangent.begin(), 4, m.tangents.begin() + static_cast<std::ptrdiff_t>(4 * k));
        std::copy_n(q.uv0.begin(), 2, m.uv0.begin() + static_cast<std::ptrdiff_t>(2 * k));
        std::copy_n(q.uv1.begin(), 2, m.uv1.begin() + static_cast<std::ptrdiff_t>(2 * k));
        std::copy_n(q.color0.begin(), 4, m.colors.begin() + static_cast<std::ptrdiff_t>(4 * k));
      }
    } else {
      UNTOLD_TRY(decode_pbr_vertices(vertex_bytes, pbr_vertex_streams{m.positions, m.normals, m.tangents, m.uv0,
                                                                      m.uv1, m.colors}));
    }
    m.indices.resize(r.index_count);
    UNTOLD_TRY(widen_indices(index_bytes, m.indices));
    for (const std::uint32_t idx : m.indices)
      if (idx >= v) return detail::unresolved(chunk_type::index_data, i, "index", idx);
    // PBR_STATIC_V1 stores every attribute: a stream that is the format's
    // default at every vertex is what an encoder wrote for "absent".
    const auto all_default = [](const std::vector<float>& stream, std::span<const float> value) {
      for (std::size_t k = 0; k < stream.size(); ++k)
        if (stream[k] != value[k % value.size()]) return false;
      return true;
    };
    constexpr float white[4] = {1, 1, 1, 1}, zero_uv[2] = {0, 0}, default_tangent[4] = {1, 0, 0, 1};
    for (auto [stream, value] : {std::pair{&m.colors, std::span<const float>(white)},
                                 std::pair{&m.uv1, std::span<const float>(zero_uv)},
                                 std::pair{&m.tangents, std::span<const float>(default_tangent)}})
      if (v != 0 && all_default(*stream, value)) {
        stream->clear();
        stream->shrink_to_fit();
        ++implicit_streams;
      }
    mesh_of[i] = static_cast<std::uint32_t>(s.meshes.size());
    if (deforms[i] == 0) shared.emplace(key, mesh_of[i]);
    if (at != no_ref) s.nodes[at].meshes.push_back(mesh_of[i]);
    s.meshes.push_back(std::move(m));
  }
  rep.info("instanced mesh records", "", "records storing the same geometry: one mesh drawn by several nodes",
           instanced);
  rep.info("default vertex streams", "",
           "a colour (white), uv1 (0, 0) or tangent (1, 0, 0, +1) stream that is the default at every vertex is "
           "left out (PBR_STATIC_V1 stores every attribute)", implicit_streams);
  rep.dropped("edge indices", "", "the scene has no edge index lists", edge_indices);
  rep.dropped("mesh flags", "", "the scene's meshes have no flags", mesh_flags);
  rep.info("mesh bounds", "", "derived data: recomputed from the vertices by a writer", mesh_records.size());

  // ---- skeletons -------------------------------------------------------------------------
  const auto skeletons = a.table<skeleton_record>();
  UNTOLD_TRY(visit(skeletons.size(), "skeletons"));
  // Per skeleton row: skeleton joint index -> scene joint index (parents first).
  std::vector<std::vector<std::uint32_t>> joint_of(skeletons.size());
  std::map<std::string_view, std::pair<std::uint32_t, std::uint32_t>> by_path;  // path -> (skeleton, joint)
  std::uint64_t joint_flags = 0;
  for (std::uint32_t k = 0; k < skeletons.size(); ++k) {
    const auto sk = resolve_skeleton(a, k);
    if (!sk || sk->joints.size() != sk->record.joint_record_count)
      return detail::unresolved(chunk_type::skeleton_table, k, "firstJointRecordIndex",
                                sk ? sk->record.first_joint_record_index : 0);
    const auto count = static_cast<std::uint32_t>(sk->joints.size());
    UNTOLD_TRY(visit(count, "joints"));
    UNTOLD_TRY(hold(product(count, sizeof(joint) + 3 * sizeof(std::uint32_t) + 48) + sk->name.size(), "joints"));
    skeleton out;
    out.name = scene_name(sk->name);
    out.node = node_of_entity(sk->record.entity_id);
    std::vector<std::uint32_t>& map = joint_of[k];
    map.assign(count, no_ref);
    std::uint64_t name_bytes = 0;
    for (std::uint32_t j = 0; j < count; ++j) name_bytes += a.string(sk->joints[j].joint_path_offset).size();
    UNTOLD_TRY(hold(name_bytes, "joint names"));
    untold::detail::visit_parents_first(
        count, [&](std::uint32_t j) { return sk->joints[j].parent_joint_index; },
        [&](std::uint32_t j, std::uint32_t parent) {
          const skeleton_joint_record jr = sk->joints[j];
          const std::string_view path = a.string(jr.joint_path_offset);
          joint jt;
          jt.name = scene_name(detail::joint_name(path));
          jt.parent = parent == none ? no_ref : map[parent];
          jt.rest = decompose(jr.rest_transform).trs;
          jt.inverse_bind = inverse_affine(jr.bind_transform);
          joint_flags += jr.flags != 0 ? 1 : 0;
          map[j] = static_cast<std::uint32_t>(out.joints.size());
          by_path.try_emplace(path, k, map[j]);
          out.joints.push_back(std::move(jt));
        });
    s.skeletons.push_back(std::move(out));
  }
  rep.dropped("joint flags", "", "the scene's joints have no flags", joint_flags);

  // ---- skins: one per distinct (skeleton, palette); per-vertex data onto the mesh -------------
  std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::uint32_t> known_skins;
  std::uint64_t extra_skins = 0;
  for (std::uint32_t i = 0; i < skins.size(); ++i) {
    const auto k = resolve_skin(a, i);
    if (!k || !k->skeleton) return detail::unresolved(chunk_type::skin_table, i, "skeletonEntityId",
                                                      k ? k->record.skeleton_entity_id : 0);
    const std::uint32_t mesh_row = k->record.mesh_record_index;
    if (mesh_row >= mesh_of.size() || mesh_of[mesh_row] == no_ref)
      return detail::unresolved(chunk_type::skin_table, i, "meshRecordIndex", mesh_row);
    mesh& m = s.meshes[mesh_of[mesh_row]];
    if (m.skin != no_ref) {
      ++extra_skins;
      continue;
    }
    const std::uint64_t v = m.vertex_count();
    if (k->joint_indices.size() != v || k->joint_weights.size() != v || k->skeleton_joints.size() != k->record.joint_count)
      return detail::unresolved(chunk_type::skin_table, i, "vertexCount", k->record.vertex_count);
    UNTOLD_TRY(visit(sum(v, k->skeleton_joints.size()), "skin vertices"));
    UNTOLD_TRY(hold(sum(product(v, sizeof(std::array<std::uint16_t, 4>) + sizeof(std::array<float, 4>)),
                        product(k->skeleton_joints.size(), 2 * sizeof(std::uint32_t))),
                    "skin vertices"));
    std::vector<std::uint32_t> palette;
    palette.reserve(k->skeleton_joints.size());
    const std::uint32_t skeleton_row = k->skeleton->index;
    for (std::uint32_t j : k->skeleton_joints) {
      if (j == none || j >= joint_of[skeleton_row].size())
        return detail::unresolved(chunk_type::skin_joint_mapping_table, i, "skeletonJointIndex", j);
      palette.push_back(joint_of[skeleton_row][j]);
    }
    const auto [it, added] = known_skins.try_emplace({skeleton_row, palette}, static_cast<std::uint32_t>(s.skins.size()));
    if (added) s.skins.push_back({skeleton_row, std::move(palette)});
    m.skin = it->second;
    m.joints.reserve(v);
    m.weights.reserve(v);
    for (std::uint32_t vi = 0; vi < v; ++vi) {
      const skin_joint_indices ji = k->joint_indices[vi];
      for (const std::uint16_t j : ji.joints)
        if (j >= k->skeleton_joints.size())
          return detail::unresolved(chunk_type::joint_index_data, i, "jointIndex", j);
      m.joints.push_back(ji.joints);
      m.weights.push_back(k->joint_weights[vi].weights);
    }
  }
  rep.dropped("second skins of a mesh", "", "a scene mesh has one skin", extra_skins);

  // ---- morph targets: sparse entries -> dense deltas ---------------------------------------
  std::uint64_t tangent_flags = 0;
  for (std::uint32_t i = 0; i < targets.size(); ++i) {
    const morph_target_record t = targets[i];
    if (t.mesh_record_index >= mesh_of.size() || mesh_of[t.mesh_record_index] == no_ref)
      return detail::unresolved(chunk_type::morph_target_table, i, "meshRecordIndex", t.mesh_record_index);
    mesh& m = s.meshes[mesh_of[t.mesh_record_index]];
    const bool normals = (t.flags & morph_flags::has_normal_deltas) != 0;
    const std::uint64_t v = m.vertex_count();
    const auto entries = view_morph_entries(a, t);
    if (entries.size() != t.entry_count)
      return detail::unresolved(chunk_type::morph_target_table, i, "firstEntryIndex", t.first_entry_index);
    UNTOLD_TRY(visit(sum(entries.size(), v), "morph entries"));
    const std::string_view name = a.string(t.name_offset);
    UNTOLD_TRY(hold(sum(product(v, (normals ? 6 : 3) * sizeof(float)), sizeof(morph_target) + name.size()),
                    "morph deltas"));
    morph_target out;
    out.name = scene_name(name);
    out.position_deltas.assign(3 * v, 0.0f);
    if (normals) out.normal_deltas.assign(3 * v, 0.0f);
    for (const morph_target_entry& e : entries) {
      if (e.vertex_index >= v) return detail::unresolved(chunk_type::morph_target_data, i, "vertexIndex", e.vertex_index);
      const float3 p = e.position(t.position_scale);
      for (std::size_t c = 0; c < 3; ++c) out.position_deltas[3 * std::size_t{e.vertex_index} + c] = p[c];
      if (normals) {
        const float3 n = e.normal();
        for (std::size_t c = 0; c < 3; ++c) out.normal_deltas[3 * std::size_t{e.vertex_index} + c] = n[c];
      }
    }
    tangent_flags += (t.flags & ~morph_flags::has_normal_deltas) != 0 ? 1 : 0;
    m.morphs.push_back(std::move(out));
  }
  rep.dropped("morph target flags", "", "bits beyond has-normal-deltas", tangent_flags);
  rep.dropped("morph drivers", "", "the scene has no pose-space morph drivers", a.table<morph_driver_record>().size());

  // ---- animation clips ---------------------------------------------------------------------
  const auto clips = a.table<animation_clip_record>();
  UNTOLD_TRY(visit(clips.size(), "clips"));
  for (std::uint32_t c = 0; c < clips.size(); ++c) {
    const auto clip = resolve_clip(a, c);
    if (!clip || clip->channels.size() != clip->record.channel_record_count)
      return detail::unresolved(chunk_type::animation_clip_table, c, "firstChannelRecordIndex",
                                clip ? clip->record.first_channel_record_index : 0);
    animation out;
    UNTOLD_TRY(hold(sizeof(animation) + clip->name.size(), "clips"));
    out.name = scene_name(clip->name);
    out.duration = clip->record.duration;
    std::uint64_t unmatched = 0, unmatched_keys = 0, flagged = clip->record.flags != 0 ? 1 : 0;
    for (const resolved_channel& ch : clip->channels) {
      const std::uint64_t keys = sum(ch.translations.size(), ch.rotations.size());
      UNTOLD_TRY(visit(keys, "keyframes"));
      flagged += ch.record.flags != 0 ? 1 : 0;
      const auto target = by_path.find(ch.joint_path);
      if (target == by_path.end()) {
        ++unmatched;
        unmatched_keys += keys;
        continue;
      }
      UNTOLD_TRY(hold(sum(product(ch.translations.size(), 4 * sizeof(float)),
                          product(ch.rotations.size(), 5 * sizeof(float))) +
                          2 * sizeof(animation_channel),
                      "keyframes"));
      animation_channel base;
      base.skeleton = target->second.first;
      base.joint = target->second.second;
      base.interp = interpolation::linear;
      if (!ch.translations.empty()) {
        animation_channel t = base;
        t.path = anim_path::translation;
        for (const translation_keyframe_record& k : ch.translations) {
          t.times.push_back(k.time);
          t.values.insert(t.values.end(), {k.x, k.y, k.z});
        }
        out.channels.push_back(std::move(t));
      }
      if (!ch.rotations.empty()) {
        animation_channel r = base;
        r.path = anim_path::rotation;
        for (const rotation_keyframe_record& k : ch.rotations) {
          r.times.push_back(k.time);
          r.values.insert(r.values.end(), {k.x, k.y, k.z, k.w});
        }
        out.channels.push_back(std::move(r));
      }
    }
    const std::string where = std::string("clip '").append(out.name).append("'");
    rep.dropped("channels without a joint", where,
                "the joint path names no joint of this file's skeletons (" + std::to_string(unmatched_keys) +
                    " keyframes)",
                unmatched);
    rep.dropped("clip and channel flags", where, "the scene's clips and channels have no flags", flagged);
    s.animations.push_back(std::move(out));
  }

  // ---- lights and cameras: at their entity's node, else a node of their own -------------------
  std::uint64_t own_nodes = 0;
  const auto place = [&](std::uint32_t entity_id, const mat4& local, std::string_view name) -> result<std::uint32_t> {
    const std::uint32_t n = node_of_entity(entity_id);
    if (n != no_ref || detail::is_identity(local)) return n;
    UNTOLD_TRY(hold(sizeof(node) + name.size(), "nodes"));
    node own_node;
    own_node.name = scene_name(name);
    own_node.local = decompose(local).trs;
    s.nodes.push_back(std::move(own_node));
    ++own_nodes;
    return static_cast<std::uint32_t>(s.nodes.size() - 1);
  };
  constexpr float radians = 0.017453292519943295f;
  const auto lights = a.table<light_record>();
  UNTOLD_TRY(visit(lights.size(), "lights"));
  std::uint64_t light_extras = 0;
  for (std::uint32_t i = 0; i < lights.size(); ++i) {
    const light_record r = lights[i];
    const std::string_view name = a.string(r.name_offset);
    UNTOLD_TRY(hold(sizeof(light) + name.size(), "lights"));
    light l;
    l.name = scene_name(name);
    const auto at = place(r.entity_id, r.local_transform, name);
    if (!at) return at.error();
    l.node = *at;
    l.kind = r.light_type >= 1 && r.light_type <= 4 ? static_cast<light_kind>(r.light_type - 1) : light_kind::point;
    l.color = r.color;
    l.intensity = r.intensity;
    l.range = r.radius;
    l.inner_cone = r.inner_cone * radians;
    l.outer_cone = r.outer_cone * radians;
    l.area_size = r.area_size;
    light_extras += r.falloff != 0 || r.source_power != 0 || r.source_exposure != 0 || r.flags != 0 ? 1 : 0;
    s.lights.push_back(std::move(l));
  }
  rep.dropped("light falloff, source power, exposure and flags", "",
              "the scene's lights are glTF's (colour, intensity, range, cones, area size)", light_extras);
  const auto cameras = a.table<camera_record>();
  UNTOLD_TRY(visit(cameras.size(), "cameras"));
  std::uint64_t camera_flags = 0;
  for (std::uint32_t i = 0; i < cameras.size(); ++i) {
    const camera_record r = cameras[i];
    const std::string_view name = a.string(r.name_offset);
    UNTOLD_TRY(hold(sizeof(camera) + name.size(), "cameras"));
    camera cam;
    cam.name = scene_name(name);
    const auto at = place(r.entity_id, r.local_transform, name);
    if (!at) return at.error();
    cam.node = *at;
    cam.yfov = r.fov_y_degrees * radians;
    cam.aspect = r.aspect;
    cam.znear = r.near_clip;
    cam.zfar = r.far_clip;
    camera_flags += r.flags != 0 ? 1 : 0;
    s.cameras.push_back(std::move(cam));
  }
  rep.dropped("camera flags", "", "the scene's cameras have no flags", camera_flags);
  rep.changed("light and camera placement", "",
              "a record whose entityId names no entity gets a root node of its own from its localTransform", own_nodes);
  rep.changed("light and camera units", "", "cones and fov converted from degrees to radians",
              lights.size() + cameras.size());

  // ---- what the scene has no place for ----------------------------------------------------------
  rep.dropped("colour management", "", "the scene has no view transform, look, exposure or LUT",
              a.table<color_management_record>().size());
  rep.dropped("colour-grade LUTs", "", "the scene has no colour grading", a.table<color_grade_lut_record>().size());
  rep.dropped("muscles", "", "the scene has no muscle simulation", a.table<muscle_record>().size());
  std::uint64_t raw = 0, digests = 0;
  for (const std::uint32_t row : a.raw_chunks()) {
    const std::uint32_t type = a.chunks()[row].chunk_type;
    digests += type == integrity_chunk_type ? 1 : 0;
    raw += type != images_chunk_type && type != integrity_chunk_type ? 1 : 0;
  }
  rep.dropped("plugin and unknown chunks", "", "opaque to the library (untold.images is read)", raw);
  rep.info("block digests", "", "untold.integrity: verified at open; a writer computes its own", digests);

  // ---- LOD files: level k's mesh record i over the same vertices -> lods[k-1] of record i's mesh ----
  std::uint64_t lod_mismatch = 0, lod_levels = 0;
  for (std::size_t level = 0; level < lod_files.size(); ++level) {
    if (lod_files[level] == nullptr) continue;
    const asset& lod = *lod_files[level];
    const auto records = lod.meshes();
    UNTOLD_TRY(visit(records.size(), "LOD meshes"));
    for (std::uint32_t i = 0; i < records.size(); ++i) {
      const mesh_record r = records[i];
      if (i >= mesh_records.size() || mesh_of[i] == no_ref) {
        ++lod_mismatch;
        continue;
      }
      mesh& m = s.meshes[mesh_of[i]];
      if (m.lods.size() > level) continue;  // an instanced mesh: its first record gave the level
      const byte_span base = a.vertices(mesh_records[i]), mine = lod.vertices(r);
      if (m.lods.size() != level || base.size() != mine.size() || !std::equal(base.begin(), base.end(), mine.begin())) {
        ++lod_mismatch;
        continue;
      }
      UNTOLD_TRY(visit(sum(base.size() / pbr_vertex_stride, r.index_count), "LOD indices"));
      UNTOLD_TRY(hold(product(r.index_count, sizeof(std::uint32_t)), "LOD indices"));
      const index_view idx = view_indices(lod, r);
      lod_level out;
      out.indices.resize(idx.size());
      UNTOLD_TRY(widen_indices(idx, out.indices));
      for (const std::uint32_t x : out.indices)
        if (x >= m.vertex_count()) return detail::unresolved(chunk_type::index_data, i, "index", x);
      m.lods.push_back(std::move(out));
      ++lod_levels;
    }
  }
  rep.dropped("LOD meshes", "", "the LOD file's mesh record does not draw the base record's vertices", lod_mismatch);
  rep.info("LOD levels", "", "switch distances are not stored in .untold LOD files: 0", lod_levels);
  rep.changed("names", "", "not valid UTF-8: each invalid byte became '?'", renamed);
  UNTOLD_TRY(validate_model(s));
  return s;
}

}  // namespace untold::convert
