// Offscreen Vulkan render tests (lavapipe on CI): the bytes of a cooked
// .untold mesh and of an .hmesh GpuVertex mesh go into Vulkan buffers
// unmodified, are drawn with the vertex-input description of
// untold/gpu_formats.hpp, and the image read back must match a CPU raster of
// the same mesh decoded with the library's scalar decoders
// (render_support.hpp: tolerance 2e-4 per channel, edge pixels skipped).
// Deliberately wrong descriptions (format, offset, stride) must not match.
#include "render_support.hpp"

#include "pbr_static_v1_vert.h"
#include "pbr_static_v1_u32_vert.h"
#include "pbr_quant_v1_vert.h"
#include "gpu_vertex_vert.h"
#include "value_frag.h"

#include <untold/assetc/hmesh.hpp>
#include <untold/untold.hpp>
#include <untold/vertex_quant.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

namespace {

using namespace untold_gpu_test;
namespace gpu = untold::gpu;

/// A UV sphere with its poles on y: every attribute varies over the surface
/// (the tangent's handedness is -1 on one half, the two UV sets differ) so
/// that any attribute read from the wrong bytes changes the image.
struct sphere {
  std::vector<float> positions, normals, tangents, uv0, uv1, colors;
  std::vector<std::uint32_t> indices;
};

sphere make_sphere(int rings, int segments) {
  sphere s;
  const double pi = std::numbers::pi;
  for (int r = 0; r <= rings; ++r) {
    const double theta = pi * r / rings;
    for (int g = 0; g <= segments; ++g) {
      const double phi = 2 * pi * g / segments;
      const double u = double(g) / segments, v = double(r) / rings;
      const double p[3] = {std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi)};
      for (double c : p) s.positions.push_back(float(c)), s.normals.push_back(float(c));
      s.tangents.insert(s.tangents.end(), {float(-std::sin(phi)), 0.0f, float(std::cos(phi)), g < segments / 2 ? 1.0f : -1.0f});
      s.uv0.insert(s.uv0.end(), {float(u), float(v)});
      s.uv1.insert(s.uv1.end(), {float(1 - v), float(0.25 + 0.5 * u)});
      s.colors.insert(s.colors.end(), {float(u), float(v), float(1 - u), float(0.5 + 0.5 * v)});
    }
  }
  for (int r = 0; r < rings; ++r) {
    for (int g = 0; g < segments; ++g) {
      const auto a = std::uint32_t(r * (segments + 1) + g), b = a + std::uint32_t(segments + 1);
      s.indices.insert(s.indices.end(), {a, b, b + 1, a, b + 1, a + 1});
    }
  }
  return s;
}

/// A cooked .untold holding the sphere as one PBR_STATIC_V1 mesh (uint16
/// indices, zstd-compressed geometry when the library has zstd).
std::vector<std::byte> cook_pbr_sphere(const sphere& s, untold::write_options options = {}) {
  untold::pbr_vertex_input in;
  in.positions = s.positions;
  in.normals = s.normals;
  in.tangents = s.tangents;
  in.uv0 = s.uv0;
  in.uv1 = s.uv1;
  in.colors = s.colors;
  auto vertices = untold::encode_pbr_vertices(in);
  REQUIRE(vertices);
  untold::builder b{untold::file_type::tile};
  const auto e = b.add_entity({.name = "sphere"});
  b.add_mesh({.entity = e, .name = "sphere", .vertices = *vertices, .indices = s.indices});
  auto file = b.finish(options);
  REQUIRE(file);
  return std::move(*file);
}

/// The sphere as an .hmesh (GpuVertex, uint32 indices).
std::vector<std::byte> write_gpu_sphere(const sphere& s) {
  untold::gpu_vertex_input in;
  in.positions = s.positions;
  in.normals = s.normals;
  in.tangents = s.tangents;
  in.uvs = s.uv1;  // any UV set; uv1 is not the identity of the grid
  auto vertices = untold::encode_gpu_vertices(in);
  REQUIRE(vertices);
  untold::assetc::hmesh_input h;
  h.vertices = *vertices;
  h.indices = s.indices;
  h.index_width = 4;
  h.flags = untold::assetc::desc_flag_tangents;
  auto file = untold::assetc::write_hmesh(h);
  REQUIRE(file);
  return std::move(*file);
}

/// The GPU side of one mesh: its vertex and index bytes copied unmodified
/// into host-visible buffers (the vertex buffer has zeroed slack after the
/// data so that a wrong stride reads defined bytes, never past the buffer).
struct uploaded {
  std::unique_ptr<host_buffer> vertices, indices;
  VkIndexType index_type{};
  std::uint32_t index_count = 0;
};

uploaded upload(untold::byte_span vertex_bytes, untold::byte_span index_bytes, const gpu::index_format& index) {
  uploaded u;
  u.vertices = the_device->make_buffer(vertex_bytes.size() + vertex_bytes.size() / 2 + 64, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
  u.indices = the_device->make_buffer(index_bytes.size(), VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
  REQUIRE(u.vertices);
  REQUIRE(u.indices);
  std::memcpy(u.vertices->mapped, vertex_bytes.data(), vertex_bytes.size());
  std::memcpy(u.indices->mapped, index_bytes.data(), index_bytes.size());
  u.index_type = static_cast<VkIndexType>(index.vulkan.value);
  u.index_count = static_cast<std::uint32_t>(index_bytes.size() / index.bytes);
  return u;
}

std::vector<std::uint32_t> read_indices(untold::byte_span bytes, std::uint32_t width) {
  std::vector<std::uint32_t> out(bytes.size() / width);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = width == 2 ? untold::load_le_unchecked<std::uint16_t>(bytes.data() + 2 * i)
                        : untold::load_le_unchecked<std::uint32_t>(bytes.data() + 4 * i);
  return out;
}

/// The reference vertices of a PBR_STATIC_V1 mesh for `mode`, decoded by pbr_vertex_view.
std::vector<reference_vertex> pbr_reference(untold::byte_span bytes, int mode) {
  const auto view = untold::pbr_vertex_view::from_bytes(bytes);
  REQUIRE(view);
  std::vector<reference_vertex> out;
  for (const untold::pbr_vertex& v : *view)
    out.push_back({v.position, shade(mode, v.normal, v.tangent, v.uv0, v.uv1, v.color0)});
  return out;
}

/// The same for a PBR_QUANT_V1 mesh of the [-1, 1] cube (decode_quant_vertex).
std::vector<reference_vertex> quant_reference(untold::byte_span bytes, int mode) {
  constexpr untold::aabb unit_cube{{-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}};
  std::vector<reference_vertex> out;
  for (std::size_t i = 0; i < bytes.size() / untold::quant_vertex_stride; ++i) {
    const untold::pbr_vertex v = untold::decode_quant_vertex(bytes.data() + i * untold::quant_vertex_stride, unit_cube);
    out.push_back({v.position, shade(mode, v.normal, v.tangent, v.uv0, v.uv1, v.color0)});
  }
  return out;
}

/// The same for a GpuVertex mesh (gpu_vertex_view; no uv1, colour white).
std::vector<reference_vertex> gpu_reference(untold::byte_span bytes, int mode) {
  const auto view = untold::gpu_vertex_view::from_bytes(bytes);
  REQUIRE(view);
  std::vector<reference_vertex> out;
  for (const untold::gpu_vertex& v : *view)
    out.push_back({v.position, shade(mode, v.normal, v.tangent, v.uv, {0, 0}, {1, 1, 1, 1})});
  return out;
}

template <std::size_t N>
std::span<const std::uint32_t> spirv(const std::uint32_t (&code)[N]) {
  return {code, N};
}

struct mesh_under_test {
  untold::byte_span vertex_bytes;
  std::vector<std::uint32_t> indices;
  uploaded gpu;
  std::vector<reference_vertex> (*reference)(untold::byte_span, int);
  int modes;
};

/// Draws `m` once per mode with `input` and compares each image with the
/// reference; returns the comparison of every mode.
std::vector<comparison> draw_and_compare(const mesh_under_test& m, const vertex_input& input,
                                         std::span<const std::uint32_t> vertex_shader) {
  std::vector<comparison> out;
  for (int mode = 0; mode < m.modes; ++mode) {
    const push_constants pc = placement(mode);
    const std::vector<float> image = draw(*m.gpu.vertices, *m.gpu.indices, m.gpu.index_type, m.gpu.index_count, input,
                                          vertex_shader, spirv(value_frag), pc);
    REQUIRE(!image.empty());
    out.push_back(compare(image, rasterise(m.reference(m.vertex_bytes, mode), m.indices, pc)));
  }
  return out;
}

bool all_match(const std::vector<comparison>& results) {
  for (const comparison& c : results)
    if (!c.matches()) return false;
  return true;
}

void report(const char* what, const std::vector<comparison>& results) {
  for (std::size_t mode = 0; mode < results.size(); ++mode)
    MESSAGE(std::string(what) << " mode " << mode << ": " << results[mode].compared << " pixels compared (" << results[mode].covered
                 << " on the mesh), " << results[mode].mismatched << " off, max error " << results[mode].max_error);
}

/// The sphere written by the builder in `layout`, opened, and its mesh
/// uploaded as stored. PBR_QUANT_V1's shader dequantizes with the [-1, 1]
/// cube: the sphere's bounds, checked here.
struct untold_fixture {
  std::vector<std::byte> file;
  untold::asset asset;
  mesh_under_test mesh;
  explicit untold_fixture(untold::vertex_layout layout)
      : file(cook_pbr_sphere(make_sphere(12, 24), {.vertex_layout = layout})) {
    auto opened = untold::open(file, {.deep_checks = true});
    REQUIRE(opened);
    asset = std::move(*opened);
    REQUIRE(asset.meshes().size() == 1);
    const bool quantized = layout == untold::vertex_layout::pbr_quant_v1;
    REQUIRE(asset.header().vertex_layout == static_cast<std::uint32_t>(layout));
    const untold::mesh_record m = asset.meshes()[0];
    CHECK(m.vertex_stride_bytes == (quantized ? gpu::pbr_quant_v1 : gpu::pbr_static_v1).stride);
    CHECK(m.index_type == 1);  // uint16: the index format table's first row is exercised here
    if (quantized) REQUIRE(m.local_bounds == untold::aabb{{-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}});
    const gpu::index_format* index = gpu::index_format_for(m.index_type);
    REQUIRE(index != nullptr);
    mesh.vertex_bytes = asset.vertices(m);
    mesh.indices = read_indices(asset.indices(m), index->bytes);
    mesh.gpu = upload(asset.vertices(m), asset.indices(m), *index);
    mesh.reference = quantized ? quant_reference : pbr_reference;
    mesh.modes = 4;
    CHECK(std::memcmp(mesh.gpu.vertices->mapped, mesh.vertex_bytes.data(), mesh.vertex_bytes.size()) == 0);
  }
};

/// The .hmesh sphere, opened, and its VTXS/IDXS uploaded as stored.
struct gpu_vertex_fixture {
  std::vector<std::byte> file = write_gpu_sphere(make_sphere(12, 24));
  mesh_under_test mesh;
  gpu_vertex_fixture() {
    auto opened = untold::assetc::open_hmesh(file);
    REQUIRE(opened);
    const gpu::index_format* index = gpu::index_format_for_width(opened->desc().index_width);
    REQUIRE(index != nullptr);
    CHECK(index->bytes == 4);
    mesh.vertex_bytes = opened->vertices().bytes();
    mesh.indices = read_indices(opened->indices().bytes(), index->bytes);
    mesh.gpu = upload(opened->vertices().bytes(), opened->indices().bytes(), *index);
    mesh.reference = gpu_reference;
    mesh.modes = 3;
  }
};

bool supported(const vertex_input& input) {
  for (const VkVertexInputAttributeDescription& a : input.attributes)
    if (!the_device->vertex_format_supported(a.format)) return false;
  return true;
}

/// A deliberately wrong vertex-input description: what it gets wrong and the edit.
struct wrong {
  const char* what;
  void (*edit)(vertex_input&);
};

/// Draws `m` with each wrong description of `layout` (skipping formats the
/// device lacks) and checks that none matches the reference.
void check_none_match(const mesh_under_test& m, const gpu::vertex_layout_desc& layout,
                      std::span<const std::uint32_t> vertex_shader, std::span<const wrong> cases) {
  for (const wrong& w : cases) {
    vertex_input input = vulkan_input(layout);
    w.edit(input);
    if (!supported(input)) {
      MESSAGE(std::string(w.what) << ": format not supported here, not drawn");
      continue;
    }
    const auto results = draw_and_compare(m, input, vertex_shader);
    report(w.what, results);
    CHECK_MESSAGE(!all_match(results), std::string(w.what));
  }
}

}  // namespace

TEST_CASE("PBR_STATIC_V1 from a cooked .untold renders like the library's decoder") {
  untold_fixture f(untold::vertex_layout::pbr_static_v1);
  const vertex_input input = vulkan_input(gpu::pbr_static_v1);
  REQUIRE_MESSAGE(supported(input), "a PBR_STATIC_V1 vertex format is not supported by " << the_device->name());
  const auto results = draw_and_compare(f.mesh, input, spirv(pbr_static_v1_vert));
  report("PBR_STATIC_V1", results);
  CHECK(all_match(results));
}

TEST_CASE("PBR_STATIC_V1 fetched as raw u32 and unpacked in the shader (the Direct3D/WebGPU path) renders the same") {
  untold_fixture f(untold::vertex_layout::pbr_static_v1);
  const vertex_input input = vulkan_input(gpu::pbr_static_v1, /*fetch_raw=*/true);
  CHECK(input.attributes[1].format == VK_FORMAT_R32_UINT);
  CHECK(input.attributes[2].format == VK_FORMAT_R32_UINT);
  const auto results = draw_and_compare(f.mesh, input, spirv(pbr_static_v1_u32_vert));
  report("PBR_STATIC_V1 (u32 fetch)", results);
  CHECK(all_match(results));
}

TEST_CASE("PBR_QUANT_V1 from a .untold renders like the library's decoder, with no decode pass") {
  untold_fixture f(untold::vertex_layout::pbr_quant_v1);
  const vertex_input input = vulkan_input(gpu::pbr_quant_v1);
  REQUIRE_MESSAGE(supported(input), "a PBR_QUANT_V1 vertex format is not supported by " << the_device->name());
  const auto results = draw_and_compare(f.mesh, input, spirv(pbr_quant_v1_vert));
  report("PBR_QUANT_V1", results);
  CHECK(all_match(results));
  const wrong cases[] = {
      {"position as R16G16B16A16_SNORM", [](vertex_input& in) { in.attributes[0].format = VK_FORMAT_R16G16B16A16_SNORM; }},
      {"normal as R8G8_UNORM", [](vertex_input& in) { in.attributes[1].format = VK_FORMAT_R8G8_UNORM; }},
      {"tangent at offset 8 (the normal's)", [](vertex_input& in) { in.attributes[2].offset = 8; }},
      {"stride 32 (PBR_STATIC_V1's)", [](vertex_input& in) { in.stride = 32; }},
  };
  check_none_match(f.mesh, gpu::pbr_quant_v1, spirv(pbr_quant_v1_vert), cases);
}

TEST_CASE("GpuVertex from an .hmesh renders like the library's decoder") {
  gpu_vertex_fixture f;
  const vertex_input input = vulkan_input(gpu::gpu_vertex);
  REQUIRE_MESSAGE(supported(input), "a GpuVertex vertex format is not supported by " << the_device->name());
  const auto results = draw_and_compare(f.mesh, input, spirv(gpu_vertex_vert));
  report("GpuVertex", results);
  CHECK(all_match(results));
}

TEST_CASE("a wrong format, offset or stride in the PBR_STATIC_V1 description does not match") {
  untold_fixture f(untold::vertex_layout::pbr_static_v1);
  const wrong cases[] = {
      {"normal as A2B10G10R10_UNORM", [](vertex_input& in) { in.attributes[1].format = VK_FORMAT_A2B10G10R10_UNORM_PACK32; }},
      {"uv0 as R16G16_UNORM", [](vertex_input& in) { in.attributes[3].format = VK_FORMAT_R16G16_UNORM; }},
      {"color0 as R8G8B8A8_SNORM", [](vertex_input& in) { in.attributes[5].format = VK_FORMAT_R8G8B8A8_SNORM; }},
      {"uv0 at offset 24 (uv1's)", [](vertex_input& in) { in.attributes[3].offset = 24; }},
      {"tangent at offset 12 (the normal's)", [](vertex_input& in) { in.attributes[2].offset = 12; }},
      {"stride 28", [](vertex_input& in) { in.stride = 28; }},
      {"stride 36", [](vertex_input& in) { in.stride = 36; }},
  };
  check_none_match(f.mesh, gpu::pbr_static_v1, spirv(pbr_static_v1_vert), cases);
}

TEST_CASE("a wrong format, offset or stride in the GpuVertex description does not match") {
  gpu_vertex_fixture f;
  const wrong cases[] = {
      {"normal as R16G16_UNORM", [](vertex_input& in) { in.attributes[1].format = VK_FORMAT_R16G16_UNORM; }},
      {"tangent at offset 12 (the normal's)", [](vertex_input& in) { in.attributes[2].offset = 12; }},
      {"uv as R16G16_SFLOAT", [](vertex_input& in) { in.attributes[3].format = VK_FORMAT_R16G16_SFLOAT; }},
      {"uv at offset 16", [](vertex_input& in) { in.attributes[3].offset = 16; }},
      {"stride 32 (PBR_STATIC_V1's)", [](vertex_input& in) { in.stride = 32; }},
  };
  check_none_match(f.mesh, gpu::gpu_vertex, spirv(gpu_vertex_vert), cases);
}
