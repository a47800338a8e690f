// untold/gpu_formats.hpp pinned: every Vulkan value against <vulkan/vulkan.h>
// (static_assert), DXGI, Metal and OpenGL values against their published
// numbers (DXGI_FORMAT in dxgiformat.h, MTLVertexFormat/MTLIndexType in
// MTLVertexDescriptor.h/MTLArgument.h, GL enums in glcorearb.h, which is also
// compared when installed), the layouts against vertex.hpp and the spec, and
// the tables of docs/gpu.md against the header.
#include <untold/gpu_formats.hpp>
#include <untold/udm/types.hpp>
#include <untold/urho3d/model.hpp>
#include <untold/vertex.hpp>
#include <untold/vertex_quant.hpp>

#include <vulkan/vulkan.h>
#if __has_include(<GL/glcorearb.h>)
#include <GL/glcorearb.h>
#define UNTOLD_TEST_HAVE_GLCOREARB 1
#endif

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace gpu = untold::gpu;
using af = gpu::attribute_format;

constexpr std::uint32_t vk(af f) { return gpu::info(f).vulkan.value; }
constexpr std::uint32_t dxgi(af f) { return gpu::info(f).dxgi.value; }
constexpr std::uint32_t metal(af f) { return gpu::info(f).metal.value; }

// The table is indexed by the enum.
constexpr bool table_is_indexed() {
  for (std::size_t i = 0; i < gpu::formats.size(); ++i)
    if (static_cast<std::size_t>(gpu::formats[i].format) != i) return false;
  return true;
}
static_assert(table_is_indexed());

// Vulkan: the header's values.
static_assert(vk(af::float32) == VK_FORMAT_R32_SFLOAT);
static_assert(vk(af::float32x2) == VK_FORMAT_R32G32_SFLOAT);
static_assert(vk(af::float32x3) == VK_FORMAT_R32G32B32_SFLOAT);
static_assert(vk(af::float32x4) == VK_FORMAT_R32G32B32A32_SFLOAT);
static_assert(vk(af::float16x2) == VK_FORMAT_R16G16_SFLOAT);
static_assert(vk(af::unorm8x4) == VK_FORMAT_R8G8B8A8_UNORM);
static_assert(vk(af::uint8x4) == VK_FORMAT_R8G8B8A8_UINT);
static_assert(vk(af::snorm16x2) == VK_FORMAT_R16G16_SNORM);
static_assert(vk(af::sint16x2) == VK_FORMAT_R16G16_SINT);
static_assert(vk(af::uint16x4) == VK_FORMAT_R16G16B16A16_UINT);
static_assert(vk(af::sint32) == VK_FORMAT_R32_SINT);
static_assert(vk(af::sint32x4) == VK_FORMAT_R32G32B32A32_SINT);
static_assert(vk(af::snorm10_10_10_2) == VK_FORMAT_A2B10G10R10_SNORM_PACK32);
static_assert(vk(af::unorm16x4) == VK_FORMAT_R16G16B16A16_UNORM);
static_assert(vk(af::snorm8x2) == VK_FORMAT_R8G8_SNORM);
static_assert(gpu::index_formats[0].vulkan.value == VK_INDEX_TYPE_UINT16);
static_assert(gpu::index_formats[1].vulkan.value == VK_INDEX_TYPE_UINT32);

// DXGI_FORMAT (dxgiformat.h).
static_assert(dxgi(af::float32) == 41 && dxgi(af::float32x2) == 16 && dxgi(af::float32x3) == 6 &&
              dxgi(af::float32x4) == 2);
static_assert(dxgi(af::float16x2) == 34 && dxgi(af::unorm8x4) == 28 && dxgi(af::uint8x4) == 30);
static_assert(dxgi(af::snorm16x2) == 37 && dxgi(af::sint16x2) == 38 && dxgi(af::uint16x4) == 12);
static_assert(dxgi(af::sint32) == 43 && dxgi(af::sint32x4) == 4);
static_assert(dxgi(af::snorm10_10_10_2) == 42 && gpu::info(af::snorm10_10_10_2).dxgi.shader_decode);  // R32_UINT
static_assert(dxgi(af::unorm16x4) == 11 && dxgi(af::snorm8x2) == 51);
static_assert(gpu::index_formats[0].dxgi.value == 57 && gpu::index_formats[1].dxgi.value == 42);

// MTLVertexFormat and MTLIndexType.
static_assert(metal(af::float32) == 28 && metal(af::float32x2) == 29 && metal(af::float32x3) == 30 &&
              metal(af::float32x4) == 31);
static_assert(metal(af::float16x2) == 25 && metal(af::unorm8x4) == 9 && metal(af::uint8x4) == 3);
static_assert(metal(af::snorm16x2) == 22 && metal(af::sint16x2) == 16 && metal(af::uint16x4) == 15);
static_assert(metal(af::sint32) == 32 && metal(af::sint32x4) == 35 && metal(af::snorm10_10_10_2) == 40);
static_assert(metal(af::unorm16x4) == 21 && metal(af::snorm8x2) == 10);
static_assert(gpu::index_formats[0].metal.value == 0 && gpu::index_formats[1].metal.value == 1);

// OpenGL enums.
static_assert(gpu::gl_byte == 0x1400 && gpu::gl_unsigned_byte == 0x1401 && gpu::gl_short == 0x1402 && gpu::gl_unsigned_short == 0x1403 &&
              gpu::gl_int == 0x1404 && gpu::gl_unsigned_int == 0x1405 && gpu::gl_float == 0x1406 &&
              gpu::gl_half_float == 0x140B && gpu::gl_int_2_10_10_10_rev == 0x8D9F);
#ifdef UNTOLD_TEST_HAVE_GLCOREARB
static_assert(gpu::gl_byte == GL_BYTE && gpu::gl_unsigned_byte == GL_UNSIGNED_BYTE && gpu::gl_short == GL_SHORT &&
              gpu::gl_unsigned_short == GL_UNSIGNED_SHORT && gpu::gl_int == GL_INT &&
              gpu::gl_unsigned_int == GL_UNSIGNED_INT && gpu::gl_float == GL_FLOAT &&
              gpu::gl_half_float == GL_HALF_FLOAT && gpu::gl_int_2_10_10_10_rev == GL_INT_2_10_10_10_REV);
#endif

// Only the signed 10:10:10:2 lacks a native format, and only in Direct3D and WebGPU.
constexpr bool shader_decode_only_where_expected() {
  for (const gpu::format_info& f : gpu::formats) {
    const bool packed = f.format == af::snorm10_10_10_2;
    if (f.vulkan.shader_decode || f.metal.shader_decode || f.dxgi.shader_decode != packed ||
        f.webgpu.shader_decode != packed)
      return false;
  }
  return true;
}
static_assert(shader_decode_only_where_expected());

// The layouts agree with vertex.hpp's offsets and strides.
static_assert(gpu::pbr_static_v1.stride == untold::pbr_vertex_stride);
static_assert(gpu::pbr_static_v1.attributes[0].offset == untold::pbr_offset::position);
static_assert(gpu::pbr_static_v1.attributes[1].offset == untold::pbr_offset::normal);
static_assert(gpu::pbr_static_v1.attributes[2].offset == untold::pbr_offset::tangent);
static_assert(gpu::pbr_static_v1.attributes[3].offset == untold::pbr_offset::uv0);
static_assert(gpu::pbr_static_v1.attributes[4].offset == untold::pbr_offset::uv1);
static_assert(gpu::pbr_static_v1.attributes[5].offset == untold::pbr_offset::color0);
static_assert(gpu::pbr_quant_v1.stride == untold::quant_vertex_stride);
static_assert(gpu::pbr_quant_v1.attributes[0].offset == untold::quant_offset::position);
static_assert(gpu::pbr_quant_v1.attributes[1].offset == untold::quant_offset::normal);
static_assert(gpu::pbr_quant_v1.attributes[2].offset == untold::quant_offset::tangent);
static_assert(gpu::pbr_quant_v1.attributes[3].offset == untold::quant_offset::uv0);
static_assert(gpu::pbr_quant_v1.attributes[4].offset == untold::quant_offset::uv1);
static_assert(gpu::pbr_quant_v1.attributes[5].offset == untold::quant_offset::color0);
static_assert(gpu::gpu_vertex.stride == untold::gpu_vertex_stride);
static_assert(gpu::gpu_vertex.attributes[0].offset == untold::gpu_offset::position);
static_assert(gpu::gpu_vertex.attributes[1].offset == untold::gpu_offset::normal);
static_assert(gpu::gpu_vertex.attributes[2].offset == untold::gpu_offset::tangent);
static_assert(gpu::gpu_vertex.attributes[3].offset == untold::gpu_offset::uv);

// Attributes fit their stride, do not overlap, and fill it (no padding bytes).
constexpr bool packed_exactly(const gpu::vertex_layout_desc& l) {
  std::uint32_t used = 0;
  for (const gpu::vertex_attribute& a : l.attributes) {
    const std::uint32_t end = a.offset + gpu::info(a.format).bytes;
    if (end > l.stride) return false;
    for (const gpu::vertex_attribute& b : l.attributes)
      if (&a != &b && a.offset < b.offset + gpu::info(b.format).bytes && b.offset < end) return false;
    used += gpu::info(a.format).bytes;
  }
  return used == l.stride;
}
static_assert(packed_exactly(gpu::pbr_static_v1) && packed_exactly(gpu::pbr_quant_v1) && packed_exactly(gpu::gpu_vertex) &&
              packed_exactly(gpu::joint_indices) && packed_exactly(gpu::joint_weights) &&
              packed_exactly(gpu::hmesh_skin));

// Foreign element types map by their stored numbers.
using untold::urho3d::element_type;
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::int32)) == af::sint32);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::float32)) == af::float32);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::vector2)) == af::float32x2);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::vector3)) == af::float32x3);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::vector4)) == af::float32x4);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::ubyte4)) == af::uint8x4);
static_assert(gpu::urho3d_element_format(static_cast<std::uint32_t>(element_type::ubyte4_norm)) == af::unorm8x4);
static_assert(!gpu::urho3d_element_format(7));
using untold::udm::type;
static_assert(gpu::udm_member_format(static_cast<std::uint32_t>(type::float32)) == af::float32);
static_assert(gpu::udm_member_format(static_cast<std::uint32_t>(type::vector2)) == af::float32x2);
static_assert(gpu::udm_member_format(static_cast<std::uint32_t>(type::vector3)) == af::float32x3);
static_assert(gpu::udm_member_format(static_cast<std::uint32_t>(type::vector4)) == af::float32x4);
static_assert(gpu::udm_member_format(static_cast<std::uint32_t>(type::vector4i)) == af::sint32x4);
static_assert(!gpu::udm_member_format(static_cast<std::uint32_t>(type::float64)));

// Element sizes the foreign readers use agree with the table.
static_assert(untold::urho3d::element_size(element_type::vector3) == gpu::info(af::float32x3).bytes);
static_assert(untold::urho3d::element_size(element_type::ubyte4_norm) == gpu::info(af::unorm8x4).bytes);

// Index types.
static_assert(gpu::index_format_for(untold::index_type::uint16)->bytes == 2);
static_assert(gpu::index_format_for(untold::index_type::uint32)->bytes == 4);
static_assert(gpu::index_format_for(0u) == nullptr && gpu::index_format_for(3u) == nullptr);
static_assert(gpu::index_format_for_width(2) == &gpu::index_formats[0] && gpu::index_format_for_width(3) == nullptr);

std::string cell(const gpu::api_enum& e) {
  std::string s = "`" + std::string(e.name) + "` (" + std::to_string(e.value) + ")";
  return e.shader_decode ? s + " + shader decode" : s;
}
std::string cell(const gpu::webgpu_enum& e) {
  std::string s = "`\"" + std::string(e.name) + "\"`";
  return e.shader_decode ? s + " + shader decode" : s;
}
std::string hex(std::uint32_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << std::uppercase << v;
  return o.str();
}

std::string_view step_name(gpu::shader_step s) {
  switch (s) {
    case gpu::shader_step::none: return "-";
    case gpu::shader_step::handedness_from_w: return "`untold_handedness(w)`";
    case gpu::shader_step::octahedral: return "`untold_oct_decode`";
    case gpu::shader_step::octahedral_tangent: return "`untold_oct_decode_tangent`";
    case gpu::shader_step::bounds_dequantize: return "`untold_quant_position`, `untold_quant_handedness(w)`";
    case gpu::shader_step::octahedral_handedness_from_position: return "`untold_oct_decode`, handedness from POSITION.w";
  }
  return "?";
}

/// The tables of docs/gpu.md, rendered from the header.
std::string render_tables() {
  std::ostringstream o;
  o << "| format | bytes | Vulkan `VkFormat` | Direct3D `DXGI_FORMAT` | Metal `MTLVertexFormat` | WebGPU "
       "`GPUVertexFormat` | OpenGL type, size, normalized, integer |\n";
  o << "|---|---:|---|---|---|---|---|\n";
  for (const gpu::format_info& f : gpu::formats) {
    o << "| " << f.name << " | " << f.bytes << " | " << cell(f.vulkan) << " | " << cell(f.dxgi) << " | "
      << cell(f.metal) << " | " << cell(f.webgpu) << " | `" << f.opengl.type_name << "` (" << hex(f.opengl.type)
      << "), " << int(f.opengl.size) << ", " << (f.opengl.normalized ? "GL_TRUE" : "GL_FALSE") << ", "
      << (f.opengl.integer ? "`glVertexAttribIPointer`" : "`glVertexAttribPointer`") << " |\n";
  }
  for (const gpu::vertex_layout_desc* l : gpu::fixed_layouts) {
    o << "\n**" << l->name << "**, stride " << l->stride << "\n\n";
    o << "| attribute | offset | format | location | shader |\n|---|---:|---|---:|---|\n";
    for (const gpu::vertex_attribute& a : l->attributes) {
      o << "| " << gpu::name(a.meaning);
      if (a.meaning == gpu::semantic::texcoord || a.meaning == gpu::semantic::color) o << "_" << int(a.semantic_index);
      o << " | " << a.offset << " | " << gpu::info(a.format).name << " | " << a.location << " | " << step_name(a.decode)
        << " |\n";
    }
  }
  o << "\n| index | Vulkan `VkIndexType` | Direct3D `DXGI_FORMAT` | Metal `MTLIndexType` | WebGPU `GPUIndexFormat` "
       "| OpenGL |\n|---|---|---|---|---|---|\n";
  for (const gpu::index_format& i : gpu::index_formats)
    o << "| " << (i.bytes == 2 ? "uint16" : "uint32") << " | " << cell(i.vulkan) << " | " << cell(i.dxgi) << " | "
      << cell(i.metal) << " | " << cell(i.webgpu) << " | `" << i.opengl.name << "` (" << hex(i.opengl.value)
      << ") |\n";
  return o.str();
}

}  // namespace

TEST_CASE("docs/gpu.md holds the tables of untold/gpu_formats.hpp") {
  std::ifstream in(UNTOLD_GPU_DOC);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- tables:begin (generated from gpu_formats.hpp; tests/gpu/test_formats.cpp) -->\n";
  const std::string end = "<!-- tables:end -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string expected = render_tables();
  const std::string actual = doc.substr(b + begin.size(), e - b - begin.size());
  if (actual != expected) {
    // To regenerate: paste this file between the markers.
    std::ofstream("gpu_tables.expected.md") << expected;
    MESSAGE("docs/gpu.md differs from the header; the expected block is in gpu_tables.expected.md");
  }
  CHECK(actual == expected);
}

TEST_CASE("names match the enumerators' spelling in each API") {
  for (const gpu::format_info& f : gpu::formats) {
    CHECK(f.vulkan.name.starts_with("VK_FORMAT_"));
    CHECK(f.dxgi.name.starts_with("DXGI_FORMAT_"));
    CHECK(f.metal.name.starts_with("MTLVertexFormat"));
    CHECK(!f.webgpu.name.empty());
    CHECK(f.opengl.type_name.starts_with("GL_"));
    CHECK(f.components == f.opengl.size);
  }
}
