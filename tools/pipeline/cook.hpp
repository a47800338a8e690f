// tools/pipeline/cook.hpp - turn a glTF 2.0 / OBJ / FBX / Collada (anything
// assimp reads), or a foreign format with an importer (formats.hpp), into a
// .untold tile: the logic behind `untold cook` (docs/cli.md).
//
//   untold::tools::cook_options o;
//   o.input = "scene.gltf";
//   o.output = "out/scene.untold";
//   auto r = untold::tools::cook(o);
//   if (!r) std::fprintf(stderr, "%s\n", r.error.c_str());
//   for (const auto& e : r.conversion.entries) ...   // what was dropped or changed
//
// Steps: import_model (import_model.hpp: TinyGLTF for glTF, assimp for the rest) into the neutral scene;
// resolve the images (embedded ones are written next to the output, files
// are referenced by a URI relative to the output or copied next to it; a URI
// that would leave the output directory is refused; with embed_textures all
// of them are stored in the output instead); optimise each triangle
// mesh for the vertex cache and vertex fetch (meshoptimizer); optionally
// generate LOD levels (simplify.hpp); write with convert::to_untold
// (instancing, extension tables, clips). Every loss is in `conversion`;
// with `strict` any dropped entry fails the cook before a byte is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/bytes.hpp>
#include <untold/convert/model.hpp>
#include <untold/writer.hpp>

#include "assetc_ktx2.hpp"

namespace untold::tools {

/// Where animation clips go.
enum class cook_animations : std::uint8_t {
  in_file,  // in the output with everything else
  split,    // the output without clips + OUT.clipK.untold (fileType animation) per clip
  only,     // the output is one fileType-animation file with every clip
};

/// The order cook gives each triangle-list mesh's triangles and vertices.
/// Every order keeps the same triangles (each with its winding) and
/// vertices; vertices no triangle uses are dropped in all three.
enum class mesh_order : std::uint8_t {
  /// As imported.
  source,
  /// meshoptimizer's vertex cache order, then vertices in first-use order:
  /// the fewest vertex shader runs.
  vertex_cache,
  /// meshoptimizer's strip-friendly cache order, then first-use order: about
  /// 8% more vertex shader runs (2CylinderEngine, 16-entry FIFO: ACMR 0.99
  /// against 0.92), and indices and vertices the meshopt codecs and zstd
  /// store in fewer bytes (docs/benchmarks.md, "Cook vs gltfpack").
  compression,
};

/// The order named by the command line's --mesh-order (and Python's
/// mesh_order=): "cache", "size" or "source"; nullopt for any other name.
[[nodiscard]] std::optional<mesh_order> mesh_order_named(std::string_view name);

struct cook_options {
  std::filesystem::path input;
  std::filesystem::path output;
  /// Chunk compression of the output (metadata and geometry).
  compression_policy compression{};
  /// Stored vertex layout: PBR_STATIC_V1 (the reference engine's) or the
  /// library's PBR_QUANT_V1 (write_options::vertex_layout).
  untold::vertex_layout vertex_layout = untold::vertex_layout::pbr_static_v1;
  /// Format version to write (0: the writer's default).
  std::uint32_t format_version = 0;
  /// Copy referenced image files next to the output (URI = the file name);
  /// default: reference them by a path relative to the output's directory,
  /// refused (and reported) when that path leaves the directory.
  bool copy_textures = false;
  /// Store every image (files found and images the source embeds) inside
  /// the output, in its untold.images chunk (untold/images.hpp), the texture
  /// URIs naming them "#name"; nothing is written next to the output. A
  /// missing image stays a relative reference (and a warning).
  bool embed_textures = false;
  /// Encode every image cook can decode (PNG, JPEG, TGA, BMP ...) into a
  /// KTX2 file with this Basis Universal codec and a full mip chain, through
  /// the `basisu` executable (make_basisu_encoder, assetc_ktx2.hpp); the
  /// result is handled like an image the source embeds (OUT_texK.ktx2 next
  /// to the output, inside it with embed_textures). Each one is a `changed`
  /// report entry (lossy). Missing or undecodable images stay as they are
  /// (a warning). Assimp and glTF inputs only.
  std::optional<basis_codec> texture_compression;
  /// The basisu executable texture_compression runs (required with it).
  std::filesystem::path basisu;
  /// UVs beyond the half-float range are shifted by whole units where the
  /// samplers keep the same sampling (convert::to_untold_options::uv_wrap);
  /// otherwise (and by default) clamped and reported.
  bool uv_wrap = false;
  /// Write this many LOD files (OUT.lod1.untold ...), each level simplified
  /// from LOD0 to 1/2, 1/4, ... of its triangles; levels that do not reduce
  /// are not written (simplify.hpp).
  std::uint32_t lod_count = 0;
  /// How triangles and vertices are ordered (mesh_order).
  mesh_order order = mesh_order::vertex_cache;
  /// Fail (nothing written) when the conversion drops anything, a missing
  /// image included.
  bool strict = false;
  cook_animations animations = cook_animations::in_file;
  /// Called with a stage name and its completion in [0, 1]; may be empty.
  std::function<void(std::string_view stage, float fraction)> progress;
};

/// What one cook wrote. `error` is empty on success.
struct cook_report {
  std::string error;
  bool io_failure = false;  // the error is a file system failure (exit 3 in the CLI)
  std::vector<std::string> warnings;
  std::vector<std::filesystem::path> written;  // output, LOD and animation files, images
  /// Everything the import and the conversion dropped or changed.
  convert::conversion_report conversion;
  std::uint32_t entities = 0;
  std::uint32_t meshes = 0;
  std::uint32_t materials = 0;
  std::uint32_t textures = 0;
  std::uint64_t vertices = 0;
  std::uint64_t triangles = 0;
  std::uint64_t bytes = 0;  // size of the main output file

  explicit operator bool() const noexcept { return error.empty(); }
  /// Records a failure (`io`: a file system failure); the report to return.
  cook_report& failed(std::string message, bool io = false) {
    error = std::move(message);
    io_failure = io;
    return *this;
  }
};

/// Cooks options.input into options.output (and LOD / animation files, images).
[[nodiscard]] cook_report cook(const cook_options& options);

struct format_handler;  // formats.hpp

/// Cooks an input that a registered foreign format reads (Urho3D .mdl, PMDL
/// ...): format.import (which must be set) -> scene -> convert::to_untold ->
/// options.output, its LOD files OUT.lodN.untold (the levels the source
/// holds) and its embedded images next to it (inside it with
/// embed_textures). `input` is the file's bytes (options.input names it in
/// messages); `animation_files` are clip files of formats that keep them
/// apart (Urho3D .ani). One budget (untold/budget.hpp) over the input and
/// those files is shared by the importer and the writer. Of the options,
/// compression, format_version, embed_textures, uv_wrap, strict and
/// animations (in_file, only) apply; the assimp-only ones (copy_textures,
/// lod_count, optimize off, split animations, texture_compression) each add
/// a warning. Safe on
/// untrusted input (the importers' rules and limits apply).
[[nodiscard]] cook_report cook_foreign(const format_handler& format, byte_span input,
                                       const std::vector<std::filesystem::path>& animation_files,
                                       const cook_options& options);

/// `output` with ".SUFFIX" before its extension: OUT.lod1.untold, OUT.clip0.untold.
[[nodiscard]] std::filesystem::path sibling(const std::filesystem::path& output, const std::string& suffix);

/// Writes `bytes` to `path` atomically (write_output); on success adds
/// `path` to r.written, else sets r.error and r.io_failure. False on failure.
bool write_bytes(const std::filesystem::path& path, std::span<const std::byte> bytes, cook_report& r);

/// The --strict refusal: "INPUT: --strict: the conversion drops content (N
/// dropped entries in the report); nothing written".
[[nodiscard]] std::string strict_refusal(const std::filesystem::path& input, const convert::conversion_report& report);

/// Fills r's counts (entities, meshes, vertices, ...) from a written .untold file.
void count_output(cook_report& r, std::span<const std::byte> file);

/// Reorders one mesh's triangles as `order` says and its vertices by first
/// use, drops vertices no triangle uses, and remaps every per-vertex
/// stream, skin, morph target and LOD level with it. Triangle lists only
/// (others are left as they are); mesh_order::source keeps the triangle
/// order and the vertices' relative order (compaction only).
/// Preconditions: m passes convert::validate_model.
void optimize_mesh(convert::mesh& m, mesh_order order);

/// A texture URI as written into a .untold file: relative, '/' separators,
/// no "..", no '\\', no ':' (drive letters, schemes), not empty.
[[nodiscard]] bool portable_relative_uri(std::string_view uri);

}  // namespace untold::tools
