// Codec and hash overhead: untold's wrappers against the raw library calls on
// the same payloads. Each pair shares a name prefix and reports bytes/s of
// uncompressed data; the untold one has vs_raw = its throughput / the raw
// call's in the same run (1.0 = no cost for the strict checks).
//
// codec_scene_*: per-chunk decode as untold::open does it, on a generated
// compressed scene (1000 meshes, 64 MiB of geometry, every chunk lz4, zstd,
// meshopt or meshopt+zstd; for the meshopt ones the raw row is
// meshoptimizer's own decoder on each stream, the directory read untimed):
// untold::open (no content hash) against the raw decoder over the same chunks
// into freshly allocated, uninitialised buffers (the physical limit of a
// loader that must allocate what it decodes), and into zero-filled
// std::vector buffers (what open did before it decoded into byte_buffer).
//
//   untold_bench --benchmark_filter='codec|sha256'
#include "bench_common.hpp"

#include <untold/compression.hpp>
#include <untold/hash.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
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
#if defined(UNTOLD_HAS_MESHOPT) && UNTOLD_HAS_MESHOPT
#include <meshoptimizer.h>
#endif

namespace {

using bytes = std::vector<std::byte>;

/// 4 MiB of PBR_STATIC_V1 vertices of a displaced grid (scene_generator.hpp):
/// what a VERTEX_DATA chunk of a terrain tile looks like.
const bytes& vertex_payload() {
  static const bytes payload = [] {
    const auto plan = untold_bench::plan_scene({.meshes = 1, .geometry_bytes = 131072 * 56});
    return *untold_bench::encode_vertices(untold_bench::make_geometry(plan, 0));
  }();
  return payload;
}

/// Runs `body` per iteration; the raw call of a pair records the baseline
/// `key`, the untold one reports vs_raw against it.
template <class Body>
void timed_pair(benchmark::State& state, const std::string& key, bool raw, std::size_t bytes_per_iteration,
                Body&& body) {
  const double s = untold_bench::cpu_loop(state, body);
  if (raw)
    untold_bench::set_baseline(state, key, s);
  else
    untold_bench::speed_ratio(state, "vs_raw", key, s);
  untold_bench::set_bytes(state, bytes_per_iteration);
}

#if (defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4) || (defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD)
const bytes& stored_payload(untold::compression method) {
  // Built lazily per codec so a build without one of them never compresses with it.
  if (method == untold::compression::lz4) {
    static const bytes lz4 = *untold::compress(untold::compression::lz4, 0, vertex_payload());
    return lz4;
  }
  if (untold::is_mesh_codec(method)) {  // one vertex stream (one mesh), as the writer cuts it
    const untold::codec_input stream[] = {{vertex_payload(), 32, true}};
    static const bytes meshopt = *untold::compress_streams(untold::compression::meshopt, 0, stream);
    static const bytes meshopt_zstd = *untold::compress_streams(untold::compression::meshopt_zstd, 0, stream);
    return method == untold::compression::meshopt ? meshopt : meshopt_zstd;
  }
  static const bytes zstd = *untold::compress(untold::compression::zstd, 0, vertex_payload());
  return zstd;
}

#if defined(UNTOLD_HAS_MESHOPT) && UNTOLD_HAS_MESHOPT
/// The floor of the streams meshoptimizer's codec is not all of: raw
/// (memcpy), words and fields (meshoptimizer per vertex-coded field, then
/// the library's plain copies into place: detail::ungroup_words and
/// scatter_field), reading the stream's header without checks.
bool plain_scatter(const untold::codec_stream& s, const std::byte* data, std::size_t size, std::byte* into) {
  static thread_local bytes field;
  const std::size_t count = s.element_count, stride = s.element_size;
  if (s.kind == untold::codec_stream_kind::raw) {
    std::memcpy(into, data, size);
    return true;
  }
  if (s.kind == untold::codec_stream_kind::words) {
    untold::detail::ungroup_words(data, count, stride, into, stride, 0);
    return true;
  }
  const std::size_t fields = static_cast<std::uint8_t>(data[0]);
  const std::byte* at = data + 1 + fields * untold::codec_field_entry_size;
  std::size_t offset = 0;
  for (std::size_t f = 0; f < fields; ++f) {
    const std::byte* e = data + 1 + f * untold::codec_field_entry_size;
    const std::size_t field_size = static_cast<std::uint8_t>(e[0]), stored = untold::load_le_unchecked<std::uint32_t>(e + 2);
    const auto kind = static_cast<untold::codec_stream_kind>(e[1]);
    if (kind == untold::codec_stream_kind::vertex) {
      if (field.size() < count * field_size) field.resize(count * field_size);
      if (meshopt_decodeVertexBuffer(field.data(), count, field_size, reinterpret_cast<const unsigned char*>(at), stored) != 0)
        return false;
      untold::detail::scatter_field(field.data(), count, field_size, into, stride, offset);
    } else if (kind == untold::codec_stream_kind::words) {
      untold::detail::ungroup_words(at, count, field_size, into, stride, offset);
    } else {
      untold::detail::scatter_field(at, count, field_size, into, stride, offset);
    }
    at += stored;
    offset += field_size;
  }
  return true;
}

/// meshoptimizer's own decode of a meshopt chunk's streams (and ZSTD_decompress
/// of each frame for meshopt+zstd), with the directory read beforehand: the
/// floor for untold's decode of the same bytes, which checks the directory and
/// each stream's bounds on every call.
bool raw_mesh_decode(untold::compression method, untold::byte_span in, std::span<std::byte> out) {
  static thread_local std::map<const std::byte*, std::vector<untold::codec_stream>> directories;
  static thread_local bytes scratch;
  auto known = directories.find(in.data());
  if (known == directories.end()) {  // parsed on the first call on these bytes (the warm-up), never again
    auto parsed = untold::parse_codec_directory(method, in, in.size());
    if (!parsed) return false;
    known = directories.emplace(in.data(), std::move(*parsed)).first;
  }
  for (const untold::codec_stream& s : known->second) {
    const auto* data = reinterpret_cast<const unsigned char*>(in.data() + s.stored_offset);
    std::size_t size = static_cast<std::size_t>(s.stored_size);
    if (method == untold::compression::meshopt_zstd) {
      const std::size_t inner = ZSTD_getFrameContentSize(data, size);
      if (scratch.size() < inner) scratch.resize(inner);
      if (ZSTD_decompress(scratch.data(), inner, data, size) != inner) return false;
      data = reinterpret_cast<const unsigned char*>(scratch.data());
      size = inner;
    }
    std::byte* into = out.data() + s.raw_offset;
    if (s.kind == untold::codec_stream_kind::raw || s.kind == untold::codec_stream_kind::words ||
        s.kind == untold::codec_stream_kind::fields) {
      if (!plain_scatter(s, reinterpret_cast<const std::byte*>(data), size, into)) return false;
      continue;
    }
    const int rc = s.kind == untold::codec_stream_kind::vertex
                       ? meshopt_decodeVertexBuffer(into, s.element_count, s.element_size, data, size)
                   : s.kind == untold::codec_stream_kind::index_triangles
                       ? meshopt_decodeIndexBuffer(into, s.element_count, s.element_size, data, size)
                       : meshopt_decodeIndexSequence(into, s.element_count, s.element_size, data, size);
    if (rc != 0) return false;
  }
  return true;
}
#endif

/// The raw library call: decode `in` into exactly `out`; true on success.
bool raw_decode(untold::compression method, untold::byte_span in, std::span<std::byte> out) {
#if defined(UNTOLD_HAS_MESHOPT) && UNTOLD_HAS_MESHOPT
  if (untold::is_mesh_codec(method)) return raw_mesh_decode(method, in, out);
#endif
#if defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4
  if (method == untold::compression::lz4)
    return LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                               static_cast<int>(in.size()), static_cast<int>(out.size())) ==
           static_cast<int>(out.size());
#endif
#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
  if (method == untold::compression::zstd)
    return ZSTD_decompress(out.data(), out.size(), in.data(), in.size()) == out.size();
#endif
  return false;
}

// One 4 MiB vertex chunk into a reused buffer.
void codec_decompress(benchmark::State& state, untold::compression method, bool raw) {
  const bytes& payload = vertex_payload();
  const bytes& stored = stored_payload(method);
  bytes out(payload.size());
  timed_pair(state, "codec/" + std::to_string(static_cast<int>(method)), raw, payload.size(), [&] {
    const bool ok = raw ? raw_decode(method, stored, out) : untold::decompress(method, stored, out).has_value();
    if (!ok) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  });
  state.counters["ratio"] = static_cast<double>(stored.size()) / static_cast<double>(payload.size());
}

// ---- per-chunk decode of a whole compressed scene ---------------------------------

const bytes& compressed_scene(untold::compression method) {
  return untold_bench::untold_scene(untold_bench::scene_mb(1000, 64, method));
}

enum class scene_decode { raw_uninitialised, raw_zeroed, untold_open };

void codec_scene(benchmark::State& state, untold::compression method, scene_decode how) {
  const bytes& file = compressed_scene(method);
  const auto a = untold::open(file, {.verify_hash = false});
  if (!a) {
    state.SkipWithError("open failed");
    return;
  }
  std::uint64_t decoded = 0;
  for (const untold::chunk_entry& c : a->chunks()) decoded += c.uncompressed_size;
  const auto stored = [&](const untold::chunk_entry& c) {
    return untold::byte_span(file).subspan(static_cast<std::size_t>(c.file_offset),
                                           static_cast<std::size_t>(c.compressed_size));
  };
  const std::string key = "codec_scene/" + std::to_string(static_cast<int>(method));
  timed_pair(state, key, how == scene_decode::raw_uninitialised, decoded, [&] {
    bool ok = true;
    if (how == scene_decode::untold_open) {
      auto opened = untold::open(file, {.verify_hash = false});
      ok = opened.has_value();
      benchmark::DoNotOptimize(opened);
    } else {
      for (const untold::chunk_entry& c : a->chunks()) {
        const auto size = static_cast<std::size_t>(c.uncompressed_size);
        if (c.compression_type == 0) continue;  // stored raw: nothing to decode
        if (how == scene_decode::raw_zeroed) {
          bytes out(size);
          ok = raw_decode(static_cast<untold::compression>(c.compression_type), stored(c), out) && ok;
          benchmark::DoNotOptimize(out.data());
        } else {
          const std::unique_ptr<std::byte[]> out(new std::byte[size]);
          ok = raw_decode(static_cast<untold::compression>(c.compression_type), stored(c), {out.get(), size}) && ok;
          benchmark::DoNotOptimize(out.get());
        }
      }
    }
    if (!ok) state.SkipWithError("decode failed");
    benchmark::ClobberMemory();
  });
  state.counters["ratio"] = static_cast<double>(file.size()) / static_cast<double>(decoded);
}

// Per codec this build has: the 4 MiB chunk (raw, untold), then the scene
// (raw into uninitialised buffers = the baseline, raw zeroed, untold::open).
const bool codec_benchmarks_registered = [] {
  for (const untold::compression method : {untold::compression::lz4, untold::compression::zstd,
                                           untold::compression::meshopt, untold::compression::meshopt_zstd}) {
    if (!untold::compression_available(method)) continue;
    const std::string codec = method == untold::compression::meshopt_zstd ? "meshopt_zstd"
                                                                           : std::string(untold::compression_name(
                                                                                 static_cast<std::uint32_t>(method)));
    for (const bool raw : {true, false})
      benchmark::RegisterBenchmark((std::string("codec_decompress/") + codec + (raw ? "_raw" : "_untold")).c_str(),
                                   codec_decompress, method, raw);
    for (const auto& [suffix, how] : {std::pair{"_raw", scene_decode::raw_uninitialised},
                                      std::pair{"_raw_zeroed", scene_decode::raw_zeroed},
                                      std::pair{"_untold_open", scene_decode::untold_open}})
      benchmark::RegisterBenchmark((std::string("codec_scene/") + codec + suffix).c_str(), codec_scene, method, how);
  }
  return true;
}();
#endif

#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
// Many small chunks (64 KiB): where reusing the decompression context
// (untold's per-thread decompressor) pays against ZSTD_decompress, which
// creates a context per call.
struct small_chunk {
  bytes stored;
  std::size_t size;  // decoded
};
const std::vector<small_chunk>& small_zstd_chunks() {
  static const std::vector<small_chunk> chunks = [] {
    std::vector<small_chunk> out;
    const bytes& raw = vertex_payload();
    for (std::size_t at = 0; at < raw.size(); at += 65536) {
      const auto piece = untold::byte_span(raw).subspan(at, std::min<std::size_t>(65536, raw.size() - at));
      out.push_back({*untold::compress(untold::compression::zstd, 0, piece), piece.size()});
    }
    return out;
  }();
  return chunks;
}
void codec_zstd_64k_chunks(benchmark::State& state, bool raw) {
  const auto& chunks = small_zstd_chunks();
  bytes buffer(65536);
  timed_pair(state, "codec/zstd_64k", raw, vertex_payload().size(), [&] {
    for (const small_chunk& c : chunks) {
      const auto out = std::span(buffer).first(c.size);
      const bool ok = raw ? ZSTD_decompress(out.data(), out.size(), c.stored.data(), c.stored.size()) == out.size()
                          : untold::decompress(untold::compression::zstd, c.stored, out).has_value();
      if (!ok) state.SkipWithError("zstd");
      benchmark::DoNotOptimize(out.data());
    }
    benchmark::ClobberMemory();
  });
}
BENCHMARK_CAPTURE(codec_zstd_64k_chunks, raw, true);
BENCHMARK_CAPTURE(codec_zstd_64k_chunks, untold, false);
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
  timed_pair(state, "sha256", true, data.size(), [&] {
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), d.data(), &len, EVP_sha256(), nullptr) != 1) state.SkipWithError("EVP");
    benchmark::DoNotOptimize(d);
  });
}
BENCHMARK(sha256_16m_raw_openssl);
#endif
void sha256_16m_untold(benchmark::State& state) {
  const bytes& data = hash_payload();
  timed_pair(state, "sha256", false, data.size(), [&] {
    auto d = untold::sha256_of(data);
    if (!d) state.SkipWithError("sha256");
    benchmark::DoNotOptimize(d);
  });
}
void sha256_16m_untold_portable(benchmark::State& state) {
  const bytes& data = hash_payload();
  timed_pair(state, "sha256", false, data.size(), [&] {
    auto d = untold::sha256_portable_of(data);
    benchmark::DoNotOptimize(d);
  });
}
BENCHMARK(sha256_16m_untold);
BENCHMARK(sha256_16m_untold_portable);

}  // namespace
