// untold/urho3d/common.hpp - what every Urho3D format reader shares: the
// cursor rules (U3D-TRUNC, U3D-COUNT), identifier checks, finite-float checks
// and Urho3D's SDBM hash.
//
// Safe on untrusted input: every function checks the span it is given.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "../bytes.hpp"
#include "../detail/checks.hpp"
#include "../detail/x86_cpu.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../limits.hpp"

namespace untold::urho3d {

using float3 = std::array<float, 3>;
/// Urho3D's quaternion in file order: w, x, y, z.
using quat_wxyz = std::array<float, 4>;

/// The cursor rules of every Urho3D format.
inline constexpr cursor_rules u3d_rules{errc::u3d_truncated, errc::u3d_count_too_large};

/// True when `head` starts with the four identifier bytes `id`.
[[nodiscard]] inline bool starts_with_id(byte_span head, std::string_view id) noexcept {
  return head.size() >= id.size() && std::memcmp(head.data(), id.data(), id.size()) == 0;
}

namespace detail {

/// A NUL-terminated name (U3D-STRING when the NUL is missing).
[[nodiscard]] inline result<std::string_view> read_name(byte_cursor& c, const char* field) noexcept {
  return c.cstring(field, errc::u3d_missing_nul);
}

template <std::size_t N>
[[nodiscard]] inline result<std::array<float, N>> read_floats(byte_cursor& c, const char* field) noexcept {
  auto b = c.bytes(4 * N, field);
  if (!b) return b.error();
  std::array<float, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = load_le_unchecked<float>(b->data() + 4 * i);
  return out;
}

using untold::detail::all_finite;  // the shared bit test (detail/checks.hpp)

inline constexpr std::size_t npos = ~std::size_t{0};

/// Where a strided float scan met its first non-finite value: the record
/// (npos: none), the value and its address (for the error's file offset).
struct non_finite_float {
  std::size_t record = npos;
  float value = 0;
  const std::byte* at = nullptr;
  [[nodiscard]] explicit constexpr operator bool() const noexcept { return record != npos; }
};

/// The first non-finite float of `bytes` read as records of `stride` bytes
/// (any alignment), each with `floats` floats from `offset`. Preconditions:
/// offset + 4 x floats <= stride.
[[nodiscard]] inline non_finite_float first_non_finite(byte_span bytes, std::size_t stride, std::size_t offset,
                                                       std::size_t floats) noexcept {
  if (stride == 0) return {};
  const std::size_t n = bytes.size() / stride;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < floats; ++k) {
      const std::byte* p = bytes.data() + i * stride + offset + 4 * k;
      const float f = load_le_unchecked<float>(p);
      if (!untold::detail::is_finite(f)) return {i, f, p};
    }
  return {};
}

/// The first non-finite float of `values`, as first_non_finite (no address).
[[nodiscard]] constexpr non_finite_float first_non_finite(std::span<const float> values) noexcept {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!untold::detail::is_finite(values[i])) return {i, values[i], nullptr};
  return {};
}

/// U3D-FINITE for `hit` (field, record, the float with its bits); when `hit`
/// points into `file`, also the float's offset in the file.
[[nodiscard]] inline error not_finite(const char* field, std::uint64_t record, const non_finite_float& hit,
                                      byte_span file = {}) noexcept {
  error e = make_error(errc::u3d_not_finite).at_field(field).at_record(record).with_float(hit.value);
  const auto at = reinterpret_cast<std::uintptr_t>(hit.at), begin = reinterpret_cast<std::uintptr_t>(file.data());
  if (hit.at != nullptr && at >= begin && at - begin < file.size()) e.at_offset(at - begin);
  return e;
}

}  // namespace detail

/// Appends a four-character identifier. Written as one u32 store: g++ 12
/// at -O3 misreports a vector insert into an empty vector as an overflow
/// (-Wstringop-overflow), which would break -Werror builds of every writer.
/// Precondition: id.size() == 4.
inline void put_id(std::vector<std::byte>& out, std::string_view id) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(id[i])) << (8 * i);
  const std::size_t at = out.size();
  out.resize(at + 4);
  store_le_unchecked<std::uint32_t>(out.data() + at, v);
}

/// Urho3D's SDBM step: h = c + (h << 6) + (h << 16) - h, in u32.
[[nodiscard]] constexpr std::uint32_t sdbm(std::uint32_t hash, std::uint8_t c) noexcept {
  return static_cast<std::uint32_t>(c + (hash << 6) + (hash << 16) - hash);
}
namespace detail {

inline constexpr std::uint32_t sdbm_prime = 65599u;  // the step is h' = h * 65599 + c (mod 2^32)

/// 65599^k mod 2^32.
[[nodiscard]] constexpr std::uint32_t sdbm_power(std::size_t k) noexcept {
  std::uint32_t p = 1;
  for (std::size_t i = 0; i < k; ++i) p *= sdbm_prime;
  return p;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define UNTOLD_DETAIL_SDBM_X86 1
// The blocked SDBM on x86-64, written with the compilers' generic vectors and
// pmaddwd builtins rather than <immintrin.h> (which would add tens of
// thousands of lines to every includer, as hash.hpp notes): SSE2 always,
// AVX2 when the CPU has it, and before them AVX-512 VNNI's vpdpbusd, which
// neither compiler names the same way, as one instruction of inline
// assembly (all checked once).

/// SDBM's weights for a block of 128 bytes, byte j weighing 65599^(127-j),
/// split for the 16 x 16 -> 32-bit multiply-add (pmaddwd): w = lo + 65536 x
/// hi (mod 2^32) with lo and hi signed 16-bit, so that for a byte c,
/// c x w = c x lo + 65536 x (c x hi) (mod 2^32).
inline constexpr std::size_t sdbm_block = 128;
struct sdbm_block_weights {
  alignas(32) std::array<std::int16_t, sdbm_block> lo{}, hi{};
  // The same in the order of AVX2's in-lane unpacks of 32 bytes: bytes 0-7
  // and 16-23, then 8-15 and 24-31.
  alignas(32) std::array<std::int16_t, sdbm_block> lo_avx2{}, hi_avx2{};
};
[[nodiscard]] constexpr sdbm_block_weights make_sdbm_block_weights() noexcept {
  auto as_int16 = [](std::uint32_t v) {  // v < 2^16, as the int16 with the same bits
    return static_cast<std::int16_t>(v >= 0x8000u ? static_cast<std::int32_t>(v) - 0x10000 : static_cast<std::int32_t>(v));
  };
  sdbm_block_weights t;
  for (std::size_t j = 0; j < sdbm_block; ++j) {
    const std::uint32_t w = sdbm_power(sdbm_block - 1 - j);
    const std::uint32_t lo = w & 0xFFFFu, hi = w >> 16;
    t.lo[j] = as_int16(lo);
    // A lo of 2^15 or more reads as lo - 2^16: the missing c x 2^16 moves into hi.
    t.hi[j] = as_int16((hi + (lo >= 0x8000u ? 1u : 0u)) & 0xFFFFu);
  }
  for (std::size_t k = 0; k < sdbm_block; ++k) {
    const std::size_t chunk = k / 32 * 32, lane = k % 32;  // lane: position in the two unpacked vectors
    const std::size_t byte = chunk + (lane < 16 ? 0 : 8) + (lane % 16 < 8 ? lane % 16 : lane % 16 + 8);
    t.lo_avx2[k] = t.lo[byte];
    t.hi_avx2[k] = t.hi[byte];
  }
  return t;
}
inline constexpr sdbm_block_weights sdbm_weights = make_sdbm_block_weights();

using sdbm_u8x16 = unsigned char __attribute__((vector_size(16)));
using sdbm_i16x8 = short __attribute__((vector_size(16)));
using sdbm_u32x4 = unsigned __attribute__((vector_size(16)));

template <class V>
[[nodiscard]] inline V sdbm_load(const void* p) noexcept {  // unaligned
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

/// SDBM over `blocks` x 128 bytes from `d`, continuing from `hash`: each
/// block's weighted byte sum with SSE2 multiply-adds, then h' = h x
/// 65599^128 + that sum (mod 2^32, in unsigned lanes).
[[nodiscard]] inline std::uint32_t sdbm_blocks_sse2(const std::byte* d, std::size_t blocks, std::uint32_t hash) noexcept {
  constexpr std::uint32_t step = sdbm_power(sdbm_block);
  const sdbm_u8x16 zero{};
  for (std::size_t b = 0; b < blocks; ++b, d += sdbm_block) {
    sdbm_u32x4 lo{}, hi{};
    for (std::size_t q = 0; q < sdbm_block / 16; ++q) {
      const auto v = sdbm_load<sdbm_u8x16>(d + 16 * q);
      // Bytes 0-7 and 8-15 widened to 16 bits (punpcklbw / punpckhbw with zero).
      const auto first = reinterpret_cast<sdbm_i16x8>(
          __builtin_shufflevector(v, zero, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      const auto second = reinterpret_cast<sdbm_i16x8>(
          __builtin_shufflevector(v, zero, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
      const auto* w_lo = sdbm_weights.lo.data() + 16 * q;
      const auto* w_hi = sdbm_weights.hi.data() + 16 * q;
      lo += reinterpret_cast<sdbm_u32x4>(__builtin_ia32_pmaddwd128(first, sdbm_load<sdbm_i16x8>(w_lo))) +
            reinterpret_cast<sdbm_u32x4>(__builtin_ia32_pmaddwd128(second, sdbm_load<sdbm_i16x8>(w_lo + 8)));
      hi += reinterpret_cast<sdbm_u32x4>(__builtin_ia32_pmaddwd128(first, sdbm_load<sdbm_i16x8>(w_hi))) +
            reinterpret_cast<sdbm_u32x4>(__builtin_ia32_pmaddwd128(second, sdbm_load<sdbm_i16x8>(w_hi + 8)));
    }
    const sdbm_u32x4 t = lo + (hi << 16);
    hash = hash * step + (t[0] + t[1] + t[2] + t[3]);
  }
  return hash;
}

/// The same with AVX2, 32 bytes per step (unpacked to 16-bit in-lane, the
/// weights ordered to match).
__attribute__((target("avx2"))) inline std::uint32_t sdbm_blocks_avx2(const std::byte* d, std::size_t blocks,
                                                                      std::uint32_t hash) noexcept {
  using u8x32 = unsigned char __attribute__((vector_size(32)));
  using i16x16 = short __attribute__((vector_size(32)));
  using u32x8 = unsigned __attribute__((vector_size(32)));
  using u32x4 = unsigned __attribute__((vector_size(16)));
  constexpr std::uint32_t step = sdbm_power(sdbm_block);
  const u8x32 zero{};
  for (std::size_t b = 0; b < blocks; ++b, d += sdbm_block) {
    u32x8 lo{}, hi{};
    for (std::size_t q = 0; q < sdbm_block / 32; ++q) {
      // Loaded here with memcpy: a 32-byte vector returned by a function outside this target changes the ABI.
      u8x32 v;
      i16x16 w_lo[2], w_hi[2];
      __builtin_memcpy(&v, d + 32 * q, sizeof v);
      __builtin_memcpy(w_lo, sdbm_weights.lo_avx2.data() + 32 * q, sizeof w_lo);
      __builtin_memcpy(w_hi, sdbm_weights.hi_avx2.data() + 32 * q, sizeof w_hi);
      const auto first = reinterpret_cast<i16x16>(__builtin_shufflevector(
          v, zero, 0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53,
          22, 54, 23, 55));
      const auto second = reinterpret_cast<i16x16>(__builtin_shufflevector(
          v, zero, 8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60,
          29, 61, 30, 62, 31, 63));
      lo += reinterpret_cast<u32x8>(__builtin_ia32_pmaddwd256(first, w_lo[0])) +
            reinterpret_cast<u32x8>(__builtin_ia32_pmaddwd256(second, w_lo[1]));
      hi += reinterpret_cast<u32x8>(__builtin_ia32_pmaddwd256(first, w_hi[0])) +
            reinterpret_cast<u32x8>(__builtin_ia32_pmaddwd256(second, w_hi[1]));
    }
    const u32x8 t = lo + (hi << 16);
    u32x4 h = __builtin_shufflevector(t, t, 0, 1, 2, 3) + __builtin_shufflevector(t, t, 4, 5, 6, 7);
    h += __builtin_shufflevector(h, h, 2, 3, 0, 1);
    hash = hash * step + (h[0] + h[1]);
  }
  return hash;
}

/// SDBM's weights for a block of 512 bytes as four planes of signed 8-bit
/// digits, for the 8 x 8 -> 32-bit dot products of AVX-512 VNNI (vpdpbusd:
/// four unsigned bytes times four signed bytes, added to a 32-bit lane):
/// w = d0 + 2^8 d1 + 2^16 d2 + 2^24 d3 (mod 2^32), plane k holding every
/// byte's d_k, so that c x w = sum_k 2^(8k) (c x d_k) (mod 2^32). The
/// data bytes then need no widening: four dot products per 64 bytes.
inline constexpr std::size_t sdbm_wide_block = 512;
struct sdbm_digit_planes {
  alignas(64) std::array<std::int8_t, 4 * sdbm_wide_block> digits{};  // plane k at k x 512
};
[[nodiscard]] constexpr sdbm_digit_planes make_sdbm_digit_planes() noexcept {
  sdbm_digit_planes t;
  std::uint32_t power = 1;  // 65599^(511 - j), from the last byte back
  for (std::size_t j = sdbm_wide_block; j-- > 0; power *= sdbm_prime) {
    std::uint32_t w = power;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::uint32_t low = w & 0xFFu;
      const std::int32_t digit = low >= 0x80u ? static_cast<std::int32_t>(low) - 0x100 : static_cast<std::int32_t>(low);
      t.digits[k * sdbm_wide_block + j] = static_cast<std::int8_t>(digit);
      w = (w - static_cast<std::uint32_t>(digit)) >> 8;  // exact: w - digit is a multiple of 256 (mod 2^32)
    }
  }
  return t;
}
inline constexpr sdbm_digit_planes sdbm_digits = make_sdbm_digit_planes();

using sdbm_i32x16 = int __attribute__((vector_size(64)));

/// acc += the dot products of `bytes` (unsigned) with 64 digits (signed), four per lane (vpdpbusd).
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline void sdbm_dot(sdbm_i32x16& acc, const sdbm_i32x16& bytes,
                                                                                  const std::int8_t* digits) noexcept {
  sdbm_i32x16 w;
  __builtin_memcpy(&w, digits, sizeof w);
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(bytes), "v"(w));
}

/// SDBM over `blocks` x 512 bytes with AVX-512 VNNI: each block's weighted
/// sum in 16 lanes (two sets of accumulators, one per 64-byte half of each
/// 128 bytes, so that consecutive dot products do not wait on each other),
/// the lanes carried from block to block by Horner's rule
/// (lanes' = lanes x 65599^512 + block), and summed once at the end.
__attribute__((target("avx512f,avx512vnni"))) inline std::uint32_t sdbm_blocks_avx512vnni(const std::byte* d, std::size_t blocks,
                                                                                           std::uint32_t hash) noexcept {
  using u32x16 = unsigned __attribute__((vector_size(64)));
  constexpr std::uint32_t step = sdbm_power(sdbm_wide_block);
  constexpr std::size_t plane = sdbm_wide_block;
  const std::int8_t* const w = sdbm_digits.digits.data();
  u32x16 lanes{};
  std::uint32_t steps = 1;  // step^blocks
  for (std::size_t b = 0; b < blocks; ++b, d += sdbm_wide_block) {
    sdbm_i32x16 a0{}, a1{}, a2{}, a3{}, b0{}, b1{}, b2{}, b3{};
    for (std::size_t q = 0; q < sdbm_wide_block; q += 128) {
      sdbm_i32x16 first, second;
      __builtin_memcpy(&first, d + q, sizeof first);
      __builtin_memcpy(&second, d + q + 64, sizeof second);
      sdbm_dot(a0, first, w + q);
      sdbm_dot(a1, first, w + plane + q);
      sdbm_dot(a2, first, w + 2 * plane + q);
      sdbm_dot(a3, first, w + 3 * plane + q);
      sdbm_dot(b0, second, w + q + 64);
      sdbm_dot(b1, second, w + plane + q + 64);
      sdbm_dot(b2, second, w + 2 * plane + q + 64);
      sdbm_dot(b3, second, w + 3 * plane + q + 64);
    }
    const sdbm_i32x16 sum = (a0 + b0) + ((a1 + b1) << 8) + ((a2 + b2) << 16) + ((a3 + b3) << 24);
    lanes = lanes * step + reinterpret_cast<u32x16>(sum);
    steps *= step;
  }
  std::uint32_t total = 0;
  for (std::size_t i = 0; i < 16; ++i) total += lanes[i];
  return hash * steps + total;
}

[[nodiscard]] inline bool sdbm_use_avx2() noexcept {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
}

/// Whether sdbm takes sdbm_blocks_avx512vnni: AVX-512 at full clock
/// (untold::detail::x86_full_speed_avx512) and VNNI.
[[nodiscard]] inline bool sdbm_use_avx512vnni() noexcept {
  static const bool vnni = untold::detail::x86_full_speed_avx512() && __builtin_cpu_supports("avx512vnni") != 0;
  return vnni;
}
#endif

}  // namespace detail

/// SDBM over `bytes`, continuing from `hash` (0 for a fresh hash).
/// The step is h' = h * 65599 + c (mod 2^32), so n steps are
/// h * 65599^n + sum c_i * 65599^(n-1-i): on x86-64, 512 bytes at a time as
/// 8-bit dot products where the CPU has AVX-512 VNNI, 128 bytes at a time as
/// 16-bit multiply-adds (detail::sdbm_blocks_*), then 8 at a time with one
/// dependent multiply per 8 bytes; same result as the byte-by-byte step.
[[nodiscard]] inline std::uint32_t sdbm(byte_span bytes, std::uint32_t hash = 0) noexcept {
  constexpr std::uint32_t p1 = detail::sdbm_prime;
  constexpr std::uint32_t p2 = p1 * p1, p3 = p2 * p1, p4 = p3 * p1, p5 = p4 * p1, p6 = p5 * p1, p7 = p6 * p1,
                          p8 = p7 * p1;
  const std::byte* d = bytes.data();
  std::size_t n = bytes.size();
#if defined(UNTOLD_DETAIL_SDBM_X86)
  if (detail::sdbm_use_avx512vnni()) {
    const std::size_t wide = n / detail::sdbm_wide_block;
    hash = detail::sdbm_blocks_avx512vnni(d, wide, hash);
    d += wide * detail::sdbm_wide_block;
    n -= wide * detail::sdbm_wide_block;
  }
  const std::size_t blocks = n / detail::sdbm_block;
  hash = detail::sdbm_use_avx2() ? detail::sdbm_blocks_avx2(d, blocks, hash) : detail::sdbm_blocks_sse2(d, blocks, hash);
  d += blocks * detail::sdbm_block;
  n -= blocks * detail::sdbm_block;
#endif
  auto c = [&d](std::size_t i) { return static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(d[i])); };
  while (n >= 8) {
    hash = hash * p8 + c(0) * p7 + c(1) * p6 + c(2) * p5 + c(3) * p4 + c(4) * p3 + c(5) * p2 + c(6) * p1 + c(7);
    d += 8;
    n -= 8;
  }
  for (std::size_t i = 0; i < n; ++i) hash = sdbm(hash, static_cast<std::uint8_t>(d[i]));
  return hash;
}

}  // namespace untold::urho3d
