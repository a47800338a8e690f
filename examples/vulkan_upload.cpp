// The engine side of "straight to the GPU" with Vulkan: map a .untold file,
// open it once, copy each mesh's vertex and index bytes into GPU buffers as
// they are stored (one memcpy each, no conversion), describe the vertex input
// with untold/gpu_formats.hpp, and draw. Runs offscreen (lavapipe on CI):
// each mesh is drawn into a 128 x 128 image, Lambert-shaded by its decoded
// normals, and the example reports the pixels it covered.
//
// The Vulkan boilerplate that is not about untold (instance, device, render
// target, pipeline, readback) is tools/render/vulkan_offscreen.hpp; the shaders
// are tests/gpu/shaders/pbr_static_v1.vert (which includes
// include/untold/shaders/untold_decode.glsl) and value.frag.
//
//   untold_example_vulkan_upload FILE.untold      (exit 77: no Vulkan device)
#include "vulkan_offscreen.hpp"

#include "pbr_static_v1_vert.h"
#include "value_frag.h"

#include <untold/gpu_formats.hpp>
#include <untold/untold.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace {

/// The push constants of tests/gpu/shaders/render_common.glsl.
struct placement {
  float scale_offset[4];  // clip.xy = position.xy * [0] + [1], [2]
  std::int32_t mode;      // 0: normal + Lambert
};

/// VkVertexInputAttributeDescriptions of a layout, from the table.
untold::vulkan::vertex_input describe(const untold::gpu::vertex_layout_desc& layout) {
  untold::vulkan::vertex_input in;
  in.stride = layout.stride;
  for (const untold::gpu::vertex_attribute& a : layout.attributes)
    in.attributes.push_back({a.location, 0, static_cast<VkFormat>(untold::gpu::info(a.format).vulkan.value), a.offset});
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.untold\n", argv[0]);
    return 2;
  }
  std::string why_not;
  const auto gpu = untold::vulkan::device::create(why_not, "untold_example_vulkan_upload");
  if (!gpu) {
    std::printf("SKIPPED: %s\n", why_not.c_str());
    return 77;
  }

  // 1. Map and open: validated once; after this nothing can fail.
  auto file = untold::open_file(argv[1], {.deep_checks = true});
  if (!file) {
    std::fprintf(stderr, "%s: %s\n", argv[1], file.error().describe().c_str());
    return 1;
  }
  const untold::asset& asset = file->asset;

  // 2. The vertex input is the same for every mesh: PBR_STATIC_V1.
  const untold::vulkan::vertex_input input = describe(untold::gpu::pbr_static_v1);

  std::size_t drawn = 0;
  for (std::uint32_t i = 0; i < asset.meshes().size(); ++i) {
    const untold::mesh_record mesh = asset.meshes()[i];
    const untold::byte_span vertices = asset.vertices(mesh);
    const untold::byte_span indices = asset.indices(mesh);
    const untold::gpu::index_format& index = *untold::gpu::index_format_for(mesh.index_type);

    // 3. One buffer each, one copy each, bytes as stored.
    const auto vertex_buffer = gpu->make_buffer(vertices.size(), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
    const auto index_buffer = gpu->make_buffer(indices.size(), VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
    if (!vertex_buffer || !index_buffer) {
      std::fprintf(stderr, "mesh %u: cannot allocate buffers\n", i);
      return 1;
    }
    std::memcpy(vertex_buffer->mapped, vertices.data(), vertices.size());
    std::memcpy(index_buffer->mapped, indices.data(), indices.size());

    // 4. Draw, framed by the mesh's local bounds, mode 0 = normals + Lambert.
    const untold::aabb& b = mesh.local_bounds;
    const float extent = std::max({b.max[0] - b.min[0], b.max[1] - b.min[1], 1e-6f});
    const float scale = 1.8f / extent;
    const placement pc{{scale, -0.5f * (b.min[0] + b.max[0]) * scale, -0.5f * (b.min[1] + b.max[1]) * scale, 0.0f}, 0};
    const untold::vulkan::draw_call call{vertex_buffer.get(), index_buffer.get(),
                                         static_cast<VkIndexType>(index.vulkan.value), mesh.index_count,
                                         std::as_bytes(std::span(&pc, 1))};
    const std::vector<std::byte> bytes =
        gpu->draw({.width = 128, .height = 128}, input, {pbr_static_v1_vert, value_frag, sizeof(placement)},
                  std::span(&call, 1));  // R32G32B32A32_SFLOAT, cleared to 0
    std::vector<float> image(bytes.size() / sizeof(float));
    if (!image.empty()) std::memcpy(image.data(), bytes.data(), bytes.size());
    if (image.empty()) {
      std::fprintf(stderr, "mesh %u: draw failed\n", i);
      return 1;
    }
    std::size_t covered = 0;
    for (std::size_t p = 0; p < image.size(); p += 4) covered += image[p] != 0 || image[p + 1] != 0 || image[p + 2] != 0;
    std::printf("mesh %u '%s': uploaded %zu + %zu bytes (%s indices), drew %u triangles on %s, %zu pixels covered\n", i,
                std::string(asset.string(mesh.mesh_name_offset)).c_str(), vertices.size(), indices.size(),
                std::string(index.vulkan.name).c_str(), mesh.index_count / 3, gpu->name().c_str(), covered);
    if (covered == 0) return 1;
    ++drawn;
  }
  std::printf("%zu meshes drawn\n", drawn);
  return drawn == asset.meshes().size() ? 0 : 1;
}
