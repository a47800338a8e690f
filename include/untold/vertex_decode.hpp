// untold/vertex_decode.hpp - bulk decoding of PBR_STATIC_V1 vertices into
// float arrays (interleaved `pbr_vertex` structs or per-attribute streams)
// and of index buffers into uint32, with SSE4.1, AVX2+F16C, AVX-512 and NEON
// paths that are bit-identical to the scalar path (vertex.hpp's per-vertex
// decode).
//
// Two ways to receive the output, neither of which zero-fills first:
//   - caller memory (std::span overloads): a mapped GPU staging buffer, a
//     pool, an existing array;
//   - a fresh uninitialised array (decode_pbr_vertices(bytes) and
//     widen_indices(view) returning untold::decoded_array<T>), allocated with
//     std::make_unique_for_overwrite, so every output byte is written once.
//
// Safe on untrusted input: any bytes decode to some value; the decoders check
// that the byte count is a multiple of the stride and that the outputs have
// the right sizes.
//
// SIMD selection: the default build needs no -m flags. The x86-64 kernels are
// compiled with __attribute__((target(...))) and chosen at run time from
// __builtin_cpu_supports / cpuid (cached once); NEON is used on AArch64
// (__ARM_NEON, where it is baseline). decode_path forces one path. Define
// UNTOLD_NO_SIMD to compile only the scalar path. Bit-identity relies on IEEE
// semantics (no -ffast-math): every path computes max(float(q) / 511.0f, -1),
// byte / 255.0f (a true division, or in the AVX-512 path the product with
// the reciprocal corrected by one FMA step, which gives the same bits for
// every such q and byte: tests/unit/test_vertex.cpp checks them all), and
// exact half -> float conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "untold/vertex.hpp"
#include "untold/view.hpp"

#if !defined(UNTOLD_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define UNTOLD_VERTEX_X86 1
#include <cpuid.h>
#include <immintrin.h>

#include "untold/detail/x86_cpu.hpp"
#endif
#if !defined(UNTOLD_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__) && \
    (defined(__LITTLE_ENDIAN__) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__))
// AArch64 only: ARMv7 NEON has no float division, which the bit-exact
// snorm decode needs.
#define UNTOLD_VERTEX_NEON 1
#include <arm_neon.h>
#endif

namespace untold {

// ---- bulk decode ------------------------------------------------------------------

/// Which implementation a bulk decode uses. `automatic` picks the best one the
/// CPU supports (avx512 > avx2 > sse41 on x86-64, neon on AArch64, else
/// scalar); the others force a path (for tests and benchmarks). All give
/// identical bits. avx512 has its own kernel for the per-attribute streams
/// (16 vertices per step, full 64-byte stores); the interleaved output and
/// the index widening take the AVX2 kernels on that path.
enum class decode_path : std::uint8_t { automatic, scalar, sse41, avx2, neon, avx512 };

[[nodiscard]] constexpr std::string_view decode_path_name(decode_path p) noexcept {
  switch (p) {
    case decode_path::automatic: return "automatic";
    case decode_path::scalar: return "scalar";
    case decode_path::sse41: return "sse41";
    case decode_path::avx2: return "avx2";
    case decode_path::neon: return "neon";
    case decode_path::avx512: return "avx512";
  }
  return "unknown";
}

/// Per-attribute output streams for the bulk decode ("structure of arrays":
/// one array per attribute, its components consecutive per vertex, e.g.
/// positions = x0 y0 z0 x1 ...). An empty span skips that attribute; a
/// non-empty one must hold exactly count * components floats.
struct pbr_vertex_streams {
  std::span<float> positions{};  // 3 per vertex, bit copies
  std::span<float> normals{};    // 3, dequantised
  std::span<float> tangents{};   // 4: xyz + handedness (+1/-1)
  std::span<float> uv0{};        // 2
  std::span<float> uv1{};        // 2
  std::span<float> colors{};     // 4: RGBA byte / 255
};

namespace detail {

#if UNTOLD_VERTEX_X86
struct x86_features {
  bool sse41 = false;
  bool avx2 = false;  // and F16C, which every AVX2 CPU has but cpuid reports separately
  bool avx512 = false;  // x86_full_speed_avx512, FMA, F16C
};

[[nodiscard]] inline x86_features detect_x86_features() noexcept {
  __builtin_cpu_init();
  x86_features f;
  f.sse41 = __builtin_cpu_supports("sse4.1") != 0;
  // __builtin_cpu_supports("avx2") also checks that the OS saves the YMM
  // state; F16C comes from cpuid leaf 1 (clang 14's builtin does not know
  // "f16c").
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  f.avx2 = __builtin_cpu_supports("avx2") != 0 && f16c;
  // The kernel needs AVX-512 F at full clock (detail/x86_cpu.hpp) with FMA.
  f.avx512 = f.avx2 && x86_full_speed_avx512() && __builtin_cpu_supports("fma") != 0;
  return f;
}

[[nodiscard]] inline const x86_features& x86_cpu() noexcept {
  static const x86_features features = detect_x86_features();
  return features;
}
#endif

}  // namespace detail

/// Whether `p` can run on this CPU and build (automatic and scalar: always).
[[nodiscard]] inline bool decode_path_supported(decode_path p) noexcept {
  switch (p) {
    case decode_path::automatic:
    case decode_path::scalar: return true;
#if UNTOLD_VERTEX_X86
    case decode_path::sse41: return detail::x86_cpu().sse41;
    case decode_path::avx2: return detail::x86_cpu().avx2;
    case decode_path::avx512: return detail::x86_cpu().avx512;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: return true;
#endif
    default: return false;
  }
}

/// The path `automatic` resolves to on this machine.
[[nodiscard]] inline decode_path best_decode_path() noexcept {
  if (decode_path_supported(decode_path::avx512)) return decode_path::avx512;
  if (decode_path_supported(decode_path::avx2)) return decode_path::avx2;
  if (decode_path_supported(decode_path::sse41)) return decode_path::sse41;
  if (decode_path_supported(decode_path::neon)) return decode_path::neon;
  return decode_path::scalar;
}

namespace detail {

/// Raw output pointers of the streams (nullptr = skip).
struct stream_ptrs {
  float* positions = nullptr;
  float* normals = nullptr;
  float* tangents = nullptr;
  float* uv0 = nullptr;
  float* uv1 = nullptr;
  float* colors = nullptr;
};

template <std::size_t N>
inline void put_floats(float* dst, const std::array<float, N>& v) noexcept {
  std::memcpy(dst, v.data(), sizeof(float) * N);
}

inline void decode_aos_scalar(const std::byte* in, std::size_t begin, std::size_t end, pbr_vertex* out) noexcept {
  for (std::size_t i = begin; i < end; ++i) out[i] = decode_pbr_vertex(in + i * pbr_vertex_stride);
}

inline void decode_soa_scalar(const std::byte* in, std::size_t begin, std::size_t end,
                              const stream_ptrs& s) noexcept {
  for (std::size_t i = begin; i < end; ++i) {
    const pbr_vertex v = decode_pbr_vertex(in + i * pbr_vertex_stride);
    if (s.positions) put_floats(s.positions + 3 * i, v.position);
    if (s.normals) put_floats(s.normals + 3 * i, v.normal);
    if (s.tangents) put_floats(s.tangents + 4 * i, v.tangent);
    if (s.uv0) put_floats(s.uv0 + 2 * i, v.uv0);
    if (s.uv1) put_floats(s.uv1 + 2 * i, v.uv1);
    if (s.colors) put_floats(s.colors + 4 * i, v.color0);
  }
}

#if UNTOLD_VERTEX_X86
// The kernels below compute exactly what the scalar decode computes:
//  snorm10: shift the field to the top, arithmetic shift back, cvt, / 511, max -1;
//  handedness: +1 with the sign bit of the tangent word;
//  half: exact (integer rebias + exact subnormal scaling, or F16C);
//  color: byte -> int -> float / 255.
// Positions are stored as integers so NaN payloads survive.
//
// Interleaved output is assembled into four full 16-byte rows and one 8-byte
// tail per 72-byte vertex with shuffles (bit moves, NaN payloads intact)
// rather than five overlapping 16-byte stores, which a store-only test ran at
// half the speed on x86.

#define UNTOLD_TARGET_SSE41 __attribute__((target("sse4.1")))
#define UNTOLD_TARGET_AVX2 __attribute__((target("avx2,f16c")))

/// Exact binary16 -> binary32 of the low 16 bits of each lane (SSE4.1).
UNTOLD_TARGET_SSE41 inline __m128i half_to_float_bits_sse41(__m128i h) noexcept {
  const __m128i em = _mm_and_si128(h, _mm_set1_epi32(0x7FFF));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i rebias = _mm_set1_epi32(112 << 23);
  __m128i o = _mm_add_epi32(_mm_slli_epi32(em, 13), rebias);
  const __m128i inf_nan = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7BFF));
  o = _mm_add_epi32(o, _mm_and_si128(inf_nan, rebias));  // exponent 31 -> 255
  const __m128i nan = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7C00));
  o = _mm_or_si128(o, _mm_and_si128(nan, _mm_set1_epi32(0x00400000)));  // quiet bit
  // Zero and subnormals: em * 2^-24 is exact and a normal float (or 0).
  const __m128i small = _mm_cmplt_epi32(em, _mm_set1_epi32(0x0400));
  const __m128 sub = _mm_mul_ps(_mm_cvtepi32_ps(em), _mm_set1_ps(0x1p-24f));
  o = _mm_blendv_epi8(o, _mm_castps_si128(sub), small);
  return _mm_or_si128(o, sign);
}

struct sse41_vertex {
  __m128i position;  // p0 p1 p2 (lane 3: normal word, spare)
  __m128 normal;     // nx ny nz (lane 3 spare)
  __m128 tangent;    // tx ty tz w
  __m128 uv;         // u0 v0 u1 v1
  __m128 color;      // r g b a
};

UNTOLD_TARGET_SSE41 inline sse41_vertex decode_vertex_sse41(const std::byte* p) noexcept {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));       // p0 p1 p2 N
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));  // T U0 U1 C
  const __m128 k511 = _mm_set1_ps(511.0f);
  const __m128 kneg1 = _mm_set1_ps(-1.0f);
  // SSE4.1 has no per-lane shifts; multiplying by 2^k is the per-lane left shift.
  const __m128i lift = _mm_setr_epi32(1 << 22, 1 << 12, 1 << 2, 1);
  sse41_vertex v;
  v.position = a;
  const __m128i n = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi32(a, 0xFF), lift), 22);
  v.normal = _mm_max_ps(_mm_div_ps(_mm_cvtepi32_ps(n), k511), kneg1);
  const __m128i t = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi32(b, 0x00), lift), 22);
  const __m128 txyz = _mm_max_ps(_mm_div_ps(_mm_cvtepi32_ps(t), k511), kneg1);
  // Lane 3 of t is T >> 22, whose sign is bit 31 of T.
  const __m128 w = _mm_or_ps(_mm_set1_ps(1.0f), _mm_and_ps(_mm_castsi128_ps(t), _mm_set1_ps(-0.0f)));
  v.tangent = _mm_blend_ps(txyz, w, 0x8);
  v.uv = _mm_castsi128_ps(half_to_float_bits_sse41(_mm_cvtepu16_epi32(_mm_srli_si128(b, 4))));
  v.color = _mm_div_ps(_mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_srli_si128(b, 12))), _mm_set1_ps(255.0f));
  return v;
}

/// Writes one pbr_vertex (18 floats) at o from its decoded rows.
UNTOLD_TARGET_SSE41 inline void store_pbr_vertex_sse41(float* o, __m128 pos, __m128 nrm, __m128 tan, __m128 uv,
                                                       __m128 col) noexcept {
  _mm_storeu_ps(o, _mm_blend_ps(pos, _mm_shuffle_ps(nrm, nrm, 0x00), 0x8));  // p0 p1 p2 nx
  _mm_storeu_ps(o + 4, _mm_shuffle_ps(nrm, tan, _MM_SHUFFLE(1, 0, 2, 1)));  // ny nz tx ty
  _mm_storeu_ps(o + 8, _mm_shuffle_ps(tan, uv, _MM_SHUFFLE(1, 0, 3, 2)));   // tz tw u0 v0
  _mm_storeu_ps(o + 12, _mm_shuffle_ps(uv, col, _MM_SHUFFLE(1, 0, 3, 2)));  // u1 v1 r g
  _mm_storeh_pi(reinterpret_cast<__m64*>(o + 16), col);                     // b a
}

UNTOLD_TARGET_SSE41 inline void decode_aos_sse41(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const sse41_vertex v = decode_vertex_sse41(in + i * pbr_vertex_stride);
    store_pbr_vertex_sse41(reinterpret_cast<float*>(out + i), _mm_castsi128_ps(v.position), v.normal, v.tangent, v.uv,
                           v.color);
  }
}

UNTOLD_TARGET_SSE41 inline void decode_soa_sse41(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  // 3-component streams take a 16-byte store whose spare lane lands on the
  // next vertex; the last vertex goes through the scalar code instead.
  const std::size_t simd_end = n == 0 ? 0 : n - 1;
  for (std::size_t i = 0; i < simd_end; ++i) {
    const sse41_vertex v = decode_vertex_sse41(in + i * pbr_vertex_stride);
    if (s.positions) _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i), v.position);
    if (s.normals) _mm_storeu_ps(s.normals + 3 * i, v.normal);
    if (s.tangents) _mm_storeu_ps(s.tangents + 4 * i, v.tangent);
    if (s.uv0) _mm_storel_pi(reinterpret_cast<__m64*>(s.uv0 + 2 * i), v.uv);
    if (s.uv1) _mm_storeh_pi(reinterpret_cast<__m64*>(s.uv1 + 2 * i), v.uv);
    if (s.colors) _mm_storeu_ps(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, simd_end, n, s);
}

struct avx2_vertex_pair {
  __m256i position;  // [p0 p1 p2 N] x 2 vertices
  __m256 normal;     // [nx ny nz -] x 2
  __m256 tangent;    // [tx ty tz w] x 2
  __m256 uv;         // [u0 v0 u1 v1] x 2
  __m256 color;      // [r g b a] x 2
};

/// Decodes vertices p[0..32) and p[32..64): low 128-bit lane = first vertex.
UNTOLD_TARGET_AVX2 inline avx2_vertex_pair decode_vertex_pair_avx2(const std::byte* p) noexcept {
  const auto* q = reinterpret_cast<const __m128i*>(p);
  const __m256i a = _mm256_loadu2_m128i(q + 2, q);      // p0 p1 p2 N | same, vertex 1
  const __m256i b = _mm256_loadu2_m128i(q + 3, q + 1);  // T U0 U1 C | same, vertex 1
  const __m256 k511 = _mm256_set1_ps(511.0f);
  const __m256 kneg1 = _mm256_set1_ps(-1.0f);
  const __m256i lift = _mm256_setr_epi32(22, 12, 2, 0, 22, 12, 2, 0);
  avx2_vertex_pair v;
  v.position = a;
  const __m256i n = _mm256_srai_epi32(_mm256_sllv_epi32(_mm256_shuffle_epi32(a, 0xFF), lift), 22);
  v.normal = _mm256_max_ps(_mm256_div_ps(_mm256_cvtepi32_ps(n), k511), kneg1);
  const __m256i t = _mm256_srai_epi32(_mm256_sllv_epi32(_mm256_shuffle_epi32(b, 0x00), lift), 22);
  const __m256 txyz = _mm256_max_ps(_mm256_div_ps(_mm256_cvtepi32_ps(t), k511), kneg1);
  const __m256 w = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(_mm256_castsi256_ps(t), _mm256_set1_ps(-0.0f)));
  v.tangent = _mm256_blend_ps(txyz, w, 0x88);
  // The 4 halves of each vertex (bytes 20..27) side by side, then one 8-wide
  // exact conversion.
  const __m128i halves = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + pbr_offset::uv0)),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 32 + pbr_offset::uv0)));
  v.uv = _mm256_cvtph_ps(halves);
  // Bytes 12..15 of each lane (the color word) zero-extended to 32 bits.
  const __m256i spread = _mm256_setr_epi8(12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1,  //
                                          12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1);
  v.color = _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_shuffle_epi8(b, spread)), _mm256_set1_ps(255.0f));
  return v;
}

UNTOLD_TARGET_AVX2 inline void decode_aos_avx2(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const avx2_vertex_pair v = decode_vertex_pair_avx2(in + i * pbr_vertex_stride);
    // The same row assembly as store_pbr_vertex_sse41, both vertices at once.
    const __m256 pos = _mm256_castsi256_ps(v.position);
    const __m256 r0 = _mm256_blend_ps(pos, _mm256_shuffle_ps(v.normal, v.normal, 0x00), 0x88);  // p0 p1 p2 nx
    const __m256 r1 = _mm256_shuffle_ps(v.normal, v.tangent, _MM_SHUFFLE(1, 0, 2, 1));        // ny nz tx ty
    const __m256 r2 = _mm256_shuffle_ps(v.tangent, v.uv, _MM_SHUFFLE(1, 0, 3, 2));            // tz tw u0 v0
    const __m256 r3 = _mm256_shuffle_ps(v.uv, v.color, _MM_SHUFFLE(1, 0, 3, 2));              // u1 v1 r g
    float* o = reinterpret_cast<float*>(out + i);
    _mm_storeu_ps(o, _mm256_castps256_ps128(r0));
    _mm_storeu_ps(o + 4, _mm256_castps256_ps128(r1));
    _mm_storeu_ps(o + 8, _mm256_castps256_ps128(r2));
    _mm_storeu_ps(o + 12, _mm256_castps256_ps128(r3));
    _mm_storeh_pi(reinterpret_cast<__m64*>(o + 16), _mm256_castps256_ps128(v.color));  // b a
    // Upper-lane extracts straight to memory are store-only operations.
    _mm_storeu_ps(o + 18, _mm256_extractf128_ps(r0, 1));
    _mm_storeu_ps(o + 22, _mm256_extractf128_ps(r1, 1));
    _mm_storeu_ps(o + 26, _mm256_extractf128_ps(r2, 1));
    _mm_storeu_ps(o + 30, _mm256_extractf128_ps(r3, 1));
    _mm_storeh_pi(reinterpret_cast<__m64*>(o + 34), _mm256_extractf128_ps(v.color, 1));
  }
  decode_aos_scalar(in, i, n, out);
}

UNTOLD_TARGET_AVX2 inline void decode_soa_avx2(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  std::size_t i = 0;
  // Keep the spare lane of the second vertex's 3-float stores inside the
  // stream: stop while a vertex after the pair remains.
  for (; i + 2 < n; i += 2) {
    const avx2_vertex_pair v = decode_vertex_pair_avx2(in + i * pbr_vertex_stride);
    if (s.positions) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i), _mm256_castsi256_si128(v.position));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i + 3), _mm256_extracti128_si256(v.position, 1));
    }
    if (s.normals) {
      _mm_storeu_ps(s.normals + 3 * i, _mm256_castps256_ps128(v.normal));
      _mm_storeu_ps(s.normals + 3 * i + 3, _mm256_extractf128_ps(v.normal, 1));
    }
    if (s.tangents) _mm256_storeu_ps(s.tangents + 4 * i, v.tangent);
    if (s.uv0 || s.uv1) {
      // [u0 v0 u1 v1 | u0' v0' u1' v1'] -> uv0 pair and uv1 pair.
      const __m256d uv = _mm256_permute4x64_pd(_mm256_castps_pd(v.uv), 0xD8);  // uv0 uv0' uv1 uv1'
      if (s.uv0) _mm_storeu_pd(reinterpret_cast<double*>(s.uv0 + 2 * i), _mm256_castpd256_pd128(uv));
      if (s.uv1) _mm_storeu_pd(reinterpret_cast<double*>(s.uv1 + 2 * i), _mm256_extractf128_pd(uv, 1));
    }
    if (s.colors) _mm256_storeu_ps(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, i, n, s);
}

// The AVX-512 kernel. GCC 12's AVX-512 intrinsics pass an "undefined"
// register that -Wmaybe-uninitialized misreports once inlined (GCC bug
// 105593, fixed in GCC 13); the kernel is never inlined into code without
// its target, so silencing the warning here silences it everywhere.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define UNTOLD_TARGET_AVX512 __attribute__((target("avx512f,avx2,f16c,fma")))
/// Exact q / d for the small integers of the snorm and byte decodes
/// (|q| <= 512, d = 511 or 255): the product with the rounded reciprocal,
/// corrected by one FMA step; bit-identical to the division for those inputs
/// (tests/unit/test_vertex.cpp checks every one).
UNTOLD_TARGET_AVX512 inline __m512 exact_quotient_avx512(__m512 q, __m512 d, __m512 reciprocal) noexcept {
  const __m512 r = _mm512_mul_ps(q, reciprocal);
  return _mm512_fmadd_ps(_mm512_fnmadd_ps(r, d, q), reciprocal, r);
}

/// Words `first`..`first + 3` of four registers (4 vertices each), as one
/// column: vertex v's word in lane v.
UNTOLD_TARGET_AVX512 inline __m512i column_avx512(const __m512i (&r)[4], int first) noexcept {
  const __m512i idx = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 0, 1, 2, 3, 16, 17, 18, 19),
                                       _mm512_set1_epi32(first));
  const __m512i lo = _mm512_permutex2var_epi32(r[0], idx, r[1]);
  const __m512i hi = _mm512_permutex2var_epi32(r[2], idx, r[3]);
  return _mm512_shuffle_i64x2(lo, hi, 0x44);  // lo's lanes 0-7, then hi's
}

/// 16 vertices (512 bytes) per step into the streams with full 64-byte
/// stores: two 2-register permutes per 4 vertices gather each attribute's
/// words ("columns"), then each output register picks its vertices' words
/// from a column, shifts its fields into place and converts.
UNTOLD_TARGET_AVX512 inline void decode_soa_avx512(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  const __m512 k511 = _mm512_set1_ps(511.0f), r511 = _mm512_set1_ps(1.0f / 511.0f);
  const __m512 k255 = _mm512_set1_ps(255.0f), r255 = _mm512_set1_ps(1.0f / 255.0f);
  const __m512 kneg1 = _mm512_set1_ps(-1.0f), kone = _mm512_set1_ps(1.0f);
  // Per 4 vertices (two registers of two): their position and normal words,
  // then their T, U0, U1 and C words (vertex.hpp's PBR_STATIC_V1 layout).
  const __m512i pos_n = _mm512_setr_epi32(0, 1, 2, 8, 9, 10, 16, 17, 18, 24, 25, 26, 3, 11, 19, 27);
  const __m512i rest = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const std::byte* p = in + i * pbr_vertex_stride;
    __m512i pn[4], tc[4];
    for (int k = 0; k < 4; ++k) {
      const __m512i a = _mm512_loadu_si512(p + 128 * k), b = _mm512_loadu_si512(p + 128 * k + 64);
      pn[k] = _mm512_permutex2var_epi32(a, pos_n, b);  // p(4) x 3, N x 4
      tc[k] = _mm512_permutex2var_epi32(a, rest, b);   // T x 4, U0 x 4, U1 x 4, C x 4
    }
    if (s.positions) {
      float* o = s.positions + 3 * i;
      // The 48 position words: words 0-11 of pn[0], pn[1], pn[2], pn[3].
      const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19);
      const __m512i second = _mm512_setr_epi32(4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23);
      const __m512i third = _mm512_setr_epi32(8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
      _mm512_storeu_si512(o, _mm512_permutex2var_epi32(pn[0], first, pn[1]));
      _mm512_storeu_si512(o + 16, _mm512_permutex2var_epi32(pn[1], second, pn[2]));
      _mm512_storeu_si512(o + 32, _mm512_permutex2var_epi32(pn[2], third, pn[3]));
    }
    const __m512i vertex3[3] = {_mm512_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5),
                                _mm512_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10),
                                _mm512_setr_epi32(10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15)};
    if (s.normals) {
      const __m512i nc = column_avx512(pn, 12);
      const __m512i lift3[3] = {_mm512_setr_epi32(22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22),
                                _mm512_setr_epi32(12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12),
                                _mm512_setr_epi32(2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2, 22, 12, 2)};
      for (int k = 0; k < 3; ++k) {
        const __m512i q =
            _mm512_srai_epi32(_mm512_sllv_epi32(_mm512_permutexvar_epi32(vertex3[k], nc), lift3[k]), 22);
        const __m512 normal = _mm512_max_ps(exact_quotient_avx512(_mm512_cvtepi32_ps(q), k511, r511), kneg1);
        _mm512_storeu_ps(s.normals + 3 * i + 16 * k, normal);
      }
    }
    const __m512i vertex4[4] = {_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7),
                                _mm512_setr_epi32(8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11),
                                _mm512_setr_epi32(12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15)};
    if (s.tangents) {
      const __m512i tcol = column_avx512(tc, 0);
      const __m512i lift = _mm512_setr_epi32(22, 12, 2, 0, 22, 12, 2, 0, 22, 12, 2, 0, 22, 12, 2, 0);
      const __m512i sign_bit = _mm512_set1_epi32(INT32_MIN);
      for (int k = 0; k < 4; ++k) {
        const __m512i t =
            _mm512_srai_epi32(_mm512_sllv_epi32(_mm512_permutexvar_epi32(vertex4[k], tcol), lift), 22);
        const __m512 xyz = _mm512_max_ps(exact_quotient_avx512(_mm512_cvtepi32_ps(t), k511, r511), kneg1);
        // Lane 3 of t is T >> 22, whose sign is bit 31 of T.
        const __m512 w =
            _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(kone), _mm512_and_si512(t, sign_bit)));
        _mm512_storeu_ps(s.tangents + 4 * i + 16 * k, _mm512_mask_blend_ps(0x8888, xyz, w));
      }
    }
    if (s.uv0) {
      const __m512i u = column_avx512(tc, 4);  // 32 halves: u v per vertex
      _mm512_storeu_ps(s.uv0 + 2 * i, _mm512_cvtph_ps(_mm512_castsi512_si256(u)));
      _mm512_storeu_ps(s.uv0 + 2 * i + 16, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(u, 1)));
    }
    if (s.uv1) {
      const __m512i u = column_avx512(tc, 8);
      _mm512_storeu_ps(s.uv1 + 2 * i, _mm512_cvtph_ps(_mm512_castsi512_si256(u)));
      _mm512_storeu_ps(s.uv1 + 2 * i + 16, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(u, 1)));
    }
    if (s.colors) {
      const __m512i ccol = column_avx512(tc, 12);
      const __m512i bytes = _mm512_setr_epi32(0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24);
      const __m512i byte_mask = _mm512_set1_epi32(0xFF);
      for (int k = 0; k < 4; ++k) {
        const __m512i c =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(vertex4[k], ccol), bytes), byte_mask);
        _mm512_storeu_ps(s.colors + 4 * i + 16 * k, exact_quotient_avx512(_mm512_cvtepi32_ps(c), k255, r255));
      }
    }
  }
  // The last 0-15 vertices: the AVX2 kernel, from vertex i on.
  const auto from = [i](float* stream, std::size_t components) { return stream ? stream + components * i : nullptr; };
  decode_soa_avx2(in + i * pbr_vertex_stride, n - i,
                  stream_ptrs{from(s.positions, 3), from(s.normals, 3), from(s.tangents, 4), from(s.uv0, 2),
                              from(s.uv1, 2), from(s.colors, 4)});
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // UNTOLD_VERTEX_X86

#if UNTOLD_VERTEX_NEON
/// Exact binary16 -> binary32 of the low 16 bits of each lane (same integer
/// method as the SSE4.1 path; independent of FPCR.DN/FZ).
inline uint32x4_t half_to_float_bits_neon(uint32x4_t h) noexcept {
  const uint32x4_t em = vandq_u32(h, vdupq_n_u32(0x7FFF));
  const uint32x4_t sign = vshlq_n_u32(vandq_u32(h, vdupq_n_u32(0x8000)), 16);
  const uint32x4_t rebias = vdupq_n_u32(112u << 23);
  uint32x4_t o = vaddq_u32(vshlq_n_u32(em, 13), rebias);
  o = vaddq_u32(o, vandq_u32(vcgtq_u32(em, vdupq_n_u32(0x7BFF)), rebias));
  o = vorrq_u32(o, vandq_u32(vcgtq_u32(em, vdupq_n_u32(0x7C00)), vdupq_n_u32(0x00400000)));
  const float32x4_t sub = vmulq_f32(vcvtq_f32_u32(em), vdupq_n_f32(0x1p-24f));
  o = vbslq_u32(vcltq_u32(em, vdupq_n_u32(0x0400)), vreinterpretq_u32_f32(sub), o);
  return vorrq_u32(o, sign);
}

struct neon_vertex {
  uint32x4_t position;
  float32x4_t normal;
  float32x4_t tangent;
  float32x4_t uv;
  float32x4_t color;
};

inline neon_vertex decode_vertex_neon(const std::byte* p) noexcept {
  const uint8x16_t a8 = vld1q_u8(reinterpret_cast<const std::uint8_t*>(p));
  const uint8x16_t b8 = vld1q_u8(reinterpret_cast<const std::uint8_t*>(p + 16));
  const uint32x4_t a = vreinterpretq_u32_u8(a8);  // p0 p1 p2 N
  const uint32x4_t b = vreinterpretq_u32_u8(b8);  // T U0 U1 C
  const float32x4_t k511 = vdupq_n_f32(511.0f);
  const float32x4_t kneg1 = vdupq_n_f32(-1.0f);
  const int32x4_t lift = {22, 12, 2, 0};
  neon_vertex v;
  v.position = a;
  const int32x4_t n = vshrq_n_s32(vreinterpretq_s32_u32(vshlq_u32(vdupq_laneq_u32(a, 3), lift)), 22);
  v.normal = vmaxq_f32(vdivq_f32(vcvtq_f32_s32(n), k511), kneg1);
  const int32x4_t t = vshrq_n_s32(vreinterpretq_s32_u32(vshlq_u32(vdupq_laneq_u32(b, 0), lift)), 22);
  const float32x4_t txyz = vmaxq_f32(vdivq_f32(vcvtq_f32_s32(t), k511), kneg1);
  const uint32x4_t w = vorrq_u32(vreinterpretq_u32_f32(vdupq_n_f32(1.0f)),
                                 vandq_u32(vreinterpretq_u32_s32(t), vdupq_n_u32(0x80000000u)));
  v.tangent = vcopyq_laneq_f32(txyz, 3, vreinterpretq_f32_u32(w), 3);
  const uint16x4_t halves = vget_low_u16(vreinterpretq_u16_u32(vextq_u32(b, b, 1)));  // U0 U1
  v.uv = vreinterpretq_f32_u32(half_to_float_bits_neon(vmovl_u16(halves)));
  const uint16x4_t c16 = vget_high_u16(vmovl_u8(vget_high_u8(b8)));  // bytes 12..15
  v.color = vdivq_f32(vcvtq_f32_u32(vmovl_u16(c16)), vdupq_n_f32(255.0f));
  return v;
}

// Overlapping 16-byte stores in increasing address order: each store's
// spare lane is overwritten by the next and the last ends at the vertex end.
inline void decode_aos_neon(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const neon_vertex v = decode_vertex_neon(in + i * pbr_vertex_stride);
    float* o = reinterpret_cast<float*>(out + i);
    vst1q_f32(o, vreinterpretq_f32_u32(v.position));
    vst1q_f32(o + 3, v.normal);
    vst1q_f32(o + 6, v.tangent);
    vst1q_f32(o + 10, v.uv);
    vst1q_f32(o + 14, v.color);
  }
}

inline void decode_soa_neon(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  const std::size_t simd_end = n == 0 ? 0 : n - 1;
  for (std::size_t i = 0; i < simd_end; ++i) {
    const neon_vertex v = decode_vertex_neon(in + i * pbr_vertex_stride);
    if (s.positions) vst1q_f32(s.positions + 3 * i, vreinterpretq_f32_u32(v.position));
    if (s.normals) vst1q_f32(s.normals + 3 * i, v.normal);
    if (s.tangents) vst1q_f32(s.tangents + 4 * i, v.tangent);
    if (s.uv0) vst1_f32(s.uv0 + 2 * i, vget_low_f32(v.uv));
    if (s.uv1) vst1_f32(s.uv1 + 2 * i, vget_high_f32(v.uv));
    if (s.colors) vst1q_f32(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, simd_end, n, s);
}
#endif  // UNTOLD_VERTEX_NEON


// ---- index widening ------------------------------------------------------------------

inline void widen_u16_scalar(const std::byte* in, std::size_t begin, std::size_t end, std::uint32_t* out) noexcept {
  for (std::size_t i = begin; i < end; ++i) out[i] = load_le_unchecked<std::uint16_t>(in + 2 * i);
}

#if UNTOLD_VERTEX_X86
UNTOLD_TARGET_SSE41 inline void widen_u16_sse41(const std::byte* in, std::size_t n, std::uint32_t* out) noexcept {
  const std::size_t simd_end = n & ~std::size_t{7};
  for (std::size_t i = 0; i < simd_end; i += 8) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_cvtepu16_epi32(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 4), _mm_cvtepu16_epi32(_mm_srli_si128(v, 8)));
  }
  widen_u16_scalar(in, simd_end, n, out);
}

UNTOLD_TARGET_AVX2 inline void widen_u16_avx2(const std::byte* in, std::size_t n, std::uint32_t* out) noexcept {
  const std::size_t simd_end = n & ~std::size_t{15};
  for (std::size_t i = 0; i < simd_end; i += 16) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i + 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_cvtepu16_epi32(lo));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 8), _mm256_cvtepu16_epi32(hi));
  }
  widen_u16_scalar(in, simd_end, n, out);
}
#endif

#if UNTOLD_VERTEX_NEON
inline void widen_u16_neon(const std::byte* in, std::size_t n, std::uint32_t* out) noexcept {
  const std::size_t simd_end = n & ~std::size_t{7};
  for (std::size_t i = 0; i < simd_end; i += 8) {
    const uint16x8_t v = vld1q_u16(reinterpret_cast<const std::uint16_t*>(in + 2 * i));
    vst1q_u32(out + i, vmovl_u16(vget_low_u16(v)));
    vst1q_u32(out + i + 4, vmovl_u16(vget_high_u16(v)));
  }
  widen_u16_scalar(in, simd_end, n, out);
}
#endif

[[nodiscard]] inline result<decode_path> resolve_path(decode_path requested) noexcept {
  if (requested == decode_path::automatic) return best_decode_path();
  if (!decode_path_supported(requested)) {
    return make_error(errc::invalid_argument,
                      {.field = "decode_path", .value = static_cast<std::uint64_t>(requested), .has_value = true});
  }
  return requested;
}

[[nodiscard]] inline status check_stream_out(std::span<float> s, std::size_t count, std::size_t components,
                                             const char* field) noexcept {
  if (!s.empty() && s.size() != count * components) return input_error(field, no_index, s.size(), true);
  return {};
}

}  // namespace detail

/// Decodes every vertex of `vertex_bytes` (PBR_STATIC_V1, any alignment) into
/// `out`, which must hold exactly vertex_bytes.size() / 32 elements (layout:
/// see pbr_vertex). errc::invalid_argument when the byte count is not a
/// multiple of 32, `out` has the wrong size, or a forced `path` is not
/// supported here. Every path produces the same bits. Safe on untrusted input.
[[nodiscard]] inline status decode_pbr_vertices(byte_span vertex_bytes, std::span<pbr_vertex> out,
                                                decode_path path = decode_path::automatic) noexcept {
  if (vertex_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(vertex_bytes.size());
  }
  const std::size_t n = vertex_bytes.size() / pbr_vertex_stride;
  if (out.size() != n) return detail::input_error("out", no_index, out.size(), true);
  const auto resolved = detail::resolve_path(path);
  if (!resolved) return resolved.error();
  const std::byte* in = vertex_bytes.data();
  switch (*resolved) {
#if UNTOLD_VERTEX_X86
    case decode_path::avx512:
    case decode_path::avx2: detail::decode_aos_avx2(in, n, out.data()); break;
    case decode_path::sse41: detail::decode_aos_sse41(in, n, out.data()); break;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: detail::decode_aos_neon(in, n, out.data()); break;
#endif
    default: detail::decode_aos_scalar(in, 0, n, out.data()); break;
  }
  return {};
}

/// Decodes every vertex of `vertex_bytes` into per-attribute streams (see
/// pbr_vertex_streams; empty streams are skipped, non-empty ones must hold
/// exactly count * components floats). Errors as for the interleaved
/// overload. Every path produces the same bits. Safe on untrusted input.
[[nodiscard]] inline status decode_pbr_vertices(byte_span vertex_bytes, const pbr_vertex_streams& out,
                                                decode_path path = decode_path::automatic) noexcept {
  if (vertex_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(vertex_bytes.size());
  }
  const std::size_t n = vertex_bytes.size() / pbr_vertex_stride;
  UNTOLD_TRY(detail::check_stream_out(out.positions, n, 3, "positions"));
  UNTOLD_TRY(detail::check_stream_out(out.normals, n, 3, "normals"));
  UNTOLD_TRY(detail::check_stream_out(out.tangents, n, 4, "tangents"));
  UNTOLD_TRY(detail::check_stream_out(out.uv0, n, 2, "uv0"));
  UNTOLD_TRY(detail::check_stream_out(out.uv1, n, 2, "uv1"));
  UNTOLD_TRY(detail::check_stream_out(out.colors, n, 4, "colors"));
  const auto resolved = detail::resolve_path(path);
  if (!resolved) return resolved.error();
  auto ptr = [](std::span<float> s) { return s.empty() ? nullptr : s.data(); };
  const detail::stream_ptrs s{ptr(out.positions), ptr(out.normals), ptr(out.tangents),
                              ptr(out.uv0),       ptr(out.uv1),     ptr(out.colors)};
  const std::byte* in = vertex_bytes.data();
  switch (*resolved) {
#if UNTOLD_VERTEX_X86
    case decode_path::avx512: detail::decode_soa_avx512(in, n, s); break;
    case decode_path::avx2: detail::decode_soa_avx2(in, n, s); break;
    case decode_path::sse41: detail::decode_soa_sse41(in, n, s); break;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: detail::decode_soa_neon(in, n, s); break;
#endif
    default: detail::decode_soa_scalar(in, 0, n, s); break;
  }
  return {};
}

/// An array the library allocated and filled: std::unique_ptr<T[]> plus its
/// element count. Allocated with std::make_unique_for_overwrite, so nothing is
/// zero-filled before the decode writes every element.
template <class T>
struct decoded_array {
  std::unique_ptr<T[]> data{};
  std::size_t size = 0;

  [[nodiscard]] std::span<T> span() noexcept { return {data.get(), size}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data.get(), size}; }
};

/// Writes every index of `indices` into `out` as uint32 (uint16 indices are
/// zero-extended with SSE4.1 / AVX2 / NEON; uint32 ones are copied). `out`
/// must hold exactly indices.size() elements, else errc::invalid_argument
/// (field "out"); also when a forced `path` is not supported here. Values are
/// not checked against a vertex count: the reader's R-INDEX-VALUE does that.
/// Safe on untrusted input.
[[nodiscard]] inline status widen_indices(index_view indices, std::span<std::uint32_t> out,
                                          decode_path path = decode_path::automatic) noexcept {
  const std::size_t n = indices.size();
  if (out.size() != n) return detail::input_error("out", no_index, out.size(), true);
  const auto resolved = detail::resolve_path(path);
  if (!resolved) return resolved.error();
  const std::byte* in = indices.bytes().data();
  if (indices.index_bytes() == 4) {
    if constexpr (std::endian::native == std::endian::little) {
      if (n != 0) std::memcpy(out.data(), in, n * 4);
    } else {
      for (std::size_t i = 0; i < n; ++i) out[i] = indices[i];
    }
    return {};
  }
  switch (*resolved) {
#if UNTOLD_VERTEX_X86
    case decode_path::avx512:
    case decode_path::avx2: detail::widen_u16_avx2(in, n, out.data()); break;
    case decode_path::sse41: detail::widen_u16_sse41(in, n, out.data()); break;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: detail::widen_u16_neon(in, n, out.data()); break;
#endif
    default: detail::widen_u16_scalar(in, 0, n, out.data()); break;
  }
  return {};
}

/// widen_indices into a fresh uninitialised array of indices.size() uint32.
/// Safe on untrusted input; allocates 4 bytes per index of a view the caller
/// already holds (the reader bounded its size).
[[nodiscard]] inline result<decoded_array<std::uint32_t>> widen_indices(index_view indices,
                                                                        decode_path path = decode_path::automatic) {
  decoded_array<std::uint32_t> out{std::make_unique_for_overwrite<std::uint32_t[]>(indices.size()), indices.size()};
  UNTOLD_TRY(widen_indices(indices, out.span(), path));
  return out;
}

/// decode_pbr_vertices into a fresh uninitialised array of
/// vertex_bytes.size() / 32 pbr_vertex (72 bytes each). Errors as for the
/// span overload. Safe on untrusted input.
[[nodiscard]] inline result<decoded_array<pbr_vertex>> decode_pbr_vertices(
    byte_span vertex_bytes, decode_path path = decode_path::automatic) {
  if (vertex_bytes.size() % pbr_vertex_stride != 0) return detail::vertex_bytes_error(vertex_bytes.size());
  const std::size_t n = vertex_bytes.size() / pbr_vertex_stride;
  decoded_array<pbr_vertex> out{std::make_unique_for_overwrite<pbr_vertex[]>(n), n};
  UNTOLD_TRY(decode_pbr_vertices(vertex_bytes, out.span(), path));
  return out;
}

}  // namespace untold
