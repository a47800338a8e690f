// bench/bench_streaming.cpp - untold::streaming::planner cost per tick.
//
// 10,000 tiles (100 x 100, 50 m apart), each with two LODs and an HLOD, so
// 40,000 levels; a memory budget that holds a fraction of them; the camera
// flies across the world at 20 m per tick and every request completes on the
// next tick (a fake engine), so each tick fetches, loads, shows, unloads and
// evicts. The baseline is the floor of any planner that looks at every tile:
// one pass computing each tile's distance to the camera. Goal: under 1 ms a tick.
#include "bench_common.hpp"

#include <untold/streaming.hpp>

#include <cmath>
#include <vector>

namespace {

namespace us = untold::streaming;

constexpr int side = 100;
constexpr double spacing = 50;

std::vector<us::tile_desc> world() {
  std::vector<us::tile_desc> tiles;
  tiles.reserve(side * side);
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      us::tile_desc t;
      t.center = {i * spacing, 0, j * spacing};
      t.size_bytes = 4 << 20;
      t.streaming_radius = 150;
      t.unload_radius = 250;
      t.priority = (i * 7 + j) % 3;
      t.lods = {{300, 1 << 20}, {600, 256 << 10}};
      t.hlod = us::level_desc{1000, 32 << 10};
      tiles.push_back(t);
    }
  return tiles;
}

us::vec3 camera_at(std::int64_t tick) {
  // Back and forth across the world on a diagonal, 20 m per tick.
  const double span = (side - 1) * spacing;
  double s = std::fmod(static_cast<double>(tick) * 20.0, 2 * span);
  if (s > span) s = 2 * span - s;
  return {s, 1.8, span - s * 0.5};
}

void BM_streaming_distance_pass(benchmark::State& state) {
  const std::vector<us::tile_desc> tiles = world();
  std::int64_t tick = 0;
  const double seconds = untold_bench::cpu_loop(state, [&] {
    const us::vec3 c = camera_at(tick++);
    std::size_t inside = 0;
    for (const us::tile_desc& t : tiles) {
      const double dx = t.center[0] - c[0], dy = t.center[1] - c[1], dz = t.center[2] - c[2];
      inside += std::sqrt(dx * dx + dy * dy + dz * dz) <= t.unload_radius ? 1 : 0;
    }
    benchmark::DoNotOptimize(inside);
  });
  untold_bench::set_baseline(state, "streaming_distance_pass", seconds);
}
BENCHMARK(BM_streaming_distance_pass)->Unit(benchmark::kMicrosecond);

void BM_streaming_planner_tick(benchmark::State& state) {
  us::planner plan(world(), {});
  std::vector<us::request_result> pending, results;
  std::int64_t tick = 0;
  std::uint64_t actions = 0;
  const std::uint64_t budget = std::uint64_t{256} << 20;  // 64 full tiles, or many HLODs
  // Warm up: fill the budget and the HLOD field before timing.
  auto one_tick = [&] {
    results.swap(pending);
    pending.clear();
    const auto& out = plan.tick(
        {.camera = camera_at(tick), .now = static_cast<double>(tick) * 0.1, .memory_budget = budget, .results = results});
    ++tick;
    actions += out.size();
    for (const us::action& a : out)
      if (a.request != 0 && a.kind != us::action_kind::cancel)
        pending.push_back({a.request, us::request_outcome::completed, 0});
      else if (a.kind == us::action_kind::cancel)
        pending.push_back({a.request, us::request_outcome::cancelled, 0});
  };
  for (int i = 0; i < 200; ++i) one_tick();
  actions = 0;
  const double seconds = untold_bench::cpu_loop(state, one_tick);
  state.counters["actions_per_tick"] =
      benchmark::Counter(static_cast<double>(actions), benchmark::Counter::kAvgIterations);
  state.counters["resident_MiB"] = static_cast<double>(plan.resident_bytes()) / (1 << 20);
  state.counters["ms_per_tick"] = state.iterations() > 0 ? 1000 * seconds / static_cast<double>(state.iterations()) : 0;
  untold_bench::time_ratio(state, "x_distance_pass", "streaming_distance_pass", seconds);
}
BENCHMARK(BM_streaming_planner_tick)->Unit(benchmark::kMicrosecond);

}  // namespace
