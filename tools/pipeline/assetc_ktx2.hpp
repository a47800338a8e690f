// tools/pipeline/assetc_ktx2.hpp - the texture side of `untold build`: image decode
// (PNG/JPEG/TGA/BMP through stb_image), the pluggable texture encoder, and
// the KTX2 container it writes.
//
// assetc encodes UASTC through the Basis Universal encoder, which Debian
// does not package. The only encoder here writes what assetc writes for
// `texture.compress: false`: one level of VK_FORMAT_R8G8B8A8_SRGB/_UNORM
// with Zstandard supercompression (scheme 2), pixel-exact. A UASTC encoder
// plugs in by implementing texture_encoder and returning it from
// make_texture_encoder; the build report says which encoder ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <untold/bytes.hpp>

namespace untold::tools {

struct rgba8_image {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // width * height * 4, rows top to bottom
};

/// Decodes PNG/JPEG/TGA/BMP/GIF bytes into RGBA8. Error text on failure.
[[nodiscard]] std::optional<std::string> decode_image(byte_span bytes, rgba8_image& out);

/// How a texture is meant to be sampled (assetc's encoder modes).
enum class texture_mode : std::uint8_t { color, linear_color, normal, grayscale };

class texture_encoder {
 public:
  virtual ~texture_encoder() = default;
  /// Short name for reports ("raw-rgba8-zstd", "uastc").
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// Bumped when the bytes it writes change: part of the build cache key.
  [[nodiscard]] virtual std::uint32_t version() const noexcept = 0;
  /// True when it performs block compression (texture.compress: true).
  [[nodiscard]] virtual bool compresses() const noexcept = 0;
  /// Writes a complete .ktx2 file. Error text on failure. Deterministic.
  [[nodiscard]] virtual std::optional<std::string> encode(const rgba8_image& image, bool srgb, texture_mode mode,
                                                          std::vector<std::byte>& out) const = 0;
};

/// Raw R8G8B8A8 + Zstandard KTX2 (level `zstd_level`), pixel-exact.
[[nodiscard]] std::unique_ptr<texture_encoder> make_raw_ktx2_encoder(int zstd_level = 19);

/// The encoder for `compress`: a block-compressing one when the build has
/// it (none today), else the raw one. `fell_back` says which happened.
[[nodiscard]] std::unique_ptr<texture_encoder> make_texture_encoder(bool compress, bool& fell_back);

struct ktx2_info {
  std::uint32_t vk_format = 0, width = 0, height = 0, levels = 0, supercompression = 0;
  bool srgb = false;
};

/// Structural check of a KTX2 file as written here: identifier, header,
/// index and level ranges inside the file, DFD size, and (for Zstandard
/// RGBA8 files) that level 0 decompresses to exactly width*height*4 bytes.
[[nodiscard]] std::optional<std::string> check_ktx2(byte_span bytes, ktx2_info* info = nullptr);

}  // namespace untold::tools
