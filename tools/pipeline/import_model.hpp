// tools/pipeline/import_model.hpp - a model file (glTF 2.0, OBJ, FBX, Collada, ...)
// into the neutral scene model (untold/convert/model.hpp): the one entry point
// cook, convert, tiles and the assetc compiler call.
//
//   untold::tools::model_import_options o;           // defaults: generate normals + tangents
//   auto r = untold::tools::import_model("chair.glb", o);
//   if (!r) std::fprintf(stderr, "%s\n", r.error.c_str());
//   for (const auto& e : r.scene.report.entries) ...  // everything not carried, with counts
//
// glTF 2.0 (.gltf, or a file starting with the GLB magic "glTF") goes to the
// TinyGLTF importer (import_gltf.hpp); everything else to assimp
// (import_assimp.hpp). Both fill the scene in the conventions of model.hpp
// (+Y up, CCW, top-left UV origin) and report what they could not carry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/budget.hpp>
#include <untold/convert/model.hpp>
#include <untold/limits.hpp>

namespace untold::tools {

struct model_import_options {
  /// Smooth normals for triangle meshes that have none (reported as changed).
  bool generate_normals = true;
  float smoothing_angle_degrees = 80.0f;  // assimp only: glTF normals are smoothed over shared vertices
  /// Tangents from uv0 for meshes with normals and uv0 but no tangents
  /// (reported as changed).
  bool generate_tangents = true;
  /// Weld identical vertices (assimp JoinIdenticalVertices; glTF sources are
  /// indexed already and are not welded).
  bool weld = true;
  /// Split polygons into triangles (assimp; else polygon meshes are dropped and reported).
  bool triangulate = true;
  /// The caps of the glTF importer: file size (max_total_bytes) and the
  /// budget made from them when `budget` is null.
  untold::limits limits{};
  /// The input's budget (untold/budget.hpp), shared with later stages; the
  /// glTF importer charges its JSON trees, buffers and accessor data to it.
  untold::budget* budget = nullptr;
};

struct model_import_result {
  convert::scene scene;
  /// Empty on success; else why the file could not be imported at all.
  std::string error;
  /// Every file the import read: the source, its buffers (.bin, .mtl) and
  /// the external images the textures name (when they exist). Sorted, unique.
  /// What an incremental build hashes besides the source.
  std::vector<std::filesystem::path> dependencies;
  /// True when the source is glTF 2.0 (.gltf / .glb): texture i == glTF image i,
  /// material i == glTF material i.
  bool gltf = false;

  explicit operator bool() const noexcept { return error.empty(); }
};

/// Imports `path` with the importer its content names (see above). Never
/// throws; safe on untrusted files (the glTF importer's checks are listed in
/// import_gltf.hpp; assimp's are assimp's).
[[nodiscard]] model_import_result import_model(const std::filesystem::path& path,
                                               const model_import_options& options = {});

/// `s` as valid UTF-8 without NULs (convert/model.hpp, shared by every
/// importer of names, the library's included).
using convert::sanitized_utf8;

/// The extension of `p` in lower case (".glb"), as the importers and
/// writers pick by it.
[[nodiscard]] std::string lower_extension(const std::filesystem::path& p);

/// A URI's %XX escapes decoded (a '%' not followed by two hex digits is
/// kept); '+' stays '+'. Safe on any bytes.
[[nodiscard]] std::string percent_decoded(std::string_view uri);

/// One vertex's joint influences: (weight, palette slot), weights > 0 and finite.
using vertex_influences = std::vector<std::pair<float, std::uint16_t>>;

/// What keep_four_largest did, for the importer's report.
struct influence_summary {
  std::uint64_t vertices_over = 0;  // vertices with more than 4 influences
  std::uint64_t dropped = 0;        // influences beyond the 4 largest
  std::uint64_t weightless = 0;     // vertices bound rigidly to palette slot 0 (no usable weight)
};

/// Sets m.joints / m.weights (one entry per element of `influences`, which
/// it sorts) to each vertex's 4 largest influences, normalised to sum 1.
/// Safe for any weights the precondition allows; linear in the influences.
influence_summary keep_four_largest(std::vector<vertex_influences>& influences, convert::mesh& m);

/// Where an imported texture's image lives: the source file's directory
/// joined with texture.uri (empty path for embedded or unnamed images).
[[nodiscard]] std::filesystem::path texture_file(const std::filesystem::path& source, const convert::texture& t);

}  // namespace untold::tools
