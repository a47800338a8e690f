// tools/pipeline/image_info.hpp - what cook records about a referenced image: its
// texture_format from the file extension, and its size from the image
// header when the bytes are at hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

#include <untold/format.hpp>

namespace untold::tools {

struct image_size {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// PNG (IHDR) or baseline/progressive JPEG (SOFn) dimensions, else what
/// stb_image's header reader says (TGA, BMP, GIF, PSD, HDR, PNM); nullopt for
/// anything else or truncated data. Safe on any bytes (stb reads headers
/// only, bounded by the span).
[[nodiscard]] std::optional<image_size> sniff_image_size(std::span<const std::byte> bytes);

/// The same for a file (reads at most its first MiB).
[[nodiscard]] std::optional<image_size> sniff_image_size(const std::filesystem::path& file);

/// rgba8 for 8-bit image files (png, jpg, tga, bmp, ...), rgba16_float for
/// hdr/exr, unknown for GPU containers (ktx, ktx2, dds, basis) and the rest.
[[nodiscard]] texture_format format_from_extension(std::string_view extension);

}  // namespace untold::tools
