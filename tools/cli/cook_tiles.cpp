// tools/cli/cook_tiles.cpp - `untold cook SCENE --tiles grid:SIZE|quadtree[:MAXTRIS] -o OUTDIR/`:
// the options of the partitioning cook and its report (pipeline/cook_tiles.hpp,
// docs/tiles.md). cook.cpp registers the options and dispatches here.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "compress_spec.hpp"
#include "cook_tiles.hpp"

namespace untold::tools::cli {

struct cook_tiles_args {
  std::string spec;
  std::vector<float> lod_ratios{};
  std::vector<double> lod_distances{};
  float lod_error = 0.01f;
  float hlod_ratio = 0.1f;
  bool no_hlod = false;
  std::optional<double> streaming_radius{}, unload_radius{}, prefetch_radius{};
  double priority = 0;
  std::string plan;  // --plan: write the distributed cook's plan, cook nothing
};

std::shared_ptr<cook_tiles_args> add_cook_tiles_options(CLI::App& cook) {
  auto a = std::make_shared<cook_tiles_args>();
  const std::string group = "Tiles (--tiles; docs/tiles.md)";
  cook.add_option("--tiles", a->spec,
                  "split into tile files + manifest: grid:SIZE (cell edge, scene units) or quadtree[:MAXTRIS]; "
                  "-o is then a directory")
      ->group(group);
  cook.add_option("--lod-ratios", a->lod_ratios, "per-tile LOD targets as fractions of LOD0 (default 0.5,0.25,0.125)")
      ->delimiter(',')
      ->check(CLI::Range(0.0f, 1.0f))
      ->group(group);
  cook.add_option("--lod-error", a->lod_error, "LOD1 error bound relative to a mesh's extent, doubled per level (default 0.01)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->group(group);
  cook.add_option("--lod-distances", a->lod_distances, "switch distances of LOD1, LOD2, ... (default: the streaming radius, then one tile edge apart)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  cook.add_option("--hlod-ratio", a->hlod_ratio, "HLOD target as a fraction of the tile's triangles (default 0.1)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->group(group);
  cook.add_flag("--no-hlod", a->no_hlod, "write no HLOD proxies")->group(group);
  cook.add_option("--streaming-radius", a->streaming_radius, "manifest default (default 2 x tile edge)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  cook.add_option("--prefetch-radius", a->prefetch_radius, "manifest default (default: left out, (streaming + unload) / 2)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  cook.add_option("--unload-radius", a->unload_radius, "manifest default (default 3 x tile edge)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  cook.add_option("--priority", a->priority, "manifest default priority (default 0)")->group(group);
  cook.add_option("--plan", a->plan,
                  "cut the scene into per-tile pieces (PLAN.d/pieces/), write the plan of independent jobs to "
                  "this JSON file and cook nothing; run them with `untold cook-tile PLAN --job N` (docs/distributed.md)")
      ->group(group);
  return a;
}

bool cook_tiles_requested(const cook_tiles_args& args) { return !args.spec.empty(); }

namespace {

std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

}  // namespace

int run_cook_tiles(const cook_tiles_args& args, const cook_tiles_io& io, const common_flags& flags,
                   const std::function<void(std::string_view, float)>& progress) {
  tile_cook_options o;
  std::string why;
  const auto fail = [&](int code, const std::string& message) {
    complain(message);
    if (flags.json) print(to_text(json{{"input", io.input}, {"output", io.output}, {"ok", false}, {"error", message}}));
    return code;
  };
  if (!parse_tiles_spec(args.spec, o, why)) return fail(exit_usage, why);
  if (!args.lod_ratios.empty()) o.lods.ratios = args.lod_ratios;
  o.lods.target_error = args.lod_error;
  o.lod_distances = args.lod_distances;
  o.hlod.ratio = args.hlod_ratio;
  o.write_hlods = !args.no_hlod;
  o.streaming_radius = args.streaming_radius;
  o.unload_radius = args.unload_radius;
  o.prefetch_radius = args.prefetch_radius;
  o.priority = args.priority;
  o.compression = uniform_policy(parse_compression(io.compress, why).value_or(chunk_compression{}));
  o.vertex_layout = io.vertex_layout;
  o.progress = progress;

  std::error_code ec;
  if (std::filesystem::exists(io.output, ec) && !std::filesystem::is_directory(io.output, ec))
    return fail(exit_io, "cannot write " + quote_path(io.output) + ": with --tiles, -o names a directory");
  if (!std::filesystem::exists(io.input, ec)) return fail(exit_io, "cannot read " + quote_path(io.input) + ": no such file");

  if (!args.plan.empty()) {
    auto planned = plan_tile_cook(io.input, io.output, args.plan, o);
    if (!planned) return fail(planned.io_failure ? exit_io : exit_invalid, planned.error);
    if (flags.json)
      print(to_text(json{{"input", io.input}, {"output", io.output}, {"ok", true}, {"plan", args.plan},
                         {"jobs", planned.plan.jobs.size()}}));
    else if (!flags.quiet)
      std::printf("planned %s -> %s: %zu jobs in %s (run each with: untold cook-tile %s --job N)\n",
                  escaped(io.input).c_str(), escaped(io.output).c_str(), planned.plan.jobs.size(),
                  escaped(args.plan).c_str(), escaped(args.plan).c_str());
    return exit_ok;
  }

  // A foreign format with an importer goes through it, anything else through assimp.
  if (progress) progress("import", 0);
  tile_source source = import_tile_source(io.input);
  if (progress) progress("import", 1);
  if (!source) return fail(source.io_failure ? exit_io : exit_invalid, source.error);
  const tile_cook_report r = cook_tiles(source.scene, io.output, o);
  if (!r) return fail(r.io_failure ? exit_io : exit_invalid, r.error);

  std::uint64_t tile_triangles = 0, hlod_triangles = 0, hlods = 0;
  std::vector<std::uint64_t> lod_triangles, per_tile;
  for (const tile_summary& t : r.tiles) {
    tile_triangles += t.triangles;
    per_tile.push_back(t.triangles);
    hlod_triangles += t.hlod_triangles;
    hlods += t.hlod_bytes > 0 ? 1 : 0;
    if (lod_triangles.size() < t.lod_triangles.size()) lod_triangles.resize(t.lod_triangles.size(), 0);
    // A tile with fewer levels is drawn at its coarsest from then on.
    for (std::size_t k = 0; k < lod_triangles.size(); ++k)
      lod_triangles[k] += t.lod_triangles.empty() ? t.triangles : t.lod_triangles[std::min(k, t.lod_triangles.size() - 1)];
  }
  std::sort(per_tile.begin(), per_tile.end());
  if (flags.json) {
    json tiles = json::array();
    for (const tile_summary& t : r.tiles) tiles.push_back(tile_summary_json(t));
    print(to_text(json{{"input", io.input},
                       {"output", io.output},
                       {"ok", true},
                       {"manifest", r.manifest.string()},
                       {"partition", args.spec},
                       {"source_triangles", r.source_triangles},
                       {"split_draws", r.split_draws},
                       {"tile_count", r.tiles.size()},
                       {"tile_triangles", tile_triangles},
                       {"lod_triangles", lod_triangles},
                       {"hlod_triangles", hlod_triangles},
                       {"files", r.written.size()},
                       {"bytes", r.total_bytes},
                       {"tiles", std::move(tiles)},
                       {"shared", r.shared ? tile_summary_json(*r.shared) : json(nullptr)},
                       {"dropped", r.report.count(convert::report_entry::kind::dropped)}}));
    return exit_ok;
  }
  if (flags.quiet) return exit_ok;
  std::printf("cooked %s -> %s (%s): %zu tiles%s, %zu files, %llu bytes, manifest %s\n", escaped(io.input).c_str(),
              escaped(io.output).c_str(), escaped(args.spec).c_str(), r.tiles.size(), r.shared ? " + shared bucket" : "",
              r.written.size(), static_cast<unsigned long long>(r.total_bytes), escaped(r.manifest.string()).c_str());
  std::printf("  source: %llu triangles, %llu draws cut by triangle\n",
              static_cast<unsigned long long>(r.source_triangles), static_cast<unsigned long long>(r.split_draws));
  if (!per_tile.empty())
    std::printf("  tiles: %llu triangles; per tile min %llu, median %llu, max %llu\n",
                static_cast<unsigned long long>(tile_triangles), static_cast<unsigned long long>(per_tile.front()),
                static_cast<unsigned long long>(per_tile[per_tile.size() / 2]),
                static_cast<unsigned long long>(per_tile.back()));
  for (std::size_t k = 0; k < lod_triangles.size(); ++k)
    std::printf("  LOD%zu: %llu triangles (%s of LOD0)\n", k + 1, static_cast<unsigned long long>(lod_triangles[k]),
                percent(lod_triangles[k], tile_triangles).c_str());
  std::printf("  HLOD: %llu triangles in %llu files (%s of LOD0)\n", static_cast<unsigned long long>(hlod_triangles),
              static_cast<unsigned long long>(hlods), percent(hlod_triangles, tile_triangles).c_str());
  if (r.shared)
    std::printf("  shared bucket: %llu triangles, %u draws, %llu bytes\n", static_cast<unsigned long long>(r.shared->triangles),
                r.shared->draws, static_cast<unsigned long long>(r.shared->bytes));
  if (flags.verbose) {
    std::printf("  %-20s %10s %12s %s\n", "tile", "bytes", "triangles", "LOD1.. / HLOD triangles");
    for (const tile_summary& t : r.tiles) {
      std::string levels;
      for (std::uint64_t n : t.lod_triangles) levels += std::to_string(n) + " ";
      std::printf("  %-20s %10llu %12llu %s/ %llu\n", escaped(t.id).c_str(), static_cast<unsigned long long>(t.bytes),
                  static_cast<unsigned long long>(t.triangles), levels.c_str(),
                  static_cast<unsigned long long>(t.hlod_triangles));
    }
  }
  for (const convert::report_entry& e : r.report.entries) {
    if (e.severity == convert::report_entry::kind::info && !flags.verbose) continue;
    std::printf("  %s %s x%llu%s%s: %s\n", std::string(convert::name(e.severity)).c_str(), escaped(e.what).c_str(),
                static_cast<unsigned long long>(e.count), e.where.empty() ? "" : " in ", escaped(e.where).c_str(),
                escaped(e.reason).c_str());
  }
  return exit_ok;
}

}  // namespace untold::tools::cli
