#include "image_info.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include <stb/stb_image.h>  // the implementation is compiled in assetc_ktx2.cpp

namespace untold::tools {

namespace {

std::uint32_t be16(std::span<const std::byte> b, std::size_t at) {
  return (std::to_integer<std::uint32_t>(b[at]) << 8) | std::to_integer<std::uint32_t>(b[at + 1]);
}
std::uint32_t be32(std::span<const std::byte> b, std::size_t at) { return (be16(b, at) << 16) | be16(b, at + 2); }

std::optional<image_size> png_size(std::span<const std::byte> b) {
  constexpr std::array<unsigned char, 8> signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() < 24) return std::nullopt;
  for (std::size_t i = 0; i < signature.size(); ++i)
    if (std::to_integer<unsigned char>(b[i]) != signature[i]) return std::nullopt;
  // The first chunk is IHDR: length(4) "IHDR"(4) width(4) height(4).
  if (std::to_integer<char>(b[12]) != 'I' || std::to_integer<char>(b[13]) != 'H') return std::nullopt;
  return image_size{be32(b, 16), be32(b, 20)};
}

std::optional<image_size> jpeg_size(std::span<const std::byte> b) {
  if (b.size() < 4 || std::to_integer<unsigned>(b[0]) != 0xFF || std::to_integer<unsigned>(b[1]) != 0xD8)
    return std::nullopt;
  std::size_t at = 2;
  while (at + 4 <= b.size()) {
    if (std::to_integer<unsigned>(b[at]) != 0xFF) return std::nullopt;
    const unsigned marker = std::to_integer<unsigned>(b[at + 1]);
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length
      at += 2;
      continue;
    }
    const std::uint32_t length = be16(b, at + 2);
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (at + 9 > b.size()) return std::nullopt;
      return image_size{be16(b, at + 7), be16(b, at + 5)};
    }
    if (length < 2) return std::nullopt;
    at += 2 + length;
  }
  return std::nullopt;
}

}  // namespace

std::optional<image_size> sniff_image_size(std::span<const std::byte> bytes) {
  if (auto s = png_size(bytes)) return s;
  if (auto s = jpeg_size(bytes)) return s;
  // TGA, BMP, GIF, PSD, HDR, PNM: stb_image reads their headers only.
  if (bytes.empty() || bytes.size() > static_cast<std::size_t>(INT_MAX)) return std::nullopt;
  int width = 0, height = 0, channels = 0;
  if (stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &width,
                            &height, &channels) == 0 ||
      width <= 0 || height <= 0)
    return std::nullopt;
  return image_size{static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(height)};
}

std::optional<image_size> sniff_image_size(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> chars(std::size_t{1} << 20);
  in.read(chars.data(), static_cast<std::streamsize>(chars.size()));
  chars.resize(static_cast<std::size_t>(in.gcount()));
  return sniff_image_size(std::as_bytes(std::span(chars)));
}

texture_format format_from_extension(std::string_view extension) {
  std::string ext(extension);
  if (!ext.empty() && ext.front() == '.') ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* eight_bit : {"png", "jpg", "jpeg", "tga", "bmp", "gif", "psd", "ppm", "pgm", "webp"})
    if (ext == eight_bit) return texture_format::rgba8;
  if (ext == "hdr" || ext == "exr") return texture_format::rgba16_float;
  return texture_format::unknown;
}

}  // namespace untold::tools
