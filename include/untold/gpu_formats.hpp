// untold/gpu_formats.hpp - vertex-input descriptions of every vertex layout
// the library reads, in the terms of each graphics API: Vulkan (VkFormat),
// Direct3D 11/12 (DXGI_FORMAT), Metal (MTLVertexFormat), WebGPU
// (GPUVertexFormat) and OpenGL (glVertexAttrib[I]Pointer type, size,
// normalized). Index types map to each API's index format. docs/gpu.md has
// the same tables (tests/gpu checks they match this header) and the shader
// side (include/untold/shaders/untold_decode.glsl).
//
// No API header is needed: the enum values are the APIs' published numbers,
// pinned by tests/gpu/test_formats.cpp against <vulkan/vulkan.h> and the
// published DXGI, Metal and OpenGL values. Everything here is constexpr data;
// nothing reads input, so nothing here can fail on untrusted bytes.
//
// Where an API has no native format for an encoding (PBR_STATIC_V1's signed
// 10:10:10:2 normal and tangent on Direct3D and WebGPU), the table gives the
// format to fetch the raw bits with instead (R32_UINT / "uint32") and sets
// `shader_decode`: the shader unpacks them (untold_unpack_snorm10_10_10_2).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "format.hpp"

namespace untold::gpu {

/// The encodings the library's vertex layouts use, one per distinct API format.
enum class attribute_format : std::uint8_t {
  float32,
  float32x2,
  float32x3,
  float32x4,
  float16x2,
  unorm8x4,
  uint8x4,
  snorm16x2,
  sint16x2,
  uint16x4,
  sint32,
  sint32x4,
  snorm10_10_10_2,  // x, y, z: 10-bit snorm (bits 0-29), w: 2-bit snorm (bits 30-31)
  unorm16x4,
  snorm8x2,
};
inline constexpr std::size_t attribute_format_count = 15;

/// An enumerator of an API: its numeric value and its name in the API's headers.
/// `shader_decode`: the API has no native format for the encoding; `value`
/// fetches the raw bits and the shader decodes them.
struct api_enum {
  std::uint32_t value = 0;
  std::string_view name{};
  bool shader_decode = false;
};

/// WebGPU names formats by string (GPUVertexFormat / GPUIndexFormat); the
/// numeric values of the C header webgpu.h have changed between its
/// versions, so only the name is given.
struct webgpu_enum {
  std::string_view name{};
  bool shader_decode = false;
};

/// glVertexAttribPointer(location, size, type, normalized, stride, offset),
/// or glVertexAttribIPointer(location, size, type, stride, offset) when
/// `integer` (the shader input is then an int/uint vector).
struct opengl_attribute {
  std::uint32_t type = 0;  // GL_FLOAT, GL_HALF_FLOAT, GL_SHORT, ...
  std::string_view type_name{};
  std::uint8_t size = 0;   // components, 1..4
  bool normalized = false;
  bool integer = false;
};

/// One attribute_format in every API.
struct format_info {
  attribute_format format{};
  std::string_view name{};       // the library's name (= the WebGPU name where one exists)
  std::uint32_t bytes = 0;       // size of one element in the vertex
  std::uint32_t components = 0;  // what the shader sees (vec2 / vec3 / vec4 ...)
  api_enum vulkan{};             // VkFormat
  api_enum dxgi{};               // DXGI_FORMAT (Direct3D 11 and 12 input layouts)
  api_enum metal{};              // MTLVertexFormat
  webgpu_enum webgpu{};          // GPUVertexFormat
  opengl_attribute opengl{};
};

// OpenGL type enumerants (glcorearb.h).
inline constexpr std::uint32_t gl_byte = 0x1400;
inline constexpr std::uint32_t gl_unsigned_byte = 0x1401;
inline constexpr std::uint32_t gl_short = 0x1402;
inline constexpr std::uint32_t gl_unsigned_short = 0x1403;
inline constexpr std::uint32_t gl_int = 0x1404;
inline constexpr std::uint32_t gl_unsigned_int = 0x1405;
inline constexpr std::uint32_t gl_float = 0x1406;
inline constexpr std::uint32_t gl_half_float = 0x140B;
inline constexpr std::uint32_t gl_int_2_10_10_10_rev = 0x8D9F;

/// Indexed by attribute_format.
inline constexpr std::array<format_info, attribute_format_count> formats{{
    {attribute_format::float32, "float32", 4, 1,
     {100, "VK_FORMAT_R32_SFLOAT"}, {41, "DXGI_FORMAT_R32_FLOAT"}, {28, "MTLVertexFormatFloat"},
     {"float32"}, {gl_float, "GL_FLOAT", 1, false, false}},
    {attribute_format::float32x2, "float32x2", 8, 2,
     {103, "VK_FORMAT_R32G32_SFLOAT"}, {16, "DXGI_FORMAT_R32G32_FLOAT"}, {29, "MTLVertexFormatFloat2"},
     {"float32x2"}, {gl_float, "GL_FLOAT", 2, false, false}},
    {attribute_format::float32x3, "float32x3", 12, 3,
     {106, "VK_FORMAT_R32G32B32_SFLOAT"}, {6, "DXGI_FORMAT_R32G32B32_FLOAT"}, {30, "MTLVertexFormatFloat3"},
     {"float32x3"}, {gl_float, "GL_FLOAT", 3, false, false}},
    {attribute_format::float32x4, "float32x4", 16, 4,
     {109, "VK_FORMAT_R32G32B32A32_SFLOAT"}, {2, "DXGI_FORMAT_R32G32B32A32_FLOAT"}, {31, "MTLVertexFormatFloat4"},
     {"float32x4"}, {gl_float, "GL_FLOAT", 4, false, false}},
    {attribute_format::float16x2, "float16x2", 4, 2,
     {83, "VK_FORMAT_R16G16_SFLOAT"}, {34, "DXGI_FORMAT_R16G16_FLOAT"}, {25, "MTLVertexFormatHalf2"},
     {"float16x2"}, {gl_half_float, "GL_HALF_FLOAT", 2, false, false}},
    {attribute_format::unorm8x4, "unorm8x4", 4, 4,
     {37, "VK_FORMAT_R8G8B8A8_UNORM"}, {28, "DXGI_FORMAT_R8G8B8A8_UNORM"}, {9, "MTLVertexFormatUChar4Normalized"},
     {"unorm8x4"}, {gl_unsigned_byte, "GL_UNSIGNED_BYTE", 4, true, false}},
    {attribute_format::uint8x4, "uint8x4", 4, 4,
     {41, "VK_FORMAT_R8G8B8A8_UINT"}, {30, "DXGI_FORMAT_R8G8B8A8_UINT"}, {3, "MTLVertexFormatUChar4"},
     {"uint8x4"}, {gl_unsigned_byte, "GL_UNSIGNED_BYTE", 4, false, true}},
    {attribute_format::snorm16x2, "snorm16x2", 4, 2,
     {78, "VK_FORMAT_R16G16_SNORM"}, {37, "DXGI_FORMAT_R16G16_SNORM"}, {22, "MTLVertexFormatShort2Normalized"},
     {"snorm16x2"}, {gl_short, "GL_SHORT", 2, true, false}},
    {attribute_format::sint16x2, "sint16x2", 4, 2,
     {82, "VK_FORMAT_R16G16_SINT"}, {38, "DXGI_FORMAT_R16G16_SINT"}, {16, "MTLVertexFormatShort2"},
     {"sint16x2"}, {gl_short, "GL_SHORT", 2, false, true}},
    {attribute_format::uint16x4, "uint16x4", 8, 4,
     {95, "VK_FORMAT_R16G16B16A16_UINT"}, {12, "DXGI_FORMAT_R16G16B16A16_UINT"}, {15, "MTLVertexFormatUShort4"},
     {"uint16x4"}, {gl_unsigned_short, "GL_UNSIGNED_SHORT", 4, false, true}},
    {attribute_format::sint32, "sint32", 4, 1,
     {99, "VK_FORMAT_R32_SINT"}, {43, "DXGI_FORMAT_R32_SINT"}, {32, "MTLVertexFormatInt"},
     {"sint32"}, {gl_int, "GL_INT", 1, false, true}},
    {attribute_format::sint32x4, "sint32x4", 16, 4,
     {108, "VK_FORMAT_R32G32B32A32_SINT"}, {4, "DXGI_FORMAT_R32G32B32A32_SINT"}, {35, "MTLVertexFormatInt4"},
     {"sint32x4"}, {gl_int, "GL_INT", 4, false, true}},
    // No signed 10:10:10:2 in DXGI (only R10G10B10A2_UNORM/UINT) nor in WebGPU
    // (only "unorm10-10-10-2"): fetch the u32 and unpack it in the shader.
    // OpenGL >= 4.2 / ES 3.0 convert with max(q / 511, -1), like Vulkan and
    // Metal; older desktop GL used (2q + 1) / 1023 for normalized packed types.
    {attribute_format::snorm10_10_10_2, "snorm10-10-10-2", 4, 4,
     {65, "VK_FORMAT_A2B10G10R10_SNORM_PACK32"}, {42, "DXGI_FORMAT_R32_UINT", true},
     {40, "MTLVertexFormatInt1010102Normalized"}, {"uint32", true},
     {gl_int_2_10_10_10_rev, "GL_INT_2_10_10_10_REV", 4, true, false}},
    {attribute_format::unorm16x4, "unorm16x4", 8, 4,
     {91, "VK_FORMAT_R16G16B16A16_UNORM"}, {11, "DXGI_FORMAT_R16G16B16A16_UNORM"},
     {21, "MTLVertexFormatUShort4Normalized"}, {"unorm16x4"}, {gl_unsigned_short, "GL_UNSIGNED_SHORT", 4, true, false}},
    {attribute_format::snorm8x2, "snorm8x2", 2, 2,
     {17, "VK_FORMAT_R8G8_SNORM"}, {51, "DXGI_FORMAT_R8G8_SNORM"}, {10, "MTLVertexFormatChar2Normalized"},
     {"snorm8x2"}, {gl_byte, "GL_BYTE", 2, true, false}},
}};

/// The API formats of `f`. Precondition: f is an enumerator of attribute_format.
[[nodiscard]] constexpr const format_info& info(attribute_format f) noexcept {
  return formats[static_cast<std::size_t>(f)];
}

/// What an attribute means.
enum class semantic : std::uint8_t { position, normal, tangent, texcoord, color, joints, weights };

/// The attribute's name as in HLSL semantics. Precondition: s is an enumerator of semantic.
[[nodiscard]] constexpr std::string_view name(semantic s) noexcept {
  constexpr std::array<std::string_view, 7> names{"POSITION", "NORMAL", "TANGENT", "TEXCOORD",
                                                  "COLOR",    "JOINTS", "WEIGHTS"};
  return names[static_cast<std::size_t>(s)];
}

/// What the shader does after the fetch (the functions of untold_decode.glsl).
enum class shader_step : std::uint8_t {
  none,
  /// vec4 from snorm10-10-10-2: xyz as fetched, handedness = w < 0 ? -1 : +1
  /// (untold_handedness). Where the format has shader_decode, unpack the u32
  /// first (untold_unpack_snorm10_10_10_2).
  handedness_from_w,
  /// vec2 snorm16 octahedral -> unit vec3 (untold_oct_decode).
  octahedral,
  /// ivec2 sint16 octahedral; handedness = bit 0 of x (untold_oct_decode_tangent).
  /// Integer fetch on purpose: as snorm, -32768 and -32767 both become -1.0
  /// and bit 0 would be lost.
  octahedral_tangent,
  /// PBR_QUANT_V1 position: vec4 unorm16 -> mix(localBounds.min, .max, xyz)
  /// (untold_quant_position; the mesh's bounds are a per-draw constant);
  /// w carries the tangent's handedness (untold_quant_handedness).
  bounds_dequantize,
  /// PBR_QUANT_V1 tangent: vec2 snorm8 octahedral direction
  /// (untold_oct_decode), handedness from the position's w.
  octahedral_handedness_from_position,
};

/// One attribute of a vertex layout.
struct vertex_attribute {
  semantic meaning{};
  std::uint8_t semantic_index = 0;  // TEXCOORD_0 / TEXCOORD_1 ...
  attribute_format format{};
  std::uint32_t offset = 0;    // bytes from the start of the vertex
  std::uint32_t location = 0;  // the shader input location the library's shaders and docs use
  shader_step decode = shader_step::none;
};

/// A vertex layout: one vertex buffer binding of `stride` bytes per vertex.
struct vertex_layout_desc {
  std::string_view name{};
  std::uint32_t stride = 0;
  std::span<const vertex_attribute> attributes{};
};

/// Shader input locations used by the library's shaders and docs.
namespace location {
inline constexpr std::uint32_t position = 0;
inline constexpr std::uint32_t normal = 1;
inline constexpr std::uint32_t tangent = 2;
inline constexpr std::uint32_t texcoord0 = 3;
inline constexpr std::uint32_t texcoord1 = 4;
inline constexpr std::uint32_t color0 = 5;
inline constexpr std::uint32_t joints = 6;
inline constexpr std::uint32_t weights = 7;
}  // namespace location

/// PBR_STATIC_V1 (spec 4): asset.vertices(mesh) as stored.
inline constexpr std::array<vertex_attribute, 6> pbr_static_v1_attributes{{
    {semantic::position, 0, attribute_format::float32x3, 0, location::position, shader_step::none},
    {semantic::normal, 0, attribute_format::snorm10_10_10_2, 12, location::normal, shader_step::none},
    {semantic::tangent, 0, attribute_format::snorm10_10_10_2, 16, location::tangent, shader_step::handedness_from_w},
    {semantic::texcoord, 0, attribute_format::float16x2, 20, location::texcoord0, shader_step::none},
    {semantic::texcoord, 1, attribute_format::float16x2, 24, location::texcoord1, shader_step::none},
    {semantic::color, 0, attribute_format::unorm8x4, 28, location::color0, shader_step::none},
}};
inline constexpr vertex_layout_desc pbr_static_v1{"PBR_STATIC_V1", vertex_stride_pbr_static_v1,
                                                  pbr_static_v1_attributes};

/// PBR_QUANT_V1 (vertexLayout 2, the library's extension; vertex_quant.hpp):
/// asset.vertices(mesh) as stored, dequantized in the shader with the
/// mesh record's localBounds. No decode pass on the CPU.
inline constexpr std::array<vertex_attribute, 6> pbr_quant_v1_attributes{{
    {semantic::position, 0, attribute_format::unorm16x4, 0, location::position, shader_step::bounds_dequantize},
    {semantic::normal, 0, attribute_format::snorm8x2, 8, location::normal, shader_step::octahedral},
    {semantic::tangent, 0, attribute_format::snorm8x2, 10, location::tangent,
     shader_step::octahedral_handedness_from_position},
    {semantic::texcoord, 0, attribute_format::float16x2, 12, location::texcoord0, shader_step::none},
    {semantic::texcoord, 1, attribute_format::float16x2, 16, location::texcoord1, shader_step::none},
    {semantic::color, 0, attribute_format::unorm8x4, 20, location::color0, shader_step::none},
}};
inline constexpr vertex_layout_desc pbr_quant_v1{"PBR_QUANT_V1", vertex_stride_pbr_quant_v1, pbr_quant_v1_attributes};

/// GpuVertex (spec 4.1): the .hmesh VTXS chunk (assetc::hmesh::vertices().bytes()).
inline constexpr std::array<vertex_attribute, 4> gpu_vertex_attributes{{
    {semantic::position, 0, attribute_format::float32x3, 0, location::position, shader_step::none},
    {semantic::normal, 0, attribute_format::snorm16x2, 12, location::normal, shader_step::octahedral},
    {semantic::tangent, 0, attribute_format::sint16x2, 16, location::tangent, shader_step::octahedral_tangent},
    {semantic::texcoord, 0, attribute_format::float32x2, 20, location::texcoord0, shader_step::none},
}};
inline constexpr vertex_layout_desc gpu_vertex{"GpuVertex", 28, gpu_vertex_attributes};

/// .untold JOINT_INDEX_DATA (chunk 16): 4 x u16 per skinned vertex, its own binding.
inline constexpr std::array<vertex_attribute, 1> joint_indices_attributes{{
    {semantic::joints, 0, attribute_format::uint16x4, 0, location::joints, shader_step::none},
}};
inline constexpr vertex_layout_desc joint_indices{"JOINT_INDEX_DATA", 8, joint_indices_attributes};

/// .untold JOINT_WEIGHT_DATA (chunk 17): 4 x f32 per skinned vertex, its own binding.
inline constexpr std::array<vertex_attribute, 1> joint_weights_attributes{{
    {semantic::weights, 0, attribute_format::float32x4, 0, location::weights, shader_step::none},
}};
inline constexpr vertex_layout_desc joint_weights{"JOINT_WEIGHT_DATA", 16, joint_weights_attributes};

/// .hmesh SKIN chunk: joints 4 x u16 then weights 4 x f32, parallel to VTXS.
inline constexpr std::array<vertex_attribute, 2> hmesh_skin_attributes{{
    {semantic::joints, 0, attribute_format::uint16x4, 0, location::joints, shader_step::none},
    {semantic::weights, 0, attribute_format::float32x4, 8, location::weights, shader_step::none},
}};
inline constexpr vertex_layout_desc hmesh_skin{"hmesh SKIN", 24, hmesh_skin_attributes};

/// Every fixed layout above, for tables and tools.
inline constexpr std::array<const vertex_layout_desc*, 6> fixed_layouts{&pbr_static_v1, &pbr_quant_v1, &gpu_vertex,
                                                                       &joint_indices, &joint_weights, &hmesh_skin};

/// The format of an Urho3D vertex element by its stored VertexElementType
/// (urho3d::element_type: 0 INT, 1 FLOAT, 2 VECTOR2, 3 VECTOR3, 4 VECTOR4,
/// 5 UBYTE4, 6 UBYTE4_NORM); nullopt for any other value (safe on file values). Urho3D vertex
/// buffers are interleaved with the element offsets the reader reports
/// (urho3d::vertex_element::offset) and stride vertex_buffer::stride().
[[nodiscard]] constexpr std::optional<attribute_format> urho3d_element_format(std::uint32_t type) noexcept {
  constexpr std::array<attribute_format, 7> by_type{attribute_format::sint32,    attribute_format::float32,
                                                    attribute_format::float32x2, attribute_format::float32x3,
                                                    attribute_format::float32x4, attribute_format::uint8x4,
                                                    attribute_format::unorm8x4};
  if (type >= by_type.size()) return std::nullopt;
  return by_type[type];
}

/// The format of a Pragma (UDM/PMDL) vertex struct member by its UDM type
/// byte (udm::type: 11 Float, 14 Vector2, 15 Vector3, 16 Vector4, 35
/// Vector4i); nullopt for types a vertex stream cannot hold (safe on file values). The struct's
/// member offsets and size come from the document (udm struct layout).
[[nodiscard]] constexpr std::optional<attribute_format> udm_member_format(std::uint32_t udm_type) noexcept {
  switch (udm_type) {
    case 11: return attribute_format::float32;
    case 14: return attribute_format::float32x2;
    case 15: return attribute_format::float32x3;
    case 16: return attribute_format::float32x4;
    case 35: return attribute_format::sint32x4;
    default: return std::nullopt;
  }
}

/// An index element size in every API.
struct index_format {
  std::uint32_t bytes = 0;
  api_enum vulkan{};  // VkIndexType
  api_enum dxgi{};    // DXGI_FORMAT of the index buffer view
  api_enum metal{};   // MTLIndexType
  webgpu_enum webgpu{};  // GPUIndexFormat
  api_enum opengl{};  // glDrawElements type
};

inline constexpr std::array<index_format, 2> index_formats{{
    {2, {0, "VK_INDEX_TYPE_UINT16"}, {57, "DXGI_FORMAT_R16_UINT"}, {0, "MTLIndexTypeUInt16"}, {"uint16"},
     {gl_unsigned_short, "GL_UNSIGNED_SHORT"}},
    {4, {1, "VK_INDEX_TYPE_UINT32"}, {42, "DXGI_FORMAT_R32_UINT"}, {1, "MTLIndexTypeUInt32"}, {"uint32"},
     {gl_unsigned_int, "GL_UNSIGNED_INT"}},
}};

/// The index format of an index element size in bytes (2 or 4: an .hmesh
/// indexWidth), or nullptr for any other size. Safe for any value.
[[nodiscard]] constexpr const index_format* index_format_for_width(std::uint32_t bytes) noexcept {
  return bytes == 2 ? &index_formats[0] : bytes == 4 ? &index_formats[1] : nullptr;
}
/// The index format of a .untold mesh record's indexType (1 uint16, 2
/// uint32), or nullptr for an invalid value. Safe for any value.
[[nodiscard]] constexpr const index_format* index_format_for(std::uint32_t index_type_value) noexcept {
  return index_format_for_width(index_size(index_type_value));
}
[[nodiscard]] constexpr const index_format* index_format_for(index_type type) noexcept {
  return index_format_for(static_cast<std::uint32_t>(type));
}

}  // namespace untold::gpu
