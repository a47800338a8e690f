// `untold build` throughput: a generated large glTF (a displaced grid,
// N x N quads, one .gltf + .bin) compiled end to end (import, weld, vertex
// cache/fetch optimisation, meshlets, two LODs, .hmesh/.hmat/.hman), in
// triangles per second; and the compiler's meshlet stage (build_meshlets:
// meshoptimizer plus dense MLTR and bounds) next to meshopt_buildMeshlets +
// meshopt_computeMeshletBounds alone on the same indices.
//
//   ./untold_bench --benchmark_filter=assetc_build
//
// Needs the tool's pipeline: built only when untold_bench links untold_pipeline
// and meshoptimizer (UNTOLD_BENCH_HAVE_ASSETC_BUILD, see docs/assetc-build.md).
#if defined(UNTOLD_BENCH_HAVE_ASSETC_BUILD)

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <meshoptimizer.h>

#include "assetc_build.hpp"

namespace {

namespace fs = std::filesystem;
namespace ab = untold::tools::assetc_build;

struct grid {
  std::vector<float> positions;
  std::vector<std::uint32_t> indices;
};

/// n x n quads over (n+1)^2 vertices, gently displaced so the simplifier has work.
grid make_grid(std::uint32_t n) {
  grid g;
  for (std::uint32_t y = 0; y <= n; ++y)
    for (std::uint32_t x = 0; x <= n; ++x) {
      const float fx = static_cast<float>(x) / static_cast<float>(n), fy = static_cast<float>(y) / static_cast<float>(n);
      g.positions.insert(g.positions.end(), {fx, 0.05f * std::sin(12.0f * fx) * std::cos(9.0f * fy), fy});
    }
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) {
      const std::uint32_t a = y * (n + 1) + x, b = a + 1, c = a + n + 1, d = c + 1;
      g.indices.insert(g.indices.end(), {a, c, b, b, c, d});
    }
  return g;
}

/// Writes assets/grid.gltf + grid.bin under `dir`; returns the assets dir.
fs::path write_grid_gltf(const fs::path& dir, const grid& g) {
  const fs::path assets = dir / "assets";
  fs::create_directories(assets);
  const std::size_t pos_bytes = g.positions.size() * 4, idx_bytes = g.indices.size() * 4;
  {
    std::ofstream bin(assets / "grid.bin", std::ios::binary);
    bin.write(reinterpret_cast<const char*>(g.positions.data()), static_cast<std::streamsize>(pos_bytes));
    bin.write(reinterpret_cast<const char*>(g.indices.data()), static_cast<std::streamsize>(idx_bytes));
  }
  const std::size_t vertices = g.positions.size() / 3;
  std::ofstream(assets / "grid.gltf")
      << R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
      << R"("materials":[{"name":"ground"}],"meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1,"material":0}]}],)"
      << R"("buffers":[{"uri":"grid.bin","byteLength":)" << pos_bytes + idx_bytes << "}],"
      << R"("bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":)" << pos_bytes << R"(},)"
      << R"({"buffer":0,"byteOffset":)" << pos_bytes << R"(,"byteLength":)" << idx_bytes << "}],"
      << R"("accessors":[{"bufferView":0,"componentType":5126,"count":)" << vertices
      << R"(,"type":"VEC3","min":[0,-0.05,0],"max":[1,0.05,1]},)"
      << R"({"bufferView":1,"componentType":5125,"count":)" << g.indices.size() << R"(,"type":"SCALAR"}]})";
  return assets;
}

void assetc_build_compile(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const grid g = make_grid(n);
  const fs::path dir = fs::temp_directory_path() / ("untold_bench_assetc_build_" + std::to_string(n));
  fs::remove_all(dir);
  ab::build_options o;
  o.input = write_grid_gltf(dir, g);
  o.output = dir / "runtime";
  o.use_cache = false;  // every iteration compiles
  o.jobs = 1;
  for (auto _ : state) {
    const ab::build_result r = ab::build(o);
    if (r.exit_code(false) != 0) {
      state.SkipWithError("build failed");
      break;
    }
    benchmark::DoNotOptimize(r.assets.size());
  }
  const double triangles = static_cast<double>(g.indices.size() / 3);
  state.counters["triangles_per_s"] = benchmark::Counter(triangles * static_cast<double>(state.iterations()),
                                                         benchmark::Counter::kIsRate);
  state.counters["triangles"] = triangles;
  fs::remove_all(dir);
}
BENCHMARK(assetc_build_compile)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void assetc_build_meshlets_meshoptimizer_alone(benchmark::State& state) {
  const grid g = make_grid(static_cast<std::uint32_t>(state.range(0)));
  const std::size_t nv = g.positions.size() / 3;
  for (auto _ : state) {
    const std::size_t max = meshopt_buildMeshletsBound(g.indices.size(), ab::meshlet_max_vertices, ab::meshlet_max_triangles);
    std::vector<meshopt_Meshlet> ml(max);
    std::vector<unsigned int> mv(max * ab::meshlet_max_vertices);
    std::vector<unsigned char> mt(max * ab::meshlet_max_triangles * 3);
    const std::size_t count = meshopt_buildMeshlets(ml.data(), mv.data(), mt.data(), g.indices.data(), g.indices.size(),
                                                    g.positions.data(), nv, 12, ab::meshlet_max_vertices,
                                                    ab::meshlet_max_triangles, ab::meshlet_cone_weight);
    float sink = 0;
    for (std::size_t k = 0; k < count; ++k)
      sink += meshopt_computeMeshletBounds(&mv[ml[k].vertex_offset], &mt[ml[k].triangle_offset], ml[k].triangle_count,
                                           g.positions.data(), nv, 12)
                  .radius;
    benchmark::DoNotOptimize(sink);
  }
  state.counters["triangles_per_s"] = benchmark::Counter(
      static_cast<double>(g.indices.size() / 3) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(assetc_build_meshlets_meshoptimizer_alone)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

void assetc_build_meshlets_compiler_stage(benchmark::State& state) {
  const grid g = make_grid(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    untold::convert::assetc_meshlets out;
    ab::build_meshlets(g.indices, g.positions, 0, out);
    benchmark::DoNotOptimize(out.meshlets.data());
  }
  state.counters["triangles_per_s"] = benchmark::Counter(
      static_cast<double>(g.indices.size() / 3) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(assetc_build_meshlets_compiler_stage)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace

#endif  // UNTOLD_BENCH_HAVE_ASSETC_BUILD
