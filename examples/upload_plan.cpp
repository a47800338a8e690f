// The GPU upload plan of a .untold file, per mesh: the vertex and index bytes
// to upload (as stored: no conversion), the vertex-input description in each
// graphics API (untold/gpu_formats.hpp), and the byte ranges of the file to
// request when streaming just that mesh (streamed_asset: metadata first,
// then only these ranges).
//
//   untold_example_upload_plan FILE.untold
#include <untold/gpu_formats.hpp>
#include <untold/untold.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <utility>

namespace {

void print_layout(const untold::gpu::vertex_layout_desc& layout) {
  std::printf("  %s, stride %u, one vertex buffer binding:\n", std::string(layout.name).c_str(), layout.stride);
  for (const untold::gpu::vertex_attribute& a : layout.attributes) {
    const untold::gpu::format_info& f = untold::gpu::info(a.format);
    std::printf("    location %u %s%u @%u %s: Vulkan %s, D3D %s%s, Metal %s, WebGPU \"%s\"%s, GL %s x%u%s%s\n",
                a.location, std::string(untold::gpu::name(a.meaning)).c_str(), a.semantic_index, a.offset,
                std::string(f.name).c_str(), std::string(f.vulkan.name).c_str(), std::string(f.dxgi.name).c_str(),
                f.dxgi.shader_decode ? " (+shader decode)" : "", std::string(f.metal.name).c_str(),
                std::string(f.webgpu.name).c_str(), f.webgpu.shader_decode ? " (+shader decode)" : "",
                std::string(f.opengl.type_name).c_str(), unsigned{f.opengl.size},
                f.opengl.normalized ? " normalized" : "", f.opengl.integer ? " (glVertexAttribIPointer)" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.untold\n", argv[0]);
    return 2;
  }
  // Open the way a streaming client does: header, table and metadata only.
  auto source = untold::file_range_source::open(argv[1]);
  if (!source) {
    std::fprintf(stderr, "%s: %s\n", argv[1], source.error().describe().c_str());
    return 1;
  }
  untold::stream_options options;
  options.initial_read = 0;
  auto tile = untold::streamed_asset::open(*source, options);
  if (!tile) {
    std::fprintf(stderr, "%s: %s\n", argv[1], tile.error().describe().c_str());
    return 1;
  }
  const untold::asset& meta = tile->metadata();
  std::printf("%s: %zu meshes; metadata read first:", argv[1], meta.meshes().size());
  for (const untold::byte_range& r : tile->metadata_ranges())
    std::printf(" [%llu, %llu)", static_cast<unsigned long long>(r.offset), static_cast<unsigned long long>(r.end()));
  std::printf("\n");
  // Every mesh has the one vertex layout of the format (spec 4).
  print_layout(untold::gpu::pbr_static_v1);
  // Uncompressed geometry chunks can be read straight into mapped GPU
  // memory; compressed ones are decoded into memory first.
  for (const untold::chunk_type t : {untold::chunk_type::vertex_data, untold::chunk_type::index_data})
    if (const auto row = meta.find_chunk(t))
      std::printf("  %s: %s\n", std::string(untold::chunk_type_name(static_cast<std::uint32_t>(t))).c_str(),
                  meta.chunks()[*row].compression_type == 0 ? "uncompressed: ranges go straight to the GPU buffer"
                                                            : "compressed: a range is the whole chunk, decoded first");

  // Meshes may share stored geometry (instancing): upload each range once.
  std::set<std::pair<std::uint64_t, std::uint64_t>> uploaded;
  unsigned long long total = 0;
  for (std::uint32_t i = 0; i < meta.meshes().size(); ++i) {
    const untold::mesh_record m = meta.meshes()[i];
    const untold::gpu::index_format* index = untold::gpu::index_format_for(m.index_type);
    if (index == nullptr) continue;  // never for an opened file: R-INDEX-TYPE
    const unsigned long long bytes = m.vertex_data_size_bytes + m.index_data_size_bytes;
    const bool shared = !uploaded.insert({m.vertex_data_offset, m.index_data_offset}).second;
    if (!shared) total += bytes;
    std::printf("mesh %u '%s': %s %llu bytes = vertices %llu (%u x %u) + indices %llu (%u x %s)\n", i,
                std::string(meta.string(m.mesh_name_offset)).c_str(),
                shared ? "shares the buffers of an earlier mesh," : "upload", bytes,
                static_cast<unsigned long long>(m.vertex_data_size_bytes), m.vertex_count, m.vertex_stride_bytes,
                static_cast<unsigned long long>(m.index_data_size_bytes), m.index_count,
                index->bytes == 2 ? "uint16" : "uint32");
    std::printf("  index format: Vulkan %s, D3D %s, Metal %s, WebGPU \"%s\", GL %s\n",
                std::string(index->vulkan.name).c_str(), std::string(index->dxgi.name).c_str(),
                std::string(index->metal.name).c_str(), std::string(index->webgpu.name).c_str(),
                std::string(index->opengl.name).c_str());
    // Uncompressed geometry is exactly the mesh's bytes; a compressed chunk is
    // requested whole (it decodes whole) and then serves the other meshes.
    std::printf("  streaming ranges:");
    for (const untold::byte_range& r : tile->ranges_for_mesh(i))
      std::printf(" [%llu, %llu)", static_cast<unsigned long long>(r.offset), static_cast<unsigned long long>(r.end()));
    std::printf("\n");
  }
  std::printf("total upload: %llu bytes (shared geometry counted once)\n", total);
  return 0;
}
