// untold/remote/stream_plan.hpp - a tile manifest as input of the streaming planner.
//
//   auto m = untold::remote::read_manifest_file("scene.json");
//   untold::remote::stream_world world = untold::remote::make_stream_world(*m);
//   untold::streaming::planner plan(world.tiles, {});
//   // action{tile, level} -> the file to fetch:
//   std::string_view rel = world.path(action.tile, action.level);   // relative to the manifest
//
// Planner tile k is manifest tile k; the shared bucket, when there is one, is
// the last planner tile, always resident. Radii: the tile's own, else the
// defaults'; prefetch as effective_prefetch_radius (manifest.hpp). Levels:
// 0 = the tile file, 1..L = lod_levels sorted by switch distance
// (lods_by_distance), L+1 = hlod_levels[0] (the engine uses the first).
// LOD/HLOD entries may carry an integer "file_size_bytes" (kept in
// lod_level::extra); without it the planner assumes the tile's size until
// the file's real size is known. Needs nlohmann-json, not libcurl.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../streaming.hpp"
#include "manifest.hpp"

namespace untold::remote {

struct stream_world {
  std::vector<streaming::tile_desc> tiles;
  /// paths[k][level]: the file of planner tile k, level `level`, relative to the manifest.
  std::vector<std::vector<std::string>> paths;
  /// tile_id of planner tile k.
  std::vector<std::string> ids;
  bool has_shared_bucket = false;

  /// The file of (tile, level), relative to the manifest; empty when out of range.
  [[nodiscard]] std::string_view path(std::uint32_t tile, std::uint16_t level) const noexcept {
    if (tile >= paths.size() || level >= paths[tile].size()) return {};
    return paths[tile][level];
  }
};

namespace detail {

[[nodiscard]] inline std::uint64_t declared_size(const lod_level& l) {
  const auto it = l.extra.find("file_size_bytes");
  if (it == l.extra.end() || !it->is_number_unsigned()) return 0;
  return it->get<std::uint64_t>();
}

inline void add_stream_tile(stream_world& w, const tile& t, const streaming_defaults& d, bool always) {
  streaming::tile_desc s;
  s.center = t.center;
  s.bounds_min = t.bounds.min;
  s.bounds_max = t.bounds.max;
  s.size_bytes = t.file_size_bytes;
  s.streaming_radius = t.streaming_radius.value_or(d.streaming_radius);
  s.unload_radius = t.unload_radius.value_or(d.unload_radius);
  s.prefetch_radius = effective_prefetch_radius(t, d);
  s.priority = t.priority.value_or(d.priority);
  s.always_resident = always;
  std::vector<std::string> paths{t.path};
  for (const lod_level& l : lods_by_distance(t)) {
    s.lods.push_back({l.switch_distance, declared_size(l)});
    paths.push_back(l.path);
  }
  if (t.hlod_levels && !t.hlod_levels->empty()) {
    const lod_level& h = t.hlod_levels->front();
    s.hlod = streaming::level_desc{h.switch_distance, declared_size(h)};
    paths.push_back(h.path);
  }
  w.tiles.push_back(std::move(s));
  w.paths.push_back(std::move(paths));
  w.ids.push_back(t.tile_id);
}

}  // namespace detail

/// The planner's view of a parsed manifest (see the top of this file). Any
/// manifest parse_manifest accepted is fine; the planner clamps odd radii.
[[nodiscard]] inline stream_world make_stream_world(const manifest& m) {
  stream_world w;
  w.tiles.reserve(m.tiles.size() + 1);
  for (const tile& t : m.tiles) detail::add_stream_tile(w, t, m.defaults, false);
  if (m.shared_bucket) {
    detail::add_stream_tile(w, *m.shared_bucket, m.defaults, true);
    w.has_shared_bucket = true;
  }
  return w;
}

}  // namespace untold::remote
