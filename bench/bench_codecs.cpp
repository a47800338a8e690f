// Codec and hash overhead: untold's wrappers against the raw library calls on
// the same payloads. Each pair shares a name prefix and reports bytes/s of
// uncompressed data, so "untold / raw" is the cost of the strict checks.
//
//   untold_bench --benchmark_filter='codec|sha256'
#include <untold/compression.hpp>
#include <untold/hash.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4
#include <lz4.h>
#endif
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
#include <zstd.h>
#endif
#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
#include <openssl/evp.h>
#endif

namespace {

using bytes = std::vector<std::byte>;

std::uint32_t pack_snorm_10_10_10_2(double x, double y, double z, std::uint32_t w) {
  auto q = [](double c) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(std::nearbyint(c * 511.0))) & 0x3FFu; };
  return q(x) | (q(y) << 10) | (q(z) << 20) | (w << 30);
}

std::uint16_t to_half(float f) {
  // Enough for UVs in [0, 1]: normal range, truncating mantissa.
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) < 0x38800000u) return 0;
  return static_cast<std::uint16_t>(((bits >> 16) & 0x8000u) | (((bits >> 23) - 112u) << 10) | ((bits >> 13) & 0x3FFu));
}

/// 4 MiB of PBR_STATIC_V1 vertices (32 bytes each) on a smooth height field:
/// what a VERTEX_DATA chunk of a terrain tile looks like.
const bytes& vertex_payload() {
  static const bytes payload = [] {
    constexpr int width = 512, height = 256;  // 131072 vertices * 32 B = 4 MiB
    bytes out(static_cast<std::size_t>(width) * height * 32);
    std::byte* p = out.data();
    for (int j = 0; j < height; ++j) {
      for (int i = 0; i < width; ++i) {
        const double x = i * 0.25, z = j * 0.25;
        const double y = 3.0 * std::sin(x * 0.05) * std::cos(z * 0.07) + 0.5 * std::sin(x * 0.31 + z * 0.17);
        const double dx = 3.0 * 0.05 * std::cos(x * 0.05) * std::cos(z * 0.07) + 0.5 * 0.31 * std::cos(x * 0.31 + z * 0.17);
        const double dz = -3.0 * 0.07 * std::sin(x * 0.05) * std::sin(z * 0.07) + 0.5 * 0.17 * std::cos(x * 0.31 + z * 0.17);
        const double nl = std::sqrt(dx * dx + 1.0 + dz * dz);
        const double tl = std::sqrt(1.0 + dx * dx);
        const float position[3] = {static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)};
        std::memcpy(p, position, 12);
        untold::store_le_unchecked<std::uint32_t>(p + 12, pack_snorm_10_10_10_2(-dx / nl, 1.0 / nl, -dz / nl, 0));
        untold::store_le_unchecked<std::uint32_t>(p + 16, pack_snorm_10_10_10_2(1.0 / tl, dx / tl, 0.0, 1));
        untold::store_le_unchecked<std::uint16_t>(p + 20, to_half(static_cast<float>(i) / (width - 1)));
        untold::store_le_unchecked<std::uint16_t>(p + 22, to_half(static_cast<float>(j) / (height - 1)));
        untold::store_le_unchecked<std::uint32_t>(p + 24, 0);           // uv1 unused
        untold::store_le_unchecked<std::uint32_t>(p + 28, 0xFFFFFFFFu);  // color0 unused
        p += 32;
      }
    }
    return out;
  }();
  return payload;
}

#if (defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4) || (defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD)
const bytes& stored_payload(untold::compression method) {
  // Built lazily per codec so a build without one of them never compresses with it.
  if (method == untold::compression::lz4) {
    static const bytes lz4 = *untold::compress(untold::compression::lz4, 0, vertex_payload());
    return lz4;
  }
  static const bytes zstd = *untold::compress(untold::compression::zstd, 0, vertex_payload());
  return zstd;
}

void report(benchmark::State& state, std::size_t raw_size, std::size_t stored_size) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(raw_size));
  state.counters["ratio"] = static_cast<double>(stored_size) / static_cast<double>(raw_size);
}
#endif

#if defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4
void codec_lz4_decompress_raw(benchmark::State& state) {
  const bytes& raw = vertex_payload();
  const bytes& stored = stored_payload(untold::compression::lz4);
  bytes out(raw.size());
  for (auto _ : state) {
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(stored.data()), reinterpret_cast<char*>(out.data()),
                                      static_cast<int>(stored.size()), static_cast<int>(out.size()));
    if (n != static_cast<int>(raw.size())) state.SkipWithError("lz4 decode failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, raw.size(), stored.size());
}
void codec_lz4_decompress_untold(benchmark::State& state) {
  const bytes& raw = vertex_payload();
  const bytes& stored = stored_payload(untold::compression::lz4);
  bytes out(raw.size());
  for (auto _ : state) {
    if (!untold::decompress(untold::compression::lz4, stored, out)) state.SkipWithError("lz4 decode failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, raw.size(), stored.size());
}
BENCHMARK(codec_lz4_decompress_raw);
BENCHMARK(codec_lz4_decompress_untold);
#endif

#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
void codec_zstd_decompress_raw(benchmark::State& state) {
  const bytes& raw = vertex_payload();
  const bytes& stored = stored_payload(untold::compression::zstd);
  bytes out(raw.size());
  for (auto _ : state) {
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
    if (n != raw.size()) state.SkipWithError("zstd decode failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, raw.size(), stored.size());
}
void codec_zstd_decompress_untold(benchmark::State& state) {
  const bytes& raw = vertex_payload();
  const bytes& stored = stored_payload(untold::compression::zstd);
  bytes out(raw.size());
  for (auto _ : state) {
    if (!untold::decompress(untold::compression::zstd, stored, out)) state.SkipWithError("zstd decode failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, raw.size(), stored.size());
}
BENCHMARK(codec_zstd_decompress_raw);
BENCHMARK(codec_zstd_decompress_untold);

// Many small chunks (64 KiB): where reusing the decompression context
// (untold's per-thread decompressor) pays against ZSTD_decompress, which
// creates a context per call.
const std::vector<bytes>& small_zstd_chunks() {
  static const std::vector<bytes> chunks = [] {
    std::vector<bytes> out;
    const bytes& raw = vertex_payload();
    for (std::size_t at = 0; at < raw.size(); at += 65536)
      out.push_back(*untold::compress(untold::compression::zstd, 0,
                                      untold::byte_span(raw).subspan(at, std::min<std::size_t>(65536, raw.size() - at))));
    return out;
  }();
  return chunks;
}
void codec_zstd_64k_chunks_raw(benchmark::State& state) {
  const auto& chunks = small_zstd_chunks();
  bytes out(65536);
  for (auto _ : state) {
    for (const bytes& c : chunks) {
      if (ZSTD_decompress(out.data(), out.size(), c.data(), c.size()) != out.size()) state.SkipWithError("zstd");
      benchmark::DoNotOptimize(out.data());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(chunks.size()) * 65536);
}
void codec_zstd_64k_chunks_untold(benchmark::State& state) {
  const auto& chunks = small_zstd_chunks();
  bytes out(65536);
  for (auto _ : state) {
    for (const bytes& c : chunks) {
      if (!untold::decompress(untold::compression::zstd, c, out)) state.SkipWithError("zstd");
      benchmark::DoNotOptimize(out.data());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(chunks.size()) * 65536);
}
BENCHMARK(codec_zstd_64k_chunks_raw);
BENCHMARK(codec_zstd_64k_chunks_untold);
#endif

// ---- SHA-256 over the same 16 MiB buffer --------------------------------------

const bytes& hash_payload() {
  static const bytes payload = [] {
    bytes out;
    out.reserve(16u << 20);
    const bytes& v = vertex_payload();
    for (int i = 0; i < 4; ++i) out.insert(out.end(), v.begin(), v.end());
    return out;
  }();
  return payload;
}

#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
void sha256_16m_raw_openssl(benchmark::State& state) {
  const bytes& data = hash_payload();
  untold::sha256_digest d{};
  for (auto _ : state) {
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), d.data(), &len, EVP_sha256(), nullptr) != 1) state.SkipWithError("EVP");
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(data.size()));
}
BENCHMARK(sha256_16m_raw_openssl);
#endif
void sha256_16m_untold(benchmark::State& state) {
  const bytes& data = hash_payload();
  for (auto _ : state) {
    auto d = untold::sha256_of(data);
    if (!d) state.SkipWithError("sha256");
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(data.size()));
}
void sha256_16m_untold_portable(benchmark::State& state) {
  const bytes& data = hash_payload();
  for (auto _ : state) {
    auto d = untold::sha256_portable_of(data);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(data.size()));
}
BENCHMARK(sha256_16m_untold);
BENCHMARK(sha256_16m_untold_portable);

}  // namespace
