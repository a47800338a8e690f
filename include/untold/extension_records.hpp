// untold/extension_records.hpp - the engine extension tables' records (spec
// 3.3, chunk types 8-22; 23, 24, 26, 27 from the reference exporter's current
// version: morph targets, their data and drivers, muscles), their field lists,
// the typed views of the raw data chunks 16-18 and the plugin envelope
// (>= 0x8000). What a file holds; the rules that check it are in
// extension_rules.hpp (extensions.hpp includes both).
//
// Records follow records.hpp: each lists its fields once, in file order, with
// spec names, in record_traits<R>::fields, and `asset::table<R>()` views any
// of them. Views and the envelope parser are safe on untrusted bytes.
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
#include "format.hpp"
#include "packing.hpp"
#include "records.hpp"
#include "validate.hpp"
#include "view.hpp"

namespace untold {

// ---- records (spec 3.3) -----------------------------------------------------------

/// Skeleton (8), 24 B: a named range of joint records owned by an entity id.
struct skeleton_record {
  std::uint32_t entity_id = none;
  std::uint32_t name_offset = none;
  std::uint32_t first_joint_record_index = 0;
  std::uint32_t joint_record_count = 0;
  std::uint32_t reserved0 = 0;
  std::uint32_t reserved1 = 0;
  friend constexpr bool operator==(const skeleton_record&, const skeleton_record&) = default;
};

/// Skeleton joint (9), 144 B. parentJointIndex is an index within the owning
/// skeleton (NONE = a root joint).
struct skeleton_joint_record {
  std::uint32_t parent_joint_index = none;
  std::uint32_t joint_path_offset = none;
  std::uint32_t flags = 0;
  std::uint32_t reserved = 0;
  mat4 bind_transform = identity_matrix;
  mat4 rest_transform = identity_matrix;
  friend constexpr bool operator==(const skeleton_joint_record&, const skeleton_joint_record&) = default;
};

/// Skin (10), 48 B: binds mesh row meshRecordIndex to the skeleton whose
/// entityId is skeletonEntityId through jointCount mapping records; per-vertex
/// joints and weights live in JOINT_INDEX_DATA / JOINT_WEIGHT_DATA.
struct skin_record {
  std::uint32_t entity_id = none;
  std::uint32_t mesh_record_index = 0;
  std::uint32_t skeleton_entity_id = none;
  std::uint32_t joint_count = 0;
  std::uint32_t first_joint_mapping_index = 0;
  std::uint32_t vertex_count = 0;
  std::uint64_t joint_index_data_offset = 0;   // bytes into JOINT_INDEX_DATA
  std::uint64_t joint_weight_data_offset = 0;  // bytes into JOINT_WEIGHT_DATA
  std::uint32_t reserved0 = 0;
  std::uint32_t reserved1 = 0;
  friend constexpr bool operator==(const skin_record&, const skin_record&) = default;
};

/// Skin joint mapping (11), 4 B: skin joint -> joint index within the skin's skeleton.
struct skin_joint_mapping_record {
  std::uint32_t skeleton_joint_index = 0;
  friend constexpr bool operator==(const skin_joint_mapping_record&, const skin_joint_mapping_record&) = default;
};

/// Animation clip (12), 28 B.
struct animation_clip_record {
  std::uint32_t name_offset = none;
  float duration = 0;
  std::uint32_t first_channel_record_index = 0;
  std::uint32_t channel_record_count = 0;
  std::uint32_t flags = 0;
  std::uint32_t reserved0 = 0;
  std::uint32_t reserved1 = 0;
  friend constexpr bool operator==(const animation_clip_record&, const animation_clip_record&) = default;
};

/// Animation channel (13), 28 B: the keys of one joint, addressed by path.
struct animation_channel_record {
  std::uint32_t joint_path_offset = none;
  std::uint32_t first_translation_index = 0;
  std::uint32_t translation_count = 0;
  std::uint32_t first_rotation_index = 0;
  std::uint32_t rotation_count = 0;
  std::uint32_t flags = 0;
  std::uint32_t reserved = 0;
  friend constexpr bool operator==(const animation_channel_record&, const animation_channel_record&) = default;
};

/// Translation keyframe (14), 20 B.
struct translation_keyframe_record {
  float time = 0;
  float x = 0;
  float y = 0;
  float z = 0;
  std::uint32_t reserved = 0;
  friend constexpr bool operator==(const translation_keyframe_record&, const translation_keyframe_record&) = default;
};

/// Rotation keyframe (15), 20 B: a quaternion, xyzw.
struct rotation_keyframe_record {
  float time = 0;
  float x = 0;
  float y = 0;
  float z = 0;
  float w = 1;
  friend constexpr bool operator==(const rotation_keyframe_record&, const rotation_keyframe_record&) = default;
};

/// Light (19), 176 B. lightType is a light_type (1..4); flags are light_flags
/// bits, unknown bits passed through. Defaults are conveniences only.
struct light_record {
  std::uint32_t entity_id = none;  // may name no entity record (spec 3.3)
  std::uint32_t name_offset = none;
  std::uint32_t light_type = static_cast<std::uint32_t>(untold::light_type::point);
  std::uint32_t flags = 0;
  float3 color{1, 1, 1};
  float intensity = 1;
  float3 position{0, 0, 0};
  float radius = 0;
  float3 direction{0, 0, -1};
  float falloff = 0;
  float3 right{1, 0, 0};
  float inner_cone = 0;
  float3 up{0, 1, 0};
  float outer_cone = 0;
  float2 area_size{0, 0};
  float source_power = 0;
  float source_exposure = 0;
  mat4 local_transform = identity_matrix;
  friend constexpr bool operator==(const light_record&, const light_record&) = default;
};

/// Camera (20), 144 B. Defaults are conveniences only.
struct camera_record {
  std::uint32_t entity_id = none;  // may name no entity record (spec 3.3)
  std::uint32_t name_offset = none;
  std::uint32_t flags = 0;
  std::uint32_t reserved = 0;
  float3 position{0, 0, 0};
  float fov_y_degrees = 60;
  float3 forward{0, 0, -1};
  float near_clip = 0.1f;  // spec "near" (a macro name on some platforms)
  float3 up{0, 1, 0};
  float far_clip = 1000;  // spec "far"
  float3 right{1, 0, 0};
  float aspect = 1;
  mat4 local_transform = identity_matrix;
  friend constexpr bool operator==(const camera_record&, const camera_record&) = default;
};

/// Color management (21), 32 B; at most one per file. lutTextureIndex is a
/// texture row or NONE (not a rule of spec 6, so not checked at open).
struct color_management_record {
  std::uint32_t lut_texture_index = none;
  std::uint32_t view_transform_name_offset = none;
  std::uint32_t look_name_offset = none;
  float exposure = 0;
  float gamma = 1;
  float shaper_min_stops = 0;
  float shaper_max_stops = 0;
  std::uint32_t lut_size = 0;
  friend constexpr bool operator==(const color_management_record&, const color_management_record&) = default;
};

/// Color-grade LUT (22), 32 B.
struct color_grade_lut_record {
  std::uint32_t lut_uri_offset = none;
  std::uint32_t lut_size = 0;
  float3 domain_min{0, 0, 0};
  float3 domain_max{1, 1, 1};
  friend constexpr bool operator==(const color_grade_lut_record&, const color_grade_lut_record&) = default;
};

/// Morph target (23), 24 B: a named set of sparse per-vertex deltas for mesh
/// row meshRecordIndex, entries [firstEntryIndex, + entryCount) of
/// MORPH_TARGET_DATA. flags: morph_flags bits, unknown bits passed through.
struct morph_target_record {
  std::uint32_t mesh_record_index = 0;
  std::uint32_t name_offset = none;
  std::uint32_t flags = 0;
  std::uint32_t first_entry_index = 0;  // entries (16 B each), not bytes
  std::uint32_t entry_count = 0;
  /// Multiplies every stored position delta (the reference exporter writes 1).
  float position_scale = 1;
  friend constexpr bool operator==(const morph_target_record&, const morph_target_record&) = default;
};

/// One entry of MORPH_TARGET_DATA (24), 16 B: a vertex of the target's mesh
/// and its deltas as IEEE binary16 bit patterns (what the reference exporter
/// writes from numpy float16). The position delta is the stored value times
/// the target's positionScale; normal deltas are zero unless the target has
/// morph_flags::has_normal_deltas.
struct morph_target_entry {
  std::uint32_t vertex_index = 0;
  std::array<std::uint16_t, 3> position_delta{};
  std::array<std::uint16_t, 3> normal_delta{};

  /// The position delta in model units for a target's positionScale.
  [[nodiscard]] constexpr float3 position(float position_scale) const noexcept {
    return {half_to_float(position_delta[0]) * position_scale, half_to_float(position_delta[1]) * position_scale,
            half_to_float(position_delta[2]) * position_scale};
  }
  [[nodiscard]] constexpr float3 normal() const noexcept {
    return {half_to_float(normal_delta[0]), half_to_float(normal_delta[1]), half_to_float(normal_delta[2])};
  }
  friend constexpr bool operator==(const morph_target_entry&, const morph_target_entry&) = default;
};

/// Morph driver (26), 36 B: drives morph target row targetIndex from the
/// rotation of the joint at jointPathOffset (a pose-space deformer: weight
/// from the distance of the joint's rotation to poseRotation, within radius,
/// shaped by kernel; 0 is the reference exporter's only kernel).
struct morph_driver_record {
  std::uint32_t target_index = 0;
  std::uint32_t joint_path_offset = none;
  std::uint32_t kernel = 0;
  float4 pose_rotation{0, 0, 0, 1};  // quaternion xyzw
  float radius = 0.5f;
  std::uint32_t reserved = 0;
  friend constexpr bool operator==(const morph_driver_record&, const morph_driver_record&) = default;
};

/// Muscle (27), 128 B: a simulated muscle between two attachments on the
/// joints of the skeleton whose entityId is skeletonEntityId. Joints are named
/// by path strings (as animation channels are); offsets are in the
/// character's frame (lateral-left, up, forward), angles in radians.
/// Defaults are the reference exporter's.
struct muscle_record {
  std::uint32_t skeleton_entity_id = none;
  std::uint32_t name_offset = none;
  std::uint32_t flags = 0;  // muscle_flags
  std::uint32_t forward_joint_offset = none;
  std::uint32_t forward_tip_joint_offset = none;
  std::uint32_t origin_joint_offset = none;
  std::uint32_t origin_tip_joint_offset = none;
  float origin_fraction = 0.5f;
  float3 origin_offset{0, 0, 0};
  std::uint32_t insertion_joint_offset = none;
  std::uint32_t insertion_tip_joint_offset = none;
  float insertion_fraction = 0.5f;
  float3 insertion_offset{0, 0, 0};
  float belly_radius = 0;
  float tendon_radius = 0;
  float max_contraction = 0.25f;
  float fiber_compliance = 2e-6f;
  float cross_compliance = 4e-6f;
  float volume_compliance = 0;
  float damping = 6;
  float bone_radius = 0;
  float skin_influence = 0.03f;
  std::uint32_t rings = 7;
  std::uint32_t segments = 8;
  std::uint32_t driver_joint_offset = none;
  float driver_start_angle = 0;
  float driver_full_angle = 0;
  std::uint32_t reserved = 0;
  friend constexpr bool operator==(const muscle_record&, const muscle_record&) = default;
};

/// One skinned vertex of JOINT_INDEX_DATA (16), 8 B: four joint indices into
/// the skin's mapping (0 .. jointCount-1).
struct skin_joint_indices {
  std::array<std::uint16_t, 4> joints{};
  friend constexpr bool operator==(const skin_joint_indices&, const skin_joint_indices&) = default;
};

/// One skinned vertex of JOINT_WEIGHT_DATA (17), 16 B: four weights (sum 1 by
/// convention; not a rule).
struct skin_joint_weights {
  float4 weights{};
  friend constexpr bool operator==(const skin_joint_weights&, const skin_joint_weights&) = default;
};

inline constexpr std::uint32_t plugin_envelope_magic = 0x54584555u;  // "UEXT" as bytes 55 45 58 54
inline constexpr std::uint16_t plugin_envelope_version = 1;
inline constexpr std::size_t plugin_envelope_size = 16;

/// The 16-byte envelope that starts every plugin chunk (>= 0x8000) payload;
/// pluginIdLength bytes of UTF-8 plugin id and the opaque payload follow.
struct plugin_envelope {
  std::uint32_t magic = plugin_envelope_magic;
  std::uint16_t version = plugin_envelope_version;
  std::uint16_t plugin_id_length = 0;
  std::uint32_t chunk_kind = 0;
  std::uint32_t chunk_version = 0;
  friend constexpr bool operator==(const plugin_envelope&, const plugin_envelope&) = default;
};

// ---- field lists ----------------------------------------------------------------

template <>
struct record_traits<skeleton_record> {
  static constexpr chunk_type table = chunk_type::skeleton_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 24; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.name_offset, "nameOffset");
    v(r.first_joint_record_index, "firstJointRecordIndex");
    v(r.joint_record_count, "jointRecordCount");
    v(r.reserved0, "reserved0");
    v(r.reserved1, "reserved1");
  }
};

template <>
struct record_traits<skeleton_joint_record> {
  static constexpr chunk_type table = chunk_type::skeleton_joint_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 144; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.parent_joint_index, "parentJointIndex");
    v(r.joint_path_offset, "jointPathOffset");
    v(r.flags, "flags");
    v(r.reserved, "reserved");
    v(r.bind_transform, "bindTransform");
    v(r.rest_transform, "restTransform");
  }
};

template <>
struct record_traits<skin_record> {
  static constexpr chunk_type table = chunk_type::skin_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 48; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.mesh_record_index, "meshRecordIndex");
    v(r.skeleton_entity_id, "skeletonEntityId");
    v(r.joint_count, "jointCount");
    v(r.first_joint_mapping_index, "firstJointMappingIndex");
    v(r.vertex_count, "vertexCount");
    v(r.joint_index_data_offset, "jointIndexDataOffset");
    v(r.joint_weight_data_offset, "jointWeightDataOffset");
    v(r.reserved0, "reserved0");
    v(r.reserved1, "reserved1");
  }
};

template <>
struct record_traits<skin_joint_mapping_record> {
  static constexpr chunk_type table = chunk_type::skin_joint_mapping_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 4; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.skeleton_joint_index, "skeletonJointIndex");
  }
};

template <>
struct record_traits<animation_clip_record> {
  static constexpr chunk_type table = chunk_type::animation_clip_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 28; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.name_offset, "nameOffset");
    v(r.duration, "duration");
    v(r.first_channel_record_index, "firstChannelRecordIndex");
    v(r.channel_record_count, "channelRecordCount");
    v(r.flags, "flags");
    v(r.reserved0, "reserved0");
    v(r.reserved1, "reserved1");
  }
};

template <>
struct record_traits<animation_channel_record> {
  static constexpr chunk_type table = chunk_type::animation_channel_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 28; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.joint_path_offset, "jointPathOffset");
    v(r.first_translation_index, "firstTranslationIndex");
    v(r.translation_count, "translationCount");
    v(r.first_rotation_index, "firstRotationIndex");
    v(r.rotation_count, "rotationCount");
    v(r.flags, "flags");
    v(r.reserved, "reserved");
  }
};

template <>
struct record_traits<translation_keyframe_record> {
  static constexpr chunk_type table = chunk_type::translation_keyframe_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 20; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.time, "time");
    v(r.x, "x");
    v(r.y, "y");
    v(r.z, "z");
    v(r.reserved, "reserved");
  }
};

template <>
struct record_traits<rotation_keyframe_record> {
  static constexpr chunk_type table = chunk_type::rotation_keyframe_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 20; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.time, "time");
    v(r.x, "x");
    v(r.y, "y");
    v(r.z, "z");
    v(r.w, "w");
  }
};

template <>
struct record_traits<light_record> {
  static constexpr chunk_type table = chunk_type::light_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 176; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.name_offset, "nameOffset");
    v(r.light_type, "lightType");
    v(r.flags, "flags");
    v(r.color, "color");
    v(r.intensity, "intensity");
    v(r.position, "position");
    v(r.radius, "radius");
    v(r.direction, "direction");
    v(r.falloff, "falloff");
    v(r.right, "right");
    v(r.inner_cone, "innerCone");
    v(r.up, "up");
    v(r.outer_cone, "outerCone");
    v(r.area_size, "areaSize");
    v(r.source_power, "sourcePower");
    v(r.source_exposure, "sourceExposure");
    v(r.local_transform, "localTransform");
  }
};

template <>
struct record_traits<camera_record> {
  static constexpr chunk_type table = chunk_type::camera_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 144; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.name_offset, "nameOffset");
    v(r.flags, "flags");
    v(r.reserved, "reserved");
    v(r.position, "position");
    v(r.fov_y_degrees, "fovYDegrees");
    v(r.forward, "forward");
    v(r.near_clip, "near");
    v(r.up, "up");
    v(r.far_clip, "far");
    v(r.right, "right");
    v(r.aspect, "aspect");
    v(r.local_transform, "localTransform");
  }
};

template <>
struct record_traits<color_management_record> {
  static constexpr chunk_type table = chunk_type::color_management_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 32; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.lut_texture_index, "lutTextureIndex");
    v(r.view_transform_name_offset, "viewTransformNameOffset");
    v(r.look_name_offset, "lookNameOffset");
    v(r.exposure, "exposure");
    v(r.gamma, "gamma");
    v(r.shaper_min_stops, "shaperMinStops");
    v(r.shaper_max_stops, "shaperMaxStops");
    v(r.lut_size, "lutSize");
  }
};

template <>
struct record_traits<color_grade_lut_record> {
  static constexpr chunk_type table = chunk_type::color_grade_lut_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 32; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.lut_uri_offset, "lutUriOffset");
    v(r.lut_size, "lutSize");
    v(r.domain_min, "domainMin");
    v(r.domain_max, "domainMax");
  }
};

template <>
struct record_traits<morph_target_record> {
  static constexpr chunk_type table = chunk_type::morph_target_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 24; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.mesh_record_index, "meshRecordIndex");
    v(r.name_offset, "nameOffset");
    v(r.flags, "flags");
    v(r.first_entry_index, "firstEntryIndex");
    v(r.entry_count, "entryCount");
    v(r.position_scale, "positionScale");
  }
};

template <>
struct record_traits<morph_target_entry> {
  static constexpr chunk_type table = chunk_type::morph_target_data;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 16; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.vertex_index, "vertexIndex");
    v(r.position_delta, "positionDelta");
    v(r.normal_delta, "normalDelta");
  }
};

template <>
struct record_traits<morph_driver_record> {
  static constexpr chunk_type table = chunk_type::morph_driver_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 36; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.target_index, "targetIndex");
    v(r.joint_path_offset, "jointPathOffset");
    v(r.kernel, "kernel");
    v(r.pose_rotation, "poseRotation");
    v(r.radius, "radius");
    v(r.reserved, "reserved");
  }
};

template <>
struct record_traits<muscle_record> {
  static constexpr chunk_type table = chunk_type::muscle_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 128; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.skeleton_entity_id, "skeletonEntityId");
    v(r.name_offset, "nameOffset");
    v(r.flags, "flags");
    v(r.forward_joint_offset, "forwardJointOffset");
    v(r.forward_tip_joint_offset, "forwardTipJointOffset");
    v(r.origin_joint_offset, "originJointOffset");
    v(r.origin_tip_joint_offset, "originTipJointOffset");
    v(r.origin_fraction, "originFraction");
    v(r.origin_offset, "originOffset");
    v(r.insertion_joint_offset, "insertionJointOffset");
    v(r.insertion_tip_joint_offset, "insertionTipJointOffset");
    v(r.insertion_fraction, "insertionFraction");
    v(r.insertion_offset, "insertionOffset");
    v(r.belly_radius, "bellyRadius");
    v(r.tendon_radius, "tendonRadius");
    v(r.max_contraction, "maxContraction");
    v(r.fiber_compliance, "fiberCompliance");
    v(r.cross_compliance, "crossCompliance");
    v(r.volume_compliance, "volumeCompliance");
    v(r.damping, "damping");
    v(r.bone_radius, "boneRadius");
    v(r.skin_influence, "skinInfluence");
    v(r.rings, "rings");
    v(r.segments, "segments");
    v(r.driver_joint_offset, "driverJointOffset");
    v(r.driver_start_angle, "driverStartAngle");
    v(r.driver_full_angle, "driverFullAngle");
    v(r.reserved, "reserved");
  }
};

template <>
struct record_traits<skin_joint_indices> {
  static constexpr chunk_type table = chunk_type::joint_index_data;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 8; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.joints, "jointIndices");
  }
};

template <>
struct record_traits<skin_joint_weights> {
  static constexpr chunk_type table = chunk_type::joint_weight_data;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 16; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.weights, "jointWeights");
  }
};

template <>
struct record_traits<plugin_envelope> {
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return plugin_envelope_size; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.magic, "magic");
    v(r.version, "version");
    v(r.plugin_id_length, "pluginIdLength");
    v(r.chunk_kind, "chunkKind");
    v(r.chunk_version, "chunkVersion");
  }
};

namespace detail {
struct field_byte_counter {
  std::size_t bytes = 0;
  template <class T>
  constexpr void operator()(const T&, const char*) noexcept {
    bytes += sizeof(T);
  }
};
/// Bytes the field list of R encodes: must equal record_traits<R>::size().
template <class R>
[[nodiscard]] constexpr std::size_t field_list_bytes() noexcept {
  R record{};
  field_byte_counter counter;
  record_traits<R>::fields(counter, record, max_format_version);
  return counter.bytes;
}
template <class... R>
inline constexpr bool field_lists_match_sizes = ((field_list_bytes<R>() == record_traits<R>::size()) && ...);
}  // namespace detail

static_assert(detail::field_lists_match_sizes<skeleton_record, skeleton_joint_record, skin_record,
                                              skin_joint_mapping_record, animation_clip_record,
                                              animation_channel_record, translation_keyframe_record,
                                              rotation_keyframe_record, light_record, camera_record,
                                              color_management_record, color_grade_lut_record, morph_target_record,
                                              morph_target_entry, morph_driver_record, muscle_record,
                                              skin_joint_indices, skin_joint_weights, plugin_envelope>,
              "a field list disagrees with its record size (spec 3.3)");

// ---- typed views of the raw data chunks 16, 17, 18 -------------------------------

/// A skin's per-vertex joint indices (JOINT_INDEX_DATA, vertexCount x 8 B).
/// Empty when the skin's range is not inside the loaded chunk (never for a
/// validated skin of a fully loaded asset). Safe for any record.
[[nodiscard]] inline record_view<skin_joint_indices> view_joint_indices(const asset& a,
                                                                       const skin_record& skin) noexcept {
  const auto bytes =
      a.slice(chunk_type::joint_index_data, skin.joint_index_data_offset, std::uint64_t{skin.vertex_count} * 8);
  return record_view<skin_joint_indices>::make_or_empty(bytes);
}

/// A skin's per-vertex joint weights (JOINT_WEIGHT_DATA, vertexCount x 16 B).
/// Empty as for view_joint_indices. Safe for any record.
[[nodiscard]] inline record_view<skin_joint_weights> view_joint_weights(const asset& a,
                                                                       const skin_record& skin) noexcept {
  const auto bytes =
      a.slice(chunk_type::joint_weight_data, skin.joint_weight_data_offset, std::uint64_t{skin.vertex_count} * 16);
  return record_view<skin_joint_weights>::make_or_empty(bytes);
}

/// A morph target's entries (MORPH_TARGET_DATA rows [firstEntryIndex, +
/// entryCount)). Empty when that range is not inside the loaded chunk (never
/// for a validated target of a fully loaded asset). Safe for any record.
[[nodiscard]] inline record_view<morph_target_entry> view_morph_entries(const asset& a,
                                                                       const morph_target_record& target) noexcept {
  return a.records<morph_target_entry>(target.first_entry_index, target.entry_count);
}

/// A mesh's edge indices (EDGE_INDEX_DATA, edgeIndexCount of its indexType),
/// empty when it has none. Safe for any record.
[[nodiscard]] inline index_view view_edge_indices(const asset& a, const mesh_record& mesh) noexcept {
  return index_view::make_or_empty(a.edge_indices(mesh), mesh.index_type);
}

/// A mesh's triangle indices (INDEX_DATA). Safe for any record.
[[nodiscard]] inline index_view view_indices(const asset& a, const mesh_record& mesh) noexcept {
  return index_view::make_or_empty(a.indices(mesh), mesh.index_type);
}

// ---- plugin chunks ------------------------------------------------------------------

namespace detail {
/// The code point of the valid UTF-8 sequence of `len` bytes at s[i].
[[nodiscard]] inline std::uint32_t utf8_code_point(byte_span s, std::size_t i, std::size_t len) noexcept {
  constexpr std::uint32_t lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  std::uint32_t cp = static_cast<std::uint32_t>(s[i]) & lead_mask[len];
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<std::uint32_t>(s[i + k]) & 0x3F);
  return cp;
}
/// Unicode White_Space (what "blank" means for a plugin id).
[[nodiscard]] constexpr bool is_unicode_space(std::uint32_t cp) noexcept {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}
}  // namespace detail

/// Whether `id` can be a plugin id: 1..65535 bytes of valid UTF-8, no NUL,
/// not only (Unicode) whitespace. Safe on untrusted input.
[[nodiscard]] inline bool is_valid_plugin_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 0xFFFF) return false;
  const byte_span bytes = std::as_bytes(std::span(id.data(), id.size()));
  bool blank = true;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t len = detail::utf8_sequence_length(bytes, i);
    if (len == 0 || bytes[i] == std::byte{0}) return false;
    blank = blank && detail::is_unicode_space(detail::utf8_code_point(bytes, i, len));
    i += len;
  }
  return !blank;
}

/// A parsed plugin chunk: views into the chunk payload.
struct plugin_chunk_view {
  std::string_view plugin_id{};
  std::uint32_t kind = 0;           // envelope chunkKind, opaque to the library
  std::uint32_t chunk_version = 0;  // envelope chunkVersion, opaque to the library
  byte_span payload{};              // the bytes after the plugin id
  std::uint32_t chunk_type = 0;     // set by plugin_chunks(): the row's chunkType
  std::uint32_t row = no_index;     // set by plugin_chunks(): the chunk-table row
};

/// Parses the envelope at the start of a plugin chunk's uncompressed payload.
/// Errors are errc::extension_range (R-EXT-RANGES) with field "magic",
/// "version", "pluginIdLength" (id past the payload end) or "pluginId" (empty,
/// blank, NUL or invalid UTF-8). Safe on untrusted input.
[[nodiscard]] inline result<plugin_chunk_view> parse_plugin_chunk(byte_span chunk) noexcept {
  const auto fail = [](const char* field, std::uint64_t value) {
    return make_error(errc::extension_range, {.field = field, .value = value, .has_value = true});
  };
  if (chunk.size() < plugin_envelope_size) return fail("magic", chunk.size());
  const plugin_envelope e = codec<plugin_envelope>::decode(chunk);
  if (e.magic != plugin_envelope_magic) return fail("magic", e.magic);
  if (e.version != plugin_envelope_version) return fail("version", e.version);
  if (chunk.size() - plugin_envelope_size < e.plugin_id_length) return fail("pluginIdLength", e.plugin_id_length);
  const std::string_view id(reinterpret_cast<const char*>(chunk.data()) + plugin_envelope_size, e.plugin_id_length);
  if (!is_valid_plugin_id(id)) return fail("pluginId", e.plugin_id_length);
  return plugin_chunk_view{id, e.chunk_kind, e.chunk_version, chunk.subspan(plugin_envelope_size + e.plugin_id_length)};
}

/// What the envelope of a plugin chunk the library defines itself
/// (untold.integrity, untold.images) must name.
struct plugin_chunk_identity {
  std::string_view plugin_id{};
  std::uint32_t kind = 0;
  std::uint32_t chunk_version = 0;
};

/// The body (the bytes after the plugin id) of `chunk`, the payload of
/// chunk-table row `row` of chunkType `type`, whose envelope must name
/// `expected`. Errors, each with chunk_index `row` and chunk_type `type`:
/// parse_plugin_chunk's (R-EXT-RANGES), then `mismatch` (the chunk's own
/// rule) with field "pluginId" (value: the id's length), "chunkKind" or
/// "chunkVersion" (value: the one found). Safe on untrusted input.
template <class = void>
[[nodiscard]] result<byte_span> plugin_chunk_body(byte_span chunk, const plugin_chunk_identity& expected, errc mismatch,
                                                  std::uint32_t row, std::uint32_t type) noexcept {
  const auto in_row = [&](error e) {
    e.context.chunk_index = row;
    e.context.chunk_type = type;
    return e;
  };
  const auto fail = [&](const char* field, std::uint64_t value) {
    return in_row(make_error(mismatch, {.field = field, .value = value, .has_value = true}));
  };
  const auto envelope = parse_plugin_chunk(chunk);
  if (!envelope) return in_row(envelope.error());
  if (envelope->plugin_id != expected.plugin_id) return fail("pluginId", envelope->plugin_id.size());
  if (envelope->kind != expected.kind) return fail("chunkKind", envelope->kind);
  if (envelope->chunk_version != expected.chunk_version) return fail("chunkVersion", envelope->chunk_version);
  return envelope->payload;
}

/// The payload of a plugin chunk: envelope, plugin id, then `payload`.
/// Errors: errc::invalid_argument, field "pluginId", for an id that
/// is_valid_plugin_id rejects.
[[nodiscard]] inline result<std::vector<std::byte>> encode_plugin_chunk(std::string_view plugin_id, std::uint32_t kind,
                                                                       std::uint32_t chunk_version, byte_span payload) {
  if (!is_valid_plugin_id(plugin_id))
    return make_error(errc::invalid_argument, {.field = "pluginId", .value = plugin_id.size(), .has_value = true});
  std::vector<std::byte> out(plugin_envelope_size + plugin_id.size() + payload.size());
  const plugin_envelope e{plugin_envelope_magic, plugin_envelope_version, static_cast<std::uint16_t>(plugin_id.size()),
                          kind, chunk_version};
  codec<plugin_envelope>::encode(e, out);
  const auto* id = reinterpret_cast<const std::byte*>(plugin_id.data());
  std::byte* at = out.data() + plugin_envelope_size;
  if (!plugin_id.empty()) std::memcpy(at, id, plugin_id.size());
  if (!payload.empty()) std::memcpy(at + plugin_id.size(), payload.data(), payload.size());
  return out;
}

/// Every loaded plugin chunk with a valid envelope, in chunk-table order
/// (after untold::open: all of them). Safe for any asset.
[[nodiscard]] inline std::vector<plugin_chunk_view> plugin_chunks(const asset& a) {
  std::vector<plugin_chunk_view> out;
  for (std::uint32_t row = 0; row < a.chunks().size(); ++row) {
    if (!is_plugin_chunk_type(a.chunks()[row].chunk_type) || !a.is_loaded(row)) continue;
    auto parsed = parse_plugin_chunk(a.payload(row));
    if (!parsed) continue;
    parsed->chunk_type = a.chunks()[row].chunk_type;
    parsed->row = row;
    out.push_back(*parsed);
  }
  return out;
}

}  // namespace untold
