// untold/detail/scan.hpp - bulk value scans at memory speed, shared by the
// deep checks of every family (core validate.hpp, urho3d/, assetc/, udm/).
//
// Each scan answers one question about a whole array in one pass over its
// bytes ("is every index below the vertex count", "is every float of these record fields
// finite"), 16 bytes at a time with GCC/Clang generic vectors (SSE2 on
// x86-64, NEON on AArch64; no intrinsics header). A reader asks the cheap
// question first and, only when the answer shows a problem, runs its
// element-by-element loop to find the first offending element: the rule,
// its record and its context stay exactly what that loop reports.
//
// Safe on any bytes: every function reads only the span it is given (the
// record scans: whole records of it); no allocation.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "../bytes.hpp"
#include "checks.hpp"

namespace untold::detail {

namespace simd {
using f32x4 = float __attribute__((vector_size(16)));
using u32x4 = std::uint32_t __attribute__((vector_size(16)));
using u16x8 = std::uint16_t __attribute__((vector_size(16)));
using u8x16 = std::uint8_t __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));
using i16x8 = std::int16_t __attribute__((vector_size(16)));
/// The vectors hold the file's little-endian values as they are.
inline constexpr bool usable = std::endian::native == std::endian::little;
template <class V>
[[nodiscard]] inline V load(const std::byte* p) noexcept {  // unaligned
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class T>
[[nodiscard]] inline V splat(T x) noexcept {  // every lane x
  return V{} + x;
}
// `<` is false for NaN lanes, so min/max never pick a NaN (callers flag them).
template <class V>
[[nodiscard]] inline V min(V a, V b) noexcept {
  return b < a ? b : a;
}
template <class V>
[[nodiscard]] inline V max(V a, V b) noexcept {
  return a < b ? b : a;
}
}  // namespace simd

/// True when each of `count` unsigned integers of type T (uint8, uint16 or
/// uint32) in the host's byte order, packed from `p` (any alignment), is
/// below `limit` (true when count is 0). Precondition: count x sizeof(T)
/// bytes readable from p. 16 bytes at a time: an unsigned compare is a
/// signed one after flipping the top bit (SSE2 has only the signed one);
/// bytes take their maximum (pmaxub).
template <class T>
[[nodiscard]] inline bool all_below_native(const std::byte* p, std::size_t count, std::uint64_t limit) noexcept {
  static_assert(std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t>);
  if (limit > std::uint64_t{static_cast<T>(~T{0})}) return true;
  if (limit == 0) return count == 0;
  const auto top = static_cast<T>(limit - 1);  // every value must be <= top
  constexpr std::size_t lanes = 16 / sizeof(T);
  std::size_t i = 0;
  bool below = true;
  if constexpr (sizeof(T) == 1) {
    simd::u8x16 m0{}, m1{};  // two chains: the compare-select latency overlaps
    for (; i + 2 * lanes <= count; i += 2 * lanes) {
      m0 = simd::max(m0, simd::load<simd::u8x16>(p + i));
      m1 = simd::max(m1, simd::load<simd::u8x16>(p + i + lanes));
    }
    m0 = simd::max(m0, m1);
    for (std::size_t k = 0; k < lanes; ++k) below = below && m0[k] <= top;
  } else {
    using U = std::conditional_t<sizeof(T) == 2, simd::u16x8, simd::u32x4>;
    using S = std::conditional_t<sizeof(T) == 2, simd::i16x8, simd::i32x4>;
    constexpr T sign = static_cast<T>(T{1} << (8 * sizeof(T) - 1));
    const S threshold = reinterpret_cast<S>(simd::splat<U>(static_cast<T>(top ^ sign)));
    S above{};
    for (; i + lanes <= count; i += lanes)
      above |= reinterpret_cast<S>(simd::load<U>(p + i * sizeof(T)) ^ sign) > threshold;
    for (std::size_t k = 0; k < lanes; ++k) below = below && above[k] == 0;
  }
  for (; i < count; ++i) {
    T v;
    __builtin_memcpy(&v, p + i * sizeof(T), sizeof v);
    below = below && v <= top;
  }
  return below;
}

/// all_below_native over `values`.
[[nodiscard]] inline bool values_below(std::span<const std::uint32_t> values, std::uint64_t limit) noexcept {
  return all_below_native<std::uint32_t>(reinterpret_cast<const std::byte*>(values.data()), values.size(), limit);
}

/// all_below_native over little-endian values (a file's), on any host.
template <class T>
[[nodiscard]] inline bool all_below_le(const std::byte* p, std::size_t count, std::uint64_t limit) noexcept {
  if constexpr (simd::usable) {
    return all_below_native<T>(p, count, limit);
  } else {
    for (std::size_t i = 0; i < count; ++i)
      if (load_le_unchecked<T>(p + i * sizeof(T)) >= limit) return false;
    return true;
  }
}

/// all_below_le over an index array of `width` bytes per index (2 or 4; any
/// other width reads as 4). Safe on any span: whole indices only.
[[nodiscard]] inline bool indices_below(byte_span bytes, std::size_t width, std::uint64_t limit) noexcept {
  return width == 2 ? all_below_le<std::uint16_t>(bytes.data(), bytes.size() / 2, limit)
                    : all_below_le<std::uint32_t>(bytes.data(), bytes.size() / 4, limit);
}

/// What record_scan found: whether every float it tested is finite, and the
/// bitwise OR of every word it collected (an upper bound of each byte or
/// half-word those words hold: e.g. the largest blend index is at most the
/// largest byte of `ored`).
struct record_scan_result {
  bool all_finite = true;
  std::uint32_t ored = 0;
};

/// Scans `count` records of `stride` bytes from `p` (any alignment; stride
/// a multiple of 4): the 32-bit words at the word positions `floats` are
/// tested as floats (is_finite's bit test), the words at `collect` are ORed.
/// Positions past the record are ignored. Preconditions: count x stride
/// bytes readable from p. Records of up to 16 words run as 16-byte vectors
/// over a repeating mask (a block of whole records that is a whole number
/// of vectors); wider records, the last partial block and big-endian hosts
/// take the word-by-word path, with the same result.
[[nodiscard]] inline record_scan_result scan_records(const std::byte* p, std::size_t count, std::size_t stride,
                                                     std::span<const std::uint32_t> floats,
                                                     std::span<const std::uint32_t> collect) noexcept {
  constexpr std::uint32_t exponent = 0x7F800000u, carry = 0x00800000u;  // (x & exponent) + carry sets bit 31 iff Inf/NaN
  record_scan_result r;
  const std::size_t words = stride / 4;
  if (words == 0 || stride % 4 != 0 || count == 0) return r;
  std::uint32_t bad = 0, ored = 0;
  std::size_t i = 0;
  if constexpr (simd::usable) {
    if (words <= 16) {
      // Records per block: the fewest that fill whole vectors, then as many of those as fit in 64 words.
      // (<algorithm> and <numeric> stay out: reader translation units include this, docs/compile-time.md.)
      std::size_t per_block = words % 4 == 0 ? 1 : words % 2 == 0 ? 2 : 4;  // 4 / gcd(words, 4)
      const std::size_t fit = 64 / (per_block * words);
      per_block *= fit > 1 ? fit : 1;
      const std::size_t vectors = per_block * words / 4;
      std::array<simd::u32x4, 16> float_mask{}, float_carry{}, collect_mask{};
      for (std::size_t w = 0; w < per_block * words; ++w) {
        const std::uint32_t in_record = static_cast<std::uint32_t>(w % words);
        const auto listed = [in_record](std::span<const std::uint32_t> list) {
          for (const std::uint32_t x : list)
            if (x == in_record) return true;
          return false;
        };
        const bool f = listed(floats);
        const bool c = listed(collect);
        float_mask[w / 4][w % 4] = f ? exponent : 0;
        float_carry[w / 4][w % 4] = f ? carry : 0;
        collect_mask[w / 4][w % 4] = c ? ~std::uint32_t{0} : 0;
      }
      simd::u32x4 bad_v{}, ored_v{};
      for (; i + per_block <= count; i += per_block) {
        const std::byte* b = p + i * stride;
        for (std::size_t v = 0; v < vectors; ++v) {
          const simd::u32x4 x = simd::load<simd::u32x4>(b + 16 * v);
          bad_v |= (x & float_mask[v]) + float_carry[v];
          ored_v |= x & collect_mask[v];
        }
      }
      for (std::size_t k = 0; k < 4; ++k) bad |= bad_v[k], ored |= ored_v[k];
    }
  }
  for (; i < count; ++i) {
    const std::byte* rec = p + i * stride;
    for (const std::uint32_t w : floats)
      if (w < words) bad |= (load_le_unchecked<std::uint32_t>(rec + 4 * w) & exponent) + carry;
    for (const std::uint32_t w : collect)
      if (w < words) ored |= load_le_unchecked<std::uint32_t>(rec + 4 * w);
  }
  r.all_finite = (bad & 0x80000000u) == 0;
  r.ored = ored;
  return r;
}

}  // namespace untold::detail
