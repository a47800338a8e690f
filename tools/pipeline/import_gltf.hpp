// tools/pipeline/import_gltf.hpp - glTF 2.0 (.gltf, .glb) into the neutral scene
// model (untold/convert/model.hpp), parsed by TinyGLTF (libtinygltf-dev,
// nlohmann-json underneath), read directly: no assimp, no names invented.
//
// What the scene holds:
//   - nodes: the default scene's node tree (scene 0 when none is named; every
//     parentless node when the file has no scenes) in preorder, parents
//     first; TRS as stored, a `matrix` decomposed (shear reported); extras;
//   - meshes: one per glTF primitive, mesh by mesh (scene mesh k of glTF mesh
//     m is primitive k - first(m)); a node drawing glTF mesh m draws all its
//     primitives (instancing: several nodes, one mesh). Strips, fans and
//     line loops become lists (`changed`); triangles with a repeated index
//     are dropped and counted. Normals and tangents (generated when absent,
//     `changed`), TEXCOORD_n, COLOR_0, JOINTS_n/WEIGHTS_n (4 largest kept,
//     normalised), morph targets with their names (mesh.extras.targetNames)
//     and default weights (mesh.weights), mesh extras;
//   - materials: exactly the glTF materials in order (metallic-roughness,
//     alpha mode/cutoff, double-sided, KHR_materials_emissive_strength,
//     KHR_materials_transmission), each texture slot with its uv set, the
//     sampler's wrap modes and filters, and KHR_texture_transform (offset,
//     rotation, scale, texCoord override); extras;
//   - textures: exactly the glTF images in order (scene texture i == glTF
//     image i): an external image's URI (never decoded, never read beyond
//     its header) or an embedded image's bytes (bufferView or data: URI);
//   - skeletons (one per set of skins sharing joints; joints in node
//     preorder), skins (skin joint j == glTF skin joint j), animations
//     (translation/rotation/scale/weights channels with STEP, LINEAR or
//     CUBICSPLINE kept), KHR_lights_punctual lights and cameras (one per
//     node that places them).
//
// Safe on untrusted files: the file is at most limits.max_total_bytes; a
// GLB's chunk layout is checked before TinyGLTF sees it; external buffers
// and images are only ever read from inside the source's directory
// (untold::detail::is_safe_relative_path on the URI); images are not
// decoded; every accessor is range-checked overflow-safely against its
// bufferView and buffer before it is read, and its data charged to the
// budget (R-LIMITS); a non-finite POSITION is refused (R-FINITE); the node
// graph must be a forest (a cycle or a node with two parents is refused);
// every index a file gives is checked. Thread-safe: no global state.
#pragma once

#include <filesystem>

#include "import_model.hpp"

namespace untold::tools {

/// True when `path` is glTF 2.0: its first bytes are the GLB magic "glTF",
/// or its extension is .gltf (any case). False for a file that cannot be read.
[[nodiscard]] bool is_gltf(const std::filesystem::path& path);

/// Imports the .gltf / .glb at `path` (see above). Never throws; every
/// failure is `error`, "<path>: cannot import: <why>".
[[nodiscard]] model_import_result import_gltf(const std::filesystem::path& path,
                                              const model_import_options& options = {});

}  // namespace untold::tools
