// tools/pipeline/cook_tiles.hpp - the partitioning cook behind `untold cook SCENE
// --tiles grid:SIZE|quadtree[:MAXTRIS] -o OUTDIR/` (docs/tiles.md): a scene
// split into tile files, per-tile LOD files, one HLOD per tile, a shared
// bucket and the tile manifest (docs/spec/tile-manifest.md).
//
//   untold::tools::tile_cook_options o;
//   std::string why;
//   untold::tools::parse_tiles_spec("grid:64", o, why);
//   auto r = untold::tools::cook_tiles(scene, "out/", o);    // or cook_tiles_file("city.glb", ...)
//   if (!r) std::fprintf(stderr, "%s\n", r.error.c_str());
//   // out/manifest.json, out/tiles/t_0_0.untold, t_0_0.lod1.untold, t_0_0.hlod.untold, out/shared.untold
//
// Partitioning (Y is up; tiles cover the XZ plane):
//   - a draw is one mesh at one node (a mesh at several nodes is several draws);
//   - grid: a draw goes to the cell of its world-space bounding-box centre;
//     quadtree: the square around all draws is split into four while a node
//     holds more than MAXTRIS triangles (up to max_depth), and its leaves are
//     the tiles;
//   - a draw larger than a tile (grid: footprint wider than SIZE in x or z;
//     quadtree: more than MAXTRIS triangles) is split by triangle: each
//     triangle goes whole to the tile of its centroid (no clipping, so no new
//     vertices and every source triangle is in exactly one file; a tile's
//     bounds grow to hold the triangles that stick out);
//   - the shared bucket (shared.untold, loaded with the scene) holds a mesh
//     instanced across tiles (drawn by several nodes that land in different
//     tiles), skinned meshes, and the skeletons, animations, lights and
//     cameras - what cannot be cut by place;
//   - tile bounds are the exact world-space bounds of their LOD0 vertices;
//     `center` is the bounds' centre.
//
// Each tile file keeps the node chain (ancestors too) of what it draws, so
// local transforms are the source's; materials and textures it does not use
// are left out. LODs: simplify.hpp per tile mesh (split meshes keep
// their open borders, so neighbouring tiles do not crack); a tile's LOD file
// k holds every mesh at its level k (or its coarsest), so its triangle count
// strictly decreases. HLOD: build_hlod over the tile, written only when it
// has fewer triangles than the tile.
//
// Deterministic: the same scene and options give the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <untold/convert/model.hpp>
#include <untold/writer.hpp>

#include "simplify.hpp"

namespace untold::tools {

struct tile_cook_options {
  enum class scheme { grid, quadtree };
  scheme partition = scheme::grid;
  /// grid: the cell edge in scene units (x and z).
  double cell_size = 64;
  /// quadtree: split a node that holds more triangles than this.
  std::uint64_t max_triangles = 65536;
  std::uint32_t max_depth = 16;
  /// Per-tile LOD files (ratios, error bound) and the HLOD proxy.
  lod_options lods{};
  hlod_options hlod{};
  bool write_hlods = true;
  /// Switch distance of LOD file k (1-based) is lod_distances[k-1]; missing
  /// entries are k x the tile edge (grid: cell_size; quadtree: the tile's edge).
  std::vector<double> lod_distances{};
  /// Manifest streaming_defaults; unset radii default to 2x and 3x the tile
  /// edge (quadtree: the largest leaf's edge); prefetch is left out unless set
  /// (readers then use (streaming + unload) / 2).
  std::optional<double> streaming_radius{}, unload_radius{}, prefetch_radius{};
  double priority = 0;
  /// Chunk compression of every written file.
  compression_policy compression{};
  /// Stored vertex layout of every written file (write_options::vertex_layout).
  untold::vertex_layout vertex_layout = untold::vertex_layout::pbr_static_v1;
  std::string manifest_name = "manifest.json";
  /// Called with a stage name and its completion in [0, 1]; may be empty.
  std::function<void(std::string_view stage, float fraction)> progress{};
};

/// Parses "grid:SIZE" (SIZE > 0, finite) or "quadtree" / "quadtree:MAXTRIS"
/// (MAXTRIS >= 1) into `o`. False with `error` set otherwise. Safe on any text.
bool parse_tiles_spec(std::string_view spec, tile_cook_options& o, std::string& error);

/// What one tile (or the shared bucket) became.
struct tile_summary {
  std::string id;
  std::string path;  // relative to the manifest
  std::uint64_t bytes = 0;
  std::uint64_t triangles = 0;  // LOD0
  std::uint32_t draws = 0;
  std::vector<std::uint64_t> lod_triangles;  // LOD 1, 2, ...
  std::vector<std::uint64_t> lod_bytes;
  std::uint64_t hlod_triangles = 0, hlod_bytes = 0;  // 0: no HLOD file
};

struct tile_cook_report {
  std::string error;        // empty on success
  bool io_failure = false;  // the error is a file system failure (exit 3 in the CLI)
  std::filesystem::path manifest;
  std::vector<tile_summary> tiles;
  std::optional<tile_summary> shared;
  std::uint64_t source_triangles = 0;  // triangles of the scene's triangle meshes, as drawn
  std::uint64_t split_draws = 0;       // draws cut by triangle
  std::uint64_t total_bytes = 0;       // every written file, manifest included
  std::vector<std::filesystem::path> written;
  convert::conversion_report report;   // importer + writers, each entry once

  explicit operator bool() const noexcept { return error.empty(); }
};

/// Cooks `s` into `output_dir` (created when missing). Preconditions: none -
/// validate_model runs first and its error is returned.
[[nodiscard]] tile_cook_report cook_tiles(const convert::scene& s, const std::filesystem::path& output_dir,
                                          const tile_cook_options& options);

/// Imports `input` with import_model (import_model.hpp), then cook_tiles.
[[nodiscard]] tile_cook_report cook_tiles_file(const std::filesystem::path& input,
                                               const std::filesystem::path& output_dir,
                                               const tile_cook_options& options);

/// A cook's source as a scene: a foreign format with an importer
/// (formats.hpp) through it, anything else through import_model. Refuses a
/// .untold file. Empty `error` on success; the error of a foreign importer
/// starts with its rule id. Safe on untrusted files.
struct tile_source {
  convert::scene scene;
  std::string error;
  bool io_failure = false;  // the file could not be read
  std::string sha256;       // lower-case hex digest of the file's bytes

  explicit operator bool() const noexcept { return error.empty(); }
};
[[nodiscard]] tile_source import_tile_source(const std::filesystem::path& input);

// ---- the distributed cook (docs/distributed.md) ---------------------------------------
//
// The cook above as independent, deterministic jobs. The plan imports and
// partitions the source once and cuts it: each tile's part of the scene (its
// "piece", with the nodes, materials and textures it uses) goes to
// PLAN.d/pieces/ID.untold. Then, per tile: a `tile` job writes the tile's
// file (LOD0), one `lod` job per LOD level writes that level's file (level
// k starts from level k - 1's state: the policy keeps a level only when it
// shrinks enough below the last kept one), an `hlod` job the proxy; the
// shared bucket has a `shared` job and its `lod` jobs; the last job writes
// the manifest from every other job's result. A job reads only its piece
// (and, for a LOD level, the state its predecessor left), writes its file
// atomically (write_output) and its result to PLAN.d/job-N.json. So jobs run
// on any machine that sees the output directory and PLAN.d/, in any order
// their `after` lists allow, any number of times: a retry rewrites the same
// bytes. Running every job in order gives the bytes cook_tiles gives.
//
//   auto planned = untold::tools::plan_tile_cook("city.glb", "out/", "plan.json", options);
//   for (std::size_t j = 0; j < planned.plan.jobs.size(); ++j)      // anywhere; each after its `after`,
//     untold::tools::run_tile_job(planned.plan, j);                 // the manifest job last

struct tile_job {
  enum class kind { tile, lod, hlod, shared, manifest };
  kind what = kind::tile;
  std::string tile{};                // the tile id; "shared" for the shared bucket's jobs; empty: the manifest
  std::uint32_t level = 0;           // lod: the LOD file it writes (1-based)
  std::vector<std::size_t> after{};  // earlier jobs whose results it reads (the manifest: every other, implied)
  std::string piece{};               // its input, relative to the plan's state folder; empty: the manifest
};
[[nodiscard]] std::string_view name(tile_job::kind k) noexcept;

struct tile_cook_plan {
  std::filesystem::path source;  // absolute; read at plan time only
  std::string source_sha256;     // of the source the pieces were cut from
  std::filesystem::path output;  // absolute
  /// Pieces and the jobs' results (absolute): the plan file's path + ".d".
  std::filesystem::path state;
  tile_cook_options options;  // progress is not part of a plan
  std::vector<tile_job> jobs;  // the manifest job last
  /// The partition's facts the manifest needs.
  bool grid = true;
  double edge = 1, streaming_radius = 0;
  std::uint64_t source_triangles = 0, split_draws = 0;
};

struct tile_plan_result {
  tile_cook_plan plan;
  std::string error;
  bool io_failure = false;
  explicit operator bool() const noexcept { return error.empty(); }
};

/// Imports and partitions `input`, writes every tile's piece into
/// PLAN_PATH.d/pieces/ and the plan (JSON, docs/distributed.md) to
/// `plan_path`, atomically, creating folders as needed. Reports progress
/// through options.progress ("import", "partition", "pieces").
[[nodiscard]] tile_plan_result plan_tile_cook(const std::filesystem::path& input, const std::filesystem::path& output_dir,
                                              const std::filesystem::path& plan_path, const tile_cook_options& options);

/// The plan as JSON, and back. read_tile_plan checks every field's type and
/// range (safe on any text) and sets `state` from `plan_path`.
[[nodiscard]] std::string tile_plan_json(const tile_cook_plan& plan);
[[nodiscard]] tile_plan_result read_tile_plan(const std::filesystem::path& plan_path);

/// Runs job `job` of `plan`: its file in plan.output, its result in
/// plan.state. A job whose `after` jobs (the manifest: any other job) have
/// no result yet fails, naming them. A damaged piece fails with the reader's
/// rule id. The report holds what the job wrote (and, for the manifest job,
/// the whole cook's summaries and report). An error names the job and tile
/// ("job 3 (lod t_0_1 2): ...").
[[nodiscard]] tile_cook_report run_tile_job(const tile_cook_plan& plan, std::size_t job);

}  // namespace untold::tools
