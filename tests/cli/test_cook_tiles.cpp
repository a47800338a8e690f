// The partitioning cook (tools/pipeline/cook_tiles.hpp, `untold cook --tiles`): a
// generated city and real models, read back with the library.
#include "cli_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/convert/to_untold.hpp>
#include <untold/io.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/scene.hpp>
#include <untold/vertex.hpp>

#include "cook_tiles.hpp"
#include "import_model.hpp"

namespace {

using namespace untold;
using cli_test::scratch;
namespace fs = std::filesystem;

/// A box subdivided into n x n quads per face (welded per face), centred on the origin.
convert::mesh building(const std::string& name, float w, float h, float d, std::uint32_t n, std::uint32_t material) {
  convert::mesh m;
  m.name = name;
  m.material = material;
  const std::array<std::array<float, 3>, 6> normals{{{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}};
  for (const auto& nrm : normals) {
    // Two axes spanning the face, chosen so u x v = normal (counter-clockwise outside).
    std::array<float, 3> u{}, v{};
    if (nrm[0] != 0) u = {0, 0, -nrm[0]}, v = {0, 1, 0};
    if (nrm[1] != 0) u = {1, 0, 0}, v = {0, 0, -nrm[1]};
    if (nrm[2] != 0) u = {nrm[2], 0, 0}, v = {0, 1, 0};
    const auto base = static_cast<std::uint32_t>(m.vertex_count());
    for (std::uint32_t j = 0; j <= n; ++j)
      for (std::uint32_t i = 0; i <= n; ++i) {
        const float a = static_cast<float>(i) / static_cast<float>(n) * 2 - 1, b = static_cast<float>(j) / static_cast<float>(n) * 2 - 1;
        const float p[3] = {nrm[0] + a * u[0] + b * v[0], nrm[1] + a * u[1] + b * v[1], nrm[2] + a * u[2] + b * v[2]};
        m.positions.insert(m.positions.end(), {p[0] * w / 2, p[1] * h / 2 + h / 2, p[2] * d / 2});
        m.normals.insert(m.normals.end(), {nrm[0], nrm[1], nrm[2]});
        m.uv0.insert(m.uv0.end(), {static_cast<float>(i) / static_cast<float>(n), static_cast<float>(j) / static_cast<float>(n)});
      }
    for (std::uint32_t j = 0; j < n; ++j)
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t q = base + j * (n + 1) + i;
        m.indices.insert(m.indices.end(), {q, q + 1, q + n + 2, q, q + n + 2, q + n + 1});
      }
  }
  return m;
}

/// A gently rolling ground, `cells` x `cells` quads over [-half, half]^2.
convert::mesh terrain(float half, std::uint32_t cells) {
  convert::mesh m;
  m.name = "terrain";
  m.material = 0;
  for (std::uint32_t j = 0; j <= cells; ++j)
    for (std::uint32_t i = 0; i <= cells; ++i) {
      const float x = -half + 2 * half * static_cast<float>(i) / static_cast<float>(cells);
      const float z = -half + 2 * half * static_cast<float>(j) / static_cast<float>(cells);
      m.positions.insert(m.positions.end(), {x, 0.5f * std::sin(x * 0.05f) * std::cos(z * 0.07f), z});
      m.normals.insert(m.normals.end(), {0, 1, 0});
    }
  for (std::uint32_t j = 0; j < cells; ++j)
    for (std::uint32_t i = 0; i < cells; ++i) {
      const std::uint32_t q = j * (cells + 1) + i;
      m.indices.insert(m.indices.end(), {q, q + cells + 1, q + 1, q + 1, q + cells + 1, q + cells + 2});
    }
  return m;
}

/// A city: a terrain larger than any tile, blocks (parent nodes) of unique
/// buildings (rotated, scaled children), one tree mesh instanced all over the
/// city, and one kiosk mesh instanced twice inside a single block.
convert::scene city(std::uint32_t blocks_per_side, std::uint32_t buildings_per_block) {
  convert::scene s;
  s.name = "city";
  s.materials.push_back({.name = "ground", .base_color = {0.3f, 0.5f, 0.2f, 1}});
  s.materials.push_back({.name = "concrete", .base_color = {0.7f, 0.7f, 0.7f, 1}});
  s.materials.push_back({.name = "brick", .base_color = {0.6f, 0.25f, 0.2f, 1}});
  s.materials.push_back({.name = "leaves", .base_color = {0.1f, 0.6f, 0.1f, 1}});
  const float block = 40;
  const float half = block * static_cast<float>(blocks_per_side) / 2;
  s.meshes.push_back(terrain(half, 64));
  s.nodes.push_back({.name = "terrain", .meshes = {0}});
  const auto tree = static_cast<std::uint32_t>(s.meshes.size());
  s.meshes.push_back(building("tree", 2, 6, 2, 2, 3));
  const auto kiosk = static_cast<std::uint32_t>(s.meshes.size());
  s.meshes.push_back(building("kiosk", 3, 3, 3, 2, 1));
  std::uint32_t seed = 1;
  const auto rnd = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / static_cast<float>(1u << 24);
  };
  for (std::uint32_t bz = 0; bz < blocks_per_side; ++bz)
    for (std::uint32_t bx = 0; bx < blocks_per_side; ++bx) {
      const auto parent = static_cast<std::uint32_t>(s.nodes.size());
      const float cx = -half + block * (static_cast<float>(bx) + 0.5f), cz = -half + block * (static_cast<float>(bz) + 0.5f);
      s.nodes.push_back({.name = "block", .local = {.translation = {cx, 0, cz}}});
      for (std::uint32_t k = 0; k < buildings_per_block; ++k) {
        const auto mi = static_cast<std::uint32_t>(s.meshes.size());
        s.meshes.push_back(building("b" + std::to_string(mi), 4 + 4 * rnd(), 6 + 30 * rnd(), 4 + 4 * rnd(), 3, 1 + (mi % 2)));
        const float angle = rnd() * std::numbers::pi_v<float>;
        s.nodes.push_back({.name = "building", .parent = parent,
                           .local = {.translation = {(rnd() - 0.5f) * 30, 0, (rnd() - 0.5f) * 30},
                                     .rotation = {0, std::sin(angle / 2), 0, std::cos(angle / 2)},
                                     .scale = {1, 1 + rnd() * 0.2f, 1}},
                           .meshes = {mi}});
      }
      s.nodes.push_back({.name = "tree", .parent = parent, .local = {.translation = {18, 0, 18}}, .meshes = {tree}});
    }
  s.nodes.push_back({.name = "kiosk a", .local = {.translation = {-half + 5, 0, -half + 5}}, .meshes = {kiosk}});
  s.nodes.push_back({.name = "kiosk b", .local = {.translation = {-half + 9, 0, -half + 5}}, .meshes = {kiosk}});
  return s;
}

using triangle_key = std::array<std::int64_t, 9>;

/// A world-space triangle, quantised to 1/1024 of a unit, rotated so its
/// smallest corner comes first (the winding is kept).
triangle_key key_of(const std::array<std::array<double, 3>, 3>& t) {
  std::array<std::array<std::int64_t, 3>, 3> q{};
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t c = 0; c < 3; ++c) q[k][c] = std::llround(t[k][c] * 1024);
  const std::size_t first = static_cast<std::size_t>(std::min_element(q.begin(), q.end()) - q.begin());
  triangle_key key{};
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t c = 0; c < 3; ++c) key[k * 3 + c] = q[(first + k) % 3][c];
  return key;
}

std::array<double, 3> to_world(const mat4& w, const std::array<float, 3>& p) {
  return {static_cast<double>(w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12]),
          static_cast<double>(w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13]),
          static_cast<double>(w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14])};
}

/// Every triangle a scene draws, in world space (a mesh at n nodes n times).
std::map<triangle_key, int> scene_triangles(const convert::scene& s) {
  std::map<triangle_key, int> out;
  const auto world = tools::world_matrices(s);
  for (std::size_t n = 0; n < s.nodes.size(); ++n)
    for (std::uint32_t mi : s.nodes[n].meshes) {
      const convert::mesh& m = s.meshes[mi];
      if (m.primitive != convert::topology::triangle_list) continue;
      const auto list = convert::detail::triangle_list(m, m.indices);
      for (std::size_t t = 0; t + 2 < list.size(); t += 3) {
        std::array<std::array<double, 3>, 3> tri{};
        for (std::size_t k = 0; k < 3; ++k) {
          const float* p = &m.positions[std::size_t{list[t + k]} * 3];
          tri[k] = to_world(world[n], {p[0], p[1], p[2]});
        }
        ++out[key_of(tri)];
      }
    }
  return out;
}

/// Every triangle a .untold file draws, in world space; adds to `out`, returns the count.
std::uint64_t file_triangles(const fs::path& file, std::map<triangle_key, int>* out) {
  auto a = open_file(file);
  REQUIRE_MESSAGE(a, file.string() << ": " << a.error().describe());
  const scene_walk walk = walk_scene(a->asset);
  std::uint64_t count = 0;
  for (std::uint32_t i = 0; i < a->asset.meshes().size(); ++i) {
    const auto m = resolve_mesh(a->asset, i);
    REQUIRE(m);
    const auto vertices = pbr_vertex_view::from_bytes(m->vertices);
    REQUIRE(vertices);
    const mat4& w = walk.world[*m->entity_row];
    for (std::size_t t = 0; t + 2 < m->indices.size(); t += 3) {
      ++count;
      if (out == nullptr) continue;
      std::array<std::array<double, 3>, 3> tri{};
      for (std::size_t k = 0; k < 3; ++k) tri[k] = to_world(w, vertices->position(m->indices[t + k]));
      ++(*out)[key_of(tri)];
    }
  }
  return count;
}

std::string file_bytes(const fs::path& p) { return cli_test::read_text(p); }

/// Checks a cook's output against its source scene: every source triangle in
/// exactly one tile or the shared bucket, LOD counts strictly decreasing (as
/// read back), HLODs below `hlod_fraction` of their tile, the manifest as reported.
void check_cook(const convert::scene& source, const fs::path& dir, const tools::tile_cook_report& r, double hlod_fraction) {
  REQUIRE_MESSAGE(r, r.error);
  auto m = remote::read_manifest_file(r.manifest);
  REQUIRE_MESSAGE(m, m.error().describe());
  REQUIRE(m->tiles.size() == r.tiles.size());

  std::map<triangle_key, int> cooked;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < r.tiles.size(); ++i) {
    const tools::tile_summary& t = r.tiles[i];
    const remote::tile& entry = m->tiles[i];
    CHECK(entry.tile_id == t.id);
    CHECK(entry.file_size_bytes == fs::file_size(dir / entry.path));
    const std::uint64_t lod0 = file_triangles(dir / entry.path, &cooked);
    CHECK(lod0 == t.triangles);
    total += lod0;
    std::uint64_t previous = lod0;
    const auto lods = entry.lod_levels.value_or(std::vector<remote::lod_level>{});
    REQUIRE(lods.size() == t.lod_triangles.size());
    for (std::size_t k = 0; k < lods.size(); ++k) {
      // Every entry with a file declares its size, LOD and HLOD entries too.
      REQUIRE(lods[k].extra.contains("file_size_bytes"));
      CHECK(lods[k].extra["file_size_bytes"].get<std::uint64_t>() == fs::file_size(dir / lods[k].path));
      CHECK(lods[k].extra["file_size_bytes"].get<std::uint64_t>() == t.lod_bytes[k]);
      const std::uint64_t n = file_triangles(dir / lods[k].path, nullptr);
      CHECK(n == t.lod_triangles[k]);
      CHECK(n < previous);
      previous = n;
      // Default bands (docs/tiles.md): LOD1 from the streaming radius, where the full tile stops showing.
      if (k == 0) CHECK(lods[k].switch_distance == m->defaults.streaming_radius);
      if (k > 0) CHECK(lods[k].switch_distance > lods[k - 1].switch_distance);
    }
    if (entry.hlod_levels) {
      const remote::lod_level& hlod = entry.hlod_levels->front();
      REQUIRE(hlod.extra.contains("file_size_bytes"));
      // The HLOD starts beyond the streaming radius and after the last LOD band's start.
      CHECK(hlod.switch_distance >= m->defaults.streaming_radius);
      if (!lods.empty()) CHECK(hlod.switch_distance > lods.back().switch_distance);
      CHECK(hlod.extra["file_size_bytes"].get<std::uint64_t>() == fs::file_size(dir / hlod.path));
      CHECK(hlod.extra["file_size_bytes"].get<std::uint64_t>() == t.hlod_bytes);
      const std::uint64_t h = file_triangles(dir / entry.hlod_levels->front().path, nullptr);
      CHECK(h == t.hlod_triangles);
      // The ratio holds from a few hundred triangles up; below that the sloppy
      // grid that meets it collapses everything, and the proxy is just smaller.
      if (lod0 >= 200) CHECK(static_cast<double>(h) <= hlod_fraction * static_cast<double>(lod0));
      CHECK(h < lod0);
    } else {
      CHECK(lod0 < 10);  // only tiny tiles have no proxy smaller than themselves
    }
  }
  if (m->shared_bucket) {
    REQUIRE(r.shared);
    CHECK(m->shared_bucket->file_size_bytes == fs::file_size(dir / m->shared_bucket->path));
    total += file_triangles(dir / m->shared_bucket->path, &cooked);
  }
  const auto expected = scene_triangles(source);
  std::uint64_t expected_total = 0;
  for (const auto& [k, n] : expected) expected_total += static_cast<std::uint64_t>(n);
  CHECK(total == expected_total);
  CHECK(total == r.source_triangles);
  CHECK(cooked == expected);  // the same triangles, each as often as the source draws it

  // The manifest round-trips through the library's writer.
  const std::string text = cli_test::read_text(r.manifest);
  auto again = remote::parse_manifest(remote::write_manifest(*m));
  REQUIRE(again);
  CHECK(remote::write_manifest(*again) == remote::write_manifest(*m));
  CHECK(nlohmann::json::parse(text) == nlohmann::json::parse(remote::write_manifest(*m)));
}

}  // namespace

TEST_CASE("parse_tiles_spec") {
  tools::tile_cook_options o;
  std::string why;
  CHECK(tools::parse_tiles_spec("grid:64", o, why));
  CHECK(o.partition == tools::tile_cook_options::scheme::grid);
  CHECK(o.cell_size == 64);
  CHECK(tools::parse_tiles_spec("grid:12.5", o, why));
  CHECK(o.cell_size == 12.5);
  CHECK(tools::parse_tiles_spec("quadtree", o, why));
  CHECK(o.partition == tools::tile_cook_options::scheme::quadtree);
  CHECK(tools::parse_tiles_spec("quadtree:5000", o, why));
  CHECK(o.max_triangles == 5000);
  for (const char* bad : {"grid", "grid:", "grid:0", "grid:-3", "grid:inf", "grid:nan", "grid:4x", "quadtree:0",
                          "quadtree:-1", "quadtree:12abc", "octree:4", ""}) {
    why.clear();
    CHECK_MESSAGE(!tools::parse_tiles_spec(bad, o, why), bad);
    CHECK(!why.empty());
  }
}

TEST_CASE("cook_tiles grid: a city of thousands of entities, instancing, a terrain larger than a tile") {
  const convert::scene s = city(8, 30);  // 64 blocks x 30 buildings + trees + terrain + kiosks
  REQUIRE(s.nodes.size() > 2000);
  const fs::path dir = scratch("tiles_city_grid");
  tools::tile_cook_options o;
  std::string why;
  REQUIRE(tools::parse_tiles_spec("grid:80", o, why));
  const tools::tile_cook_report r = tools::cook_tiles(s, dir, o);
  check_cook(s, dir, r, o.hlod.ratio);
  CHECK(r.tiles.size() == 16);    // 320 m / 80 m = 4 x 4 cells
  CHECK(r.split_draws == 1);      // the terrain
  REQUIRE(r.shared);
  CHECK(r.shared->draws == 64);   // the tree, instanced in every block
  auto m = remote::read_manifest_file(r.manifest);
  REQUIRE(m);
  CHECK(m->version == 3);
  REQUIRE(m->tile_size);
  CHECK(m->tile_size->x == 80);
  CHECK(m->defaults.streaming_radius == 160);
  CHECK(m->defaults.unload_radius == 240);
  // The kiosk is instanced twice inside one cell: it stays in that tile.
  std::size_t kiosk_tiles = 0;
  for (const auto& t : m->tiles) {
    auto a = open_file(dir / t.path);
    REQUIRE(a);
    for (const auto& mesh : a->asset.meshes()) kiosk_tiles += a->asset.string(mesh.mesh_name_offset) == "kiosk" ? 1 : 0;
  }
  CHECK(kiosk_tiles == 2);
  // Every tile has LODs, and the city's LOD1 is well below LOD0.
  for (const auto& t : r.tiles) CHECK(!t.lod_triangles.empty());
}

TEST_CASE("cook_tiles is deterministic: the same scene twice gives the same bytes") {
  const convert::scene s = city(3, 10);
  const fs::path a = scratch("tiles_det_a"), b = scratch("tiles_det_b");
  tools::tile_cook_options o;
  o.cell_size = 50;
  const auto ra = tools::cook_tiles(s, a, o);
  const auto rb = tools::cook_tiles(s, b, o);
  REQUIRE(ra);
  REQUIRE(rb);
  REQUIRE(ra.written.size() == rb.written.size());
  for (std::size_t i = 0; i < ra.written.size(); ++i) {
    CHECK(ra.written[i].lexically_relative(a) == rb.written[i].lexically_relative(b));
    CHECK(file_bytes(ra.written[i]) == file_bytes(rb.written[i]));
  }
}

TEST_CASE("cook_tiles quadtree: version 4, leaves within MAXTRIS, floor and node ids") {
  const convert::scene s = city(6, 20);
  const fs::path dir = scratch("tiles_city_quadtree");
  tools::tile_cook_options o;
  std::string why;
  REQUIRE(tools::parse_tiles_spec("quadtree:20000", o, why));
  const tools::tile_cook_report r = tools::cook_tiles(s, dir, o);
  check_cook(s, dir, r, o.hlod.ratio);
  auto m = remote::read_manifest_file(r.manifest);
  REQUIRE(m);
  CHECK(m->version == 4);
  CHECK(m->partitioning_mode == "quadtree_floor");
  CHECK(!m->tile_size);
  REQUIRE(m->tiles.size() > 4);
  for (std::size_t i = 0; i < m->tiles.size(); ++i) {
    CHECK(r.tiles[i].triangles <= 20000);
    REQUIRE(m->tiles[i].quadtree_node_id);
    CHECK(m->tiles[i].quadtree_node_id->get<std::string>() == m->tiles[i].tile_id);
    CHECK(m->tiles[i].floor_id == remote::json(0));
  }
}

TEST_CASE("cook_tiles: options reach the manifest (radii, LOD distances, no HLOD)") {
  const convert::scene s = city(2, 8);
  const fs::path dir = scratch("tiles_options");
  tools::tile_cook_options o;
  o.cell_size = 40;
  o.streaming_radius = 100;
  o.prefetch_radius = 150;
  o.unload_radius = 200;
  o.priority = 3;
  o.lod_distances = {25, 50};
  o.write_hlods = false;
  const auto r = tools::cook_tiles(s, dir, o);
  REQUIRE_MESSAGE(r, r.error);
  auto m = remote::read_manifest_file(r.manifest);
  REQUIRE(m);
  CHECK(m->defaults.streaming_radius == 100);
  CHECK(m->defaults.prefetch_radius == 150);
  CHECK(m->defaults.unload_radius == 200);
  CHECK(m->defaults.priority == 3);
  for (const auto& t : m->tiles) {
    CHECK(!t.hlod_levels);
    REQUIRE(t.lod_levels);
    CHECK(t.lod_levels->at(0).switch_distance == 25);
    if (t.lod_levels->size() > 1) CHECK(t.lod_levels->at(1).switch_distance == 50);
    if (t.lod_levels->size() > 2) CHECK(t.lod_levels->at(2).switch_distance == 90);  // one cell after the last given
  }
}

TEST_CASE("cook_tiles on real models (assimp-testmodels)") {
  for (const char* rel : {"glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb", "OBJ/spider.obj"}) {
    CAPTURE(rel);
    const fs::path model = cli_test::assimp_model(rel);
    tools::model_import_result imported = tools::import_model(model);
    REQUIRE_MESSAGE(imported, imported.error);
    // A grid a few cells across the model, whatever its units.
    const auto world = tools::world_matrices(imported.scene);
    double lo = 1e300, hi = -1e300;
    for (std::size_t n = 0; n < imported.scene.nodes.size(); ++n)
      for (std::uint32_t mi : imported.scene.nodes[n].meshes) {
        const auto& mesh = imported.scene.meshes[mi];
        for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
          const auto p = to_world(world[n], {mesh.positions[v * 3], mesh.positions[v * 3 + 1], mesh.positions[v * 3 + 2]});
          lo = std::min({lo, p[0], p[2]});
          hi = std::max({hi, p[0], p[2]});
        }
      }
    REQUIRE(hi > lo);
    const fs::path dir = scratch(std::string("tiles_real_") + fs::path(rel).stem().string());
    tools::tile_cook_options o;
    o.cell_size = (hi - lo) / 3;
    const auto r = tools::cook_tiles_file(model, dir, o);
    check_cook(imported.scene, dir, r, o.hlod.ratio);
    CHECK(r.tiles.size() >= 2);
  }
}

/// Every file under `root`: relative path -> bytes.
std::map<std::string, std::string> tree_of(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file()) out[entry.path().lexically_relative(root).string()] = file_bytes(entry.path());
  return out;
}

namespace {

/// 2CylinderEngine copied into its own scratch folder `name`: the source a
/// distributed-cook test plans from (and may replace).
fs::path engine_source(const std::string& name) {
  const fs::path source = scratch(name) / "engine.glb";
  fs::copy_file(cli_test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"), source,
                fs::copy_options::overwrite_existing);
  return source;
}

/// The plan's jobs for `spec`, in reverse order and with a retry, give
/// cook_tiles' bytes. One test case per partition keeps each well inside the
/// ctest timeout under ASan.
void check_jobs_match_single_cook(const char* spec) {
  const fs::path source = engine_source(std::string("tiles_jobs_") + std::string(spec).substr(0, 4));
  const fs::path dir = source.parent_path();
  {
    CAPTURE(spec);
    tools::tile_cook_options o;
    std::string why;
    REQUIRE(tools::parse_tiles_spec(spec, o, why));
    // Options that must travel through the plan to every job.
    o.vertex_layout = vertex_layout::pbr_quant_v1;
    o.compression.data = {.method = compression::zstd, .level = 9};
    o.lods.ratios = {0.5f, 0.2f};
    o.streaming_radius = 333.25;
    const fs::path single = dir / (std::string(spec).substr(0, 4) + "_single"), many = dir / (std::string(spec).substr(0, 4) + "_jobs");
    const auto r = tools::cook_tiles_file(source, single, o);
    REQUIRE_MESSAGE(r, r.error);

    const fs::path plan_path = dir / (std::string(spec).substr(0, 4) + "_plan") / "plan.json";
    auto planned = tools::plan_tile_cook(source, many, plan_path, o);
    REQUIRE_MESSAGE(planned, planned.error);
    const auto read = tools::read_tile_plan(plan_path);
    REQUIRE_MESSAGE(read, read.error);
    CHECK(tools::tile_plan_json(read.plan) == tools::tile_plan_json(planned.plan));
    const auto& jobs = read.plan.jobs;
    // Per tile: the tile, one job per LOD level, the HLOD; the shared bucket and its levels; the manifest.
    const std::size_t levels = o.lods.ratios.size();
    REQUIRE(jobs.size() == r.tiles.size() * (levels + 2) + (r.shared ? levels + 1 : 0) + 1);
    CHECK(jobs.back().what == tools::tile_job::kind::manifest);
    REQUIRE(jobs[1].what == tools::tile_job::kind::lod);
    REQUIRE(jobs[2].what == tools::tile_job::kind::lod);
    CHECK((jobs[1].level == 1 && jobs[1].after.empty() && jobs[1].tile == jobs[0].tile));
    CHECK((jobs[2].level == 2 && jobs[2].after == std::vector<std::size_t>{1}));
    for (const auto& j : jobs)  // every job but the manifest reads a piece cut at plan time
      if (j.what != tools::tile_job::kind::manifest) CHECK(fs::exists(read.plan.state / j.piece));

    // The manifest job first: refused, naming the jobs it waits for; no manifest.
    const auto early = tools::run_tile_job(read.plan, jobs.size() - 1);
    CHECK(early.error.find("have not finished: tile " + jobs[0].tile + " (job 0)") != std::string::npos);
    CHECK_FALSE(fs::exists(many / "manifest.json"));
    // LOD level 2 before level 1: refused, naming it.
    const auto level2 = tools::run_tile_job(read.plan, 2);
    CHECK_MESSAGE(level2.error.find("have not finished: lod " + jobs[0].tile + " 1 (job 1)") != std::string::npos, level2.error);
    // Every LOD level 1 first, then the rest in reverse order (a level after the one before it).
    for (std::size_t k = 0; k + 1 < jobs.size(); ++k)
      if (jobs[k].what == tools::tile_job::kind::lod && jobs[k].level == 1) REQUIRE(tools::run_tile_job(read.plan, k));
    for (std::size_t k = jobs.size() - 1; k-- > 0;) {
      if (jobs[k].what == tools::tile_job::kind::lod && jobs[k].level > 1) continue;
      const auto done = tools::run_tile_job(read.plan, k);
      REQUIRE_MESSAGE(done, done.error);
    }
    for (std::size_t k = 0; k + 1 < jobs.size(); ++k)
      if (jobs[k].what == tools::tile_job::kind::lod && jobs[k].level > 1) REQUIRE(tools::run_tile_job(read.plan, k));
    REQUIRE(tools::run_tile_job(read.plan, 0));  // a retry rewrites the same bytes
    REQUIRE(tools::run_tile_job(read.plan, 1));
    const auto manifest = tools::run_tile_job(read.plan, jobs.size() - 1);
    REQUIRE_MESSAGE(manifest, manifest.error);
    CHECK(manifest.tiles.size() == r.tiles.size());
    CHECK(tree_of(many) == tree_of(single));
    CHECK(tools::run_tile_job(read.plan, jobs.size()).error.find("there is no job") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("distributed cook: a grid plan's jobs, in any order and retried, give cook_tiles' bytes") {
  check_jobs_match_single_cook("grid:150");
}

TEST_CASE("distributed cook: a quadtree plan's jobs, in any order and retried, give cook_tiles' bytes") {
  check_jobs_match_single_cook("quadtree:12000");
}

TEST_CASE("distributed cook: a damaged or foreign piece and a plan that is not one are refused") {
  const fs::path source = engine_source("tiles_jobs_changed");
  const fs::path dir = source.parent_path();
  tools::tile_cook_options grid150;
  grid150.cell_size = 150;
  auto planned = tools::plan_tile_cook(source, dir / "changed", dir / "changed_plan.json", grid150);
  REQUIRE_MESSAGE(planned, planned.error);
  const auto& plan = planned.plan;
  // Jobs read pieces, not the source: a source changed after planning does not matter.
  fs::copy_file(cli_test::assimp_model("glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"), source,
                fs::copy_options::overwrite_existing);
  REQUIRE(tools::run_tile_job(plan, 0));
  const fs::path piece = plan.state / plan.jobs[0].piece;
  const auto good = cli_test::read_bytes(piece);

  // A damaged piece (one flipped byte; a cut one): the reader's rule id, the job and tile named.
  auto flipped = good;
  flipped[flipped.size() / 2] ^= std::byte{0x40};
  cli_test::write_bytes(piece, flipped);
  const auto damaged = tools::run_tile_job(plan, 0);
  CHECK(damaged.error.rfind("job 0 (tile " + plan.jobs[0].tile + "): piece ", 0) == 0);
  CHECK_MESSAGE(damaged.error.find("R-") != std::string::npos, damaged.error);
  cli_test::write_bytes(piece, std::span(good).first(good.size() / 3));
  const auto cut = tools::run_tile_job(plan, 1);
  CHECK_MESSAGE(cut.error.find("R-") != std::string::npos, cut.error);
  CHECK(cut.error.rfind("job 1 (lod " + plan.jobs[0].tile + " 1): ", 0) == 0);
  // Another tile's piece in its place: refused, naming the tile it holds.
  const std::size_t other = plan.jobs.size() - 2;
  REQUIRE(plan.jobs[other].piece != plan.jobs[0].piece);
  fs::copy_file(plan.state / plan.jobs[other].piece, piece, fs::copy_options::overwrite_existing);
  CHECK(tools::run_tile_job(plan, 0).error.find("belongs to another plan") != std::string::npos);
  fs::remove(piece);
  const auto gone = tools::run_tile_job(plan, 0);
  CHECK((gone.io_failure && gone.error.find("cannot read piece") != std::string::npos));

  // A plan file that is not one: an error, never an exception.
  std::ofstream(dir / "bad.json") << R"({"untold_tile_plan": 1, "source": 7})";
  CHECK(tools::read_tile_plan(dir / "bad.json").error.find("is not a tile plan") != std::string::npos);
  std::ofstream(dir / "bad.json") << "not json";
  CHECK_FALSE(tools::read_tile_plan(dir / "bad.json"));
  // A job that waits for a later one, and a piece outside the state folder.
  auto text = tools::tile_plan_json(plan);
  auto j = nlohmann::json::parse(text);
  j["jobs"][1]["after"] = {5};
  std::ofstream(dir / "bad.json") << j.dump();
  CHECK(tools::read_tile_plan(dir / "bad.json").error.find("earlier one") != std::string::npos);
  j = nlohmann::json::parse(text);
  j["jobs"][0]["piece"] = "../../etc/passwd";
  std::ofstream(dir / "bad.json") << j.dump();
  CHECK(tools::read_tile_plan(dir / "bad.json").error.find("safe relative path") != std::string::npos);
}

TEST_CASE("untold cook --tiles: CLI report, manifest that validates, usage errors") {
  const fs::path model = cli_test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb");
  const fs::path dir = scratch("tiles_cli");
  const auto r = cli_test::run_untold("cook " + cli_test::quoted(model) + " --tiles grid:150 --json -o " +
                                      cli_test::quoted(dir / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["tile_count"].get<std::size_t>() == j["tiles"].size());
  CHECK(j["source_triangles"].get<std::uint64_t>() > 0);
  CHECK(fs::exists(dir / "out" / "manifest.json"));
  const auto v = cli_test::run_untold("manifest validate " + cli_test::quoted(dir / "out" / "manifest.json"));
  CHECK_MESSAGE(v.exit_code == 0, v.err);

  const auto text = cli_test::run_untold("cook " + cli_test::quoted(model) + " --tiles quadtree:2000 -o " +
                                         cli_test::quoted(dir / "quad"));
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("tiles") != std::string::npos);
  CHECK(text.out.find("HLOD:") != std::string::npos);

  // PBR_QUANT_V1 and the meshopt compressions reach every tile, LOD and HLOD file.
  const auto quant = cli_test::run_untold("cook " + cli_test::quoted(model) + " --tiles grid:150 --vertex-layout quantized" +
                                          " --compress meshopt+zstd -o " + cli_test::quoted(dir / "quant"));
  REQUIRE_MESSAGE(quant.exit_code == 0, quant.err);
  CHECK(cli_test::run_untold("manifest validate " + cli_test::quoted(dir / "quant" / "manifest.json")).exit_code == 0);
  std::size_t tiles = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "quant")) {
    if (entry.path().extension() != ".untold") continue;
    ++tiles;
    CHECK(cli_test::run_untold("validate --deep " + cli_test::quoted(entry.path())).exit_code == 0);
    const auto info = nlohmann::json::parse(cli_test::run_untold("info --json " + cli_test::quoted(entry.path())).out);
    CHECK(info[0]["vertexLayout"] == "pbrQuantV1");
  }
  CHECK(tiles >= 2);

  CHECK(cli_test::run_untold("cook " + cli_test::quoted(model) + " --tiles grid:0 -o " + cli_test::quoted(dir / "x")).exit_code == 2);
  CHECK(cli_test::run_untold("cook " + cli_test::quoted(model) + " --tiles hexes -o " + cli_test::quoted(dir / "x")).exit_code == 2);
  CHECK(cli_test::run_untold("cook " + cli_test::quoted(dir / "missing.glb") + " --tiles grid:10 -o " + cli_test::quoted(dir / "x")).exit_code == 3);
}
