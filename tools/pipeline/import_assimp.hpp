// tools/pipeline/import_assimp.hpp - the formats assimp reads other than glTF
// (OBJ, FBX, Collada, ...) into the neutral scene model
// (untold/convert/model.hpp). Callers use import_model (import_model.hpp),
// which sends glTF 2.0 to the TinyGLTF importer (import_gltf.hpp) instead.
//
// What the scene holds (conventions of model.hpp: +Y up, CCW, top-left UV origin):
//   - nodes: the assimp node tree in preorder (parents first), local TRS
//     decomposed from the matrix (shear is reported as changed);
//   - meshes: one per assimp mesh, same indices as the source scene;
//     triangles keep zero-area faces with distinct indices in the source
//     (also when welding makes two of them one vertex), faces with a
//     repeated index in the source are dropped and counted; line and point
//     meshes are carried with their topology (writers that need triangles
//     report them); uv sets 0, 1 and extras, first colour set, tangents with
//     handedness, morph targets as deltas, skinning as the 4 largest weights
//     (normalised; the rest are reported);
//   - materials: metallic-roughness factors, alpha mode/cutoff, double-sided,
//     emissive strength, the five PBR slots with uv set, wrap modes and
//     assimp's UV transform; Phong materials are converted and reported;
//   - textures: one per distinct image, in first-use order. `uri` is the
//     image file relative to the source file's directory ('/' separators),
//     `embedded` holds the bytes of an embedded image (PNG/JPEG as stored,
//     raw assimp texels as a 32-bit TGA);
//   - skeletons (one per connected set of bones, joints in node preorder so
//     parents come first), skins (one per distinct bone palette: skin joint j
//     is the source's joint j), animations (T/R/S channels on joints or nodes,
//     morph weight channels), lights, cameras; assimp names the pieces, so
//     bones, channels, lights and cameras find their nodes by name.
//   - report: every piece of the source not carried (or carried changed)
//     with a count and a reason.
//
// Thread-safe: each call owns its Assimp::Importer; no global state.
#pragma once

#include <filesystem>

#include "import_model.hpp"

namespace untold::tools {

/// Imports `path` with assimp. Never throws (assimp's exceptions are caught
/// and returned as `error`). options.limits and options.budget are not used:
/// assimp allocates on its own.
[[nodiscard]] model_import_result import_assimp(const std::filesystem::path& path,
                                                const model_import_options& options = {});

}  // namespace untold::tools
