// tools/pipeline/assetc_build.hpp - the assetc asset compiler behind `untold build`
// (docs/assetc-build.md). Source assets under an input directory become
// assetc runtime files:
//
//   models/chair.glb  -> models/chair.hmesh   geometry, meshlets, LODs, SKIN/SKEL
//                        models/chair.hmat    material table (dense slot order)
//                        models/chair/tex_<i>.ktx2   one per referenced glTF image
//                        models/chair.hanim   clips (skinned + animated sources)
//   ui/button.png     -> ui/button.ktx2
//   (all)             -> assets.hman (texture hash -> path), optionally <output>.hpack
//
// The command is tools/cli/build.cpp. This side (load_config,
// resolve_settings, glob_match, build) is
// exception-free at its interface: yaml-cpp / assimp exceptions are caught
// inside and come back as error text.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <span>

#include <untold/assetc/hmesh.hpp>
#include <untold/convert/model.hpp>
#include <untold/convert/to_assetc.hpp>

#include "assetc_ktx2.hpp"

namespace untold::tools {

namespace assetc_build {

// ---- configuration (assetc.yml) --------------------------------------------------------

/// The per-asset knobs (assetc "Settings (v1)").
struct settings {
  bool mesh_merge = true;        // mesh.merge: bake static node transforms into one mesh
  bool texture_compress = true;  // texture.compress: UASTC (raw RGBA8 + zstd when no basisu is found)
  friend bool operator==(const settings&, const settings&) = default;
};

/// A layer only overrides what it sets.
struct settings_overlay {
  std::optional<bool> mesh_merge;
  std::optional<bool> texture_compress;
  void apply(settings& s) const {
    if (mesh_merge) s.mesh_merge = *mesh_merge;
    if (texture_compress) s.texture_compress = *texture_compress;
  }
};

struct rule {
  std::string match;  // glob over the source path relative to the input dir
  settings_overlay overlay;
};

struct layer {
  settings_overlay globals;
  std::vector<rule> rules;
  std::optional<std::string> output;  // presets only
};

struct config {
  std::filesystem::path file;  // empty: no assetc.yml (built-in defaults)
  std::string input = "assets";
  std::string output = "runtime";
  bool pack = false;
  std::string preset;  // the preset used when --preset is not given
  layer defaults;
  std::vector<std::pair<std::string, layer>> presets;  // file order
  std::vector<std::string> warnings;  // unknown keys, wrong types ignored
  [[nodiscard]] const layer* find_preset(std::string_view name) const {
    for (const auto& [n, l] : presets)
      if (n == name) return &l;
    return nullptr;
  }
};

/// Parses an assetc.yml. Error text on a YAML syntax error or a value of
/// the wrong type where the schema needs it; unknown keys become warnings.
[[nodiscard]] std::optional<std::string> parse_config(std::string_view yaml_text, config& out);
[[nodiscard]] std::optional<std::string> load_config(const std::filesystem::path& file, config& out);

/// The nearest assetc.yml in `start` or its ancestors (empty when none).
[[nodiscard]] std::filesystem::path find_config(const std::filesystem::path& start);

/// assetc's glob: `*` spans any characters including '/', `?` exactly one
/// character; the whole path must match.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view path);

/// The settings of the source at `relative_path` ('/'-separated): built-in
/// defaults, then default globals, preset globals, default rules in file
/// order, preset rules in file order (later matches win).
[[nodiscard]] settings resolve_settings(const config& c, const layer* preset, std::string_view relative_path);

// ---- the compiler ----------------------------------------------------------------------

struct build_options {
  std::filesystem::path input;   // source tree
  std::filesystem::path output;  // runtime tree
  config cfg;                    // rules and presets (cfg.file may be empty)
  const layer* preset = nullptr; // into cfg.presets, or null
  std::string preset_name;
  bool pack = false;
  bool use_cache = true;
  unsigned jobs = 1;
  bool verify = false;
  bool strict = false;
  /// The Basis Universal encoder (find_basisu in assetc_ktx2.hpp finds it)
  /// for texture.compress: true (UASTC). Empty: those textures are written
  /// raw, and a build note says so.
  std::filesystem::path basisu;
  /// Called after each asset (done, total, source path); may be empty.
  std::function<void(std::size_t, std::size_t, std::string_view)> progress;
};

struct asset_result {
  std::string source;  // relative to the input, '/'-separated
  enum class status : std::uint8_t { compiled, cached, failed, skipped } state = status::skipped;
  std::string error;                 // when failed
  bool io_error = false;             // failed writing, not reading
  std::vector<std::string> outputs;  // relative to the output, sorted
  convert::conversion_report report;
  std::uint64_t triangles = 0, vertices = 0, meshlets = 0, textures = 0;
};

struct build_result {
  std::vector<asset_result> assets;  // in source path order
  std::vector<std::string> notes;    // e.g. the raw fallback of texture.compress: true
  std::vector<std::string> errors;   // build-wide (collisions, manifest, pack, verify)
  bool io_error = false;
  std::size_t manifest_entries = 0;
  std::filesystem::path pack_file;   // when packed
  std::uint64_t pack_bytes = 0;
  std::size_t verified_files = 0;
  std::string encoder;  // the encoder of texture.compress: true (basisu-uastc VERSION, or raw-rgba8-zstd)

  [[nodiscard]] bool lost_anything() const noexcept {
    for (const asset_result& a : assets)
      if (a.report.lost_anything()) return true;
    return false;
  }
  /// 0 ok, 1 invalid input (or a loss with strict), 3 I/O.
  [[nodiscard]] int exit_code(bool strict) const noexcept;
};

/// Meshlet parameters (meshoptimizer's recommendation for mesh shaders,
/// recorded in DESC) and LOD targets.
inline constexpr std::uint32_t meshlet_max_vertices = 64;
inline constexpr std::uint32_t meshlet_max_triangles = 124;
inline constexpr float meshlet_cone_weight = 0.25f;
inline constexpr std::array<float, 2> lod_ratios = {0.5f, 0.25f};
/// Bumped whenever the compiler's output bytes change: invalidates every cache.
inline constexpr std::uint32_t compiler_version = 1;

/// The meshlets of one submesh's LOD0 (meshoptimizer, the parameters
/// above), appended as written: MLVR holds `base_vertex + local vertex`,
/// MLTR is dense (meshoptimizer's 4-byte padding removed), offsets count elements.
void build_meshlets(std::span<const std::uint32_t> indices, std::span<const float> positions, std::uint32_t base_vertex,
                    convert::assetc_meshlets& out);

/// The compiler's hooks of convert::to_assetc (the scene -> assetc stage in
/// the library): meshoptimizer's vertex cache and fetch order, meshlets
/// (build_meshlets) and LODs (simplify_levels at lod_ratios). The caller sets
/// source_ref, merge_meshes and place_texture.
[[nodiscard]] convert::to_assetc_options compiler_hooks();

/// One used texture's runtime file: the image (embedded, or the file
/// texture_file(source, t) names) decoded and encoded by `encoder` into
/// `ktx`; a KTX2 image is kept as is. False (and the loss in `report`,
/// "the material slot is left empty") when it cannot be read, decoded or encoded.
[[nodiscard]] bool encode_texture(const convert::texture& t, const convert::assetc_texture_use& use,
                                  const std::filesystem::path& source, const texture_encoder& encoder,
                                  convert::conversion_report& report, std::vector<std::byte>& ktx);

/// The one-line message of a failed convert::to_assetc.
[[nodiscard]] std::string assetc_failure(const error& e);

/// Compiles options.input into options.output. Never throws.
[[nodiscard]] build_result build(const build_options& options);

}  // namespace assetc_build
}  // namespace untold::tools
