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

#define U3D_CHECK_ERR(expr, expected)                                                  \
  do {                                                                                 \
    auto u3d_r_ = (expr);                                                              \
    REQUIRE_FALSE(u3d_r_.has_value());                                                 \
    CHECK_MESSAGE(u3d_r_.error().code == (expected), u3d_r_.error().describe());       \
  } while (false)

}  // namespace u3d_test
