// tools/pipeline/import_assimp.hpp - any format assimp reads (glTF 2.0, GLB, OBJ, FBX,
// Collada, ...) into the neutral scene model (untold/convert/model.hpp).
//
//   untold::tools::assimp_import_options o;          // defaults: weld, generate normals + tangents
//   auto r = untold::tools::import_assimp("chair.glb", o);
//   if (!r) std::fprintf(stderr, "%s\n", r.error.c_str());
//   for (const auto& e : r.scene.report.entries) ...  // everything not carried, with counts
//
// What the scene holds (conventions of model.hpp: +Y up, CCW, top-left UV origin):
//   - nodes: the assimp node tree in preorder (parents first), local TRS
//     decomposed from the matrix (shear is reported as changed);
//   - meshes: one per assimp mesh (a glTF primitive), same indices as the
//     source scene; triangles keep zero-area faces with distinct indices
//     in the source (also when welding makes two of them one vertex),
//     faces with a repeated index in the source are dropped and counted;
//     line and point
//     meshes are carried with their topology (writers that need triangles
//     report them); uv sets 0, 1 and extras, first colour set, tangents with
//     handedness, morph targets as deltas, skinning as the 4 largest weights
//     (normalised; the rest are reported);
//   - materials: metallic-roughness factors, alpha mode/cutoff, double-sided,
//     emissive strength, the five PBR slots with uv set and
//     KHR_texture_transform (glTF's offset/rotation/scale, recovered from
//     assimp's aiUVTransform); Phong materials are converted and reported;
//   - textures: for glTF/GLB sources exactly the glTF `images` array, in
//     order (scene texture i == glTF image i, the index assetc's texture refs
//     use); otherwise one per distinct image, in first-use order. `uri` is the
//     image file relative to the source file's directory ('/' separators),
//     `embedded` holds the bytes of an embedded image (PNG/JPEG as stored,
//     raw assimp texels as a 32-bit TGA);
//   - skeletons (one per connected set of bones, joints in node preorder so
//     parents come first), skins (one per distinct bone palette: skin joint j
//     is the source's joint j), animations (T/R/S channels on joints or nodes,
//     morph weight channels; CUBICSPLINE samplers arrive from assimp as
//     LINEAR value keys and are reported), lights, cameras.
//   - report: every piece of the source not carried (or carried changed)
//     with a count and a reason.
//
// Thread-safe: each call owns its Assimp::Importer; no global state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <untold/convert/model.hpp>

namespace untold::tools {

struct assimp_import_options {
  /// Smooth normals for meshes that have none (assimp GenSmoothNormals,
  /// reported as changed).
  bool generate_normals = true;
  float smoothing_angle_degrees = 80.0f;
  /// Tangents from uv0 for meshes with normals and uv0 but no tangents
  /// (assimp CalcTangentSpace, reported as changed).
  bool generate_tangents = true;
  /// Weld identical vertices (assimp JoinIdenticalVertices).
  bool weld = true;
  /// Split polygons into triangles (else polygon meshes are dropped and reported).
  bool triangulate = true;
};

struct assimp_import_result {
  convert::scene scene;
  /// Empty on success; else why the file could not be imported at all.
  std::string error;
  /// Every file the import read: the source, its buffers (.bin, .mtl) and
  /// the external images the textures name (when they exist). Sorted, unique.
  /// What an incremental build hashes besides the source.
  std::vector<std::filesystem::path> dependencies;
  /// True when the source is glTF 2.0 (.gltf / .glb): texture i == glTF image i.
  bool gltf = false;

  explicit operator bool() const noexcept { return error.empty(); }
};

/// Imports `path`. Never throws (assimp's exceptions are caught and returned
/// as `error`).
[[nodiscard]] assimp_import_result import_assimp(const std::filesystem::path& path,
                                                 const assimp_import_options& options = {});

/// Where an imported texture's image lives: the source file's directory
/// joined with texture.uri (empty path for embedded or unnamed images).
/// `s` as valid UTF-8 without NULs (convert/model.hpp, shared by every
/// importer of names, the library's included).
using convert::sanitized_utf8;

[[nodiscard]] std::filesystem::path texture_file(const std::filesystem::path& source, const convert::texture& t);

}  // namespace untold::tools
