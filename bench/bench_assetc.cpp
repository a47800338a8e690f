// bench/bench_assetc.cpp - opening an assetc .hmesh against copying its bytes.
//
// A generated grid mesh (n x n vertices, 2 (n-1)^2 triangles, greedy meshlets
// of <= 64 vertices / 124 triangles, one submesh, two LOD levels) is written
// once with write_hmesh; then per iteration:
//   assetc_memcpy       memcpy of the file's bytes (the floor any loader pays)
//   assetc_open         open_hmesh: header, table, DESC and every range rule
//   assetc_open_deep    open_hmesh with deep checks (every index, local
//                       meshlet index, position)
// Bytes/s are file bytes. Run: untold_bench --benchmark_filter=assetc
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <untold/assetc/hmesh.hpp>

namespace {

namespace ua = untold::assetc;

std::vector<std::byte> make_grid_hmesh(std::uint32_t n) {
  std::vector<float> positions;
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) positions.insert(positions.end(), {float(x), float(y), 0.0f});
  std::vector<std::uint32_t> indices;
  for (std::uint32_t y = 0; y + 1 < n; ++y)
    for (std::uint32_t x = 0; x + 1 < n; ++x) {
      const std::uint32_t i = y * n + x;
      indices.insert(indices.end(), {i, i + 1, i + n, i + 1, i + n + 1, i + n});
    }
  // Greedy meshlets in triangle order.
  std::vector<ua::meshlet> meshlets;
  std::vector<std::uint32_t> mlvr;
  std::vector<ua::meshlet_triangle> mltr;
  std::vector<std::int32_t> local(positions.size() / 3, -1);
  ua::meshlet cur{};
  auto flush = [&] {
    if (cur.triangle_count == 0) return;
    for (std::uint32_t k = 0; k < cur.vertex_count; ++k) local[mlvr[cur.vertex_offset + k]] = -1;
    meshlets.push_back(cur);
    cur = {static_cast<std::uint32_t>(mlvr.size()), 0, static_cast<std::uint32_t>(mltr.size()), 0};
  };
  for (std::size_t t = 0; t < indices.size(); t += 3) {
    std::uint32_t fresh = 0;
    for (int k = 0; k < 3; ++k) fresh += local[indices[t + k]] < 0 ? 1 : 0;
    if (cur.vertex_count + fresh > 64 || cur.triangle_count + 1 > 124) flush();
    ua::meshlet_triangle tri;
    for (int k = 0; k < 3; ++k) {
      std::int32_t& l = local[indices[t + static_cast<std::size_t>(k)]];
      if (l < 0) {
        l = static_cast<std::int32_t>(cur.vertex_count++);
        mlvr.push_back(indices[t + static_cast<std::size_t>(k)]);
      }
      tri.v[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(l);
    }
    mltr.push_back(tri);
    ++cur.triangle_count;
  }
  flush();
  const std::vector<ua::meshlet_bound> bounds(meshlets.size());
  auto vertices = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = positions});
  const std::uint32_t half = static_cast<std::uint32_t>(indices.size() / 6 * 3);
  std::vector<std::uint32_t> lodi(indices.begin(), indices.begin() + half);
  lodi.insert(lodi.end(), indices.begin(), indices.begin() + half / 2 / 3 * 3);
  const ua::mesh_lod lods[] = {{0, half}, {half, half / 2 / 3 * 3}};
  const ua::submesh sub{0, static_cast<std::uint32_t>(indices.size()), 0, static_cast<std::uint32_t>(meshlets.size()),
                        0, 0, {}};
  const std::uint64_t material = 1;
  ua::hmesh_input in;
  in.vertices = *vertices;
  in.indices = indices;
  in.meshlets = meshlets, in.meshlet_vertices = mlvr, in.meshlet_triangles = mltr, in.meshlet_bounds = bounds;
  in.meshlet_max_vertices = 64, in.meshlet_max_triangles = 124;
  in.materials = std::span(&material, 1);
  in.submeshes = std::span(&sub, 1);
  in.lod_indices = lodi, in.lod_count = 2, in.lods = lods;
  return *ua::write_hmesh(in);
}

const std::vector<std::byte>& mesh_for(std::int64_t n) {
  static std::vector<std::vector<std::byte>> cache(4097);
  auto& m = cache[static_cast<std::size_t>(n)];
  if (m.empty()) m = make_grid_hmesh(static_cast<std::uint32_t>(n));
  return m;
}

void assetc_memcpy(benchmark::State& state) {
  const auto& file = mesh_for(state.range(0));
  std::vector<std::byte> copy(file.size());
  for (auto _ : state) {
    std::memcpy(copy.data(), file.data(), file.size());
    benchmark::DoNotOptimize(copy.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(file.size()));
}

void assetc_open(benchmark::State& state, bool deep) {
  const auto& file = mesh_for(state.range(0));
  ua::open_options options;
  options.deep_checks = deep;
  options.limits.max_records = 1u << 28;  // the largest grid has 25 M indices (default cap: 16 M)
  for (auto _ : state) {
    auto m = ua::open_hmesh(file, options);
    if (!m) state.SkipWithError("open_hmesh failed");
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(file.size()));
  state.counters["vertices"] = static_cast<double>(state.range(0) * state.range(0));
}

// n = 2: the fixed cost (4 vertices, 2 triangles, one meshlet); n = 64, 512,
// 2048: 4 K, 262 K and 4.2 M vertices.
void grid_sizes(benchmark::internal::Benchmark* b) {
  for (const int n : {2, 64, 512, 2048}) b->Arg(n);
}

}  // namespace

BENCHMARK(assetc_memcpy)->Apply(grid_sizes)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(assetc_open, structural, false)->Apply(grid_sizes)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(assetc_open, deep, true)->Apply(grid_sizes)->Unit(benchmark::kMicrosecond);
