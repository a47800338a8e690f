// Built with -ffast-math (tests/CMakeLists.txt): a consumer that compiles the
// library that way must not lose the finite rules (R-FINITE, U3D-FINITE,
// HM-FINITE). -ffast-math lets the compiler assume that no float is NaN or
// Inf and fold std::isfinite(x) to true; the library's one check
// (detail/checks.hpp) tests the bits instead. Values come through volatile
// so the compiler cannot see them at compile time.
#include <untold/assetc/assetc.hpp>
#include <untold/detail/checks.hpp>
#include <untold/detail/scan.hpp>
#include <untold/urho3d/urho3d.hpp>
#include <untold/validate.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#ifndef __FAST_MATH__
#error "this translation unit must be built with -ffast-math"
#endif

namespace {
float from_bits(std::uint32_t bits) {
  volatile std::uint32_t v = bits;
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}
}  // namespace

TEST_CASE("fast-math: the shared finite check still sees NaN and Inf") {
  CHECK_FALSE(untold::detail::is_finite(from_bits(0x7FC00000u)));
  CHECK_FALSE(untold::detail::is_finite(from_bits(0xFF800000u)));
  CHECK(untold::detail::is_finite(from_bits(0x3F800000u)));
  CHECK(untold::detail::is_nan(from_bits(0xFFFFFFFFu)));
  const std::array<float, 3> v{1.0f, from_bits(0x7F800000u), 2.0f};
  CHECK_FALSE(untold::detail::all_finite(v));
}

TEST_CASE("fast-math: every family's finite test rejects a NaN") {
  // .untold deep checks (R-FINITE) go through validate.hpp's aabb test.
  const untold::aabb box{{0.0f, from_bits(0x7FC00000u), 0.0f}, {1.0f, 1.0f, 1.0f}};
  CHECK_FALSE(untold::detail::all_finite(box));
  // Urho3D (U3D-FINITE): the scan over a vertex buffer.
  std::array<std::byte, 12> vertex{};
  const float values[3] = {0.0f, from_bits(0x7FC00000u), 1.0f};
  std::memcpy(vertex.data(), values, sizeof(values));
  const auto hit = untold::urho3d::detail::first_non_finite(vertex, 12, 0, 3);
  CHECK(hit.record == 0);
  CHECK(untold::detail::is_nan(hit.value));
  // assetc (HM-FINITE).
  CHECK_FALSE(untold::assetc::detail::is_finite(from_bits(0xFF800000u)));
  // The one-pass record scan the deep checks run first (detail/scan.hpp),
  // over enough records for its vector blocks and its tail.
  std::vector<std::byte> records(37 * 28);
  const std::uint32_t position[] = {0, 1, 2};
  CHECK(untold::detail::scan_records(records.data(), 37, 28, position, {}).all_finite);
  for (const std::size_t record : {std::size_t{5}, std::size_t{36}}) {
    std::vector<std::byte> bad = records;
    const float nan = from_bits(0x7FC00000u);
    std::memcpy(bad.data() + 28 * record + 8, &nan, 4);
    CHECK_FALSE(untold::detail::scan_records(bad.data(), 37, 28, position, {}).all_finite);
  }
}

TEST_CASE("fast-math: open_model with deep checks rejects a NaN position (U3D-FINITE)") {
  // A UMD2 model written byte by byte: one vertex buffer of one VECTOR3
  // position (0, NaN, 1), no index buffers, geometries, morphs or bones.
  std::vector<std::byte> file;
  const auto u32 = [&file](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) file.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFFu));
  };
  for (const char c : {'U', 'M', 'D', '2'}) file.push_back(static_cast<std::byte>(c));
  u32(1);                                     // vertex buffers
  u32(1);                                     // vertices
  u32(1);                                     // elements
  u32(0x0003);                                // VECTOR3 POSITION
  u32(0);                                     // morph range start
  u32(0);                                     // morph range count
  for (const std::uint32_t bits : {0x00000000u, 0x7FC00000u, 0x3F800000u}) u32(bits);  // the vertex
  for (int i = 0; i < 4; ++i) u32(0);         // index buffers, geometries, morphs, bones
  for (int i = 0; i < 6; ++i) u32(0);         // bounding box
  namespace u3 = untold::urho3d;
  REQUIRE(u3::open_model(file).has_value());  // structurally fine
  const auto deep = u3::open_model(file, {.deep_checks = true});
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().code == untold::errc::u3d_not_finite);
  CHECK(deep.error().context.offset == 32);  // the NaN's byte offset in the file
}
