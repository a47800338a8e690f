// `untold manifest validate|info` (tools/cli/manifest.cpp): a cooked scene's
// manifest passes; one crafted manifest per check fails with that check.
#include "cli_support.hpp"

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cook_tiles.hpp"

namespace {

using cli_test::quoted;
using cli_test::run_untold;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

/// A small cooked grid (a few tiles with LODs and HLODs) in `dir`; returns its manifest JSON.
json cooked(const fs::path& dir) {
  untold::convert::scene s;
  s.materials.push_back({.name = "m", .base_color = {0.5f, 0.5f, 0.5f, 1}});
  for (int i = 0; i < 4; ++i) {
    untold::convert::mesh m;
    m.name = "grid" + std::to_string(i);
    m.material = 0;
    const int n = 12;
    for (int z = 0; z <= n; ++z)
      for (int x = 0; x <= n; ++x)
        m.positions.insert(m.positions.end(), {static_cast<float>(x), 0.3f * static_cast<float>((x * z) % 3), static_cast<float>(z)});
    for (int z = 0; z < n; ++z)
      for (int x = 0; x < n; ++x) {
        const auto q = static_cast<std::uint32_t>(z * (n + 1) + x);
        m.indices.insert(m.indices.end(), {q, q + n + 1, q + 1, q + 1, q + n + 1, q + n + 2});
      }
    s.meshes.push_back(std::move(m));
    s.nodes.push_back({.name = "n" + std::to_string(i),
                       .local = {.translation = {static_cast<float>(20 * (i % 2)), 0, static_cast<float>(20 * (i / 2))}},
                       .meshes = {static_cast<std::uint32_t>(i)}});
  }
  untold::tools::tile_cook_options o;
  o.cell_size = 20;
  const auto r = untold::tools::cook_tiles(s, dir, o);
  REQUIRE_MESSAGE(r, r.error);
  REQUIRE(r.tiles.size() == 4);
  return json::parse(cli_test::read_text(r.manifest));
}

fs::path write_json(const fs::path& p, const json& j) {
  std::ofstream(p) << j.dump(2);
  return p;
}

/// Runs validate --json on `j` (written next to the tiles) and returns the problems' check names.
std::vector<std::string> problems(const fs::path& dir, const std::string& name, const json& j, int expected_exit = 1) {
  const auto r = run_untold("manifest validate --json " + quoted(write_json(dir / name, j)));
  CHECK_MESSAGE(r.exit_code == expected_exit, r.out << r.err);
  const auto out = json::parse(r.out);
  std::vector<std::string> checks;
  for (const auto& p : out["problems"]) checks.push_back(p["check"].get<std::string>());
  CHECK(out["ok"] == checks.empty());
  return checks;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("manifest validate: a cooked manifest passes, text and JSON") {
  const fs::path dir = cli_test::scratch("manifest_ok");
  const json m = cooked(dir);
  CHECK(problems(dir, "same.json", m, 0).empty());
  const auto r = run_untold("manifest validate " + quoted(dir / "manifest.json"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ok, 4 tiles") != std::string::npos);
  const auto j = json::parse(run_untold("manifest validate --json " + quoted(dir / "manifest.json")).out);
  // 4 tiles, each with its file, LODs and HLOD.
  CHECK(j["files_checked"].get<std::size_t>() > 8);
}

TEST_CASE("manifest validate: one crafted manifest per check") {
  const fs::path dir = cli_test::scratch("manifest_bad");
  const json good = cooked(dir);

  json missing = good;
  missing["tiles"][1]["path_relative_to_manifest"] = "tiles/nope.untold";
  CHECK(problems(dir, "missing.json", missing) == std::vector<std::string>{"exists"});

  json missing_lod = good;
  missing_lod["tiles"][0]["lod_levels"][0]["path"] = "tiles/nope.lod1.untold";
  CHECK(problems(dir, "missing_lod.json", missing_lod) == std::vector<std::string>{"exists"});

  json size = good;
  size["tiles"][2]["file_size_bytes"] = size["tiles"][2]["file_size_bytes"].get<std::uint64_t>() + 1;
  CHECK(problems(dir, "size.json", size) == std::vector<std::string>{"size"});

  // LOD and HLOD entries declare their sizes too (cook writes them); each is checked.
  REQUIRE(good["tiles"][0]["lod_levels"][0].contains("file_size_bytes"));
  REQUIRE(good["tiles"][0]["hlod_levels"][0].contains("file_size_bytes"));
  json lod_size = good;
  lod_size["tiles"][0]["lod_levels"][0]["file_size_bytes"] = 7;
  CHECK(problems(dir, "lod_size.json", lod_size) == std::vector<std::string>{"size"});
  json hlod_size = good;
  hlod_size["tiles"][3]["hlod_levels"][0]["file_size_bytes"] =
      hlod_size["tiles"][3]["hlod_levels"][0]["file_size_bytes"].get<std::uint64_t>() - 1;
  CHECK(problems(dir, "hlod_size.json", hlod_size) == std::vector<std::string>{"size"});
  json lod_size_type = good;
  lod_size_type["tiles"][1]["lod_levels"][0]["file_size_bytes"] = "12 KiB";
  CHECK(problems(dir, "lod_size_type.json", lod_size_type) == std::vector<std::string>{"size"});
  // Without the field a LOD entry is not size-checked (the spec does not require it).
  json lod_no_size = good;
  lod_no_size["tiles"][1]["lod_levels"][0].erase("file_size_bytes");
  CHECK(problems(dir, "lod_no_size.json", lod_no_size, 0).empty());

  json bounds = good;
  bounds["tiles"][0]["bounds"]["max"][0] = bounds["tiles"][0]["bounds"]["max"][0].get<double>() - 1;
  CHECK(has(problems(dir, "bounds.json", bounds), "bounds"));

  json inverted = good;
  inverted["tiles"][0]["bounds"]["min"][1] = 1000;
  CHECK(has(problems(dir, "inverted.json", inverted), "bounds"));

  json radii = good;
  radii["streaming_defaults"]["streaming_radius"] = 500;
  radii["streaming_defaults"]["unload_radius"] = 100;
  CHECK(problems(dir, "radii.json", radii) == std::vector<std::string>{"radii"});

  json prefetch = good;
  prefetch["tiles"][3]["prefetch_radius"] = 1e6;
  CHECK(problems(dir, "prefetch.json", prefetch) == std::vector<std::string>{"radii"});

  json escape = good;
  escape["tiles"][0]["path_relative_to_manifest"] = "../outside.untold";
  escape["tiles"][1]["hlod_levels"][0]["path"] = "/etc/passwd";
  escape["tiles"][2]["lod_levels"][0]["path"] = "https://elsewhere.example/x.untold";
  CHECK(problems(dir, "escape.json", escape) == std::vector<std::string>{"path", "path", "path"});

  json duplicate = good;
  duplicate["tiles"][1]["tile_id"] = duplicate["tiles"][0]["tile_id"];
  CHECK(problems(dir, "duplicate.json", duplicate) == std::vector<std::string>{"duplicate_id"});

  std::ofstream(dir / "tiles" / "garbage.untold") << "not an untold file";
  json garbage = good;
  garbage["tiles"][0]["hlod_levels"][0]["path"] = "tiles/garbage.untold";
  garbage["tiles"][0]["hlod_levels"][0].erase("file_size_bytes");  // only the open check
  CHECK(problems(dir, "garbage.json", garbage) == std::vector<std::string>{"open"});
}

TEST_CASE("manifest validate/info: exit codes for unreadable, malformed and missing arguments") {
  const fs::path dir = cli_test::scratch("manifest_exit");
  CHECK(run_untold("manifest validate " + quoted(dir / "none.json")).exit_code == 3);
  std::ofstream(dir / "broken.json") << "{ not json";
  CHECK(run_untold("manifest validate " + quoted(dir / "broken.json")).exit_code == 1);
  std::ofstream(dir / "schema.json") << R"({"version": 3, "tiles": []})";  // no streaming_defaults
  CHECK(run_untold("manifest info " + quoted(dir / "schema.json")).exit_code == 1);
  CHECK(run_untold("manifest validate").exit_code == 2);
  // --base-url must be https:// (refused before any I/O, like every remote URL).
  const auto plain = run_untold("manifest validate --base-url http://127.0.0.1:1/x " + quoted(dir / "schema.json"));
  CHECK(plain.exit_code == 2);
  CHECK(plain.err.find("--base-url") != std::string::npos);
  CHECK(run_untold("manifest validate --timeout 0 --base-url https://127.0.0.1:1/ " + quoted(dir / "schema.json")).exit_code == 2);
  CHECK(run_untold("manifest").exit_code == 2);
}

TEST_CASE("manifest info: a summary of a cooked manifest") {
  const fs::path dir = cli_test::scratch("manifest_info");
  const json m = cooked(dir);
  const auto r = run_untold("manifest info --json " + quoted(dir / "manifest.json"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = json::parse(r.out);
  CHECK(j["version"] == 3);
  CHECK(j["tiles"] == 4);
  std::uint64_t bytes = 0;
  for (const auto& t : m["tiles"]) bytes += t["file_size_bytes"].get<std::uint64_t>();
  CHECK(j["tile_bytes"] == bytes);
  CHECK(j["streaming_radius"] == 40);
  CHECK(j["prefetch_radius"] == 50);  // (40 + 60) / 2
  CHECK(j["unload_radius"] == 60);
  const auto text = run_untold("manifest info " + quoted(dir / "manifest.json"));
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("manifest version 3, 4 tiles") != std::string::npos);
}
