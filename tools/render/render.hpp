// tools/render/render.hpp - `untold render`: any model file the library reads
// into a PNG, drawn offscreen through Vulkan (lavapipe on machines with no
// GPU). Built only when Vulkan and glslangValidator are found (the library
// untold_render; tools/CMakeLists.txt).
//
//   untold::tools::render_options o;
//   o.input = "Jack.mdl";
//   o.animations = {"Jack_Walk.ani"};
//   o.animation = "0";  o.time = 0.5f;       // a clip by name or index, seconds
//   auto r = untold::tools::render_file(o);  // r.png: the encoded image
//
// Steps: import_scene (pipeline/convert.hpp: every format `convert` reads) ->
// convert::pose (untold/convert/pose.hpp: world space, skinned, morphed, one
// LOD) -> Vulkan (vulkan_offscreen.hpp: depth buffer, RGBA8, Lambert with a
// headlight plus ambient, convert::display_color per material, both faces
// drawn) at twice the size -> 2 x 2 box filter -> PNG (stb_image_write).
//
// Deterministic on one machine and driver: the same input and options give
// the same bytes (no clock, no threads of our own, a fixed PNG encoder).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <untold/limits.hpp>

namespace untold::tools {

/// The largest width and height `render_file` accepts (the image is drawn at
/// twice that before it is filtered down).
inline constexpr std::uint32_t max_render_size = 2048;

struct render_camera {
  /// Where the camera is, and what it looks at (world space). Unset: framed
  /// from the posed bounds: the target is their centre and the eye looks at
  /// it from the front (+Z), right and above, far enough that the bounding
  /// sphere fills the narrower field of view.
  std::optional<std::array<float, 3>> eye, target;
  /// Vertical field of view in degrees, in (0, 180).
  float fov_degrees = 35;
};

struct render_options {
  std::filesystem::path input;
  /// Clip files of formats that keep them apart (Urho3D .ani), as `cook --animations`.
  std::vector<std::filesystem::path> animations;
  std::uint32_t width = 512, height = 512;  // 1 .. max_render_size each
  render_camera camera{};
  /// RGBA; the alpha is the background's in the PNG (0: transparent).
  std::array<std::uint8_t, 4> background{0x30, 0x33, 0x38, 0xFF};
  /// 0: full detail; k: each mesh's level k, or its coarsest (convert::pose_options::lod).
  std::uint32_t lod = 0;
  /// A clip of the scene by name, or by index when no clip has that name;
  /// empty: the rest pose.
  std::string animation;
  float time = 0;  // seconds into the clip
  untold::limits limits{};
};

struct render_result {
  /// What went wrong, to pick the exit code: a bad option (size, clip, fov),
  /// invalid input (the reader's rule id is in `error`), an unreadable file,
  /// or no usable Vulkan device.
  enum class failure : std::uint8_t { none, usage, invalid, io, no_device };
  failure failed = failure::none;
  std::string error;  // empty on success

  std::vector<std::byte> png;  // the encoded image
  std::string device;          // the Vulkan device's name
  std::uint64_t meshes = 0, triangles = 0, skipped_primitives = 0;
  std::array<float, 3> eye{}, target{};  // the camera used
  float fov_degrees = 0;
  explicit operator bool() const noexcept { return failed == failure::none; }
};

/// Renders options.input as described above. Safe on untrusted input: the
/// importers' checks and one budget (limits, input size) cover the import
/// and the pose; the image memory is bounded by max_render_size. Nothing is
/// written: the caller writes `png`.
[[nodiscard]] render_result render_file(const render_options& options);

}  // namespace untold::tools
