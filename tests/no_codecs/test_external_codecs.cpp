// The codec hook (compression.hpp, UNTOLD_EXTERNAL_CODECS): a build without
// the library's lz4/zstd support (no UNTOLD_HAS_* macros, as tests/no_codecs)
// that defines the hook decodes lz4 and zstd chunks through the program's
// untold_external_decode - the web viewer's build does this with JavaScript
// decoders (web/codecs.js). Here the hook is liblz4 and libzstd called
// directly, and counts its calls. Compiled on its own (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <vector>

#include <untold/compression.hpp>

static_assert(!untold::compression_available(untold::compression::lz4));  // decoding only: no encoder
static_assert(!untold::compression_available(untold::compression::zstd));

namespace {

int calls = 0, prefix_calls = 0;
bool refuse = false;

std::vector<std::byte> sample(std::size_t n) {
  std::vector<std::byte> raw(n);
  for (std::size_t i = 0; i < n; ++i) raw[i] = static_cast<std::byte>((i * 7) % 13 == 0 ? i % 251 : 0);
  return raw;
}

std::vector<std::byte> lz4_block(const std::vector<std::byte>& raw) {
  std::vector<std::byte> out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(raw.size()), static_cast<int>(out.size()));
  REQUIRE(n > 0);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::vector<std::byte> zstd_frame(const std::vector<std::byte>& raw) {
  std::vector<std::byte> out(ZSTD_compressBound(raw.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace

// The hook: exact decodes, or prefix decodes (out_size < size), with the codec libraries themselves.
extern "C" int untold_external_decode(std::uint32_t method, const void* stored, std::size_t stored_size, void* out,
                                      std::size_t out_size, std::uint64_t size) noexcept {
  ++calls;
  const bool prefix = out_size < size;
  prefix_calls += prefix ? 1 : 0;
  if (refuse) return 1;
  if (method == 1) {
    char* dst = static_cast<char*>(out);
    const int n = prefix ? LZ4_decompress_safe_partial(static_cast<const char*>(stored), dst, static_cast<int>(stored_size),
                                                       static_cast<int>(out_size), static_cast<int>(out_size))
                         : LZ4_decompress_safe(static_cast<const char*>(stored), dst, static_cast<int>(stored_size),
                                               static_cast<int>(out_size));
    return n >= 0 && static_cast<std::size_t>(n) == out_size ? 0 : 1;
  }
  if (method != 2) return 1;
  // The frame must declare the chunk's size: nothing larger is ever allocated.
  if (ZSTD_getFrameContentSize(stored, stored_size) != size) return 1;
  std::vector<char> whole(static_cast<std::size_t>(size));
  const std::size_t n = ZSTD_decompress(whole.data(), whole.size(), stored, stored_size);
  if (ZSTD_isError(n) || n != whole.size()) return 1;
  if (out_size != 0) std::memcpy(out, whole.data(), out_size);
  return 0;
}

TEST_CASE("external codecs: lz4 and zstd chunks are decoded by the program's hook") {
  const auto raw = sample(4096);
  for (const auto method : {untold::compression::lz4, untold::compression::zstd}) {
    CAPTURE(static_cast<int>(method));
    const auto stored = method == untold::compression::lz4 ? lz4_block(raw) : zstd_frame(raw);
    std::vector<std::byte> out(raw.size());
    calls = 0;
    REQUIRE(untold::decompress(method, stored, out));
    CHECK(out == raw);
    CHECK(calls == 1);
    // The declared size is the hook's to check: one byte more fails.
    std::vector<std::byte> longer(raw.size() + 1);
    CHECK(untold::decompress(method, stored, longer).error().code == untold::errc::decompress_failed);
    // A hook that refuses is the library's decompress_failed (R-DECOMPRESS).
    refuse = true;
    CHECK(untold::decompress(method, stored, out).error().code == untold::errc::decompress_failed);
    refuse = false;
  }
}

TEST_CASE("external codecs: a chunk that declares far more than its bytes grows through prefix decodes") {
  // 2 MiB of mostly zeros: stored is far smaller than the declared size, so
  // decompress_into checks growing prefixes before the exact decode.
  const auto raw = sample(std::size_t{2} << 20);
  for (const auto method : {untold::compression::lz4, untold::compression::zstd}) {
    CAPTURE(static_cast<int>(method));
    const auto stored = method == untold::compression::lz4 ? lz4_block(raw) : zstd_frame(raw);
    REQUIRE(stored.size() * 4 < raw.size());
    std::vector<std::byte> out;
    prefix_calls = 0;
    REQUIRE(untold::decompress_into(method, stored, raw.size(), out));
    CHECK(out == raw);
    CHECK(prefix_calls > 0);
    // Declaring more than the data holds fails at a prefix, before the full size is allocated.
    CHECK(untold::decompress_into(method, stored, raw.size() * 8, out).error().code == untold::errc::decompress_failed);
    CHECK(out.empty());
  }
}
