// untold/records.hpp - plain record structs and their byte codecs (spec 3).
//
// Each record type lists its fields once, in file order, in
// `record_traits<R>::fields`. The codec walks that list to decode or encode,
// so the byte layout of a record lives in exactly one place and is written
// field by field (never a struct dump): the structs here may have any layout.
//
//   untold::mesh_record m = untold::codec<untold::mesh_record>::decode(bytes);
//   untold::codec<untold::mesh_record>::encode(m, out);
//
// Codecs never validate values; the reader does (see validate.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "bytes.hpp"
#include "format.hpp"

namespace untold {

using float2 = std::array<float, 2>;
using float3 = std::array<float, 3>;
using float4 = std::array<float, 4>;
/// Column-major 4x4: element (row r, column c) is [c * 4 + r]; translation 12..14.
using mat4 = std::array<float, 16>;

inline constexpr mat4 identity_matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

struct aabb {
  float3 min{0, 0, 0};
  float3 max{0, 0, 0};
  friend constexpr bool operator==(const aabb&, const aabb&) = default;
};

// ---- records ----------------------------------------------------------------

struct file_header {
  std::array<std::uint8_t, 8> magic = file_magic;
  std::uint32_t format_version = 1;
  std::uint32_t file_type = 1;
  std::uint32_t flags = 0;
  std::uint32_t header_size = untold::header_size;
  std::uint32_t chunk_count = 0;
  std::uint32_t mesh_count = 0;
  std::uint32_t material_count = 0;
  std::uint32_t texture_ref_count = 0;
  std::uint32_t entity_count = 0;
  std::uint32_t vertex_layout = 1;
  std::uint32_t reserved0 = 0;
  aabb world_bounds{};
  mat4 root_transform = identity_matrix;
  std::array<std::uint8_t, 32> content_hash{};
  std::array<std::uint8_t, 32> reserved1{};
  friend constexpr bool operator==(const file_header&, const file_header&) = default;
};

struct chunk_entry {
  std::uint32_t chunk_type = 0;
  std::uint32_t compression_type = 0;
  std::uint64_t file_offset = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t element_count = 0;
  std::uint32_t reserved0 = 0;
  friend constexpr bool operator==(const chunk_entry&, const chunk_entry&) = default;
};

struct entity_record {
  std::uint32_t entity_id = 0;
  std::uint32_t parent_entity_id = none;
  std::uint32_t name_offset = none;
  std::uint32_t first_mesh_record_index = 0;
  std::uint32_t mesh_record_count = 0;
  std::uint32_t flags = 0;
  aabb local_bounds{};
  aabb world_bounds{};
  mat4 local_transform = identity_matrix;
  friend constexpr bool operator==(const entity_record&, const entity_record&) = default;
};

struct mesh_record {
  std::uint32_t entity_id = 0;
  std::uint32_t mesh_name_offset = none;
  std::uint32_t material_index = none;
  std::uint32_t index_type = 1;
  std::uint32_t vertex_count = 0;
  std::uint32_t index_count = 0;
  std::uint32_t vertex_stride_bytes = vertex_stride_pbr_static_v1;
  std::uint32_t flags = 0;
  std::uint64_t vertex_data_offset = 0;
  std::uint64_t index_data_offset = 0;
  std::uint64_t vertex_data_size_bytes = 0;
  std::uint64_t index_data_size_bytes = 0;
  std::uint64_t estimated_gpu_bytes = 0;
  /// Low 32 bits: edgeIndexDataOffset (bytes into EDGE_INDEX_DATA);
  /// high 32 bits: edgeIndexCount. See edge_index_offset()/edge_index_count().
  std::uint64_t reserved0 = 0;
  aabb local_bounds{};

  [[nodiscard]] constexpr std::uint32_t edge_index_offset() const noexcept {
    return static_cast<std::uint32_t>(reserved0 & 0xFFFFFFFFu);
  }
  [[nodiscard]] constexpr std::uint32_t edge_index_count() const noexcept {
    return static_cast<std::uint32_t>(reserved0 >> 32);
  }
  constexpr void set_edge_indices(std::uint32_t offset, std::uint32_t count) noexcept {
    reserved0 = (std::uint64_t{count} << 32) | offset;
  }
  friend constexpr bool operator==(const mesh_record&, const mesh_record&) = default;
};

/// Material record; its size depends on the file's formatVersion (88/88/100/108).
/// Fields absent from older versions decode to the spec defaults. Flags bits
/// 0-1 are the alpha mode (alpha_mode(), as the reference exporter writes
/// them), bit 2 is untold's double-sided convention (double_sided()); the
/// other bits pass through.
struct material_record {
  std::uint32_t name_offset = none;
  std::uint32_t flags = 0;
  float4 base_color_factor{1, 1, 1, 1};
  /// Stored as written. The reference engine treats it as 0 in version-1 files.
  float3 emissive_factor{0, 0, 0};
  float normal_scale = 1;
  float metallic_factor = 1;
  float roughness_factor = 1;
  float occlusion_strength = 1;
  float alpha_cutoff = 0.5f;
  std::uint32_t base_color_texture = none;
  std::uint32_t normal_texture = none;
  std::uint32_t metallic_texture = none;
  std::uint32_t roughness_texture = none;
  std::uint32_t emissive_texture = none;
  std::uint32_t occlusion_texture = none;
  std::uint32_t height_texture = none;  // v3+
  float height_scale = 0.05f;           // v3+
  float height_midlevel = 0.5f;         // v3+
  float height_remap_min = 0.0f;        // v4
  float height_remap_max = 1.0f;        // v4
  /// Roughness channel in bits 0-1, metallic channel in bits 2-3.
  std::uint32_t packed_channels = 0;
  /// The last word in versions 1-3 (passed through; written 0).
  std::uint32_t reserved = 0;
  /// v4: the last word (offset 104), KHR_materials_transmission's factor;
  /// 0 = opaque to light, also what older v4 writers left there.
  float transmission_factor = 0.0f;

  /// Bits 0-1 of flags. A stored 3 is returned as is (no enumerator).
  [[nodiscard]] constexpr untold::alpha_mode alpha_mode() const noexcept {
    return static_cast<untold::alpha_mode>(flags & material_flags::alpha_mode_mask);
  }
  constexpr void set_alpha_mode(untold::alpha_mode mode) noexcept {
    flags = (flags & ~material_flags::alpha_mode_mask) |
            (static_cast<std::uint32_t>(mode) & material_flags::alpha_mode_mask);
  }
  /// Flags bit 2: untold's double-sided convention (material_flags::double_sided).
  [[nodiscard]] constexpr bool double_sided() const noexcept { return (flags & material_flags::double_sided) != 0; }
  constexpr void set_double_sided(bool on) noexcept {
    flags = on ? flags | material_flags::double_sided : flags & ~material_flags::double_sided;
  }

  [[nodiscard]] constexpr texture_channel roughness_channel() const noexcept {
    return static_cast<texture_channel>(packed_channels & 3u);
  }
  [[nodiscard]] constexpr texture_channel metallic_channel() const noexcept {
    return static_cast<texture_channel>((packed_channels >> 2) & 3u);
  }
  constexpr void set_channels(texture_channel roughness, texture_channel metallic) noexcept {
    packed_channels = (packed_channels & ~0xFu) | static_cast<std::uint32_t>(roughness) |
                      (static_cast<std::uint32_t>(metallic) << 2);
  }
  friend constexpr bool operator==(const material_record&, const material_record&) = default;
};

struct texture_record {
  std::uint32_t name_offset = none;
  std::uint32_t uri_offset = none;
  std::uint32_t texture_format = 0;
  std::uint32_t flags = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t mip_count = 0;
  std::uint32_t reserved0 = 0;
  friend constexpr bool operator==(const texture_record&, const texture_record&) = default;
};

// ---- field lists ------------------------------------------------------------

/// record_traits<R>::fields(visitor, record, format_version) visits every field
/// of R in file order as visitor(field, "specName"). `record` may be const.
/// A field may itself be a record with record_traits (written in place), and
/// `zero_padding<N>` stands for N bytes a writer zeroes and a reader skips.
/// Every format's fixed-layout records are described this way (the core's
/// here, assetc's in assetc/hmesh.hpp and hmat.hpp), so one codec reads and
/// writes them all.
template <class R>
struct record_traits;

/// N bytes of padding inside a record: skipped on decode, zero on encode.
template <std::size_t N>
struct zero_padding {
  static constexpr std::size_t size = N;
};

namespace detail {
template <class T>
inline constexpr bool is_zero_padding = false;
template <std::size_t N>
inline constexpr bool is_zero_padding<zero_padding<N>> = true;
template <class T>
concept described_record = requires { record_traits<T>::size(max_format_version); };
}  // namespace detail

template <>
struct record_traits<file_header> {
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 204; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.magic, "magic");
    v(r.format_version, "formatVersion");
    v(r.file_type, "fileType");
    v(r.flags, "flags");
    v(r.header_size, "headerSize");
    v(r.chunk_count, "chunkCount");
    v(r.mesh_count, "meshCount");
    v(r.material_count, "materialCount");
    v(r.texture_ref_count, "textureRefCount");
    v(r.entity_count, "entityCount");
    v(r.vertex_layout, "vertexLayout");
    v(r.reserved0, "reserved0");
    v(r.world_bounds, "worldBounds");
    v(r.root_transform, "rootTransform");
    v(r.content_hash, "contentHash");
    v(r.reserved1, "reserved1");
  }
};

template <>
struct record_traits<chunk_entry> {
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 40; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.chunk_type, "chunkType");
    v(r.compression_type, "compressionType");
    v(r.file_offset, "fileOffset");
    v(r.compressed_size, "compressedSize");
    v(r.uncompressed_size, "uncompressedSize");
    v(r.element_count, "elementCount");
    v(r.reserved0, "reserved0");
  }
};

template <>
struct record_traits<entity_record> {
  static constexpr chunk_type table = chunk_type::entity_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 136; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.parent_entity_id, "parentEntityId");
    v(r.name_offset, "nameOffset");
    v(r.first_mesh_record_index, "firstMeshRecordIndex");
    v(r.mesh_record_count, "meshRecordCount");
    v(r.flags, "flags");
    v(r.local_bounds, "localBounds");
    v(r.world_bounds, "worldBounds");
    v(r.local_transform, "localTransform");
  }
};

template <>
struct record_traits<mesh_record> {
  static constexpr chunk_type table = chunk_type::mesh_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 104; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.entity_id, "entityId");
    v(r.mesh_name_offset, "meshNameOffset");
    v(r.material_index, "materialIndex");
    v(r.index_type, "indexType");
    v(r.vertex_count, "vertexCount");
    v(r.index_count, "indexCount");
    v(r.vertex_stride_bytes, "vertexStrideBytes");
    v(r.flags, "flags");
    v(r.vertex_data_offset, "vertexDataOffset");
    v(r.index_data_offset, "indexDataOffset");
    v(r.vertex_data_size_bytes, "vertexDataSizeBytes");
    v(r.index_data_size_bytes, "indexDataSizeBytes");
    v(r.estimated_gpu_bytes, "estimatedGPUBytes");
    v(r.reserved0, "reserved0");
    v(r.local_bounds, "localBounds");
  }
};

template <>
struct record_traits<material_record> {
  static constexpr chunk_type table = chunk_type::material_table;
  static constexpr std::size_t size(std::uint32_t format_version = max_format_version) noexcept {
    return material_record_size(format_version);
  }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t format_version) {
    v(r.name_offset, "nameOffset");
    v(r.flags, "flags");
    v(r.base_color_factor, "baseColorFactor");
    v(r.emissive_factor, "emissiveFactor");
    v(r.normal_scale, "normalScale");
    v(r.metallic_factor, "metallicFactor");
    v(r.roughness_factor, "roughnessFactor");
    v(r.occlusion_strength, "occlusionStrength");
    v(r.alpha_cutoff, "alphaCutoff");
    v(r.base_color_texture, "baseColorTextureIndex");
    v(r.normal_texture, "normalTextureIndex");
    v(r.metallic_texture, "metallicTextureIndex");
    v(r.roughness_texture, "roughnessTextureIndex");
    v(r.emissive_texture, "emissiveTextureIndex");
    v(r.occlusion_texture, "occlusionTextureIndex");
    if (format_version >= 3) {
      v(r.height_texture, "heightTextureIndex");
      v(r.height_scale, "heightScale");
      v(r.height_midlevel, "heightMidlevel");
    }
    if (format_version >= 4) {
      v(r.height_remap_min, "heightRemapMin");
      v(r.height_remap_max, "heightRemapMax");
    }
    v(r.packed_channels, "packedChannels");
    if (format_version >= 4)
      v(r.transmission_factor, "transmissionFactor");
    else
      v(r.reserved, "reserved");
  }
};

template <>
struct record_traits<texture_record> {
  static constexpr chunk_type table = chunk_type::texture_table;
  static constexpr std::size_t size(std::uint32_t = max_format_version) noexcept { return 32; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t) {
    v(r.name_offset, "nameOffset");
    v(r.uri_offset, "uriOffset");
    v(r.texture_format, "textureFormat");
    v(r.flags, "flags");
    v(r.width, "width");
    v(r.height, "height");
    v(r.mip_count, "mipCount");
    v(r.reserved0, "reserved0");
  }
};

// ---- the codec --------------------------------------------------------------

namespace detail {

struct field_decoder {
  const std::byte* cursor;
  template <class T>
  void operator()(T& field, const char*) noexcept {
    if constexpr (is_zero_padding<std::remove_const_t<T>>) {
      cursor += T::size;
    } else if constexpr (described_record<T>) {
      record_traits<T>::fields(*this, field, max_format_version);
    } else if constexpr (std::is_same_v<T, aabb>) {
      (*this)(field.min, nullptr);
      (*this)(field.max, nullptr);
    } else if constexpr (std::is_array_v<T> || requires { std::tuple_size<T>::value; }) {
      for (auto& element : field) (*this)(element, nullptr);
    } else {
      field = load_le_unchecked<T>(cursor);
      cursor += sizeof(T);
    }
  }
};

struct field_encoder {
  std::byte* cursor;
  template <class T>
  void operator()(const T& field, const char*) noexcept {
    if constexpr (is_zero_padding<T>) {
      for (std::size_t i = 0; i < T::size; ++i) *cursor++ = std::byte{0};
    } else if constexpr (described_record<T>) {
      record_traits<T>::fields(*this, field, max_format_version);
    } else if constexpr (std::is_same_v<T, aabb>) {
      (*this)(field.min, nullptr);
      (*this)(field.max, nullptr);
    } else if constexpr (std::is_array_v<T> || requires { std::tuple_size<T>::value; }) {
      for (const auto& element : field) (*this)(element, nullptr);
    } else {
      store_le_unchecked<T>(cursor, field);
      cursor += sizeof(T);
    }
  }
};

}  // namespace detail

/// Field-by-field codec of record type R.
template <class R>
struct codec {
  /// Encoded size in bytes at a format version (only materials vary).
  static constexpr std::size_t size(std::uint32_t format_version = max_format_version) noexcept {
    return record_traits<R>::size(format_version);
  }

  /// Decodes one record from bytes[0, size(format_version)).
  /// Precondition: bytes.size() >= size(format_version). Any byte values are
  /// accepted (no validation), so it is safe on untrusted bytes of that size.
  [[nodiscard]] static R decode(byte_span bytes, std::uint32_t format_version = max_format_version) noexcept {
    R record{};
    detail::field_decoder decoder{bytes.data()};
    record_traits<R>::fields(decoder, record, format_version);
    return record;
  }

  /// Encodes one record into out[0, size(format_version)).
  /// Precondition: out.size() >= size(format_version).
  static void encode(const R& record, mutable_byte_span out,
                     std::uint32_t format_version = max_format_version) noexcept {
    detail::field_encoder encoder{out.data()};
    record_traits<R>::fields(encoder, record, format_version);
  }
};

}  // namespace untold
