// LOD levels and HLOD proxies on the neutral scene (tools/pipeline/simplify.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <set>
#include <vector>

#include "simplify.hpp"

namespace {

using namespace untold;
using tools::build_hlod;
using tools::generate_lods;

/// A welded UV sphere (one seam column duplicated for the UVs), with normals.
convert::mesh sphere(std::uint32_t segments, std::uint32_t rings, float radius = 1.0f) {
  convert::mesh m;
  m.name = "sphere";
  for (std::uint32_t r = 0; r <= rings; ++r)
    for (std::uint32_t s = 0; s <= segments; ++s) {
      const float v = static_cast<float>(r) / static_cast<float>(rings), u = static_cast<float>(s) / static_cast<float>(segments);
      const float theta = v * std::numbers::pi_v<float>, phi = u * 2 * std::numbers::pi_v<float>;
      const float x = std::sin(theta) * std::cos(phi), y = std::cos(theta), z = std::sin(theta) * std::sin(phi);
      m.positions.insert(m.positions.end(), {x * radius, y * radius, z * radius});
      m.normals.insert(m.normals.end(), {x, y, z});
      m.uv0.insert(m.uv0.end(), {u, v});
    }
  for (std::uint32_t r = 0; r < rings; ++r)
    for (std::uint32_t s = 0; s < segments; ++s) {
      const std::uint32_t a = r * (segments + 1) + s, b = a + segments + 1;
      m.indices.insert(m.indices.end(), {a, a + 1, b, a + 1, b + 1, b});
    }
  return m;
}

/// A flat grid of quads with every triangle on vertices of its own (flat
/// shading, as many exporters write): the topology-preserving simplifier
/// cannot collapse anything.
convert::mesh unwelded_grid(std::uint32_t n) {
  convert::mesh m;
  m.name = "grid";
  auto corner = [&](std::uint32_t i, std::uint32_t j) {
    const float h = 0.05f * std::sin(static_cast<float>(i) * 0.3f) * std::cos(static_cast<float>(j) * 0.2f);
    m.positions.insert(m.positions.end(), {static_cast<float>(i), h, static_cast<float>(j)});
  };
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t j = 0; j < n; ++j) {
      corner(i, j), corner(i, j + 1), corner(i + 1, j);
      corner(i + 1, j), corner(i, j + 1), corner(i + 1, j + 1);
    }
  return m;  // no indices: 0, 1, 2, ...
}

std::set<std::uint32_t> used_vertices(const std::vector<std::uint32_t>& indices) {
  return {indices.begin(), indices.end()};
}

}  // namespace

TEST_CASE("generate_lods: strictly decreasing levels within the kept fraction, indices in range") {
  convert::mesh m = sphere(64, 32);
  const std::uint64_t lod0 = m.indices.size() / 3;
  const tools::lod_options o;
  const tools::lod_summary s = generate_lods(m, o);
  REQUIRE(s.triangles.size() == m.lods.size() + 1);
  CHECK(s.triangles.front() == lod0);
  CHECK(m.lods.size() == 3);
  for (std::size_t k = 0; k < m.lods.size(); ++k) {
    const auto& level = m.lods[k].indices;
    CHECK(level.size() % 3 == 0);
    CHECK(level.size() / 3 == s.triangles[k + 1]);
    CHECK(s.triangles[k + 1] <= static_cast<std::uint64_t>(static_cast<double>(s.triangles[k]) * o.max_kept_fraction));
    CHECK(*std::max_element(level.begin(), level.end()) < m.vertex_count());
    if (k > 0) CHECK(m.lods[k].switch_distance >= m.lods[k - 1].switch_distance);
  }
  // The error bound doubles per level from target_error (relative to the extent, 2 here).
  for (std::size_t k = 0; k < s.errors.size(); ++k) CHECK(s.errors[k] <= o.target_error * std::ldexp(2.0f, static_cast<int>(k)) * 2.0f + 1e-6f);
  CHECK(convert::validate_model(convert::scene{.meshes = {m}}));
}

TEST_CASE("generate_lods: a level that cannot reduce is dropped, never duplicated") {
  convert::mesh quad;
  quad.positions = {0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1};
  quad.indices = {0, 1, 2, 0, 2, 3};
  const tools::lod_summary s = generate_lods(quad, {});
  CHECK(quad.lods.empty());
  CHECK(s.dropped == 3);
  CHECK(s.triangles == std::vector<std::uint64_t>{2});

  // Ratios that ask for no reduction give nothing either.
  convert::mesh ball = sphere(32, 16);
  tools::lod_options same;
  same.ratios = {1.0f, 0.95f};
  const tools::lod_summary t = generate_lods(ball, same);
  CHECK(ball.lods.empty());
  CHECK(t.dropped == 2);
}

TEST_CASE("generate_lods: unwelded geometry stalls the topology-preserving pass, the sloppy fallback reduces it") {
  convert::mesh stuck = unwelded_grid(40);
  tools::lod_options strict;
  strict.sloppy_fallback = false;
  const tools::lod_summary a = generate_lods(stuck, strict);
  CHECK(stuck.lods.empty());
  CHECK(a.dropped == strict.ratios.size());

  convert::mesh freed = unwelded_grid(40);
  const tools::lod_summary b = generate_lods(freed, {});
  REQUIRE(!freed.lods.empty());
  CHECK(b.sloppy == freed.lods.size());
  for (std::size_t k = 1; k < b.triangles.size(); ++k) CHECK(b.triangles[k] < b.triangles[k - 1]);
  // Indices of every level still point at the mesh's own (non-indexed) vertices.
  for (const auto& level : freed.lods) CHECK(*std::max_element(level.indices.begin(), level.indices.end()) < freed.vertex_count());
}

TEST_CASE("generate_lods: the error bound holds (a rough mesh with a tiny bound keeps LOD0 only)") {
  convert::mesh rough = sphere(48, 24);
  // Deterministic bumps: every vertex pushed in or out by 10%.
  for (std::size_t v = 0; v < rough.vertex_count(); ++v) {
    const float f = (v * 2654435761u) % 7 < 3 ? 0.9f : 1.1f;
    for (std::size_t c = 0; c < 3; ++c) rough.positions[v * 3 + c] *= f;
  }
  tools::lod_options tight;
  tight.target_error = 1e-6f;
  tight.sloppy_fallback = false;
  generate_lods(rough, tight);
  CHECK(rough.lods.empty());

  tools::lod_options loose;
  loose.target_error = 0.5f;
  const tools::lod_summary s = generate_lods(rough, loose);
  CHECK(!rough.lods.empty());
  CHECK(s.errors.front() > 0);
}

TEST_CASE("generate_lods on a scene: reports the ratios that gave no level") {
  convert::scene s;
  s.meshes.push_back(sphere(32, 16));
  convert::mesh tri;
  tri.name = "tri";
  tri.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  s.meshes.push_back(tri);
  convert::conversion_report r;
  generate_lods(s, {}, r);
  CHECK(!s.meshes[0].lods.empty());
  CHECK(s.meshes[1].lods.empty());
  bool reported = false;
  for (const auto& e : r.entries)
    if (e.where == "mesh 'tri'" && e.count == 3 && e.severity == convert::report_entry::kind::info) reported = true;
  CHECK(reported);
}

TEST_CASE("world_matrices: children compose with their parents") {
  convert::scene s;
  s.nodes.push_back({.name = "root", .local = {.translation = {10, 0, 0}}});
  s.nodes.push_back({.name = "child", .parent = 0, .local = {.translation = {0, 5, 0}, .scale = {2, 2, 2}}});
  const auto w = tools::world_matrices(s);
  REQUIRE(w.size() == 2);
  CHECK(w[1][12] == 10);
  CHECK(w[1][13] == 5);
  CHECK(w[1][0] == 2);
}

TEST_CASE("build_hlod: world-space merge of instances, colours from materials, below the ratio") {
  convert::scene s;
  s.materials.push_back({.name = "red", .base_color = {1, 0, 0, 1}});
  s.materials.push_back({.name = "blue", .base_color = {0, 0, 1, 1}});
  s.meshes.push_back(sphere(48, 24));
  s.meshes[0].material = 0;
  s.meshes.push_back(sphere(32, 16));
  s.meshes[1].material = 1;
  // Mesh 0 instanced at two nodes, mesh 1 at a third.
  s.nodes.push_back({.name = "a", .local = {.translation = {0, 0, 0}}, .meshes = {0}});
  s.nodes.push_back({.name = "b", .local = {.translation = {10, 0, 0}}, .meshes = {0}});
  s.nodes.push_back({.name = "c", .local = {.translation = {0, 0, 10}}, .meshes = {1}});
  const auto world = tools::world_matrices(s);
  const std::vector<std::uint32_t> nodes{0, 1, 2};
  tools::hlod_options o;
  o.ratio = 0.1f;
  const tools::hlod_result h = build_hlod(s, nodes, world, o);
  const std::uint64_t source = 2 * (s.meshes[0].indices.size() / 3) + s.meshes[1].indices.size() / 3;
  CHECK(h.source_triangles == source);
  CHECK(h.triangles > 0);
  CHECK(h.triangles <= source / 10);
  CHECK(h.mesh.indices.size() == h.triangles * 3);
  CHECK(h.mesh.material == 0);
  CHECK(h.material.base_color == std::array<float, 4>{1, 1, 1, 1});
  CHECK(h.mesh.uv0.empty());
  REQUIRE(h.mesh.colors.size() == h.mesh.vertex_count() * 4);
  CHECK(h.mesh.normals.size() == h.mesh.vertex_count() * 3);
  // Every vertex is used, every colour is a material's, both materials survive.
  CHECK(used_vertices(h.mesh.indices).size() == h.mesh.vertex_count());
  std::size_t red = 0, blue = 0;
  for (std::size_t v = 0; v < h.mesh.vertex_count(); ++v) {
    const float* c = &h.mesh.colors[v * 4];
    red += c[0] == 1 && c[2] == 0 ? 1 : 0;
    blue += c[0] == 0 && c[2] == 1 ? 1 : 0;
  }
  CHECK(red + blue == h.mesh.vertex_count());
  CHECK(red > 0);
  CHECK(blue > 0);
  // World space: the instance at x = 10 is there.
  float max_x = -1e9f, max_z = -1e9f;
  for (std::size_t v = 0; v < h.mesh.vertex_count(); ++v) {
    max_x = std::max(max_x, h.mesh.positions[v * 3]);
    max_z = std::max(max_z, h.mesh.positions[v * 3 + 2]);
  }
  CHECK(max_x > 10.5f);
  CHECK(max_z > 10.5f);
  CHECK(convert::validate_model(convert::scene{.meshes = {h.mesh}, .materials = {h.material}}));
}

TEST_CASE("build_hlod: a mirrored transform keeps faces counter-clockwise towards their normals") {
  convert::mesh tri;
  tri.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};  // CCW seen from +Z
  tri.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  tri.indices = {0, 1, 2};
  mat4 mirror = identity_matrix;
  mirror[0] = -1;  // x -> -x
  const tools::hlod_part part{.mesh = &tri, .world = mirror};
  tools::hlod_options o;
  o.ratio = 1.0f;
  const tools::hlod_result h = build_hlod(std::span<const tools::hlod_part>(&part, 1), o);
  REQUIRE(h.triangles == 1);
  const auto& p = h.mesh.positions;
  const auto& i = h.mesh.indices;
  const float e1[3] = {p[i[1] * 3] - p[i[0] * 3], p[i[1] * 3 + 1] - p[i[0] * 3 + 1], 0};
  const float e2[3] = {p[i[2] * 3] - p[i[0] * 3], p[i[2] * 3 + 1] - p[i[0] * 3 + 1], 0};
  const float face_z = e1[0] * e2[1] - e1[1] * e2[0];
  CHECK(face_z > 0);
  CHECK(h.mesh.normals[2] == doctest::Approx(1.0f));
}

TEST_CASE("build_hlod: nothing to merge gives an empty proxy, the same input gives the same output") {
  const tools::hlod_result empty = build_hlod(std::span<const tools::hlod_part>{}, {});
  CHECK(empty.triangles == 0);
  CHECK(empty.mesh.indices.empty());

  const convert::mesh ball = sphere(40, 20);
  const tools::hlod_part parts[] = {{.mesh = &ball}, {.mesh = &ball, .world = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 3, 0, 0, 1}}};
  const tools::hlod_result a = build_hlod(parts, {});
  const tools::hlod_result b = build_hlod(parts, {});
  CHECK(a.mesh.indices == b.mesh.indices);
  CHECK(a.mesh.positions == b.mesh.positions);
}
