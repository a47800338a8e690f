// untold/format.hpp - the fixed numbers of the .untold format (spec sections
// 2 and 3): enumerations, sizes, the magic, and which chunks each file type
// requires. Values are the ones the reference engine writes; never renumber.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace untold {

/// "No reference" sentinel of every u32 index and string offset.
inline constexpr std::uint32_t none = 0xFFFFFFFFu;

inline constexpr std::array<std::uint8_t, 8> file_magic = {0x55, 0x4E, 0x54, 0x4F, 0x4C, 0x44, 0x00, 0x00};
inline constexpr std::uint32_t header_size = 204;
inline constexpr std::uint32_t chunk_entry_size = 40;
inline constexpr std::uint32_t chunk_alignment = 16;
inline constexpr std::uint32_t min_format_version = 1;
inline constexpr std::uint32_t max_format_version = 4;
inline constexpr std::uint32_t vertex_stride_pbr_static_v1 = 32;
/// PBR_QUANT_V1 (vertexLayout 2, the library's extension; vertex_quant.hpp).
inline constexpr std::uint32_t vertex_stride_pbr_quant_v1 = 24;

enum class file_type : std::uint32_t { tile = 1, lod = 2, hlod = 3, shared = 4, animation = 5 };

enum class chunk_type : std::uint32_t {
  string_table = 1,
  entity_table = 2,
  mesh_table = 3,
  material_table = 4,
  texture_table = 5,
  vertex_data = 6,
  index_data = 7,
  skeleton_table = 8,
  skeleton_joint_table = 9,
  skin_table = 10,
  skin_joint_mapping_table = 11,
  animation_clip_table = 12,
  animation_channel_table = 13,
  translation_keyframe_table = 14,
  rotation_keyframe_table = 15,
  joint_index_data = 16,
  joint_weight_data = 17,
  edge_index_data = 18,
  light_table = 19,
  camera_table = 20,
  color_management_table = 21,
  color_grade_lut_table = 22,
  // Written by the reference exporter's current version (docs/format.md,
  // "Morph targets and muscles"): 23, 24, 26, 27 are typed tables here.
  morph_target_table = 23,
  morph_target_data = 24,
  /// The reference engine's link to a Gaussian splat payload. Named, but kept
  /// as a raw chunk: its record layout is not published with the exporter.
  gaussian_asset_table = 25,
  morph_driver_table = 26,
  muscle_table = 27,
};

/// Highest core chunk type the library names; 28..0x7FFF are unknown core
/// types, >= 0x8000 plugin chunks. Every type up to it is interpreted except
/// gaussian_asset_table (see is_known_chunk_type).
inline constexpr std::uint32_t max_known_chunk_type = 27;
inline constexpr std::uint32_t first_plugin_chunk_type = 0x8000;

/// 3 and 4 are the library's extension (mesh_codec.hpp): the reference
/// engine reads 0-2 only.
enum class compression : std::uint32_t { none = 0, lz4 = 1, zstd = 2, meshopt = 3, meshopt_zstd = 4 };
/// 2 is the library's extension (vertex_quant.hpp): the reference engine
/// reads 1 only.
enum class vertex_layout : std::uint32_t { pbr_static_v1 = 1, pbr_quant_v1 = 2 };
enum class index_type : std::uint32_t { uint16 = 1, uint32 = 2 };

enum class texture_format : std::uint32_t {
  unknown = 0,
  rgba8 = 1,
  bc7 = 2,
  bc5 = 3,
  astc4x4 = 4,
  astc5x5 = 5,
  astc6x6 = 6,
  astc8x8 = 7,
  rgba16_float = 8,
  r16_unorm = 9,
};
inline constexpr std::uint32_t max_texture_format = 9;

namespace texture_flags {
inline constexpr std::uint32_t srgb = 1u << 0;
inline constexpr std::uint32_t normal_map = 1u << 1;
inline constexpr std::uint32_t lut = 1u << 2;
inline constexpr std::uint32_t height = 1u << 3;
inline constexpr std::uint32_t emissive = 1u << 6;
inline constexpr std::uint32_t occlusion = 1u << 7;
}  // namespace texture_flags

enum class texture_channel : std::uint32_t { r = 0, g = 1, b = 2, a = 3 };

enum class light_type : std::uint32_t { directional = 1, point = 2, spot = 3, area = 4 };

/// Material alpha mode: bits 0-1 of a material record's flags, as the
/// reference exporter writes them (the engine's MaterialAlphaMode). The value
/// 3 is not defined; it is passed through.
enum class alpha_mode : std::uint32_t { opaque = 0, mask = 1, blend = 2 };

namespace material_flags {
/// The alpha-mode bits of a material's flags (alpha_mode values).
inline constexpr std::uint32_t alpha_mode_mask = 3u;
/// Double-sided (no back-face culling). An untold library convention, not
/// the reference engine's (it defines no material flag bits beyond the
/// alpha mode and writes 0): an engine that ignores the bit culls back faces
/// as for any material. docs/format.md, "Material flags".
inline constexpr std::uint32_t double_sided = 1u << 2;
}  // namespace material_flags

namespace morph_flags {
/// A morph target whose entries carry normal deltas (else those are zero).
inline constexpr std::uint32_t has_normal_deltas = 1u << 0;
}  // namespace morph_flags

namespace muscle_flags {
/// A muscle whose contraction follows driverJointOffset's joint angle.
inline constexpr std::uint32_t has_driver = 1u << 0;
}  // namespace muscle_flags

namespace light_flags {
inline constexpr std::uint32_t casts_shadow = 1u << 0;
inline constexpr std::uint32_t radiometric = 1u << 1;
inline constexpr std::uint32_t custom_distance = 1u << 2;
}  // namespace light_flags

[[nodiscard]] constexpr bool is_known_file_type(std::uint32_t v) noexcept { return v >= 1 && v <= 5; }
[[nodiscard]] constexpr bool is_known_compression(std::uint32_t v) noexcept { return v <= 4; }
/// The vertex stride of a vertexLayout: 32 for PBR_STATIC_V1, 24 for
/// PBR_QUANT_V1, 0 for an unknown layout.
[[nodiscard]] constexpr std::uint32_t vertex_stride_of(std::uint32_t layout) noexcept {
  return layout == 1 ? vertex_stride_pbr_static_v1 : layout == 2 ? vertex_stride_pbr_quant_v1 : 0;
}
[[nodiscard]] constexpr std::string_view vertex_layout_name(std::uint32_t layout) noexcept {
  return layout == 1 ? "pbrStaticV1" : layout == 2 ? "pbrQuantV1" : "unknown";
}
[[nodiscard]] constexpr bool is_known_light_type(std::uint32_t v) noexcept { return v >= 1 && v <= 4; }
/// A core chunk type the library interprets: 1..27 except 25 (the Gaussian
/// asset table, whose layout is not published: it stays a raw chunk, like
/// 28..0x7FFF). Interpreted types obey R-DUP-CHUNK and R-TABLE-SIZE.
[[nodiscard]] constexpr bool is_known_chunk_type(std::uint32_t v) noexcept {
  return v >= 1 && v <= max_known_chunk_type && v != static_cast<std::uint32_t>(chunk_type::gaussian_asset_table);
}
[[nodiscard]] constexpr bool is_plugin_chunk_type(std::uint32_t v) noexcept { return v >= first_plugin_chunk_type; }

/// Whether a core chunk holds geometry or other bulk data (vertex, index,
/// joint index, joint weight, edge index, morph target data) rather than
/// metadata.
[[nodiscard]] constexpr bool is_data_chunk(std::uint32_t type) noexcept {
  return type == 6 || type == 7 || type == 16 || type == 17 || type == 18 || type == 24;
}
/// Metadata = the string table and every known record table: what a
/// byte-range open loads, and what a writer puts first (spec 7).
[[nodiscard]] constexpr bool is_metadata_chunk(std::uint32_t type) noexcept {
  return is_known_chunk_type(type) && !is_data_chunk(type);
}

/// Bytes per index for a valid index type (0 for an invalid one).
[[nodiscard]] constexpr std::uint32_t index_size(std::uint32_t type) noexcept {
  return type == 1 ? 2u : type == 2 ? 4u : 0u;
}

/// Material record size for a format version (spec 3.3): 88, 88, 100, 108.
/// Version 4 stores transmissionFactor in the last word (offset 104).
[[nodiscard]] constexpr std::uint32_t material_record_size(std::uint32_t format_version) noexcept {
  return format_version >= 4 ? 108u : format_version == 3 ? 100u : 88u;
}

[[nodiscard]] constexpr std::string_view chunk_type_name(std::uint32_t type) noexcept {
  constexpr std::array<std::string_view, max_known_chunk_type + 1> names = {
      "unknown",
      "stringTable",
      "entityTable",
      "meshTable",
      "materialTable",
      "textureTable",
      "vertexData",
      "indexData",
      "skeletonTable",
      "skeletonJointTable",
      "skinTable",
      "skinJointMappingTable",
      "animationClipTable",
      "animationChannelTable",
      "translationKeyframeTable",
      "rotationKeyframeTable",
      "jointIndexData",
      "jointWeightData",
      "edgeIndexData",
      "lightTable",
      "cameraTable",
      "colorManagementTable",
      "colorGradeLUTTable",
      "morphTargetTable",
      "morphTargetData",
      "gaussianAssetTable",
      "morphDriverTable",
      "muscleTable",
  };
  if (type >= 1 && type <= max_known_chunk_type) return names[type];
  return is_plugin_chunk_type(type) ? "plugin" : "unknown";
}

[[nodiscard]] constexpr std::string_view compression_name(std::uint32_t c) noexcept {
  constexpr std::array<std::string_view, 5> names = {"none", "lz4", "zstd", "meshopt", "meshopt+zstd"};
  return c < names.size() ? names[c] : "unknown";
}

[[nodiscard]] constexpr std::string_view file_type_name(std::uint32_t t) noexcept {
  constexpr std::array<std::string_view, 6> names = {"unknown", "tile", "lod", "hlod", "shared", "animation"};
  return is_known_file_type(t) ? names[t] : names[0];
}

/// Record size of a record-table chunk type at a format version; 0 for raw data
/// chunks (vertex/index/joint/edge data), unknown and plugin chunks. Morph
/// target data (24) counts its 16-byte entries in elementCount, as the
/// reference exporter writes it, so it has a record size too.
[[nodiscard]] constexpr std::uint32_t record_size_of_chunk(std::uint32_t type, std::uint32_t format_version) noexcept {
  switch (type) {
    case 2: return 136;  // entity
    case 3: return 104;  // mesh
    case 4: return material_record_size(format_version);
    case 5: return 32;   // texture
    case 8: return 24;   // skeleton
    case 9: return 144;  // skeleton joint
    case 10: return 48;  // skin
    case 11: return 4;   // skin joint mapping
    case 12: return 28;  // animation clip
    case 13: return 28;  // animation channel
    case 14: return 20;  // translation keyframe
    case 15: return 20;  // rotation keyframe
    case 19: return 176; // light
    case 20: return 144; // camera
    case 21: return 32;  // color management
    case 22: return 32;  // color-grade LUT
    case 23: return 24;  // morph target
    case 24: return 16;  // morph target entry
    case 26: return 36;  // morph driver
    case 27: return 128; // muscle
    default: return 0;
  }
}

/// The chunk types a file type must contain (spec R-REQUIRED).
[[nodiscard]] constexpr std::span<const chunk_type> required_chunks(file_type t) noexcept;

namespace detail {
inline constexpr std::array<chunk_type, 7> required_scene_chunks = {
    chunk_type::string_table,  chunk_type::entity_table, chunk_type::mesh_table, chunk_type::material_table,
    chunk_type::texture_table, chunk_type::vertex_data,  chunk_type::index_data};
inline constexpr std::array<chunk_type, 5> required_animation_chunks = {
    chunk_type::string_table, chunk_type::animation_clip_table, chunk_type::animation_channel_table,
    chunk_type::translation_keyframe_table, chunk_type::rotation_keyframe_table};
}  // namespace detail

constexpr std::span<const chunk_type> required_chunks(file_type t) noexcept {
  if (t == file_type::animation) return detail::required_animation_chunks;
  return detail::required_scene_chunks;
}

/// Whether `type` is one of required_chunks(t).
[[nodiscard]] constexpr bool is_required_chunk(file_type t, std::uint32_t type) noexcept {
  for (const chunk_type required : required_chunks(t))
    if (static_cast<std::uint32_t>(required) == type) return true;
  return false;
}

}  // namespace untold
