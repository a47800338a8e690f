// Scalar attribute codecs (untold/packing.hpp, spec 4 and 4.1): exhaustive
// 10-bit and binary16 checks against independent references, tie rounding,
// the spec's octahedral vectors, and angular error over a dense sphere.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "untold/packing.hpp"

namespace {

using untold::dequantize_snorm10;
using untold::half_to_float;
using untold::quantize_snorm10;

constexpr double nan_d = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_d = std::numeric_limits<double>::infinity();

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// Reference binary16 -> value, written with ldexp instead of bit surgery.
double half_reference(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  double magnitude = 0.0;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? inf_d : nan_d;
  } else {
    magnitude = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  }
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// Fibonacci sphere point i of n.
std::array<double, 3> fibonacci_point(std::size_t i, std::size_t n) {
  const double golden_angle = 3.14159265358979323846 * (3.0 - std::sqrt(5.0));
  const double z = 1.0 - (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
  const double r = std::sqrt(std::max(0.0, 1.0 - z * z));
  const double phi = golden_angle * static_cast<double>(i);
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// Angle between two (not necessarily unit) directions, robust near 0.
double angle_between(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  const double cx = a[1] * b[2] - a[2] * b[1];
  const double cy = a[2] * b[0] - a[0] * b[2];
  const double cz = a[0] * b[1] - a[1] * b[0];
  const double dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  return std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), dot);
}

template <std::size_t N>
std::array<double, 3> to_double3(const std::array<float, N>& v) {
  return {v[0], v[1], v[2]};
}

constexpr std::size_t sphere_points = 1'000'000;
constexpr double rad_to_deg = 57.29577951308232;

}  // namespace

// ---- 10:10:10:2 --------------------------------------------------------------

TEST_CASE("packing: snorm10 all 1024 codes round trip, 0x200 never produced") {
  for (std::uint32_t code = 0; code < 1024; ++code) {
    const float f = dequantize_snorm10(code);
    CHECK(f >= -1.0f);
    CHECK(f <= 1.0f);
    const std::uint32_t expected = code == 0x200 ? 0x201u : code;  // -512/511 clamps to -1
    CHECK(quantize_snorm10(f) == expected);
    // The same through every field of a packed word.
    for (int field = 0; field < 3; ++field) {
      const std::uint32_t word = code << (10 * field);
      const auto xyz = untold::unpack_normal_1010102(word);
      CHECK(quantize_snorm10(xyz[static_cast<std::size_t>(field)]) == expected);
    }
  }
  CHECK(dequantize_snorm10(0x201) == -1.0f);
  CHECK(dequantize_snorm10(0x200) == -1.0f);
  CHECK(dequantize_snorm10(0x1FF) == 1.0f);
  CHECK(bits(dequantize_snorm10(0)) == 0u);  // +0, never -0
  // Dense sweep of the encoder: 0x200 never appears.
  for (int i = -2'000'000; i <= 2'000'000; ++i) {
    const double c = static_cast<double>(i) / 1'000'000.0;
    REQUIRE(quantize_snorm10(c) != 0x200u);
  }
}

TEST_CASE("packing: snorm10 clamping, NaN and ties to even") {
  CHECK(quantize_snorm10(1.0) == 0x1FFu);
  CHECK(quantize_snorm10(-1.0) == 0x201u);
  CHECK(quantize_snorm10(7.0) == 0x1FFu);
  CHECK(quantize_snorm10(-7.0) == 0x201u);
  CHECK(quantize_snorm10(inf_d) == 0x1FFu);
  CHECK(quantize_snorm10(-inf_d) == 0x201u);
  CHECK(quantize_snorm10(nan_d) == 0u);
  CHECK(quantize_snorm10(-0.0) == 0u);
  // 0.5 * 511 = 255.5 exactly: ties to even -> 256; -255.5 -> -256 = 0x300.
  CHECK(quantize_snorm10(0.5) == 256u);
  CHECK(quantize_snorm10(-0.5) == 0x300u);
  // Every exact tie k + 0.5 that a double c can produce: c = (k + 0.5) / 511
  // is usually inexact, so build ties from c * 511 where it is exact.
  for (int k = -511; k < 511; ++k) {
    const double c = (static_cast<double>(k) + 0.5) / 511.0;
    if (c * 511.0 != static_cast<double>(k) + 0.5) continue;
    const int even = (k % 2 == 0) ? k : k + 1;
    CHECK(quantize_snorm10(c) == (static_cast<std::uint32_t>(even) & 0x3FFu));
  }
}

TEST_CASE("packing: 10:10:10:2 degenerate vectors and handedness") {
  constexpr std::uint32_t z_axis = 0x1FF00000u;
  constexpr std::uint32_t x_axis = 0x000001FFu;
  CHECK(untold::pack_normal_1010102(0, 0, 0) == z_axis);
  CHECK(untold::pack_normal_1010102(1e-9, 0, 0) == z_axis);
  CHECK(untold::pack_normal_1010102(nan_d, 1, 0) == z_axis);
  CHECK(untold::pack_normal_1010102(inf_d, 0, 0) == z_axis);
  CHECK(untold::pack_normal_1010102(0, 0, 5) == z_axis);
  CHECK(untold::pack_normal_1010102(1e300, 0, 0) == x_axis);  // squares overflow, still a direction
  CHECK(untold::pack_normal_1010102(2e-8, 0, 0) == x_axis);   // just above the 1e-8 threshold
  CHECK((untold::pack_tangent_1010102(0, 0, 0, 1) & 0x3FFFFFFFu) == x_axis);
  CHECK((untold::pack_tangent_1010102(nan_d, 0, 0, 1) & 0x3FFFFFFFu) == x_axis);
  // Normal w is always 0.
  CHECK((untold::pack_normal_1010102(-1, -1, -1) >> 30) == 0u);

  struct hand_case {
    double handedness;
    std::uint32_t w;
  };
  const hand_case cases[] = {{1.0, 1}, {-1.0, 3}, {0.0, 1}, {-0.0, 1}, {nan_d, 1}, {-nan_d, 1},
                             {0.5, 1}, {-0.25, 3}, {1e-30, 1}, {-1e-30, 3}, {inf_d, 1}, {-inf_d, 3}};
  for (const auto& c : cases) {
    CAPTURE(c.handedness);
    CHECK((untold::pack_tangent_1010102(1, 0, 0, c.handedness) >> 30) == c.w);
  }
  // Decode: the sign-extended 2-bit w < 0 -> -1 (0b10, 0b11), else +1.
  CHECK(untold::unpack_handedness_1010102(0x00000000u) == 1.0f);
  CHECK(untold::unpack_handedness_1010102(0x40000000u) == 1.0f);
  CHECK(untold::unpack_handedness_1010102(0x80000000u) == -1.0f);
  CHECK(untold::unpack_handedness_1010102(0xC0000000u) == -1.0f);
  CHECK(untold::unpack_tangent_1010102(0xC00001FFu) == std::array<float, 4>{1.0f, 0.0f, 0.0f, -1.0f});
}

TEST_CASE("packing: 10:10:10:2 maximum angular error over a Fibonacci sphere") {
  // Each normalised component is off by at most 0.5/511 after rounding (plus
  // < 1e-7 from the float division), so the decoded vector is within
  // e = sqrt(3) * (0.5/511 + 1e-7) of the unit input and the angle is at most
  // asin(e) = 1.6949e-3 rad (0.0971 deg).
  const double bound = std::asin(std::sqrt(3.0) * (0.5 / 511.0 + 1e-7));
  double max_normal = 0.0;
  double max_tangent = 0.0;
  for (std::size_t i = 0; i < sphere_points; ++i) {
    const auto p = fibonacci_point(i, sphere_points);
    const auto n = untold::unpack_normal_1010102(untold::pack_normal_1010102(p[0], p[1], p[2]));
    max_normal = std::max(max_normal, angle_between(p, to_double3(n)));
    const auto t = untold::unpack_tangent_1010102(untold::pack_tangent_1010102(p[0], p[1], p[2], -1.0));
    max_tangent = std::max(max_tangent, angle_between(p, to_double3(t)));
    REQUIRE(t[3] == -1.0f);
  }
  MESSAGE("10:10:10:2 max angular error over ", sphere_points, " points: normal ", max_normal, " rad (",
          max_normal * rad_to_deg, " deg), tangent ", max_tangent, " rad; bound ", bound, " rad (",
          bound * rad_to_deg, " deg)");
  CHECK(max_normal < bound);
  CHECK(max_tangent < bound);
}

// ---- binary16 ------------------------------------------------------------------

TEST_CASE("half: all 65536 bit patterns convert to float exactly") {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    const float f = half_to_float(half);
    const double ref = half_reference(half);
    if (std::isnan(ref)) {
      // Stated NaN rule: sign and payload kept (payload << 13), quiet bit set.
      CHECK(std::isnan(f));
      const std::uint32_t expected = ((h & 0x8000u) << 16) | 0x7FC00000u | ((h & 0x3FFu) << 13);
      CHECK(bits(f) == expected);
    } else {
      // Equal bits, so -0 stays -0 and every subnormal half is exact.
      CHECK(bits(f) == bits(static_cast<float>(ref)));
      CHECK(static_cast<double>(f) == ref);
    }
  }
}

TEST_CASE("half: float to half for every half value and every midpoint (ties to even)") {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    if ((h & 0x7C00u) == 0x7C00u) continue;  // inf and NaN separately
    const double v = half_reference(half);
    REQUIRE(untold::float_to_half_raw(v) == half);
    REQUIRE(untold::float_to_half_raw(static_cast<float>(v)) == half);
    const auto checked = untold::float_to_half(v);
    REQUIRE(checked.has_value());
    CHECK(*checked == half);
  }
  // Midpoints between magnitude-adjacent halves m and m + 1 (m + 1 = 0x7C00 is
  // the overflow step: 65520 rounds to inf). Midpoints need 12 significant
  // bits, so they are exact in float and in double.
  for (std::uint32_t m = 0; m < 0x7C00; ++m) {
    const double lo = half_reference(static_cast<std::uint16_t>(m));
    const double hi = m + 1 == 0x7C00 ? 65536.0 : half_reference(static_cast<std::uint16_t>(m + 1));
    const double mid = (lo + hi) / 2.0;
    REQUIRE(static_cast<double>(static_cast<float>(mid)) == mid);
    const std::uint32_t even = (m % 2 == 0) ? m : m + 1;
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const double s = sign != 0 ? -1.0 : 1.0;
      CAPTURE(m);
      CAPTURE(sign);
      REQUIRE(untold::float_to_half_raw(s * mid) == (even | sign));
      REQUIRE(untold::float_to_half_raw(static_cast<float>(s * mid)) == (even | sign));
      // Just off the tie, the nearer neighbour wins.
      REQUIRE(untold::float_to_half_raw(s * std::nextafter(mid, 0.0)) == (m | sign));
      REQUIRE(untold::float_to_half_raw(s * std::nextafter(mid, inf_d)) == ((m + 1) | sign));
      REQUIRE(untold::float_to_half_raw(s * std::nextafter(static_cast<float>(mid), 0.0f)) == (m | sign));
    }
  }
}

TEST_CASE("half: values between subnormal steps and below the smallest subnormal") {
  CHECK(untold::float_to_half_raw(0x1p-25) == 0x0000);             // tie with 0 -> even 0
  CHECK(untold::float_to_half_raw(std::nextafter(0x1p-25, 1.0)) == 0x0001);
  CHECK(untold::float_to_half_raw(-0x1p-25) == 0x8000);            // sign kept
  CHECK(untold::float_to_half_raw(0x1p-40) == 0x0000);
  CHECK(untold::float_to_half_raw(1e-300) == 0x0000);
  CHECK(untold::float_to_half_raw(5e-324) == 0x0000);              // smallest double subnormal
  CHECK(untold::float_to_half_raw(-0.0) == 0x8000);
  CHECK(untold::float_to_half_raw(0x1.ff8p-15) == 0x03FF);         // largest subnormal
  CHECK(untold::float_to_half_raw(0x1.ffcp-15) == 0x0400);         // its tie with 2^-14 rounds to even 0x400
  CHECK(untold::float_to_half_raw(1e300) == 0x7C00);
  // Double rounding check: 1 + 2^-11 + 2^-40 is above the tie in double but
  // rounds to the tie (1 + 2^-11) in float; from double it must round up.
  CHECK(untold::float_to_half_raw(1.0 + 0x1p-11 + 0x1p-40) == 0x3C01);
  CHECK(untold::float_to_half_raw(static_cast<double>(static_cast<float>(1.0 + 0x1p-11 + 0x1p-40))) == 0x3C00);
}

TEST_CASE("half: NaN, infinity and overflow") {
  // Raw encoder: IEEE behaviour.
  CHECK(untold::float_to_half_raw(inf_d) == 0x7C00);
  CHECK(untold::float_to_half_raw(-inf_d) == 0xFC00);
  CHECK(untold::float_to_half_raw(65520.0) == 0x7C00);
  CHECK(untold::float_to_half_raw(-65520.0) == 0xFC00);
  CHECK(untold::float_to_half_raw(65519.99) == 0x7BFF);
  const std::uint16_t qnan = untold::float_to_half_raw(nan_d);
  CHECK((qnan & 0x7E00) == 0x7E00);  // quiet NaN
  CHECK((untold::float_to_half_raw(-nan_d) & 0x8000) == 0x8000);
  CHECK(std::isnan(half_to_float(qnan)));
  // Checked encoder: errors, never a silent inf.
  for (const double v : {inf_d, -inf_d, nan_d, 65520.0, -65520.0, 1e10, 1e300}) {
    CAPTURE(v);
    const auto r = untold::float_to_half(v);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == untold::errc::invalid_argument);
  }
  CHECK(*untold::float_to_half(65504.0) == 0x7BFF);
  CHECK(*untold::float_to_half(65519.99) == 0x7BFF);
  CHECK(*untold::float_to_half(-65519.99) == 0xFBFF);
}

TEST_CASE("half: random doubles match a nearest-value search") {
  // Independent reference: the nearest finite half by binary search over all
  // positive halves in value order, ties to the even code.
  std::vector<double> values(0x7C00);
  for (std::uint32_t m = 0; m < 0x7C00; ++m) values[m] = half_reference(static_cast<std::uint16_t>(m));
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 200'000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    // Random magnitudes across the whole half range (2^-26 .. 2^16).
    const double unit = static_cast<double>(state >> 11) * 0x1p-53;
    const double v = std::ldexp(1.0 + unit, static_cast<int>(state % 42) - 26);
    const auto it = std::lower_bound(values.begin(), values.end(), v);
    std::uint32_t expected = 0;
    if (it == values.end()) {
      expected = v >= 65520.0 ? 0x7C00u : 0x7BFFu;
    } else {
      const auto hi = static_cast<std::uint32_t>(it - values.begin());
      if (*it == v || hi == 0) {
        expected = hi;
      } else {
        const double dlo = v - values[hi - 1];
        const double dhi = *it - v;
        expected = dlo < dhi ? hi - 1 : dhi < dlo ? hi : ((hi - 1) % 2 == 0 ? hi - 1 : hi);
      }
    }
    CAPTURE(v);
    REQUIRE(untold::float_to_half_raw(v) == expected);
  }
}

// ---- unorm8 ----------------------------------------------------------------------

TEST_CASE("packing: unorm8 color rounding") {
  for (std::uint32_t c = 0; c < 256; ++c) {
    const auto byte = static_cast<std::uint8_t>(c);
    CHECK(untold::pack_unorm8(untold::unpack_unorm8(byte)) == byte);
  }
  CHECK(untold::pack_unorm8(0.5) == 128);          // 127.5 -> even
  CHECK(untold::pack_unorm8(2.5 / 255.0) == 2);    // spec example
  CHECK(untold::pack_unorm8(-0.5) == 0);
  CHECK(untold::pack_unorm8(1.5) == 255);
  CHECK(untold::pack_unorm8(nan_d) == 0);
  CHECK(untold::pack_unorm8(inf_d) == 255);
  CHECK(untold::unpack_unorm8(255) == 1.0f);
}

// ---- octahedral ------------------------------------------------------------------

TEST_CASE("octahedral: spec known vectors") {
  using code = std::array<std::int16_t, 2>;
  CHECK(untold::pack_octahedral_normal(0, 0, 1) == code{0, 0});
  CHECK(untold::pack_octahedral_normal(0, 0, -1) == code{32767, 32767});
  CHECK(untold::pack_octahedral_normal(1, 0, 0) == code{32767, 0});
  CHECK(untold::pack_octahedral_normal(-1, 0, 0) == code{-32767, 0});
  CHECK(untold::pack_octahedral_tangent(0, 0, 1, -1) == code{1, 0});
  CHECK(untold::pack_octahedral_tangent(1, 0, 0, 1) == code{32766, 0});
  // Compile-time too.
  static_assert(untold::pack_octahedral_normal(0, 0, -1) == code{32767, 32767});
  static_assert(untold::pack_octahedral_tangent(1, 0, 0, 1) == code{32766, 0});
  // Zero and non-finite input: deterministic defaults instead of NaN.
  CHECK(untold::pack_octahedral_normal(0, 0, 0) == code{0, 0});
  CHECK(untold::pack_octahedral_normal(nan_d, 0, 0) == code{0, 0});
  CHECK(untold::pack_octahedral_normal(0, inf_d, 0) == code{0, 0});
  CHECK(untold::pack_octahedral_tangent(0, 0, 0, 1) == code{32766, 0});
  CHECK(untold::pack_octahedral_tangent(0, 0, 0, -1) == code{32767, 0});
  CHECK(untold::pack_octahedral_tangent(nan_d, nan_d, nan_d, nan_d) == code{32766, 0});
  // Scale does not matter, huge vectors included.
  CHECK(untold::pack_octahedral_normal(0, 0, -1e308) == code{32767, 32767});
  CHECK(untold::pack_octahedral_normal(1e308, 1e308, 1e308) == untold::pack_octahedral_normal(1, 1, 1));
  // Decode of the known codes.
  CHECK(untold::unpack_octahedral_normal(0, 0) == std::array<float, 3>{0, 0, 1});
  CHECK(untold::unpack_octahedral_normal(32767, 32767) == std::array<float, 3>{0, 0, -1});
  CHECK(untold::unpack_octahedral_normal(-32767, 0) == std::array<float, 3>{-1, 0, 0});
  CHECK(untold::unpack_octahedral_normal(-32768, 0) == std::array<float, 3>{-1, 0, 0});  // clamped
}

TEST_CASE("octahedral: tangent handedness lives in bit 0 of x") {
  for (const double w : {1.0, 0.0, -0.0, nan_d, 0.5}) {
    CAPTURE(w);
    const auto c = untold::pack_octahedral_tangent(0.3, -0.4, 0.5, w);
    CHECK((static_cast<std::uint16_t>(c[0]) & 1u) == 0u);
    CHECK(untold::unpack_octahedral_tangent(c[0], c[1])[3] == 1.0f);
  }
  for (const double w : {-1.0, -1e-30, -inf_d}) {
    CAPTURE(w);
    const auto c = untold::pack_octahedral_tangent(0.3, -0.4, 0.5, w);
    CHECK((static_cast<std::uint16_t>(c[0]) & 1u) == 1u);
    CHECK(untold::unpack_octahedral_tangent(c[0], c[1])[3] == -1.0f);
  }
  // Negative x: -32767 is 0x8001; clearing bit 0 gives -32768, which decodes as -1.
  CHECK(untold::pack_octahedral_tangent(-1, 0, 0, 1)[0] == -32768);
  CHECK(untold::pack_octahedral_tangent(-1, 0, 0, -1)[0] == -32767);
}

TEST_CASE("octahedral: maximum angular error over a Fibonacci sphere") {
  // Quantisation moves each octahedral coordinate by at most d = 0.5/32767
  // (tangents: 1.5/32767 in x, because bit 0 is overwritten). The point on the
  // |x|+|y|+|z| = 1 octahedron then moves by at most sqrt(dx^2 + dy^2 +
  // (dx + dy)^2) and that point is at least 1/sqrt(3) from the origin, so the
  // angle is at most asin(sqrt(3) * sqrt(6) * d) = 6.474e-5 rad for normals and
  // asin(sqrt(3) * sqrt(26) * d) = 1.348e-4 rad for tangents. 1e-6 rad covers
  // float rounding in the decoder.
  const double d = 0.5 / 32767.0;
  const double normal_bound = std::asin(std::sqrt(3.0) * std::sqrt(6.0) * d) + 1e-6;
  const double tangent_bound = std::asin(std::sqrt(3.0) * std::sqrt(26.0) * d) + 1e-6;
  double max_normal = 0.0;
  double max_tangent = 0.0;
  for (std::size_t i = 0; i < sphere_points; ++i) {
    const auto p = fibonacci_point(i, sphere_points);
    const auto cn = untold::pack_octahedral_normal(p[0], p[1], p[2]);
    const auto n = untold::unpack_octahedral_normal(cn[0], cn[1]);
    max_normal = std::max(max_normal, angle_between(p, to_double3(n)));
    const double w = (i % 2 == 0) ? 1.0 : -1.0;
    const auto ct = untold::pack_octahedral_tangent(p[0], p[1], p[2], w);
    const auto t = untold::unpack_octahedral_tangent(ct[0], ct[1]);
    max_tangent = std::max(max_tangent, angle_between(p, to_double3(t)));
    REQUIRE(static_cast<double>(t[3]) == w);
  }
  MESSAGE("octahedral snorm16 max angular error over ", sphere_points, " points: normal ", max_normal, " rad (",
          max_normal * rad_to_deg, " deg; bound ", normal_bound, "), tangent ", max_tangent, " rad (",
          max_tangent * rad_to_deg, " deg; bound ", tangent_bound, ")");
  CHECK(max_normal < normal_bound);
  CHECK(max_tangent < tangent_bound);
}

TEST_CASE("octahedral: decode always yields a unit vector") {
  // Every 64th code pair in both axes (1M pairs), including the extremes.
  double worst = 0.0;
  for (std::int32_t x = -32768; x <= 32767; x += 64) {
    for (std::int32_t y = -32768; y <= 32767; y += 64) {
      for (const auto& [qx, qy] : {std::pair{x, y}, std::pair{x == -32768 ? 32767 : x, 32767}}) {
        const auto v = untold::unpack_octahedral_normal(static_cast<std::int16_t>(qx), static_cast<std::int16_t>(qy));
        const double len = std::sqrt(static_cast<double>(v[0]) * v[0] + static_cast<double>(v[1]) * v[1] +
                                     static_cast<double>(v[2]) * v[2]);
        worst = std::max(worst, std::fabs(len - 1.0));
      }
    }
  }
  CHECK(worst < 1e-6);
}
