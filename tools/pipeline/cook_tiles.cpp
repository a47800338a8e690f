// tools/pipeline/cook_tiles.cpp - the partitioning cook (see cook_tiles.hpp, docs/tiles.md).
#include "cook_tiles.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <untold/convert/to_untold.hpp>
#include <untold/matrix.hpp>
#include <untold/remote/manifest.hpp>

#include "files.hpp"
#include "import_model.hpp"
#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace fs = std::filesystem;
using convert::no_ref;

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
struct subset_result {
  convert::scene scene;
  box bounds;
  std::vector<bool> split;       // per subset mesh
  std::vector<hlod_part> parts;  // the pieces for the HLOD
  std::uint64_t triangles = 0;   // LOD0 triangles as drawn
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
        r.split.push_back(false);
      }
      index = whole_map[d.mesh];
      r.triangles += triangle_lists[d.mesh].size() / 3;
      for (std::size_t v = 0; v < source.vertex_count(); ++v) r.bounds.add(world_point(d.world, &source.positions[v * 3]));
    } else {
      index = static_cast<std::uint32_t>(out.meshes.size());
      out.meshes.push_back(submesh(source, p.triangles));
      r.split.push_back(true);
      r.triangles += p.triangles.size() / 3;
      const convert::mesh& cut = out.meshes.back();
      for (std::size_t v = 0; v < cut.vertex_count(); ++v) r.bounds.add(world_point(d.world, &cut.positions[v * 3]));
    }
    out.meshes[index].material = use_material(source.material);
    if (d.node != no_ref) out.nodes[node_map[d.node]].meshes.push_back(index);
    hlod_part part{.mesh = &s.meshes[d.mesh], .world = d.world, .indices = p.triangles};
    if (source.material != no_ref) part.color = s.materials[source.material].base_color;
    r.parts.push_back(part);
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
  const auto progress = [&options](std::string_view stage, float fraction) {
    if (options.progress) options.progress(stage, fraction);
  };
  if (auto ok = convert::validate_model(s); !ok) {
    report.error = "the scene is not consistent: " + ok.error().describe();
    return report;
  }
  const bool grid = options.partition == tile_cook_options::scheme::grid;
  if (grid ? !(options.cell_size > 0 && std::isfinite(options.cell_size)) : options.max_triangles == 0) {
    report.error = "the tile size must be positive";
    return report;
  }
  progress("partition", 0);

  // ---- draws ------------------------------------------------------------------------------
  const std::vector<mat4> world = world_matrices(s);
  std::vector<std::vector<std::uint32_t>> triangle_lists(s.meshes.size());
  for (std::size_t i = 0; i < s.meshes.size(); ++i) triangle_lists[i] = convert::detail::triangle_list(s.meshes[i], s.meshes[i].indices);
  std::vector<draw> draws;
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
    report.source_triangles += triangle_lists[d.mesh].size() / 3;
  }

  // ---- elements: whole draws, or the triangles of a draw larger than a tile --------------
  std::vector<piece> shared;
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
      ++report.split_draws;
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
  std::vector<tile_plan> plans;
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
  progress("partition", 1);

  // ---- write --------------------------------------------------------------------------------
  std::error_code ec;
  fs::create_directories(output_dir / "tiles", ec);
  if (ec) {
    report.error = "cannot create directory " + quote_path((output_dir / "tiles").string()) + ": " + ec.message();
    report.io_failure = true;
    return report;
  }
  std::set<std::tuple<int, std::string, std::string, std::string>> seen;
  {
    convert::conversion_report imported;
    imported.entries.swap(report.report.entries);
    merge_report(report.report, imported, seen);
  }
  const auto write = [&](const std::string& relative, byte_span bytes) {
    if (auto failed = write_output(output_dir / relative, bytes)) {
      report.error = std::move(failed->message);
      report.io_failure = true;
      return false;
    }
    report.written.push_back(output_dir / relative);
    report.total_bytes += bytes.size();
    return true;
  };
  convert::to_untold_options write_options;
  write_options.write.compression = options.compression;
  write_options.write.vertex_layout = options.vertex_layout;

  remote::manifest manifest;
  manifest.version = grid ? 3 : 4;
  const double edge = largest_edge > 0 ? largest_edge : 1;
  manifest.defaults.streaming_radius = options.streaming_radius.value_or(2 * edge);
  manifest.defaults.unload_radius = options.unload_radius.value_or(3 * edge);
  manifest.defaults.prefetch_radius = options.prefetch_radius;
  manifest.defaults.priority = options.priority;
  if (!grid) manifest.partitioning_mode = "quadtree_floor";
  box everything;

  // One tile (or the shared bucket): files, summary, manifest entry.
  const auto cook_one = [&](const tile_plan& plan, bool is_shared, tile_summary& summary,
                            remote::tile& entry) -> bool {
    subset_result sub = subset(s, draws, triangle_lists, plan.pieces, is_shared);
    summary.id = plan.id;
    summary.draws = static_cast<std::uint32_t>(plan.pieces.size());
    summary.triangles = sub.triangles;
    const std::string base = is_shared ? plan.id : "tiles/" + plan.id;
    summary.path = base + ".untold";
    for (std::size_t i = 0; i < sub.scene.meshes.size(); ++i) {
      convert::mesh& m = sub.scene.meshes[i];
      if (m.skin != no_ref) continue;  // skinned meshes deform: no simplified levels
      lod_options lods = options.lods;
      lods.lock_border = lods.lock_border || sub.split[i];
      generate_lods(m, lods);
    }
    write_options.type = is_shared ? file_type::shared : file_type::tile;
    write_options.lod_files = true;
    convert::conversion_report written_report;
    auto out = convert::to_untold(sub.scene, write_options, written_report);
    if (!out) {
      report.error = "tile " + plan.id + ": cannot write: " + out.error().describe();
      return false;
    }
    merge_report(report.report, written_report, seen);
    if (!write(summary.path, out->file)) return false;
    summary.bytes = out->file.size();
    entry.tile_id = plan.id;
    entry.path = summary.path;
    entry.file_size_bytes = summary.bytes;
    entry.bounds.min = sub.bounds.empty() ? std::array<double, 3>{0, 0, 0} : sub.bounds.min;
    entry.bounds.max = sub.bounds.empty() ? std::array<double, 3>{0, 0, 0} : sub.bounds.max;
    entry.center = sub.bounds.center();
    everything.add(sub.bounds);
    std::vector<remote::lod_level> lod_entries;
    // The planner (docs/streaming.md) shows the full tile inside the
    // streaming radius, LOD k from its switch distance to the next level's,
    // the HLOD after the last LOD: so by default LOD1 starts at the streaming
    // radius and each further level one tile edge later (a LOD switching
    // inside the radius would never be shown over the full tile).
    double distance = manifest.defaults.streaming_radius;
    for (std::size_t k = 0; k < out->lod_files.size(); ++k) {
      const std::string path = base + ".lod" + std::to_string(k + 1) + ".untold";
      if (!write(path, out->lod_files[k])) return false;
      summary.lod_triangles.push_back(scene_triangles(sub.scene, k + 1));
      summary.lod_bytes.push_back(out->lod_files[k].size());
      if (k < options.lod_distances.size()) distance = options.lod_distances[k];
      else if (k > 0) distance += plan.edge;
      // file_size_bytes on LOD/HLOD entries (an extension field the spec
      // allows, kept by the manifest parser): the planner budgets each level
      // with its real size, and `manifest validate` checks it.
      lod_entries.push_back({.path = path,
                             .switch_distance = distance,
                             .extra = remote::json{{"file_size_bytes", out->lod_files[k].size()}}});
    }
    if (!lod_entries.empty()) entry.lod_levels = std::move(lod_entries);
    if (options.write_hlods && !is_shared) {
      hlod_result proxy = build_hlod(sub.parts, options.hlod);
      if (proxy.triangles > 0 && proxy.triangles < summary.triangles) {
        convert::scene h;
        h.name = plan.id + " hlod";
        h.nodes.push_back({.name = "hlod", .meshes = {0}});
        h.meshes.push_back(std::move(proxy.mesh));
        h.materials.push_back(std::move(proxy.material));
        convert::to_untold_options hlod_write = write_options;
        hlod_write.type = file_type::hlod;
        hlod_write.lod_files = false;
        convert::conversion_report hlod_report;
        auto file = convert::to_untold(h, hlod_write, hlod_report);
        if (!file) {
          report.error = "tile " + plan.id + ": cannot write the HLOD: " + file.error().describe();
          return false;
        }
        const std::string path = base + ".hlod.untold";
        if (!write(path, file->file)) return false;
        summary.hlod_triangles = proxy.triangles;
        summary.hlod_bytes = file->file.size();
        const double hlod_distance = entry.lod_levels ? std::max(manifest.defaults.streaming_radius, distance + plan.edge)
                                                      : manifest.defaults.streaming_radius;
        entry.hlod_levels = std::vector<remote::lod_level>{{.path = path,
                                                            .switch_distance = hlod_distance,
                                                            .extra = remote::json{{"file_size_bytes", summary.hlod_bytes}}}};
      }
    }
    if (!grid && !is_shared) {
      entry.floor_id = 0;
      entry.quadtree_node_id = plan.node_path;
    }
    return true;
  };

  for (std::size_t t = 0; t < plans.size(); ++t) {
    progress("tiles", static_cast<float>(t) / static_cast<float>(plans.size()));
    tile_summary summary;
    remote::tile entry;
    if (!cook_one(plans[t], false, summary, entry)) return report;
    report.tiles.push_back(std::move(summary));
    manifest.tiles.push_back(std::move(entry));
  }
  progress("tiles", 1);
  const bool shared_extras = !s.skeletons.empty() || !s.animations.empty() || !s.lights.empty() || !s.cameras.empty();
  if (!shared.empty() || shared_extras) {
    progress("shared", 0);
    tile_summary summary;
    remote::tile entry;
    if (!cook_one({.id = "shared", .edge = edge, .pieces = std::move(shared)}, true, summary, entry)) return report;
    report.shared = std::move(summary);
    manifest.shared_bucket = std::move(entry);
    progress("shared", 1);
  }
  if (grid)
    manifest.tile_size = remote::tile_size{
        .x = options.cell_size, .y = everything.empty() ? 0 : everything.max[1] - everything.min[1], .z = options.cell_size};

  progress("manifest", 0);
  const std::string text = remote::write_manifest(manifest) + "\n";
  if (!write(options.manifest_name, std::as_bytes(std::span(text)))) return report;
  report.manifest = output_dir / options.manifest_name;
  progress("manifest", 1);
  return report;
}

tile_cook_report cook_tiles_file(const fs::path& input, const fs::path& output_dir, const tile_cook_options& options) {
  if (options.progress) options.progress("import", 0);
  model_import_result imported = import_model(input);
  if (options.progress) options.progress("import", 1);
  if (!imported) {
    tile_cook_report r;
    r.error = escaped(input.string()) + ": cannot import: " + escaped(imported.error);
    return r;
  }
  return cook_tiles(imported.scene, output_dir, options);
}

}  // namespace untold::tools
