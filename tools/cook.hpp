// tools/cook.hpp - turn a glTF 2.0 / OBJ / FBX (anything assimp reads) into
// a .untold tile, the logic behind `untold cook` (see docs/cli.md).
//
//   untold::tools::cook_options o;
//   o.input = "scene.gltf";
//   o.output = "out/scene.untold";
//   auto r = untold::tools::cook(o);
//   if (!r) std::fprintf(stderr, "%s\n", r.error.c_str());
//
// Steps: import with assimp (import_scene: triangulate, drop points/lines
// and degenerate triangles, generate smooth normals and tangents, join
// identical vertices, flip V to a top-left UV origin), convert materials
// and texture references, encode every triangle mesh as PBR_STATIC_V1,
// optimise vertex cache and vertex fetch order with meshoptimizer, keep the
// node hierarchy as entities, write with the builder. Optionally writes
// simplified LOD files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <untold/writer.hpp>

namespace Assimp {
class Importer;
}
struct aiScene;

namespace untold::tools {

struct cook_options {
  std::filesystem::path input;
  std::filesystem::path output;
  /// Chunk compression of the output (metadata and geometry).
  compression_policy compression{};
  /// Copy referenced image files next to the output (default: reference them
  /// where they are, by a path relative to the output's directory).
  bool copy_textures = false;
  /// Write this many simplified LOD files (OUT.lod1.untold ...), each with
  /// about half the triangles of the previous level; fileType lod.
  std::uint32_t lod_count = 0;
  /// Reorder for the vertex cache and vertex fetch (meshoptimizer).
  bool optimize = true;
  /// Called with a stage name and its completion in [0, 1]; may be empty.
  std::function<void(std::string_view stage, float fraction)> progress;
};

/// What one cook wrote. `error` is empty on success.
struct cook_report {
  std::string error;
  bool io_failure = false;  // the error is a file system failure (exit 3 in the CLI)
  std::vector<std::string> warnings;
  std::vector<std::filesystem::path> written;  // output, LOD files, images
  std::uint32_t entities = 0;
  std::uint32_t meshes = 0;
  std::uint32_t materials = 0;
  std::uint32_t textures = 0;
  std::uint64_t vertices = 0;
  std::uint64_t triangles = 0;
  std::uint64_t bytes = 0;  // size of the main output file

  explicit operator bool() const noexcept { return error.empty(); }
};

/// Imports `path` with exactly the importer settings and post-processing
/// cook uses (tests compare against the scene it returns). Null on failure;
/// importer.GetErrorString() says why. The scene belongs to the importer.
const aiScene* import_scene(Assimp::Importer& importer, const std::filesystem::path& path);

/// Cooks options.input into options.output (and LOD files / images).
[[nodiscard]] cook_report cook(const cook_options& options);

}  // namespace untold::tools
