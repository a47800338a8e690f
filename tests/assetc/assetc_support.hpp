// Helpers for the assetc tests: a little-endian byte generator that does not
// use the library (so golden files are built independently of the writers),
// a small but complete mesh fixture, and byte patching by fourcc.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <untold/assetc/assetc.hpp>

namespace hm_test {

namespace ua = untold::assetc;
using bytes = std::vector<std::byte>;

/// Appends little-endian values by shifting, never through the library.
struct gen {
  bytes out;
  void u8(std::uint32_t v) { out.push_back(static_cast<std::byte>(v & 0xFF)); }
  void u16(std::uint32_t v) { u8(v), u8(v >> 8); }
  void u32(std::uint32_t v) { u16(v & 0xFFFF), u16(v >> 16); }
  void u64(std::uint64_t v) { u32(static_cast<std::uint32_t>(v)), u32(static_cast<std::uint32_t>(v >> 32)); }
  void i16(std::int16_t v) { u16(static_cast<std::uint16_t>(v)); }
  void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
  void str(std::string_view s) {
    for (char c : s) u8(static_cast<unsigned char>(c));
  }
  void tag(const char (&s)[5]) { str(std::string_view(s, 4)); }
  void pad16() {
    while (out.size() % 16 != 0) u8(0);
  }
  std::size_t size() const { return out.size(); }
};

inline std::uint32_t rd32(const bytes& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}
inline std::uint64_t rd64(const bytes& b, std::size_t at) {
  return rd32(b, at) | (std::uint64_t{rd32(b, at + 4)} << 32);
}
inline void wr32(bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
inline void wr64(bytes& b, std::size_t at, std::uint64_t v) {
  wr32(b, at, static_cast<std::uint32_t>(v)), wr32(b, at + 4, static_cast<std::uint32_t>(v >> 32));
}
inline void wr16(bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::byte>(v & 0xFF), b[at + 1] = static_cast<std::byte>(v >> 8);
}
inline void wrf(bytes& b, std::size_t at, float v) { wr32(b, at, std::bit_cast<std::uint32_t>(v)); }

inline std::uint32_t tag_value(const char (&s)[5]) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(s[0])) | static_cast<std::uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[3])) << 24;
}

/// Table row of the first chunk with this fourcc in a .hmesh (reads the table by hand).
inline std::size_t row_of(const bytes& b, const char (&tag)[5]) {
  const std::uint32_t n = rd32(b, 8);
  for (std::uint32_t i = 0; i < n; ++i)
    if (rd32(b, 32 + 24 * i) == tag_value(tag)) return i;
  FAIL("no chunk ", tag);
  return 0;
}
/// File offset of that chunk's payload.
inline std::size_t chunk_at(const bytes& b, const char (&tag)[5]) { return static_cast<std::size_t>(rd64(b, 32 + 24 * row_of(b, tag) + 8)); }
/// File offset of its table row.
inline std::size_t entry_at(const bytes& b, const char (&tag)[5]) { return 32 + 24 * row_of(b, tag); }

inline untold::byte_span span(const bytes& b) { return untold::byte_span(b.data(), b.size()); }

inline bytes read_data(const std::string& rel) {
  std::ifstream in(std::filesystem::path(UNTOLD_TEST_DATA_DIR) / rel, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing test data ", rel);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// ---- the mesh fixture: a quad, two submeshes, one meshlet, skin, one LOD, an unknown chunk ----

inline constexpr float quad_positions[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
inline constexpr float quad_uvs[] = {0, 0, 1, 0, 0, 1, 1, 1};

struct mesh_fixture {
  bytes vertices;  // GpuVertex bytes
  std::vector<std::uint32_t> indices{0, 1, 2, 2, 1, 3};
  std::vector<ua::meshlet> meshlets{{0, 4, 0, 2}};
  std::vector<std::uint32_t> meshlet_vertices{0, 1, 2, 3};
  std::vector<ua::meshlet_triangle> meshlet_triangles{{{0, 1, 2}}, {{2, 1, 3}}};
  std::vector<ua::meshlet_bound> meshlet_bounds{{{0.5f, 0.5f, 0}, 0.75f, {0, 0, 1}, 0.5f}};
  std::vector<std::uint64_t> materials{ua::hash_ref("models/quad/a"), ua::hash_ref("models/quad/b")};
  std::vector<ua::submesh> submeshes{{0, 3, 0, 1, 1, 0, {{0, 0, 0}, {1, 1, 0}, {0.5f, 0.5f, 0}, 0.75f}},
                                     {3, 3, 1, 0, ua::no_material, 0, {{0, 0, 0}, {1, 1, 0}, {0.5f, 0.5f, 0}, 0.75f}}};
  std::vector<ua::skin_vertex> skin{{{0, 0, 0, 0}, {1, 0, 0, 0}},
                                    {{1, 0, 0, 0}, {1, 0, 0, 0}},
                                    {{0, 1, 0, 0}, {0.5f, 0.5f, 0, 0}},
                                    {{1, 0, 0, 0}, {1, 0, 0, 0}}};
  std::vector<ua::joint> skeleton{ua::joint{}, ua::joint{.bind_translation = {0, 1, 0}, .parent = 0}};
  std::vector<std::uint32_t> lod_indices{0, 1, 3};
  std::vector<ua::mesh_lod> lods{{0, 3}, {0, 0}};  // submesh 0 level 1, submesh 1 level 1 (stalled)
  bytes extra_payload{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
  std::vector<ua::extra_chunk> extras;

  mesh_fixture() {
    auto v = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = quad_positions, .uvs = quad_uvs});
    REQUIRE(v);
    vertices = *v;
    extras.push_back({tag_value("XTRA"), 7, span(extra_payload)});
  }

  ua::hmesh_input input() const {
    ua::hmesh_input in;
    in.vertices = span(vertices);
    in.indices = indices;
    in.flags = ua::desc_flag_tangents;
    in.bounds = {{0, 0, 0}, {1, 1, 0}, {0.5f, 0.5f, 0}, 0.75f};
    in.meshlets = meshlets;
    in.meshlet_vertices = meshlet_vertices;
    in.meshlet_triangles = meshlet_triangles;
    in.meshlet_bounds = meshlet_bounds;
    in.meshlet_max_vertices = 64;
    in.meshlet_max_triangles = 124;
    in.materials = materials;
    in.submeshes = submeshes;
    in.skin = skin;
    in.skeleton = skeleton;
    in.lod_indices = lod_indices;
    in.lod_count = 1;
    in.lods = lods;
    in.extra_chunks = extras;
    return in;
  }
};

inline bytes fixture_mesh() {
  mesh_fixture f;
  auto out = ua::write_hmesh(f.input());
  REQUIRE_MESSAGE(out, out.error().describe());
  return *out;
}

/// The rule id a result failed with, or "OK".
template <class R>
std::string rule_of(const R& r) {
  return r ? std::string("OK") : std::string(r.error().rule_id());
}

}  // namespace hm_test
