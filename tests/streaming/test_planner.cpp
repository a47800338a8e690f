// untold::streaming::planner with a fake clock and a fake engine: every
// fetch/load completes (or fails) when the test says so, so each rule is
// checked tick by tick.
#include <doctest/doctest.h>

#include <untold/streaming.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <map>
#include <vector>

namespace us = untold::streaming;

namespace {

/// A grid of n x n tiles, `spacing` apart on the x/z plane, centres at (i*spacing, 0, j*spacing).
std::vector<us::tile_desc> grid(int n, double spacing, double streaming, double unload, std::uint64_t size = 100) {
  std::vector<us::tile_desc> tiles;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      us::tile_desc t;
      t.center = {i * spacing, 0, j * spacing};
      t.bounds_min = {i * spacing - spacing / 2, -1, j * spacing - spacing / 2};
      t.bounds_max = {i * spacing + spacing / 2, 1, j * spacing + spacing / 2};
      t.size_bytes = size;
      t.streaming_radius = streaming;
      t.unload_radius = unload;
      tiles.push_back(t);
    }
  return tiles;
}

us::tile_desc single(double streaming = 80, double unload = 120, std::uint64_t size = 100) {
  return grid(1, 1, streaming, unload, size)[0];
}

/// Drives a planner like an engine whose requests finish on the next tick
/// (or fail, for levels listed in `failing`). Counts what happened per level.
struct engine {
  us::planner plan;
  std::vector<us::request_result> pending;
  std::vector<us::action> last;
  std::map<std::pair<std::uint32_t, std::uint16_t>, int> fetches, unloads, cancels;
  std::vector<std::pair<std::uint32_t, std::uint16_t>> failing;
  std::uint64_t budget = UINT64_MAX;
  std::uint64_t peak = 0;

  explicit engine(std::vector<us::tile_desc> tiles, us::planner_options o = {}) : plan(std::move(tiles), o) {}

  const std::vector<us::action>& step(us::vec3 camera, double now) {
    std::vector<us::request_result> results;
    results.swap(pending);
    last = plan.tick({.camera = camera, .now = now, .memory_budget = budget, .results = results});
    for (const us::action& a : last) {
      const auto key = std::make_pair(a.tile, a.level);
      switch (a.kind) {
        case us::action_kind::fetch_prefix:
        case us::action_kind::fetch_file:
          ++fetches[key];
          [[fallthrough]];
        case us::action_kind::fetch_ranges:
        case us::action_kind::load: {
          const bool fails = std::find(failing.begin(), failing.end(), key) != failing.end();
          pending.push_back({a.request, fails ? us::request_outcome::failed : us::request_outcome::completed, 0});
          break;
        }
        case us::action_kind::cancel:
          ++cancels[key];
          // The cancelled request ends (it may have been about to complete).
          pending.erase(std::remove_if(pending.begin(), pending.end(),
                                       [&](const us::request_result& r) { return r.request == a.request; }),
                        pending.end());
          pending.push_back({a.request, us::request_outcome::cancelled, 0});
          break;
        case us::action_kind::unload: ++unloads[key]; break;
        case us::action_kind::show: break;
      }
    }
    peak = std::max(peak, plan.resident_bytes());
    return last;
  }

  /// Ticks every dt seconds from t0 to t1 at a fixed camera.
  void run(us::vec3 camera, double t0, double t1, double dt = 0.1) {
    for (double t = t0; t <= t1 + 1e-9; t += dt) step(camera, t);
  }
};

bool has(const std::vector<us::action>& actions, us::action_kind kind, std::uint32_t tile, std::uint16_t level) {
  return std::any_of(actions.begin(), actions.end(),
                     [&](const us::action& a) { return a.kind == kind && a.tile == tile && a.level == level; });
}

}  // namespace

TEST_CASE("planner: default prefetch radius is (streaming + unload) / 2 and the state machine runs in order") {
  engine e({single(80, 120)});
  // At 101 m: outside the prefetch radius (100): nothing.
  CHECK(e.step({101, 0, 0}, 0).empty());
  CHECK(e.plan.state(0, 0) == us::level_state::unloaded);
  // At 100 m: fetch the metadata prefix.
  auto a = e.step({100, 0, 0}, 1);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == us::action_kind::fetch_prefix);
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
  // Prefix done: fetch the mesh ranges.
  a = e.step({100, 0, 0}, 2);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == us::action_kind::fetch_ranges);
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
  // Ranges done: load (parse).
  a = e.step({100, 0, 0}, 3);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == us::action_kind::load);
  CHECK(e.plan.state(0, 0) == us::level_state::parsing);
  // Parsed, but at 100 m (outside streaming radius 80) it is not shown yet...
  a = e.step({100, 0, 0}, 4);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
  // ...it is the only parsed level, so it is shown rather than nothing (no holes).
  CHECK(e.plan.shown(0) == 0);
  CHECK(e.plan.resident_bytes() == 100);
  CHECK(e.plan.in_flight() == 0);
}

TEST_CASE("planner: whole-file mode fetches the file, then loads") {
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  engine e({single()}, o);
  auto a = e.step({0, 0, 0}, 0);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == us::action_kind::fetch_file);
  a = e.step({0, 0, 0}, 1);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == us::action_kind::load);
  a = e.step({0, 0, 0}, 2);
  CHECK(has(a, us::action_kind::show, 0, 0));
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
}

TEST_CASE("planner: radii transitions - kept to the unload radius, dropped after the grace period") {
  engine e({single(80, 120)});
  e.run({50, 0, 0}, 0, 1);
  REQUIRE(e.plan.state(0, 0) == us::level_state::parsed);
  CHECK(e.plan.shown(0) == 0);
  // Between prefetch and unload radius: still held.
  e.run({115, 0, 0}, 1.1, 20);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
  // Beyond the unload radius: held for the 3 s grace period, then unloaded.
  e.step({121, 0, 0}, 30);
  e.step({121, 0, 0}, 32.9);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
  const auto a = e.step({121, 0, 0}, 33);
  CHECK(has(a, us::action_kind::unload, 0, 0));
  CHECK(has(a, us::action_kind::show, 0, us::no_level));
  CHECK(e.plan.state(0, 0) == us::level_state::unloaded);
  CHECK(e.plan.resident_bytes() == 0);
  // The grace timer resets when the camera comes back inside.
  e.run({50, 0, 0}, 40, 41);
  REQUIRE(e.plan.state(0, 0) == us::level_state::parsed);
  e.step({121, 0, 0}, 50);
  e.step({119, 0, 0}, 52);  // back in: timer reset
  e.step({121, 0, 0}, 54);  // out again at 54: unload not before 57
  e.step({121, 0, 0}, 56.9);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
  e.step({121, 0, 0}, 57);
  CHECK(e.plan.state(0, 0) == us::level_state::unloaded);
}

TEST_CASE("planner: an explicit prefetch radius is used and clamped between streaming and unload") {
  us::tile_desc t = single(80, 120);
  t.prefetch_radius = 90;
  engine e({t});
  CHECK(e.step({95, 0, 0}, 0).empty());
  CHECK(!e.step({90, 0, 0}, 1).empty());
  us::tile_desc wild = single(80, 120);
  wild.prefetch_radius = 500;  // beyond unload: clamped to 120
  engine e2({wild});
  CHECK(!e2.step({119, 0, 0}, 0).empty());
}

TEST_CASE("planner: failure backoff is exactly 5, 10, 20, then 60 s (the reference sequence)") {
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  engine e({single()}, o);
  e.failing.push_back({0, 0});
  CHECK(e.plan.backoff(1) == 5);
  CHECK(e.plan.backoff(2) == 10);
  CHECK(e.plan.backoff(3) == 20);
  CHECK(e.plan.backoff(4) == 60);
  CHECK(e.plan.backoff(5) == 60);
  CHECK(e.plan.backoff(9) == 60);
  CHECK(e.plan.backoff(0xFFFFFFFFu) == 60);
  // Fetch at t=0; the failure arrives at t=1: retry not before 6, then 10 s later, ...
  double t = 0;
  e.step({0, 0, 0}, t);
  std::vector<double> retries;
  const double expected_delay[] = {5, 10, 20, 60, 60, 60};
  for (int failure = 1; failure <= 6; ++failure) {
    t += 1;
    e.step({0, 0, 0}, t);  // the failure is reported now
    REQUIRE(e.plan.state(0, 0) == us::level_state::failed);
    CHECK(e.plan.failures(0, 0) == static_cast<std::uint32_t>(failure));
    CHECK(e.plan.retry_at(0, 0) == doctest::Approx(t + expected_delay[failure - 1]));
    const double due = t + expected_delay[failure - 1];
    // One tick before it is due: nothing; at the due time: the fetch again.
    CHECK(e.step({0, 0, 0}, due - 0.01).empty());
    const auto a = e.step({0, 0, 0}, due);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == us::action_kind::fetch_file);
    t = due;
  }
  CHECK(e.fetches[{0, 0}] == 7);
  // The 7th failure arrives, then a fetch that succeeds resets the count.
  e.failing.clear();
  e.step({0, 0, 0}, t + 1);
  CHECK(e.plan.failures(0, 0) == 7);
  CHECK(e.step({0, 0, 0}, t + 60.99).empty());
  e.step({0, 0, 0}, t + 61);
  e.step({0, 0, 0}, t + 62);
  e.step({0, 0, 0}, t + 63);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);
  CHECK(e.plan.failures(0, 0) == 0);
}

TEST_CASE("planner: the backoff schedule is a configurable step table") {
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  o.backoff_schedule = {1, 3};
  engine e({single()}, o);
  CHECK(e.plan.backoff(1) == 1);
  CHECK(e.plan.backoff(2) == 3);
  CHECK(e.plan.backoff(3) == 3);
  e.failing.push_back({0, 0});
  e.step({0, 0, 0}, 0);
  e.step({0, 0, 0}, 1);  // first failure: retry at 2
  CHECK(e.plan.retry_at(0, 0) == doctest::Approx(2));
  // Empty = the default; negative and non-finite steps become 0 (retry at once).
  us::planner_options empty;
  empty.backoff_schedule.clear();
  CHECK(us::planner({single()}, empty).backoff(4) == 60);
  us::planner_options wild;
  wild.backoff_schedule = {-5, std::numeric_limits<double>::quiet_NaN(), 7};
  const us::planner w({single()}, wild);
  CHECK(w.backoff(1) == 0);
  CHECK(w.backoff(2) == 0);
  CHECK(w.backoff(3) == 7);
}

TEST_CASE("planner: a tile leaving its unload radius cancels its in-flight fetch") {
  engine e({single(80, 120)});
  const auto a = e.step({90, 0, 0}, 0);
  REQUIRE(a.size() == 1);
  const std::uint64_t request = a[0].request;
  e.pending.clear();  // the transfer is slow: nothing completes
  // Still inside the unload radius: kept in flight.
  CHECK(e.step({118, 0, 0}, 1).empty());
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
  const auto b = e.step({130, 0, 0}, 2);
  REQUIRE(b.size() == 1);
  CHECK(b[0].kind == us::action_kind::cancel);
  CHECK(b[0].request == request);
  CHECK(e.plan.state(0, 0) == us::level_state::unloading);
  CHECK(e.plan.resident_bytes() == 0);  // a cancelled transfer holds no budget
  // Coming back before the old request has ended: no second fetch yet.
  e.pending.clear();
  CHECK(e.step({50, 0, 0}, 3).empty());
  CHECK(e.plan.in_flight() == 1);
  // The old request ends (as completed: too late, ignored) -> unloaded -> fetched anew.
  e.pending.push_back({request, us::request_outcome::completed, 0});
  e.step({50, 0, 0}, 4);
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
  CHECK(e.fetches[{0, 0}] == 2);
}

TEST_CASE("planner: stale and unknown results are ignored") {
  engine e({single()});
  const auto a = e.step({0, 0, 0}, 0);
  e.pending.clear();
  const us::request_result junk[] = {{a[0].request + (std::uint64_t{7} << 32), us::request_outcome::completed, 0},
                                     {0xFFFFFFFFFFFFull, us::request_outcome::failed, 0},
                                     {0, us::request_outcome::completed, 0}};
  CHECK(e.plan.tick({.camera = {0, 0, 0}, .now = 1, .results = junk}).empty());
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
}

TEST_CASE("planner: nearest first, then higher priority, at most max_in_flight at once") {
  auto tiles = grid(1, 10, 100, 150);
  for (int i = 0; i < 5; ++i) {
    us::tile_desc t = single(100, 150);
    t.center = {10.0 * (i + 1), 0, 0};
    tiles.push_back(t);
  }
  tiles[3].priority = 5;  // at 30 m
  us::tile_desc twin = tiles[3];
  twin.priority = 9;      // also at 30 m, higher priority
  tiles.push_back(twin);  // index 6
  us::planner_options o;
  o.max_in_flight = 3;
  engine e(tiles, o);
  e.pending.clear();
  const auto a = e.step({0, 0, 0}, 0);
  REQUIRE(a.size() == 3);
  CHECK(a[0].tile == 0);  // 0 m
  CHECK(a[1].tile == 1);  // 10 m
  CHECK(a[2].tile == 2);  // 20 m
  CHECK(e.plan.in_flight() == 3);
  // Finish them all (three ticks per level); the next are the 30 m tiles, priority 9 first.
  std::vector<us::action> order;
  for (double t = 1; t < 20; t += 1) {
    for (const us::action& x : e.step({0, 0, 0}, t))
      if (x.kind == us::action_kind::fetch_prefix) order.push_back(x);
    CHECK(e.plan.in_flight() <= 3);
  }
  REQUIRE(order.size() == 4);
  CHECK(order[0].tile == 6);
  CHECK(order[1].tile == 3);
  CHECK(order[2].tile == 4);
  CHECK(order[3].tile == 5);
}

TEST_CASE("planner: the memory budget is never exceeded after a tick, farthest evicted first") {
  // 9 x 9 tiles of 100 bytes, 10 m apart; budget for 12 tiles.
  engine e(grid(9, 10, 25, 35));
  e.budget = 1200;
  std::uint64_t worst = 0;
  for (int step = 0; step < 400; ++step) {
    const double x = step * 0.25;  // walks diagonally across the grid
    e.step({x, 0, x}, step * 0.1);
    worst = std::max(worst, e.plan.resident_bytes());
    REQUIRE(e.plan.resident_bytes() <= e.budget);
  }
  CHECK(worst == 1200);  // the budget was the limit, not the radii
  CHECK(e.plan.stats().evictions > 0);
  // Standing still, it settles: a tile whose streaming radius holds the
  // camera is missing only while every parsed tile is within 1.5x its distance
  // (eviction_hysteresis), and the budget is used.
  e.run({40, 0, 40}, 50, 60);
  int needed = 0;
  double nearest_missing = 1e9, farthest_parsed = 0;
  for (std::uint32_t t = 0; t < e.plan.tile_count(); ++t) {
    const double d = e.plan.distance(t);
    const bool parsed = e.plan.state(t, 0) == us::level_state::parsed;
    if (d < 25) ++needed;
    if (d < 25 && !parsed) nearest_missing = std::min(nearest_missing, d);
    if (parsed) farthest_parsed = std::max(farthest_parsed, d);
  }
  CHECK(needed == 21);  // more than the 12 that fit
  CHECK(e.plan.resident_bytes() == 1200);
  CHECK(farthest_parsed <= nearest_missing * 1.5);
  // A budget that shrinks evicts at once, farthest first.
  e.budget = 300;
  e.step({80, 0, 80}, 100);
  CHECK(e.plan.resident_bytes() <= 300);
  e.budget = 0;
  e.step({80, 0, 80}, 101);
  CHECK(e.plan.resident_bytes() == 0);
}

TEST_CASE("planner: a larger size learned from a result is corrected within the tick") {
  engine e(grid(3, 10, 25, 35, 100));
  e.budget = 500;
  const auto a = e.step({10, 0, 10}, 0);
  REQUIRE(!a.empty());
  // The engine learns the centre tile is really 450 bytes.
  for (us::request_result& r : e.pending)
    if (e.plan.request_target(r.request).first == 4) r.resident_bytes = 450;
  e.step({10, 0, 10}, 1);
  CHECK(e.plan.resident_bytes() <= 500);
  CHECK(e.plan.level_bytes(4, 0) == 450);
}

TEST_CASE("planner: a camera walking along a tile border does not oscillate") {
  // Two tiles whose shared border is x = 50; the camera walks along it with
  // sideways jitter that crosses the streaming, prefetch and unload radii of
  // both tiles many times.
  std::vector<us::tile_desc> tiles = {single(40, 60), single(40, 60)};
  tiles[1].center = {100, 0, 0};
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  engine e(tiles, o);
  e.budget = 150;  // room for one tile only: the budget must not thrash either
  int shows = 0;
  for (int step = 0; step < 2000; ++step) {
    const double jitter = (step % 7) - 3.0;  // -3 .. +3 m around the border
    for (const us::action& a : e.step({50 + jitter, 0, (step % 40) * 0.5}, step * 0.05))
      shows += a.kind == us::action_kind::show ? 1 : 0;
  }
  // Each tile was fetched at most once and never unloaded or cancelled.
  CHECK(e.fetches[{0, 0}] + e.fetches[{1, 0}] == 1);
  CHECK(e.unloads.empty());
  CHECK(e.cancels.empty());
  CHECK(shows == 1);
}

TEST_CASE("planner: LOD bands by switch distance, HLOD beyond the streaming radius, with hysteresis") {
  us::tile_desc t = single(50, 70);  // prefetch 60: margins 10 (fetch) and 20 (keep)
  t.lods = {{150, 40}, {100, 60}};   // unsorted on purpose: LOD1 from 100 m, LOD2 from 150 m
  t.hlod = us::level_desc{250, 10};
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  engine e({t}, o);
  REQUIRE(e.plan.level_count(0) == 4);
  CHECK(e.plan.is_lod(0, 1));
  CHECK(e.plan.is_lod(0, 2));
  CHECK(e.plan.hlod_level(0) == 3);
  // Far away (400 m): only the HLOD.
  e.run({400, 0, 0}, 0, 1);
  CHECK(e.plan.state(0, 3) == us::level_state::parsed);
  CHECK(e.plan.state(0, 0) == us::level_state::unloaded);
  CHECK(e.plan.state(0, 1) == us::level_state::unloaded);
  CHECK(e.plan.shown(0) == 3);
  CHECK(e.plan.level_bytes(0, 3) == 10);
  // 170 m: LOD2 band [150, 250): fetched and shown.
  e.run({170, 0, 0}, 2, 3);
  CHECK(e.plan.state(0, 2) == us::level_state::parsed);
  CHECK(e.plan.shown(0) == 2);
  // 120 m: LOD1 [100, 150).
  e.run({120, 0, 0}, 4, 5);
  CHECK(e.plan.shown(0) == 1);
  // 30 m: the full tile. The others leave their keep ranges and go after the grace period.
  e.run({30, 0, 0}, 6, 12);
  CHECK(e.plan.shown(0) == 0);
  CHECK(e.plan.state(0, 3) == us::level_state::unloaded);
  CHECK(e.plan.state(0, 2) == us::level_state::unloaded);
  CHECK(e.plan.state(0, 1) == us::level_state::unloaded);
  CHECK(e.plan.resident_bytes() == 100);
  // Back out to 95 m: LOD1 (band from 100) is prefetched 10 m early; the full
  // tile stays shown up to its keep edge... the shown level switches to LOD1
  // only past 100 * (1 - 0.1) = 90 m from below? No: the full tile's band
  // [0, 50) widened by 10% ends at 55, so at 95 m the finest parsed level
  // whose band holds the camera wins - none does, so the nearest band: LOD1.
  e.run({95, 0, 0}, 13, 14);
  CHECK(e.plan.state(0, 1) == us::level_state::parsed);
  CHECK(e.plan.shown(0) == 1);
  // Hysteresis: LOD1 [100,150) shown; at 155 m (inside 150 * 1.1) it stays.
  e.run({155, 0, 0}, 15, 16);
  CHECK(e.plan.state(0, 2) == us::level_state::parsed);
  CHECK(e.plan.shown(0) == 1);
  // At 166 m (past 165): LOD2.
  e.step({166, 0, 0}, 17);
  CHECK(e.plan.shown(0) == 2);
}

TEST_CASE("planner: the shown level is kept while its replacement loads (no hole)") {
  us::tile_desc t = single(50, 70);
  t.hlod = us::level_desc{50, 10};
  us::planner_options o;
  o.mode = us::transfer_mode::whole_file;
  engine e({t}, o);
  e.run({300, 0, 0}, 0, 1);
  REQUIRE(e.plan.shown(0) == 1);
  // Teleport next to the tile; the full tile's fetch never completes.
  e.step({0, 0, 0}, 2);
  e.pending.clear();
  for (double s = 3; s < 20; s += 1) e.step({0, 0, 0}, s);
  CHECK(e.plan.state(0, 0) == us::level_state::fetching);
  CHECK(e.plan.state(0, 1) == us::level_state::parsed);  // the HLOD is not dropped meanwhile
  CHECK(e.plan.shown(0) == 1);
}

TEST_CASE("planner: the shared bucket is always resident and never evicted") {
  std::vector<us::tile_desc> tiles = {single(10, 20, 100), single(10, 20, 100)};
  tiles[0].always_resident = true;
  tiles[0].center = {10000, 0, 0};
  tiles[1].center = {0, 0, 0};
  engine e(tiles);
  e.budget = 150;
  e.run({0, 0, 0}, 0, 2);
  CHECK(e.plan.state(0, 0) == us::level_state::parsed);  // first, although far
  CHECK(e.plan.state(1, 0) == us::level_state::unloaded);  // no room left, and the bucket stays
}

TEST_CASE("planner: non-finite and out-of-order input is normalised, never trusted") {
  us::tile_desc t = single();
  t.center = {std::numeric_limits<double>::quiet_NaN(), 0, 0};
  t.streaming_radius = std::numeric_limits<double>::infinity();
  t.unload_radius = -5;
  t.lods = {{std::numeric_limits<double>::quiet_NaN(), 0}};
  engine e({t});
  e.run({0, 0, 0}, 0, 1);
  e.plan.tick({.camera = {std::numeric_limits<double>::quiet_NaN(), 0, 0},
               .now = std::numeric_limits<double>::quiet_NaN()});
  CHECK(e.plan.resident_bytes() <= 200);
}

TEST_CASE("planner: same inputs, same actions") {
  auto run = [] {
    engine e(grid(6, 10, 20, 30));
    e.budget = 900;
    std::vector<us::action> all;
    for (int i = 0; i < 300; ++i) {
      const auto& a = e.step({i * 0.2, 0, 25 + 10 * std::sin(i * 0.1)}, i * 0.1);
      all.insert(all.end(), a.begin(), a.end());
    }
    return all;
  };
  const auto a = run();
  CHECK(!a.empty());
  CHECK(a == run());
}
