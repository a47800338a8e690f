// tools/pipeline/assetc_ktx2.cpp - image decode, texture encoders and the KTX2
// container for `untold build` (see assetc_ktx2.hpp).
#include "assetc_ktx2.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zstd.h>

#include "files.hpp"

// The one translation unit with stb_image's implementation.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

extern char** environ;  // POSIX: the environment posix_spawn passes on

namespace untold::tools {

namespace {

constexpr std::array<std::uint8_t, 12> ktx2_identifier = {0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32,
                                                          0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A};
constexpr std::uint32_t vk_undefined = 0;
constexpr std::uint32_t vk_r8g8b8a8_unorm = 37;
constexpr std::uint32_t vk_r8g8b8a8_srgb = 43;
constexpr std::uint8_t transfer_srgb = 2;
constexpr std::uint64_t max_checked_level_bytes = std::uint64_t{1} << 30;
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
    put32(out, ktx2_scheme_zstd);
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

namespace {

/// A private directory under the system's temporary directory, removed with
/// everything in it when this goes out of scope.
class temporary_directory {
 public:
  temporary_directory() {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "untold-basisu-XXXXXX").string();
    if (ec) return;
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~temporary_directory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

/// Runs `args` (args[0] the executable, no shell), standard input from
/// /dev/null, standard output and error into `log`. The exit status, or -1
/// when it could not start or did not exit normally.
int run_process(const std::vector<std::string>& args, const std::filesystem::path& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The last non-empty line of a process log (basisu prints its error last).
std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

bool is_executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// An uncompressed 32-bit TGA, top-left origin (image descriptor 0x28: 8
/// alpha bits, top to bottom), BGRA: the simplest input basisu reads.
void write_tga(const rgba8_image& image, std::vector<char>& out) {
  out.assign(18, 0);
  out[2] = 2;  // uncompressed true-colour
  out[12] = static_cast<char>(image.width & 0xFF);
  out[13] = static_cast<char>(image.width >> 8);
  out[14] = static_cast<char>(image.height & 0xFF);
  out[15] = static_cast<char>(image.height >> 8);
  out[16] = 32;
  out[17] = 0x28;
  out.reserve(out.size() + image.pixels.size());
  for (std::size_t p = 0; p < image.pixels.size(); p += 4)
    for (const std::size_t c : {2, 1, 0, 3}) out.push_back(static_cast<char>(image.pixels[p + c]));
}

class basisu_encoder final : public texture_encoder {
 public:
  basisu_encoder(std::filesystem::path exe, basis_codec codec, const std::string& basisu_version)
      : exe_(std::move(exe)), codec_(codec),
        name_(std::string(codec == basis_codec::uastc ? "basisu-uastc " : "basisu-etc1s ") + basisu_version) {}
  std::string_view name() const noexcept override { return name_; }
  std::uint32_t version() const noexcept override { return 1; }  // the command line below
  bool compresses() const noexcept override { return true; }

  std::optional<std::string> encode(const rgba8_image& image, bool srgb, texture_mode mode,
                                    std::vector<std::byte>& out) const override {
    if (image.width == 0 || image.height == 0 || image.pixels.size() != std::size_t{image.width} * image.height * 4)
      return "empty or inconsistent image";
    if (image.width > 0xFFFF || image.height > 0xFFFF) return "larger than 65535 pixels on a side";
    const temporary_directory dir;
    if (dir.path().empty()) return "cannot create a temporary directory for basisu";
    // assetc's swizzles: a normal map keeps X and Y (rg01), a grayscale image its red channel (r001).
    rgba8_image input = image;
    if (mode == texture_mode::normal || mode == texture_mode::grayscale)
      for (std::size_t p = 0; p < input.pixels.size(); p += 4) {
        if (mode == texture_mode::grayscale) input.pixels[p + 1] = 0;
        input.pixels[p + 2] = 0;
        input.pixels[p + 3] = 255;
      }
    std::vector<char> tga;
    write_tga(input, tga);
    const std::filesystem::path in = dir.path() / "in.tga", ktx = dir.path() / "out.ktx2", log = dir.path() / "log.txt";
    {
      std::ofstream f(in, std::ios::binary);
      if (!f.write(tga.data(), static_cast<std::streamsize>(tga.size()))) return "cannot write " + in.string();
    }
    std::vector<std::string> args = {exe_.string(), "-ktx2", "-mipmap", "-no_multithreading"};
    if (codec_ == basis_codec::uastc)
      for (const char* a : {"-uastc", "-uastc_level", "3", "-ktx2_zstandard_level", "19"}) args.emplace_back(a);
    if (mode == texture_mode::normal) args.emplace_back("-normal_map");
    else if (!srgb) args.emplace_back("-linear");
    for (const std::string& a : {std::string("-file"), in.string(), std::string("-output_file"), ktx.string()})
      args.push_back(a);
    const int status = run_process(args, log);
    if (status != 0)
      return exe_.string() + (status < 0 ? " did not run" : " failed (exit " + std::to_string(status) + ")") + ": " +
             last_line(log);
    auto bytes = read_file_bytes(ktx);
    if (!bytes) return "basisu wrote no " + ktx.filename().string();
    if (auto e = check_ktx2(*bytes)) return "basisu wrote an invalid KTX2 file: " + *e;
    out = std::move(*bytes);
    return std::nullopt;
  }

 private:
  std::filesystem::path exe_;
  basis_codec codec_;
  std::string name_;
};

}  // namespace

basisu_location find_basisu(const std::filesystem::path& explicit_path) {
  basisu_location r;
  const auto named = [&r](const std::filesystem::path& p, const char* by) {
    r.found_by = by;
    if (is_executable_file(p)) r.path = p;
    else r.error = std::string(by) + " names '" + p.string() + "', which is not an executable file";
    return r;
  };
  if (!explicit_path.empty()) return named(explicit_path, "--basisu");
  if (const char* env = std::getenv(basisu_env); env != nullptr && *env != '\0') return named(env, basisu_env);
  const char* path = std::getenv("PATH");
  for (std::string_view rest = path != nullptr ? path : ""; !rest.empty();) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "basisu";
    if (is_executable_file(candidate)) {
      r.path = candidate;
      r.found_by = "PATH";
      break;
    }
  }
  return r;
}

std::unique_ptr<texture_encoder> make_basisu_encoder(const std::filesystem::path& basisu, basis_codec codec,
                                                     std::string& error) {
  const temporary_directory dir;
  if (dir.path().empty()) {
    error = "cannot create a temporary directory for basisu";
    return nullptr;
  }
  const std::filesystem::path log = dir.path() / "version.txt";
  const int status = run_process({basisu.string(), "-version"}, log);
  // "Basis Universal GPU Texture Compressor v1.16.3"
  std::ifstream in(log);
  std::string line, version;
  while (version.empty() && std::getline(in, line))
    if (const std::size_t at = line.find("Basis Universal GPU Texture Compressor v"); at != std::string::npos)
      version = line.substr(at + 40);
  while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back()))) version.pop_back();
  if (status != 0 || version.empty()) {
    error = "'" + basisu.string() + "' is not a working Basis Universal encoder (`-version` " +
            (status < 0 ? std::string("did not run") : "exit " + std::to_string(status)) + ", no version printed)";
    return nullptr;
  }
  return std::make_unique<basisu_encoder>(basisu, codec, version);
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
  if (i.width == 0 || faces != 1) return "zero width or not one face";
  const std::uint32_t height = i.height == 0 ? 1 : i.height;
  const std::uint32_t levels = i.levels == 0 ? 1 : i.levels;
  if (levels > static_cast<std::uint32_t>(std::bit_width(std::max(i.width, height))))
    return "more mip levels than a " + std::to_string(i.width) + "x" + std::to_string(height) + " image has";
  const std::uint64_t dfd_at = get32(b, 48), dfd_len = get32(b, 52), kvd_at = get32(b, 56), kvd_len = get32(b, 60);
  const std::uint64_t sgd_at = get64(b, 64), sgd_len = get64(b, 72);
  if (header_size + std::uint64_t{levels} * level_entry_size > b.size()) return "level index past the end";
  if (dfd_at + dfd_len > b.size() || kvd_at + kvd_len > b.size()) return "DFD or key/value data past the end";
  if (sgd_at > b.size() || sgd_len > b.size() - sgd_at) return "supercompression global data past the end";
  if (dfd_len < 4 || get32(b, static_cast<std::size_t>(dfd_at)) != dfd_len) return "dfdTotalSize does not match";
  // The basic descriptor block: dfdTotalSize, then vendor/type, version/size, then
  // colorModel, colorPrimaries, transferFunction, flags.
  if (dfd_len < 4 + 24) return "DFD shorter than a basic descriptor block";
  i.color_model = static_cast<std::uint8_t>(b[static_cast<std::size_t>(dfd_at) + 12]);
  i.transfer = static_cast<std::uint8_t>(b[static_cast<std::size_t>(dfd_at) + 14]);
  i.global_data_bytes = sgd_len;
  i.srgb = i.vk_format == vk_r8g8b8a8_srgb || (i.vk_format == vk_undefined && i.transfer == transfer_srgb);
  if (i.supercompression == ktx2_scheme_basislz && sgd_len == 0) return "BasisLZ without global data";
  const bool rgba8 = i.vk_format == vk_r8g8b8a8_srgb || i.vk_format == vk_r8g8b8a8_unorm;
  const bool uastc = i.vk_format == vk_undefined && i.color_model == ktx2_model_uastc;
  const bool sized = (rgba8 || uastc) && (i.supercompression == ktx2_scheme_none || i.supercompression == ktx2_scheme_zstd);
  std::vector<std::byte> scratch;
  for (std::uint32_t l = 0; l < levels; ++l) {
    const std::size_t at = header_size + std::size_t{l} * level_entry_size;
    const std::uint64_t off = get64(b, at), len = get64(b, at + 8), raw = get64(b, at + 16);
    const std::string level = "level " + std::to_string(l);
    if (off > b.size() || len > b.size() - off) return level + " past the end";
    if (!sized) continue;
    // Each factor is below 2^32, so the product of the two fits; the byte size is checked against the cap first.
    const std::uint64_t w = std::max<std::uint64_t>(1, i.width >> l), h = std::max<std::uint64_t>(1, height >> l);
    const std::uint64_t units = rgba8 ? w * h : ((w + 3) / 4) * ((h + 3) / 4);
    const std::uint64_t unit_bytes = rgba8 ? 4 : 16;
    if (units > max_checked_level_bytes / unit_bytes) return level + " is larger than the 1 GiB this check decompresses";
    const std::uint64_t expect = units * unit_bytes;
    if (raw != expect)
      return level + " uncompressed size " + std::to_string(raw) + " is not its " + std::to_string(w) + "x" +
             std::to_string(h) + " size " + std::to_string(expect);
    if (i.supercompression == ktx2_scheme_none) {
      if (len != expect) return level + " has " + std::to_string(len) + " bytes, not " + std::to_string(expect);
      continue;
    }
    const unsigned long long content = ZSTD_getFrameContentSize(b.data() + off, len);
    if (content != expect) return level + " Zstandard frame has the wrong content size";
    scratch.resize(expect);
    const std::size_t n = ZSTD_decompress(scratch.data(), scratch.size(), b.data() + off, len);
    if (ZSTD_isError(n) || n != expect) return level + " does not decompress";
  }
  if (info != nullptr) *info = i;
  return std::nullopt;
}

}  // namespace untold::tools
