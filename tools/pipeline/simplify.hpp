// tools/pipeline/simplify.hpp - levels of detail and HLOD proxies on the neutral scene
// (untold/convert/model.hpp), with meshoptimizer. Used by `untold cook` (LOD
// files) and `untold cook --tiles` (per-tile LODs and HLODs, docs/tiles.md).
//
//   untold::tools::lod_options o;                  // ratios 1/2, 1/4, 1/8 of LOD0
//   auto summary = untold::tools::generate_lods(mesh, o);   // fills mesh.lods
//   // summary.triangles = {LOD0, LOD1, ...}: strictly decreasing
//
//   auto proxy = untold::tools::build_hlod(scene, nodes, world, {});  // one merged, simplified mesh
//
// LODs (simplify_levels: the one policy, used by `cook`, `cook --tiles` and
// the assetc compiler, `untold build`). Every level is simplified from LOD0 (not from the previous level,
// so errors do not compound) by meshopt_simplify, which keeps the topology,
// to `ratio` of LOD0's triangles within an error bound that doubles per level
// (`target_error`, relative to the mesh extent). When that stalls (attribute
// seams, unwelded or disconnected geometry: the reason lod2 == lod1 on most
// models before), meshopt_simplifySloppy tries with the same bound. A level
// whose triangle count is not at most `max_kept_fraction` of the last kept
// level's is dropped - never written as a copy - and the next, coarser ratio
// is still tried (its error bound is larger). Indices index the mesh's own
// vertices (lod_level's contract).
//
// HLOD. The meshes of a set of parts (a node's meshes at its world transform,
// or a triangle subset of one) are merged into one world-space mesh with
// positions, normals and vertex colours only: the single material is white,
// non-metallic, roughness 1, and each vertex carries its source material's
// base colour (times the source's vertex colour when it has one). No texture
// atlas: a proxy seen from beyond the streaming radius needs colour, not
// texels, and it stays one draw with no extra image to fetch. Merged, welded
// (equal position, normal and colour) and simplified to `ratio` of the
// source's triangles; when topology-preserving simplification cannot get
// below `ratio`, the sloppy simplifier (which also merges separate objects,
// what a city block needs) runs without an error bound.
//
// Not for untrusted scenes: the scene comes from an importer that checked it
// (validate_model). Deterministic: the same input gives the same output.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <untold/convert/model.hpp>

namespace untold::tools {

struct lod_options {
  /// Target triangle count of each level as a fraction of LOD0, coarsest last.
  std::vector<float> ratios{0.5f, 0.25f, 0.125f};
  /// Error bound of the first level, relative to the mesh extent (0.01 = 1%);
  /// doubled for every further level.
  float target_error = 0.01f;
  /// A level is kept only when it has at most this fraction of the triangles
  /// of the last kept level (LOD0 for the first).
  float max_kept_fraction = 0.8f;
  /// Try meshopt_simplifySloppy (same error bound) when meshopt_simplify stalls.
  bool sloppy_fallback = true;
  /// Keep vertices on open borders where they are (meshes cut at tile edges,
  /// so neighbouring tiles do not crack). Disables the sloppy fallback, which
  /// cannot honour it.
  bool lock_border = false;
  /// lod_level::switch_distance = absolute error (scene units) x this; made
  /// non-decreasing. 1000: an error of 1 cm switches at 10 m, about one pixel
  /// on a 1000-pixels-per-radian view.
  float distance_per_error = 1000.0f;
};

/// One level asked for by lod_options::ratios, as simplify_levels made it.
struct simplified_level {
  std::vector<std::uint32_t> indices;  // a triangle list over the source's vertices; empty when stalled
  float error = 0;                     // relative to the source's extent (meshopt's error)
  bool sloppy = false;                 // made by the sloppy simplifier
  [[nodiscard]] bool stalled() const noexcept { return indices.empty(); }
};

/// The one LOD policy (see the top of this file), on a bare triangle list:
/// one entry per ratio of `options.ratios`, in order. Each level is
/// simplified from `triangles`; a level that does not shrink to at most
/// max_kept_fraction of the last kept level (or of the source) is stalled:
/// its entry has no indices. `positions` holds 3 floats per vertex.
/// Preconditions: every index < vertex_count; positions.size() >= 3 x
/// vertex_count. Not for untrusted input (importers validate first).
std::vector<simplified_level> simplify_levels(std::span<const std::uint32_t> triangles,
                                              std::span<const float> positions, std::size_t vertex_count,
                                              const lod_options& options);

/// Level `k` of simplify_levels alone (the policy's step), given the
/// triangle count of the last kept level before it (the source's for the
/// first): what simplify_levels returns at index k when the earlier levels
/// kept `last_kept`. A distributed cook makes one level per job with it.
/// Same preconditions as simplify_levels; k >= ratios.size() gives a stalled level.
simplified_level simplify_level(std::span<const std::uint32_t> triangles, std::span<const float> positions,
                                std::size_t vertex_count, const lod_options& options, std::size_t k,
                                std::uint64_t last_kept);

/// What generate_lods made of one mesh.
struct lod_summary {
  std::vector<std::uint64_t> triangles;  // LOD0, then each kept level: strictly decreasing
  std::vector<float> errors;             // absolute error of each kept level (scene units)
  std::uint32_t dropped = 0;             // ratios that gave no level of their own
  std::uint32_t sloppy = 0;              // kept levels made by the sloppy simplifier
};

/// Replaces m.lods with the levels `options` asks for (see the top of this
/// file). Only triangle lists are simplified; any other topology, or a mesh
/// without triangles, gets no levels. Preconditions: m passes validate_model.
lod_summary generate_lods(convert::mesh& m, const lod_options& options);

/// generate_lods for every mesh of `s`; ratios that gave no level are
/// reported as `info` per mesh in `report` (nothing is lost: LOD0 stays).
void generate_lods(convert::scene& s, const lod_options& options, convert::conversion_report& report);

/// World transform of every node (parents come first, as validate_model checks).
std::vector<mat4> world_matrices(const convert::scene& s);

/// One piece of an HLOD: a mesh at a world transform, all its triangles or
/// the listed ones (a triangle list over the mesh's vertices), in `color`.
struct hlod_part {
  const convert::mesh* mesh = nullptr;
  mat4 world = identity_matrix;
  std::span<const std::uint32_t> indices{};  // empty: the mesh's own triangle list
  std::array<float, 4> color{1, 1, 1, 1};
};

struct hlod_options {
  /// Target triangle count as a fraction of the merged source.
  float ratio = 0.1f;
  /// Error bound of the topology-preserving pass, relative to the merged extent.
  float target_error = 0.05f;
};

struct hlod_result {
  convert::mesh mesh;          // world space: positions, normals, colors, indices; material 0
  convert::material material;  // the single proxy material
  std::uint64_t source_triangles = 0;
  std::uint64_t triangles = 0;
  float error = 0;     // absolute (scene units)
  bool sloppy = false;  // the sloppy simplifier made it
};

/// Merges and simplifies `parts` (see the top of this file). Triangle lists
/// only; parts of other topologies or with a null mesh contribute nothing.
/// Preconditions: every part's mesh passes validate_model and its indices are
/// in range.
hlod_result build_hlod(std::span<const hlod_part> parts, const hlod_options& options);

/// The parts for the meshes drawn by `nodes` of `s`, at world[node], coloured
/// by their material's base colour; then build_hlod.
hlod_result build_hlod(const convert::scene& s, std::span<const std::uint32_t> nodes, std::span<const mat4> world,
                       const hlod_options& options);

}  // namespace untold::tools
