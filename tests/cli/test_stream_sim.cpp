// `untold stream-sim`: a row of generated tiles and a camera path; exact
// byte counts in whole-file mode, the prefix in range mode, late tiles on a
// slow link, the memory budget, the SVG plot and the usage errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>


#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "../support.hpp"
#include "cli_support.hpp"

namespace {

using json = nlohmann::json;
using cli_test::fs::path;

/// One tile of `meshes` grids of 48 x 48 vertices (~75 KiB each).
std::vector<std::byte> sim_tile(int meshes, float z) {
  untold::builder b{untold::file_type::tile};
  const auto e = b.add_entity({.name = "root"});
  std::vector<test::grid> grids;
  for (int m = 0; m < meshes; ++m) grids.push_back(test::make_grid(48, z + static_cast<float>(m)));
  for (const test::grid& g : grids) b.add_mesh({.entity = e, .name = "grid", .vertices = g.vertices, .indices = g.indices});
  auto bytes = b.finish();
  REQUIRE(bytes.has_value());
  return std::move(*bytes);
}

struct world {
  path dir, manifest;
  std::vector<std::uint64_t> sizes;
};

/// `n` tiles 100 m apart on x, radii 60 / 90, files next to the manifest.
world make_world(const std::string& name, int n) {
  world w;
  w.dir = cli_test::scratch(name);
  json tiles = json::array();
  for (int i = 0; i < n; ++i) {
    const auto bytes = sim_tile(2, static_cast<float>(i));
    const std::string rel = "tiles/t" + std::to_string(i) + ".untold";
    cli_test::fs::create_directories(w.dir / "tiles");
    std::ofstream(w.dir / rel, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                       static_cast<std::streamsize>(bytes.size()));
    w.sizes.push_back(bytes.size());
    tiles.push_back(json{{"tile_id", "t" + std::to_string(i)},
                         {"path_relative_to_manifest", rel},
                         {"file_size_bytes", bytes.size()},
                         {"bounds", json{{"min", {100 * i - 50, -1, -50}}, {"max", {100 * i + 50, 1, 50}}}},
                         {"center", {100 * i, 0, 0}}});
  }
  const json m{{"version", 3},
               {"streaming_defaults", json{{"streaming_radius", 60}, {"unload_radius", 90}, {"priority", 0}}},
               {"tiles", tiles}};
  w.manifest = w.dir / "scene.json";
  std::ofstream(w.manifest) << m.dump(2);
  return w;
}

/// A straight path along x from x0 to x1 taking `seconds`.
path write_path(const path& dir, double x0, double x1, double seconds) {
  const path p = dir / "camera.csv";
  std::ofstream out(p);
  out << "t,x,y,z\n0," << x0 << ",0,0\n" << seconds << "," << x1 << ",0,0\n";
  return p;
}

json sim(const world& w, const path& camera, const std::string& extra) {
  const auto r = cli_test::run_untold("stream-sim " + cli_test::quoted(w.manifest) + " --path " +
                                      cli_test::quoted(camera) + " --json " + extra);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE(!j.is_discarded());
  REQUIRE(j["ok"] == true);
  return j;
}

}  // namespace

TEST_CASE("cli stream-sim: whole-file mode fetches every tile passed exactly once") {
  const world w = make_world("stream_sim_whole", 5);
  // 400 m in 80 s (5 m/s) on a fast link: every tile is ready in time.
  const path camera = write_path(w.dir, 0, 400, 80);
  const json j = sim(w, camera, "--whole-file --bandwidth 1000 --latency 10");
  std::uint64_t total = 0;
  for (const auto s : w.sizes) total += s;
  CHECK(j["mode"] == "whole_file");
  CHECK(j["sizes_from_files"] == true);
  CHECK(j["tiles_passed"] == 5);
  CHECK(j["tiles_cold_start"] == 1);  // tile 0, under the camera at t = 0
  CHECK(j["tiles_late"] == 0);
  CHECK(j["tiles_missed"] == 0);
  CHECK(j["levels_fetched"] == 5);
  CHECK(j["requests"] == 5);
  CHECK(j["bytes"]["whole_file"] == total);
  CHECK(j["bytes"]["fetched"] == total);
  CHECK(j["bytes"]["prefix"] == 0);
  // Tiles behind the camera were unloaded; memory never held more than three.
  CHECK(j["unloads"].get<int>() >= 3);
  CHECK(j["memory"]["peak"].get<std::uint64_t>() <= w.sizes[0] * 3);
  for (const json& t : j["tiles"])
    if (t["cold_start"] == false) CHECK(t["time_to_visible"].get<double>() <= 0);
}

TEST_CASE("cli stream-sim: range mode fetches a 64 KiB prefix, then the geometry beyond it") {
  const world w = make_world("stream_sim_ranges", 3);
  const path camera = write_path(w.dir, 0, 200, 40);
  const json j = sim(w, camera, "--bandwidth 1000 --latency 10");
  CHECK(j["mode"] == "ranges");
  CHECK(j["levels_fetched"] == 3);
  CHECK(j["bytes"]["prefix"] == 3 * 65536);
  CHECK(j["bytes"]["whole_file"] == 0);
  std::uint64_t total = 0;
  for (const auto s : w.sizes) total += s;
  CHECK(j["bytes"]["whole_file_equivalent"] == total);
  // Each tile (the writer's default block digests): one prefix request, then
  // one per distinct mesh range beyond it, each part grown to the 64 KiB
  // digest blocks around it (test::mesh_range_requests, from the layout).
  std::uint64_t ranges = 0, requests = 3;
  for (int i = 0; i < 3; ++i) {
    const auto tile = sim_tile(2, static_cast<float>(i));
    auto a = untold::open(tile);
    REQUIRE(a.has_value());
    REQUIRE(untold::has_block_digests(*a));
    for (const auto& r : test::mesh_range_requests(*a, {0, 1})) {
      ranges += r.second;
      ++requests;
    }
  }
  CHECK(requests > 3 + 3 * 2);  // more than one range per mesh
  CHECK(j["bytes"]["ranges"] == ranges);
  CHECK(j["requests"] == requests);
  CHECK(j["bytes"]["fetched"] == 3 * 65536 + ranges);
}

TEST_CASE("cli stream-sim: a slow link makes tiles late, a budget caps memory") {
  const world w = make_world("stream_sim_slow", 5);
  // 400 m in 8 s (50 m/s) over 0.5 Mbit/s: nothing arrives in time.
  const path camera = write_path(w.dir, 0, 400, 8);
  const json slow = sim(w, camera, "--bandwidth 0.5 --latency 100");
  CHECK(slow["tiles_passed"] == 5);
  CHECK(slow["tiles_cold_start"] == 1);
  CHECK(slow["tiles_late"].get<int>() + slow["tiles_missed"].get<int>() == 4);
  CHECK(slow["cancels"].get<int>() >= 1);  // tiles passed before they arrived were cancelled
  CHECK(slow["bytes"]["cancelled_in_flight"].get<std::uint64_t>() > 0);
  // The same path slowly with a budget of one tile: never more than that.
  const path slow_camera = write_path(w.dir, 0, 400, 200);
  const double one_tile_mb = static_cast<double>(w.sizes[0]) / (1024.0 * 1024.0) * 1.2;
  const json capped = sim(w, slow_camera, "--bandwidth 100 --budget-mb " + std::to_string(one_tile_mb));
  CHECK(capped["memory"]["peak"].get<std::uint64_t>() <= capped["memory"]["budget"].get<std::uint64_t>());
  CHECK(capped["memory"]["peak"].get<std::uint64_t>() > 0);
  CHECK(capped["tiles_missed"] == 0);
}

TEST_CASE("cli stream-sim: text report, SVG plot and usage errors") {
  const world w = make_world("stream_sim_text", 2);
  const path camera = write_path(w.dir, 0, 100, 20);
  const path svg = w.dir / "plot.svg";
  const auto r = cli_test::run_untold("stream-sim " + cli_test::quoted(w.manifest) + " --path " +
                                      cli_test::quoted(camera) + " --svg " + cli_test::quoted(svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("show full  t0") != std::string::npos);
  CHECK(r.out.find("tiles passed 2 (1 at the start") != std::string::npos);
  CHECK(r.out.find("peak memory") != std::string::npos);
  const std::string plot = cli_test::read_text(svg);
  CHECK(plot.rfind("<svg", 0) == 0);
  CHECK(plot.find("<polyline") != std::string::npos);

  const path bad = w.dir / "bad.csv";
  std::ofstream(bad) << "t,x,y,z\n0,0,0,0\n1,nope,0,0\n";
  auto e = cli_test::run_untold("stream-sim " + cli_test::quoted(w.manifest) + " --path " + cli_test::quoted(bad));
  CHECK(e.exit_code == 2);
  CHECK(e.err.find("line 3") != std::string::npos);
  e = cli_test::run_untold("stream-sim " + cli_test::quoted(w.dir / "missing.json") + " --path " +
                           cli_test::quoted(camera));
  CHECK(e.exit_code == 3);
  e = cli_test::run_untold("stream-sim " + cli_test::quoted(w.manifest));
  CHECK(e.exit_code == 2);  // --path is required
}
