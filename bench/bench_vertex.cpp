// Bulk PBR_STATIC_V1 decode throughput per path, next to memcpy of the same
// input bytes in the same run. Throughput is bytes of *input* (32 per vertex)
// per second; the counter `vs_memcpy` is decode throughput / memcpy
// throughput for the same vertex count (1.0 = as fast as copying the input),
// both measured in process CPU time like bytes_per_second, so a busy machine
// skews it less than wall time would.
//
//   ./untold_bench --benchmark_filter=vertex
//
// The memcpy baselines are registered first so they run first; a decode
// benchmark run without its baseline (e.g. filtered out) has no ratio.
#include <benchmark/benchmark.h>

#include <ctime>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "untold/vertex_decode.hpp"

namespace {

using untold::decode_path;

// Realistic vertices: unit normals/tangents, UVs in [-2, 2], random colors.
const std::vector<std::byte>& vertex_input(std::size_t count) {
  static std::map<std::size_t, std::vector<std::byte>> cache;
  auto& bytes = cache[count];
  if (bytes.empty() && count != 0) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> pos(3 * count), nrm(3 * count), tan(4 * count), uv(2 * count), col(4 * count);
    for (auto* v : {&pos, &nrm, &tan, &col}) {
      for (auto& x : *v) x = d(rng);
    }
    for (auto& x : uv) x = 2.0f * d(rng);
    bytes = std::move(*untold::encode_pbr_vertices(untold::pbr_vertex_input{
        .positions = pos, .normals = nrm, .tangents = tan, .uv0 = uv, .uv1 = uv, .colors = col}));
  }
  return bytes;
}

std::map<std::size_t, double>& memcpy_rates() {
  static std::map<std::size_t, double> rates;  // vertex count -> input bytes / s
  return rates;
}

double cpu_seconds_since(std::clock_t t0) {
  return static_cast<double>(std::clock() - t0) / static_cast<double>(CLOCKS_PER_SEC);
}

void finish(benchmark::State& state, std::size_t count, std::size_t bytes_per_iteration, double seconds,
            bool is_baseline) {
  const auto iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes_per_iteration));
  const double rate = seconds > 0 ? iterations * static_cast<double>(bytes_per_iteration) / seconds : 0.0;
  if (is_baseline) {
    memcpy_rates()[count] = rate;  // the last (longest) run wins
    return;
  }
  if (const auto it = memcpy_rates().find(count); it != memcpy_rates().end() && it->second > 0) {
    state.counters["vs_memcpy"] = rate / it->second;
  }
}

void BM_vertex_memcpy(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto& in = vertex_input(count);
  std::vector<std::byte> out(in.size());
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state, count, in.size(), cpu_seconds_since(t0), true);
}

void BM_vertex_decode_interleaved(benchmark::State& state, decode_path path) {
  if (!untold::decode_path_supported(path)) {
    state.SkipWithError("decode path not supported on this CPU");
    return;
  }
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto& in = vertex_input(count);
  std::vector<untold::pbr_vertex> out(count);
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    const auto s = untold::decode_pbr_vertices(in, out, path);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state, count, in.size(), cpu_seconds_since(t0), false);
}

void BM_vertex_decode_streams(benchmark::State& state, decode_path path) {
  if (!untold::decode_path_supported(path)) {
    state.SkipWithError("decode path not supported on this CPU");
    return;
  }
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto& in = vertex_input(count);
  std::vector<float> pos(3 * count), nrm(3 * count), tan(4 * count), uv0(2 * count), uv1(2 * count),
      col(4 * count);
  const untold::pbr_vertex_streams streams{pos, nrm, tan, uv0, uv1, col};
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    const auto s = untold::decode_pbr_vertices(in, streams, path);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(pos.data());
    benchmark::ClobberMemory();
  }
  finish(state, count, in.size(), cpu_seconds_since(t0), false);
}

// ---- views -> new arrays ----------------------------------------------------------
// What a loader pays to turn a mesh's bytes into fresh float / uint32 arrays,
// against the floor of producing the same number of output bytes in fresh
// memory: allocate (uninitialised) + memcpy from an array of the output size.
// Counter `vs_fresh_memcpy` = (output bytes / s) / the floor's, same run.

std::map<std::size_t, double>& fresh_floor_rates() {
  static std::map<std::size_t, double> rates;  // output bytes -> bytes / s
  return rates;
}

void finish_fresh(benchmark::State& state, std::size_t out_bytes, double seconds, bool is_baseline) {
  const auto iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(out_bytes));
  const double rate = seconds > 0 ? iterations * static_cast<double>(out_bytes) / seconds : 0.0;
  if (is_baseline) {
    fresh_floor_rates()[out_bytes] = rate;
    return;
  }
  if (const auto it = fresh_floor_rates().find(out_bytes); it != fresh_floor_rates().end() && it->second > 0) {
    state.counters["vs_fresh_memcpy"] = rate / it->second;
  }
}

void BM_fresh_memcpy(benchmark::State& state) {  // the floor; range(0) = output bytes
  const auto out_bytes = static_cast<std::size_t>(state.range(0));
  const std::vector<std::byte> source(out_bytes, std::byte{1});
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    auto fresh = std::make_unique_for_overwrite<std::byte[]>(out_bytes);
    std::memcpy(fresh.get(), source.data(), out_bytes);
    benchmark::DoNotOptimize(fresh.get());
    benchmark::ClobberMemory();
  }
  finish_fresh(state, out_bytes, cpu_seconds_since(t0), true);
}

void BM_fresh_vertices(benchmark::State& state) {  // decode_pbr_vertices(bytes): uninitialised array
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto& in = vertex_input(count);
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    auto out = untold::decode_pbr_vertices(untold::byte_span(in));
    benchmark::DoNotOptimize(out->data.get());
    benchmark::ClobberMemory();
  }
  finish_fresh(state, count * sizeof(untold::pbr_vertex), cpu_seconds_since(t0), false);
}

void BM_fresh_vertices_zero_filled(benchmark::State& state) {  // the old way: std::vector(n), then decode
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto& in = vertex_input(count);
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    std::vector<untold::pbr_vertex> out(count);
    const auto s = untold::decode_pbr_vertices(in, out);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish_fresh(state, count * sizeof(untold::pbr_vertex), cpu_seconds_since(t0), false);
}

void BM_fresh_indices_u16(benchmark::State& state) {  // widen_indices(view): uint16 -> new uint32 array
  const auto count = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> in(2 * count);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>(i * 131 + 7);
  const auto view = *untold::index_view::make(in, 1);
  const std::clock_t t0 = std::clock();
  for (auto _ : state) {
    auto out = untold::widen_indices(view);
    benchmark::DoNotOptimize(out->data.get());
    benchmark::ClobberMemory();
  }
  finish_fresh(state, 4 * count, cpu_seconds_since(t0), false);
}

// 4096 vertices: 128 KiB in, 288 KiB out (cache-resident); 262144 vertices:
// 8 MiB in, 18 MiB out (memory-bound).
void vertex_sizes(benchmark::internal::Benchmark* b) { b->Arg(4096)->Arg(262144); }

}  // namespace

BENCHMARK(BM_vertex_memcpy)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_interleaved, scalar, decode_path::scalar)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_streams, scalar, decode_path::scalar)->Apply(vertex_sizes);
#if defined(UNTOLD_VERTEX_X86)
BENCHMARK_CAPTURE(BM_vertex_decode_interleaved, sse41, decode_path::sse41)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_streams, sse41, decode_path::sse41)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_interleaved, avx2, decode_path::avx2)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_streams, avx2, decode_path::avx2)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_streams, avx512, decode_path::avx512)->Apply(vertex_sizes);
#endif
#if defined(UNTOLD_VERTEX_NEON)
BENCHMARK_CAPTURE(BM_vertex_decode_interleaved, neon, decode_path::neon)->Apply(vertex_sizes);
BENCHMARK_CAPTURE(BM_vertex_decode_streams, neon, decode_path::neon)->Apply(vertex_sizes);
#endif
BENCHMARK_CAPTURE(BM_vertex_decode_interleaved, automatic, decode_path::automatic)->Apply(vertex_sizes);
// Floors first (output bytes of 4096 / 262144 vertices and of 786432 indices).
BENCHMARK(BM_fresh_memcpy)->Arg(4096 * 72)->Arg(262144 * 72)->Arg(786432 * 4);
BENCHMARK(BM_fresh_vertices)->Apply(vertex_sizes);
BENCHMARK(BM_fresh_vertices_zero_filled)->Apply(vertex_sizes);
BENCHMARK(BM_fresh_indices_u16)->Arg(786432);
