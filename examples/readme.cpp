// The C++ snippets of README.md, verbatim: each block between a
// "readme:begin NAME" and a "readme:end" comment is what the README shows
// (tests/readme_check.cpp fails when the two differ), and this file builds
// and runs as a test, so every README snippet compiles and works.
//
//   untold_example_readme FILE.untold
#include <untold/untold.hpp>

#include <cstdio>
#include <vector>

namespace {

int uploads = 0;
void upload(std::span<const std::byte> vertices, std::uint32_t stride, std::span<const std::byte> indices,
            std::uint32_t index_type) {
  uploads += !vertices.empty() && stride == 32 && !indices.empty() && index_type != 0;
}

int read(const char* path) {
  // readme:begin read
  auto file = untold::open_file(path);                      // mmap + validate
  if (!file) {                                              // e.g. "R-MESH-MATERIAL mesh_material: ...
    std::puts(file.error().describe().c_str());             //  (chunk 2, type 3, record 1, field materialIndex, value 9)"
    return 1;
  }
  const untold::asset& a = file->asset;
  for (const untold::mesh_record& m : a.meshes()) {
    std::span<const std::byte> vertices = a.vertices(m);    // PBR_STATIC_V1, 32 B per vertex (or PBR_QUANT_V1, 24 B)
    std::span<const std::byte> indices = a.indices(m);      // uint16 or uint32 (m.index_type)
    upload(vertices, m.vertex_stride_bytes, indices, m.index_type);
  }
  for (const untold::entity_record& e : a.entities())
    std::printf("entity %.*s\n", static_cast<int>(a.string(e.name_offset).size()), a.string(e.name_offset).data());
  // readme:end
  return uploads == static_cast<int>(a.meshes().size()) ? 0 : 1;
}

int ranges(const char* path) {
  // readme:begin ranges
  auto src = untold::file_range_source::open(path);
  if (!src) return 1;
  auto tile = untold::streamed_asset::open(*src);      // header + table + metadata, usually one read
  if (!tile) return 1;
  auto needed = tile->ranges_for_mesh(0);              // exactly what mesh 0 needs
  auto mesh = tile->load_mesh(0);                      // reads only those ranges
  if (!mesh) return 1;
  std::printf("mesh 0: %zu vertex bytes from %zu ranges\n", mesh->vertices.size(), needed.size());
  // readme:end
  return 0;
}

int write(const char* path) {
  const std::vector<float> pos = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::vector<float> nrm = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  const std::vector<float> uv = {0, 0, 1, 0, 0, 1};
  const std::vector<std::uint32_t> idx = {0, 1, 2};
  // readme:begin write
  untold::builder b{untold::file_type::tile};
  auto tex  = b.add_texture({.name = "wall", .uri = "Textures/wall.png", .format = untold::texture_format::bc7});
  auto mat  = b.add_material({.name = "wall", .base_color_texture = tex});
  auto room = b.add_entity({.name = "room"});
  auto vertices = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = pos, .normals = nrm, .uv0 = uv});
  if (!vertices) return 1;
  b.add_mesh({.entity = room, .name = "walls", .material = mat, .vertices = *vertices, .indices = idx});

  untold::write_options options;
  options.compression.data = {untold::compression::zstd, 9};   // geometry; metadata stays raw
  auto bytes = b.finish(options);                              // result<std::vector<std::byte>>
  if (!bytes) {
    std::puts(bytes.error().describe().c_str());               // e.g. a dangling material
    return 1;
  }
  // readme:end
  return untold::write_file(path, *bytes) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: untold_example_readme OUT.untold\n");
    return 2;
  }
  if (write(argv[1]) != 0) return 1;
  if (read(argv[1]) != 0) return 1;
  return ranges(argv[1]);
}
