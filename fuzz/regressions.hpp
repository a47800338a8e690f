// fuzz/regressions.hpp - the hand-made adversarial inputs of the hardening
// work (SECURITY.md), built from a writer output and patched through the
// library's own record codecs. make_corpus.cpp writes them into the corpus
// (regress-*), tests/unit/test_adversarial.cpp asserts what the reader does
// with them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <untold/extensions.hpp>
#include <untold/reader.hpp>
#include <untold/vertex.hpp>
#include <untold/writer.hpp>

namespace untold_fuzz::regress {

using bytes = std::vector<std::byte>;

/// Chunk-table row `row` of `file`, decoded / re-encoded in place.
inline untold::chunk_entry get_chunk(const bytes& file, std::size_t row) {
  return untold::codec<untold::chunk_entry>::decode(untold::byte_span(file).subspan(204 + 40 * row));
}
inline void put_chunk(bytes& file, std::size_t row, const untold::chunk_entry& c) {
  untold::codec<untold::chunk_entry>::encode(c, untold::mutable_byte_span(file).subspan(204 + 40 * row));
}
inline std::size_t row_of(const bytes& file, untold::chunk_type type) {
  const std::uint32_t count = untold::load_le_unchecked<std::uint32_t>(file.data() + 24);
  for (std::size_t row = 0; row < count; ++row)
    if (get_chunk(file, row).chunk_type == static_cast<std::uint32_t>(type)) return row;
  return count;
}

/// PBR_STATIC_V1 vertices at `positions` (normal +z, tangent +x, white).
inline bytes vertices_at(const std::vector<untold::float3>& positions) {
  std::vector<float> xyz;
  for (const auto& p : positions) xyz.insert(xyz.end(), p.begin(), p.end());
  auto encoded = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = xyz});
  return encoded ? std::move(*encoded) : bytes{};
}

/// One entity with a quad, every chunk compressed with `method` (when that
/// makes it smaller), no content hash.
inline bytes small_scene(untold::compression method) {
  static const bytes quad = vertices_at({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}});
  static const std::vector<std::uint32_t> indices = {0, 1, 2, 1, 3, 2, 0, 1, 2, 1, 3, 2};
  untold::builder b;
  const auto e = b.add_entity({.name = "a string the codecs can shrink: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"});
  b.add_mesh({.entity = e, .name = "quad", .vertices = quad, .indices = indices});
  untold::write_options options{.content_hash = false};
  options.compression.metadata = {method, 0};
  options.compression.data = {method, 0};
  auto file = b.finish(options);
  return file ? std::move(*file) : bytes{};
}

/// The total of uncompressed sizes wraps: the vertex chunk declares
/// 2^64 - (the compressed chunks before it), so a running uint64 sum returns
/// to 0. With max_chunk_bytes lifted to UINT64_MAX the reader used to pass
/// the table and then allocate the declared size. Now R-LIMITS.
inline bytes total_limit_wrap() {
  bytes f = small_scene(untold::compression::lz4);
  const std::size_t vertex_row = row_of(f, untold::chunk_type::vertex_data);
  std::uint64_t before = 0;
  for (std::size_t row = 0; row < vertex_row; ++row)
    if (get_chunk(f, row).compression_type != 0) before += get_chunk(f, row).uncompressed_size;
  untold::chunk_entry c = get_chunk(f, vertex_row);
  c.uncompressed_size = 0 - before;  // 2^64 - before
  put_chunk(f, vertex_row, c);
  return f;
}

/// A compressed string table of a few dozen bytes declaring 1 GiB (the
/// default per-chunk limit). The reader used to allocate and zero 1 GiB
/// before the decoder failed. Now R-DECOMPRESS before any allocation.
inline bytes declares_1gib(untold::compression method) {
  bytes f = small_scene(method);
  const std::size_t row = row_of(f, untold::chunk_type::string_table);
  untold::chunk_entry c = get_chunk(f, row);
  c.uncompressed_size = std::uint64_t{1} << 30;
  put_chunk(f, row, c);
  return f;
}

/// `n` one-vertex meshes, every record then patched to cover ALL vertices
/// and ALL indices (bounds x in 0..7): n meshes x n vertices. Deep checks
/// that scan each mesh's range cost n^2; the reader's cost n log n.
inline bytes overlapping_meshes(std::uint32_t n) {
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  std::vector<bytes> vertices;
  const std::vector<std::uint32_t> indices = {0, 0, 0, 0, 0, 0};  // 12 bytes: no alignment padding, a whole triangle list
  for (std::uint32_t i = 0; i < n; ++i) {
    vertices.push_back(vertices_at({{static_cast<float>(i % 7), 0, 0}}));
    b.add_mesh({.entity = e, .vertices = vertices.back(), .indices = indices});
  }
  auto file = b.finish({.content_hash = false});
  if (!file) return {};
  bytes f = std::move(*file);
  const std::uint64_t index_bytes = get_chunk(f, row_of(f, untold::chunk_type::index_data)).uncompressed_size;
  const std::uint64_t table = get_chunk(f, row_of(f, untold::chunk_type::mesh_table)).file_offset;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto at = untold::mutable_byte_span(f).subspan(table + std::size_t{i} * 104, 104);
    auto m = untold::codec<untold::mesh_record>::decode(at);
    m.vertex_count = n;
    m.index_count = static_cast<std::uint32_t>(index_bytes / 2);
    m.vertex_data_offset = m.index_data_offset = 0;
    m.vertex_data_size_bytes = std::uint64_t{n} * 32;
    m.index_data_size_bytes = index_bytes;
    m.local_bounds = {{0, 0, 0}, {7, 0, 0}};
    untold::codec<untold::mesh_record>::encode(m, at);
  }
  return f;
}

/// `n` skins, each first made on its own one-vertex mesh, then every skin
/// record patched to bind the same n-vertex mesh through the same joint data:
/// n skins x n skinned vertices. A deep check that scans each skin's joint
/// indices costs n^2; the reader's costs n log n.
inline bytes overlapping_skins(std::uint32_t n) {
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  const untold::skeleton_joint_desc joint{.path = "root"};
  const auto skeleton = b.add_skeleton({.name = "rig", .entity = e, .joints = std::span(&joint, 1)});
  const std::vector<std::uint32_t> indices = {0, 0, 0}, palette = {0};
  std::vector<untold::float3> positions;
  for (std::uint32_t i = 0; i < n; ++i) positions.push_back({static_cast<float>(i % 7), 0, 0});
  const bytes big_vertices = vertices_at(positions), one_vertex = vertices_at({{0, 0, 0}});
  const std::vector<std::array<std::uint16_t, 4>> joints(n, {0, 0, 0, 0});
  const std::vector<untold::float4> weights(n, {1, 0, 0, 0});
  const auto big = b.add_mesh({.entity = e, .vertices = big_vertices, .indices = indices});
  b.add_skin({.mesh = big, .skeleton = skeleton, .joints = palette, .joint_indices = joints, .joint_weights = weights});
  for (std::uint32_t i = 1; i < n; ++i) {
    const auto mesh = b.add_mesh({.entity = e, .vertices = one_vertex, .indices = indices});
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = palette, .joint_indices = std::span(joints).first(1),
                .joint_weights = std::span(weights).first(1)});
  }
  auto file = b.finish({.content_hash = false});
  if (!file) return {};
  bytes f = std::move(*file);
  const std::uint64_t table = get_chunk(f, row_of(f, untold::chunk_type::skin_table)).file_offset;
  const auto skin_at = [&](std::uint32_t i) { return untold::mutable_byte_span(f).subspan(table + std::size_t{i} * 48, 48); };
  const auto first = untold::codec<untold::skin_record>::decode(skin_at(0));
  for (std::uint32_t i = 1; i < n; ++i) {
    auto s = untold::codec<untold::skin_record>::decode(skin_at(i));
    s.mesh_record_index = first.mesh_record_index;
    s.vertex_count = n;
    s.joint_index_data_offset = first.joint_index_data_offset;
    s.joint_weight_data_offset = first.joint_weight_data_offset;
    untold::codec<untold::skin_record>::encode(s, skin_at(i));
  }
  return f;
}

}  // namespace untold_fuzz::regress
