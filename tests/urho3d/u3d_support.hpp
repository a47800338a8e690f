// Helpers for the Urho3D tests: fixture loading and a tiny little-endian byte
// generator, written independently of the library's writers so that the two
// can check each other.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <untold/error.hpp>

namespace u3d_test {

using bytes = std::vector<std::byte>;

inline std::filesystem::path data_dir() { return std::filesystem::path(UNTOLD_TEST_DATA_DIR) / "urho3d"; }

inline bytes load(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << p.string());
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

/// Every .mdl fixture, sorted.
inline std::vector<std::filesystem::path> model_fixtures() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(data_dir() / "Models"))
    if (e.is_regular_file() && e.path().extension() == ".mdl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Hand-written little-endian bytes (no library code).
struct gen {
  bytes b;
  gen& id(std::string_view s) { return str(s); }
  gen& str(std::string_view s) {
    for (char c : s) b.push_back(static_cast<std::byte>(c));
    return *this;
  }
  gen& cstr(std::string_view s) { return str(s).u8(0); }
  gen& u8(std::uint8_t v) {
    b.push_back(static_cast<std::byte>(v));
    return *this;
  }
  gen& u16(std::uint16_t v) { return u8(static_cast<std::uint8_t>(v & 0xFF)).u8(static_cast<std::uint8_t>(v >> 8)); }
  gen& u32(std::uint32_t v) { return u16(static_cast<std::uint16_t>(v & 0xFFFF)).u16(static_cast<std::uint16_t>(v >> 16)); }
  gen& f32(float f) {
    std::uint32_t v;
    std::memcpy(&v, &f, 4);
    return u32(v);
  }
  gen& raw(const bytes& more) {
    b.insert(b.end(), more.begin(), more.end());
    return *this;
  }
  [[nodiscard]] std::size_t size() const { return b.size(); }
};

inline void put_u32(bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
inline std::uint32_t get_u32(const bytes& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::to_integer<std::uint32_t>(b[at + i]) << (8 * i);
  return v;
}
inline void put_f32(bytes& b, std::size_t at, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(b, at, v);
}


struct tiny_options {
  std::string_view id = "UMD2";
  std::uint32_t version = 2;
  std::uint32_t element_count = 4;
  bool two_morph_buffers = false;
  std::uint32_t bone1_parent = 0;
  std::uint32_t bone0_parent = 0;
  bool centers = true;
};

struct tiny {
  bytes file;
  std::size_t vb_count, elements, morph_range, ib_size, index_data, mapping, lod_count, lod, morph_buffer, morph_mask,
      morph_vertex, bone0_parent, bone1_parent, bone1_mask, positions, bone_count, end_of_bbox;
};

/// A skinned, morphed UMD2 model written byte by byte.
inline tiny make_tiny(const tiny_options& o = {}) {
  tiny t{};
  gen g;
  g.id(o.id);
  if (o.id == "UMD3") g.u32(o.version);
  t.vb_count = g.size();
  g.u32(1);                 // vertex buffers
  g.u32(3);                 // vertices
  t.elements = g.size();
  g.u32(o.element_count);
  const std::uint32_t descs[4] = {0x0003, 0x0103, 0x0604, 0x0705};  // position, normal, weights, indices
  for (std::uint32_t i = 0; i < o.element_count && i < 4; ++i) g.u32(descs[i]);
  t.morph_range = g.size();
  g.u32(0).u32(3);
  t.positions = g.size();
  const float pos[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (int v = 0; v < 3; ++v) {
    if (o.element_count == 0) break;
    g.f32(pos[v][0]).f32(pos[v][1]).f32(pos[v][2]);
    g.f32(0).f32(0).f32(-1);
    g.f32(0.75f).f32(0.25f).f32(0).f32(0);
    g.u8(0).u8(1).u8(0).u8(0);
  }
  g.u32(1);  // index buffers
  g.u32(3);
  t.ib_size = g.size();
  g.u32(2);
  t.index_data = g.size();
  g.u16(0).u16(1).u16(2);
  g.u32(1);  // geometries
  g.u32(2);
  t.mapping = g.size();
  g.u32(1).u32(0);
  t.lod_count = g.size();
  g.u32(1);
  t.lod = g.size();
  g.f32(0).u32(0).u32(0).u32(0).u32(0).u32(3);
  g.u32(1);  // morphs
  g.cstr("smile");
  if (o.id == "UMD3" && o.version >= 2) g.f32(0.5f);
  g.u32(o.two_morph_buffers ? 2 : 1);
  for (int k = 0; k < (o.two_morph_buffers ? 2 : 1); ++k) {
    t.morph_buffer = g.size();
    g.u32(0);
    t.morph_mask = g.size();
    g.u32(1).u32(1);
    t.morph_vertex = g.size();
    g.u32(2).f32(0).f32(1).f32(0);
  }
  t.bone_count = g.size();
  g.u32(2);  // bones
  g.cstr("root");
  t.bone0_parent = g.size();
  g.u32(o.bone0_parent).f32(0).f32(0).f32(0).f32(1).f32(0).f32(0).f32(0).f32(1).f32(1).f32(1);
  for (int k = 0; k < 12; ++k) g.f32(k % 5 == 0 ? 1.0f : 0.0f);
  g.u8(0);
  g.cstr("child");
  t.bone1_parent = g.size();
  g.u32(o.bone1_parent).f32(0).f32(1).f32(0).f32(1).f32(0).f32(0).f32(0).f32(1).f32(1).f32(1);
  for (int k = 0; k < 12; ++k) g.f32(k % 5 == 0 ? 1.0f : 0.0f);
  t.bone1_mask = g.size();
  g.u8(3).f32(0.5f).f32(-1).f32(-1).f32(-1).f32(1).f32(1).f32(1);
  g.f32(0).f32(0).f32(0).f32(1).f32(1).f32(0);  // bounding box
  t.end_of_bbox = g.size();
  if (o.centers) g.f32(0.3f).f32(0.3f).f32(0);
  t.file = std::move(g.b);
  return t;
}

/// A model of `geometries` geometries that each draw the same triangle of
/// one 3-vertex buffer, and one morph that lists vertex 0 `entries` times:
/// the shape that made cook quadratic (every entry visited every geometry).
inline bytes repeated_morph_model(std::uint32_t geometries, std::uint32_t entries) {
  gen g;
  g.id("UMD2").u32(1).u32(3).u32(1).u32(0x0003).u32(0).u32(3);
  for (int v = 0; v < 3; ++v) g.f32(static_cast<float>(v)).f32(static_cast<float>(v % 2)).f32(0);
  g.u32(1).u32(3).u32(2).u16(0).u16(1).u16(2);
  g.u32(geometries);
  for (std::uint32_t i = 0; i < geometries; ++i) g.u32(0).u32(1).f32(0).u32(0).u32(0).u32(0).u32(0).u32(3);
  g.u32(1).cstr("m").u32(1).u32(0).u32(1).u32(entries);
  for (std::uint32_t i = 0; i < entries; ++i) g.u32(0).f32(0).f32(0.001f).f32(0);
  g.u32(0);  // bones
  g.f32(0).f32(0).f32(0).f32(2).f32(1).f32(0);
  return g.b;
}


#define U3D_CHECK_ERR(expr, expected)                                                  \
  do {                                                                                 \
    auto u3d_r_ = (expr);                                                              \
    REQUIRE_FALSE(u3d_r_.has_value());                                                 \
    CHECK_MESSAGE(u3d_r_.error().code == (expected), u3d_r_.error().describe());       \
  } while (false)

}  // namespace u3d_test
