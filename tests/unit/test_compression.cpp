// Tests for untold/compression.hpp: round trips, strict decoding (R-DECOMPRESS)
// and every corruption kind mapping to errc::decompress_failed.
#include <untold/compression.hpp>

#include <doctest/doctest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
#include <zstd.h>
#endif
#if !defined(_WIN32)
#include <sys/mman.h>
#include "support.hpp"
#endif

namespace {

using test::random_bytes;

using untold::compression;
using untold::errc;
using bytes = std::vector<std::byte>;

constexpr bool has_lz4 = untold::compression_available(compression::lz4);
constexpr bool has_zstd = untold::compression_available(compression::zstd);


bytes zero_bytes(std::size_t n) { return bytes(n); }

// Words with spaces and punctuation: compresses like real metadata strings.
bytes text_bytes(std::size_t n, std::uint64_t seed) {
  constexpr std::string_view words[] = {"mesh",  "entity", "material", "texture", "vertex", "index",
                                        "the",   "of",     "lod",      "tile",    "_0",     "albedo",
                                        "rough", "normal", ".png",     "\n",      "root",   "node"};
  std::mt19937_64 rng(seed);
  bytes out;
  out.reserve(n);
  while (out.size() < n) {
    const auto w = words[rng() % std::size(words)];
    for (const char c : w) {
      if (out.size() == n) break;
      out.push_back(static_cast<std::byte>(c));
    }
    if (out.size() < n) out.push_back(std::byte{' '});
  }
  return out;
}

bytes of(std::initializer_list<int> values) {
  bytes out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

bytes compressed(compression method, int level, const bytes& raw) {
  auto r = untold::compress(method, level, raw);
  REQUIRE(r.has_value());
  return std::move(r).value();
}

errc decode_code(compression method, const bytes& stored, std::size_t declared) {
  bytes out(declared);
  return untold::decompress(method, stored, out).error().code;
}

struct codec_config {
  compression method;
  int level;
  std::size_t max_size;  // slow levels only on small inputs
};

std::vector<codec_config> available_configs() {
  std::vector<codec_config> configs = {{compression::none, 0, SIZE_MAX}};
  if (has_lz4) {
    configs.push_back({compression::lz4, 0, SIZE_MAX});
    configs.push_back({compression::lz4, 9, SIZE_MAX});
  }
  if (has_zstd) {
    configs.push_back({compression::zstd, 0, SIZE_MAX});
    configs.push_back({compression::zstd, -5, SIZE_MAX});
    configs.push_back({compression::zstd, 19, 70000});
  }
  return configs;
}

constexpr std::size_t sizes[] = {0, 1, 2, 15, 64, 1000, 4096, 65543, 1u << 20};

}  // namespace

TEST_CASE("compression: round trip for each codec on random, zero and text data") {
  for (const auto& config : available_configs()) {
    for (const std::size_t n : sizes) {
      if (n > config.max_size) continue;
      const bytes inputs[] = {random_bytes(n, n + 1), zero_bytes(n), text_bytes(n, n + 2)};
      for (const auto& raw : inputs) {
        CAPTURE(static_cast<int>(config.method));
        CAPTURE(config.level);
        CAPTURE(n);
        const bytes stored = compressed(config.method, config.level, raw);
        bytes out(raw.size());
        const auto st = untold::decompress(config.method, stored, out);
        REQUIRE(st.has_value());
        CHECK(out == raw);
      }
    }
  }
}

TEST_CASE("compression: compressible data shrinks and output is deterministic") {
  const bytes text = text_bytes(100000, 7);
  for (const auto& config : available_configs()) {
    if (config.method == compression::none) continue;
    CAPTURE(static_cast<int>(config.method));
    const bytes a = compressed(config.method, config.level, text);
    const bytes b = compressed(config.method, config.level, text);
    CHECK(a == b);
    CHECK(a.size() < text.size() / 2);
  }
}

TEST_CASE("compression: availability and unknown methods") {
  CHECK(untold::compression_available(compression::none));
  CHECK_FALSE(untold::compression_available(static_cast<compression>(5)));
#if defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4
  CHECK(has_lz4);
#else
  CHECK_FALSE(has_lz4);
#endif
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  CHECK(has_zstd);
#else
  CHECK_FALSE(has_zstd);
#endif
  const bytes stored = of({1, 2, 3});
  bytes out(3);
  const auto st = untold::decompress(static_cast<compression>(5), stored, out);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == errc::unknown_compression);
  CHECK(st.error().context.value == 5);
  CHECK(decode_code(static_cast<compression>(0xFFFFFFFFu), stored, 3) == errc::unknown_compression);
  const auto enc = untold::compress(static_cast<compression>(7), 0, stored);
  REQUIRE_FALSE(enc.has_value());
  CHECK(enc.error().code == errc::invalid_argument);
}

TEST_CASE("compression: a codec compiled out reports compression_unsupported") {
  const bytes raw = text_bytes(100, 1);
  bytes out(raw.size());
  if (!has_lz4) {
    CHECK(untold::decompress(compression::lz4, raw, out).error().code == errc::compression_unsupported);
    CHECK(untold::compress(compression::lz4, 0, raw).error().code == errc::compression_unsupported);
  }
  if (!has_zstd) {
    CHECK(untold::decompress(compression::zstd, raw, out).error().code == errc::compression_unsupported);
    CHECK(untold::compress(compression::zstd, 0, raw).error().code == errc::compression_unsupported);
  }
}

TEST_CASE("compression: none copies and requires equal sizes (R-RAW-SIZE)") {
  const bytes raw = random_bytes(33, 3);
  bytes out(33);
  REQUIRE(untold::decompress(compression::none, raw, out).has_value());
  CHECK(out == raw);
  CHECK(decode_code(compression::none, raw, 32) == errc::raw_size_mismatch);
  CHECK(decode_code(compression::none, raw, 34) == errc::raw_size_mismatch);
  CHECK(decode_code(compression::none, {}, 0) == errc::ok);
}

TEST_CASE("compression: decompressor object reuses its state across chunks") {
  untold::decompressor d;
  for (const auto& config : available_configs()) {
    for (std::size_t i = 0; i < 20; ++i) {
      const bytes raw = text_bytes(100 + i * 997, i);
      const bytes stored = compressed(config.method, config.level, raw);
      bytes out(raw.size());
      REQUIRE(d.decompress(config.method, stored, out).has_value());
      CHECK(out == raw);
      // A failure in between must not poison the next decode.
      bytes wrong(raw.size() + 1);
      CHECK_FALSE(d.decompress(config.method, stored, wrong).has_value());
    }
  }
  untold::decompressor moved = std::move(d);
  const bytes raw = text_bytes(5000, 99);
  for (const auto& config : available_configs()) {
    bytes out(raw.size());
    CHECK(moved.decompress(config.method, compressed(config.method, config.level, raw), out).has_value());
    CHECK(out == raw);
  }
}

// ---- lz4 ---------------------------------------------------------------------

TEST_CASE("compression: lz4 empty input is the one-byte block") {
  if (!has_lz4) return;
  const bytes stored = compressed(compression::lz4, 0, {});
  CHECK(stored == of({0x00}));
  CHECK(compressed(compression::lz4, 9, {}) == of({0x00}));
  CHECK(decode_code(compression::lz4, stored, 0) == errc::ok);
  CHECK(decode_code(compression::lz4, stored, 1) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, {}, 0) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, of({0x00, 0x00}), 0) == errc::decompress_failed);
}

TEST_CASE("compression: lz4 truncated block") {
  if (!has_lz4) return;
  for (const std::size_t n : {1u, 100u, 5000u, 70000u}) {
    for (const bytes& raw : {random_bytes(n, n), text_bytes(n, n), zero_bytes(n)}) {
      const bytes stored = compressed(compression::lz4, 0, raw);
      for (const std::size_t keep : {stored.size() - 1, stored.size() / 2, std::size_t{1}, std::size_t{0}}) {
        if (keep >= stored.size()) continue;
        CAPTURE(n);
        CAPTURE(keep);
        const bytes cut(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(keep));
        CHECK(decode_code(compression::lz4, cut, raw.size()) == errc::decompress_failed);
      }
    }
  }
}

TEST_CASE("compression: lz4 block with trailing bytes") {
  if (!has_lz4) return;
  // Proves the "consumed exactly compressedSize" half of R-DECOMPRESS: the
  // block alone decodes to exactly the declared size, the block plus any
  // tail does not.
  std::mt19937_64 rng(11);
  for (const std::size_t n : {0u, 1u, 13u, 100u, 5000u, 70000u}) {
    for (const bytes& raw : {random_bytes(n, n), text_bytes(n, n), zero_bytes(n)}) {
      for (const int level : {0, 9}) {
        const bytes stored = compressed(compression::lz4, level, raw);
        REQUIRE(decode_code(compression::lz4, stored, raw.size()) == errc::ok);
        for (const std::size_t extra : {1u, 2u, 5u, 16u, 300u}) {
          for (int fill = 0; fill < 3; ++fill) {
            bytes longer = stored;
            for (std::size_t i = 0; i < extra; ++i)
              longer.push_back(fill == 0   ? std::byte{0}
                               : fill == 1 ? static_cast<std::byte>(rng() & 0xFF)
                                           : stored[i % stored.size()]);
            CAPTURE(n);
            CAPTURE(extra);
            CAPTURE(fill);
            CHECK(decode_code(compression::lz4, longer, raw.size()) == errc::decompress_failed);
          }
        }
        // A whole second block appended is trailing bytes too.
        bytes twice = stored;
        twice.insert(twice.end(), stored.begin(), stored.end());
        CHECK(decode_code(compression::lz4, twice, raw.size()) == errc::decompress_failed);
        CHECK(decode_code(compression::lz4, twice, raw.size() * 2) == errc::decompress_failed);
      }
    }
  }
}

TEST_CASE("compression: lz4 wrong declared size") {
  if (!has_lz4) return;
  for (const std::size_t n : {1u, 64u, 5000u, 70000u}) {
    for (const bytes& raw : {random_bytes(n, n), text_bytes(n, n), zero_bytes(n)}) {
      const bytes stored = compressed(compression::lz4, 0, raw);
      CAPTURE(n);
      CHECK(decode_code(compression::lz4, stored, raw.size() - 1) == errc::decompress_failed);  // too small
      CHECK(decode_code(compression::lz4, stored, raw.size() + 1) == errc::decompress_failed);  // too large
      CHECK(decode_code(compression::lz4, stored, raw.size() * 2 + 100) == errc::decompress_failed);
      CHECK(decode_code(compression::lz4, stored, 0) == errc::decompress_failed);
    }
  }
}

TEST_CASE("compression: lz4 crafted blocks that try to overrun") {
  if (!has_lz4) return;
  // A hand-built valid block: literal "a", match (offset 1, length 20),
  // then a final run of 12 literals. Output: 21 x 'a' + "bcdefghijklm".
  const bytes valid = of({0x1F, 'a', 0x01, 0x00, 0x01, 0xC0, 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l',
                          'm'});
  {
    bytes out(33);
    REQUIRE(untold::decompress(compression::lz4, valid, out).has_value());
    CHECK(out[0] == std::byte{'a'});
    CHECK(out[20] == std::byte{'a'});
    CHECK(out[21] == std::byte{'b'});
    CHECK(out[32] == std::byte{'m'});
  }
  auto mutate = [&](std::size_t at, int value) {
    bytes b = valid;
    b[at] = static_cast<std::byte>(value);
    return b;
  };
  // Match offset reaching before the start of the output.
  CHECK(decode_code(compression::lz4, mutate(2, 0x02), 33) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, mutate(3, 0xFF), 33) == errc::decompress_failed);
  // Match longer than the output (ends past out.size()).
  CHECK(decode_code(compression::lz4, mutate(4, 0x40), 33) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, mutate(4, 0xFF), 33) == errc::decompress_failed);
  // Literal length past the end of the input.
  CHECK(decode_code(compression::lz4, mutate(5, 0xD0), 33) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, mutate(5, 0xF0), 33) == errc::decompress_failed);
  CHECK(decode_code(compression::lz4, mutate(0, 0xFF), 33) == errc::decompress_failed);
  // A literal-length extension that never terminates.
  CHECK(decode_code(compression::lz4, of({0xF0, 0xFF, 0xFF, 0xFF, 0xFF}), 1000) == errc::decompress_failed);
  // A huge literal length (many 0xFF extension bytes) with a tiny output.
  bytes huge = of({0xF0});
  huge.insert(huge.end(), 2000, std::byte{0xFF});
  huge.push_back(std::byte{0x10});
  CHECK(decode_code(compression::lz4, huge, 64) == errc::decompress_failed);
}

TEST_CASE("compression: lz4 garbage and random corruption never escape") {
  if (!has_lz4) return;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    const bytes garbage = random_bytes(1 + rng() % 2000, rng());
    CHECK(decode_code(compression::lz4, garbage, 1 + rng() % 4000) == errc::decompress_failed);
  }
  // Single-byte corruptions of valid blocks: either a clean failure or (when
  // the flip hits a literal) a successful decode of exactly the size. Run
  // under ASan/UBSan this shows the decoder stays inside both buffers.
  const bytes raw = text_bytes(3000, 4);
  const bytes stored = compressed(compression::lz4, 0, raw);
  std::size_t failures = 0;
  for (int i = 0; i < 2000; ++i) {
    bytes b = stored;
    b[rng() % b.size()] ^= static_cast<std::byte>(1 + rng() % 255);
    const errc code = decode_code(compression::lz4, b, raw.size());
    CHECK((code == errc::ok || code == errc::decompress_failed));
    failures += code == errc::decompress_failed;
  }
  CHECK(failures > 0);
}

TEST_CASE("compression: lz4 sizes beyond INT_MAX are rejected before decoding") {
  if (!has_lz4) return;
#if !defined(_WIN32)
  // An inaccessible reservation gives valid (never touched) spans larger than
  // INT_MAX without committing memory.
  const std::size_t big = static_cast<std::size_t>(INT_MAX) + 1;
  void* p = mmap(nullptr, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(p != MAP_FAILED);
  const untold::mutable_byte_span huge(static_cast<std::byte*>(p), big);
  const bytes small = compressed(compression::lz4, 0, text_bytes(100, 1));
  auto st = untold::decompress(compression::lz4, small, huge);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == errc::decompress_failed);
  CHECK(st.error().context.value == big);
  bytes out(100);
  st = untold::decompress(compression::lz4, untold::byte_span(huge), out);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == errc::decompress_failed);
  munmap(p, big);
#endif
}

// ---- zstd --------------------------------------------------------------------

#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
namespace {
bytes zstd_frame(const bytes& raw, bool declare_size, bool checksum) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  REQUIRE(cctx != nullptr);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, declare_size ? 1 : 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  bytes out(ZSTD_compressBound(raw.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(cctx);
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}
}  // namespace
#endif

TEST_CASE("compression: zstd frames declare their content size") {
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  for (const std::size_t n : sizes) {
    for (const int level : {0, 1, 19}) {
      if (level == 19 && n > 70000) continue;
      const bytes stored = compressed(compression::zstd, level, text_bytes(n, n));
      CHECK(ZSTD_getFrameContentSize(stored.data(), stored.size()) == n);
      CHECK(ZSTD_findFrameCompressedSize(stored.data(), stored.size()) == stored.size());
    }
  }
#endif
}

TEST_CASE("compression: zstd frame declaring another content size") {
  if (!has_zstd) return;
  for (const std::size_t n : {1u, 64u, 5000u, 70000u}) {
    for (const bytes& raw : {random_bytes(n, n), text_bytes(n, n), zero_bytes(n)}) {
      const bytes stored = compressed(compression::zstd, 0, raw);
      CAPTURE(n);
      CHECK(decode_code(compression::zstd, stored, raw.size() - 1) == errc::decompress_failed);
      CHECK(decode_code(compression::zstd, stored, raw.size() + 1) == errc::decompress_failed);
      CHECK(decode_code(compression::zstd, stored, 0) == errc::decompress_failed);
    }
  }
  CHECK(decode_code(compression::zstd, compressed(compression::zstd, 0, {}), 1) == errc::decompress_failed);
  CHECK(decode_code(compression::zstd, compressed(compression::zstd, 0, {}), 0) == errc::ok);
}

TEST_CASE("compression: zstd frame whose declared size lies about its content") {
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  // The header says 199 or 201 and the caller declares the same, so only the
  // actual decode can notice that the blocks hold 200 bytes.
  const bytes raw = text_bytes(200, 3);
  const bytes stored = compressed(compression::zstd, 0, raw);
  // Frame header descriptor: single segment (bit 5), 1-byte content size
  // (bits 7-6 = 0), no dictionary id: the size is the byte after it.
  REQUIRE((std::to_integer<int>(stored[4]) & 0xE3) == 0x20);
  REQUIRE(std::to_integer<int>(stored[5]) == 200);
  for (const int lie : {199, 201, 0, 255}) {
    bytes patched = stored;
    patched[5] = static_cast<std::byte>(lie);
    REQUIRE(ZSTD_getFrameContentSize(patched.data(), patched.size()) == static_cast<unsigned long long>(lie));
    CAPTURE(lie);
    CHECK(decode_code(compression::zstd, patched, static_cast<std::size_t>(lie)) == errc::decompress_failed);
  }
#endif
}

TEST_CASE("compression: zstd frame without a declared size") {
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  for (const std::size_t n : {0u, 1u, 5000u, 70000u}) {
    const bytes raw = text_bytes(n, n);
    const bytes stored = zstd_frame(raw, false, false);
    REQUIRE(ZSTD_getFrameContentSize(stored.data(), stored.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
    bytes out(n);
    REQUIRE(untold::decompress(compression::zstd, stored, out).has_value());
    CHECK(out == raw);
    CHECK(decode_code(compression::zstd, stored, n + 1) == errc::decompress_failed);
    if (n > 0) CHECK(decode_code(compression::zstd, stored, n - 1) == errc::decompress_failed);
  }
#endif
}

TEST_CASE("compression: zstd trailing bytes, two frames, skippable frames") {
  if (!has_zstd) return;
  const bytes raw = text_bytes(5000, 8);
  const bytes stored = compressed(compression::zstd, 0, raw);
  for (const std::size_t extra : {1u, 3u, 4u, 100u}) {
    bytes longer = stored;
    longer.insert(longer.end(), extra, std::byte{0});
    CHECK(decode_code(compression::zstd, longer, raw.size()) == errc::decompress_failed);
  }
  // Two frames each decoding to half: zstd itself would concatenate them.
  const bytes half_a(raw.begin(), raw.begin() + 2500);
  const bytes half_b(raw.begin() + 2500, raw.end());
  bytes two = compressed(compression::zstd, 0, half_a);
  const bytes second = compressed(compression::zstd, 0, half_b);
  two.insert(two.end(), second.begin(), second.end());
  CHECK(decode_code(compression::zstd, two, raw.size()) == errc::decompress_failed);
  CHECK(decode_code(compression::zstd, two, 2500) == errc::decompress_failed);
  // Skippable frame (magic 0x184D2A50, u32 size, payload): alone it would
  // "decode" to 0 bytes, after a real frame it is trailing data.
  const bytes skippable = of({0x50, 0x2A, 0x4D, 0x18, 0x04, 0x00, 0x00, 0x00, 1, 2, 3, 4});
  CHECK(decode_code(compression::zstd, skippable, 0) == errc::decompress_failed);
  bytes with_skip = stored;
  with_skip.insert(with_skip.end(), skippable.begin(), skippable.end());
  CHECK(decode_code(compression::zstd, with_skip, raw.size()) == errc::decompress_failed);
  bytes skip_first = skippable;
  skip_first.insert(skip_first.end(), stored.begin(), stored.end());
  CHECK(decode_code(compression::zstd, skip_first, raw.size()) == errc::decompress_failed);
}

TEST_CASE("compression: zstd truncated frames, bad checksums and garbage") {
  if (!has_zstd) return;
  const bytes raw = text_bytes(70000, 9);
  const bytes stored = compressed(compression::zstd, 0, raw);
  for (const std::size_t keep : {stored.size() - 1, stored.size() / 2, std::size_t{5}, std::size_t{3}, std::size_t{0}}) {
    const bytes cut(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(keep));
    CAPTURE(keep);
    CHECK(decode_code(compression::zstd, cut, raw.size()) == errc::decompress_failed);
  }
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  bytes with_checksum = zstd_frame(raw, true, true);
  REQUIRE(decode_code(compression::zstd, with_checksum, raw.size()) == errc::ok);
  with_checksum.back() ^= std::byte{0x01};
  CHECK(decode_code(compression::zstd, with_checksum, raw.size()) == errc::decompress_failed);
#endif
  std::mt19937_64 rng(6);
  for (int i = 0; i < 200; ++i) {
    bytes garbage = random_bytes(1 + rng() % 2000, rng());
    CHECK(decode_code(compression::zstd, garbage, 1 + rng() % 4000) == errc::decompress_failed);
    // Garbage behind a valid magic number.
    if (garbage.size() >= 4) {
      garbage[0] = std::byte{0x28};
      garbage[1] = std::byte{0xB5};
      garbage[2] = std::byte{0x2F};
      garbage[3] = std::byte{0xFD};
      CHECK(decode_code(compression::zstd, garbage, 1 + rng() % 4000) == errc::decompress_failed);
    }
  }
  // Random single-byte corruption past the magic: clean failure or an exact decode.
  const bytes small_raw = text_bytes(3000, 4);
  const bytes small = compressed(compression::zstd, 0, small_raw);
  for (int i = 0; i < 2000; ++i) {
    bytes b = small;
    b[4 + rng() % (b.size() - 4)] ^= static_cast<std::byte>(1 + rng() % 255);
    const errc code = decode_code(compression::zstd, b, small_raw.size());
    CHECK((code == errc::ok || code == errc::decompress_failed));
  }
}

// compress() over pieces (how the writer compresses geometry that lies in
// one vector per mesh): the concatenation round-trips; none and lz4 give the
// bytes of compress() on the gathered buffer; zstd's frame declares the
// whole size, and the same pieces give the same bytes.
TEST_CASE("compress over pieces round-trips the concatenation") {
  const bytes a = text_bytes(200'000, 11), b = zero_bytes(70'000), c = random_bytes(1'000, 12);
  bytes whole = a;
  whole.insert(whole.end(), b.begin(), b.end());
  whole.insert(whole.end(), c.begin(), c.end());
  const untold::byte_span pieces[] = {a, untold::byte_span{}, b, c};
  for (const compression method : {compression::none, compression::lz4, compression::zstd}) {
    if (!untold::compression_available(method)) continue;
    CAPTURE(static_cast<int>(method));
    auto packed = untold::compress(method, 0, std::span(pieces));
    REQUIRE(packed.has_value());
    bytes out(whole.size());
    REQUIRE(untold::decompress(method, *packed, out).has_value());
    CHECK(out == whole);
    if (method != compression::zstd) CHECK(*packed == compressed(method, 0, whole));
    auto again = untold::compress(method, 0, std::span(pieces));
    REQUIRE(again.has_value());
    CHECK(*again == *packed);
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
    if (method == compression::zstd) CHECK(ZSTD_getFrameContentSize(packed->data(), packed->size()) == whole.size());
#endif
  }
}
