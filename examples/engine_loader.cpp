// What an engine does with a .untold tile: map the file, validate it once
// (deep checks on), walk the entities parents-first to get world transforms,
// and hand each mesh's vertex and index bytes - with the vertex stride and
// the PBR_STATIC_V1 attribute offsets and formats from untold/gpu_formats.hpp
// - to the GPU. The GPU here is a pretend one that prints what it was given
// (examples/vulkan_upload.cpp does it with Vulkan).
//
//   untold_example_engine_loader FILE.untold
#include <untold/untold.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

/// Stands in for a graphics device: "uploads" byte spans and counts them.
class pretend_gpu {
 public:
  struct buffer {
    std::uint32_t id;
    std::size_t bytes;
  };

  buffer upload_vertex_buffer(untold::byte_span bytes, std::size_t stride) {
    bytes_uploaded_ += bytes.size();
    std::printf("    gpu: vertex buffer #%u, %zu bytes, stride %zu, attributes", next_id_, bytes.size(), stride);
    for (const untold::gpu::vertex_attribute& a : untold::gpu::pbr_static_v1.attributes) {
      std::printf(" %s%u@%u:%s", std::string(untold::gpu::name(a.meaning)).c_str(), a.semantic_index, a.offset,
                  std::string(untold::gpu::info(a.format).vulkan.name).c_str());
    }
    std::printf("\n");
    return {next_id_++, bytes.size()};
  }

  buffer upload_index_buffer(untold::byte_span bytes, untold::index_type type) {
    bytes_uploaded_ += bytes.size();
    std::printf("    gpu: index buffer #%u, %zu bytes, %s\n", next_id_, bytes.size(),
                type == untold::index_type::uint16 ? "uint16" : "uint32");
    return {next_id_++, bytes.size()};
  }

  void draw_indexed(const buffer& vertices, const buffer& indices, std::uint32_t index_count,
                    const untold::mat4& world) {
    ++draws_;
    std::printf("    gpu: draw %u indices from #%u/#%u at world (%g %g %g)\n", index_count, vertices.id, indices.id,
                world[12], world[13], world[14]);
  }

  [[nodiscard]] std::size_t bytes_uploaded() const noexcept { return bytes_uploaded_; }
  [[nodiscard]] std::size_t draws() const noexcept { return draws_; }

 private:
  std::uint32_t next_id_ = 1;
  std::size_t bytes_uploaded_ = 0;
  std::size_t draws_ = 0;
};

untold::mat4 multiply(const untold::mat4& a, const untold::mat4& b) {
  untold::mat4 out{};
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 4; ++k) out[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.untold\n", argv[0]);
    return 2;
  }
  // 1. Map and validate, once. After this every accessor is infallible.
  auto opened = untold::open_file(argv[1], {.deep_checks = true});
  if (!opened) {
    std::fprintf(stderr, "%s: %s\n", argv[1], opened.error().describe().c_str());
    return 1;
  }
  const untold::asset& a = opened->asset;
  std::printf("%s: %s, format v%u, %zu entities, %zu meshes, %zu materials, %zu textures\n", argv[1],
              std::string(untold::file_type_name(a.header().file_type)).c_str(), a.format_version(),
              a.entities().size(), a.meshes().size(), a.materials().size(), a.textures().size());

  // 2. World transforms, parents first (validation ruled out cycles and
  //    dangling parents; a parent may come after its child in the table).
  const auto entities = a.entities();
  std::vector<std::optional<untold::mat4>> world(entities.size());
  const auto world_of = [&](std::uint32_t row, auto&& self) -> const untold::mat4& {
    if (!world[row]) {
      const untold::entity_record e = entities[row];
      const untold::mat4 parent = e.parent_entity_id == untold::none
                                      ? a.header().root_transform
                                      : self(*a.entity_row(e.parent_entity_id), self);
      world[row] = multiply(parent, e.local_transform);
    }
    return *world[row];
  };

  // 3. Upload and draw every mesh of every entity.
  pretend_gpu gpu;
  for (std::uint32_t row = 0; row < entities.size(); ++row) {
    const untold::entity_record e = entities[row];
    if (e.mesh_record_count == 0) continue;
    const untold::mat4& transform = world_of(row, world_of);
    for (std::uint32_t k = 0; k < e.mesh_record_count; ++k) {
      const untold::mesh_record m = a.meshes()[e.first_mesh_record_index + k];
      const std::string material =
          m.material_index == untold::none ? "(none)" : std::string(a.string(a.materials()[m.material_index].name_offset));
      std::printf("  entity '%s' mesh '%s': %u vertices, %u indices, material %s\n",
                  std::string(a.string(e.name_offset)).c_str(), std::string(a.string(m.mesh_name_offset)).c_str(),
                  m.vertex_count, m.index_count, material.c_str());
      const auto vb = gpu.upload_vertex_buffer(a.vertices(m), m.vertex_stride_bytes);
      const auto ib = gpu.upload_index_buffer(a.indices(m), static_cast<untold::index_type>(m.index_type));
      gpu.draw_indexed(vb, ib, m.index_count, transform);
    }
  }
  for (const untold::texture_record& t : a.textures())
    std::printf("  texture '%s': load %s (%ux%u)\n", std::string(a.string(t.name_offset)).c_str(),
                std::string(a.string(t.uri_offset)).c_str(), t.width, t.height);
  std::printf("uploaded %zu bytes in %zu draws\n", gpu.bytes_uploaded(), gpu.draws());
  return gpu.draws() == a.meshes().size() ? 0 : 1;
}
