// untold/remote/remote.hpp - remote streaming, in one include (target untold::remote).
//
// Optional part of untold, header-only like the rest, that needs libcurl and
// nlohmann-json (CMake: UNTOLD_BUILD_REMOTE, target untold::remote; POSIX
// only). Design, cache layout and failure semantics: docs/remote.md.
//
//   namespace ur = untold::remote;
//   auto dl = ur::downloader::create({.cache_dir = cache_dir});           // disk cache + libcurl
//   auto scene = ur::load_manifest(**dl, "https://cdn/x/scene.json");     // revalidated (ETag)
//   auto where = ur::resolve_tile("https://cdn/x/scene.json", scene->tiles[0]);
//   auto file = (*dl)->fetch(where->tile);                                // whole file, cached
//   auto src = ur::https_range_source::open(**dl, where->tile);           // or by byte ranges
//   auto tile = untold::streamed_asset::open(*src);
//
// Headers, one concept each:
//   error.hpp         remote_errc (name/id/message), remote::error, remote::result<T>
//   url.hpp           https-only rule, relative path resolution without escapes
//   disk_cache.hpp    SHA-256 keyed files, ETag sidecars, atomic commits, LRU, flock
//   http.hpp          libcurl multi: concurrent transfers, HTTP/2, CA bundle
//   downloader.hpp    single-flight, retries/backoff, timeouts, 304, texture prefetch
//   range_source.hpp  untold::range_source over HTTP Range + If-Range
//   manifest.hpp      tile manifest JSON: parse, write (round trip), resolve
#pragma once

#include <string_view>

#include "disk_cache.hpp"
#include "downloader.hpp"
#include "error.hpp"
#include "http.hpp"
#include "manifest.hpp"
#include "range_source.hpp"
#include "url.hpp"

namespace untold::remote {

/// Loads a manifest from an https:// URL (through the cache, revalidated
/// with its ETag by default), a file:// URL or a local path. http:// is
/// refused before any network I/O.
[[nodiscard]] inline result<manifest> load_manifest(downloader& dl, std::string_view location,
                                                    fetch_policy policy = fetch_policy::revalidate,
                                                    const parse_options& options = {}) {
  auto path = dl.resolve(location, policy);
  if (!path) return path.error();
  return read_manifest_file(*path, options);
}

}  // namespace untold::remote
