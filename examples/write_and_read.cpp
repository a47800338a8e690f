// Writes a small scene with untold::builder, reads it back with untold::open
// (deep checks on), and prints what an engine would see.
//
//   untold_example_write_and_read [out.untold]
#include <untold/untold.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// A unit cube as PBR_STATIC_V1 vertices: 6 faces x 4 vertices, with normals,
// tangents and UVs, encoded by the library's vertex encoder.
struct cube {
  std::vector<std::byte> vertices;
  std::vector<std::uint32_t> indices;
};

cube make_cube() {
  std::vector<float> positions, normals, tangents, uvs;
  const float axes[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  cube c;
  for (std::uint32_t face = 0; face < 6; ++face) {
    const float* n = axes[face];
    // Two axes spanning the face.
    const float u[3] = {n[1] != 0 || n[2] != 0 ? 1.0f : 0.0f, 0.0f, n[0] != 0 ? 1.0f : 0.0f};
    const float v[3] = {n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]};
    const float corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    const auto base = static_cast<std::uint32_t>(positions.size() / 3);
    for (const auto& corner : corners) {
      for (int k = 0; k < 3; ++k) positions.push_back(0.5f * (n[k] + corner[0] * u[k] + corner[1] * v[k]));
      normals.insert(normals.end(), {n[0], n[1], n[2]});
      tangents.insert(tangents.end(), {u[0], u[1], u[2], 1.0f});
      uvs.insert(uvs.end(), {0.5f * (corner[0] + 1), 0.5f * (corner[1] + 1)});
    }
    c.indices.insert(c.indices.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
  }
  untold::pbr_vertex_input input;
  input.positions = positions;
  input.normals = normals;
  input.tangents = tangents;
  input.uv0 = uvs;
  auto encoded = untold::encode_pbr_vertices(input);
  if (!encoded) {
    std::fprintf(stderr, "encode: %s\n", encoded.error().describe().c_str());
    return c;
  }
  c.vertices = std::move(*encoded);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "example.untold";

  // Write: two textures, a material, a parent with two children.
  const cube box = make_cube();
  untold::builder b{untold::file_type::tile};
  const auto albedo = b.add_texture({.name = "crate_albedo", .uri = "Textures/crate_albedo.ktx2",
                                     .format = untold::texture_format::bc7, .flags = untold::texture_flags::srgb,
                                     .width = 512, .height = 512, .mip_count = 10});
  const auto crate = b.add_material({.name = "crate", .roughness_factor = 0.7f, .base_color_texture = albedo});
  const auto root = b.add_entity({.name = "crates"});
  for (int i = 0; i < 2; ++i) {
    untold::mat4 placed = untold::identity_matrix;
    placed[12] = 2.0f * static_cast<float>(i);
    const auto child = b.add_entity({.name = i == 0 ? "crate_a" : "crate_b", .parent = root, .local_transform = placed});
    b.add_mesh({.entity = child, .name = "crate", .material = crate, .vertices = box.vertices, .indices = box.indices});
  }
  untold::write_options options;
  options.compression.data = {untold::compression::zstd, 9};
  auto bytes = b.finish(options);
  if (!bytes) {
    std::fprintf(stderr, "write failed: %s\n", bytes.error().describe().c_str());
    return 1;
  }
  if (auto s = untold::write_file(path, *bytes); !s) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), s.error().describe().c_str());
    return 1;
  }

  // Read: map, validate everything, walk.
  auto opened = untold::open_file(path, {.deep_checks = true});
  if (!opened) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), opened.error().describe().c_str());
    return 1;
  }
  const untold::asset& a = opened->asset;
  const auto& h = a.header();
  std::printf("%s: %zu bytes, format v%u, %s, %u chunks\n", path.c_str(), bytes->size(), h.format_version,
              std::string(untold::file_type_name(h.file_type)).c_str(), h.chunk_count);
  std::printf("world bounds (%g %g %g) .. (%g %g %g)\n", h.world_bounds.min[0], h.world_bounds.min[1],
              h.world_bounds.min[2], h.world_bounds.max[0], h.world_bounds.max[1], h.world_bounds.max[2]);
  for (const untold::entity_record& e : a.entities()) {
    std::printf("entity %u '%s' parent %d, %u mesh(es)\n", e.entity_id, std::string(a.string(e.name_offset)).c_str(),
                e.parent_entity_id == untold::none ? -1 : static_cast<int>(e.parent_entity_id), e.mesh_record_count);
  }
  for (const untold::mesh_record& m : a.meshes()) {
    // A validated mesh's vertex bytes are always a whole number of vertices.
    const untold::pbr_vertex first = untold::pbr_vertex_view::from_bytes(a.vertices(m))->operator[](0);
    std::printf("mesh '%s': %u vertices, %u indices (%s), material '%s'; vertex 0 at (%g %g %g) normal (%g %g %g)\n",
                std::string(a.string(m.mesh_name_offset)).c_str(), m.vertex_count, m.index_count,
                m.index_type == 1 ? "uint16" : "uint32",
                std::string(a.string(a.materials()[m.material_index].name_offset)).c_str(), first.position[0],
                first.position[1], first.position[2], first.normal[0], first.normal[1], first.normal[2]);
  }
  return 0;
}
