// tools/pipeline/assetc_ktx2.cpp - image decode, texture encoders and the KTX2
// container for `untold build` (see assetc_ktx2.hpp).
#include "assetc_ktx2.hpp"

#include <array>
#include <climits>
#include <cstring>

#include <zstd.h>

// The one translation unit with stb_image's implementation.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

namespace untold::tools {

namespace {

constexpr std::array<std::uint8_t, 12> ktx2_identifier = {0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32,
                                                          0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A};
constexpr std::uint32_t vk_r8g8b8a8_unorm = 37;
constexpr std::uint32_t vk_r8g8b8a8_srgb = 43;
constexpr std::uint32_t supercompression_zstd = 2;
constexpr std::size_t header_size = 80;     // identifier + 9 u32 + index (4 u32 + 2 u64)
constexpr std::size_t level_entry_size = 24;

void put32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFFu));
}
void put64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFFu));
}
void set32(std::vector<std::byte>& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);
}
void set64(std::vector<std::byte>& out, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);
}
std::uint32_t get32(byte_span b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
std::uint64_t get64(byte_span b, std::size_t at) { return get32(b, at) | std::uint64_t{get32(b, at + 4)} << 32; }

/// The Khronos Basic Data Format Descriptor of RGBA8 (4 samples). KTX2
/// requires bytesPlane0 = 0 when the levels are supercompressed.
void put_rgba8_dfd(std::vector<std::byte>& out, bool srgb) {
  const std::uint32_t block_size = 24 + 16 * 4;
  put32(out, 4 + block_size);  // dfdTotalSize
  put32(out, 0);               // vendorId 0 (Khronos), descriptorType 0 (basic)
  put32(out, 2u | block_size << 16);  // versionNumber 2, descriptorBlockSize
  // colorModel RGBSDA (1), primaries BT709 (1), transfer sRGB (2) / linear (1), flags: straight alpha.
  out.push_back(std::byte{1});
  out.push_back(std::byte{1});
  out.push_back(static_cast<std::byte>(srgb ? 2 : 1));
  out.push_back(std::byte{0});
  put32(out, 0);  // texelBlockDimension 1x1x1x1 (stored minus one)
  put32(out, 0);  // bytesPlane0..3: 0 because supercompressed
  put32(out, 0);  // bytesPlane4..7
  const std::array<std::uint8_t, 4> channel = {0, 1, 2, 15};  // R G B A
  for (std::size_t c = 0; c < 4; ++c) {
    // Alpha of an sRGB format is linear: KHR_DF_SAMPLE_DATATYPE_LINEAR (0x10).
    const std::uint8_t type = static_cast<std::uint8_t>(channel[c] | (srgb && c == 3 ? 0x10 : 0));
    put32(out, static_cast<std::uint32_t>(8 * c) | 7u << 16 | static_cast<std::uint32_t>(type) << 24);
    put32(out, 0);    // samplePosition
    put32(out, 0);    // sampleLower
    put32(out, 255);  // sampleUpper
  }
}

class raw_ktx2_encoder final : public texture_encoder {
 public:
  explicit raw_ktx2_encoder(int level) : level_(level) {}
  std::string_view name() const noexcept override { return "raw-rgba8-zstd"; }
  std::uint32_t version() const noexcept override { return 2; }
  bool compresses() const noexcept override { return false; }

  std::optional<std::string> encode(const rgba8_image& image, bool srgb, texture_mode /*mode*/,
                                    std::vector<std::byte>& out) const override {
    const std::size_t raw = std::size_t{image.width} * image.height * 4;
    if (image.width == 0 || image.height == 0 || image.pixels.size() != raw) return "empty or inconsistent image";
    std::vector<std::byte> packed(ZSTD_compressBound(raw));
    const std::size_t n = ZSTD_compress(packed.data(), packed.size(), image.pixels.data(), raw, level_);
    if (ZSTD_isError(n)) return std::string("zstd: ") + ZSTD_getErrorName(n);
    packed.resize(n);

    out.clear();
    out.insert(out.end(), reinterpret_cast<const std::byte*>(ktx2_identifier.data()),
               reinterpret_cast<const std::byte*>(ktx2_identifier.data()) + ktx2_identifier.size());
    put32(out, srgb ? vk_r8g8b8a8_srgb : vk_r8g8b8a8_unorm);
    put32(out, 1);  // typeSize
    put32(out, image.width);
    put32(out, image.height);
    put32(out, 0);  // pixelDepth
    put32(out, 0);  // layerCount
    put32(out, 1);  // faceCount
    put32(out, 1);  // levelCount
    put32(out, supercompression_zstd);
    const std::size_t index_at = out.size();
    put32(out, 0);  // dfdByteOffset
    put32(out, 0);  // dfdByteLength
    put32(out, 0);  // kvdByteOffset
    put32(out, 0);  // kvdByteLength
    put64(out, 0);  // sgdByteOffset (Zstandard has no global data)
    put64(out, 0);  // sgdByteLength
    const std::size_t level_at = out.size();
    put64(out, 0);
    put64(out, n);
    put64(out, raw);
    const std::size_t dfd_at = out.size();
    put_rgba8_dfd(out, srgb);
    const std::size_t dfd_len = out.size() - dfd_at;
    // One key/value pair, fixed text (no version, no date: output stays deterministic).
    const std::size_t kvd_at = out.size();
    const std::string_view kv("KTXwriter\0untold build", 22);
    put32(out, static_cast<std::uint32_t>(kv.size()));
    out.insert(out.end(), reinterpret_cast<const std::byte*>(kv.data()), reinterpret_cast<const std::byte*>(kv.data()) + kv.size());
    while (out.size() % 4 != 0) out.push_back(std::byte{0});
    const std::size_t kvd_len = out.size() - kvd_at;
    // Supercompressed levels have alignment 1 (KTX2 3.9): no mip padding, no sgd.
    const std::size_t data_at = out.size();
    out.insert(out.end(), packed.begin(), packed.end());

    set32(out, index_at + 0, static_cast<std::uint32_t>(dfd_at));
    set32(out, index_at + 4, static_cast<std::uint32_t>(dfd_len));
    set32(out, index_at + 8, static_cast<std::uint32_t>(kvd_at));
    set32(out, index_at + 12, static_cast<std::uint32_t>(kvd_len));
    set64(out, level_at, data_at);
    return std::nullopt;
  }

 private:
  int level_;
};

}  // namespace

std::optional<std::string> decode_image(byte_span bytes, rgba8_image& out) {
  if (bytes.empty() || bytes.size() > static_cast<std::size_t>(INT_MAX)) return "empty or oversized image";
  int w = 0, h = 0, channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()),
                                          &w, &h, &channels, 4);
  if (pixels == nullptr) return std::string("cannot decode image: ") + stbi_failure_reason();
  out.width = static_cast<std::uint32_t>(w);
  out.height = static_cast<std::uint32_t>(h);
  out.pixels.assign(pixels, pixels + std::size_t{out.width} * out.height * 4);
  stbi_image_free(pixels);
  return std::nullopt;
}

std::unique_ptr<texture_encoder> make_raw_ktx2_encoder(int zstd_level) {
  return std::make_unique<raw_ktx2_encoder>(zstd_level);
}

std::unique_ptr<texture_encoder> make_texture_encoder(bool compress, bool& fell_back) {
  // No UASTC encoder is packaged (Basis Universal): compression requests fall back.
  fell_back = compress;
  return make_raw_ktx2_encoder();
}

std::optional<std::string> check_ktx2(byte_span b, ktx2_info* info) {
  if (b.size() < header_size || std::memcmp(b.data(), ktx2_identifier.data(), ktx2_identifier.size()) != 0)
    return "not a KTX2 file (identifier)";
  ktx2_info i;
  i.vk_format = get32(b, 12);
  i.width = get32(b, 20);
  i.height = get32(b, 24);
  const std::uint32_t faces = get32(b, 36);
  i.levels = get32(b, 40);
  i.supercompression = get32(b, 44);
  i.srgb = i.vk_format == vk_r8g8b8a8_srgb;
  if (i.width == 0 || faces != 1) return "zero width or not one face";
  const std::uint32_t levels = i.levels == 0 ? 1 : i.levels;
  const std::uint64_t dfd_at = get32(b, 48), dfd_len = get32(b, 52), kvd_at = get32(b, 56), kvd_len = get32(b, 60);
  if (header_size + std::uint64_t{levels} * level_entry_size > b.size()) return "level index past the end";
  if (dfd_at + dfd_len > b.size() || kvd_at + kvd_len > b.size()) return "DFD or key/value data past the end";
  if (dfd_len < 4 || get32(b, static_cast<std::size_t>(dfd_at)) != dfd_len) return "dfdTotalSize does not match";
  for (std::uint32_t l = 0; l < levels; ++l) {
    const std::size_t at = header_size + std::size_t{l} * level_entry_size;
    const std::uint64_t off = get64(b, at), len = get64(b, at + 8), raw = get64(b, at + 16);
    if (off > b.size() || len > b.size() - off) return "level " + std::to_string(l) + " past the end";
    if (l == 0 && i.supercompression == supercompression_zstd &&
        (i.vk_format == vk_r8g8b8a8_srgb || i.vk_format == vk_r8g8b8a8_unorm)) {
      const std::uint64_t expect = std::uint64_t{i.width} * (i.height == 0 ? 1 : i.height) * 4;
      if (raw != expect) return "level 0 uncompressed size is not width x height x 4";
      const unsigned long long content = ZSTD_getFrameContentSize(b.data() + off, len);
      if (content != expect) return "level 0 Zstandard frame has the wrong content size";
      std::vector<std::byte> scratch(expect);
      const std::size_t n = ZSTD_decompress(scratch.data(), scratch.size(), b.data() + off, len);
      if (ZSTD_isError(n) || n != expect) return "level 0 does not decompress";
    }
  }
  if (info != nullptr) *info = i;
  return std::nullopt;
}

}  // namespace untold::tools
