// tools/pipeline/cook_tiles.cpp - the partitioning cook (see cook_tiles.hpp, docs/tiles.md).
#include "cook_tiles.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

#include <untold/convert/to_untold.hpp>
#include <untold/detail/checks.hpp>
#include <untold/extensions.hpp>
#include <untold/format.hpp>
#include <untold/hash.hpp>
#include <untold/matrix.hpp>
#include <untold/reader.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/writer.hpp>

#include "files.hpp"
#include "formats.hpp"
#include "import_model.hpp"
#include "inspect.hpp"
#include "scene_blob.hpp"

namespace untold::tools {
namespace {

namespace fs = std::filesystem;
using convert::no_ref;

/// options.progress, when there is one.
void report_progress(const tile_cook_options& options, std::string_view stage, float fraction) {
  if (options.progress) options.progress(stage, fraction);
}

struct box {
  std::array<double, 3> min{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::infinity()};
  std::array<double, 3> max{-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity()};

  [[nodiscard]] bool empty() const noexcept { return min[0] > max[0]; }
  void add(const std::array<double, 3>& p) noexcept {
    for (std::size_t c = 0; c < 3; ++c) {
      min[c] = std::min(min[c], p[c]);
      max[c] = std::max(max[c], p[c]);
    }
  }
  void add(const box& b) noexcept {
    if (b.empty()) return;
    add(b.min);
    add(b.max);
  }
  [[nodiscard]] std::array<double, 3> center() const noexcept {
    if (empty()) return {0, 0, 0};
    return {(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2};
  }
};

std::array<double, 3> world_point(const mat4& w, const float* p) {
  // Float arithmetic, as the reader of a tile file would do it with the same matrix.
  return {static_cast<double>(w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12]),
          static_cast<double>(w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13]),
          static_cast<double>(w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14])};
}

/// One mesh drawn at one node (node == no_ref: a mesh no node draws, at the origin).
struct draw {
  std::uint32_t node = no_ref;
  std::uint32_t mesh = 0;
  mat4 world = identity_matrix;
  box bounds{};  // world space, every vertex of the mesh
};

/// Part of a tile: a draw, whole (triangles empty) or the listed triangles
/// (indices into the draw mesh's triangle list, as triplets).
struct piece {
  std::uint32_t draw = 0;
  std::vector<std::uint32_t> triangles{};
};

struct tile_plan {
  std::string id{};
  std::string node_path{};  // quadtree node id ("q", "q0", "q03", ...)
  double edge = 0;          // the tile's edge length (default LOD distances, radii)
  std::vector<piece> pieces{};
};

/// A grid cell index along one axis; clamped so a far-away coordinate cannot overflow.
std::int64_t cell_of(double v, double size) {
  const double c = std::floor(v / size);
  return static_cast<std::int64_t>(std::clamp(c, -9.0e15, 9.0e15));
}

/// Copies the vertices `triangles` use (in first-use order) into a triangle-list mesh.
convert::mesh submesh(const convert::mesh& m, std::span<const std::uint32_t> triangles) {
  convert::mesh out;
  out.name = m.name;
  out.material = m.material;
  out.skin = m.skin;
  std::vector<std::uint32_t> map(m.vertex_count(), no_ref), order;
  out.indices.reserve(triangles.size());
  for (const std::uint32_t v : triangles) {
    if (map[v] == no_ref) {
      map[v] = static_cast<std::uint32_t>(order.size());
      order.push_back(v);
    }
    out.indices.push_back(map[v]);
  }
  const auto pick = [&order](const std::vector<float>& src, std::size_t width) {
    std::vector<float> dst;
    if (src.empty()) return dst;
    dst.reserve(order.size() * width);
    for (const std::uint32_t v : order)
      dst.insert(dst.end(), src.begin() + static_cast<std::ptrdiff_t>(v * width),
                 src.begin() + static_cast<std::ptrdiff_t>((v + 1) * width));
    return dst;
  };
  out.positions = pick(m.positions, 3);
  out.normals = pick(m.normals, 3);
  out.tangents = pick(m.tangents, 4);
  out.uv0 = pick(m.uv0, 2);
  out.uv1 = pick(m.uv1, 2);
  out.colors = pick(m.colors, 4);
  for (const auto& uvs : m.extra_uvs) out.extra_uvs.push_back(pick(uvs, 2));
  for (const std::uint32_t v : order) {
    if (!m.joints.empty()) out.joints.push_back(m.joints[v]);
    if (!m.weights.empty()) out.weights.push_back(m.weights[v]);
  }
  for (const convert::morph_target& t : m.morphs)
    out.morphs.push_back({.name = t.name, .default_weight = t.default_weight, .position_deltas = pick(t.position_deltas, 3),
                          .normal_deltas = pick(t.normal_deltas, 3), .tangent_deltas = pick(t.tangent_deltas, 3)});
  return out;
}

/// A scene holding `pieces` of `s` (and, for the shared bucket, everything
/// that is not cut by place): the nodes they hang under with their ancestors,
/// the materials and textures they use. `bounds` gets the world-space bounds
/// of every vertex written; `split` marks the meshes cut by triangle.
/// A piece as the subset holds it: its mesh, drawn at its node (no_ref: at the origin).
struct piece_draw {
  std::uint32_t mesh = 0;
  std::uint32_t node = no_ref;
};

struct subset_result {
  convert::scene scene;
  box bounds;
  std::vector<std::uint8_t> split;  // per subset mesh: cut by triangle
  std::vector<piece_draw> draws;    // per piece, in order (the HLOD's parts)
  std::uint64_t triangles = 0;      // LOD0 triangles as drawn
};

subset_result subset(const convert::scene& s, const std::vector<draw>& draws,
                     const std::vector<std::vector<std::uint32_t>>& triangle_lists, const std::vector<piece>& pieces,
                     bool everything_else) {
  subset_result r;
  convert::scene& out = r.scene;
  out.name = s.name;

  // ---- nodes: those drawn at, those the extras hang on, and their ancestors ----------
  std::vector<char> need(s.nodes.size(), 0);
  for (const piece& p : pieces)
    if (draws[p.draw].node != no_ref) need[draws[p.draw].node] = 1;
  const auto mark = [&need](std::uint32_t n) {
    if (n != no_ref && n < need.size()) need[n] = 1;
  };
  if (everything_else) {
    for (const auto& k : s.skeletons) mark(k.node);
    for (const auto& l : s.lights) mark(l.node);
    for (const auto& c : s.cameras) mark(c.node);
    for (const auto& a : s.animations)
      for (const auto& c : a.channels) mark(c.node);
  }
  for (std::size_t i = need.size(); i-- > 0;)
    if (need[i] && s.nodes[i].parent != no_ref) need[s.nodes[i].parent] = 1;
  std::vector<std::uint32_t> node_map(s.nodes.size(), no_ref);
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    if (!need[i]) continue;
    node_map[i] = static_cast<std::uint32_t>(out.nodes.size());
    convert::node n = s.nodes[i];
    n.parent = n.parent == no_ref ? no_ref : node_map[n.parent];
    n.meshes.clear();
    out.nodes.push_back(std::move(n));
  }
  const auto remap_node = [&node_map](std::uint32_t n) { return n == no_ref ? no_ref : node_map[n]; };

  // ---- materials and textures on first use -------------------------------------------
  std::vector<std::uint32_t> texture_map(s.textures.size(), no_ref), material_map(s.materials.size(), no_ref);
  const auto use_texture = [&](std::uint32_t t) {
    if (t == no_ref) return no_ref;
    if (texture_map[t] == no_ref) {
      texture_map[t] = static_cast<std::uint32_t>(out.textures.size());
      out.textures.push_back(s.textures[t]);
    }
    return texture_map[t];
  };
  const auto use_material = [&](std::uint32_t m) {
    if (m == no_ref) return no_ref;
    if (material_map[m] == no_ref) {
      convert::material copy = s.materials[m];
      for (convert::texture_slot* slot : {&copy.base_color_texture, &copy.metallic_roughness_texture,
                                          &copy.normal_texture, &copy.occlusion_texture, &copy.emissive_texture})
        slot->texture = use_texture(slot->texture);
      for (auto& [name, t] : copy.other_textures) t = use_texture(t);
      material_map[m] = static_cast<std::uint32_t>(out.materials.size());
      out.materials.push_back(std::move(copy));
    }
    return material_map[m];
  };

  // ---- meshes: a whole mesh once per subset, a cut one per piece ---------------------
  std::vector<std::uint32_t> whole_map(s.meshes.size(), no_ref);
  for (const piece& p : pieces) {
    const draw& d = draws[p.draw];
    const convert::mesh& source = s.meshes[d.mesh];
    std::uint32_t index = no_ref;
    if (p.triangles.empty()) {
      if (whole_map[d.mesh] == no_ref) {
        whole_map[d.mesh] = static_cast<std::uint32_t>(out.meshes.size());
        out.meshes.push_back(source);
        out.meshes.back().lods.clear();
        r.split.push_back(0);
      }
      index = whole_map[d.mesh];
      r.triangles += triangle_lists[d.mesh].size() / 3;
      for (std::size_t v = 0; v < source.vertex_count(); ++v) r.bounds.add(world_point(d.world, &source.positions[v * 3]));
    } else {
      index = static_cast<std::uint32_t>(out.meshes.size());
      out.meshes.push_back(submesh(source, p.triangles));
      r.split.push_back(1);
      r.triangles += p.triangles.size() / 3;
      const convert::mesh& cut = out.meshes.back();
      for (std::size_t v = 0; v < cut.vertex_count(); ++v) r.bounds.add(world_point(d.world, &cut.positions[v * 3]));
    }
    out.meshes[index].material = use_material(source.material);
    if (d.node != no_ref) out.nodes[node_map[d.node]].meshes.push_back(index);
    r.draws.push_back({.mesh = index, .node = d.node == no_ref ? no_ref : node_map[d.node]});
  }
  // A whole mesh drawn by no node in the source is written with an entity of its own.

  if (everything_else) {
    out.skins = s.skins;
    out.skeletons = s.skeletons;
    for (auto& k : out.skeletons) k.node = remap_node(k.node);
    out.animations = s.animations;
    for (auto& a : out.animations)
      for (auto& c : a.channels) c.node = remap_node(c.node);
    out.lights = s.lights;
    for (auto& l : out.lights) l.node = remap_node(l.node);
    out.cameras = s.cameras;
    for (auto& c : out.cameras) c.node = remap_node(c.node);
  } else {
    for (convert::mesh& m : out.meshes) m.skin = no_ref;  // skinned meshes only ever go to the shared bucket
  }
  return r;
}

/// Triangles of `m` at LOD `level` (0 = its own list).
std::uint64_t triangles_at(const convert::mesh& m, std::size_t level) {
  if (level == 0 || m.lods.empty()) return convert::detail::triangle_list(m, m.indices).size() / 3;
  return m.lods[std::min(level, m.lods.size()) - 1].indices.size() / 3;
}

/// Triangles of a subset scene's LOD file `level` as drawn (a mesh at n nodes counts n times).
std::uint64_t scene_triangles(const convert::scene& s, std::size_t level) {
  std::vector<std::uint32_t> drawn(s.meshes.size(), 0);
  for (const convert::node& n : s.nodes)
    for (std::uint32_t m : n.meshes) ++drawn[m];
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) total += triangles_at(s.meshes[i], level) * std::max<std::uint32_t>(drawn[i], 1);
  return total;
}

/// Adds `more` to `into`, each distinct entry once (tiles repeat their materials' entries).
void merge_report(convert::conversion_report& into, const convert::conversion_report& more,
                  std::set<std::tuple<int, std::string, std::string, std::string>>& seen) {
  for (const convert::report_entry& e : more.entries)
    if (seen.emplace(static_cast<int>(e.severity), e.what, e.where, e.reason).second) into.entries.push_back(e);
}

// ---- partitioning -----------------------------------------------------------------------

struct element {
  double x = 0, z = 0;
  std::uint64_t weight = 0;            // triangles
  std::uint32_t draw = 0;
  std::uint32_t triangle = no_ref;     // no_ref: the whole draw
};

class quadtree_builder {
 public:
  quadtree_builder(const std::vector<element>& elements, const tile_cook_options& o) : elements_(elements), o_(o) {}

  void build(std::vector<std::uint32_t> items, double x0, double z0, double edge, std::uint32_t depth, std::string path) {
    std::uint64_t weight = 0;
    for (std::uint32_t i : items) weight += elements_[i].weight;
    if (weight <= o_.max_triangles || depth >= o_.max_depth || items.size() <= 1) {
      leaves.push_back({std::move(path), edge, std::move(items)});
      return;
    }
    const double half = edge / 2;
    std::array<std::vector<std::uint32_t>, 4> children;
    for (std::uint32_t i : items) {
      const element& e = elements_[i];
      children[(e.x >= x0 + half ? 1u : 0u) + (e.z >= z0 + half ? 2u : 0u)].push_back(i);
    }
    items = {};
    for (std::uint32_t q = 0; q < 4; ++q)
      if (!children[q].empty())
        build(std::move(children[q]), x0 + ((q & 1u) != 0 ? half : 0), z0 + ((q & 2u) != 0 ? half : 0), half, depth + 1,
              path + static_cast<char>('0' + q));
  }

  struct leaf {
    std::string path;
    double edge;
    std::vector<std::uint32_t> items;
  };
  std::vector<leaf> leaves;

 private:
  const std::vector<element>& elements_;
  const tile_cook_options& o_;
};

/// Groups a leaf's (or cell's) elements into pieces: whole draws, or the listed triangles of a cut draw.
std::vector<piece> pieces_of(const std::vector<element>& elements, const std::vector<std::uint32_t>& items,
                             const std::vector<std::vector<std::uint32_t>>& triangle_lists,
                             const std::vector<draw>& draws) {
  std::map<std::uint32_t, piece> by_draw;
  for (std::uint32_t i : items) {
    const element& e = elements[i];
    piece& p = by_draw[e.draw];
    p.draw = e.draw;
    if (e.triangle == no_ref) continue;
    const auto& list = triangle_lists[draws[e.draw].mesh];
    p.triangles.insert(p.triangles.end(), list.begin() + e.triangle * 3, list.begin() + e.triangle * 3 + 3);
  }
  std::vector<piece> out;
  out.reserve(by_draw.size());
  for (auto& [d, p] : by_draw) out.push_back(std::move(p));
  return out;
}

/// The partition of a scene: the first half of the cook, recomputed by every
/// job of a distributed cook (deterministic, so each job finds its tile).
struct partition_result {
  std::string error;
  bool grid = true;
  std::vector<draw> draws;
  std::vector<std::vector<std::uint32_t>> triangle_lists;
  std::vector<tile_plan> plans;
  std::vector<piece> shared;
  bool write_shared = false;
  double edge = 1;  // the largest tile edge (1 when there is none)
  double streaming_radius = 0;
  std::uint64_t source_triangles = 0, split_draws = 0;
};

partition_result partition(const convert::scene& s, const tile_cook_options& options) {
  partition_result r;
  if (auto ok = convert::validate_model(s); !ok) {
    r.error = "the scene is not consistent: " + ok.error().describe();
    return r;
  }
  const bool grid = r.grid = options.partition == tile_cook_options::scheme::grid;
  if (grid ? !(options.cell_size > 0 && std::isfinite(options.cell_size)) : options.max_triangles == 0) {
    r.error = "the tile size must be positive";
    return r;
  }

  // ---- draws ------------------------------------------------------------------------------
  const std::vector<mat4> world = world_matrices(s);
  auto& triangle_lists = r.triangle_lists;
  triangle_lists.resize(s.meshes.size());
  for (std::size_t i = 0; i < s.meshes.size(); ++i) triangle_lists[i] = convert::detail::triangle_list(s.meshes[i], s.meshes[i].indices);
  auto& draws = r.draws;
  std::vector<bool> drawn(s.meshes.size(), false);
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
    for (std::uint32_t m : s.nodes[n].meshes) {
      draws.push_back({.node = n, .mesh = m, .world = world[n]});
      drawn[m] = true;
    }
  for (std::uint32_t m = 0; m < s.meshes.size(); ++m)
    if (!drawn[m]) draws.push_back({.node = no_ref, .mesh = m});
  std::vector<std::uint32_t> draws_of_mesh(s.meshes.size(), 0);
  for (draw& d : draws) {
    const convert::mesh& m = s.meshes[d.mesh];
    for (std::size_t v = 0; v < m.vertex_count(); ++v) d.bounds.add(world_point(d.world, &m.positions[v * 3]));
    ++draws_of_mesh[d.mesh];
    r.source_triangles += triangle_lists[d.mesh].size() / 3;
  }

  // ---- elements: whole draws, or the triangles of a draw larger than a tile --------------
  auto& shared = r.shared;
  std::vector<element> elements;
  for (std::uint32_t di = 0; di < draws.size(); ++di) {
    const draw& d = draws[di];
    const convert::mesh& m = s.meshes[d.mesh];
    const auto& list = triangle_lists[d.mesh];
    if (m.skin != no_ref || d.bounds.empty()) {  // skinned: moves as a whole; empty: nothing to place
      shared.push_back({.draw = di});
      continue;
    }
    const std::uint64_t tris = list.size() / 3;
    const bool large = grid ? (d.bounds.max[0] - d.bounds.min[0] > options.cell_size ||
                               d.bounds.max[2] - d.bounds.min[2] > options.cell_size)
                            : tris > options.max_triangles;
    if (large && tris > 1) {
      ++r.split_draws;
      for (std::uint32_t t = 0; t < tris; ++t) {
        std::array<double, 3> c{0, 0, 0};
        for (std::size_t k = 0; k < 3; ++k) {
          const auto p = world_point(d.world, &m.positions[std::size_t{list[t * 3 + k]} * 3]);
          for (std::size_t a = 0; a < 3; ++a) c[a] += p[a] / 3;
        }
        elements.push_back({.x = c[0], .z = c[2], .weight = 1, .draw = di, .triangle = t});
      }
    } else {
      const auto c = d.bounds.center();
      elements.push_back({.x = c[0], .z = c[2], .weight = std::max<std::uint64_t>(tris, 1), .draw = di});
    }
  }

  // ---- tiles ----------------------------------------------------------------------------------
  auto& plans = r.plans;
  double largest_edge = grid ? options.cell_size : 0;
  if (grid) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> cells;
    for (std::uint32_t i = 0; i < elements.size(); ++i)
      cells[{cell_of(elements[i].x, options.cell_size), cell_of(elements[i].z, options.cell_size)}].push_back(i);
    for (auto& [key, items] : cells)
      plans.push_back({.id = "t_" + std::to_string(key.first) + "_" + std::to_string(key.second),
                       .edge = options.cell_size,
                       .pieces = pieces_of(elements, items, triangle_lists, draws)});
  } else if (!elements.empty()) {
    double x0 = elements[0].x, z0 = elements[0].z, x1 = x0, z1 = z0;
    for (const element& e : elements) {
      x0 = std::min(x0, e.x), z0 = std::min(z0, e.z), x1 = std::max(x1, e.x), z1 = std::max(z1, e.z);
    }
    // A hair wider than the extent, so the largest coordinate falls inside the last child.
    const double edge = std::max({x1 - x0, z1 - z0, 1e-6}) * (1 + 1e-9) + 1e-9;
    std::vector<std::uint32_t> all(elements.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    quadtree_builder tree(elements, options);
    tree.build(std::move(all), x0, z0, edge, 0, "q");
    for (auto& leaf : tree.leaves) {
      largest_edge = std::max(largest_edge, leaf.edge);
      plans.push_back({.id = leaf.path, .node_path = leaf.path, .edge = leaf.edge,
                       .pieces = pieces_of(elements, leaf.items, triangle_lists, draws)});
    }
  }

  // ---- a mesh instanced across tiles goes to the shared bucket ------------------------------
  std::vector<std::set<std::size_t>> tiles_of_mesh(s.meshes.size());
  for (std::size_t t = 0; t < plans.size(); ++t)
    for (const piece& p : plans[t].pieces) tiles_of_mesh[draws[p.draw].mesh].insert(t);
  for (tile_plan& plan : plans) {
    auto& pieces = plan.pieces;
    const auto moved = std::stable_partition(pieces.begin(), pieces.end(), [&](const piece& p) {
      const std::uint32_t m = draws[p.draw].mesh;
      return !(draws_of_mesh[m] > 1 && tiles_of_mesh[m].size() > 1);
    });
    for (auto it = moved; it != pieces.end(); ++it) shared.push_back({.draw = it->draw, .triangles = std::move(it->triangles)});
    pieces.erase(moved, pieces.end());
  }
  std::erase_if(plans, [](const tile_plan& p) { return p.pieces.empty(); });
  // Whole shared draws in draw order; a draw cut across tiles comes back whole.
  std::sort(shared.begin(), shared.end(), [](const piece& a, const piece& b) { return a.draw < b.draw; });
  shared.erase(std::unique(shared.begin(), shared.end(), [](const piece& a, const piece& b) { return a.draw == b.draw; }),
               shared.end());
  for (piece& p : shared) p.triangles.clear();
  const bool shared_extras = !s.skeletons.empty() || !s.animations.empty() || !s.lights.empty() || !s.cameras.empty();
  r.write_shared = !shared.empty() || shared_extras;
  r.edge = largest_edge > 0 ? largest_edge : 1;
  r.streaming_radius = options.streaming_radius.value_or(2 * r.edge);
  return r;
}

// ---- the jobs: one tile's piece in, one file out ------------------------------------------

/// What one job cooks from: a tile's (or the shared bucket's) part of the
/// scene, cut at plan time (subset), with what its manifest entry needs.
/// The distributed cook stores it in PLAN.d/pieces/ID.untold (write_piece).
struct tile_piece {
  std::string id;
  std::string node_path;  // quadtree tiles
  double edge = 0;
  bool shared = false;
  std::uint64_t triangles = 0;  // LOD0, as drawn
  box bounds;                   // world space, every vertex written
  convert::scene scene;
  std::vector<piece_draw> draws;
  std::vector<std::uint8_t> split;  // per mesh: cut by triangle (its LODs keep their open borders)
};

tile_piece make_piece(const convert::scene& s, const partition_result& part, const tile_plan& plan, bool is_shared) {
  subset_result sub = subset(s, part.draws, part.triangle_lists, plan.pieces, is_shared);
  return tile_piece{.id = plan.id, .node_path = plan.node_path, .edge = plan.edge, .shared = is_shared,
                    .triangles = sub.triangles, .bounds = sub.bounds, .scene = std::move(sub.scene),
                    .draws = std::move(sub.draws), .split = std::move(sub.split)};
}

/// What a tile (or shared) job made: its summary and what its manifest entry
/// needs; its LOD jobs add their levels (add_lod_level).
struct tile_result {
  tile_summary summary;
  box bounds;
  double edge = 0;
  std::string node_path;               // quadtree tiles
  std::vector<double> lod_distances;   // per LOD file
  convert::conversion_report report;   // the writers'
};

/// Writes the files of one job into `output_dir`, counting them in `into`.
struct job_writer {
  const fs::path& output_dir;
  tile_cook_report& into;

  bool operator()(const std::string& relative, byte_span bytes) const {
    if (auto failed = write_output(output_dir / relative, bytes)) {
      into.error = std::move(failed->message);
      into.io_failure = true;
      return false;
    }
    into.written.push_back(output_dir / relative);
    into.total_bytes += bytes.size();
    return true;
  }
};

convert::to_untold_options writer_options(const tile_cook_options& options, bool is_shared) {
  convert::to_untold_options o;
  o.write.compression = options.compression;
  o.write.vertex_layout = options.vertex_layout;
  o.type = is_shared ? file_type::shared : file_type::tile;
  return o;
}

std::string piece_base(const tile_piece& p) { return p.shared ? p.id : "tiles/" + p.id; }

/// Job `tile` / `shared`: the tile's own file (LOD0).
std::optional<tile_result> cook_piece_file(const tile_piece& piece, const tile_cook_options& options,
                                           const job_writer& write) {
  tile_result r;
  tile_summary& summary = r.summary;
  summary.id = piece.id;
  summary.draws = static_cast<std::uint32_t>(piece.draws.size());
  summary.triangles = piece.triangles;
  summary.path = piece_base(piece) + ".untold";
  r.bounds = piece.bounds;
  r.edge = piece.edge;
  r.node_path = piece.node_path;
  convert::to_untold_options o = writer_options(options, piece.shared);
  o.lod_files = false;  // each level is a job of its own
  auto out = convert::to_untold(piece.scene, o, r.report);
  if (!out) {
    write.into.error = "tile " + piece.id + ": cannot write: " + out.error().describe();
    return std::nullopt;
  }
  if (!write(summary.path, out->file)) return std::nullopt;
  summary.bytes = out->file.size();
  return r;
}

/// Where each mesh of a piece stands in the LOD policy after LOD job k: the
/// state LOD job k + 1 starts from (simplify.hpp: level j is simplified from
/// LOD0 and kept only when it shrinks enough below the last kept level, so
/// level k + 1 needs the count kept before it, not the levels themselves).
struct lod_progress {
  struct mesh_state {
    std::uint32_t next = 0;              // the next ratio to try
    std::uint32_t levels = 0;            // levels kept so far
    std::uint64_t last_kept = 0;         // triangles of the last kept level (LOD0 at first)
    std::uint32_t coarsest = no_ref;     // the ratio that made the last kept level
    std::uint64_t coarsest_base = 0;     // last_kept before it (to make it again)
  };
  std::vector<mesh_state> meshes;        // empty before LOD job 1
};

/// What LOD job k made (written false: no mesh has a level k, no file).
struct lod_file_result {
  bool written = false;
  std::uint64_t triangles = 0, bytes = 0;
  convert::conversion_report report;
};

/// Job `lod` k: LOD file k of a piece, every mesh at its level k (or its
/// coarsest), exactly as generate_lods + to_untold's LOD file k would make
/// it. Advances `progress` from LOD job k - 1's. Uses piece.scene's lods as
/// scratch and leaves them empty.
std::optional<lod_file_result> cook_piece_lod(tile_piece& piece, std::uint32_t level, lod_progress& progress,
                                              const tile_cook_options& options, const job_writer& write) {
  lod_file_result r;
  convert::scene& s = piece.scene;
  const auto fail = [&](const std::string& why) {
    write.into.error = "tile " + piece.id + ": LOD " + std::to_string(level) + ": " + why;
    return std::nullopt;
  };
  const std::size_t ratios = options.lods.ratios.size();
  std::vector<std::vector<std::uint32_t>> bases(s.meshes.size());
  std::vector<char> simplified(s.meshes.size(), 0);
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const convert::mesh& m = s.meshes[i];
    // As generate_lods: triangle lists only, skinned meshes (they deform) never.
    if (m.skin != no_ref || m.primitive != convert::topology::triangle_list || m.vertex_count() == 0) continue;
    bases[i] = convert::detail::triangle_list(m, m.indices);
    simplified[i] = !bases[i].empty();
  }
  if (progress.meshes.empty()) {
    progress.meshes.resize(s.meshes.size());
    for (std::size_t i = 0; i < s.meshes.size(); ++i) progress.meshes[i].last_kept = bases[i].size() / 3;
  }
  if (progress.meshes.size() != s.meshes.size()) return fail("the previous LOD job's state is for another piece");
  const auto options_of = [&](std::size_t i) {
    lod_options o = options.lods;
    o.lock_border = o.lock_border || piece.split[i] != 0;
    return o;
  };
  // Level k of each mesh that still has ratios to try.
  std::vector<std::vector<std::uint32_t>> made(s.meshes.size());
  bool any = false;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    auto& st = progress.meshes[i];
    if (!simplified[i] || st.levels + 1 != level) continue;  // no levels, or run out before k
    const lod_options o = options_of(i);
    while (st.next < ratios) {
      simplified_level l = simplify_level(bases[i], s.meshes[i].positions, s.meshes[i].vertex_count(), o, st.next, st.last_kept);
      const std::uint32_t ratio = st.next++;
      if (l.stalled()) continue;
      st.coarsest = ratio;
      st.coarsest_base = st.last_kept;
      st.last_kept = l.indices.size() / 3;
      ++st.levels;
      made[i] = std::move(l.indices);
      any = true;
      break;
    }
  }
  if (!any) return r;  // every mesh ran out of levels: no file k (nor any later one)
  // The rest at their coarsest level, made again (deterministic) from the state.
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const auto& st = progress.meshes[i];
    if (!simplified[i] || st.levels == 0) continue;
    if (made[i].empty()) {
      simplified_level l = simplify_level(bases[i], s.meshes[i].positions, s.meshes[i].vertex_count(), options_of(i),
                                          st.coarsest, st.coarsest_base);
      if (l.stalled()) return fail("the previous LOD job's state does not match the piece");
      made[i] = std::move(l.indices);
    }
    // to_untold writes LOD file k from lods[min(k, size) - 1]: the last entry here.
    s.meshes[i].lods.assign(st.levels, {});
    s.meshes[i].lods.back().indices = std::move(made[i]);
  }
  convert::to_untold_options o = writer_options(options, piece.shared);
  o.only_lod_level = level;
  auto out = convert::to_untold(s, o, r.report);
  r.triangles = scene_triangles(s, level);
  for (convert::mesh& m : s.meshes) m.lods.clear();
  if (!out) return fail("cannot write: " + out.error().describe());
  if (out->lod_files.size() != 1) return fail("the writer made no LOD file");
  if (!write(piece_base(piece) + ".lod" + std::to_string(level) + ".untold", out->lod_files[0])) return std::nullopt;
  r.written = true;
  r.bytes = out->lod_files[0].size();
  return r;
}

/// Adds LOD file `l` (the next level) to its tile's result. The planner
/// (docs/streaming.md) shows the full tile inside the streaming radius, LOD
/// k from its switch distance to the next level's, the HLOD after the last
/// LOD: so by default LOD1 starts at the streaming radius and each further
/// level one tile edge later (a LOD switching inside the radius would never
/// be shown over the full tile).
void add_lod_level(tile_result& t, const lod_file_result& l, const tile_cook_options& options, double streaming_radius) {
  if (!l.written) return;
  const std::size_t k = t.lod_distances.size();
  double distance = k == 0 ? streaming_radius : t.lod_distances.back();
  if (k < options.lod_distances.size()) distance = options.lod_distances[k];
  else if (k > 0) distance += t.edge;
  t.lod_distances.push_back(distance);
  t.summary.lod_triangles.push_back(l.triangles);
  t.summary.lod_bytes.push_back(l.bytes);
  t.report.append(l.report);
}

/// What a tile's HLOD job made (triangles 0: no HLOD file, the proxy was not smaller).
struct hlod_result_summary {
  std::uint64_t triangles = 0, bytes = 0;
};

/// Job `hlod`: the tile's proxy, when it is smaller than the tile.
std::optional<hlod_result_summary> cook_piece_hlod(const tile_piece& piece, const tile_cook_options& options,
                                                   const job_writer& write) {
  hlod_result_summary r;
  if (!options.write_hlods) return r;
  const std::vector<mat4> world = world_matrices(piece.scene);
  std::vector<hlod_part> parts;
  parts.reserve(piece.draws.size());
  for (const piece_draw& d : piece.draws) {
    const convert::mesh& m = piece.scene.meshes[d.mesh];
    hlod_part part{.mesh = &m, .world = d.node == no_ref ? identity_matrix : world[d.node]};
    if (m.material != no_ref) part.color = piece.scene.materials[m.material].base_color;
    parts.push_back(part);
  }
  hlod_result proxy = build_hlod(parts, options.hlod);
  if (proxy.triangles == 0 || proxy.triangles >= piece.triangles) return r;
  convert::scene h;
  h.name = piece.id + " hlod";
  h.nodes.push_back({.name = "hlod", .meshes = {0}});
  h.meshes.push_back(std::move(proxy.mesh));
  h.materials.push_back(std::move(proxy.material));
  convert::to_untold_options hlod_write = writer_options(options, false);
  hlod_write.type = file_type::hlod;
  hlod_write.lod_files = false;
  convert::conversion_report hlod_report;
  auto file = convert::to_untold(h, hlod_write, hlod_report);
  if (!file) {
    write.into.error = "tile " + piece.id + ": cannot write the HLOD: " + file.error().describe();
    return std::nullopt;
  }
  if (!write(piece_base(piece) + ".hlod.untold", file->file)) return std::nullopt;
  r.triangles = proxy.triangles;
  r.bytes = file->file.size();
  return r;
}
/// The manifest entry of a tile (or the shared bucket) from its jobs' results.
remote::tile manifest_entry(const tile_result& t, const hlod_result_summary* hlod, bool is_shared, bool grid,
                            double streaming_radius) {
  remote::tile entry;
  entry.tile_id = t.summary.id;
  entry.path = t.summary.path;
  entry.file_size_bytes = t.summary.bytes;
  entry.bounds.min = t.bounds.empty() ? std::array<double, 3>{0, 0, 0} : t.bounds.min;
  entry.bounds.max = t.bounds.empty() ? std::array<double, 3>{0, 0, 0} : t.bounds.max;
  entry.center = t.bounds.center();
  const std::string base = t.summary.path.substr(0, t.summary.path.size() - std::string_view(".untold").size());
  std::vector<remote::lod_level> lod_entries;
  for (std::size_t k = 0; k < t.lod_distances.size(); ++k)
    // file_size_bytes on LOD/HLOD entries (an extension field the spec
    // allows, kept by the manifest parser): the planner budgets each level
    // with its real size, and `manifest validate` checks it.
    lod_entries.push_back({.path = base + ".lod" + std::to_string(k + 1) + ".untold",
                           .switch_distance = t.lod_distances[k],
                           .extra = remote::json{{"file_size_bytes", t.summary.lod_bytes[k]}}});
  if (!lod_entries.empty()) entry.lod_levels = std::move(lod_entries);
  if (hlod != nullptr && hlod->triangles > 0) {
    const double last = t.lod_distances.empty() ? streaming_radius : t.lod_distances.back();
    const double hlod_distance = entry.lod_levels ? std::max(streaming_radius, last + t.edge) : streaming_radius;
    entry.hlod_levels = std::vector<remote::lod_level>{{.path = base + ".hlod.untold",
                                                        .switch_distance = hlod_distance,
                                                        .extra = remote::json{{"file_size_bytes", hlod->bytes}}}};
  }
  if (!grid && !is_shared) {
    entry.floor_id = 0;
    entry.quadtree_node_id = t.node_path;
  }
  return entry;
}

/// Every job's results, in plan order: what the manifest job assembles.
struct cook_results {
  std::vector<tile_result> tiles;
  std::vector<hlod_result_summary> hlods;  // per tile
  std::optional<tile_result> shared;
};

/// Writes the manifest and fills the report's summaries from `results`.
bool write_manifest_file(const cook_results& results, const tile_cook_options& options, bool grid, double edge,
                         double streaming_radius, const job_writer& write, const fs::path& output_dir) {
  tile_cook_report& report = write.into;
  std::set<std::tuple<int, std::string, std::string, std::string>> seen;
  {
    convert::conversion_report imported;
    imported.entries.swap(report.report.entries);
    merge_report(report.report, imported, seen);
  }
  remote::manifest manifest;
  manifest.version = grid ? 3 : 4;
  manifest.defaults.streaming_radius = streaming_radius;
  manifest.defaults.unload_radius = options.unload_radius.value_or(3 * edge);
  manifest.defaults.prefetch_radius = options.prefetch_radius;
  manifest.defaults.priority = options.priority;
  if (!grid) manifest.partitioning_mode = "quadtree_floor";
  box everything;
  for (std::size_t t = 0; t < results.tiles.size(); ++t) {
    const tile_result& r = results.tiles[t];
    merge_report(report.report, r.report, seen);
    manifest.tiles.push_back(manifest_entry(r, &results.hlods[t], false, grid, streaming_radius));
    everything.add(r.bounds);
    tile_summary summary = r.summary;
    summary.hlod_triangles = results.hlods[t].triangles;
    summary.hlod_bytes = results.hlods[t].bytes;
    report.tiles.push_back(std::move(summary));
  }
  if (results.shared) {
    merge_report(report.report, results.shared->report, seen);
    manifest.shared_bucket = manifest_entry(*results.shared, nullptr, true, grid, streaming_radius);
    everything.add(results.shared->bounds);
    report.shared = results.shared->summary;
  }
  if (grid)
    manifest.tile_size = remote::tile_size{
        .x = options.cell_size, .y = everything.empty() ? 0 : everything.max[1] - everything.min[1], .z = options.cell_size};
  const std::string text = remote::write_manifest(manifest) + "\n";
  if (!write(options.manifest_name, std::as_bytes(std::span(text)))) return false;
  report.manifest = output_dir / options.manifest_name;
  return true;
}

}  // namespace



bool parse_tiles_spec(std::string_view spec, tile_cook_options& o, std::string& error) {
  const auto number = [](std::string_view text, double& out) {
    if (text.empty()) return false;
    const std::string s(text);
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(out);
  };
  if (spec.starts_with("grid:")) {
    double size = 0;
    if (!number(spec.substr(5), size) || size <= 0) {
      error = "grid:SIZE needs a positive cell size in scene units, got '" + std::string(spec.substr(5)) + "'";
      return false;
    }
    o.partition = tile_cook_options::scheme::grid;
    o.cell_size = size;
    return true;
  }
  if (spec == "quadtree" || spec.starts_with("quadtree:")) {
    o.partition = tile_cook_options::scheme::quadtree;
    if (spec == "quadtree") return true;
    const std::string_view text = spec.substr(9);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n == 0) {
      error = "quadtree:MAXTRIS needs a positive triangle count, got '" + std::string(text) + "'";
      return false;
    }
    o.max_triangles = n;
    return true;
  }
  error = "--tiles expects grid:SIZE or quadtree[:MAXTRIS], got '" + std::string(spec) + "'";
  return false;
}


tile_cook_report cook_tiles(const convert::scene& s, const fs::path& output_dir, const tile_cook_options& options) {
  tile_cook_report report;
  report.report = s.report;
  report_progress(options, "partition", 0);
  const partition_result part = partition(s, options);
  if (!part.error.empty()) {
    report.error = part.error;
    return report;
  }
  report.source_triangles = part.source_triangles;
  report.split_draws = part.split_draws;
  report_progress(options, "partition", 1);

  std::error_code ec;
  fs::create_directories(output_dir / "tiles", ec);
  if (ec) {
    report.error = "cannot create directory " + quote_path((output_dir / "tiles").string()) + ": " + ec.message();
    report.io_failure = true;
    return report;
  }
  // The jobs of the distributed cook, in plan order, in this process: the
  // same functions on the same pieces (not stored), so the same bytes.
  const job_writer write{output_dir, report};
  const auto cook_one = [&](tile_piece& piece) -> std::optional<tile_result> {
    auto tile = cook_piece_file(piece, options, write);
    if (!tile) return std::nullopt;
    lod_progress lods;
    for (std::uint32_t k = 1; k <= options.lods.ratios.size(); ++k) {
      auto level = cook_piece_lod(piece, k, lods, options, write);
      if (!level) return std::nullopt;
      if (!level->written) break;  // no file k: no later one either
      add_lod_level(*tile, *level, options, part.streaming_radius);
    }
    return tile;
  };
  cook_results results;
  for (std::size_t t = 0; t < part.plans.size(); ++t) {
    report_progress(options, "tiles", static_cast<float>(t) / static_cast<float>(part.plans.size()));
    tile_piece piece = make_piece(s, part, part.plans[t], false);
    auto tile = cook_one(piece);
    if (!tile) return report;
    auto hlod = cook_piece_hlod(piece, options, write);
    if (!hlod) return report;
    results.tiles.push_back(std::move(*tile));
    results.hlods.push_back(*hlod);
  }
  report_progress(options, "tiles", 1);
  if (part.write_shared) {
    report_progress(options, "shared", 0);
    tile_piece piece = make_piece(s, part, {.id = "shared", .edge = part.edge, .pieces = part.shared}, true);
    results.shared = cook_one(piece);
    if (!results.shared) return report;
    report_progress(options, "shared", 1);
  }
  report_progress(options, "manifest", 0);
  if (!write_manifest_file(results, options, part.grid, part.edge, part.streaming_radius, write, output_dir)) return report;
  report_progress(options, "manifest", 1);
  return report;
}

tile_cook_report cook_tiles_file(const fs::path& input, const fs::path& output_dir, const tile_cook_options& options) {
  report_progress(options, "import", 0);
  model_import_result imported = import_model(input);
  report_progress(options, "import", 1);
  if (!imported) {
    tile_cook_report r;
    r.error = escaped(input.string()) + ": cannot import: " + escaped(imported.error);
    return r;
  }
  return cook_tiles(imported.scene, output_dir, options);
}

tile_source import_tile_source(const fs::path& input) {
  tile_source r;
  const auto bytes = read_file_bytes(input);
  if (!bytes) {
    r.error = "cannot read " + quote_path(input.string());
    r.io_failure = true;
    return r;
  }
  r.sha256 = to_hex(sha256_portable_of(*bytes));
  const byte_span head(*bytes);
  if (head.size() >= file_magic.size() && std::equal(file_magic.begin(), file_magic.end(), head.begin(),
                                                     [](std::uint8_t a, std::byte b) { return std::byte{a} == b; })) {
    r.error = quote_path(input.string()) + " is already a .untold file";
    return r;
  }
  if (const format_handler* handler = recognise(head)) {
    if (handler->import == nullptr) {
      r.error = quote_path(input.string()) + ": cook cannot import this format (" + std::string(handler->description) + ")";
      return r;
    }
    import_request request;
    request.input = input;
    request.bytes = head;
    auto scene = handler->import(request);
    if (!scene) {
      r.error = escaped(input.string()) + ": cannot import: " + scene.error().describe();
      return r;
    }
    r.scene = std::move(*scene);
    return r;
  }
  model_import_result imported = import_model(input);
  if (!imported) {
    r.error = escaped(input.string()) + ": cannot import: " + escaped(imported.error);
    return r;
  }
  r.scene = std::move(imported.scene);
  return r;
}


// ---- the distributed cook -------------------------------------------------------------------

std::string_view name(tile_job::kind k) noexcept {
  switch (k) {
    case tile_job::kind::tile: return "tile";
    case tile_job::kind::lod: return "lod";
    case tile_job::kind::hlod: return "hlod";
    case tile_job::kind::shared: return "shared";
    case tile_job::kind::manifest: return "manifest";
  }
  return "?";
}

namespace {

// A piece on disk is a .untold file (fileType tile, no records) holding one
// plugin chunk: the container's block digests and zstd come for free, and a
// damaged piece fails with the reader's rule id (R-HASH, R-CHUNK-RANGE ...).
constexpr std::string_view piece_plugin_id = "org.untold.tile-piece";
constexpr std::string_view piece_blob_kind = "untold tile piece";
constexpr std::uint32_t piece_blob_version = 1;

std::string piece_path_of(const std::string& id) { return "pieces/" + id + ".untold"; }

result<std::vector<std::byte>> piece_file(const tile_piece& p, const std::string& source_sha256) {
  std::vector<std::byte> blob;
  write_blob_header(blob, piece_blob_kind, piece_blob_version);
  std::vector<std::uint32_t> meshes, nodes;
  for (const piece_draw& d : p.draws) {
    meshes.push_back(d.mesh);
    nodes.push_back(d.node);
  }
  blob_writer{blob}(source_sha256, p.id, p.node_path, p.edge, p.shared, p.triangles, p.bounds.min, p.bounds.max, p.scene,
                    meshes, nodes, p.split);
  builder b{file_type::tile};
  b.add_plugin_chunk(piece_plugin_id, 1, piece_blob_version, blob);
  write_options o;
  o.compression.metadata = o.compression.data = {.method = compression::zstd, .level = 3};
  return b.finish(o);
}

/// Reads the piece a job cooks from; refuses a damaged one (the reader's
/// rule id), one of another plan or tile, and one that is not consistent.
struct piece_read {
  tile_piece piece;
  std::string error;
  bool io_failure = false;
};
piece_read read_piece(const fs::path& path, const std::string& source_sha256, const std::string& id) {
  piece_read r;
  const std::string where = "piece " + quote_path(path.string());
  const auto bytes = read_file_bytes(path);
  if (!bytes) {
    r.error = "cannot read " + where;
    r.io_failure = true;
    return r;
  }
  open_options o;
  o.integrity = integrity::full;
  // A piece is as trusted as the plan (it names it), and as large as its tile.
  o.limits.max_chunk_bytes = o.limits.max_total_bytes = std::uint64_t{1} << 40;
  o.limits.max_expansion = std::uint32_t{1} << 20;
  auto file = open(byte_span(*bytes), o);
  if (!file) {
    r.error = where + ": " + file.error().describe();
    return r;
  }
  const auto chunks = plugin_chunks(*file);
  const auto found = std::find_if(chunks.begin(), chunks.end(), [](const plugin_chunk_view& c) {
    return c.plugin_id == piece_plugin_id && c.chunk_version == piece_blob_version;
  });
  if (found == chunks.end()) {
    r.error = where + " holds no tile piece (version " + std::to_string(piece_blob_version) + ")";
    return r;
  }
  blob_reader in{found->payload};
  std::string sha;
  std::vector<std::uint32_t> meshes, nodes;
  tile_piece& p = r.piece;
  bool ok = read_blob_header(in, piece_blob_kind, piece_blob_version);
  if (ok) {
    in(sha, p.id, p.node_path, p.edge, p.shared, p.triangles, p.bounds.min, p.bounds.max, p.scene, meshes, nodes, p.split);
    ok = in.ok() && in.remaining() == 0 && meshes.size() == nodes.size() && p.split.size() == p.scene.meshes.size();
  }
  for (std::size_t i = 0; ok && i < meshes.size(); ++i) {
    ok = meshes[i] < p.scene.meshes.size() && (nodes[i] == no_ref || nodes[i] < p.scene.nodes.size());
    p.draws.push_back({.mesh = meshes[i], .node = nodes[i]});
  }
  if (!ok) {
    r.error = where + " is not a tile piece of this build";
    return r;
  }
  if (sha != source_sha256 || p.id != id) {
    r.error = where + " belongs to another plan (tile '" + escaped(p.id) + "', source SHA-256 " + escaped(sha) + ")";
    return r;
  }
  if (auto valid = convert::validate_model(p.scene); !valid) {
    r.error = where + ": the scene is not consistent: " + valid.error().describe();
    return r;
  }
  return r;
}

json compression_json(const chunk_compression& c) {
  return json{{"method", static_cast<int>(c.method)}, {"level", c.level}};
}

json report_json(const convert::conversion_report& report) {
  json entries = json::array();
  for (const convert::report_entry& e : report.entries)
    entries.push_back(json{{"severity", static_cast<int>(e.severity)}, {"what", e.what}, {"where", e.where}, {"reason", e.reason}, {"count", e.count}});
  return entries;
}

convert::conversion_report report_from(const json& entries) {
  convert::conversion_report r;
  for (const json& e : entries) {
    const int severity = e.at("severity").get<int>();
    if (severity < 0 || severity > 2) throw std::runtime_error("unknown report severity");
    r.entries.push_back({.severity = static_cast<convert::report_entry::kind>(severity),
                         .what = e.at("what").get<std::string>(),
                         .where = e.at("where").get<std::string>(),
                         .reason = e.at("reason").get<std::string>(),
                         .count = e.at("count").get<std::uint64_t>()});
  }
  return r;
}

json tile_result_json(const tile_result& t) {
  const tile_summary& s = t.summary;
  return json{{"id", s.id},
              {"path", s.path},
              {"bytes", s.bytes},
              {"triangles", s.triangles},
              {"draws", s.draws},
              {"bounds", t.bounds.empty() ? json(nullptr) : json{{"min", t.bounds.min}, {"max", t.bounds.max}}},
              {"edge", t.edge},
              {"node_path", t.node_path},
              {"report", report_json(t.report)}};
}

tile_result tile_result_from(const json& j) {
  tile_result t;
  tile_summary& s = t.summary;
  s.id = j.at("id").get<std::string>();
  s.path = j.at("path").get<std::string>();
  s.bytes = j.at("bytes").get<std::uint64_t>();
  s.triangles = j.at("triangles").get<std::uint64_t>();
  s.draws = j.at("draws").get<std::uint32_t>();
  if (!j.at("bounds").is_null()) {
    t.bounds.min = j.at("bounds").at("min").get<std::array<double, 3>>();
    t.bounds.max = j.at("bounds").at("max").get<std::array<double, 3>>();
  }
  t.edge = j.at("edge").get<double>();
  t.node_path = j.at("node_path").get<std::string>();
  t.report = report_from(j.at("report"));
  return t;
}

json lod_result_json(const lod_file_result& l, const lod_progress& progress) {
  json meshes = json::array();
  for (const auto& m : progress.meshes) meshes.push_back(json::array({m.next, m.levels, m.last_kept, m.coarsest, m.coarsest_base}));
  return json{{"written", l.written}, {"triangles", l.triangles}, {"bytes", l.bytes}, {"report", report_json(l.report)},
              {"progress", std::move(meshes)}};
}

lod_file_result lod_result_from(const json& j, lod_progress* progress) {
  lod_file_result l;
  l.written = j.at("written").get<bool>();
  l.triangles = j.at("triangles").get<std::uint64_t>();
  l.bytes = j.at("bytes").get<std::uint64_t>();
  l.report = report_from(j.at("report"));
  if (progress != nullptr)
    for (const json& m : j.at("progress")) {
      if (m.size() != 5) throw std::runtime_error("a LOD state entry has 5 numbers");
      progress->meshes.push_back({.next = m[0].get<std::uint32_t>(), .levels = m[1].get<std::uint32_t>(),
                                  .last_kept = m[2].get<std::uint64_t>(), .coarsest = m[3].get<std::uint32_t>(),
                                  .coarsest_base = m[4].get<std::uint64_t>()});
    }
  return l;
}

/// Reading JSON written by this file (a plan or a job's result): any field of
/// the wrong type or range is an error, never an exception that escapes.
template <class F>
bool guarded(std::string& error, const std::string& what, F&& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    error = what + ": " + e.what();
    return false;
  }
}
template <class F>
bool parse_guarded(const std::string& text, std::string& error, const std::string& what, F&& f) {
  return guarded(error, what, [&] { f(json::parse(text)); });
}

fs::path result_path(const tile_cook_plan& plan, std::size_t job) {
  return plan.state / ("job-" + std::to_string(job) + ".json");
}

std::string job_name(const tile_job& j) {
  if (j.what == tile_job::kind::manifest) return "manifest";
  std::string s = std::string(name(j.what)) + " " + j.tile;
  if (j.what == tile_job::kind::lod) s.append(" ").append(std::to_string(j.level));
  return s;
}

}  // namespace

tile_plan_result plan_tile_cook(const fs::path& input, const fs::path& output_dir, const fs::path& plan_path,
                                const tile_cook_options& options) {
  tile_plan_result r;
  tile_cook_plan& plan = r.plan;
  std::error_code ec;
  plan.source = fs::absolute(input, ec).lexically_normal();
  plan.output = fs::absolute(output_dir, ec).lexically_normal();
  plan.state = fs::absolute(plan_path, ec).lexically_normal();
  plan.state += ".d";
  plan.options = options;
  plan.options.progress = {};
  report_progress(options, "import", 0);
  tile_source source = import_tile_source(plan.source);
  report_progress(options, "import", 1);
  if (!source) {
    r.error = source.error;
    r.io_failure = source.io_failure;
    return r;
  }
  report_progress(options, "partition", 0);
  const partition_result part = partition(source.scene, options);
  if (!part.error.empty()) {
    r.error = part.error;
    return r;
  }
  report_progress(options, "partition", 1);
  plan.source_sha256 = source.sha256;
  plan.source_triangles = part.source_triangles;
  plan.split_draws = part.split_draws;
  plan.grid = part.grid;
  plan.edge = part.edge;
  plan.streaming_radius = part.streaming_radius;

  fs::create_directories(plan.state / "pieces", ec);
  if (ec) {
    r.error = "cannot create directory " + quote_path((plan.state / "pieces").string()) + ": " + ec.message();
    r.io_failure = true;
    return r;
  }
  // Each tile's piece, cut once here, and its jobs: the tile, its LOD levels
  // (each after the one before), its HLOD.
  const auto add_piece = [&](const tile_piece& piece, tile_job::kind what) {
    const std::string relative = piece_path_of(piece.id);
    auto file = piece_file(piece, plan.source_sha256);
    if (!file) {
      r.error = "tile " + piece.id + ": cannot write its piece: " + file.error().describe();
      return false;
    }
    if (auto failed = write_output(plan.state / relative, *file)) {
      r.error = std::move(failed->message);
      r.io_failure = true;
      return false;
    }
    plan.jobs.push_back({.what = what, .tile = piece.id, .piece = relative});
    for (std::uint32_t k = 1; k <= options.lods.ratios.size(); ++k) {
      tile_job lod{.what = tile_job::kind::lod, .tile = piece.id, .level = k, .piece = relative};
      if (k > 1) lod.after.push_back(plan.jobs.size() - 1);
      plan.jobs.push_back(std::move(lod));
    }
    if (what == tile_job::kind::tile && options.write_hlods)
      plan.jobs.push_back({.what = tile_job::kind::hlod, .tile = piece.id, .piece = relative});
    return true;
  };
  for (std::size_t t = 0; t < part.plans.size(); ++t) {
    report_progress(options, "pieces", static_cast<float>(t) / static_cast<float>(part.plans.size()));
    if (!add_piece(make_piece(source.scene, part, part.plans[t], false), tile_job::kind::tile)) return r;
  }
  if (part.write_shared &&
      !add_piece(make_piece(source.scene, part, {.id = "shared", .edge = part.edge, .pieces = part.shared}, true),
                 tile_job::kind::shared))
    return r;
  report_progress(options, "pieces", 1);
  plan.jobs.push_back({.what = tile_job::kind::manifest});
  const std::string text = tile_plan_json(plan);
  if (plan_path.has_parent_path()) fs::create_directories(plan_path.parent_path(), ec);
  if (auto failed = write_output(plan_path, std::as_bytes(std::span(text)))) {
    r.error = std::move(failed->message);
    r.io_failure = true;
  }
  return r;
}

std::string tile_plan_json(const tile_cook_plan& plan) {
  const tile_cook_options& o = plan.options;
  json overrides = json::object();
  for (std::size_t t = 0; t < o.compression.overrides.size(); ++t)
    if (o.compression.overrides[t]) overrides[std::to_string(t)] = compression_json(*o.compression.overrides[t]);
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json options{{"partition", o.partition == tile_cook_options::scheme::grid ? "grid" : "quadtree"},
               {"cell_size", o.cell_size},
               {"max_triangles", o.max_triangles},
               {"max_depth", o.max_depth},
               {"lods", {{"ratios", o.lods.ratios},
                         {"target_error", o.lods.target_error},
                         {"max_kept_fraction", o.lods.max_kept_fraction},
                         {"sloppy_fallback", o.lods.sloppy_fallback},
                         {"lock_border", o.lods.lock_border},
                         {"distance_per_error", o.lods.distance_per_error}}},
               {"hlod", {{"ratio", o.hlod.ratio}, {"target_error", o.hlod.target_error}}},
               {"write_hlods", o.write_hlods},
               {"lod_distances", o.lod_distances},
               {"streaming_radius", optional(o.streaming_radius)},
               {"unload_radius", optional(o.unload_radius)},
               {"prefetch_radius", optional(o.prefetch_radius)},
               {"priority", o.priority},
               {"compression", {{"metadata", compression_json(o.compression.metadata)},
                                {"data", compression_json(o.compression.data)},
                                {"overrides", std::move(overrides)}}},
               {"vertex_layout", static_cast<std::uint32_t>(o.vertex_layout)},
               {"manifest_name", o.manifest_name}};
  json jobs = json::array();
  for (const tile_job& j : plan.jobs) {
    json job{{"kind", name(j.what)}, {"tile", j.tile}};
    if (j.what == tile_job::kind::lod) job["level"] = j.level;
    if (!j.after.empty()) job["after"] = j.after;
    if (!j.piece.empty()) job["piece"] = j.piece;
    jobs.push_back(std::move(job));
  }
  return to_text(json{{"untold_tile_plan", 1},
                      {"source", plan.source.string()},
                      {"source_sha256", plan.source_sha256},
                      {"output", plan.output.string()},
                      {"source_triangles", plan.source_triangles},
                      {"split_draws", plan.split_draws},
                      {"partition", {{"grid", plan.grid}, {"edge", plan.edge}, {"streaming_radius", plan.streaming_radius}}},
                      {"options", std::move(options)},
                      {"jobs", std::move(jobs)}}) + "\n";
}

tile_plan_result read_tile_plan(const fs::path& plan_path) {
  tile_plan_result r;
  const auto bytes = read_file_bytes(plan_path);
  if (!bytes) {
    r.error = "cannot read " + quote_path(plan_path.string());
    r.io_failure = true;
    return r;
  }
  const std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  tile_cook_plan& plan = r.plan;
  const bool ok = parse_guarded(text, r.error, quote_path(plan_path.string()) + " is not a tile plan", [&](const json& j) {
    if (j.at("untold_tile_plan").get<int>() != 1) throw std::runtime_error("unknown plan version");
    plan.source = j.at("source").get<std::string>();
    plan.source_sha256 = j.at("source_sha256").get<std::string>();
    plan.output = j.at("output").get<std::string>();
    plan.source_triangles = j.at("source_triangles").get<std::uint64_t>();
    plan.split_draws = j.at("split_draws").get<std::uint64_t>();
    plan.grid = j.at("partition").at("grid").get<bool>();
    plan.edge = j.at("partition").at("edge").get<double>();
    plan.streaming_radius = j.at("partition").at("streaming_radius").get<double>();
    const json& o = j.at("options");
    tile_cook_options& t = plan.options;
    const std::string partition_name = o.at("partition").get<std::string>();
    if (partition_name != "grid" && partition_name != "quadtree") throw std::runtime_error("unknown partition");
    t.partition = partition_name == "grid" ? tile_cook_options::scheme::grid : tile_cook_options::scheme::quadtree;
    t.cell_size = o.at("cell_size").get<double>();
    t.max_triangles = o.at("max_triangles").get<std::uint64_t>();
    t.max_depth = o.at("max_depth").get<std::uint32_t>();
    const json& lods = o.at("lods");
    t.lods.ratios = lods.at("ratios").get<std::vector<float>>();
    t.lods.target_error = lods.at("target_error").get<float>();
    t.lods.max_kept_fraction = lods.at("max_kept_fraction").get<float>();
    t.lods.sloppy_fallback = lods.at("sloppy_fallback").get<bool>();
    t.lods.lock_border = lods.at("lock_border").get<bool>();
    t.lods.distance_per_error = lods.at("distance_per_error").get<float>();
    t.hlod.ratio = o.at("hlod").at("ratio").get<float>();
    t.hlod.target_error = o.at("hlod").at("target_error").get<float>();
    t.write_hlods = o.at("write_hlods").get<bool>();
    t.lod_distances = o.at("lod_distances").get<std::vector<double>>();
    const auto optional = [&o](const char* key) {
      return o.at(key).is_null() ? std::optional<double>{} : std::optional<double>{o.at(key).get<double>()};
    };
    t.streaming_radius = optional("streaming_radius");
    t.unload_radius = optional("unload_radius");
    t.prefetch_radius = optional("prefetch_radius");
    t.priority = o.at("priority").get<double>();
    const auto compression_from = [](const json& c) {
      const int method = c.at("method").get<int>();
      if (method < 0 || method > static_cast<int>(compression::meshopt_zstd)) throw std::runtime_error("unknown compression");
      return chunk_compression{.method = static_cast<compression>(method), .level = c.at("level").get<int>()};
    };
    const json& c = o.at("compression");
    t.compression.metadata = compression_from(c.at("metadata"));
    t.compression.data = compression_from(c.at("data"));
    for (const auto& [key, value] : c.at("overrides").items()) {
      const unsigned long type = std::stoul(key);
      if (type >= t.compression.overrides.size()) throw std::runtime_error("unknown chunk type in overrides");
      t.compression.overrides[type] = compression_from(value);
    }
    const auto layout = o.at("vertex_layout").get<std::uint32_t>();
    if (layout != static_cast<std::uint32_t>(vertex_layout::pbr_static_v1) &&
        layout != static_cast<std::uint32_t>(vertex_layout::pbr_quant_v1))
      throw std::runtime_error("unknown vertex layout");
    t.vertex_layout = static_cast<vertex_layout>(layout);
    t.manifest_name = o.at("manifest_name").get<std::string>();
    if (!untold::detail::is_safe_relative_path(t.manifest_name)) throw std::runtime_error("manifest_name is not a safe relative path");
    for (const json& job : j.at("jobs")) {
      const std::string kind = job.at("kind").get<std::string>();
      tile_job parsed{.tile = job.at("tile").get<std::string>()};
      if (kind == "tile") parsed.what = tile_job::kind::tile;
      else if (kind == "lod") parsed.what = tile_job::kind::lod;
      else if (kind == "hlod") parsed.what = tile_job::kind::hlod;
      else if (kind == "shared") parsed.what = tile_job::kind::shared;
      else if (kind == "manifest") parsed.what = tile_job::kind::manifest;
      else throw std::runtime_error("unknown job kind '" + kind + "'");
      if (parsed.what == tile_job::kind::lod) {
        parsed.level = job.at("level").get<std::uint32_t>();
        if (parsed.level == 0 || parsed.level > t.lods.ratios.size()) throw std::runtime_error("a LOD job's level is out of range");
      }
      if (job.contains("after")) parsed.after = job.at("after").get<std::vector<std::size_t>>();
      for (const std::size_t a : parsed.after)
        if (a >= plan.jobs.size()) throw std::runtime_error("a job can only wait for an earlier one");
      if (job.contains("piece")) parsed.piece = job.at("piece").get<std::string>();
      if ((parsed.what == tile_job::kind::manifest) != parsed.piece.empty())
        throw std::runtime_error("every job but the manifest reads a piece");
      if (!parsed.piece.empty() && !untold::detail::is_safe_relative_path(parsed.piece))
        throw std::runtime_error("a piece is not a safe relative path");
      plan.jobs.push_back(std::move(parsed));
    }
    if (plan.jobs.empty() || plan.jobs.back().what != tile_job::kind::manifest)
      throw std::runtime_error("the last job must be the manifest");
    for (std::size_t k = 0; k + 1 < plan.jobs.size(); ++k)
      if (plan.jobs[k].what == tile_job::kind::manifest) throw std::runtime_error("only the last job writes the manifest");
  });
  if (!ok) return r;
  std::error_code ec;
  plan.state = fs::absolute(plan_path, ec).lexically_normal();
  plan.state += ".d";
  return r;
}


tile_cook_report run_tile_job(const tile_cook_plan& plan, std::size_t job) {
  tile_cook_report report;
  if (job >= plan.jobs.size()) {
    report.error = "the plan has " + std::to_string(plan.jobs.size()) + " jobs; there is no job " + std::to_string(job);
    return report;
  }
  const tile_job& what = plan.jobs[job];
  const auto fail = [&](std::string message) {
    report.error = "job " + std::to_string(job) + " (" + job_name(what) + "): " + std::move(message);
    return report;
  };
  if (plan.state.empty()) return fail("the plan has no state folder: make it with plan_tile_cook");
  std::error_code ec;
  fs::create_directories(plan.output / "tiles", ec);
  if (!ec) fs::create_directories(plan.state, ec);
  if (ec) {
    report.io_failure = true;
    return fail("cannot create the output or state directory: " + ec.message());
  }
  const job_writer write{plan.output, report};
  const auto stamp_of = [&plan](std::size_t k) {
    const tile_job& j = plan.jobs[k];
    return json{{"source_sha256", plan.source_sha256}, {"job", k}, {"kind", name(j.what)}, {"tile", j.tile}, {"level", j.level}};
  };
  const auto save = [&](json result) {
    result["stamp"] = stamp_of(job);
    const std::string text = to_text(result) + "\n";
    if (auto failed = write_output(result_path(plan, job), std::as_bytes(std::span(text)))) {
      report.io_failure = true;
      report.error = failed->message;
      return false;
    }
    return true;
  };
  // The results of the jobs this one waits for (the manifest: every other job), in plan order.
  std::vector<std::size_t> inputs = what.after;
  if (what.what == tile_job::kind::manifest)
    for (std::size_t k = 0; k < job; ++k) inputs.push_back(k);
  std::vector<json> results;
  std::vector<std::string> missing;
  for (const std::size_t k : inputs) {
    const auto bytes = read_file_bytes(result_path(plan, k));
    if (!bytes) {
      missing.push_back(job_name(plan.jobs[k]) + " (job " + std::to_string(k) + ")");
      continue;
    }
    std::string why;
    const std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    const bool ok = parse_guarded(text, why, "the result of job " + std::to_string(k), [&](const json& j) {
      if (j.at("stamp") != stamp_of(k)) throw std::runtime_error("it belongs to another plan");
      results.push_back(j);
    });
    if (!ok) return fail(why);
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list.append(list.empty() ? "" : ", ").append(m);
    return fail(std::string(what.what == tile_job::kind::manifest ? "no manifest written: " : "") +
                "these jobs have not finished: " + list);
  }

  if (what.what == tile_job::kind::manifest) {
    cook_results assembled;
    std::string why;
    const bool ok = guarded(why, "the jobs' results", [&] {
      for (std::size_t k = 0; k < results.size(); ++k) {
        const tile_job& other = plan.jobs[k];
        const json& j = results[k];
        tile_result* owner = other.tile == "shared" ? (assembled.shared ? &*assembled.shared : nullptr)
                             : assembled.tiles.empty() || assembled.tiles.back().summary.id != other.tile
                                 ? nullptr
                                 : &assembled.tiles.back();
        switch (other.what) {
          case tile_job::kind::tile:
            assembled.tiles.push_back(tile_result_from(j.at("tile")));
            assembled.hlods.emplace_back();
            break;
          case tile_job::kind::shared: assembled.shared = tile_result_from(j.at("tile")); break;
          case tile_job::kind::lod: {
            if (owner == nullptr) throw std::runtime_error("a LOD job must follow its tile's job");
            const lod_file_result l = lod_result_from(j, nullptr);
            if (l.written && owner->lod_distances.size() + 1 != other.level)
              throw std::runtime_error("LOD " + std::to_string(other.level) + " of " + other.tile + " follows a missing level");
            add_lod_level(*owner, l, plan.options, plan.streaming_radius);
            break;
          }
          case tile_job::kind::hlod:
            if (owner == nullptr || other.tile == "shared") throw std::runtime_error("an HLOD job must follow its tile's job");
            assembled.hlods.back() = {.triangles = j.at("triangles").get<std::uint64_t>(), .bytes = j.at("bytes").get<std::uint64_t>()};
            break;
          case tile_job::kind::manifest: break;
        }
      }
    });
    if (!ok) return fail(why);
    report.source_triangles = plan.source_triangles;
    report.split_draws = plan.split_draws;
    if (!write_manifest_file(assembled, plan.options, plan.grid, plan.edge, plan.streaming_radius, write, plan.output))
      return fail(report.error);
    return report;
  }

  piece_read in = read_piece(plan.state / what.piece, plan.source_sha256, what.tile);
  if (!in.error.empty()) {
    report.io_failure = in.io_failure;
    return fail(in.error);
  }
  tile_piece& piece = in.piece;
  json result = json::object();
  switch (what.what) {
    case tile_job::kind::tile:
    case tile_job::kind::shared: {
      auto tile = cook_piece_file(piece, plan.options, write);
      if (!tile) return fail(report.error);
      result["tile"] = tile_result_json(*tile);
      (piece.shared ? report.shared : report.tiles.emplace_back()) = tile->summary;
      break;
    }
    case tile_job::kind::lod: {
      lod_progress progress;
      if (!results.empty()) {
        std::string why;
        if (!guarded(why, "the result of job " + std::to_string(what.after.front()),
                     [&] { (void)lod_result_from(results.front(), &progress); }))
          return fail(why);
      }
      auto level = cook_piece_lod(piece, what.level, progress, plan.options, write);
      if (!level) return fail(report.error);
      result = lod_result_json(*level, progress);
      break;
    }
    case tile_job::kind::hlod: {
      auto hlod = cook_piece_hlod(piece, plan.options, write);
      if (!hlod) return fail(report.error);
      result["triangles"] = hlod->triangles;
      result["bytes"] = hlod->bytes;
      break;
    }
    case tile_job::kind::manifest: break;
  }
  if (!save(std::move(result))) return fail(report.error);
  return report;
}

}  // namespace untold::tools
