// tools/cli_manifest.cpp - `untold manifest validate|info MANIFEST` (docs/tiles.md, docs/cli.md).
//
// validate checks what the schema parse cannot: every tile, LOD, HLOD and
// shared-bucket file exists next to the manifest, the tile's size is its
// file_size_bytes, its bounds hold the world-space vertices of its files
// (each opened with the library and validated), the radii are ordered
// (streaming <= prefetch <= unload, defaults and per tile), tile ids are
// unique and no path escapes the manifest's directory. Local files only: a
// HEAD against a base URL would link libcurl into the tooling library (the
// `fetch` command is where the remote side lives).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/io.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/scene.hpp>
#include <untold/vertex.hpp>

#include "cli_commands.hpp"

namespace untold::tools::cli {
namespace {

namespace fs = std::filesystem;

struct manifest_args {
  std::string manifest;
};

struct problem {
  std::string where;  // "tiles[3] 't_0_1'", "streaming_defaults", ...
  std::string check;  // path | exists | size | open | bounds | radii | duplicate_id
  std::string message;
};

/// A tile entry with where it sits in the manifest.
struct located_tile {
  const remote::tile* tile;
  std::string where;
};

std::vector<located_tile> all_tiles(const remote::manifest& m) {
  std::vector<located_tile> out;
  for (std::size_t i = 0; i < m.tiles.size(); ++i)
    out.push_back({&m.tiles[i], "tiles[" + std::to_string(i) + "] '" + m.tiles[i].tile_id + "'"});
  if (m.shared_bucket) out.push_back({&*m.shared_bucket, "shared_bucket '" + m.shared_bucket->tile_id + "'"});
  return out;
}

/// Every path a tile references: the tile, then its HLODs and LODs (file order).
std::vector<std::pair<std::string, std::string>> paths_of(const remote::tile& t) {
  std::vector<std::pair<std::string, std::string>> out{{"path_relative_to_manifest", t.path}};
  if (t.hlod_levels)
    for (std::size_t i = 0; i < t.hlod_levels->size(); ++i)
      out.emplace_back("hlod_levels[" + std::to_string(i) + "]", (*t.hlod_levels)[i].path);
  if (t.lod_levels)
    for (std::size_t i = 0; i < t.lod_levels->size(); ++i)
      out.emplace_back("lod_levels[" + std::to_string(i) + "]", (*t.lod_levels)[i].path);
  return out;
}

std::string vec3_text(const std::array<double, 3>& v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%g, %g, %g)", v[0], v[1], v[2]);
  return buf;
}

/// The first vertex of `a` (world space, through the entity hierarchy) outside
/// `b`, widened by a relative tolerance for float rounding; nullopt when all are inside.
std::optional<std::array<double, 3>> vertex_outside(const asset& a, const remote::tile_bounds& b) {
  double magnitude = 1;
  for (std::size_t c = 0; c < 3; ++c) magnitude = std::max({magnitude, std::fabs(b.min[c]), std::fabs(b.max[c])});
  const double tolerance = 1e-5 * magnitude;
  const scene_walk walk = walk_scene(a);
  for (std::uint32_t i = 0; i < a.meshes().size(); ++i) {
    const auto m = resolve_mesh(a, i);
    if (!m) continue;
    const mat4& w = m->entity_row && *m->entity_row < walk.world.size() ? walk.world[*m->entity_row] : identity_matrix;
    const auto view = pbr_vertex_view::from_bytes(m->vertices);
    if (!view) continue;
    for (std::size_t v = 0; v < view->size(); ++v) {
      const auto p = view->position(v);
      const std::array<double, 3> q{static_cast<double>(w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12]),
                                    static_cast<double>(w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13]),
                                    static_cast<double>(w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14])};
      for (std::size_t c = 0; c < 3; ++c)
        if (q[c] < b.min[c] - tolerance || q[c] > b.max[c] + tolerance) return q;
    }
  }
  return std::nullopt;
}

struct validation {
  std::vector<problem> problems;
  std::size_t files = 0;  // files checked
};

void check_radii(double streaming, double prefetch, double unload, const std::string& where, validation& v) {
  if (!(streaming <= prefetch && prefetch <= unload))
    v.problems.push_back({where, "radii",
                          "radii out of order: streaming " + std::to_string(streaming) + ", prefetch " +
                              std::to_string(prefetch) + ", unload " + std::to_string(unload) +
                              " (need streaming <= prefetch <= unload)"});
}

validation validate(const remote::manifest& m, const fs::path& dir) {
  validation v;
  const remote::streaming_defaults& d = m.defaults;
  check_radii(d.streaming_radius, d.prefetch_radius.value_or((d.streaming_radius + d.unload_radius) / 2), d.unload_radius,
              "streaming_defaults", v);
  std::set<std::string> ids;
  for (const located_tile& lt : all_tiles(m)) {
    const remote::tile& t = *lt.tile;
    if (!ids.insert(t.tile_id).second) v.problems.push_back({lt.where, "duplicate_id", "tile_id used twice"});
    if (t.streaming_radius || t.unload_radius || t.prefetch_radius)
      check_radii(t.streaming_radius.value_or(d.streaming_radius), remote::effective_prefetch_radius(t, d),
                  t.unload_radius.value_or(d.unload_radius), lt.where, v);
    bool ordered = true;
    for (std::size_t c = 0; c < 3; ++c) ordered = ordered && t.bounds.min[c] <= t.bounds.max[c];
    if (!ordered)
      v.problems.push_back({lt.where, "bounds", "bounds.min " + vec3_text(t.bounds.min) + " exceeds bounds.max " +
                                                    vec3_text(t.bounds.max)});
    for (const auto& [field, path] : paths_of(t)) {
      const std::string where = lt.where + "." + field;
      const auto clean = remote::check_relative_path(path);
      if (!clean) {
        v.problems.push_back({where, "path", "\"" + path + "\" escapes the manifest's directory"});
        continue;
      }
      const fs::path file = dir / fs::path(*clean);
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) {
        v.problems.push_back({where, "exists", "\"" + path + "\" does not exist next to the manifest"});
        continue;
      }
      ++v.files;
      if (field == "path_relative_to_manifest") {
        const std::uintmax_t size = fs::file_size(file, ec);
        if (!ec && size != t.file_size_bytes)
          v.problems.push_back({where, "size", "the file has " + std::to_string(size) + " bytes, file_size_bytes says " +
                                                   std::to_string(t.file_size_bytes)});
      }
      auto a = open_file(file);
      if (!a) {
        v.problems.push_back({where, "open", "\"" + path + "\" is not a valid .untold file: " + a.error().describe()});
        continue;
      }
      if (!ordered) continue;
      if (const auto outside = vertex_outside(a->asset, t.bounds))
        v.problems.push_back({where, "bounds", "a vertex of \"" + path + "\" at " + vec3_text(*outside) +
                                                   " lies outside the tile's bounds " + vec3_text(t.bounds.min) + " .. " +
                                                   vec3_text(t.bounds.max)});
    }
  }
  return v;
}

int run_manifest(const manifest_args& args, const common_flags& flags, bool info) {
  const std::string command = info ? "manifest info" : "manifest validate";
  std::error_code ec;
  if (!fs::is_regular_file(args.manifest, ec)) {
    const std::string message = "cannot read " + quote_path(args.manifest) + ": no such file";
    complain(message);
    if (flags.json) print(to_text(json{{"manifest", args.manifest}, {"ok", false}, {"error", message}}));
    return exit_io;
  }
  // Paths are checked here, one problem each, rather than failing the parse at the first.
  auto m = remote::read_manifest_file(args.manifest, {.check_paths = false});
  if (!m) {
    const bool io = m.error().code == remote::remote_errc::cache_io;
    complain(args.manifest + ": " + m.error().describe());
    if (flags.json) print(to_text(json{{"manifest", args.manifest}, {"ok", false}, {"error", m.error().describe()}}));
    return io ? exit_io : exit_invalid;
  }
  const fs::path dir = fs::path(args.manifest).parent_path();

  if (info) {
    std::uint64_t bytes = 0, lods = 0, hlods = 0;
    std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
    bool first = true;
    json tiles = json::array();
    for (const located_tile& lt : all_tiles(*m)) {
      const remote::tile& t = *lt.tile;
      bytes += t.file_size_bytes;
      lods += t.lod_levels ? t.lod_levels->size() : 0;
      hlods += t.hlod_levels ? t.hlod_levels->size() : 0;
      for (std::size_t c = 0; c < 3; ++c) {
        lo[c] = first ? t.bounds.min[c] : std::min(lo[c], t.bounds.min[c]);
        hi[c] = first ? t.bounds.max[c] : std::max(hi[c], t.bounds.max[c]);
      }
      first = false;
      tiles.push_back(json{{"tile_id", t.tile_id},
                           {"path", t.path},
                           {"file_size_bytes", t.file_size_bytes},
                           {"lod_levels", t.lod_levels ? t.lod_levels->size() : 0},
                           {"hlod_levels", t.hlod_levels ? t.hlod_levels->size() : 0},
                           {"shared", &t == (m->shared_bucket ? &*m->shared_bucket : nullptr)}});
    }
    const double prefetch =
        m->defaults.prefetch_radius.value_or((m->defaults.streaming_radius + m->defaults.unload_radius) / 2);
    if (flags.json) {
      print(to_text(json{{"manifest", args.manifest},
                         {"ok", true},
                         {"version", m->version},
                         {"partitioning_mode", m->partitioning_mode ? json(*m->partitioning_mode) : json(nullptr)},
                         {"tiles", m->tiles.size()},
                         {"shared_bucket", m->shared_bucket.has_value()},
                         {"tile_bytes", bytes},
                         {"lod_files", lods},
                         {"hlod_files", hlods},
                         {"bounds", json{{"min", lo}, {"max", hi}}},
                         {"streaming_radius", m->defaults.streaming_radius},
                         {"prefetch_radius", prefetch},
                         {"unload_radius", m->defaults.unload_radius},
                         {"entries", std::move(tiles)}}));
      return exit_ok;
    }
    std::printf("%s: manifest version %lld%s, %zu tiles%s, %llu bytes of tile files, %llu LOD files, %llu HLOD files\n",
                args.manifest.c_str(), static_cast<long long>(m->version),
                m->partitioning_mode ? (" (" + *m->partitioning_mode + ")").c_str() : "", m->tiles.size(),
                m->shared_bucket ? " + shared bucket" : "", static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(lods), static_cast<unsigned long long>(hlods));
    std::printf("  bounds %s .. %s\n  radii: streaming %g, prefetch %g%s, unload %g\n", vec3_text(lo).c_str(),
                vec3_text(hi).c_str(), m->defaults.streaming_radius, prefetch,
                m->defaults.prefetch_radius ? "" : " (default: (streaming + unload) / 2)", m->defaults.unload_radius);
    if (flags.verbose)
      for (const located_tile& lt : all_tiles(*m))
        std::printf("  %-24s %10llu bytes  %zu LOD  %zu HLOD  %s\n", lt.tile->tile_id.c_str(),
                    static_cast<unsigned long long>(lt.tile->file_size_bytes),
                    lt.tile->lod_levels ? lt.tile->lod_levels->size() : 0,
                    lt.tile->hlod_levels ? lt.tile->hlod_levels->size() : 0, lt.tile->path.c_str());
    return exit_ok;
  }

  const validation v = validate(*m, dir);
  if (flags.json) {
    json problems = json::array();
    for (const problem& p : v.problems)
      problems.push_back(json{{"where", p.where}, {"check", p.check}, {"message", p.message}});
    print(to_text(json{{"manifest", args.manifest},
                       {"ok", v.problems.empty()},
                       {"tiles", m->tiles.size()},
                       {"shared_bucket", m->shared_bucket.has_value()},
                       {"files_checked", v.files},
                       {"problems", std::move(problems)}}));
  } else {
    for (const problem& p : v.problems) complain(args.manifest + ": " + p.where + ": " + p.check + ": " + p.message);
    if (!flags.quiet && v.problems.empty())
      std::printf("%s: ok, %zu tiles%s, %zu files checked\n", args.manifest.c_str(), m->tiles.size(),
                  m->shared_bucket ? " + shared bucket" : "", v.files);
  }
  return v.problems.empty() ? exit_ok : exit_invalid;
}

}  // namespace

void add_manifest_command(CLI::App& app, context& ctx) {
  CLI::App* cmd = app.add_subcommand("manifest", "Check or summarise a tile manifest (docs/tiles.md)");
  cmd->require_subcommand(1, 1);
  for (const bool info : {false, true}) {
    auto a = std::make_shared<manifest_args>();
    CLI::App* sub = cmd->add_subcommand(
        info ? "info" : "validate",
        info ? "Summarise a tile manifest: version, tiles, bytes, bounds, radii"
             : "Check a tile manifest against its files: existence, sizes, bounds, radii order, paths (local files)");
    sub->add_option("MANIFEST", a->manifest, "manifest JSON file")->required();
    add_common_flags(*sub, ctx.flags, info ? "print the summary as JSON" : "print the result and every problem as JSON");
    sub->callback([a, &ctx, info] { ctx.exit_code = run_manifest(*a, ctx.flags, info); });
  }
}

}  // namespace untold::tools::cli
