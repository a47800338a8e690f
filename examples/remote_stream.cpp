// Streams a .untold tile over HTTPS by byte ranges: one Range request for the
// header, chunk table and metadata, then one per mesh part - the geometry of
// meshes that are not asked for is never downloaded. With a manifest URL
// (.json), streams the manifest's first tile.
//
//   untold_example_remote_stream URL [--ca-file ca.pem] [--cache-dir DIR] [--meshes N]
//
// Needs untold::remote (libcurl); see docs/remote.md.
#include <untold/ranges.hpp>
#include <untold/remote/remote.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace ur = untold::remote;

int main(int argc, char** argv) {
  std::string url, ca_file, cache_dir = (std::filesystem::temp_directory_path() / "untold-example-cache").string();
  std::uint32_t max_meshes = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ca-file" && i + 1 < argc) ca_file = argv[++i];
    else if (a == "--cache-dir" && i + 1 < argc) cache_dir = argv[++i];
    else if (a == "--meshes" && i + 1 < argc) max_meshes = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else url = a;
  }
  if (url.empty()) {
    std::fprintf(stderr, "usage: %s URL [--ca-file ca.pem] [--cache-dir DIR] [--meshes N]\n", argv[0]);
    return 2;
  }

  // One downloader per process: the disk cache, libcurl's connection pool, retries.
  ur::downloader_options options;
  options.cache_dir = cache_dir;
  options.client.ca_file = ca_file;
  auto dl = ur::downloader::create(options);
  if (!dl) {
    std::fprintf(stderr, "%s\n", dl.error().describe().c_str());
    return 1;
  }

  // A manifest: resolve its first tile's URL relative to it (escapes rejected).
  if (ur::url_extension(url) == "json") {
    auto scene = ur::load_manifest(**dl, url);
    if (!scene || scene->tiles.empty()) {
      std::fprintf(stderr, "%s\n", scene ? "the manifest lists no tiles" : scene.error().describe().c_str());
      return 1;
    }
    auto where = ur::resolve_tile(url, scene->tiles.front());
    if (!where) {
      std::fprintf(stderr, "%s\n", where.error().describe().c_str());
      return 1;
    }
    std::printf("manifest v%lld: %zu tiles; streaming %s\n", static_cast<long long>(scene->version),
                scene->tiles.size(), where->tile.c_str());
    url = where->tile;
  }

  // One Range request: header, chunk table and metadata prefix.
  auto source = ur::https_range_source::open(**dl, url);
  if (!source) {
    std::fprintf(stderr, "%s\n", source.error().describe().c_str());
    return 1;
  }
  auto tile = untold::streamed_asset::open(*source);
  if (!tile) {
    std::fprintf(stderr, "%s\n", tile.error().describe().c_str());
    return 1;
  }
  const untold::asset& meta = tile->metadata();
  std::printf("%s: %llu bytes, etag %s, %zu chunks, %zu meshes, %zu materials, %zu textures\n", url.c_str(),
              static_cast<unsigned long long>(source->size()), source->etag().c_str(), meta.chunks().size(),
              meta.meshes().size(), meta.materials().size(), meta.textures().size());

  // Then only the meshes we want, each validated as it arrives. If the file
  // changes on the server meanwhile, a load fails rather than mixing versions.
  for (std::uint32_t i = 0; i < meta.meshes().size() && i < max_meshes; ++i) {
    auto mesh = tile->load_mesh(i);
    if (!mesh) {
      std::fprintf(stderr, "mesh %u: %s\n", i, source->last_error().describe().c_str());
      return 1;
    }
    std::printf("  mesh %u \"%.*s\": %zu vertex bytes, %zu index bytes\n", i,
                static_cast<int>(meta.string(meta.meshes()[i].mesh_name_offset).size()),
                meta.string(meta.meshes()[i].mesh_name_offset).data(), mesh->vertices.size(), mesh->indices.size());
  }
  std::printf("%llu requests, %llu bytes over the network (%.1f%% of the file), %llu from the disk cache\n",
              static_cast<unsigned long long>(source->requests()),
              static_cast<unsigned long long>(source->bytes_fetched()),
              100.0 * static_cast<double>(source->bytes_fetched()) / static_cast<double>(source->size()),
              static_cast<unsigned long long>(source->cache_hits()));
  return 0;
}
