// untold/remote/manifest.hpp - the tile manifest (JSON): read, write, resolve.
//
//   auto m = untold::remote::parse_manifest(json_text);
//   if (!m) return fail(m.error().describe());       // E-REMOTE-MANIFEST: tiles[2].bounds.min ...
//   for (const auto& t : m->tiles) {
//     auto where = untold::remote::resolve_tile("https://cdn/x/scene.json", t);
//     // where->tile == "https://cdn/x/tiles/t_0_0.untold", where->hlods, where->lods
//   }
//   std::string text = untold::remote::write_manifest(*m);   // unknown fields kept
//
// Schema: docs/spec/tile-manifest.md (docs/remote.md). Required
// fields are checked for presence and type; unknown fields - at the top
// level, in streaming_defaults, tiles, bounds, tile_size and LOD entries -
// are kept in `extra` (in file order) and written back after the known ones.
// interior_zone, floor_id and quadtree_node_id are kept opaque. Numbers are
// held as double and written as integers when integral, so a round trip is
// equal as JSON (not byte for byte).
//
// Every tile, HLOD and LOD path must stay inside the manifest's directory:
// parse rejects a path with "..", an absolute path, a scheme or a host
// (path_escapes, see url.hpp), unless parse_options::check_paths is off.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../source.hpp"
#include "error.hpp"
#include "url.hpp"

namespace untold::remote {

using json = nlohmann::ordered_json;

struct lod_level {
  std::string path;
  double switch_distance = 0;
  json extra = json::object();
};

struct tile_bounds {
  std::array<double, 3> min{};
  std::array<double, 3> max{};
  json extra = json::object();
};

struct tile {
  std::string tile_id;
  std::string path;  // path_relative_to_manifest
  std::uint64_t file_size_bytes = 0;
  tile_bounds bounds{};
  std::array<double, 3> center{};
  std::optional<double> streaming_radius{};
  std::optional<double> unload_radius{};
  std::optional<double> prefetch_radius{};
  std::optional<double> priority{};
  std::optional<std::vector<lod_level>> hlod_levels{};  // the engine uses the first
  std::optional<std::vector<lod_level>> lod_levels{};   // in file order; see lods_by_distance
  // version 4
  std::optional<json> floor_id{};
  std::optional<json> quadtree_node_id{};
  std::optional<std::string> semantic_tier{};  // ExteriorShell | StructuralInterior | RoomContents | FineProps
  std::optional<bool> interior{};
  json extra = json::object();
};

struct streaming_defaults {
  double streaming_radius = 0;
  double unload_radius = 0;
  double priority = 0;
  std::optional<double> prefetch_radius{};
  json extra = json::object();
};

struct tile_size {
  double x = 0, y = 0, z = 0;
  json extra = json::object();
};

struct manifest {
  std::int64_t version = 3;  // 1 (older), 3 = uniform grid, 4 = quadtree floor
  streaming_defaults defaults{};
  std::vector<tile> tiles{};
  std::optional<tile> shared_bucket{};
  std::optional<remote::tile_size> tile_size{};
  std::optional<std::string> partitioning_mode{};  // version 4
  std::optional<json> interior_zone{};             // version 4, opaque
  /// Everything else (scene_lights, scene_cameras, colorLUT, ...), in file order.
  json extra = json::object();
};

struct parse_options {
  /// Reject tile/LOD/HLOD paths that escape the manifest's directory.
  bool check_paths = true;
  /// Deepest nesting of arrays and objects accepted. The schema needs 5; the
  /// rest is room for unknown fields, which are kept and written back. The
  /// JSON library recurses over nested values (copies, comparisons, output),
  /// so a deeper document is refused before it is parsed.
  std::uint32_t max_depth = 64;
};

/// A tile's prefetch radius: its own, else the defaults', else
/// (streaming_radius + unload_radius) / 2 (each radius the tile's own or the default).
[[nodiscard]] inline double effective_prefetch_radius(const tile& t, const streaming_defaults& d) noexcept {
  if (t.prefetch_radius) return *t.prefetch_radius;
  if (d.prefetch_radius) return *d.prefetch_radius;
  return (t.streaming_radius.value_or(d.streaming_radius) + t.unload_radius.value_or(d.unload_radius)) / 2;
}

/// The tile's LOD levels sorted ascending by switch distance (stable), as the engine loads them.
[[nodiscard]] inline std::vector<lod_level> lods_by_distance(const tile& t) {
  std::vector<lod_level> lods = t.lod_levels.value_or(std::vector<lod_level>{});
  std::stable_sort(lods.begin(), lods.end(),
                   [](const lod_level& a, const lod_level& b) { return a.switch_distance < b.switch_distance; });
  return lods;
}

namespace detail {

class manifest_reader {
 public:
  explicit manifest_reader(const parse_options& o) : options_(o) {}

  result<manifest> read(const json& root) {
    manifest m;
    if (!root.is_object()) return fail("$", "expected an object");
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string& k = it.key();
      const json& v = it.value();
      if (k == "version") {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 4)
          return fail("version", "expected an integer 1..4");
        m.version = v.get<std::int64_t>();
      } else if (k == "streaming_defaults") {
        if (!defaults(v, m.defaults)) return error_;
      } else if (k == "tiles") {
        if (!v.is_array()) return fail("tiles", "expected an array");
        m.tiles.resize(v.size());
        for (std::size_t i = 0; i < v.size(); ++i)
          if (!read_tile(v[i], "tiles[" + std::to_string(i) + "]", m.tiles[i])) return error_;
      } else if (k == "shared_bucket") {
        if (!read_tile(v, "shared_bucket", m.shared_bucket.emplace())) return error_;
      } else if (k == "tile_size") {
        auto& ts = m.tile_size.emplace();
        if (!v.is_object()) return fail("tile_size", "expected an object");
        if (!number(v, "tile_size", "x", ts.x) || !number(v, "tile_size", "y", ts.y) || !number(v, "tile_size", "z", ts.z))
          return error_;
        ts.extra = others(v, {"x", "y", "z"});
      } else if (k == "partitioning_mode") {
        if (!v.is_string()) return fail("partitioning_mode", "expected a string");
        m.partitioning_mode = v.get<std::string>();
      } else if (k == "interior_zone") {
        m.interior_zone = v;
      } else {
        m.extra[k] = v;
      }
    }
    if (!root.contains("version")) return fail("version", "missing");
    if (!root.contains("streaming_defaults")) return fail("streaming_defaults", "missing");
    if (!root.contains("tiles")) return fail("tiles", "missing");
    return m;
  }

 private:
  bool fail_bool(const std::string& where, const std::string& what) {
    error_ = make_error(remote_errc::bad_manifest, where + ": " + what);
    return false;
  }
  error fail(const std::string& where, const std::string& what) {
    fail_bool(where, what);
    return error_;
  }

  static json others(const json& obj, std::initializer_list<std::string_view> known) {
    json extra = json::object();
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) extra[it.key()] = it.value();
    return extra;
  }

  bool number(const json& obj, const std::string& where, const char* key, double& out) {
    const auto it = obj.find(key);
    if (it == obj.end()) return fail_bool(where + "." + key, "missing");
    if (!it->is_number() || !std::isfinite(it->get<double>())) return fail_bool(where + "." + key, "expected a number");
    out = it->get<double>();
    return true;
  }
  bool optional_number(const json& obj, const std::string& where, const char* key, std::optional<double>& out) {
    if (!obj.contains(key)) return true;
    double v = 0;
    if (!number(obj, where, key, v)) return false;
    out = v;
    return true;
  }
  bool string(const json& obj, const std::string& where, const char* key, std::string& out) {
    const auto it = obj.find(key);
    if (it == obj.end()) return fail_bool(where + "." + key, "missing");
    if (!it->is_string()) return fail_bool(where + "." + key, "expected a string");
    out = it->get<std::string>();
    return true;
  }
  bool vec3(const json& obj, const std::string& where, const char* key, std::array<double, 3>& out) {
    const auto it = obj.find(key);
    if (it == obj.end()) return fail_bool(where + "." + key, "missing");
    if (!it->is_array() || it->size() != 3) return fail_bool(where + "." + key, "expected an array of 3 numbers");
    for (std::size_t i = 0; i < 3; ++i) {
      const json& c = (*it)[i];
      if (!c.is_number() || !std::isfinite(c.get<double>()))
        return fail_bool(where + "." + key, "expected an array of 3 numbers");
      out[i] = c.get<double>();
    }
    return true;
  }
  bool path(const std::string& where, const std::string& p) {
    if (!options_.check_paths) return true;
    auto clean = check_relative_path(p);
    if (!clean) {
      error_ = make_error(remote_errc::path_escapes, where + ": \"" + p + "\"");
      return false;
    }
    return true;
  }

  bool defaults(const json& v, streaming_defaults& d) {
    const std::string where = "streaming_defaults";
    if (!v.is_object()) return fail_bool(where, "expected an object");
    if (!number(v, where, "streaming_radius", d.streaming_radius) || !number(v, where, "unload_radius", d.unload_radius) ||
        !number(v, where, "priority", d.priority) || !optional_number(v, where, "prefetch_radius", d.prefetch_radius))
      return false;
    d.extra = others(v, {"streaming_radius", "unload_radius", "priority", "prefetch_radius"});
    return true;
  }

  bool levels(const json& t, const std::string& where, const char* key, std::optional<std::vector<lod_level>>& out) {
    const auto it = t.find(key);
    if (it == t.end()) return true;
    const std::string here = where + "." + key;
    if (!it->is_array()) return fail_bool(here, "expected an array");
    auto& list = out.emplace();
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& l = (*it)[i];
      const std::string at = here + "[" + std::to_string(i) + "]";
      if (!l.is_object()) return fail_bool(at, "expected an object");
      lod_level level;
      if (!string(l, at, "path", level.path) || !path(at + ".path", level.path) ||
          !number(l, at, "switch_distance", level.switch_distance))
        return false;
      level.extra = others(l, {"path", "switch_distance"});
      list.push_back(std::move(level));
    }
    return true;
  }

  bool read_tile(const json& v, const std::string& where, tile& t) {
    if (!v.is_object()) return fail_bool(where, "expected an object");
    if (!string(v, where, "tile_id", t.tile_id) || !string(v, where, "path_relative_to_manifest", t.path) ||
        !path(where + ".path_relative_to_manifest", t.path))
      return false;
    const auto size = v.find("file_size_bytes");
    if (size == v.end()) return fail_bool(where + ".file_size_bytes", "missing");
    if (!size->is_number_unsigned() && !(size->is_number_integer() && size->get<std::int64_t>() >= 0))
      return fail_bool(where + ".file_size_bytes", "expected a non-negative integer");
    t.file_size_bytes = size->get<std::uint64_t>();
    const auto bounds = v.find("bounds");
    if (bounds == v.end()) return fail_bool(where + ".bounds", "missing");
    if (!bounds->is_object()) return fail_bool(where + ".bounds", "expected an object");
    if (!vec3(*bounds, where + ".bounds", "min", t.bounds.min) || !vec3(*bounds, where + ".bounds", "max", t.bounds.max) ||
        !vec3(v, where, "center", t.center))
      return false;
    t.bounds.extra = others(*bounds, {"min", "max"});
    if (!optional_number(v, where, "streaming_radius", t.streaming_radius) ||
        !optional_number(v, where, "unload_radius", t.unload_radius) ||
        !optional_number(v, where, "prefetch_radius", t.prefetch_radius) ||
        !optional_number(v, where, "priority", t.priority) || !levels(v, where, "hlod_levels", t.hlod_levels) ||
        !levels(v, where, "lod_levels", t.lod_levels))
      return false;
    if (const auto it = v.find("floor_id"); it != v.end()) t.floor_id = *it;
    if (const auto it = v.find("quadtree_node_id"); it != v.end()) t.quadtree_node_id = *it;
    if (const auto it = v.find("semantic_tier"); it != v.end()) {
      if (!it->is_string()) return fail_bool(where + ".semantic_tier", "expected a string");
      t.semantic_tier = it->get<std::string>();
    }
    if (const auto it = v.find("interior"); it != v.end()) {
      if (!it->is_boolean()) return fail_bool(where + ".interior", "expected a boolean");
      t.interior = it->get<bool>();
    }
    t.extra = others(v, {"tile_id", "path_relative_to_manifest", "file_size_bytes", "bounds", "center",
                         "streaming_radius", "unload_radius", "prefetch_radius", "priority", "hlod_levels",
                         "lod_levels", "floor_id", "quadtree_node_id", "semantic_tier", "interior"});
    return true;
  }

  parse_options options_;
  error error_;
};

[[nodiscard]] inline json number_json(double v) {
  if (std::trunc(v) == v && std::fabs(v) < 9.0e15) return json(static_cast<std::int64_t>(v));
  return json(v);
}

inline void append_extra(json& out, const json& extra) {
  if (!extra.is_object()) return;
  for (auto it = extra.begin(); it != extra.end(); ++it)
    if (!out.contains(it.key())) out[it.key()] = it.value();
}

[[nodiscard]] inline json vec3_json(const std::array<double, 3>& v) {
  return json::array({number_json(v[0]), number_json(v[1]), number_json(v[2])});
}

[[nodiscard]] inline json levels_json(const std::vector<lod_level>& levels) {
  json out = json::array();
  for (const lod_level& l : levels) {
    json j = json::object();
    j["path"] = l.path;
    j["switch_distance"] = number_json(l.switch_distance);
    append_extra(j, l.extra);
    out.push_back(std::move(j));
  }
  return out;
}

[[nodiscard]] inline json tile_json(const tile& t) {
  json j = json::object();
  j["tile_id"] = t.tile_id;
  j["path_relative_to_manifest"] = t.path;
  j["file_size_bytes"] = t.file_size_bytes;
  json b = json::object();
  b["min"] = vec3_json(t.bounds.min);
  b["max"] = vec3_json(t.bounds.max);
  append_extra(b, t.bounds.extra);
  j["bounds"] = std::move(b);
  j["center"] = vec3_json(t.center);
  if (t.streaming_radius) j["streaming_radius"] = number_json(*t.streaming_radius);
  if (t.unload_radius) j["unload_radius"] = number_json(*t.unload_radius);
  if (t.prefetch_radius) j["prefetch_radius"] = number_json(*t.prefetch_radius);
  if (t.priority) j["priority"] = number_json(*t.priority);
  if (t.hlod_levels) j["hlod_levels"] = levels_json(*t.hlod_levels);
  if (t.lod_levels) j["lod_levels"] = levels_json(*t.lod_levels);
  if (t.floor_id) j["floor_id"] = *t.floor_id;
  if (t.quadtree_node_id) j["quadtree_node_id"] = *t.quadtree_node_id;
  if (t.semantic_tier) j["semantic_tier"] = *t.semantic_tier;
  if (t.interior) j["interior"] = *t.interior;
  append_extra(j, t.extra);
  return j;
}

/// The deepest nesting of arrays and objects in JSON text, counted in one pass
/// without recursion (brackets inside strings do not count); stops counting
/// at `stop`. Malformed text is left to the parser.
[[nodiscard]] inline std::uint32_t json_nesting_depth(std::string_view text, std::uint32_t stop) noexcept {
  std::uint32_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size() && deepest <= stop; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // skip the escaped character
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace detail

/// Parses manifest JSON (see the top of this file). bad_manifest names the
/// offending field ("tiles[2].bounds.min: missing"); path_escapes names the path.
/// Safe on untrusted text: nesting deeper than options.max_depth is refused
/// before parsing (bad_manifest), so no recursion depends on the input.
[[nodiscard]] inline result<manifest> parse_manifest(std::string_view text, const parse_options& options = {}) {
  if (detail::json_nesting_depth(text, options.max_depth) > options.max_depth)
    return make_error(remote_errc::bad_manifest,
                      "nesting deeper than " + std::to_string(options.max_depth) + " levels (parse_options::max_depth)");
  const json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded()) return make_error(remote_errc::bad_manifest, "not valid JSON");
  return detail::manifest_reader(options).read(root);
}

/// Reads and parses a manifest file.
[[nodiscard]] inline result<manifest> read_manifest_file(const std::filesystem::path& path,
                                                         const parse_options& options = {}) {
  auto bytes = read_file(path, std::uint64_t{256} << 20);
  if (!bytes) {
    error e = make_error(remote_errc::cache_io, path.string());
    e.core = bytes.error();
    return e;
  }
  return parse_manifest(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), options);
}

/// The manifest as a JSON value: known fields in schema order, then the kept unknown ones.
[[nodiscard]] inline json to_json(const manifest& m) {
  json j = json::object();
  j["version"] = m.version;
  json d = json::object();
  d["streaming_radius"] = detail::number_json(m.defaults.streaming_radius);
  d["unload_radius"] = detail::number_json(m.defaults.unload_radius);
  d["priority"] = detail::number_json(m.defaults.priority);
  if (m.defaults.prefetch_radius) d["prefetch_radius"] = detail::number_json(*m.defaults.prefetch_radius);
  detail::append_extra(d, m.defaults.extra);
  j["streaming_defaults"] = std::move(d);
  if (m.partitioning_mode) j["partitioning_mode"] = *m.partitioning_mode;
  if (m.tile_size) {
    json ts = json::object();
    ts["x"] = detail::number_json(m.tile_size->x);
    ts["y"] = detail::number_json(m.tile_size->y);
    ts["z"] = detail::number_json(m.tile_size->z);
    detail::append_extra(ts, m.tile_size->extra);
    j["tile_size"] = std::move(ts);
  }
  json tiles = json::array();
  for (const tile& t : m.tiles) tiles.push_back(detail::tile_json(t));
  j["tiles"] = std::move(tiles);
  if (m.shared_bucket) j["shared_bucket"] = detail::tile_json(*m.shared_bucket);
  if (m.interior_zone) j["interior_zone"] = *m.interior_zone;
  detail::append_extra(j, m.extra);
  return j;
}

/// The manifest as JSON text (indent < 0: one line).
[[nodiscard]] inline std::string write_manifest(const manifest& m, int indent = 2) {
  return to_json(m).dump(indent, ' ', false, json::error_handler_t::replace);
}

/// Absolute locations of one tile's files.
struct tile_locations {
  std::string tile;
  std::vector<std::string> hlods;  // file order (the engine uses the first)
  std::vector<std::string> lods;   // file order
};

/// Resolves a tile's, HLODs' and LODs' paths against the manifest's location
/// (an https:// URL, a file:// URL or a local path): path_escapes for any path
/// that leaves the manifest's directory.
[[nodiscard]] inline result<tile_locations> resolve_tile(std::string_view manifest_location, const tile& t) {
  tile_locations out;
  auto main = resolve_relative(manifest_location, t.path);
  if (!main) return main.error();
  out.tile = std::move(*main);
  for (const auto* levels : {&t.hlod_levels, &t.lod_levels}) {
    if (!*levels) continue;
    for (const lod_level& l : **levels) {
      auto u = resolve_relative(manifest_location, l.path);
      if (!u) return u.error();
      (levels == &t.hlod_levels ? out.hlods : out.lods).push_back(std::move(*u));
    }
  }
  return out;
}

}  // namespace untold::remote
