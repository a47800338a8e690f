// web/untold_web.cpp - the library as a WebAssembly module for the viewer
// (web/index.html; docs/web.md describes this API).
//
// The page writes a file (and, for formats that read companion files such
// as assetc's .hmat/.hman/.hanim, those too) into Emscripten's in-memory
// file system, then calls these functions through ccall. Documents come back
// as JSON text, made by the same pipeline code as `untold info --json`,
// `validate --json` and `dump --json` (tools/pipeline: inspect.cpp and the
// format handlers of formats.hpp), so the page's tables match the tool by
// construction. Geometry comes from the neutral scene posed by
// untold::convert::pose and is handed over as pointers into the module's
// heap, valid until the next call that poses or opens.
//
// Every returned const char* points into one buffer owned by the module,
// valid until the next call. Nothing here trusts the file: every path goes
// through the library's checks, and errors come back as {"error": {...}}
// with the rule id (tools/pipeline error_json).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <emscripten/emscripten.h>

#include <untold/convert/from_untold.hpp>
#include <untold/convert/pose.hpp>
#include <untold/reader.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/remote/stream_plan.hpp>
#include <untold/streaming.hpp>

#include "formats.hpp"
#include "inspect.hpp"

namespace {

namespace uc = untold::convert;
namespace us = untold::streaming;
namespace ur = untold::remote;
using untold::tools::json;

// ---- the codec hook (compression.hpp, UNTOLD_EXTERNAL_CODECS) --------------------------

// Pure-JavaScript decoders loaded by the page (web/codecs.js): fzstd for
// zstd, a strict LZ4 block decoder for lz4. They return 0 on success.
EM_JS(int, untold_js_decode,
      (std::uint32_t method, const void* stored, std::size_t stored_size, void* out, std::size_t out_size, double size),
      { return untoldCodecs.decode(HEAPU8, method, stored, stored_size, out, out_size, size); });

std::string& reply() {
  static std::string text;
  return text;
}

const char* give(const json& document) {
  reply() = untold::tools::to_text(document);
  return reply().c_str();
}

json error_document(const untold::error& e) { return json{{"error", untold::tools::error_json(e)}}; }

/// The file the page wrote into the module's file system.
std::optional<std::vector<std::byte>> read_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

/// What is open: the file's bytes, its neutral scene and the current pose.
struct viewer_state {
  std::vector<std::byte> bytes;
  std::optional<uc::scene> scene;
  uc::posed_scene posed;        // untold_web_pose's
  uc::posed_scene tile;         // untold_web_tile's
  const uc::posed_scene* last = &posed;  // what the geometry accessors read
};
viewer_state& state() {
  static viewer_state s;
  return s;
}

/// `dump --json` of a file (what the tool prints, parsed back).
json dump_document(const std::string& name, untold::byte_span bytes, const untold::tools::detected& d) {
  namespace ut = untold::tools;
  std::string text;
  const ut::text_sink sink = [&text](std::string_view piece) { text.append(piece); };
  if (d.what == ut::detected::kind::untold) {
    auto opened = untold::open(bytes, {.integrity = untold::integrity::full});
    if (!opened) return json{{"file", name}, {"format", "untold"}, {"valid", false}, {"error", ut::error_json(opened.error())}};
    ut::write_dump_json(name, *opened, 0, sink);
    return json::parse(text);
  }
  if (d.what == ut::detected::kind::unrecognised || d.handler->dump == nullptr) return nullptr;
  ut::document_stream out(sink, ut::document_stream::syntax::json);
  if (auto refused = d.handler->dump(name, bytes, out)) return *refused;
  return json::parse(text);
}

/// The scene of a file for drawing: from_untold for .untold, the handler's
/// importer for the foreign formats that have one.
untold::result<uc::scene> import_scene(const std::string& path, untold::byte_span bytes,
                                       const untold::tools::detected& d,
                                       std::vector<std::filesystem::path> animations) {
  namespace ut = untold::tools;
  if (d.what == ut::detected::kind::untold) {
    auto opened = untold::open(bytes, {.integrity = untold::integrity::full});
    if (!opened) return opened.error();
    return uc::from_untold(*opened);
  }
  if (d.what == ut::detected::kind::foreign && d.handler->import != nullptr)
    return d.handler->import(ut::import_request{.input = path, .bytes = bytes, .animations = std::move(animations)});
  return untold::make_error(untold::errc::invalid_argument).at_field("format");
}

json pose_summary(const uc::posed_scene& p);

json animations_json(const uc::scene& s) {
  json clips = json::array();
  for (const uc::animation& a : s.animations) clips.push_back(json{{"name", a.name}, {"duration", a.duration}});
  return clips;
}

std::uint32_t max_lods(const uc::scene& s) {
  std::size_t n = 0;
  for (const uc::mesh& m : s.meshes) n = std::max(n, m.lods.size());
  return static_cast<std::uint32_t>(n);
}

// ---- streaming -------------------------------------------------------------------------

struct stream_state {
  ur::stream_world world;
  std::optional<us::planner> plan;
};
stream_state& streaming() {
  static stream_state s;
  return s;
}

json tile_states(const stream_state& s) {
  json tiles = json::array();
  for (std::uint32_t t = 0; t < s.world.tiles.size(); ++t) {
    json levels = json::array();
    for (std::uint16_t l = 0; l < s.plan->level_count(t); ++l)
      levels.push_back(json{{"state", us::name(s.plan->state(t, l))}, {"bytes", s.plan->level_bytes(t, l)}});
    const std::uint16_t shown = s.plan->shown(t);
    tiles.push_back(json{{"distance", s.plan->distance(t)},
                         {"shown", shown == us::no_level ? json(nullptr) : json(shown)},
                         {"levels", levels}});
  }
  return tiles;
}

}  // namespace

extern "C" {

// The hook compression.hpp calls for lz4 and zstd chunks (no native codecs in WASM).
// The size goes to JavaScript as a double: exact below 2^53, far above any
// chunk the reader's limits allow.
int untold_external_decode(std::uint32_t method, const void* stored, std::size_t stored_size, void* out,
                           std::size_t out_size, std::uint64_t size) noexcept {
  return untold_js_decode(method, stored, stored_size, out, out_size, static_cast<double>(size));
}

/// Opens the file at `path` (in the module's file system; `name` is what
/// the documents call it; `animations`: newline-separated paths of clip
/// files for formats that keep clips apart, Urho3D's .ani, as `untold cook
/// --animations`). Returns {"format", "info", "validate", "dump",
/// "scene": {"animations", "lods"} | null, "sceneError": error | null}:
/// info/validate(deep)/dump are exactly `untold info|validate --deep|dump
/// --json` of the file (one entry, not the array info prints). Safe on any
/// file.
EMSCRIPTEN_KEEPALIVE const char* untold_web_open(const char* path, const char* name, const char* animations) {
  namespace ut = untold::tools;
  viewer_state& s = state();
  s = {};
  s.last = &s.posed;  // not the temporary's
  auto bytes = read_input(path);
  if (!bytes) return give(json{{"error", {{"rule", "E-IO"}, {"describe", std::string("cannot read ") + path}}}});
  s.bytes = std::move(*bytes);
  const untold::byte_span file(s.bytes);
  const ut::detected d = ut::detect(file);
  json doc{{"format", ut::format_name(d)}};
  switch (d.what) {
    case ut::detected::kind::untold:
      doc["info"] = ut::info_json(name, file);
      doc["validate"] = ut::validate_json(name, file, true);
      break;
    case ut::detected::kind::foreign:
      doc["info"] = d.handler->info != nullptr ? d.handler->info(name, file) : json(nullptr);
      doc["validate"] = d.handler->validate != nullptr ? d.handler->validate(name, file, true) : json(nullptr);
      break;
    case ut::detected::kind::unrecognised: {
      const json error = ut::unrecognised_error_json(file);
      doc["info"] = json{{"file", name}, {"format", nullptr}, {"valid", false}, {"error", error}, {"fileSize", file.size()}};
      doc["validate"] = json{{"file", name}, {"format", nullptr}, {"valid", false}, {"error", error}};
      break;
    }
  }
  doc["dump"] = dump_document(name, file, d);
  std::vector<std::filesystem::path> clips;
  for (std::string_view rest = animations; !rest.empty();) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    if (end != 0) clips.emplace_back(std::string(rest.substr(0, end)));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  auto scene = import_scene(path, file, d, std::move(clips));
  if (scene) {
    doc["scene"] = json{{"meshes", scene->meshes.size()}, {"nodes", scene->nodes.size()},
                        {"materials", scene->materials.size()}, {"animations", animations_json(*scene)},
                        {"lods", max_lods(*scene)}};
    doc["sceneError"] = nullptr;
    s.scene = std::move(*scene);
  } else {
    doc["scene"] = nullptr;
    doc["sceneError"] = ut::error_json(scene.error());
  }
  return give(doc);
}

/// Poses the open scene (untold::convert::pose): clip `animation` (-1: rest
/// pose) at `time` seconds, level of detail `lod`. Returns {"meshes": [{mesh,
/// node, material, color, vertices, indices}], "min", "max", "triangles",
/// "skipped"} or {"error"}; the geometry is read with the accessors below.
EMSCRIPTEN_KEEPALIVE const char* untold_web_pose(int animation, float time, int lod) {
  viewer_state& s = state();
  s.posed = {};
  s.last = &s.posed;
  if (!s.scene) return give(json{{"error", {{"rule", "E-NO-SCENE"}, {"describe", "no model is open"}}}});
  uc::pose_options o;
  o.animation = animation < 0 ? uc::no_ref : static_cast<std::uint32_t>(animation);
  o.time = time;
  o.lod = lod < 0 ? 0 : static_cast<std::uint32_t>(lod);
  auto posed = uc::pose(*s.scene, o);
  if (!posed) return give(error_document(posed.error()));
  s.posed = std::move(*posed);
  s.last = &s.posed;
  return give(pose_summary(s.posed));
}

/// Opens a streamed tile level (a whole .untold file the page fetched and
/// wrote at `path`), checks it fully (untold::open, integrity full) and
/// poses it at rest, for drawing: the same summary as untold_web_pose, or
/// {"error"}. The geometry accessors then read this tile until the next
/// pose or tile. The open model is kept.
EMSCRIPTEN_KEEPALIVE const char* untold_web_tile(const char* path) {
  viewer_state& s = state();
  s.tile = {};
  s.last = &s.tile;
  const auto bytes = read_input(path);
  if (!bytes) return give(json{{"error", {{"rule", "E-IO"}, {"describe", std::string("cannot read ") + path}}}});
  auto opened = untold::open(*bytes, {.integrity = untold::integrity::full});
  if (!opened) return give(error_document(opened.error()));
  auto scene = uc::from_untold(*opened);
  if (!scene) return give(error_document(scene.error()));
  auto posed = uc::pose(*scene);
  if (!posed) return give(error_document(posed.error()));
  s.tile = std::move(*posed);
  return give(pose_summary(s.tile));
}

}  // extern "C"

namespace {

json pose_summary(const uc::posed_scene& p) {
  json meshes = json::array();
  for (const uc::posed_mesh& m : p.meshes) {
    const auto c = uc::display_color(m.material);
    meshes.push_back(json{{"mesh", m.mesh},
                          {"node", m.node == uc::no_ref ? json(nullptr) : json(m.node)},
                          {"material", m.material == uc::no_ref ? json(nullptr) : json(m.material)},
                          {"color", {c[0], c[1], c[2]}},
                          {"vertices", m.positions.size() / 3},
                          {"indices", m.indices.size()}});
  }
  const bool empty = p.empty();
  return json{{"meshes", meshes},
              {"min", empty ? json(nullptr) : json(p.min)},
              {"max", empty ? json(nullptr) : json(p.max)},
              {"triangles", p.triangles},
              {"skipped", p.skipped_primitives}};
}

}  // namespace

extern "C" {

/// Geometry of posed mesh `i` of the last pose or tile: xyz
/// floats, xyz unit normals, triangle-list indices. Null when out of range.
EMSCRIPTEN_KEEPALIVE const float* untold_web_positions(std::uint32_t i) {
  const auto& m = state().last->meshes;
  return i < m.size() ? m[i].positions.data() : nullptr;
}
EMSCRIPTEN_KEEPALIVE const float* untold_web_normals(std::uint32_t i) {
  const auto& m = state().last->meshes;
  return i < m.size() ? m[i].normals.data() : nullptr;
}
EMSCRIPTEN_KEEPALIVE const std::uint32_t* untold_web_indices(std::uint32_t i) {
  const auto& m = state().last->meshes;
  return i < m.size() ? m[i].indices.data() : nullptr;
}

/// Starts streaming a tile manifest (its JSON text, docs/tiles.md): the
/// planner of untold::streaming over untold::remote::make_stream_world, in
/// range mode. Returns {"tiles": [{id, paths, center, min, max, radii}],
/// "sharedBucket"} or {"error"}.
EMSCRIPTEN_KEEPALIVE const char* untold_web_stream_open(const char* manifest_text, int whole_file) {
  stream_state& s = streaming();
  s = {};
  auto m = ur::parse_manifest(manifest_text);
  if (!m) return give(json{{"error", {{"rule", "E-MANIFEST"}, {"describe", m.error().describe()}}}});
  s.world = ur::make_stream_world(*m);
  us::planner_options o;
  o.mode = whole_file != 0 ? us::transfer_mode::whole_file : us::transfer_mode::ranges;
  s.plan.emplace(s.world.tiles, o);
  json tiles = json::array();
  for (std::uint32_t t = 0; t < s.world.tiles.size(); ++t) {
    const us::tile_desc& d = s.world.tiles[t];
    tiles.push_back(json{{"id", s.world.ids[t]},
                         {"paths", s.world.paths[t]},
                         {"center", d.center},
                         {"min", d.bounds_min},
                         {"max", d.bounds_max},
                         {"size", d.size_bytes},
                         {"streamingRadius", d.streaming_radius},
                         {"unloadRadius", d.unload_radius},
                         {"hlodLevel", s.plan->hlod_level(t)},
                         {"alwaysResident", d.always_resident}});
  }
  return give(json{{"tiles", tiles}, {"sharedBucket", s.world.has_shared_bucket}});
}

/// One planner tick: the camera, the clock (seconds, never backwards), the
/// memory budget in bytes (<= 0: none) and the results of earlier requests
/// as JSON [[request, "completed"|"failed"|"cancelled", residentBytes], ...].
/// Returns {"actions": [{kind, tile, level, request}], "resident",
/// "inFlight", "tiles": [{distance, shown, levels: [{state, bytes}]}]}.
EMSCRIPTEN_KEEPALIVE const char* untold_web_stream_tick(double x, double y, double z, double now, double budget,
                                                        const char* results_json) {
  stream_state& s = streaming();
  if (!s.plan) return give(json{{"error", {{"rule", "E-NO-MANIFEST"}, {"describe", "no manifest is open"}}}});
  std::vector<us::request_result> results;
  const json given = json::parse(results_json, nullptr, false);
  if (given.is_array())
    for (const json& r : given) {
      if (!r.is_array() || r.size() != 3 || !r[0].is_number_unsigned() || !r[1].is_string() || !r[2].is_number()) continue;
      const std::string outcome = r[1].get<std::string>();
      results.push_back({r[0].get<std::uint64_t>(),
                         outcome == "completed" ? us::request_outcome::completed
                         : outcome == "cancelled" ? us::request_outcome::cancelled
                                                  : us::request_outcome::failed,
                         r[2].is_number_unsigned() ? r[2].get<std::uint64_t>() : 0});
    }
  us::tick_input in;
  in.camera = {x, y, z};
  in.now = now;
  if (budget > 0 && budget < 1.8e19) in.memory_budget = static_cast<std::uint64_t>(budget);
  in.results = results;
  json actions = json::array();
  for (const us::action& a : s.plan->tick(in))
    actions.push_back(json{{"kind", us::name(a.kind)},
                           {"tile", a.tile},
                           {"level", a.level == us::no_level ? json(nullptr) : json(a.level)},
                           {"request", a.request}});
  return give(json{{"actions", actions},
                   {"resident", s.plan->resident_bytes()},
                   {"inFlight", s.plan->in_flight()},
                   {"tiles", tile_states(s)}});
}

}  // extern "C"
