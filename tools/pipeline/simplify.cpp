// tools/pipeline/simplify.cpp - LOD levels and HLOD proxies (see simplify.hpp).
#include "simplify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <meshoptimizer.h>

#include <untold/convert/to_untold.hpp>
#include <untold/matrix.hpp>

namespace untold::tools {
namespace {

using convert::no_ref;

/// The mesh's triangle list (0..n-1 when it has no indices), whole triangles only.
std::vector<std::uint32_t> own_triangles(const convert::mesh& m) {
  return convert::detail::triangle_list(m, m.indices);
}

/// A merged HLOD vertex: what the proxy keeps, packed so equal vertices weld.
struct proxy_vertex {
  float position[3];
  float normal[3];
  float color[4];
};
static_assert(sizeof(proxy_vertex) == 10 * sizeof(float), "no padding: vertices are compared as bytes when welding");

std::array<float, 3> transform_point(const mat4& w, const float* p) {
  return {w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12], w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13],
          w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14]};
}

/// n' = (W^-1)^T n, normalised (correct under non-uniform scale); zero stays zero.
std::array<float, 3> transform_normal(const mat4& inverse, const float* n) {
  std::array<float, 3> r{inverse[0] * n[0] + inverse[1] * n[1] + inverse[2] * n[2],
                         inverse[4] * n[0] + inverse[5] * n[1] + inverse[6] * n[2],
                         inverse[8] * n[0] + inverse[9] * n[1] + inverse[10] * n[2]};
  const float length = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  if (length > 0 && std::isfinite(length))
    for (float& c : r) c /= length;
  else
    r = {0, 0, 0};
  return r;
}

float determinant3(const mat4& m) {
  return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) + m[8] * (m[1] * m[6] - m[5] * m[2]);
}

/// Area-weighted face normals for the vertices that arrived without one.
void fill_missing_normals(std::vector<proxy_vertex>& vertices, const std::vector<std::uint32_t>& indices) {
  std::vector<bool> missing(vertices.size());
  bool any = false;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const float* n = vertices[i].normal;
    missing[i] = n[0] == 0 && n[1] == 0 && n[2] == 0;
    any = any || missing[i];
  }
  if (!any) return;
  std::vector<std::array<float, 3>> sum(vertices.size(), {0, 0, 0});
  for (std::size_t t = 0; t + 2 < indices.size(); t += 3) {
    const float* a = vertices[indices[t]].position;
    const float* b = vertices[indices[t + 1]].position;
    const float* c = vertices[indices[t + 2]].position;
    const float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const std::array<float, 3> face{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                                    e1[0] * e2[1] - e1[1] * e2[0]};
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t c3 = 0; c3 < 3; ++c3) sum[indices[t + k]][c3] += face[c3];
  }
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (!missing[i]) continue;
    const auto& s = sum[i];
    const float length = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    if (length > 0 && std::isfinite(length))
      for (std::size_t c = 0; c < 3; ++c) vertices[i].normal[c] = s[c] / length;
  }
}

}  // namespace

simplified_level simplify_level(std::span<const std::uint32_t> triangles, std::span<const float> positions,
                                std::size_t vertex_count, const lod_options& options, std::size_t k,
                                std::uint64_t last_kept) {
  simplified_level level;
  if (triangles.size() < 3 || vertex_count == 0 || k >= options.ratios.size()) return level;
  const std::uint64_t source_triangles = triangles.size() / 3;
  const unsigned flags = options.lock_border ? static_cast<unsigned>(meshopt_SimplifyLockBorder) : 0u;
  float level_bound = options.target_error;  // doubled per level (exact in binary)
  for (std::size_t i = 0; i < k; ++i) level_bound *= 2;
  const auto limit = static_cast<std::uint64_t>(std::floor(static_cast<double>(last_kept) * options.max_kept_fraction));
  const std::size_t target =
      std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(source_triangles) * options.ratios[k])) * 3;
  std::vector<std::uint32_t> simplified(triangles.size());
  float error = 0;
  std::size_t count = meshopt_simplify(simplified.data(), triangles.data(), triangles.size(), positions.data(),
                                       vertex_count, 3 * sizeof(float), target, level_bound, flags, &error);
  bool by_sloppy = false;
  if (count / 3 > limit && options.sloppy_fallback && !options.lock_border) {
    std::vector<std::uint32_t> sloppy(triangles.size());
    float sloppy_error = 0;
    const std::size_t n = meshopt_simplifySloppy(sloppy.data(), triangles.data(), triangles.size(), positions.data(),
                                                 vertex_count, 3 * sizeof(float), target, level_bound, &sloppy_error);
    if (n > 0 && n < count) {
      std::copy_n(sloppy.begin(), n, simplified.begin());
      count = n;
      error = sloppy_error;
      by_sloppy = true;
    }
  }
  if (count == 0 || count / 3 > limit) return level;  // stalled: no level of its own
  simplified.resize(count);
  meshopt_optimizeVertexCache(simplified.data(), simplified.data(), count, vertex_count);
  level.indices = std::move(simplified);
  level.error = error;
  level.sloppy = by_sloppy;
  return level;
}

std::vector<simplified_level> simplify_levels(std::span<const std::uint32_t> triangles,
                                              std::span<const float> positions, std::size_t vertex_count,
                                              const lod_options& options) {
  std::vector<simplified_level> levels(options.ratios.size());
  std::uint64_t last_kept = triangles.size() / 3;
  for (std::size_t k = 0; k < options.ratios.size(); ++k) {
    levels[k] = simplify_level(triangles, positions, vertex_count, options, k, last_kept);
    if (!levels[k].stalled()) last_kept = levels[k].indices.size() / 3;
  }
  return levels;
}

lod_summary generate_lods(convert::mesh& m, const lod_options& options) {
  lod_summary summary;
  m.lods.clear();
  if (m.primitive != convert::topology::triangle_list) return summary;
  const std::vector<std::uint32_t> base = own_triangles(m);
  const std::size_t vertex_count = m.vertex_count();
  if (base.empty() || vertex_count == 0) return summary;
  summary.triangles.push_back(base.size() / 3);
  const float scale = meshopt_simplifyScale(m.positions.data(), vertex_count, 3 * sizeof(float));
  float distance = 0;
  for (simplified_level& made : simplify_levels(base, m.positions, vertex_count, options)) {
    if (made.stalled()) {
      ++summary.dropped;
      continue;
    }
    const float absolute = made.error * scale;
    distance = std::max(distance, absolute * options.distance_per_error);
    summary.triangles.push_back(made.indices.size() / 3);
    summary.errors.push_back(absolute);
    summary.sloppy += made.sloppy ? 1 : 0;
    convert::lod_level level;
    level.indices = std::move(made.indices);
    level.switch_distance = distance;
    m.lods.push_back(std::move(level));
  }
  return summary;
}

void generate_lods(convert::scene& s, const lod_options& options, convert::conversion_report& report) {
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const lod_summary summary = generate_lods(s.meshes[i], options);
    if (summary.triangles.empty()) continue;
    report.info("LOD levels", convert::detail::quoted("mesh", s.meshes[i].name, i),
                "simplification could not reduce further within the error bound", summary.dropped);
  }
}

std::vector<mat4> world_matrices(const convert::scene& s) {
  std::vector<mat4> world(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const mat4 local = s.nodes[i].local.matrix();
    const std::uint32_t parent = s.nodes[i].parent;
    world[i] = parent == no_ref || parent >= i ? local : multiply(world[parent], local);
  }
  return world;
}

hlod_result build_hlod(std::span<const hlod_part> parts, const hlod_options& options) {
  hlod_result out;
  out.material.name = "hlod";
  out.material.base_color = {1, 1, 1, 1};
  out.material.metallic = 0;
  out.material.roughness = 1;
  out.mesh.name = "hlod";
  out.mesh.material = 0;

  // ---- merge: world-space copies of the vertices each part uses ---------------------
  std::vector<proxy_vertex> vertices;
  std::vector<std::uint32_t> indices;
  for (const hlod_part& part : parts) {
    if (part.mesh == nullptr) continue;
    const convert::mesh& m = *part.mesh;
    std::vector<std::uint32_t> own;
    std::span<const std::uint32_t> triangles = part.indices;
    if (triangles.empty()) {
      own = own_triangles(m);
      triangles = own;
    }
    const std::size_t vertex_count = m.vertex_count();
    const mat4 inverse = inverse_affine(part.world);
    const bool mirrored = determinant3(part.world) < 0;  // keep faces counter-clockwise
    const bool has_normals = m.normals.size() == vertex_count * 3;
    const bool has_colors = m.colors.size() == vertex_count * 4;
    std::vector<std::uint32_t> merged(vertex_count, no_ref);
    const auto vertex = [&](std::uint32_t v) {
      if (merged[v] == no_ref) {
        proxy_vertex pv{};
        const auto p = transform_point(part.world, &m.positions[std::size_t{v} * 3]);
        std::copy(p.begin(), p.end(), pv.position);
        if (has_normals) {
          const auto n = transform_normal(inverse, &m.normals[std::size_t{v} * 3]);
          std::copy(n.begin(), n.end(), pv.normal);
        }
        for (std::size_t c = 0; c < 4; ++c)
          pv.color[c] = part.color[c] * (has_colors ? m.colors[std::size_t{v} * 4 + c] : 1.0f);
        merged[v] = static_cast<std::uint32_t>(vertices.size());
        vertices.push_back(pv);
      }
      return merged[v];
    };
    for (std::size_t t = 0; t + 2 < triangles.size(); t += 3) {
      const std::uint32_t a = triangles[t], b = triangles[t + 1], c = triangles[t + 2];
      if (a >= vertex_count || b >= vertex_count || c >= vertex_count) continue;
      indices.push_back(vertex(a));
      indices.push_back(vertex(mirrored ? c : b));
      indices.push_back(vertex(mirrored ? b : c));
    }
  }
  out.source_triangles = indices.size() / 3;
  if (indices.empty()) return out;
  fill_missing_normals(vertices, indices);

  // ---- weld equal vertices (instances side by side, split seams) --------------------
  std::vector<std::uint32_t> remap(vertices.size());
  const std::size_t unique =
      meshopt_generateVertexRemap(remap.data(), indices.data(), indices.size(), vertices.data(), vertices.size(),
                                  sizeof(proxy_vertex));
  meshopt_remapIndexBuffer(indices.data(), indices.data(), indices.size(), remap.data());
  std::vector<proxy_vertex> welded(unique);
  meshopt_remapVertexBuffer(welded.data(), vertices.data(), vertices.size(), sizeof(proxy_vertex), remap.data());

  // ---- simplify -----------------------------------------------------------------------
  const auto wanted = static_cast<std::size_t>(static_cast<double>(out.source_triangles) * options.ratio);
  const std::size_t target = std::max<std::size_t>(1, wanted) * 3;
  const float* positions = welded.front().position;
  const float scale = meshopt_simplifyScale(positions, unique, sizeof(proxy_vertex));
  std::vector<std::uint32_t> result(indices.size());
  float error = 0;
  std::size_t count = meshopt_simplify(result.data(), indices.data(), indices.size(), positions, unique,
                                       sizeof(proxy_vertex), target, options.target_error, 0, &error);
  if (count / 3 > std::max<std::size_t>(1, wanted)) {
    std::vector<std::uint32_t> sloppy(indices.size());
    float sloppy_error = 0;
    // On a small input the grid that meets the target can collapse everything: ask for more until something is left.
    std::size_t n = 0;
    for (std::size_t t = target; n == 0 && t < count; t *= 2)
      n = meshopt_simplifySloppy(sloppy.data(), indices.data(), indices.size(), positions, unique, sizeof(proxy_vertex), t,
                                 std::numeric_limits<float>::max(), &sloppy_error);
    if (n > 0 && n < count) {
      result.swap(sloppy);
      count = n;
      error = sloppy_error;
      out.sloppy = true;
    }
  }
  result.resize(count);
  out.triangles = count / 3;
  out.error = error * scale;

  // ---- compact: only the vertices the proxy uses, in fetch order ----------------------
  meshopt_optimizeVertexCache(result.data(), result.data(), result.size(), unique);
  std::vector<proxy_vertex> compact(unique);
  const std::size_t used =
      meshopt_optimizeVertexFetch(compact.data(), result.data(), result.size(), welded.data(), unique, sizeof(proxy_vertex));
  compact.resize(used);
  out.mesh.positions.reserve(used * 3);
  out.mesh.normals.reserve(used * 3);
  out.mesh.colors.reserve(used * 4);
  for (const proxy_vertex& v : compact) {
    out.mesh.positions.insert(out.mesh.positions.end(), v.position, v.position + 3);
    out.mesh.normals.insert(out.mesh.normals.end(), v.normal, v.normal + 3);
    out.mesh.colors.insert(out.mesh.colors.end(), v.color, v.color + 4);
  }
  out.mesh.indices = std::move(result);
  return out;
}

hlod_result build_hlod(const convert::scene& s, std::span<const std::uint32_t> nodes, std::span<const mat4> world,
                       const hlod_options& options) {
  std::vector<hlod_part> parts;
  for (const std::uint32_t n : nodes) {
    if (n >= s.nodes.size() || n >= world.size()) continue;
    for (const std::uint32_t mi : s.nodes[n].meshes) {
      if (mi >= s.meshes.size()) continue;
      const convert::mesh& m = s.meshes[mi];
      hlod_part part{.mesh = &m, .world = world[n]};
      if (m.material != no_ref && m.material < s.materials.size()) part.color = s.materials[m.material].base_color;
      parts.push_back(part);
    }
  }
  return build_hlod(parts, options);
}

}  // namespace untold::tools
