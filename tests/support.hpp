// Shared helpers for the unit tests: a realistic scene built with the writer,
// hand-made vertex bytes, and byte patching of files by spec offsets.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <untold/integrity.hpp>
#include <untold/reader.hpp>
#include <untold/writer.hpp>

namespace test {

using bytes = std::vector<std::byte>;

/// PBR_STATIC_V1 vertices written by hand (not by the library's encoder):
/// position, normal (0,0,1), tangent (1,0,0,+1), uv0/uv1 zero, white color.
inline bytes raw_vertices(const std::vector<untold::float3>& positions) {
  bytes out(positions.size() * 32, std::byte{0});
  for (std::size_t i = 0; i < positions.size(); ++i) {
    std::byte* v = out.data() + 32 * i;
    for (int k = 0; k < 3; ++k) untold::store_le_unchecked<float>(v + 4 * k, positions[i][k]);
    untold::store_le_unchecked<std::uint32_t>(v + 12, 0x1FF00000u);  // z = +511
    untold::store_le_unchecked<std::uint32_t>(v + 16, 0x400001FFu);  // x = +511, w = +1
    untold::store_le_unchecked<std::uint32_t>(v + 28, 0xFFFFFFFFu);
  }
  return out;
}

/// A grid of (n x n) vertices in the XY plane at height z, with its triangles.
struct grid {
  bytes vertices;
  std::vector<std::uint32_t> indices;
};
inline grid make_grid(std::uint32_t n, float z = 0.0f, float scale = 1.0f) {
  std::vector<untold::float3> positions;
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) positions.push_back({x * scale, y * scale, z});
  grid g{raw_vertices(positions), {}};
  for (std::uint32_t y = 0; y + 1 < n; ++y)
    for (std::uint32_t x = 0; x + 1 < n; ++x) {
      const std::uint32_t i = y * n + x;
      g.indices.insert(g.indices.end(), {i, i + 1, i + n, i + 1, i + n + 1, i + n});
    }
  return g;
}

/// A scene with a hierarchy, several meshes per entity, uint16 and uint32
/// indices, edge indices, shared textures and materials.
struct scene {
  untold::builder builder{untold::file_type::tile};
  std::vector<grid> grids;  // keeps mesh inputs alive
};

inline void fill_realistic_scene(untold::builder& b, std::vector<grid>& grids, bool height_fields = false,
                                 bool remap = false) {
  grids.push_back(make_grid(4, 0.0f));
  grids.push_back(make_grid(300, 1.0f, 0.01f));  // 90000 vertices -> uint32 indices
  grids.push_back(make_grid(2, -2.0f));
  const auto albedo = b.add_texture({.name = "albedo", .uri = "Textures/wall_albedo.png",
                                     .format = untold::texture_format::bc7, .flags = untold::texture_flags::srgb,
                                     .width = 1024, .height = 1024, .mip_count = 11});
  const auto normal = b.add_texture({.name = "normal", .uri = "Textures/wall_normal.png",
                                     .format = untold::texture_format::bc5,
                                     .flags = untold::texture_flags::normal_map, .width = 512, .height = 512,
                                     .mip_count = 10});
  untold::material_desc wall{.name = "wall", .base_color_factor = {0.8f, 0.7f, 0.6f, 1.0f},
                             .metallic_factor = 0.0f, .roughness_factor = 0.9f, .base_color_texture = albedo,
                             .normal_texture = normal};
  if (height_fields) {
    wall.height_texture = normal;
    wall.height_scale = 0.1f;
  }
  if (remap) {
    wall.height_remap_min = -1.0f;
    wall.height_remap_max = 2.0f;
  }
  const auto wall_mat = b.add_material(wall);
  const auto floor_mat = b.add_material({.name = "floor", .base_color_texture = albedo,
                                         .roughness_channel = untold::texture_channel::g,
                                         .metallic_channel = untold::texture_channel::b});
  untold::mat4 moved = untold::identity_matrix;
  moved[12] = 10.0f;
  const auto root = b.add_entity({.name = "root"});
  const auto house = b.add_entity({.name = "house", .parent = root, .local_transform = moved});
  const auto room = b.add_entity({.name = "room", .parent = house});
  const auto floor_entity = b.add_entity({.name = "floor", .parent = root});
  b.add_mesh({.entity = room, .name = "walls", .material = wall_mat, .vertices = grids[0].vertices,
              .indices = grids[0].indices, .edge_indices = std::span(grids[0].indices).first(6)});
  b.add_mesh({.entity = floor_entity, .name = "terrain", .material = floor_mat, .vertices = grids[1].vertices,
              .indices = grids[1].indices});
  b.add_mesh({.entity = room, .name = "ceiling", .material = wall_mat, .vertices = grids[2].vertices,
              .indices = grids[2].indices});
  b.add_mesh({.entity = house, .name = "walls", .vertices = grids[0].vertices, .indices = grids[0].indices});
}

/// Writes a scene file; `content_hash` off lets tests patch bytes freely.
inline bytes write_scene(bool content_hash = false, untold::write_options options = {}) {
  untold::builder b;
  std::vector<grid> grids;
  fill_realistic_scene(b, grids);
  options.content_hash = content_hash;
  auto file = b.finish(options);
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  return std::move(*file);
}

/// Limits for opening the test scenes written with the meshopt compressions:
/// their grids are perfectly regular and shrink past the default 64x
/// expansion budget (limits::max_expansion), which real geometry stays well
/// inside (docs/format.md).
/// `n` bytes from a fixed-seed generator: incompressible and reproducible.
inline bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bytes out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xFFu);
  return out;
}

inline untold::limits roomy_limits() {
  untold::limits l;
  l.max_expansion = 4096;
  return l;
}

// ---- byte patching by spec offsets --------------------------------------------------

inline std::uint32_t get_u32(const bytes& f, std::size_t at) { return untold::load_le_unchecked<std::uint32_t>(f.data() + at); }
inline std::uint64_t get_u64(const bytes& f, std::size_t at) { return untold::load_le_unchecked<std::uint64_t>(f.data() + at); }
inline void put_u32(bytes& f, std::size_t at, std::uint32_t v) { untold::store_le_unchecked<std::uint32_t>(f.data() + at, v); }
inline void put_u64(bytes& f, std::size_t at, std::uint64_t v) { untold::store_le_unchecked<std::uint64_t>(f.data() + at, v); }
inline void put_f32(bytes& f, std::size_t at, float v) { untold::store_le_unchecked<float>(f.data() + at, v); }

/// Byte offset of chunk-table row `row` (spec 3.2).
inline std::size_t chunk_row_offset(std::size_t row) { return 204 + 40 * row; }

/// The chunk-table row holding `type`, read straight from the bytes.
inline std::size_t chunk_row(const bytes& f, std::uint32_t type) {
  const std::uint32_t count = get_u32(f, 24);
  for (std::size_t row = 0; row < count; ++row)
    if (get_u32(f, chunk_row_offset(row)) == type) return row;
  FAIL("chunk type " << type << " not in file");
  return 0;
}
inline std::size_t chunk_payload_offset(const bytes& f, std::uint32_t type) {
  return static_cast<std::size_t>(get_u64(f, chunk_row_offset(chunk_row(f, type)) + 8));
}
/// File offset of record `row` of a record table (uncompressed files only).
inline std::size_t record_offset(const bytes& f, std::uint32_t type, std::size_t row, std::size_t record_size) {
  return chunk_payload_offset(f, type) + row * record_size;
}

/// What a tool that does not know the untold.integrity chunk does to a file,
/// as the reference pipeline's post-export step (texbake.patch_refs) does:
/// `edit(chunkType, payload)` may change any payload, its size included
/// (edited chunks must be stored uncompressed); every chunk is laid out
/// again in its old file order, 16-byte aligned, with offsets and sizes
/// updated in the table and every payload it did not edit - the integrity
/// chunk's too - copied byte for byte; the contentHash is recomputed per
/// spec 5 (stored bytes in chunkType order, ties in table order) when
/// `recompute_content_hash`, else the old one stays.
template <class Edit>
bytes rewrite_unaware(const bytes& f, Edit&& edit, bool recompute_content_hash) {
  struct row {
    std::uint32_t type, compression;
    std::uint64_t offset, size;
    std::size_t index;
    bytes payload;
  };
  const std::uint32_t count = get_u32(f, 24);
  std::vector<row> rows;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = chunk_row_offset(i);
    row r{get_u32(f, at), get_u32(f, at + 4), get_u64(f, at + 8), get_u64(f, at + 16), i, {}};
    r.payload.assign(f.begin() + static_cast<std::ptrdiff_t>(r.offset),
                     f.begin() + static_cast<std::ptrdiff_t>(r.offset + r.size));
    const bytes original = r.payload;
    edit(r.type, r.payload);
    if (r.payload != original) REQUIRE(r.compression == 0);
    r.size = r.payload.size();
    rows.push_back(std::move(r));
  }
  std::vector<row*> by_offset;
  for (row& r : rows) by_offset.push_back(&r);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const row* a, const row* b) { return a->offset < b->offset; });
  bytes out(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(chunk_row_offset(count)));
  for (row* r : by_offset) {
    out.resize((out.size() + 15) / 16 * 16, std::byte{0});
    r->offset = out.size();
    out.insert(out.end(), r->payload.begin(), r->payload.end());
  }
  for (const row& r : rows) {
    put_u64(out, chunk_row_offset(r.index) + 8, r.offset);
    put_u64(out, chunk_row_offset(r.index) + 16, r.size);
    if (r.compression == 0) put_u64(out, chunk_row_offset(r.index) + 24, r.size);
  }
  if (recompute_content_hash) {
    std::vector<const row*> by_type;
    for (const row& r : rows) by_type.push_back(&r);
    std::stable_sort(by_type.begin(), by_type.end(), [](const row* a, const row* b) { return a->type < b->type; });
    untold::sha256 hasher;
    for (const row* r : by_type) hasher.update(r->payload);
    const auto digest = hasher.finish();
    REQUIRE(digest.has_value());
    std::memcpy(out.data() + 140, digest->data(), 32);
  }
  return out;
}

/// rewrite_unaware as texbake.patch_refs does it: texture 0's URI becomes
/// `uri`, a string appended to the string table (which grows, so every
/// chunk stored after it moves).
inline bytes patch_texture_uri(const bytes& f, std::string_view uri, bool recompute_content_hash) {
  std::uint32_t appended_at = 0;
  return rewrite_unaware(
      f,
      [&](std::uint32_t type, bytes& payload) {
        if (type == static_cast<std::uint32_t>(untold::chunk_type::string_table)) {
          appended_at = static_cast<std::uint32_t>(payload.size());
          for (const char c : uri) payload.push_back(static_cast<std::byte>(c));
          payload.push_back(std::byte{0});
        } else if (type == static_cast<std::uint32_t>(untold::chunk_type::texture_table)) {
          REQUIRE(appended_at != 0);  // the string table is row 1 (spec 7 order), before the textures
          put_u32(payload, 4, appended_at);  // uriOffset of texture 0
        }
      },
      recompute_content_hash);
}

/// The rule id a file is rejected with, or "accepted".
inline std::string rejection(const bytes& f, const untold::open_options& options = {}) {
  auto a = untold::open(f, options);
  return a ? std::string("accepted") : std::string(a.error().rule_id());
}

inline bytes read_binary(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p.string());
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

/// The HTTP Range requests https_range_source makes when streamed_asset's
/// load_mesh loads `meshes` of the uncompressed file `whole`, computed from
/// the file's layout alone: each non-empty vertex, index and edge-index part
/// is read on its own, grown to the 64 KiB digest blocks around it when the
/// file has block digests (counted from the chunk's first byte, the last cut
/// at the chunk's end). A range inside the `prefix` open read costs nothing;
/// one asked for again comes from the disk cache. Returns {file offset, size}
/// per request.
inline std::set<std::pair<std::uint64_t, std::uint64_t>> mesh_range_requests(const untold::asset& whole,
                                                                             const std::vector<std::uint32_t>& meshes,
                                                                             std::uint64_t prefix = 65536) {
  const std::uint64_t block = untold::has_block_digests(whole) ? untold::default_digest_block_size : 1;
  std::set<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const std::uint32_t i : meshes) {
    const untold::mesh_record m = whole.meshes()[i];
    const std::pair<untold::chunk_type, untold::byte_range> parts[] = {
        {untold::chunk_type::vertex_data, {m.vertex_data_offset, m.vertex_data_size_bytes}},
        {untold::chunk_type::index_data, {m.index_data_offset, m.index_data_size_bytes}},
        {untold::chunk_type::edge_index_data,
         {m.edge_index_offset(), std::uint64_t{m.edge_index_count()} * untold::index_size(m.index_type)}}};
    for (const auto& [type, part] : parts) {
      const auto row = whole.find_chunk(type);
      if (!row || part.size == 0) continue;
      const untold::chunk_entry& c = whole.chunks()[*row];
      REQUIRE(c.compression_type == 0);
      const std::uint64_t first = part.offset / block * block;
      const std::uint64_t end = std::min(c.compressed_size, (part.end() + block - 1) / block * block);
      CHECK(end - first <= part.size + 2 * (block - 1));  // at most a partial block each side
      if (c.file_offset + end <= prefix) continue;
      out.insert({c.file_offset + first, end - first});
    }
  }
  return out;
}

}  // namespace test
