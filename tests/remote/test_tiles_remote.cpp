// A world cooked by the partitioning cook (tools/pipeline/cook_tiles, what `untold
// cook --tiles` runs) served by the nginx test server (harness.hpp):
// - `untold manifest validate --base-url` checks every file by HEAD (status,
//   Content-Length vs file_size_bytes): the cooked world passes, a missing
//   file and wrong tile and LOD sizes are each reported;
// - stream_runner drives a camera path over it: every tile it passes is
//   shown, only by Range requests, and the cache holds the prefix of every
//   level the planner kept.
// Built only with the tool (it links untold_pipeline and runs `untold`).
#include "harness.hpp"

#include <untold/remote/stream_runner.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cook_tiles.hpp"

namespace ur = untold::remote;
namespace us = untold::streaming;
namespace uc = untold::convert;
using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

namespace {

/// Four wavy terrain patches (four meshes), one per 100 m cell along x (each 60 x 60 m,
/// 7200 triangles: files well over the 64 KiB prefix, LODs that reduce), and
/// a small tree instanced on every patch (instanced across tiles: the shared
/// bucket).
uc::scene four_patches() {
  uc::scene s;
  s.materials.push_back({.name = "ground", .base_color = {0.4f, 0.6f, 0.3f, 1}});
  uc::mesh ground;
  ground.name = "ground";
  ground.material = 0;
  const int n = 60;
  for (int z = 0; z <= n; ++z)
    for (int x = 0; x <= n; ++x)
      ground.positions.insert(ground.positions.end(),
                              {static_cast<float>(x), 2.0f * std::sin(0.3f * static_cast<float>(x)) *
                                                          std::cos(0.2f * static_cast<float>(z)),
                               static_cast<float>(z)});
  for (int z = 0; z < n; ++z)
    for (int x = 0; x < n; ++x) {
      const auto q = static_cast<std::uint32_t>(z * (n + 1) + x);
      ground.indices.insert(ground.indices.end(), {q, q + n + 1, q + 1, q + 1, q + n + 1, q + n + 2});
    }
  for (int i = 0; i < 4; ++i) {  // one mesh per patch: a mesh drawn in several tiles would go to the shared bucket
    uc::mesh copy = ground;
    copy.name = "ground" + std::to_string(i);
    s.meshes.push_back(std::move(copy));
  }
  uc::mesh tree;
  tree.name = "tree";
  tree.material = 0;
  tree.positions = {0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 1};
  tree.indices = {0, 1, 2, 0, 2, 3, 1, 3, 2};
  s.meshes.push_back(std::move(tree));
  for (int i = 0; i < 4; ++i) {
    const float x0 = 100.0f * static_cast<float>(i) + 20.0f;
    s.nodes.push_back({.name = "patch" + std::to_string(i),
                       .local = {.translation = {x0, 0, 20}},
                       .meshes = {static_cast<std::uint32_t>(i)}});
    s.nodes.push_back({.name = "tree" + std::to_string(i), .local = {.translation = {x0 + 30, 0, 30}}, .meshes = {4}});
  }
  return s;
}

/// Cooks the patches into `dir` (grid:100, streaming 60 m, unload 90 m) and returns the manifest.
ur::manifest cook_world(const rt::fs::path& dir) {
  untold::tools::tile_cook_options o;
  o.cell_size = 100;
  o.streaming_radius = 60;
  o.unload_radius = 90;
  const auto r = untold::tools::cook_tiles(four_patches(), dir, o);
  REQUIRE_MESSAGE(r, r.error);
  REQUIRE(r.tiles.size() == 4);
  REQUIRE(r.shared.has_value());
  auto m = ur::read_manifest_file(r.manifest);
  REQUIRE_MESSAGE(m.has_value(), m.error().describe());
  return std::move(*m);
}

/// Every file the manifest references (tiles, LODs, HLODs, shared bucket).
std::vector<std::string> referenced_files(const ur::manifest& m) {
  std::vector<std::string> out;
  const auto add = [&out](const ur::tile& t) {
    out.push_back(t.path);
    for (const auto* levels : {&t.hlod_levels, &t.lod_levels})
      if (*levels)
        for (const ur::lod_level& l : **levels) out.push_back(l.path);
  };
  for (const ur::tile& t : m.tiles) add(t);
  if (m.shared_bucket) add(*m.shared_bucket);
  return out;
}

struct cli_run {
  int exit_code = -1;
  std::string output;
};

/// `untold manifest validate --json --base-url BASE --ca-file CA MANIFEST`.
cli_run validate_remote(const rt::fs::path& manifest, const std::string& base, const rt::nginx_server& server,
                        const rt::fs::path& out) {
  cli_run r;
  r.exit_code = rt::run({UNTOLD_CLI_BINARY, "manifest", "validate", "--json", "--base-url", base, "--ca-file",
                         server.tls().ca_cert.string(), "--timeout", "10", manifest.string()},
                        out);
  r.output = rt::read_text(out);
  return r;
}

std::vector<std::string> checks_of(const json& j) {
  std::vector<std::string> out;
  for (const auto& p : j["problems"]) out.push_back(p["check"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("manifest validate --base-url: every cooked file by HEAD, a missing file and wrong sizes are reported") {
  rt::temp_dir dir;
  rt::nginx_server server{dir / "nginx"};
  const ur::manifest m = cook_world(server.www() / "world");
  const std::vector<std::string> files = referenced_files(m);
  // Tiles with LOD files and HLODs, each declaring its size.
  REQUIRE(m.tiles[0].lod_levels.has_value());
  REQUIRE(m.tiles[0].hlod_levels.has_value());
  REQUIRE(m.tiles[0].lod_levels->front().extra.contains("file_size_bytes"));
  REQUIRE(m.tiles[0].hlod_levels->front().extra.contains("file_size_bytes"));

  // The cooked world as served: every file answers 200 with its declared size.
  const auto ok = validate_remote(server.www() / "world" / "manifest.json", server.url("world/"), server, dir / "ok.txt");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.output);
  const json good = json::parse(ok.output);
  CHECK(good["ok"] == true);
  CHECK(good["urls_checked"] == files.size());
  CHECK(good["files_checked"] == files.size());  // the local copies next to the manifest too
  CHECK(good["files_not_local"] == 0);
  for (const std::string& f : files) {
    const auto log = server.log_for("world/" + f);
    REQUIRE(log.size() == 1);
    CHECK(log[0].method == "HEAD");
    CHECK(log[0].status == 200);
    CHECK(log[0].bytes == 0);
  }

  // A manifest elsewhere (no local copies: HEAD only) with a missing file, a
  // tile size and a LOD size that disagree with the server.
  json bad = json::parse(ur::write_manifest(m));
  bad["tiles"][0]["path_relative_to_manifest"] = "tiles/missing.untold";
  bad["tiles"][1]["file_size_bytes"] = bad["tiles"][1]["file_size_bytes"].get<std::uint64_t>() + 1;
  bad["tiles"][2]["lod_levels"][0]["file_size_bytes"] =
      bad["tiles"][2]["lod_levels"][0]["file_size_bytes"].get<std::uint64_t>() + 5;
  rt::write_text(dir / "elsewhere" / "manifest.json", bad.dump(2));
  const auto r = validate_remote(dir / "elsewhere" / "manifest.json", server.url("world"), server, dir / "bad.txt");
  CHECK_MESSAGE(r.exit_code == 1, r.output);
  const json j = json::parse(r.output);
  CHECK(j["ok"] == false);
  CHECK(j["urls_checked"] == files.size());
  CHECK(j["files_checked"] == 0);
  CHECK(j["files_not_local"] == files.size());
  REQUIRE(checks_of(j) == std::vector<std::string>{"exists", "size", "size"});
  CHECK(j["problems"][0]["where"].get<std::string>().find("tiles[0]") != std::string::npos);
  CHECK(j["problems"][0]["message"].get<std::string>().find("404") != std::string::npos);
  CHECK(j["problems"][1]["where"].get<std::string>().find("tiles[1]") != std::string::npos);
  CHECK(j["problems"][2]["where"].get<std::string>().find("tiles[2]") != std::string::npos);
  CHECK(j["problems"][2]["where"].get<std::string>().find("lod_levels[0]") != std::string::npos);
  CHECK(j["problems"][2]["message"].get<std::string>().find("Content-Length") != std::string::npos);

  // Nobody listening: every HEAD fails; that is an I/O failure (exit 3), not an invalid manifest.
  const auto down = validate_remote(server.www() / "world" / "manifest.json",
                                    "https://127.0.0.1:" + std::to_string(rt::free_port()) + "/world/", server,
                                    dir / "down.txt");
  CHECK_MESSAGE(down.exit_code == 3, down.output);
  const json d = json::parse(down.output);
  CHECK(checks_of(d) == std::vector<std::string>(files.size(), "http"));
}

TEST_CASE("stream runner over a cooked world: a camera path shows every tile, by Range requests, cache = what was kept") {
  rt::temp_dir dir;
  rt::nginx_server server{dir / "nginx"};
  const ur::manifest m = cook_world(server.www() / "world");
  auto dl = rt::make_downloader(rt::options_for(dir / "cache", server.tls()));
  std::set<std::uint32_t> shown_full;
  ur::stream_runner_options o;
  o.max_transfers = 2;
  o.on_action = [&](const us::action& a) {
    if (a.kind == us::action_kind::show && a.level == 0) shown_full.insert(a.tile);
  };
  ur::stream_runner run(*dl, server.url("world/manifest.json"), ur::make_stream_world(m), o);
  REQUIRE(run.planner().tile_count() == 5);  // four tiles + the shared bucket
  const std::uint32_t shared = 4;

  // The camera drives along the row of tile centres (z ~ 50), 10 m and one
  // planner second a step, waiting at each step until the runner is idle.
  for (double x = 0; x <= 400; x += 10) {
    const us::vec3 camera{x, 0, 50};
    const double now = x / 10;
    run.tick(camera, now);
    REQUIRE(rt::eventually(
        [&] {
          run.tick(camera, now);
          return run.busy() == 0 && run.planner().in_flight() == 0;
        },
        20s));
    CHECK(run.planner().shown(shared) == 0);  // always resident
    for (std::uint32_t t = 0; t < 4; ++t)
      if (run.planner().distance(t) < 40) {
        CHECK(run.planner().shown(t) == 0);
        const ur::stream_level* l = run.level(t, 0);
        REQUIRE(l != nullptr);
        CHECK(!l->meshes.empty());
      }
  }
  CHECK(shown_full == std::set<std::uint32_t>{0, 1, 2, 3, shared});
  CHECK(run.stats().failures == 0);

  // Only Range requests, never a whole-file GET: 206, or 304 when a level
  // fetched again revalidates its cached prefix (If-None-Match).
  std::size_t gets = 0;
  for (const rt::log_entry& e : server.log()) {
    if (e.uri.rfind("/world/", 0) != 0) continue;
    ++gets;
    CHECK(e.method == "GET");
    CHECK(!e.range.empty());
    CHECK((e.status == 206 || (e.status == 304 && !e.if_none_match.empty())));
  }
  CHECK(gets == run.stats().requests);
  // The cache holds the prefix of every level the planner kept.
  const ur::stream_world world = ur::make_stream_world(m);
  std::size_t kept = 0;
  for (std::uint32_t t = 0; t < run.planner().tile_count(); ++t)
    for (std::uint16_t level = 0; level < run.planner().level_count(t); ++level) {
      if (run.planner().state(t, level) != us::level_state::parsed) continue;
      ++kept;
      CHECK(run.level(t, level) != nullptr);
      const std::string url = server.url("world/" + std::string(world.path(t, level)));
      CHECK_MESSAGE(dl->cache().lookup(url + "\n#prefix:65536").has_value(), url);
    }
  CHECK(kept >= 2);  // at least the shared bucket and the last tile under the camera
  // Tiles behind the camera were unloaded (beyond 90 m, after the grace period).
  CHECK(run.planner().state(0, 0) == us::level_state::unloaded);
}
