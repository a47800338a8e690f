// tools/cli/manifest.cpp - `untold manifest validate|info MANIFEST` (docs/tiles.md, docs/cli.md).
//
// validate checks what the schema parse cannot: every tile, LOD, HLOD and
// shared-bucket file exists next to the manifest, its size is its
// file_size_bytes (tiles always; LOD/HLOD entries when they carry one), its
// bounds hold the world-space vertices of its files (each opened with the
// library and validated), the radii are ordered (streaming <= prefetch <=
// unload, defaults and per tile), tile ids are unique and no path escapes the
// manifest's directory. With --base-url every file is also checked by HEAD
// against that URL (status, Content-Length vs the declared size) through
// untold::remote's HTTP layer; the content checks then run on the local
// copies that exist.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/io.hpp>
#include <untold/remote/manifest.hpp>
#if defined(UNTOLD_CLI_REMOTE)
#include <untold/remote/http.hpp>
#endif
#include <untold/scene.hpp>
#include <untold/vertex_quant.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

namespace fs = std::filesystem;

struct manifest_args {
  std::string manifest;
  std::string base_url;  // validate: also HEAD every file at base_url + path
  std::string ca_file;   // PEM bundle to trust for base_url (empty: the system's)
  double timeout_s = 30;
};

struct problem {
  std::string where;  // "tiles[3] 't_0_1'", "streaming_defaults", ...
  std::string check;  // path | exists | size | open | bounds | radii | duplicate_id | http
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

/// One file a tile entry references.
struct file_ref {
  std::string field;  // path_relative_to_manifest, hlod_levels[0], lod_levels[1], ...
  std::string path;
  const json* declared_size = nullptr;  // a LOD/HLOD entry's "file_size_bytes", when it has one
};

/// Every file a tile references: the tile, then its HLODs and LODs (file order).
std::vector<file_ref> files_of(const remote::tile& t) {
  std::vector<file_ref> out{{"path_relative_to_manifest", t.path, nullptr}};
  const auto add = [&out](const std::string& name, const std::optional<std::vector<remote::lod_level>>& levels) {
    if (!levels) return;
    for (std::size_t i = 0; i < levels->size(); ++i) {
      const remote::lod_level& l = (*levels)[i];
      const auto size = l.extra.find("file_size_bytes");
      out.push_back({name + "[" + std::to_string(i) + "]", l.path, size == l.extra.end() ? nullptr : &*size});
    }
  };
  add("hlod_levels", t.hlod_levels);
  add("lod_levels", t.lod_levels);
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
    const std::uint32_t layout = a.header().vertex_layout, stride = vertex_stride_of(layout);
    if (stride == 0) continue;
    for (std::size_t v = 0; v < m->vertices.size() / stride; ++v) {
      const auto p = decode_stored_vertex(m->vertices, v, layout, m->record.local_bounds).position;
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
  std::size_t files = 0;        // local files checked
  std::size_t urls = 0;         // files checked by HEAD
  std::size_t not_local = 0;    // --base-url: files without a local copy (content not checked)
};

void check_radii(double streaming, double prefetch, double unload, const std::string& where, validation& v) {
  if (!(streaming <= prefetch && prefetch <= unload))
    v.problems.push_back({where, "radii",
                          "radii out of order: streaming " + std::to_string(streaming) + ", prefetch " +
                              std::to_string(prefetch) + ", unload " + std::to_string(unload) +
                              " (need streaming <= prefetch <= unload)"});
}

/// A file to check: where it is referenced, its cleaned relative path, the
/// size the manifest declares for it, the tile's bounds for the content check.
struct checked_file {
  std::string where;
  std::string path;   // as written in the manifest
  std::string clean;  // check_relative_path's result
  std::optional<std::uint64_t> size;
  const remote::tile* tile = nullptr;
  bool bounds_ordered = true;
};

/// The manifest-only checks (ids, radii, bounds order, paths, declared sizes)
/// and the files that remain to be checked on disk or by HEAD.
std::vector<checked_file> check_entries(const remote::manifest& m, validation& v) {
  std::vector<checked_file> files;
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
    for (const file_ref& f : files_of(t)) {
      const std::string where = lt.where + "." + f.field;
      const auto clean = remote::check_relative_path(f.path);
      if (!clean) {
        v.problems.push_back({where, "path", "\"" + f.path + "\" escapes the manifest's directory"});
        continue;
      }
      checked_file c{where, f.path, *clean, std::nullopt, &t, ordered};
      if (f.field == "path_relative_to_manifest") c.size = t.file_size_bytes;
      else if (f.declared_size != nullptr && f.declared_size->is_number_unsigned())
        c.size = f.declared_size->get<std::uint64_t>();
      else if (f.declared_size != nullptr)
        v.problems.push_back({where, "size", "file_size_bytes is " + f.declared_size->dump() +
                                                 ", not a non-negative integer"});
      files.push_back(std::move(c));
    }
  }
  return files;
}

/// Local checks of one file: existence (unless a base URL stands in for
/// it), size, a valid .untold, vertices inside the tile's bounds.
void check_local(const checked_file& f, const fs::path& dir, bool remote_checked, validation& v) {
  const fs::path file = dir / fs::path(f.clean);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    if (remote_checked) ++v.not_local;
    else v.problems.push_back({f.where, "exists", "\"" + f.path + "\" does not exist next to the manifest"});
    return;
  }
  ++v.files;
  if (f.size) {
    const std::uintmax_t size = fs::file_size(file, ec);
    if (!ec && size != *f.size)
      v.problems.push_back({f.where, "size", "the file has " + std::to_string(size) + " bytes, file_size_bytes says " +
                                               std::to_string(*f.size)});
  }
  auto a = open_file(file, {.integrity = integrity::strict});  // checking a tile set: every byte, as validate
  if (!a) {
    v.problems.push_back({f.where, "open", "\"" + f.path + "\" is not a valid .untold file: " + a.error().describe()});
    return;
  }
  if (!f.bounds_ordered) return;
  const remote::tile_bounds& b = f.tile->bounds;
  if (const auto outside = vertex_outside(a->asset, b))
    v.problems.push_back({f.where, "bounds", "a vertex of \"" + f.path + "\" at " + vec3_text(*outside) +
                                                 " lies outside the tile's bounds " + vec3_text(b.min) + " .. " +
                                                 vec3_text(b.max)});
}

#if defined(UNTOLD_CLI_REMOTE)
/// HEAD of every file at base_url + its path, at most `window` at a time on
/// one client (HTTP/2 multiplexed when the server offers it). One try per
/// file: a validator reports what the server answers now. 404/410 ->
/// exists; another status or a failed transfer -> http; a Content-Length
/// other than the declared size, or none -> size.
void check_remote(const std::vector<checked_file>& files, const std::string& base_dir, const manifest_args& args,
                  validation& v) {
  remote::client_options o;
  o.ca_file = args.ca_file;
  remote::http_client client(o);
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(args.timeout_s * 1000));
  constexpr std::size_t window = 32;
  struct pending {
    std::size_t file;
    std::string url;
    std::shared_ptr<remote::http_transfer> transfer;
  };
  std::vector<pending> running;
  const auto finish = [&](pending& p) {
    const checked_file& f = files[p.file];
    const remote::http_response& r = p.transfer->wait();
    ++v.urls;
    const std::string head = "HEAD " + p.url;
    if (!r.completed()) {
      v.problems.push_back({f.where, "http", head + ": " + (r.curl_error.empty() ? "failed" : r.curl_error)});
    } else if (r.status == 404 || r.status == 410) {
      v.problems.push_back({f.where, "exists", head + ": " + std::to_string(r.status) + ", not on the server"});
    } else if (r.status != 200) {
      v.problems.push_back({f.where, "http", head + ": status " + std::to_string(r.status)});
    } else if (f.size && !r.content_length) {
      v.problems.push_back({f.where, "size", head + ": no Content-Length to compare with file_size_bytes " +
                                                 std::to_string(*f.size)});
    } else if (f.size && *r.content_length != *f.size) {
      v.problems.push_back({f.where, "size", head + ": Content-Length " + std::to_string(*r.content_length) +
                                                 ", file_size_bytes says " + std::to_string(*f.size)});
    }
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto url = remote::resolve_relative(base_dir, files[i].clean);
    if (!url) {
      v.problems.push_back({files[i].where, "path", url.error().describe()});
      continue;
    }
    if (running.size() == window) {
      finish(running.front());
      running.erase(running.begin());
    }
    remote::http_request req{.url = *url};
    req.head_only = true;
    req.request_timeout = timeout;
    req.total_timeout = timeout;
    running.push_back({i, *url, client.start(std::move(req))});
  }
  for (pending& p : running) finish(p);
}
#endif

validation validate(const remote::manifest& m, const fs::path& dir, const manifest_args& args) {
  validation v;
  const std::vector<checked_file> files = check_entries(m, v);
  const bool remote_checked = !args.base_url.empty();
#if defined(UNTOLD_CLI_REMOTE)
  if (remote_checked) {
    // The base URL names the manifest's directory (with or without the final '/').
    const std::string base_dir = args.base_url.ends_with('/') ? args.base_url : args.base_url + "/";
    check_remote(files, base_dir, args, v);
  }
#endif
  for (const checked_file& f : files) check_local(f, dir, remote_checked, v);
  return v;
}

int run_manifest(const manifest_args& args, const common_flags& flags, bool info) {
  std::error_code ec;
  if (!args.base_url.empty()) {
    std::string refused;
#if defined(UNTOLD_CLI_REMOTE)
    if (const auto https = remote::require_https(args.base_url); !https) refused = https.error().describe();
#else
    refused = "this untold is built without untold::remote (libcurl): no HEAD checks";
#endif
    if (!refused.empty()) {
      complain("--base-url " + escaped(args.base_url) + ": " + refused);
      return exit_usage;
    }
  }
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
    complain(escaped(args.manifest) + ": " + m.error().describe());
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
                escaped(args.manifest).c_str(), static_cast<long long>(m->version),
                m->partitioning_mode ? (" (" + escaped(*m->partitioning_mode) + ")").c_str() : "", m->tiles.size(),
                m->shared_bucket ? " + shared bucket" : "", static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(lods), static_cast<unsigned long long>(hlods));
    std::printf("  bounds %s .. %s\n  radii: streaming %g, prefetch %g%s, unload %g\n", vec3_text(lo).c_str(),
                vec3_text(hi).c_str(), m->defaults.streaming_radius, prefetch,
                m->defaults.prefetch_radius ? "" : " (default: (streaming + unload) / 2)", m->defaults.unload_radius);
    if (flags.verbose)
      for (const located_tile& lt : all_tiles(*m))
        std::printf("  %-24s %10llu bytes  %zu LOD  %zu HLOD  %s\n", escaped(lt.tile->tile_id).c_str(),
                    static_cast<unsigned long long>(lt.tile->file_size_bytes),
                    lt.tile->lod_levels ? lt.tile->lod_levels->size() : 0,
                    lt.tile->hlod_levels ? lt.tile->hlod_levels->size() : 0, escaped(lt.tile->path).c_str());
    return exit_ok;
  }

  const validation v = validate(*m, dir, args);
  if (flags.json) {
    json problems = json::array();
    for (const problem& p : v.problems)
      problems.push_back(json{{"where", p.where}, {"check", p.check}, {"message", p.message}});
    print(to_text(json{{"manifest", args.manifest},
                       {"ok", v.problems.empty()},
                       {"tiles", m->tiles.size()},
                       {"shared_bucket", m->shared_bucket.has_value()},
                       {"files_checked", v.files},
                       {"base_url", args.base_url.empty() ? json(nullptr) : json(args.base_url)},
                       {"urls_checked", v.urls},
                       {"files_not_local", v.not_local},
                       {"problems", std::move(problems)}}));
  } else {
    // where and message quote tile ids and paths from the manifest: escaped.
    for (const problem& p : v.problems)
      complain(escaped(args.manifest) + ": " + escaped(p.where) + ": " + p.check + ": " + escaped(p.message));
    if (!flags.quiet && v.problems.empty()) {
      std::printf("%s: ok, %zu tiles%s, %zu files checked", escaped(args.manifest).c_str(), m->tiles.size(),
                  m->shared_bucket ? " + shared bucket" : "", v.files);
      if (!args.base_url.empty())
        std::printf(", %zu by HEAD at %s (%zu without a local copy: content not checked)", v.urls,
                    escaped(args.base_url).c_str(), v.not_local);
      std::printf("\n");
    }
  }
  // A HEAD that could not be answered (network, TLS, server error) says
  // nothing about the manifest: exit 3 like any I/O failure.
  const bool unreachable = std::any_of(v.problems.begin(), v.problems.end(), [](const problem& p) { return p.check == "http"; });
  return v.problems.empty() ? exit_ok : unreachable ? exit_io : exit_invalid;
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
             : "Check a tile manifest against its files: existence, sizes, bounds, radii order, paths "
               "(local files, and by HEAD with --base-url)");
    sub->add_option("MANIFEST", a->manifest, "manifest JSON file")->required();
    if (!info) {
      sub->add_option("--base-url", a->base_url,
                      "also check every file by HEAD at this https:// URL of the manifest's directory "
                      "(status, Content-Length = file_size_bytes)");
      sub->add_option("--ca-file", a->ca_file, "PEM bundle to trust for --base-url instead of the system's");
      sub->add_option("--timeout", a->timeout_s, "seconds per HEAD request (default 30)")->check(CLI::Range(0.1, 3600.0));
    }
    add_common_flags(*sub, ctx.flags, info ? "print the summary as JSON" : "print the result and every problem as JSON");
    sub->callback([a, &ctx, info] { ctx.exit_code = run_manifest(*a, ctx.flags, info); });
  }
}

}  // namespace untold::tools::cli
