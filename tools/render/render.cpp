// tools/render/render.cpp - scene -> pose -> Vulkan -> PNG (see render.hpp).
#include "render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <utility>

#include <untold/budget.hpp>
#include <untold/convert/pose.hpp>
#include <untold/detail/checks.hpp>
#include <untold/source.hpp>

#include "convert.hpp"
#include "files.hpp"
#include "vulkan_offscreen.hpp"

#include "shaded_frag.h"
#include "shaded_vert.h"

// The one translation unit with stb_image_write, its functions static to it.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

namespace untold::tools {
namespace {

namespace fs = std::filesystem;
// The camera is computed in double, not with pipeline/vec3.hpp's floats:
// a scene's finite bounds may reach FLT_MAX, and the framing multiplies them.
using vec3 = std::array<double, 3>;

/// The push constants of shaders/shaded_common.glsl.
struct draw_constants {
  float view_projection[16];  // column-major
  float color[4];
  float light[4];  // direction towards the light, ambient share
};
static_assert(sizeof(draw_constants) == 96);

constexpr std::uint32_t supersampling = 2;  // drawn at twice the size, then a 2 x 2 box filter
constexpr float ambient = 0.28f;

vec3 sub(const vec3& a, const vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
vec3 add(const vec3& a, const vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
vec3 scaled(const vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const vec3& a, const vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
vec3 cross(const vec3& a, const vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
vec3 normalized(const vec3& a) {
  const double length = std::sqrt(dot(a, a));
  return length > 0 ? scaled(a, 1 / length) : vec3{0, 0, 0};
}
vec3 widened(const std::array<float, 3>& a) { return {a[0], a[1], a[2]}; }
/// `v` as a float, clamped to the float range: a double past it has no float
/// (the conversion is undefined), and a scene's finite bounds near FLT_MAX
/// put the framed eye past it. NaN stays NaN (std::clamp returns it).
float clamped(double v) {
  constexpr double most = std::numeric_limits<float>::max();
  return float(std::clamp(v, -most, most));
}
std::array<float, 3> narrowed(const vec3& a) { return {clamped(a[0]), clamped(a[1]), clamped(a[2])}; }

/// The camera of a frame: where it is, what it looks at, and the depth range.
struct view {
  vec3 eye, target;
  double fov_radians, near_plane, far_plane;
};

/// The camera `c` asks for, with what it leaves unset framed from the
/// bounds (render_camera's comment). An empty scene frames the unit cube.
view frame_camera(const render_camera& c, const convert::posed_scene& posed, double aspect) {
  vec3 lo{-0.5, -0.5, -0.5}, hi{0.5, 0.5, 0.5};
  if (!posed.empty()) lo = widened(posed.min), hi = widened(posed.max);
  const vec3 centre = scaled(add(lo, hi), 0.5);
  double radius = 0.5 * std::sqrt(dot(sub(hi, lo), sub(hi, lo)));
  if (!(radius > 0)) radius = 0.5;  // one point: a unit-sized view around it
  view v;
  v.fov_radians = double(c.fov_degrees) * std::numbers::pi / 180;
  v.target = c.target ? widened(*c.target) : centre;
  if (c.eye) {
    v.eye = widened(*c.eye);
  } else {
    // The narrower of the two fields of view holds the bounding sphere.
    const double half_vertical = v.fov_radians / 2;
    const double half_horizontal = std::atan(std::tan(half_vertical) * aspect);
    const double distance = radius / std::sin(std::min(half_vertical, half_horizontal));
    v.eye = add(v.target, scaled(normalized({0.6, 0.45, 1.0}), distance));
  }
  // Depth range: the bounding sphere seen from the eye, whatever it looks at.
  const double to_centre = std::sqrt(dot(sub(centre, v.eye), sub(centre, v.eye)));
  v.far_plane = to_centre + radius * 1.01;
  v.near_plane = std::max(to_centre - radius * 1.01, v.far_plane * 1e-4);
  return v;
}

/// The view axes: right, up and forward (unit, right-handed), +Y up unless
/// the camera looks straight up or down.
void view_axes(const view& v, vec3& right, vec3& up, vec3& forward) {
  forward = normalized(sub(v.target, v.eye));
  if (dot(forward, forward) == 0) forward = {0, 0, -1};  // eye on the target
  vec3 world_up{0, 1, 0};
  if (std::abs(dot(forward, world_up)) > 0.999) world_up = {0, 0, -1};
  right = normalized(cross(forward, world_up));
  up = cross(right, forward);
}

/// World -> Vulkan clip space (y down, depth 0..1), column-major.
std::array<float, 16> view_projection(const view& v, double aspect) {
  vec3 right, up, forward;
  view_axes(v, right, up, forward);
  // View matrix rows: right, up, -forward; translation -R * eye.
  const double view_rows[3][4] = {{right[0], right[1], right[2], -dot(right, v.eye)},
                                  {up[0], up[1], up[2], -dot(up, v.eye)},
                                  {-forward[0], -forward[1], -forward[2], dot(forward, v.eye)}};
  const double f = 1 / std::tan(v.fov_radians / 2);
  const double n = v.near_plane, fa = v.far_plane;
  // Projection rows (looking down -z in view space): x, -y (Vulkan's y is down), depth, w = -z.
  const double projection[4][4] = {{f / aspect, 0, 0, 0},
                                   {0, -f, 0, 0},
                                   {0, 0, fa / (n - fa), n * fa / (n - fa)},
                                   {0, 0, -1, 0}};
  std::array<float, 16> out{};
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 4; ++col) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += projection[row][k] * view_rows[k][col];
      if (col == 3) sum += projection[row][3];  // the view matrix's last row is (0, 0, 0, 1)
      out[std::size_t(col) * 4 + std::size_t(row)] = clamped(sum);
    }
  return out;
}

/// The clip `wanted` names: a clip of that name, else a decimal index.
std::optional<std::uint32_t> find_clip(const convert::scene& s, const std::string& wanted) {
  for (std::size_t i = 0; i < s.animations.size(); ++i)
    if (s.animations[i].name == wanted) return static_cast<std::uint32_t>(i);
  if (wanted.empty() || wanted.size() > 9 || !std::all_of(wanted.begin(), wanted.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto index = static_cast<std::uint32_t>(std::stoul(wanted));
  if (index < s.animations.size()) return index;
  return std::nullopt;
}

std::string clip_list(const convert::scene& s) {
  if (s.animations.empty()) return "the file has no clips";
  std::string out = "its clips:";
  // append(), not " " + std::to_string(): GCC 12 -O3 warns -Wrestrict on that
  // concatenation (a false positive), and the tool builds with -Werror.
  for (std::size_t i = 0; i < s.animations.size() && i < 16; ++i)
    out.append(" ").append(std::to_string(i)).append(" ").append(quote_path(s.animations[i].name))
        .append(i + 1 < s.animations.size() ? "," : "");
  if (s.animations.size() > 16) out.append(" ... (").append(std::to_string(s.animations.size())).append(")");
  return out;
}

/// Every posed mesh in one vertex buffer (position + normal, 24 bytes a
/// vertex) and one uint32 index buffer, a range of each per mesh: two
/// allocations whatever the mesh count (drivers cap the allocation count).
/// Triangles that touch a non-finite position are left out (the
/// rasteriser's handling of NaN is the driver's).
struct geometry {
  std::unique_ptr<vulkan::host_buffer> vertices, indices;
  struct range {
    std::uint32_t first_index = 0, index_count = 0;
    std::int32_t vertex_offset = 0;
  };
  std::vector<range> meshes;  // one per posed mesh
};

/// Empty on success, else why the geometry cannot be drawn.
std::string upload(const vulkan::device& gpu, const convert::posed_scene& posed, geometry& out) {
  std::vector<std::uint32_t> kept;
  std::uint64_t vertex_total = 0;
  for (const convert::posed_mesh& m : posed.meshes) {
    const std::size_t vertex_count = m.positions.size() / 3;
    geometry::range range;
    range.first_index = static_cast<std::uint32_t>(kept.size());
    range.vertex_offset = static_cast<std::int32_t>(vertex_total);
    for (std::size_t t = 0; t + 2 < m.indices.size(); t += 3) {
      bool finite = true;
      for (std::size_t k = 0; k < 3; ++k) {
        const std::uint32_t i = m.indices[t + k];
        finite = finite && i < vertex_count &&
                 untold::detail::all_finite(std::span<const float>(m.positions).subspan(std::size_t{i} * 3, 3));
      }
      if (finite) kept.insert(kept.end(), m.indices.begin() + std::ptrdiff_t(t), m.indices.begin() + std::ptrdiff_t(t + 3));
    }
    range.index_count = static_cast<std::uint32_t>(kept.size() - range.first_index);
    out.meshes.push_back(range);
    vertex_total += vertex_count;
    if (kept.size() > INT32_MAX || vertex_total > INT32_MAX)
      return "the posed scene has more than 2^31 vertices or indices (Vulkan's draw offsets are 32-bit)";
  }
  if (kept.empty()) return {};  // nothing to draw
  out.vertices = gpu.make_buffer(vertex_total * 24, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
  out.indices = gpu.make_buffer(kept.size() * 4, VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
  if (!out.vertices || !out.indices)
    return "cannot allocate Vulkan buffers of " + std::to_string(vertex_total * 24 + kept.size() * 4) + " bytes";
  auto* v = static_cast<float*>(out.vertices->mapped);
  for (const convert::posed_mesh& m : posed.meshes) {
    const std::size_t vertex_count = m.positions.size() / 3;
    for (std::size_t i = 0; i < vertex_count; ++i, v += 6) {
      std::memcpy(v, m.positions.data() + i * 3, 12);
      if (m.normals.size() >= (i + 1) * 3) std::memcpy(v + 3, m.normals.data() + i * 3, 12);
    }
  }
  std::memcpy(out.indices->mapped, kept.data(), kept.size() * 4);
  return {};
}

/// The supersampled RGBA8 image filtered down by 2 x 2 boxes (rounded to nearest).
std::vector<std::uint8_t> downsampled(const std::vector<std::byte>& big, std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> out(std::size_t{width} * height * 4);
  const std::size_t big_row = std::size_t{width} * supersampling * 4;
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x)
      for (std::size_t c = 0; c < 4; ++c) {
        unsigned sum = 0;
        for (std::uint32_t dy = 0; dy < supersampling; ++dy)
          for (std::uint32_t dx = 0; dx < supersampling; ++dx)
            sum += std::to_integer<unsigned>(
                big[(std::size_t{y} * supersampling + dy) * big_row + (std::size_t{x} * supersampling + dx) * 4 + c]);
        out[(std::size_t{y} * width + x) * 4 + c] = static_cast<std::uint8_t>((sum + 2) / 4);
      }
  return out;
}

std::vector<std::byte> encode_png(const std::vector<std::uint8_t>& rgba, std::uint32_t width, std::uint32_t height) {
  std::vector<std::byte> out;
  const auto append = [](void* context, void* data, int size) {
    auto* bytes = static_cast<std::vector<std::byte>*>(context);
    const auto* begin = static_cast<const std::byte*>(data);
    bytes->insert(bytes->end(), begin, begin + size);
  };
  stbi_write_png_to_func(append, &out, int(width), int(height), 4, rgba.data(), int(width * 4));
  return out;
}

}  // namespace

render_result render_file(const render_options& options) {
  render_result r;
  const auto fail = [&r](render_result::failure why, std::string message) {
    r.failed = why;
    r.error = std::move(message);
    return std::move(r);
  };
  using failure = render_result::failure;
  const render_camera& cam = options.camera;
  if (options.width == 0 || options.height == 0 || options.width > max_render_size || options.height > max_render_size)
    return fail(failure::usage, "--size " + std::to_string(options.width) + "x" + std::to_string(options.height) +
                                    ": width and height must be 1 to " + std::to_string(max_render_size));
  if (!untold::detail::is_finite(cam.fov_degrees) || !(cam.fov_degrees > 0) || !(cam.fov_degrees < 180))
    return fail(failure::usage, "--fov must be more than 0 and less than 180 degrees");
  if (!untold::detail::is_finite(options.time)) return fail(failure::usage, "--time must be a finite number of seconds");
  for (const auto& point : {cam.eye, cam.target})
    if (point && !untold::detail::all_finite(std::span<const float>(*point)))
      return fail(failure::usage, "--eye and --target must be finite x,y,z");

  auto bytes = read_file(options.input, options.limits.max_total_bytes);  // larger: R-LIMITS
  if (!bytes)
    return fail(bytes.error().code == errc::limit_exceeded ? failure::invalid : failure::io,
                quote_path(options.input.string()) + ": " + bytes.error().describe());
  const byte_span input(*bytes);
  untold::budget budget(options.limits, inputs_size(input.size(), options.animations));
  scene_import imported = import_scene("render", options.input, input, options.animations, options.limits, budget);
  if (!imported) return fail(imported.io_failure ? failure::io : failure::invalid, std::move(imported.error));
  const convert::scene& s = imported.scene;

  convert::pose_options pose_options;
  pose_options.lod = options.lod;
  pose_options.time = options.time;
  pose_options.limits = options.limits;
  pose_options.budget = &budget;
  if (!options.animation.empty()) {
    const auto clip = find_clip(s, options.animation);
    if (!clip) return fail(failure::usage, "--animation " + quote_path(options.animation) + ": no such clip; " + clip_list(s));
    pose_options.animation = *clip;
  }
  auto posed = convert::pose(s, pose_options);
  if (!posed) return fail(failure::invalid, quote_path(options.input.string()) + ": cannot pose: " + posed.error().describe());

  std::string why_not;
  const auto gpu = vulkan::device::create(why_not, "untold render");
  if (!gpu) return fail(failure::no_device, "no Vulkan device: " + why_not);
  r.device = gpu->name();

  const double aspect = double(options.width) / double(options.height);
  const view v = frame_camera(cam, *posed, aspect);
  const std::array<float, 16> matrix = view_projection(v, aspect);
  vec3 right, up, forward;
  view_axes(v, right, up, forward);
  // The headlight sits a little above and left of the eye, so faces facing
  // the camera are not all equally bright.
  const vec3 light = normalized(add(add(scaled(forward, -1.0), scaled(up, 0.45)), scaled(right, -0.25)));

  geometry uploaded;
  if (std::string why = upload(*gpu, *posed, uploaded); !why.empty()) return fail(failure::invalid, std::move(why));
  std::vector<draw_constants> constants(posed->meshes.size());
  std::vector<vulkan::draw_call> calls;
  for (std::size_t i = 0; i < constants.size(); ++i) {
    const geometry::range& range = uploaded.meshes[i];
    if (range.index_count == 0) continue;
    draw_constants& c = constants[i];
    std::copy(matrix.begin(), matrix.end(), c.view_projection);
    const std::array<float, 3> color = convert::display_color(posed->meshes[i].material);
    c.color[0] = color[0], c.color[1] = color[1], c.color[2] = color[2], c.color[3] = 1;
    c.light[0] = float(light[0]), c.light[1] = float(light[1]), c.light[2] = float(light[2]), c.light[3] = ambient;
    calls.push_back({uploaded.vertices.get(), uploaded.indices.get(), VK_INDEX_TYPE_UINT32, range.index_count,
                     std::as_bytes(std::span(&c, 1)), range.first_index, range.vertex_offset});
    r.triangles += range.index_count / 3;
  }

  vulkan::target t;
  t.width = options.width * supersampling;
  t.height = options.height * supersampling;
  t.color_format = VK_FORMAT_R8G8B8A8_UNORM;
  t.bytes_per_pixel = 4;
  for (std::size_t c = 0; c < 4; ++c) t.clear.float32[c] = float(options.background[c]) / 255.0f;
  t.depth = true;
  t.cull = VK_CULL_MODE_NONE;
  const std::vector<std::byte> image =
      gpu->draw(t, {24, {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0}, {1, 0, VK_FORMAT_R32G32B32_SFLOAT, 12}}},
                {shaded_vert, shaded_frag, sizeof(draw_constants)}, calls);
  if (image.empty()) return fail(failure::no_device, "the Vulkan draw failed on " + r.device);

  r.png = encode_png(downsampled(image, options.width, options.height), options.width, options.height);
  r.meshes = calls.size();
  r.skipped_primitives = posed->skipped_primitives;
  r.eye = narrowed(v.eye);
  r.target = narrowed(v.target);
  r.fov_degrees = cam.fov_degrees;
  return r;
}

}  // namespace untold::tools
