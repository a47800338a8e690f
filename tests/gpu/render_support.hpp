// tests/gpu/render_support.hpp - the render tests' side of the shared
// offscreen renderer (tools/render/vulkan_offscreen.hpp): a 128 x 128 float
// target, the vertex-input description built from untold/gpu_formats.hpp, a
// reference rasteriser, and the image comparison.
//
// The reference rasteriser mirrors the shaders (shaders/render_common.glsl):
// the same orthographic placement, Vulkan's viewport transform and facing
// rule (back faces culled, counter-clockwise front), and linear
// interpolation of per-vertex values (w = 1, so perspective-correct
// interpolation is linear). Per-vertex values come from the library's scalar
// decoders. Pixel centres closer than `edge_band` pixels to a triangle edge
// are not compared: there the rasteriser's fill rule and sub-pixel snapping
// decide coverage, not the vertex data. Every other pixel - inside the mesh
// or background - must match within `tolerance` per channel.
#pragma once

#include "vulkan_offscreen.hpp"

#include <untold/gpu_formats.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace untold_gpu_test {

using untold::vulkan::device;
using untold::vulkan::host_buffer;
using untold::vulkan::vertex_input;

inline constexpr int skip_exit_code = 77;
extern device* the_device;

/// The test images: image_size^2 R32G32B32A32_SFLOAT, cleared to zero, no depth.
inline constexpr std::uint32_t image_size = 128;

/// The push constants of shaders/render_common.glsl.
struct push_constants {
  float placement[4];  // scale, offset x, offset y, unused
  std::int32_t mode;
};

/// Draws `index_count` indices of `index_buffer` (type `index_type`) over
/// `vertex_buffer` with `input` and the SPIR-V shaders into a cleared test
/// image, back faces culled, and returns its pixels row by row (4 floats
/// each). Empty on failure.
inline std::vector<float> draw(const host_buffer& vertex_buffer, const host_buffer& index_buffer,
                               VkIndexType index_type, std::uint32_t index_count, const vertex_input& input,
                               std::span<const std::uint32_t> vertex_spirv, std::span<const std::uint32_t> fragment_spirv,
                               const push_constants& constants) {
  const untold::vulkan::target target{.width = image_size, .height = image_size};
  const untold::vulkan::shaders code{vertex_spirv, fragment_spirv, sizeof(push_constants)};
  const untold::vulkan::draw_call call{&vertex_buffer, &index_buffer, index_type, index_count,
                                       std::as_bytes(std::span(&constants, 1))};
  const std::vector<std::byte> bytes = the_device->draw(target, input, code, std::span(&call, 1));
  std::vector<float> pixels(bytes.size() / sizeof(float));
  if (!pixels.empty()) std::memcpy(pixels.data(), bytes.data(), pixels.size() * sizeof(float));
  return pixels;
}

/// Largest difference per channel between the GPU and the reference (the
/// values are in [0, 1] or small UVs; float32 target). lavapipe stays within
/// 1.2e-6; the margin is for drivers with coarser sub-pixel snapping or
/// shader division. It is small enough to catch the pre-GL-4.2 snorm rule
/// ((2q + 1) / 1023, up to 1e-3 away); a wrong format, offset or stride
/// moves values by 0.1 to 1e30.
inline constexpr float tolerance = 2e-4f;
/// Pixels whose centre is within this distance of a triangle edge are skipped.
inline constexpr double edge_band = 0.6;

/// The Vulkan vertex input of a layout, straight from the table. With
/// `fetch_raw`, encodings Direct3D and WebGPU lack (shader_decode) are
/// fetched as R32_UINT, as those APIs must.
inline vertex_input vulkan_input(const untold::gpu::vertex_layout_desc& layout, bool fetch_raw = false) {
  vertex_input in;
  in.stride = layout.stride;
  for (const untold::gpu::vertex_attribute& a : layout.attributes) {
    const untold::gpu::format_info& f = untold::gpu::info(a.format);
    const VkFormat format =
        fetch_raw && f.webgpu.shader_decode ? VK_FORMAT_R32_UINT : static_cast<VkFormat>(f.vulkan.value);
    in.attributes.push_back({a.location, 0, format, a.offset});
  }
  return in;
}

/// One vertex as the reference rasteriser sees it.
struct reference_vertex {
  std::array<float, 3> position{};
  std::array<float, 4> value{};  // what the shader writes for the current mode
};

/// The placement of render_common.glsl: clip.xy = p.xy * scale + offset.
inline constexpr push_constants placement(std::int32_t mode) { return {{0.9f, 0.0f, 0.0f, 0.0f}, mode}; }

inline constexpr std::array<float, 3> light_direction{0.3f, -0.5f, 0.8124038f};

/// The shader's shade() for one vertex.
inline std::array<float, 4> shade(int mode, const std::array<float, 3>& n, const std::array<float, 4>& t,
                                  const std::array<float, 2>& uv0, const std::array<float, 2>& uv1,
                                  const std::array<float, 4>& color0) {
  switch (mode) {
    case 0: {
      const float lambert = n[0] * light_direction[0] + n[1] * light_direction[1] + n[2] * light_direction[2];
      return {n[0] * 0.5f + 0.5f, n[1] * 0.5f + 0.5f, n[2] * 0.5f + 0.5f, std::max(lambert, 0.0f)};
    }
    case 1: return {t[0] * 0.5f + 0.5f, t[1] * 0.5f + 0.5f, t[2] * 0.5f + 0.5f, t[3] * 0.5f + 0.5f};
    case 2: return {uv0[0], uv0[1], uv1[0], uv1[1]};
    default: return color0;
  }
}

/// The reference image: per pixel 4 floats, and whether it is compared.
struct reference_image {
  std::vector<float> pixels = std::vector<float>(std::size_t{image_size} * image_size * 4, 0.0f);
  std::vector<std::uint8_t> compared = std::vector<std::uint8_t>(std::size_t{image_size} * image_size, 1);
  std::size_t covered = 0;  // compared pixels inside the mesh
};

/// Rasterises triangles `indices` over `vertices` (see the file comment).
inline reference_image rasterise(const std::vector<reference_vertex>& vertices,
                                 const std::vector<std::uint32_t>& indices, const push_constants& pc) {
  reference_image out;
  std::vector<std::uint8_t> inside(out.compared.size(), 0);
  const double half = image_size / 2.0;
  auto screen = [&](const reference_vertex& v) {
    const double x = double(v.position[0]) * pc.placement[0] + pc.placement[1];
    const double y = double(v.position[1]) * pc.placement[0] + pc.placement[2];
    return std::array<double, 2>{(x + 1.0) * half, (y + 1.0) * half};
  };
  for (std::size_t t = 0; t + 2 < indices.size(); t += 3) {
    const reference_vertex* v[3] = {&vertices[indices[t]], &vertices[indices[t + 1]], &vertices[indices[t + 2]]};
    const std::array<double, 2> p[3] = {screen(*v[0]), screen(*v[1]), screen(*v[2])};
    double area = 0;  // Vulkan's a = -1/2 sum(x_i y_i+1 - x_i+1 y_i); front (kept) when > 0
    for (int i = 0; i < 3; ++i) area -= 0.5 * (p[i][0] * p[(i + 1) % 3][1] - p[(i + 1) % 3][0] * p[i][1]);
    if (area <= 1e-9) continue;
    auto edge = [&](int i, double x, double y) {  // > 0 inside, for a > 0 triangle in these coordinates
      const auto& a = p[i];
      const auto& b = p[(i + 1) % 3];
      return -((b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]));
    };
    const int x0 = std::max(0, int(std::floor(std::min({p[0][0], p[1][0], p[2][0]}) - 1)));
    const int x1 = std::min(int(image_size) - 1, int(std::ceil(std::max({p[0][0], p[1][0], p[2][0]}) + 1)));
    const int y0 = std::max(0, int(std::floor(std::min({p[0][1], p[1][1], p[2][1]}) - 1)));
    const int y1 = std::min(int(image_size) - 1, int(std::ceil(std::max({p[0][1], p[1][1], p[2][1]}) + 1)));
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const double cx = x + 0.5, cy = y + 0.5;
        double e[3], nearest = 1e30;
        bool in = true;
        for (int i = 0; i < 3; ++i) {
          e[i] = edge(i, cx, cy);
          const double len = std::hypot(p[(i + 1) % 3][0] - p[i][0], p[(i + 1) % 3][1] - p[i][1]);
          nearest = std::min(nearest, std::abs(e[i]) / len);
          in = in && e[i] >= 0;
        }
        const std::size_t pixel = std::size_t(y) * image_size + std::size_t(x);
        if (nearest < edge_band) {
          out.compared[pixel] = 0;
          continue;
        }
        if (!in) continue;
        // e[i] is twice the area of the sub-triangle opposite vertex i+2.
        const double sum = e[0] + e[1] + e[2];
        const double w[3] = {e[1] / sum, e[2] / sum, e[0] / sum};
        inside[pixel] = 1;
        for (int c = 0; c < 4; ++c)
          out.pixels[pixel * 4 + c] = float(w[0] * v[0]->value[c] + w[1] * v[1]->value[c] + w[2] * v[2]->value[c]);
      }
    }
  }
  for (std::size_t i = 0; i < inside.size(); ++i) out.covered += inside[i] != 0 && out.compared[i] != 0;
  return out;
}

struct comparison {
  std::size_t compared = 0;    // pixels compared (inside + background)
  std::size_t covered = 0;     // of which inside the mesh
  std::size_t mismatched = 0;  // compared pixels off by more than the tolerance
  float max_error = 0;
  /// The GPU image matches: nothing off, and enough of the mesh compared
  /// that a match means something.
  [[nodiscard]] bool matches() const { return mismatched == 0 && covered >= 3000; }
};

inline comparison compare(const std::vector<float>& gpu, const reference_image& ref) {
  comparison c;
  c.covered = ref.covered;
  if (gpu.size() != ref.pixels.size()) {
    c.mismatched = ref.compared.size();
    return c;
  }
  for (std::size_t i = 0; i < ref.compared.size(); ++i) {
    if (ref.compared[i] == 0) continue;
    ++c.compared;
    float worst = 0;
    for (int k = 0; k < 4; ++k) {
      const float d = std::abs(gpu[i * 4 + k] - ref.pixels[i * 4 + k]);
      worst = std::isnan(d) ? 1e30f : std::max(worst, d);
    }
    c.max_error = std::max(c.max_error, worst);
    if (worst > tolerance) ++c.mismatched;
  }
  return c;
}

}  // namespace untold_gpu_test
