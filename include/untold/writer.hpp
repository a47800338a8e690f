// untold/writer.hpp - build a .untold file (spec 7).
//
//   untold::builder b{untold::file_type::tile};
//   auto tex  = b.add_texture({.name = "wall", .uri = "Textures/wall.png", .format = untold::texture_format::rgba8});
//   auto mat  = b.add_material({.name = "wall", .base_color_texture = tex});
//   auto room = b.add_entity({.name = "room"});
//   b.add_mesh({.entity = room, .material = mat, .vertices = encoded, .indices = idx});
//   auto bytes = b.finish();            // result<std::vector<std::byte>>
//
// Handles are the order of the add_* calls (0, 1, ...). Bad input never
// produces a corrupt file: the builder remembers the first problem (with the
// record and field) and finish() returns it. Output is byte-for-byte
// deterministic: same calls, same options, same bytes; padding is zero.
//
// Layout (done by file_layout.hpp; write_options.hpp chooses the version,
// compression, hashes and threads): header, chunk table, then 16-byte
// aligned payloads in the order STRING, ENTITY, MESH, MATERIAL, TEXTURE, the
// extension tables (8-15, 19-23, 26, 27), VERTEX_DATA, INDEX_DATA,
// JOINT_INDEX/JOINT_WEIGHT/EDGE_INDEX and MORPH_TARGET data, then raw
// (unknown/plugin) chunks in call order - so one prefix range holds all
// metadata. Required chunks of the file type are written even when empty,
// other empty chunks are omitted. Meshes are stored grouped by entity
// (stable), as each entity addresses a contiguous mesh range; skins name
// meshes by handle and the builder stores the final row.
//
// Engine extensions (extensions.hpp):
//   auto skel = b.add_skeleton({.name = "rig", .entity = root, .joints = joints});
//   b.add_skin({.mesh = body, .skeleton = skel, .joints = palette,
//               .joint_indices = per_vertex_joints, .joint_weights = per_vertex_weights});
//   b.add_animation_clip({.name = "walk", .channels = channels});
//   b.add_light({.name = "sun", .light = {.light_type = 1}});
//   b.add_morph_targets(body, targets);        // glTF morph targets: dense deltas per vertex
//   b.add_muscle({.skeleton = skel, .name = "bicepsL", .origin_joint = "arm", .insertion_joint = "forearm"});
//   b.add_plugin_chunk("com.example.physics", 1, 3, cooked_bytes);
//
// The file is written in format version 4 unless write_options asks for an
// older one; a version that cannot store the content is an error.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "compression.hpp"
#include "content_hash.hpp"
#include "error.hpp"
#include "extensions.hpp"
#include "file_layout.hpp"
#include "format.hpp"
#include "integrity.hpp"
#include "records.hpp"
#include "scene.hpp"
#include "validate.hpp"
#include "write_options.hpp"

namespace untold {

struct entity_desc {
  std::string_view name{};
  /// Handle of an entity added earlier, or none for a root.
  std::uint32_t parent = none;
  mat4 local_transform = identity_matrix;
  std::uint32_t flags = 0;
  /// entityId to store; default: the entity's row (what the reference exporter writes).
  std::optional<std::uint32_t> entity_id{};
};

struct mesh_desc {
  std::uint32_t entity = none;  // entity handle (required)
  std::string_view name{};
  std::uint32_t material = none;  // material handle or none
  /// PBR_STATIC_V1 vertices, 32 bytes each (see vertex.hpp for the encoder).
  byte_span vertices{};
  std::span<const std::uint32_t> indices{};
  /// Optional edge (line) indices, stored in EDGE_INDEX_DATA with the mesh's index type.
  std::span<const std::uint32_t> edge_indices{};
  /// Default: uint16 when vertexCount <= 65535, else uint32.
  std::optional<untold::index_type> index_type{};
  std::uint32_t flags = 0;
  /// Instancing: a mesh handle added earlier whose vertex and index bytes this
  /// record references instead of storing its own copy (vertices, indices,
  /// edge_indices and index_type must then be empty). Several entities can
  /// draw one stored geometry this way; the format lets mesh records share
  /// vertex and index ranges.
  std::uint32_t geometry_of = none;
};

struct material_desc {
  std::string_view name{};
  std::uint32_t flags = 0;
  float4 base_color_factor{1, 1, 1, 1};
  float3 emissive_factor{0, 0, 0};
  float normal_scale = 1;
  float metallic_factor = 1;
  float roughness_factor = 1;
  float occlusion_strength = 1;
  float alpha_cutoff = 0.5f;
  std::uint32_t base_color_texture = none;  // texture handles or none
  std::uint32_t normal_texture = none;
  std::uint32_t metallic_texture = none;
  std::uint32_t roughness_texture = none;
  std::uint32_t emissive_texture = none;
  std::uint32_t occlusion_texture = none;
  std::uint32_t height_texture = none;  // needs format version 3
  float height_scale = 0.05f;           // needs 3 when not the default
  float height_midlevel = 0.5f;         // needs 3 when not the default
  float height_remap_min = 0.0f;        // needs 4 when not the default
  float height_remap_max = 1.0f;        // needs 4 when not the default
  texture_channel roughness_channel = texture_channel::r;
  texture_channel metallic_channel = texture_channel::r;
  /// Stored in flags bits 0-1 (alpha bits already in `flags` must agree
  /// when both are set); alpha_cutoff applies to alpha_mode::mask.
  untold::alpha_mode alpha_mode = untold::alpha_mode::opaque;
  /// KHR_materials_transmission's factor, 0..1; needs 4 when not 0.
  float transmission_factor = 0.0f;
  /// Sets flags bit 2, untold's double-sided convention (material_flags::double_sided).
  bool double_sided = false;
};

struct texture_desc {
  std::string_view name{};
  std::string_view uri{};  // relative to the .untold file's directory
  texture_format format = texture_format::unknown;
  std::uint32_t flags = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t mip_count = 0;
};

// ---- engine extensions (spec 3.3) ----------------------------------------------------
//
// Records that carry an entityId take it from `entity` (an entity handle) or,
// when that is none, from `entity_id` as given (spec 3.3 lets lights and
// cameras name ids that have no entity record).

struct skeleton_joint_desc {
  std::string_view path{};
  /// Index of another joint of the same skeleton, or none for a root; any
  /// order, but parent chains must not cycle.
  std::uint32_t parent = none;
  mat4 bind_transform = identity_matrix;
  mat4 rest_transform = identity_matrix;
  std::uint32_t flags = 0;
};

struct skeleton_desc {
  std::string_view name{};
  std::uint32_t entity = none;     // entity handle; skins find the skeleton by its entityId
  std::uint32_t entity_id = none;  // or the entityId itself (required one way or the other)
  /// Joints in skeleton order (more can follow with add_joint).
  std::span<const skeleton_joint_desc> joints{};
};

struct skin_desc {
  std::uint32_t mesh = none;      // mesh handle (required)
  std::uint32_t skeleton = none;  // skeleton handle (required)
  std::uint32_t entity = none;    // default: the mesh's entity
  std::uint32_t entity_id = none;
  /// Skin joint j -> index of a joint within the skeleton; jointCount = size().
  std::span<const std::uint32_t> joints{};
  /// One entry per mesh vertex: four indices into `joints`, and their weights.
  std::span<const std::array<std::uint16_t, 4>> joint_indices{};
  std::span<const float4> joint_weights{};
};

struct animation_channel_desc {
  std::string_view joint_path{};
  /// Keys in time order (finite, non-decreasing times; finite values).
  std::span<const translation_keyframe_record> translations{};
  std::span<const rotation_keyframe_record> rotations{};
  std::uint32_t flags = 0;
};

struct animation_clip_desc {
  std::string_view name{};
  std::span<const animation_channel_desc> channels{};
  /// Default: the latest key time of any channel (0 without keys).
  std::optional<float> duration{};
  std::uint32_t flags = 0;
};

struct light_desc {
  std::string_view name{};
  std::uint32_t entity = none;
  std::uint32_t entity_id = none;
  /// Every other field; entityId and nameOffset are filled by the builder.
  light_record light{};
};

struct camera_desc {
  std::string_view name{};
  std::uint32_t entity = none;
  std::uint32_t entity_id = none;
  /// Every other field; entityId and nameOffset are filled by the builder.
  camera_record camera{};
};

struct color_management_desc {
  std::string_view view_transform{};
  std::string_view look{};
  std::uint32_t lut_texture = none;  // texture handle or none
  /// exposure, gamma, shaper stops, lutSize; the references are filled by the builder.
  color_management_record settings{};
};

struct color_grade_lut_desc {
  std::string_view uri{};
  std::uint32_t lut_size = 0;
  float3 domain_min{0, 0, 0};
  float3 domain_max{1, 1, 1};
};

/// One sparse morph delta: a vertex of the mesh and how far it moves.
struct morph_delta {
  std::uint32_t vertex = 0;
  float3 position{0, 0, 0};
  float3 normal{0, 0, 0};  // stored only when morph_target_desc::normal_deltas
};

/// A joint rotation that drives a morph target (chunk 26).
struct morph_driver_desc {
  std::string_view joint_path{};
  float4 pose_rotation{0, 0, 0, 1};  // quaternion xyzw
  float radius = 0.5f;
  std::uint32_t kernel = 0;
};

/// A morph target (blend shape) of one mesh. Give either dense deltas, one per
/// mesh vertex (glTF's morph target POSITION / NORMAL accessors), or sparse
/// `deltas`. The builder stores the vertices whose encoded deltas are not all
/// zero, as binary16 (round to nearest even: relative error <= 2^-11 of the
/// delta / positionScale, absolute below 2^-25 x positionScale).
struct morph_target_desc {
  std::string_view name{};
  std::span<const float3> positions{};  // dense: vertexCount position deltas
  std::span<const float3> normals{};    // dense: empty, or vertexCount normal deltas
  std::span<const morph_delta> deltas{};  // sparse, instead of positions / normals
  bool normal_deltas = false;             // sparse: store the normal parts too
  /// Default: 1, or the power of two that keeps every position delta inside
  /// binary16's range (65504) when one is larger.
  std::optional<float> position_scale{};
  std::uint32_t flags = 0;  // morph_flags::has_normal_deltas is set by the builder
  std::optional<morph_driver_desc> driver{};
};

/// A muscle (chunk 27) on the joints of a skeleton, named by joint paths.
struct muscle_desc {
  std::uint32_t skeleton = none;  // skeleton handle (required)
  std::string_view name{};
  std::string_view forward_joint{}, forward_tip_joint{};
  std::string_view origin_joint{}, origin_tip_joint{};
  std::string_view insertion_joint{}, insertion_tip_joint{};
  /// Non-empty: sets muscle_flags::has_driver.
  std::string_view driver_joint{};
  /// Every number (fractions, offsets, radii, compliances, rings, segments,
  /// driver angles, flags); the builder fills the ids and string offsets.
  muscle_record settings{};
};

/// The writer. A class template only so that its member functions are
/// instantiated where they are used: a translation unit that includes this
/// header without building files pays half the compile time (measured in
/// docs/compile-time.md). Use it as `untold::builder`.
template <class Deferred = void>
class basic_builder {
 public:
  explicit basic_builder(untold::file_type type = untold::file_type::tile) { c_.type = type; }

  /// Adds a string to the string table; its offset (none for ""). For
  /// extension records that reference strings. A NUL or invalid UTF-8 is
  /// remembered as the builder's error and returns none.
  std::uint32_t add_string(std::string_view s, chunk_type table = chunk_type::string_table,
                           std::uint32_t record = no_index, const char* field = "string") {
    const auto offset = c_.strings.add(s);
    if (!offset) {
      fail(errc::invalid_argument, table, record, field, s.size());
      return none;
    }
    return *offset;
  }

  std::uint32_t add_entity(const entity_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.entities.size());
    entity_record e;
    e.entity_id = d.entity_id.value_or(handle);
    e.name_offset = add_string(d.name, chunk_type::entity_table, handle, "name");
    e.flags = d.flags;
    e.local_transform = d.local_transform;
    e.parent_entity_id = d.parent;  // a handle until finish()
    if (d.parent != none && d.parent >= handle) fail(errc::invalid_argument, chunk_type::entity_table, handle, "parent", d.parent);
    if (!detail::all_finite(d.local_transform)) fail(errc::invalid_argument, chunk_type::entity_table, handle, "localTransform", 0);
    c_.entities.push_back(e);
    return handle;
  }

  std::uint32_t add_mesh(const mesh_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.meshes.size());
    pending_mesh m;
    m.entity = d.entity;
    m.record.mesh_name_offset = add_string(d.name, chunk_type::mesh_table, handle, "name");
    m.record.material_index = d.material;  // a handle until finish()
    m.record.flags = d.flags;
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::mesh_table, handle, field, value);
    };
    if (d.geometry_of != none) {
      // Shares an earlier mesh's stored geometry (itself an owner of bytes).
      if (d.geometry_of >= handle || c_.meshes[d.geometry_of].geometry_of != none || !d.vertices.empty() ||
          !d.indices.empty() || !d.edge_indices.empty() || d.index_type.has_value())
        fail_here("geometryOf", d.geometry_of);
      else {
        const mesh_record& shared = c_.meshes[d.geometry_of].record;
        m.record.index_type = shared.index_type;
        m.record.vertex_count = shared.vertex_count;
        m.record.index_count = shared.index_count;
        m.record.local_bounds = shared.local_bounds;
        m.geometry_of = d.geometry_of;
      }
      c_.meshes.push_back(std::move(m));
      return handle;
    }
    if (d.vertices.size() % vertex_stride_pbr_static_v1 != 0 ||
        d.vertices.size() / vertex_stride_pbr_static_v1 > 0xFFFFFFFFu)
      fail_here("vertices", d.vertices.size());
    const auto vertex_count = static_cast<std::uint32_t>(d.vertices.size() / vertex_stride_pbr_static_v1);
    const index_type type = d.index_type.value_or(vertex_count <= 65535 ? index_type::uint16 : index_type::uint32);
    const std::uint32_t max_index = type == index_type::uint16 ? 0xFFFFu : 0xFFFFFFFFu;
    if (index_size(static_cast<std::uint32_t>(type)) == 0) fail_here("indexType", static_cast<std::uint32_t>(type));
    if (d.indices.size() > 0xFFFFFFFFu || d.indices.size() % 3 != 0) fail_here("indices", d.indices.size());
    if (d.edge_indices.size() > 0xFFFFFFFFu) fail_here("edgeIndices", d.edge_indices.size());
    // Every index below vertexCount and representable: one max per array
    // (vectorises), the offending index searched only on failure.
    const std::uint64_t limit = std::min<std::uint64_t>(vertex_count, std::uint64_t{max_index} + 1);
    for (const auto& [list, field] : {std::pair{d.indices, "indices"}, std::pair{d.edge_indices, "edgeIndices"}})
      if (!list.empty() && *std::max_element(list.begin(), list.end()) >= limit)
        fail_here(field, *std::find_if(list.begin(), list.end(), [&](std::uint32_t i) { return i >= limit; }));

    m.record.index_type = static_cast<std::uint32_t>(type);
    m.record.vertex_count = vertex_count;
    m.record.index_count = static_cast<std::uint32_t>(d.indices.size());
    // The builder's one copy of the geometry, already in stored form: the
    // file is written from these bytes without copying them again.
    m.vertices.assign(d.vertices.begin(), d.vertices.end());
    m.indices = layout::encode_indices(d.indices, type);
    m.edge_indices = layout::encode_indices(d.edge_indices, type);
    m.edge_index_count = static_cast<std::uint32_t>(d.edge_indices.size());

    // localBounds from the positions; a writer never emits a non-finite one.
    aabb bounds{};
    for (std::uint32_t v = 0; v < vertex_count; ++v) {
      float3 p;
      for (int axis = 0; axis < 3; ++axis)
        p[axis] = load_le_unchecked<float>(m.vertices.data() + std::size_t{v} * vertex_stride_pbr_static_v1 + 4 * axis);
      if (!detail::all_finite(p)) { fail_here("position", v); break; }
      bounds = v == 0 ? aabb{p, p} : detail::merge(bounds, aabb{p, p});
    }
    m.record.local_bounds = bounds;
    c_.meshes.push_back(std::move(m));
    return handle;
  }

  std::uint32_t add_material(const material_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.materials.size());
    material_record m;
    m.name_offset = add_string(d.name, chunk_type::material_table, handle, "name");
    m.flags = d.flags;
    m.base_color_factor = d.base_color_factor;
    m.emissive_factor = d.emissive_factor;
    m.normal_scale = d.normal_scale;
    m.metallic_factor = d.metallic_factor;
    m.roughness_factor = d.roughness_factor;
    m.occlusion_strength = d.occlusion_strength;
    m.alpha_cutoff = d.alpha_cutoff;
    m.base_color_texture = d.base_color_texture;
    m.normal_texture = d.normal_texture;
    m.metallic_texture = d.metallic_texture;
    m.roughness_texture = d.roughness_texture;
    m.emissive_texture = d.emissive_texture;
    m.occlusion_texture = d.occlusion_texture;
    m.height_texture = d.height_texture;
    m.height_scale = d.height_scale;
    m.height_midlevel = d.height_midlevel;
    m.height_remap_min = d.height_remap_min;
    m.height_remap_max = d.height_remap_max;
    m.set_channels(d.roughness_channel, d.metallic_channel);
    const auto mode = static_cast<std::uint32_t>(d.alpha_mode);
    const std::uint32_t flag_mode = d.flags & material_flags::alpha_mode_mask;  // callers may set it in flags
    if (mode > static_cast<std::uint32_t>(untold::alpha_mode::blend) || (mode != 0 && flag_mode != 0 && flag_mode != mode))
      fail(errc::invalid_argument, chunk_type::material_table, handle, "alphaMode", mode);
    m.flags |= mode;
    if (d.double_sided) m.set_double_sided(true);
    m.transmission_factor = d.transmission_factor;
    if (!(d.transmission_factor >= 0.0f && d.transmission_factor <= 1.0f))
      fail(errc::invalid_argument, chunk_type::material_table, handle, "transmissionFactor", 0);
    c_.materials.push_back(m);
    return handle;
  }

  std::uint32_t add_texture(const texture_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.textures.size());
    texture_record t;
    t.name_offset = add_string(d.name, chunk_type::texture_table, handle, "name");
    t.uri_offset = add_string(d.uri, chunk_type::texture_table, handle, "uri");
    t.texture_format = static_cast<std::uint32_t>(d.format);
    if (t.texture_format > max_texture_format) fail(errc::invalid_argument, chunk_type::texture_table, handle, "format", t.texture_format);
    t.flags = d.flags;
    t.width = d.width;
    t.height = d.height;
    t.mip_count = d.mip_count;
    c_.textures.push_back(t);
    return handle;
  }

  /// Adds a skeleton and its joints; returns its handle. Errors (at finish):
  /// no entity, a dangling entity handle, a joint parent outside the skeleton,
  /// a parent cycle, a non-finite transform, two skeletons with one entityId.
  std::uint32_t add_skeleton(const skeleton_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.skeletons.size());
    pending_skeleton s;
    s.entity = d.entity;
    s.record.entity_id = d.entity_id;
    s.record.name_offset = add_string(d.name, chunk_type::skeleton_table, handle, "name");
    c_.skeletons.push_back(std::move(s));
    for (const skeleton_joint_desc& joint : d.joints) add_joint(handle, joint);
    return handle;
  }

  /// Appends a joint to skeleton `skeleton`; returns its index within the
  /// skeleton (what parent and skin joints refer to).
  std::uint32_t add_joint(std::uint32_t skeleton, const skeleton_joint_desc& d) {
    if (skeleton >= c_.skeletons.size()) {
      fail(errc::invalid_argument, chunk_type::skeleton_table, skeleton, "skeleton", skeleton);
      return none;
    }
    std::vector<skeleton_joint_record>& joints = c_.skeletons[skeleton].joints;
    const auto index = static_cast<std::uint32_t>(joints.size());
    skeleton_joint_record j;
    j.parent_joint_index = d.parent;
    j.joint_path_offset = add_string(d.path, chunk_type::skeleton_joint_table, index, "path");
    j.flags = d.flags;
    j.bind_transform = d.bind_transform;
    j.rest_transform = d.rest_transform;
    if (!detail::all_finite(d.bind_transform) || !detail::all_finite(d.rest_transform))
      fail(errc::invalid_argument, chunk_type::skeleton_joint_table, index, "transform", 0);
    joints.push_back(j);
    return index;
  }

  /// Adds a skin binding mesh handle `mesh` to skeleton handle `skeleton`,
  /// with per-vertex joints and weights (stored in JOINT_INDEX_DATA and
  /// JOINT_WEIGHT_DATA); returns its handle. Errors: joint indices >=
  /// joints.size(), non-finite weights; at finish, dangling handles, a
  /// per-vertex count that is not the mesh's vertexCount, skin joints outside
  /// the skeleton.
  std::uint32_t add_skin(const skin_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.skins.size());
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::skin_table, handle, field, value);
    };
    pending_skin s{d.mesh, d.skeleton, d.entity, d.entity_id,
                   std::vector<std::uint32_t>(d.joints.begin(), d.joints.end()),
                   std::vector<std::array<std::uint16_t, 4>>(d.joint_indices.begin(), d.joint_indices.end()),
                   std::vector<float4>(d.joint_weights.begin(), d.joint_weights.end())};
    if (d.joints.size() > 0xFFFFFFFFu) fail_here("joints", d.joints.size());
    for (std::size_t v = 0; v < s.joint_indices.size(); ++v)
      for (const std::uint16_t joint : s.joint_indices[v])
        if (joint >= d.joints.size()) fail_here("jointIndices", v);
    for (std::size_t v = 0; v < s.joint_weights.size(); ++v)
      if (!detail::all_finite(s.joint_weights[v])) fail_here("jointWeights", v);
    c_.skins.push_back(std::move(s));
    return handle;
  }

  /// Adds an animation clip with its channels and keys; returns its handle.
  /// Errors: key times not finite or decreasing within a channel, non-finite
  /// key values, a non-finite duration.
  std::uint32_t add_animation_clip(const animation_clip_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.clips.size());
    animation_clip_record clip;
    clip.name_offset = add_string(d.name, chunk_type::animation_clip_table, handle, "name");
    clip.first_channel_record_index = static_cast<std::uint32_t>(c_.channels.size());
    clip.channel_record_count = static_cast<std::uint32_t>(d.channels.size());
    clip.flags = d.flags;
    float latest = 0;
    for (const animation_channel_desc& c : d.channels) {
      const auto row = static_cast<std::uint32_t>(c_.channels.size());
      animation_channel_record channel;
      channel.joint_path_offset = add_string(c.joint_path, chunk_type::animation_channel_table, row, "jointPath");
      channel.first_translation_index = static_cast<std::uint32_t>(c_.translation_keys.size());
      channel.translation_count = static_cast<std::uint32_t>(c.translations.size());
      channel.first_rotation_index = static_cast<std::uint32_t>(c_.rotation_keys.size());
      channel.rotation_count = static_cast<std::uint32_t>(c.rotations.size());
      channel.flags = c.flags;
      latest = std::max({latest, append_keys(c_.translation_keys, c.translations, row, "translations"),
                         append_keys(c_.rotation_keys, c.rotations, row, "rotations")});
      c_.channels.push_back(channel);
    }
    clip.duration = d.duration.value_or(latest);
    if (!untold::detail::is_finite(clip.duration))
      fail(errc::invalid_argument, chunk_type::animation_clip_table, handle, "duration", 0);
    c_.clips.push_back(clip);
    return handle;
  }

  /// Adds a light; returns its handle. Errors: an unknown lightType, a
  /// non-finite localTransform; at finish, a dangling entity handle.
  std::uint32_t add_light(const light_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.lights.size());
    light_record l = d.light;
    l.entity_id = d.entity_id;
    l.name_offset = add_string(d.name, chunk_type::light_table, handle, "name");
    if (!is_known_light_type(l.light_type))
      fail(errc::invalid_argument, chunk_type::light_table, handle, "lightType", l.light_type);
    if (!detail::all_finite(l.local_transform))
      fail(errc::invalid_argument, chunk_type::light_table, handle, "localTransform", 0);
    c_.lights.push_back({l, d.entity});
    return handle;
  }

  /// Adds a camera; returns its handle. Errors: a non-finite localTransform;
  /// at finish, a dangling entity handle.
  std::uint32_t add_camera(const camera_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.cameras.size());
    camera_record c = d.camera;
    c.entity_id = d.entity_id;
    c.name_offset = add_string(d.name, chunk_type::camera_table, handle, "name");
    if (!detail::all_finite(c.local_transform))
      fail(errc::invalid_argument, chunk_type::camera_table, handle, "localTransform", 0);
    c_.cameras.push_back({c, d.entity});
    return handle;
  }

  /// Sets the file's color management (at most one record; a second call
  /// replaces it). Errors (at finish): a dangling LUT texture handle.
  void set_color_management(const color_management_desc& d) {
    color_management_record c = d.settings;
    c.lut_texture_index = d.lut_texture;  // a handle until finish()
    c.view_transform_name_offset = add_string(d.view_transform, chunk_type::color_management_table, 0, "viewTransform");
    c.look_name_offset = add_string(d.look, chunk_type::color_management_table, 0, "look");
    c_.color_management = c;
  }

  /// Adds a color-grade LUT; returns its handle.
  std::uint32_t add_color_grade_lut(const color_grade_lut_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.luts.size());
    color_grade_lut_record l;
    l.lut_uri_offset = add_string(d.uri, chunk_type::color_grade_lut_table, handle, "uri");
    l.lut_size = d.lut_size;
    l.domain_min = d.domain_min;
    l.domain_max = d.domain_max;
    c_.luts.push_back(l);
    return handle;
  }

  /// Adds a morph target to mesh handle `mesh`; returns its handle (its row
  /// in the morph target table; targets are stored in call order, their
  /// entries in MORPH_TARGET_DATA in the same order). Errors: a dangling mesh
  /// handle; dense arrays whose length is not the mesh's vertexCount (normals
  /// may be empty); both dense and sparse deltas; a sparse vertex >= the
  /// vertexCount; a non-finite delta; a position delta that does not fit
  /// binary16 at the given positionScale; a positionScale that is not finite
  /// and > 0.
  std::uint32_t add_morph_target(std::uint32_t mesh, const morph_target_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.morphs.size());
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::morph_target_table, handle, field, value);
    };
    pending_morph p;
    p.mesh = mesh;
    p.record.name_offset = add_string(d.name, chunk_type::morph_target_table, handle, "name");
    if (d.driver) {
      p.driver = morph_driver_record{};
      p.driver->joint_path_offset = add_string(d.driver->joint_path, chunk_type::morph_driver_table, handle, "jointPath");
      p.driver->kernel = d.driver->kernel;
      p.driver->pose_rotation = d.driver->pose_rotation;
      p.driver->radius = d.driver->radius;
      if (!detail::all_finite(d.driver->pose_rotation) || !untold::detail::is_finite(d.driver->radius))
        fail(errc::invalid_argument, chunk_type::morph_driver_table, handle, "driver", 0);
    }
    if (mesh >= c_.meshes.size()) {
      fail_here("mesh", mesh);
      c_.morphs.push_back(std::move(p));
      return handle;
    }
    const std::uint32_t vertex_count = c_.meshes[mesh].record.vertex_count;
    const bool dense = !d.positions.empty() || !d.normals.empty();
    if (dense && !d.deltas.empty()) fail_here("deltas", d.deltas.size());
    if (dense && (d.positions.size() != vertex_count || (!d.normals.empty() && d.normals.size() != vertex_count)))
      fail_here("positions", d.positions.size());
    const bool with_normals = dense ? !d.normals.empty() : d.normal_deltas;

    // The deltas as (vertex, position, normal), from either form.
    std::vector<morph_delta> deltas;
    if (dense && d.positions.size() == vertex_count) {
      for (std::uint32_t v = 0; v < vertex_count; ++v)
        deltas.push_back({v, d.positions[v], d.normals.empty() ? float3{0, 0, 0} : d.normals[v]});
    } else if (!dense) {
      deltas.assign(d.deltas.begin(), d.deltas.end());
    }
    float largest = 0;
    for (const morph_delta& delta : deltas) {
      if (delta.vertex >= vertex_count) { fail_here("vertex", delta.vertex); break; }
      if (!detail::all_finite(delta.position) || !detail::all_finite(delta.normal)) { fail_here("delta", delta.vertex); break; }
      for (const float c : delta.position) largest = std::max(largest, std::fabs(c));
    }
    float scale = d.position_scale.value_or(1.0f);
    if (!d.position_scale)
      while (largest / scale > static_cast<float>(half_max)) scale *= 2.0f;
    if (!untold::detail::is_finite(scale) || !(scale > 0.0f)) fail_here("positionScale", 0);

    p.record.flags = d.flags | (with_normals ? morph_flags::has_normal_deltas : 0u);
    p.record.position_scale = scale;
    for (const morph_delta& delta : deltas) {
      morph_target_entry e;
      e.vertex_index = delta.vertex;
      bool moves = false;
      for (int k = 0; k < 3; ++k) {
        const auto position = float_to_half(static_cast<double>(delta.position[k]) / scale);
        const auto normal = float_to_half(with_normals ? delta.normal[k] : 0.0f);
        if (!position || !normal) {
          fail_here(position ? "normalDelta" : "positionDelta", delta.vertex);
          break;
        }
        e.position_delta[k] = *position;
        e.normal_delta[k] = *normal;
        moves = moves || (*position & 0x7FFFu) != 0 || (*normal & 0x7FFFu) != 0;
      }
      if (moves) p.entries.push_back(e);
    }
    c_.morphs.push_back(std::move(p));
    return handle;
  }

  /// add_morph_target for each of `targets`, in order (e.g. a glTF
  /// primitive's targets, whose indices then are the returned handle + i).
  /// Returns the first one's handle.
  std::uint32_t add_morph_targets(std::uint32_t mesh, std::span<const morph_target_desc> targets) {
    const auto first = static_cast<std::uint32_t>(c_.morphs.size());
    for (const morph_target_desc& t : targets) add_morph_target(mesh, t);
    return first;
  }

  /// Adds a muscle on skeleton handle `d.skeleton`; returns its handle.
  /// Errors (at finish): a dangling skeleton handle.
  std::uint32_t add_muscle(const muscle_desc& d) {
    const auto handle = static_cast<std::uint32_t>(c_.muscles.size());
    muscle_record m = d.settings;
    const auto text = [&](std::string_view s, const char* field) {
      return add_string(s, chunk_type::muscle_table, handle, field);
    };
    m.name_offset = text(d.name, "name");
    m.forward_joint_offset = text(d.forward_joint, "forwardJoint");
    m.forward_tip_joint_offset = text(d.forward_tip_joint, "forwardTipJoint");
    m.origin_joint_offset = text(d.origin_joint, "originJoint");
    m.origin_tip_joint_offset = text(d.origin_tip_joint, "originTipJoint");
    m.insertion_joint_offset = text(d.insertion_joint, "insertionJoint");
    m.insertion_tip_joint_offset = text(d.insertion_tip_joint, "insertionTipJoint");
    m.driver_joint_offset = text(d.driver_joint, "driverJoint");
    if (!d.driver_joint.empty()) m.flags |= muscle_flags::has_driver;
    c_.muscles.push_back({m, d.skeleton});
    return handle;
  }

  /// Adds a plugin chunk of type `type` (>= 0x8000): the library writes the
  /// envelope (magic, version 1, plugin id, kind, chunk version) before
  /// `payload`. Stored after every other chunk, in call order. Errors: an
  /// invalid plugin id (see is_valid_plugin_id), a type below 0x8000.
  void add_plugin_chunk(std::string_view plugin_id, std::uint32_t kind, std::uint32_t chunk_version,
                        byte_span payload, std::uint32_t type = first_plugin_chunk_type) {
    if (!is_plugin_chunk_type(type)) {
      fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, "chunkType", type);
      return;
    }
    auto encoded = encode_plugin_chunk(plugin_id, kind, chunk_version, payload);
    if (!encoded) {
      fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, "pluginId", plugin_id.size());
      return;
    }
    c_.raw_chunks.push_back({type, std::move(*encoded), 0});
  }

  /// Adds a chunk the library does not interpret (type 23..0x7FFF, or a
  /// plugin chunk >= 0x8000 whose payload already starts with a valid
  /// envelope), stored after every other chunk, in call order.
  void add_raw_chunk(std::uint32_t type, byte_span payload, std::uint32_t element_count = 0) {
    if (is_known_chunk_type(type) || type == 0) fail(errc::invalid_argument, chunk_type::string_table, no_index, "chunkType", type);
    if (is_plugin_chunk_type(type)) {
      if (const auto envelope = parse_plugin_chunk(payload); !envelope)
        fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, envelope.error().context.field,
             envelope.error().context.value);
    }
    c_.raw_chunks.push_back({type, std::vector<std::byte>(payload.begin(), payload.end()), element_count});
  }

  /// The first problem any add_* call met (errc::ok when none).
  [[nodiscard]] const error& first_error() const noexcept { return c_.first_error; }

  /// The lowest formatVersion that stores every material field that is set:
  /// 4 for a transmission factor or a height remap, 3 for other height
  /// fields, 2 for a non-zero emissive factor (the reference engine ignores it
  /// in version 1), else 1.
  [[nodiscard]] std::uint32_t minimum_format_version() const noexcept {
    std::uint32_t v = 1;
    for (const material_record& m : c_.materials) v = std::max(v, detail::material_version(m).first);
    return v;
  }

  /// Lays out the file and streams its bytes to `sink(byte_span) -> bool`
  /// (e.g. write_file_with's file sink) in order, piece by piece: header and
  /// table, then each chunk where it lies in the builder (geometry is never
  /// gathered into a whole-file buffer) with zero padding between. Peak
  /// memory beyond the builder's own: the tables, compressed chunks and the
  /// block digests. A sink that returns false gives errc::io_write_failed
  /// (nothing more is passed to it). Same bytes as finish().
  template <class Sink>
  status write(Sink&& sink, const write_options& options = {}) const {
    auto file = layout::lay_out_file(c_, options);
    if (!file) return file.error();
    // The header holds the content hash and the integrity chunk comes first:
    // a sink that only appends gets its first byte after every hash is done.
    UNTOLD_TRY(layout::hash_stored_bytes(*file, nullptr));
    if (!layout::emit(*file, sink, false)) return make_error(errc::io_write_failed, {.field = "sink"});
    return {};
  }

  /// The whole file in memory (one copy of every byte into the result).
  /// The copy runs while the hashes are computed (on its own thread when
  /// write_options::threads allows two), so with the content hash on it adds
  /// next to nothing to the serial SHA-256 pass.
  [[nodiscard]] result<std::vector<std::byte>> finish(const write_options& options = {}) const {
    auto file = layout::lay_out_file(c_, options);
    if (!file) return file.error();
    std::vector<std::byte> out;
    out.reserve(static_cast<std::size_t>(file->size));  // never reallocated below: appending cannot throw
    const auto append = [&out](byte_span piece) {
      out.insert(out.end(), piece.begin(), piece.end());
      return true;
    };
    // The header, table and integrity chunk are still being filled in by the
    // hashing: zeros here, their bytes copied over once it is done.
    UNTOLD_TRY(layout::hash_stored_bytes(*file, [&] { layout::emit(*file, append, true); }));
    std::memcpy(out.data(), file->directory.data(), file->directory.size());
    for (std::size_t row = 0; row < file->table.size(); ++row)
      if (file->table[row].chunk_type == integrity_chunk_type)
        std::memcpy(out.data() + file->table[row].file_offset, file->owned[row].data(), file->owned[row].size());
    return out;
  }

 private:
  using layout = detail::file_layout<Deferred>;
  using contents = typename layout::builder_contents;
  using pending_mesh = typename layout::pending_mesh;
  using pending_skeleton = typename layout::pending_skeleton;
  using pending_skin = typename layout::pending_skin;
  using pending_morph = typename layout::pending_morph;

  // Appends a channel's keys after checking them (finite fields, times in
  // order; an error names the channel and the key); returns the last key time.
  template <class K>
  float append_keys(std::vector<K>& out, std::span<const K> keys, std::uint32_t channel, const char* field) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      bool finite = true;
      const auto check = [&finite](const auto& field, const char*) {
        if constexpr (std::is_floating_point_v<std::remove_cvref_t<decltype(field)>>)
          finite = finite && untold::detail::is_finite(field);
      };
      record_traits<K>::fields(check, keys[i], max_format_version);
      if (!finite || (i > 0 && keys[i].time < keys[i - 1].time))
        fail(errc::invalid_argument, chunk_type::animation_channel_table, channel, field, i);
      out.push_back(keys[i]);
    }
    return keys.empty() ? 0.0f : keys.back().time;
  }

  void fail(errc code, chunk_type table, std::uint32_t record, const char* field, std::uint64_t value) {
    if (c_.first_error.code != errc::ok) return;
    c_.first_error = layout::input_error(table, record, field, value);
    c_.first_error.code = code;
  }

  contents c_;
};

using builder = basic_builder<>;

}  // namespace untold
