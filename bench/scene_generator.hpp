// bench/scene_generator.hpp - synthetic but realistic scenes at scale, for the
// benchmarks (issue #8) and the untold_make_scene tool.
//
//   untold_bench::scene_plan plan = untold_bench::plan_scene({.meshes = 1000, .geometry_bytes = 64 << 20});
//   auto file = untold_bench::write_untold(plan);                 // through untold::builder
//   untold_bench::mesh_geometry g = untold_bench::make_geometry(plan, 7);  // float streams
//
// A plan is the cheap part (entities, materials, textures, per-mesh shape and
// size); the geometry of each mesh is made on demand from it, deterministically,
// so the same plan gives the same .untold and the same .glb (glb_writer.hpp)
// without holding a gigabyte of floats.
//
// What the scenes look like:
//   - entities: a root, groups of 8 leaves, leaves holding 2 meshes each
//     (translations place them on a grid; the world bounds are real);
//   - meshes alternate displaced grids (terrain patches: a sum of sines with
//     analytic normals and tangents) and UV spheres (props); positions,
//     normals, tangents with handedness, UV0; uint16 indices, uint32 when a
//     mesh has more than 65535 vertices and for every 4th mesh (exporters that
//     always write 32-bit indices);
//   - mesh sizes vary 0.5x..1.5x around geometry_bytes / meshes, scaled so the
//     VERTEX_DATA + INDEX_DATA payloads add up to about geometry_bytes;
//   - materials shared by the meshes (meshes / 8, 1..64 of them), each with a
//     base colour, normal and metallic-roughness texture from a shared pool.
#pragma once

#include <untold/untold.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace untold_bench {

struct scene_spec {
  std::uint32_t meshes = 100;
  /// Target size of the geometry payloads (vertex + index bytes, uncompressed).
  std::uint64_t geometry_bytes = std::uint64_t{1} << 20;
  /// Applied to every chunk (metadata and geometry); the builder keeps a
  /// chunk raw when compression does not make it smaller.
  untold::compression compression = untold::compression::none;
  int level = 0;
  std::uint32_t seed = 1;
  /// Write the untold.integrity chunk (write_options::block_digests); unset:
  /// the writer's default (on, as the content hash is). Only benchmarks that
  /// measure the path without block digests set false.
  std::optional<bool> block_digests{};
};

enum class mesh_shape { grid, sphere };

/// A whole decimal command-line value (the drivers' option parser).
inline bool parse_u64(const char* s, std::uint64_t& out) {
  char* end = nullptr;
  out = std::strtoull(s, &end, 10);
  return end != s && *end == '\0';
}

/// The scene options every driver takes: --meshes N (1..10^7), --geometry-mb M,
/// --compress none|lz4|zstd. True when `arg value` is one of them, valid, and
/// stored in `spec`; false for any other option or a bad value.
inline bool parse_scene_option(std::string_view arg, const char* value, scene_spec& spec) {
  std::uint64_t n = 0;
  if (arg == "--meshes" && parse_u64(value, n) && n >= 1 && n <= 10'000'000) {
    spec.meshes = static_cast<std::uint32_t>(n);
  } else if (arg == "--geometry-mb" && parse_u64(value, n) && n <= (std::uint64_t{1} << 20)) {
    spec.geometry_bytes = n << 20;
  } else if (arg == "--compress" && std::string_view(value) == "none") {
    spec.compression = untold::compression::none;
  } else if (arg == "--compress" && std::string_view(value) == "lz4") {
    spec.compression = untold::compression::lz4;
  } else if (arg == "--compress" && std::string_view(value) == "zstd") {
    spec.compression = untold::compression::zstd;
  } else {
    return false;
  }
  return true;
}


struct mesh_plan {
  std::uint32_t entity = 0;  // index into scene_plan::entities
  std::uint32_t material = 0;
  mesh_shape shape = mesh_shape::grid;
  std::uint32_t columns = 2, rows = 2;  // vertices along u and v
  untold::index_type index_type = untold::index_type::uint16;
  std::uint32_t seed = 0;

  [[nodiscard]] std::uint64_t vertex_count() const noexcept { return std::uint64_t{columns} * rows; }
  [[nodiscard]] std::uint64_t index_count() const noexcept { return std::uint64_t{columns - 1} * (rows - 1) * 6; }
};

struct entity_plan {
  std::string name;
  std::uint32_t parent = untold::none;  // index of an earlier entity
  untold::mat4 local = untold::identity_matrix;
};

struct texture_plan {
  std::string name, uri;
  untold::texture_format format = untold::texture_format::bc7;
  std::uint32_t flags = 0;
  std::uint32_t size = 1024;
};

struct material_plan {
  std::string name;
  untold::float4 base_color{1, 1, 1, 1};
  float metallic = 0, roughness = 1;
  std::uint32_t base_color_texture = untold::none, normal_texture = untold::none,
                metallic_roughness_texture = untold::none;
};

struct scene_plan {
  scene_spec spec;
  std::vector<entity_plan> entities;
  std::vector<material_plan> materials;
  std::vector<texture_plan> textures;
  std::vector<mesh_plan> meshes;  // grouped by entity, in entity order
  /// Vertex + index bytes the meshes will have in a .untold file.
  [[nodiscard]] std::uint64_t geometry_bytes() const noexcept {
    std::uint64_t total = 0;
    for (const mesh_plan& m : meshes)
      total += m.vertex_count() * untold::vertex_stride_pbr_static_v1 +
               m.index_count() * untold::index_size(static_cast<std::uint32_t>(m.index_type));
    return total;
  }
};

/// One mesh's attribute streams (float, as an exporter has them) and indices.
struct mesh_geometry {
  std::vector<float> positions, normals, tangents, uv0;  // 3, 3, 4, 2 per vertex
  std::vector<std::uint32_t> indices;
  untold::aabb bounds{};
  [[nodiscard]] std::size_t vertex_count() const noexcept { return positions.size() / 3; }
};

namespace detail {

/// splitmix64: a tiny deterministic hash for per-mesh parameters.
[[nodiscard]] constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
/// A number in [0, 1) from (seed, a, b).
[[nodiscard]] constexpr double unit(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) noexcept {
  return static_cast<double>(mix(mix(seed * 0x100000001B3ull + a) + b) >> 11) * 0x1.0p-53;
}

[[nodiscard]] inline untold::mat4 translation(float x, float y, float z) noexcept {
  untold::mat4 m = untold::identity_matrix;
  m[12] = x;
  m[13] = y;
  m[14] = z;
  return m;
}

}  // namespace detail

/// Entities, materials, textures and the shape and size of every mesh.
[[nodiscard]] inline scene_plan plan_scene(const scene_spec& spec) {
  scene_plan plan;
  plan.spec = spec;
  const std::uint32_t mesh_count = std::max<std::uint32_t>(spec.meshes, 1);
  const std::uint32_t leaves = (mesh_count + 1) / 2;
  const std::uint32_t groups = (leaves + 7) / 8;

  plan.entities.push_back({"scene_root", untold::none, untold::identity_matrix});
  for (std::uint32_t g = 0; g < groups; ++g)
    plan.entities.push_back({"group_" + std::to_string(g), 0,
                             detail::translation(static_cast<float>(g % 16) * 120.0f, 0.0f,
                                                 static_cast<float>(g / 16) * 60.0f)});
  const std::uint32_t first_leaf = 1 + groups;
  for (std::uint32_t l = 0; l < leaves; ++l)
    plan.entities.push_back({"prop_" + std::to_string(l), 1 + l / 8,
                             detail::translation(static_cast<float>(l % 4) * 25.0f, 0.0f,
                                                 static_cast<float>((l / 4) % 2) * 25.0f)});

  const std::uint32_t material_count = std::clamp<std::uint32_t>(mesh_count / 8, 1, 64);
  const std::uint32_t texture_count = std::max<std::uint32_t>(3, material_count);
  for (std::uint32_t t = 0; t < texture_count; ++t) {
    const bool normal_map = t % 3 == 1;
    plan.textures.push_back({"texture_" + std::to_string(t), "textures/texture_" + std::to_string(t) + ".ktx2",
                             normal_map ? untold::texture_format::bc5 : untold::texture_format::bc7,
                             t % 3 == 0 ? untold::texture_flags::srgb : 0u, 512u << (t % 3)});
  }
  for (std::uint32_t k = 0; k < material_count; ++k) {
    material_plan m;
    m.name = "material_" + std::to_string(k);
    m.base_color = {static_cast<float>(0.3 + 0.7 * detail::unit(spec.seed, k, 1)),
                    static_cast<float>(0.3 + 0.7 * detail::unit(spec.seed, k, 2)),
                    static_cast<float>(0.3 + 0.7 * detail::unit(spec.seed, k, 3)), 1.0f};
    m.metallic = k % 4 == 0 ? 1.0f : 0.0f;
    m.roughness = static_cast<float>(0.2 + 0.8 * detail::unit(spec.seed, k, 4));
    m.base_color_texture = (3 * k) % texture_count;
    m.normal_texture = (3 * k + 1) % texture_count;
    m.metallic_roughness_texture = (3 * k + 2) % texture_count;
    plan.materials.push_back(m);
  }

  // Sizes: weights 0.5..1.5, normalised to the budget; then vertices from
  // bytes per vertex (32 + about 6 indices per vertex).
  std::vector<double> weight(mesh_count);
  double weight_sum = 0;
  for (std::uint32_t i = 0; i < mesh_count; ++i) weight_sum += weight[i] = 0.5 + detail::unit(spec.seed, i, 5);
  for (std::uint32_t i = 0; i < mesh_count; ++i) {
    mesh_plan m;
    m.entity = first_leaf + i / 2;
    m.material = static_cast<std::uint32_t>(detail::mix(spec.seed + i) % material_count);
    m.shape = i % 2 == 0 ? mesh_shape::grid : mesh_shape::sphere;
    m.seed = static_cast<std::uint32_t>(detail::mix(spec.seed * 7919u + i));
    const double budget = static_cast<double>(spec.geometry_bytes) * weight[i] / weight_sum;
    bool wide = i % 4 == 3;
    double vertices = budget / (wide ? 56.0 : 44.0);
    if (!wide && vertices > 65535.0) {
      wide = true;
      vertices = budget / 56.0;
    }
    if (m.shape == mesh_shape::grid) {
      m.columns = m.rows = std::max<std::uint32_t>(2, static_cast<std::uint32_t>(std::lround(std::sqrt(vertices))));
    } else {  // segments = 2 x rings, as UV spheres usually are
      m.rows = std::max<std::uint32_t>(3, static_cast<std::uint32_t>(std::lround(std::sqrt(vertices / 2.0))));
      m.columns = 2 * m.rows - 1;
    }
    if (m.vertex_count() > 65535) wide = true;
    m.index_type = wide ? untold::index_type::uint32 : untold::index_type::uint16;
    plan.meshes.push_back(m);
  }
  return plan;
}

/// The float streams and indices of mesh `index` of `plan`.
[[nodiscard]] inline mesh_geometry make_geometry(const scene_plan& plan, std::uint32_t index) {
  const mesh_plan& m = plan.meshes[index];
  const std::uint32_t cols = m.columns, rows = m.rows;
  const std::size_t n = static_cast<std::size_t>(m.vertex_count());
  mesh_geometry g;
  g.positions.resize(3 * n);
  g.normals.resize(3 * n);
  g.tangents.resize(4 * n);
  g.uv0.resize(2 * n);
  const auto put = [&](std::size_t v, double px, double py, double pz, double nx, double ny, double nz, double tx,
                       double ty, double tz, double u, double w) {
    const double nl = std::sqrt(nx * nx + ny * ny + nz * nz), tl = std::sqrt(tx * tx + ty * ty + tz * tz);
    const float p[3] = {static_cast<float>(px), static_cast<float>(py), static_cast<float>(pz)};
    std::copy(p, p + 3, g.positions.begin() + 3 * v);
    g.normals[3 * v] = static_cast<float>(nx / nl);
    g.normals[3 * v + 1] = static_cast<float>(ny / nl);
    g.normals[3 * v + 2] = static_cast<float>(nz / nl);
    g.tangents[4 * v] = static_cast<float>(tx / tl);
    g.tangents[4 * v + 1] = static_cast<float>(ty / tl);
    g.tangents[4 * v + 2] = static_cast<float>(tz / tl);
    g.tangents[4 * v + 3] = 1.0f;
    g.uv0[2 * v] = static_cast<float>(u);
    g.uv0[2 * v + 1] = static_cast<float>(w);
    for (int a = 0; a < 3; ++a) {
      g.bounds.min[a] = v == 0 ? p[a] : std::min(g.bounds.min[a], p[a]);
      g.bounds.max[a] = v == 0 ? p[a] : std::max(g.bounds.max[a], p[a]);
    }
  };

  const auto r = [&](std::uint64_t k) { return detail::unit(m.seed, k); };
  if (m.shape == mesh_shape::grid) {
    // A 20 m terrain patch: h = a sin(fx x + p) cos(fz z + q) + b sin(f (x + z) + s).
    const double size = 20.0, a = 0.5 + 2.0 * r(1), fx = 0.1 + 0.3 * r(2), fz = 0.1 + 0.3 * r(3), p = 6.0 * r(4),
                 q = 6.0 * r(5), b = 0.2 * r(6), f = 0.5 + r(7), s = 6.0 * r(8);
    for (std::uint32_t j = 0; j < rows; ++j) {
      for (std::uint32_t i = 0; i < cols; ++i) {
        const double u = static_cast<double>(i) / (cols - 1), w = static_cast<double>(j) / (rows - 1);
        const double x = (u - 0.5) * size, z = (w - 0.5) * size;
        const double y = a * std::sin(fx * x + p) * std::cos(fz * z + q) + b * std::sin(f * (x + z) + s);
        const double dx = a * fx * std::cos(fx * x + p) * std::cos(fz * z + q) + b * f * std::cos(f * (x + z) + s);
        const double dz = -a * fz * std::sin(fx * x + p) * std::sin(fz * z + q) + b * f * std::cos(f * (x + z) + s);
        put(std::size_t{j} * cols + i, x, y, z, -dx, 1.0, -dz, 1.0, dx, 0.0, 4.0 * u, 4.0 * w);
      }
    }
  } else {
    // A UV sphere, radius 1..4 m; the seam column repeats the first one.
    const double radius = 1.0 + 3.0 * r(1), pi = std::numbers::pi;
    for (std::uint32_t j = 0; j < rows; ++j) {
      const double w = static_cast<double>(j) / (rows - 1), theta = w * pi;
      for (std::uint32_t i = 0; i < cols; ++i) {
        const double u = static_cast<double>(i) / (cols - 1), phi = u * 2.0 * pi;
        const double nx = std::sin(theta) * std::cos(phi), ny = std::cos(theta), nz = std::sin(theta) * std::sin(phi);
        put(std::size_t{j} * cols + i, radius * nx, radius * ny, radius * nz, nx, ny, nz, -std::sin(phi), 0.0,
            std::cos(phi), u, w);
      }
    }
  }

  g.indices.resize(static_cast<std::size_t>(m.index_count()));
  std::size_t k = 0;
  for (std::uint32_t j = 0; j + 1 < rows; ++j) {
    for (std::uint32_t i = 0; i + 1 < cols; ++i) {
      const std::uint32_t a = j * cols + i, b = a + 1, c = a + cols, d = c + 1;
      for (const std::uint32_t v : {a, c, b, b, c, d}) g.indices[k++] = v;
    }
  }
  return g;
}

/// Compression of every chunk as `spec` asks.
[[nodiscard]] inline untold::write_options write_options_for(const scene_spec& spec) {
  untold::write_options options;
  options.compression.metadata = options.compression.data = {spec.compression, spec.level};
  options.block_digests = spec.block_digests;
  return options;
}

/// Adds every entity, texture and material of `plan` to `b`.
inline void add_scene_metadata(untold::builder& b, const scene_plan& plan) {
  for (const entity_plan& e : plan.entities)
    b.add_entity({.name = e.name, .parent = e.parent, .local_transform = e.local});
  for (const texture_plan& t : plan.textures)
    b.add_texture({.name = t.name, .uri = t.uri, .format = t.format, .flags = t.flags, .width = t.size,
                   .height = t.size, .mip_count = static_cast<std::uint32_t>(std::bit_width(t.size))});
  for (const material_plan& m : plan.materials)
    b.add_material({.name = m.name, .base_color_factor = m.base_color, .metallic_factor = m.metallic,
                    .roughness_factor = m.roughness, .base_color_texture = m.base_color_texture,
                    .normal_texture = m.normal_texture, .metallic_texture = m.metallic_roughness_texture,
                    .roughness_texture = m.metallic_roughness_texture, .roughness_channel = untold::texture_channel::g,
                    .metallic_channel = untold::texture_channel::b});
}

/// Mesh `index` of `plan` as PBR_STATIC_V1 vertex bytes (untold::encode_pbr_vertices).
[[nodiscard]] inline untold::result<std::vector<std::byte>> encode_vertices(const mesh_geometry& g) {
  return untold::encode_pbr_vertices(
      untold::pbr_vertex_input{.positions = g.positions, .normals = g.normals, .tangents = g.tangents, .uv0 = g.uv0});
}

/// The scene as a .untold file, through untold::builder.
[[nodiscard]] inline untold::result<std::vector<std::byte>> write_untold(const scene_plan& plan) {
  untold::builder b{untold::file_type::tile};
  add_scene_metadata(b, plan);
  for (std::uint32_t i = 0; i < plan.meshes.size(); ++i) {
    const mesh_geometry g = make_geometry(plan, i);
    auto vertices = encode_vertices(g);
    if (!vertices) return vertices.error();
    const mesh_plan& m = plan.meshes[i];
    b.add_mesh({.entity = m.entity, .name = "mesh_" + std::to_string(i), .material = m.material,
                .vertices = *vertices, .indices = g.indices, .index_type = m.index_type});
  }
  return b.finish(write_options_for(plan.spec));
}

}  // namespace untold_bench
