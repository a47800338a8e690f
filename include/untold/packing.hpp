// untold/packing.hpp - scalar codecs of the vertex attribute encodings
// (spec 4 and 4.1): 10:10:10:2 snorm normals/tangents, IEEE binary16 halves,
// unorm8 colors and 2 x snorm16 octahedral unit vectors.
//
// Every encoder takes double: the reference exporter quantised in double
// precision, and a float converts to double exactly, so one double entry
// point serves both and reproduces the spec's vectors bit for bit. Rounding
// is implemented with integer arithmetic, never with std::nearbyint, so the
// results do not depend on the current floating-point rounding mode.
//
// Decoders are defined so that they are exactly reproducible by SIMD code
// (see vertex.hpp): snorm10 decodes as max(float(q) / 511.0f, -1.0f) with a
// correctly rounded float division, and half -> float is exact.
//
// Every function is total: any bit pattern or double (NaN, inf, -0) has a
// defined result, so all of them are safe on untrusted input.
#pragma once

#include <array>
#include <bit>
#include "detail/lean_std.hpp"
#include <cstdint>

#include "untold/error.hpp"

namespace untold {

namespace detail {

/// True for finite values; constexpr replacement for std::isfinite (which is
/// not constexpr in C++20). inf - inf and NaN - NaN are NaN, never 0.
[[nodiscard]] constexpr bool is_finite_value(double x) noexcept { return x - x == 0.0; }

[[nodiscard]] constexpr double abs_value(double x) noexcept { return x < 0.0 ? -x : (x == 0.0 ? 0.0 : x); }

/// Rounds to the nearest integer, ties to even. Precondition: |x| < 2^62.
[[nodiscard]] constexpr std::int64_t round_half_even(double x) noexcept {
  const auto i = static_cast<std::int64_t>(x);  // truncates toward zero
  const double frac = x - static_cast<double>(i);  // exact: i and x share the binade
  if (frac > 0.5) return i + 1;
  if (frac < -0.5) return i - 1;
  if (frac == 0.5) return i + (i & 1);
  if (frac == -0.5) return i - (i & 1);
  return i;
}

/// Rounds to the nearest integer, ties away from zero. Precondition: |x| < 2^62.
[[nodiscard]] constexpr std::int64_t round_half_away(double x) noexcept {
  const auto i = static_cast<std::int64_t>(x);
  const double frac = x - static_cast<double>(i);
  if (frac >= 0.5) return i + 1;
  if (frac <= -0.5) return i - 1;
  return i;
}

/// Clamps to [lo, hi]; NaN becomes `nan_value`.
[[nodiscard]] constexpr double clamp_or(double x, double lo, double hi, double nan_value) noexcept {
  if (x != x) return nan_value;
  return x < lo ? lo : (x > hi ? hi : x);
}

}  // namespace detail

// ---- 10:10:10:2 snorm (spec 4) ---------------------------------------------

inline constexpr std::uint32_t snorm10_mask = 0x3FFu;
inline constexpr std::uint32_t handedness_positive_bits = 0x40000000u;  // w = 0b01
inline constexpr std::uint32_t handedness_negative_bits = 0xC0000000u;  // w = 0b11

/// Quantises one component: clamp to [-1, 1], round(c * 511) ties to even,
/// returned as the 10-bit two's complement code (-1.0 -> 0x201; 0x200 is never
/// produced). NaN encodes as 0. Safe on any input.
[[nodiscard]] constexpr std::uint32_t quantize_snorm10(double c) noexcept {
  const double clamped = detail::clamp_or(c, -1.0, 1.0, 0.0);
  return static_cast<std::uint32_t>(detail::round_half_even(clamped * 511.0)) & snorm10_mask;
}

/// Decodes the low 10 bits of `code`: sign-extend, divide by 511 in float,
/// clamp to >= -1 (only 0x200 needs the clamp). Safe on any input.
[[nodiscard]] constexpr float dequantize_snorm10(std::uint32_t code) noexcept {
  // Moving the field to the top and shifting back sign-extends it (C++20
  // defines both the conversion and the arithmetic right shift).
  const auto q = static_cast<std::int32_t>((code & snorm10_mask) << 22) >> 22;
  const float f = static_cast<float>(q) / 511.0f;
  return f < -1.0f ? -1.0f : f;
}

namespace detail {

/// Normalises (x, y, z) in double as the reference exporter does; vectors of
/// length <= 1e-8 or with a non-finite component become `fallback`.
[[nodiscard]] inline std::array<double, 3> normalize_or(double x, double y, double z,
                                                        std::array<double, 3> fallback) noexcept {
  if (!is_finite_value(x) || !is_finite_value(y) || !is_finite_value(z)) return fallback;
  double len = __builtin_sqrt(x * x + y * y + z * z);
  if (!is_finite_value(len)) {
    // Finite but the squares overflow: scale by an exact power of two first.
    x *= 0x1p-600;
    y *= 0x1p-600;
    z *= 0x1p-600;
    len = __builtin_sqrt(x * x + y * y + z * z);
  }
  if (!(len > 1e-8)) return fallback;
  return {x / len, y / len, z / len};
}

[[nodiscard]] constexpr std::uint32_t pack_snorm10_xyz(const std::array<double, 3>& v) noexcept {
  return quantize_snorm10(v[0]) | (quantize_snorm10(v[1]) << 10) | (quantize_snorm10(v[2]) << 20);
}

}  // namespace detail

/// Packs a normal as 10:10:10:2 snorm with w = 0 (spec 4): normalise in
/// double, degenerate (length <= 1e-8) or non-finite -> (0,0,1), then
/// quantize_snorm10 per component. The vector need not be unit length.
/// Safe on any input.
[[nodiscard]] inline std::uint32_t pack_normal_1010102(double x, double y, double z) noexcept {
  return detail::pack_snorm10_xyz(detail::normalize_or(x, y, z, {0.0, 0.0, 1.0}));
}

/// Packs a tangent as 10:10:10:2 snorm (spec 4): xyz like a normal but the
/// degenerate fallback is (1,0,0); w = 0b11 when handedness < 0, else 0b01
/// (0, -0 and NaN count as +1). Safe on any input.
[[nodiscard]] inline std::uint32_t pack_tangent_1010102(double x, double y, double z, double handedness) noexcept {
  const std::uint32_t w = handedness < 0.0 ? handedness_negative_bits : handedness_positive_bits;
  return detail::pack_snorm10_xyz(detail::normalize_or(x, y, z, {1.0, 0.0, 0.0})) | w;
}

/// Decodes the xyz of a 10:10:10:2 word (not renormalised: each component is
/// exactly dequantize_snorm10 of its field). Safe on any input.
[[nodiscard]] constexpr std::array<float, 3> unpack_normal_1010102(std::uint32_t packed) noexcept {
  return {dequantize_snorm10(packed), dequantize_snorm10(packed >> 10), dequantize_snorm10(packed >> 20)};
}

/// The handedness of a tangent word: the sign-extended 2-bit w < 0 -> -1,
/// else +1 (so only bit 31 matters). Safe on any input.
[[nodiscard]] constexpr float unpack_handedness_1010102(std::uint32_t packed) noexcept {
  return (packed & 0x80000000u) != 0 ? -1.0f : 1.0f;
}

/// Decodes a tangent word to (x, y, z, handedness). Safe on any input.
[[nodiscard]] constexpr std::array<float, 4> unpack_tangent_1010102(std::uint32_t packed) noexcept {
  const auto xyz = unpack_normal_1010102(packed);
  return {xyz[0], xyz[1], xyz[2], unpack_handedness_1010102(packed)};
}

// ---- IEEE binary16 ---------------------------------------------------------

inline constexpr double half_max = 65504.0;

/// Converts a binary16 bit pattern to float exactly. NaN keeps its sign and
/// payload (shifted up by 13 bits) and gets the quiet bit set, which is what
/// x86 F16C and AArch64 conversions do. Safe on any input.
[[nodiscard]] constexpr float half_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0x1F) {
    bits = mantissa == 0 ? 0x7F800000u : (0x7FC00000u | (mantissa << 13));
  } else if (exponent != 0) {
    bits = ((exponent + 112u) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa != 0) {
    // Subnormal half: every one is a normal float; shift the leading 1 out.
    std::uint32_t e = 113;  // float exponent of 2^-14
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(sign | bits);
}

/// IEEE conversion to binary16 with round-to-nearest-even from the exact
/// double value (no double rounding through float): values that round past
/// 65504 become +-inf, inf stays inf, NaN becomes a quiet NaN with the sign and
/// top payload bits kept. Safe on any input.
[[nodiscard]] constexpr std::uint16_t float_to_half_raw(double v) noexcept {
  const auto b = std::bit_cast<std::uint64_t>(v);
  const auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000u);
  const auto exponent = static_cast<int>((b >> 52) & 0x7FFu);
  const std::uint64_t mantissa = b & ((std::uint64_t{1} << 52) - 1);
  if (exponent == 0x7FF) {
    if (mantissa == 0) return static_cast<std::uint16_t>(sign | 0x7C00u);
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((mantissa >> 42) & 0x3FFu));
  }
  const int e = exponent - 1023;
  if (e > 15) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e < -25) return sign;  // below half the smallest subnormal (2^-25): rounds to 0
  // Significand with its implicit bit, and how far to shift it down to units
  // of the result's last place: 2^(e-10) for normals, 2^-24 for subnormals.
  const std::uint64_t significand = mantissa | (std::uint64_t{1} << 52);
  const int shift = e >= -14 ? 42 : 42 + (-14 - e);
  std::uint64_t q = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1) != 0)) ++q;
  // For normals drop the implicit bit and add the biased exponent; a carry
  // out of the mantissa bumps the exponent (0x7BFF + 1 = 0x7C00 = inf), and a
  // rounded-up largest subnormal becomes the smallest normal the same way.
  const std::uint64_t magnitude = e >= -14 ? (static_cast<std::uint64_t>(e + 15) << 10) + (q - 0x400u) : q;
  return static_cast<std::uint16_t>(sign | magnitude);
}

/// Checked binary16 encoder for writer input (spec 4, UV): round to nearest
/// even; a non-finite input or a value whose rounded magnitude exceeds 65504
/// is errc::invalid_argument (field "half", value = the raw result bits).
/// Safe on any input.
[[nodiscard]] inline result<std::uint16_t> float_to_half(double v) noexcept {
  const std::uint16_t h = float_to_half_raw(v);
  if (!detail::is_finite_value(v) || (h & 0x7C00u) == 0x7C00u) {
    return make_error(errc::invalid_argument, {.field = "half", .value = h, .has_value = true});
  }
  return h;
}

// ---- unorm8 color ------------------------------------------------------------

/// round(clamp(c, 0, 1) * 255) with ties to even (0.5 -> 128); NaN -> 0.
/// Safe on any input.
[[nodiscard]] constexpr std::uint8_t pack_unorm8(double c) noexcept {
  return static_cast<std::uint8_t>(detail::round_half_even(detail::clamp_or(c, 0.0, 1.0, 0.0) * 255.0));
}

/// c / 255 in float. Safe on any input.
[[nodiscard]] constexpr float unpack_unorm8(std::uint8_t c) noexcept { return static_cast<float>(c) / 255.0f; }

// ---- octahedral 2 x snorm16 (spec 4.1) ---------------------------------------

namespace detail {

[[nodiscard]] constexpr double sign_not_negative(double v) noexcept { return v >= 0.0 ? 1.0 : -1.0; }

[[nodiscard]] constexpr std::int16_t quantize_snorm16_away(double c) noexcept {
  return static_cast<std::int16_t>(round_half_away(clamp_or(c, -1.0, 1.0, 0.0) * 32767.0));
}

/// The folded octahedral coordinates (u, v) in [-1, 1] of a direction, or of
/// `fallback` when the direction is zero or not finite (the reference tool
/// divides by zero there). Shared by the 16-bit (spec 4.1) and 8-bit
/// (PBR_QUANT_V1) codes.
[[nodiscard]] constexpr std::array<double, 2> octahedral_fold(double x, double y, double z,
                                                              std::array<double, 3> fallback) noexcept {
  if (!is_finite_value(x) || !is_finite_value(y) || !is_finite_value(z)) {
    x = fallback[0];
    y = fallback[1];
    z = fallback[2];
  }
  double l1 = abs_value(x) + abs_value(y) + abs_value(z);
  if (!is_finite_value(l1)) {
    // Finite components whose sum overflows; a power-of-two scale is exact.
    x *= 0.25;
    y *= 0.25;
    z *= 0.25;
    l1 = abs_value(x) + abs_value(y) + abs_value(z);
  }
  if (l1 == 0.0) {
    x = fallback[0];
    y = fallback[1];
    z = fallback[2];
    l1 = 1.0;
  }
  double u = x / l1;
  double v = y / l1;
  if (z < 0.0) {
    const double folded_u = (1.0 - abs_value(v)) * sign_not_negative(u);
    v = (1.0 - abs_value(u)) * sign_not_negative(v);
    u = folded_u;
  }
  return {u, v};
}

/// The octahedral 2 x snorm16 code of a direction (spec 4.1).
[[nodiscard]] constexpr std::array<std::int16_t, 2> octahedral_encode(double x, double y, double z,
                                                                      std::array<double, 3> fallback) noexcept {
  const auto uv = octahedral_fold(x, y, z, fallback);
  return {quantize_snorm16_away(uv[0]), quantize_snorm16_away(uv[1])};
}

[[nodiscard]] constexpr float dequantize_snorm16(std::int16_t q) noexcept {
  const float f = static_cast<float>(q) / 32767.0f;
  return f < -1.0f ? -1.0f : f;
}

}  // namespace detail

/// Octahedral normal code (spec 4.1): project onto |x|+|y|+|z| = 1, fold the
/// lower hemisphere, clamp, * 32767, round half away from zero. A zero or
/// non-finite vector encodes (0,0,1) -> (0, 0). Safe on any input.
[[nodiscard]] constexpr std::array<std::int16_t, 2> pack_octahedral_normal(double x, double y, double z) noexcept {
  return detail::octahedral_encode(x, y, z, {0.0, 0.0, 1.0});
}

/// Octahedral tangent code (spec 4.1): the direction like a normal (zero or
/// non-finite -> (1,0,0)), then bit 0 of x holds the handedness: set when
/// handedness < 0 (0, -0 and NaN count as +). Safe on any input.
[[nodiscard]] constexpr std::array<std::int16_t, 2> pack_octahedral_tangent(double x, double y, double z,
                                                                            double handedness) noexcept {
  auto code = detail::octahedral_encode(x, y, z, {1.0, 0.0, 0.0});
  auto bits = static_cast<std::uint16_t>(static_cast<std::uint16_t>(code[0]) & 0xFFFEu);
  if (handedness < 0.0) bits = static_cast<std::uint16_t>(bits | 1u);
  code[0] = static_cast<std::int16_t>(bits);
  return code;
}

namespace detail {
/// Unfolds dequantized octahedral coordinates to a unit vector (in float).
[[nodiscard]] inline std::array<float, 3> octahedral_unfold(float x, float y) noexcept {
  const float z = 1.0f - detail::abs(x) - detail::abs(y);
  if (z < 0.0f) {
    const float folded_x = (1.0f - detail::abs(y)) * (x >= 0.0f ? 1.0f : -1.0f);
    y = (1.0f - detail::abs(x)) * (y >= 0.0f ? 1.0f : -1.0f);
    x = folded_x;
  }
  // |x|+|y|+|z| >= 1 after unfolding, so the length is never 0.
  const float len = detail::sqrt(x * x + y * y + z * z);
  return {x / len, y / len, z / len};
}
}  // namespace detail

/// Decodes an octahedral code to a unit vector: i16 / 32767 clamped to >= -1,
/// unfold, normalise (all in float). Safe on any input.
[[nodiscard]] inline std::array<float, 3> unpack_octahedral_normal(std::int16_t qx, std::int16_t qy) noexcept {
  return detail::octahedral_unfold(detail::dequantize_snorm16(qx), detail::dequantize_snorm16(qy));
}

/// Decodes an octahedral tangent code to (x, y, z, handedness); the direction
/// is decoded from the stored code including bit 0 (it is within one step).
/// Safe on any input.
[[nodiscard]] inline std::array<float, 4> unpack_octahedral_tangent(std::int16_t qx, std::int16_t qy) noexcept {
  const auto d = unpack_octahedral_normal(qx, qy);
  const float w = (static_cast<std::uint16_t>(qx) & 1u) != 0 ? -1.0f : 1.0f;
  return {d[0], d[1], d[2], w};
}

}  // namespace untold
