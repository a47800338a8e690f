// tools/cli/fetch.cpp - `untold fetch URL`: download a .untold (or any
// file) over HTTPS through the persistent disk cache, validate it, and print
// what it holds (size, chunks, meshes, ETag, cache hit/miss). Needs the
// untold::remote target (libcurl); see docs/remote.md.
//
//   untold fetch https://cdn.example.com/scene/tiles/t_0_0.untold
//   untold fetch URL --revalidate            # conditional GET (ETag), 304 keeps the entry
//   untold fetch URL --ranges                # open by HTTP Range requests instead, print bytes fetched
//   untold fetch URL --cache-dir DIR --ca-file ca.pem --json
//
// Exit codes: 0 fetched and valid, 1 the file failed validation, 2 usage (a
// refused URL such as http://), 3 network or cache failure. --json prints a
// JSON document on failure too ({"url", "ok": false, "error"}).

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <untold/io.hpp>
#include <untold/ranges.hpp>
#include <untold/remote/remote.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

namespace ur = untold::remote;

struct fetch_args {
  std::string url;
  std::string cache_dir;
  std::string ca_file;
  bool revalidate = false;
  bool reload = false;
  bool ranges = false;
  bool no_prefetch = false;
  bool as_json = false;
  bool quiet = false;
  bool verbose = false;
  double timeout_s = 30;
  std::uint32_t attempts = 3;
  std::uint64_t budget_mb = 500;
};

/// $UNTOLD_CACHE_DIR, else $XDG_CACHE_HOME/untold, else ~/.cache/untold, else ./untold-cache.
std::string default_cache_dir() {
  if (const char* d = std::getenv("UNTOLD_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return (std::filesystem::path(x) / "untold").string();
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return (std::filesystem::path(h) / ".cache" / "untold").string();
  return "untold-cache";
}

using ordered = nlohmann::ordered_json;

/// Exit code of a remote failure: the command line's URL refused before any
/// request (http://, another scheme, malformed) is a usage error; a file that
/// fails validation is invalid input; the rest is I/O: network, TLS, HTTP
/// status, cache, and a server's redirect to a refused URL (the same codes,
/// but after a request was made).
int exit_code_of(const ur::error& e) {
  switch (e.code) {
    case ur::remote_errc::insecure_scheme:
    case ur::remote_errc::unsupported_scheme:
    case ur::remote_errc::bad_url: return e.attempts == 0 ? exit_usage : exit_io;
    case ur::remote_errc::invalid_asset:
    case ur::remote_errc::bad_manifest: return exit_invalid;
    default: return exit_io;
  }
}

ordered remote_error_json(const ur::error& e) {
  ordered j{{"id", e.id()}, {"name", e.name()}, {"message", e.message()}};
  if (e.http_status != 0) j["httpStatus"] = e.http_status;
  if (e.curl_code != 0) j["curlCode"] = e.curl_code;
  if (e.attempts != 0) j["attempts"] = e.attempts;
  if (e.core.code != errc::ok) j["core"] = error_json(e.core);
  if (!e.detail.empty()) j["detail"] = e.detail;
  j["describe"] = e.describe();
  return j;
}

/// Reports a failure on stderr and, with --json, as the JSON document on
/// stdout ({"url", "ok": false, "error"}); returns the exit code.
int fail(const fetch_args& a, const std::string& message, ordered error, int code) {
  complain(message);
  if (a.as_json)
    std::printf("%s\n", ordered{{"url", a.url}, {"ok", false}, {"error", std::move(error)}}
                             .dump(2, ' ', false, ordered::error_handler_t::replace)
                             .c_str());
  return code;
}
int fail(const fetch_args& a, const ur::error& e) {
  return fail(a, e.describe(), remote_error_json(e), exit_code_of(e));
}
int fail(const fetch_args& a, const std::string& where, const untold::error& e) {
  return fail(a, escaped(where) + ": " + e.describe(), error_json(e), exit_invalid);
}

void print(const nlohmann::ordered_json& j, bool as_json) {
  if (as_json) {
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "ok") continue;
    const std::string value = escaped(it->is_string() ? it->get<std::string>() : it->dump());
    std::printf("%-9s %s\n", (it.key() + ":").c_str(), value.c_str());
  }
}

int run_fetch(const fetch_args& a) {
  ur::downloader_options o;
  o.cache_dir = a.cache_dir.empty() ? default_cache_dir() : a.cache_dir;
  o.cache_budget = a.budget_mb * 1024 * 1024;
  o.client.ca_file = a.ca_file;
  o.request_timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_s * 1000));
  o.retry.max_attempts = a.attempts;
  o.prefetch_textures = !a.no_prefetch && !a.ranges;
  if (!a.quiet)
    o.log = [](std::string_view line) { complain(escaped(line)); };
  if (a.verbose) complain("fetching " + escaped(a.url) + " (cache " + escaped(o.cache_dir.string()) + ")");
  auto dl = ur::downloader::create(o);
  if (!dl) return fail(a, dl.error());
  nlohmann::ordered_json out;
  out["url"] = a.url;
  out["ok"] = true;  // JSON only (print drops it from the text form)

  if (a.ranges) {
    auto src = ur::https_range_source::open(**dl, a.url);
    if (!src) return fail(a, src.error());
    auto tile = untold::streamed_asset::open(*src);
    if (!tile) {
      if (src->last_error().code != ur::remote_errc::ok) return fail(a, src->last_error());
      return fail(a, a.url, tile.error());
    }
    const untold::asset& m = tile->metadata();
    out["mode"] = "byte ranges (header, chunk table and metadata only)";
    out["size"] = src->size();
    out["etag"] = src->etag();
    out["chunks"] = m.chunks().size();
    out["meshes"] = m.meshes().size();
    out["entities"] = m.entities().size();
    out["textures"] = m.textures().size();
    out["requests"] = src->requests();
    out["fetched"] = src->bytes_fetched();
    out["cache"] = src->cache_hits() != 0 ? "hit (304)" : "miss";
    print(out, a.as_json);
    return 0;
  }

  const ur::fetch_policy policy =
      a.reload ? ur::fetch_policy::reload : a.revalidate ? ur::fetch_policy::revalidate : ur::fetch_policy::cache_first;
  auto r = (*dl)->fetch(a.url, policy);
  if (!r) return fail(a, r.error());
  out["file"] = r->path.string();
  out["size"] = r->size;
  out["etag"] = r->etag;
  out["cache"] = r->outcome == ur::fetch_outcome::hit            ? "hit"
                 : r->outcome == ur::fetch_outcome::not_modified ? "hit (revalidated, 304)"
                                                                 : "miss (downloaded)";
  if (ur::url_extension(a.url) == "untold") {
    auto opened = untold::open_file(r->path);  // a downloaded file was validated before caching; a hit is re-checked
    if (!opened) return fail(a, r->path.string(), opened.error());
    const untold::asset& m = opened->asset;
    out["valid"] = true;
    out["chunks"] = m.chunks().size();
    out["meshes"] = m.meshes().size();
    out["entities"] = m.entities().size();
    out["textures"] = m.textures().size();
  }
  (*dl)->wait_idle();
  const ur::downloader_stats s = (*dl)->stats();
  if (s.prefetch_ok + s.prefetch_failed != 0)
    out["prefetch"] = std::to_string(s.prefetch_ok) + " textures cached, " + std::to_string(s.prefetch_failed) + " failed";
  print(out, a.as_json);
  return 0;
}

}  // namespace

void add_fetch_command(CLI::App& app, context& ctx) {
  auto args = std::make_shared<fetch_args>();
  CLI::App* cmd = app.add_subcommand("fetch", "Download a file over HTTPS into the disk cache, validate it, describe it");
  cmd->add_option("URL", args->url, "https:// URL (http:// is refused)")->required();
  cmd->add_option("--cache-dir", args->cache_dir,
                  "cache directory (default: $UNTOLD_CACHE_DIR, $XDG_CACHE_HOME/untold or ~/.cache/untold)");
  cmd->add_option("--ca-file", args->ca_file, "trust only the CAs in this PEM bundle (default: the system store)");
  cmd->add_flag("--revalidate", args->revalidate, "conditional GET with the cached ETag (304 keeps the entry)");
  cmd->add_flag("--reload", args->reload, "ignore the cached entry");
  cmd->add_flag("--ranges", args->ranges, "open by HTTP Range requests (header, table, metadata) instead");
  cmd->add_flag("--no-prefetch", args->no_prefetch, "do not fetch the tile's textures");
  cmd->add_option("--timeout", args->timeout_s, "request timeout in seconds (connect, stalls)")->check(CLI::PositiveNumber);
  cmd->add_option("--attempts", args->attempts, "tries per request (backoff 1 s, 2 s, 4 s ...)")->check(CLI::Range(1, 10));
  cmd->add_option("--budget-mb", args->budget_mb, "cache budget in MiB (LRU eviction to 75%)")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->as_json, "print a JSON object (also on failure)");
  cmd->add_flag("-q,--quiet", args->quiet, "print only errors and the result (no download log)");
  cmd->add_flag("-v,--verbose", args->verbose, "also say on stderr what the tool does");
  cmd->callback([args, &ctx] { ctx.exit_code = run_fetch(*args); });
}

}  // namespace untold::tools::cli
