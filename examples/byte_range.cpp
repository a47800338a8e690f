// Byte-range loading: open a .untold file through a range source (here a
// local file read with pread; in an engine, HTTP range requests or a pack
// file), read only header, chunk table and metadata, list the ranges one mesh
// needs, load just that mesh, and report how many bytes were read.
//
//   untold_example_byte_range FILE.untold [MESH_INDEX]
#include <untold/untold.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s FILE.untold [MESH_INDEX]\n", argv[0]);
    return 2;
  }
  const auto mesh_index = static_cast<std::uint32_t>(argc == 3 ? std::strtoul(argv[2], nullptr, 10) : 0);

  auto source = untold::file_range_source::open(argv[1]);
  if (!source) {
    std::fprintf(stderr, "%s: %s\n", argv[1], source.error().describe().c_str());
    return 1;
  }
  const std::uint64_t file_size = source->size();

  // Header, table and every metadata chunk, validated by the same rules as
  // untold::open; geometry stays on disk. initial_read = 0 asks for exactly
  // those bytes (three reads); the default guesses 64 KiB in one read, which
  // suits high-latency sources better.
  untold::stream_options options;
  options.initial_read = 0;
  auto tile = untold::streamed_asset::open(*source, options);
  if (!tile) {
    std::fprintf(stderr, "%s: %s\n", argv[1], tile.error().describe().c_str());
    return 1;
  }
  const untold::asset& meta = tile->metadata();
  std::printf("%s: %llu bytes; open read %llu bytes (header, table, metadata)\n", argv[1],
              static_cast<unsigned long long>(file_size), static_cast<unsigned long long>(tile->bytes_read()));
  for (const untold::byte_range& r : tile->metadata_ranges())
    std::printf("  metadata range [%llu, %llu)\n", static_cast<unsigned long long>(r.offset),
                static_cast<unsigned long long>(r.end()));

  const auto mesh = meta.meshes().at(mesh_index);
  if (!mesh) {
    std::fprintf(stderr, "%s: no mesh %u (the file has %zu)\n", argv[1], mesh_index, meta.meshes().size());
    return 1;
  }
  std::printf("mesh %u '%s': %u vertices, %u indices\n", mesh_index,
              std::string(meta.string(mesh->mesh_name_offset)).c_str(), mesh->vertex_count, mesh->index_count);
  // Uncompressed geometry is read exactly; a compressed chunk is read whole
  // (it must be decoded whole) and then serves every other mesh for free.
  for (const untold::byte_range& r : tile->ranges_for_mesh(mesh_index))
    std::printf("  needs range [%llu, %llu), %llu bytes\n", static_cast<unsigned long long>(r.offset),
                static_cast<unsigned long long>(r.end()), static_cast<unsigned long long>(r.size));

  const std::uint64_t before = tile->bytes_read();
  auto bytes = tile->load_mesh(mesh_index);
  if (!bytes) {
    std::fprintf(stderr, "%s: %s\n", argv[1], bytes.error().describe().c_str());
    return 1;
  }
  const auto vertices = untold::pbr_vertex_view::from_bytes(bytes->vertices);
  if (!vertices || vertices->size() != mesh->vertex_count) {
    std::fprintf(stderr, "%s: unexpected vertex bytes\n", argv[1]);
    return 1;
  }
  const auto p = vertices->position(0);
  std::printf("loaded mesh %u: %zu vertex bytes, %zu index bytes (read %llu more bytes); vertex 0 at (%g %g %g)\n",
              mesh_index, bytes->vertices.size(), bytes->indices.size(),
              static_cast<unsigned long long>(tile->bytes_read() - before), p[0], p[1], p[2]);
  std::printf("read %llu of %llu bytes (%.1f%%)\n", static_cast<unsigned long long>(tile->bytes_read()),
              static_cast<unsigned long long>(file_size),
              100.0 * static_cast<double>(tile->bytes_read()) / static_cast<double>(file_size));
  return 0;
}
