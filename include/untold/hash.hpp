// untold/hash.hpp - SHA-256 for the file's contentHash (spec section 5, R-HASH).
//
// `sha256` goes through OpenSSL's EVP interface when the build has it
// (UNTOLD_HAS_OPENSSL=1), which picks the CPU's SHA extensions; otherwise it
// falls back to `sha256_portable`, a plain implementation of FIPS 180-4 in
// this header. The portable one is always compiled, so tests can compare the
// two on the same inputs.
//
//   untold::sha256 h;
//   h.update(chunk_a);
//   h.update(chunk_b);
//   untold::result<untold::sha256_digest> d = h.finish();
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <utility>

#include "bytes.hpp"
#include "error.hpp"

#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
#define UNTOLD_DETAIL_OPENSSL 1
// The EVP digest functions this header calls, declared exactly as
// <openssl/evp.h> (OpenSSL 1.1 and 3.x) declares them: evp.h costs every
// translation unit 8,000 preprocessed lines, types.h 600. Identical
// redeclarations are fine where a file also includes evp.h
// (tests/unit/test_hash.cpp compiles both together).
#include <openssl/types.h>
extern "C" {
EVP_MD_CTX* EVP_MD_CTX_new(void);
void EVP_MD_CTX_free(EVP_MD_CTX* ctx);
int EVP_DigestInit_ex(EVP_MD_CTX* ctx, const EVP_MD* type, ENGINE* impl);
int EVP_DigestUpdate(EVP_MD_CTX* ctx, const void* d, size_t cnt);
int EVP_DigestFinal_ex(EVP_MD_CTX* ctx, unsigned char* md, unsigned int* s);
const EVP_MD* EVP_sha256(void);
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
EVP_MD* EVP_MD_fetch(OSSL_LIB_CTX* ctx, const char* algorithm, const char* properties);
#endif
}
#else
#define UNTOLD_DETAIL_OPENSSL 0
#endif

namespace untold {

using sha256_digest = std::array<std::uint8_t, 32>;

/// True when `sha256` is backed by OpenSSL in this build.
inline constexpr bool sha256_uses_openssl = UNTOLD_DETAIL_OPENSSL != 0;

/// Lower-case hex of a digest (64 characters). A template so this header
/// needs no <string>: include <string> where you call it.
template <class String = std::string>
[[nodiscard]] String to_hex(const sha256_digest& digest) {
  constexpr char digits[] = "0123456789abcdef";
  String s;
  s.reserve(64);
  for (const std::uint8_t b : digest) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 0xF]);
  }
  return s;
}

/// SHA-256's state part way through a message: the intermediate hash value
/// H(i) of FIPS 180-4 section 6.2 after the message's first `length` bytes,
/// `length` a multiple of the 64-byte block. What the integrity chunk
/// records to bind itself to the contentHash (integrity.hpp).
struct sha256_midstate {
  std::array<std::uint32_t, 8> words{};
  std::uint64_t length = 0;
  friend constexpr bool operator==(const sha256_midstate&, const sha256_midstate&) = default;
};

namespace detail {

inline constexpr std::size_t sha256_block_size = 64;

// FIPS 180-4 5.3.3: first 32 bits of the fractional parts of the square roots
// of the first eight primes.
inline constexpr std::array<std::uint32_t, 8> sha256_initial_state = {
    0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};

// 4.2.2: first 32 bits of the fractional parts of the cube roots of the first
// sixty-four primes.
inline constexpr std::array<std::uint32_t, 64> sha256_round_constants = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

// 6.2.2: `count` blocks of the hash computation, in plain C++.
inline void sha256_compress_generic(std::array<std::uint32_t, 8>& state, const std::byte* blocks,
                                    std::size_t count) noexcept {
  for (; count != 0; --count, blocks += sha256_block_size) {
    std::array<std::uint32_t, 64> w;  // message schedule
    for (std::size_t t = 0; t < 16; ++t) {
      w[t] = (std::to_integer<std::uint32_t>(blocks[4 * t]) << 24) |
             (std::to_integer<std::uint32_t>(blocks[4 * t + 1]) << 16) |
             (std::to_integer<std::uint32_t>(blocks[4 * t + 2]) << 8) | std::to_integer<std::uint32_t>(blocks[4 * t + 3]);
    }
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t big_s1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
      const std::uint32_t ch = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + big_s1 + ch + sha256_round_constants[t] + w[t];
      const std::uint32_t big_s0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
      const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const std::uint32_t t2 = big_s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define UNTOLD_DETAIL_SHA_X86 1
// The same on the x86 SHA extensions (SHA-NI), written with the compilers'
// builtins and generic vector shuffles instead of <immintrin.h>, which would
// add tens of thousands of preprocessed lines to every includer. Two rounds
// per sha256rnds2, the schedule by sha256msg1/msg2 (Intel's "Intel SHA
// Extensions", 2013). The state lives as ABEF / CDGH lane pairs.
typedef int sha256_v4si __attribute__((vector_size(16)));
typedef char sha256_v16qi __attribute__((vector_size(16)));

__attribute__((target("sha,ssse3,sse4.1"))) inline void sha256_compress_x86(std::array<std::uint32_t, 8>& state,
                                                                           const std::byte* blocks,
                                                                           std::size_t count) noexcept {
  sha256_v4si dcba, hgfe;
  std::memcpy(&dcba, state.data(), 16);
  std::memcpy(&hgfe, state.data() + 4, 16);
  const sha256_v4si badc = __builtin_shufflevector(dcba, dcba, 1, 0, 3, 2);
  const sha256_v4si efgh = __builtin_shufflevector(hgfe, hgfe, 3, 2, 1, 0);
  sha256_v4si abef = __builtin_shufflevector(efgh, badc, 2, 3, 4, 5);
  sha256_v4si cdgh = __builtin_shufflevector(efgh, badc, 0, 1, 6, 7);
  for (; count != 0; --count, blocks += sha256_block_size) {
    const sha256_v4si abef_before = abef, cdgh_before = cdgh;
    sha256_v4si w[4];  // the last four groups of four schedule words, big-endian loaded
    for (int i = 0; i < 4; ++i) {
      sha256_v16qi raw;
      std::memcpy(&raw, blocks + 16 * i, 16);
      raw = __builtin_shufflevector(raw, raw, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
      std::memcpy(&w[i], &raw, 16);
    }
    for (int group = 0; group < 16; ++group) {
      sha256_v4si& words = w[group & 3];
      if (group >= 4) {  // W[t..t+3] from W[t-16..t-1], kept in w[] by group modulo 4
        const sha256_v4si& w16 = words;               // W[t-16..t-13]
        const sha256_v4si& w12 = w[(group + 1) & 3];  // W[t-12..t-9]
        const sha256_v4si& w8 = w[(group + 2) & 3];   // W[t-8..t-5]
        const sha256_v4si& w4 = w[(group + 3) & 3];   // W[t-4..t-1]
        const sha256_v4si w7 = __builtin_shufflevector(w8, w4, 1, 2, 3, 4);  // W[t-7..t-4]
        words = __builtin_ia32_sha256msg2(__builtin_ia32_sha256msg1(w16, w12) + w7, w4);
      }
      sha256_v4si k;
      std::memcpy(&k, sha256_round_constants.data() + 4 * group, 16);
      const sha256_v4si wk = words + k;
      cdgh = __builtin_ia32_sha256rnds2(cdgh, abef, wk);
      abef = __builtin_ia32_sha256rnds2(abef, cdgh, __builtin_shufflevector(wk, wk, 2, 3, 0, 0));
    }
    abef += abef_before;
    cdgh += cdgh_before;
  }
  const sha256_v4si feba = __builtin_shufflevector(abef, abef, 3, 2, 1, 0);
  const sha256_v4si dchg = __builtin_shufflevector(cdgh, cdgh, 1, 0, 3, 2);
  dcba = __builtin_shufflevector(feba, dchg, 0, 1, 6, 7);
  hgfe = __builtin_shufflevector(feba, dchg, 2, 3, 4, 5);
  std::memcpy(state.data(), &dcba, 16);
  std::memcpy(state.data() + 4, &hgfe, 16);
}

// Four rounds of one message at schedule group `group`: the body of
// sha256_compress_x86's loop, for the interleaved version below.
__attribute__((target("sha,ssse3,sse4.1"), always_inline)) inline void sha256_x86_group(
    int group, sha256_v4si (&w)[4], sha256_v4si& abef, sha256_v4si& cdgh, sha256_v4si k) noexcept {
  sha256_v4si& words = w[group & 3];
  if (group >= 4) {
    const sha256_v4si w7 = __builtin_shufflevector(w[(group + 2) & 3], w[(group + 3) & 3], 1, 2, 3, 4);
    words = __builtin_ia32_sha256msg2(__builtin_ia32_sha256msg1(words, w[(group + 1) & 3]) + w7, w[(group + 3) & 3]);
  }
  const sha256_v4si wk = words + k;
  cdgh = __builtin_ia32_sha256rnds2(cdgh, abef, wk);
  abef = __builtin_ia32_sha256rnds2(abef, cdgh, __builtin_shufflevector(wk, wk, 2, 3, 0, 0));
}

__attribute__((target("sha,ssse3,sse4.1"), always_inline)) inline void sha256_x86_load(const std::array<std::uint32_t, 8>& state,
                                                                                      sha256_v4si& abef,
                                                                                      sha256_v4si& cdgh) noexcept {
  sha256_v4si dcba, hgfe;
  std::memcpy(&dcba, state.data(), 16);
  std::memcpy(&hgfe, state.data() + 4, 16);
  const sha256_v4si badc = __builtin_shufflevector(dcba, dcba, 1, 0, 3, 2);
  const sha256_v4si efgh = __builtin_shufflevector(hgfe, hgfe, 3, 2, 1, 0);
  abef = __builtin_shufflevector(efgh, badc, 2, 3, 4, 5);
  cdgh = __builtin_shufflevector(efgh, badc, 0, 1, 6, 7);
}

__attribute__((target("sha,ssse3,sse4.1"), always_inline)) inline void sha256_x86_store(std::array<std::uint32_t, 8>& state,
                                                                                       sha256_v4si abef,
                                                                                       sha256_v4si cdgh) noexcept {
  const sha256_v4si feba = __builtin_shufflevector(abef, abef, 3, 2, 1, 0);
  const sha256_v4si dchg = __builtin_shufflevector(cdgh, cdgh, 1, 0, 3, 2);
  const sha256_v4si dcba = __builtin_shufflevector(feba, dchg, 0, 1, 6, 7);
  const sha256_v4si hgfe = __builtin_shufflevector(feba, dchg, 2, 3, 4, 5);
  std::memcpy(state.data(), &dcba, 16);
  std::memcpy(state.data() + 4, &hgfe, 16);
}

__attribute__((target("sha,ssse3,sse4.1"), always_inline)) inline void sha256_x86_message(const std::byte* block,
                                                                                         sha256_v4si (&w)[4]) noexcept {
  for (int i = 0; i < 4; ++i) {
    sha256_v16qi raw;
    std::memcpy(&raw, block + 16 * i, 16);
    raw = __builtin_shufflevector(raw, raw, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    std::memcpy(&w[i], &raw, 16);
  }
}

// Two messages' blocks at once, `count` of each: sha256_compress_x86 with the
// two hash chains interleaved. One chain waits on every sha256rnds2 it
// issues; two keep the unit busy, so this hashes more bytes per second than
// two calls one after the other (block digests: equal-sized blocks,
// integrity.hpp). Each stream in variables of its own, the rounds unrolled,
// so that the compiler keeps both states and schedules in registers.
__attribute__((target("sha,ssse3,sse4.1"))) inline void sha256_compress_x86_x2(
    std::array<std::uint32_t, 8>& state0, const std::byte* blocks0, std::array<std::uint32_t, 8>& state1,
    const std::byte* blocks1, std::size_t count) noexcept {
  sha256_v4si abef0, cdgh0, abef1, cdgh1;
  sha256_x86_load(state0, abef0, cdgh0);
  sha256_x86_load(state1, abef1, cdgh1);
  for (; count != 0; --count, blocks0 += sha256_block_size, blocks1 += sha256_block_size) {
    const sha256_v4si abef0_before = abef0, cdgh0_before = cdgh0, abef1_before = abef1, cdgh1_before = cdgh1;
    sha256_v4si w0[4], w1[4];
    sha256_x86_message(blocks0, w0);
    sha256_x86_message(blocks1, w1);
#pragma GCC unroll 16
    for (int group = 0; group < 16; ++group) {
      sha256_v4si k;
      std::memcpy(&k, sha256_round_constants.data() + 4 * group, 16);
      sha256_x86_group(group, w0, abef0, cdgh0, k);
      sha256_x86_group(group, w1, abef1, cdgh1, k);
    }
    abef0 += abef0_before, cdgh0 += cdgh0_before;
    abef1 += abef1_before, cdgh1 += cdgh1_before;
  }
  sha256_x86_store(state0, abef0, cdgh0);
  sha256_x86_store(state1, abef1, cdgh1);
}

// Whether the CPU has the SHA extensions and the SSSE3 / SSE4.1 shuffles
// sha256_compress_x86 uses (CPUID leaf 1 ECX bits 9 and 19, leaf 7 EBX bit 29).
[[nodiscard]] inline bool sha256_cpu_has_extensions() noexcept {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0u), "c"(0u));
    if (eax < 7) return false;
    const unsigned max_leaf = eax;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1u), "c"(0u));
    const bool shuffles = (ecx >> 9 & 1u) != 0 && (ecx >> 19 & 1u) != 0;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7u), "c"(0u));
    return max_leaf >= 7 && shuffles && (ebx >> 29 & 1u) != 0;
  }();
  return has;
}
#else
#define UNTOLD_DETAIL_SHA_X86 0
[[nodiscard]] inline bool sha256_cpu_has_extensions() noexcept { return false; }
#endif

/// FIPS 180-4 SHA-256, incremental, with its state exposed as a
/// sha256_midstate. `Accelerated`: blocks go through the CPU's SHA
/// extensions when it has them. Safe on untrusted input (any bytes, any
/// length below 2^61 bytes).
template <bool Accelerated>
class basic_sha256 {
 public:
  basic_sha256() noexcept { reset(); }

  /// Continues a message from `m`: the next byte hashed is byte m.length of
  /// the message. Precondition: m.length is a multiple of 64.
  explicit basic_sha256(const sha256_midstate& m) noexcept : state_(m.words), total_bytes_(m.length) {}

  /// Discards everything hashed so far.
  void reset() noexcept {
    state_ = sha256_initial_state;
    buffered_ = 0;
    total_bytes_ = 0;
  }

  /// Appends `data` to the message.
  void update(byte_span data) noexcept {
    if (data.empty()) return;  // also keeps a null data() away from memcpy
    const std::byte* p = data.data();
    std::size_t n = data.size();
    total_bytes_ += n;
    if (buffered_ != 0) {
      const std::size_t take = n < sha256_block_size - buffered_ ? n : sha256_block_size - buffered_;
      std::memcpy(buffer_.data() + buffered_, p, take);
      buffered_ += take;
      p += take;
      n -= take;
      if (buffered_ < sha256_block_size) return;
      compress(buffer_.data(), 1);
      buffered_ = 0;
    }
    // Whole blocks straight from the input, no copy.
    compress(p, n / sha256_block_size);
    p += n / sha256_block_size * sha256_block_size;
    n %= sha256_block_size;
    if (n != 0) std::memcpy(buffer_.data(), p, n);
    buffered_ = n;
  }

  /// Bytes of the message so far.
  [[nodiscard]] std::uint64_t size() const noexcept { return total_bytes_; }

  /// The state after the message's whole 64-byte blocks so far (the last
  /// size() % 64 bytes are not in it: a resumed hasher must be given them again).
  [[nodiscard]] sha256_midstate midstate() const noexcept { return {state_, total_bytes_ - buffered_}; }

  /// The digest of everything since construction or the last finish()/reset();
  /// the object then starts a new, empty message.
  [[nodiscard]] sha256_digest finish() noexcept {
    // Padding (5.1.1): 0x80, zeros up to 56 mod 64, then the bit length as a
    // big-endian 64-bit value.
    const std::uint64_t bit_length = total_bytes_ * 8;
    buffer_[buffered_++] = std::byte{0x80};
    if (buffered_ > sha256_block_size - 8) {
      std::memset(buffer_.data() + buffered_, 0, sha256_block_size - buffered_);
      compress(buffer_.data(), 1);
      buffered_ = 0;
    }
    std::memset(buffer_.data() + buffered_, 0, sha256_block_size - 8 - buffered_);
    for (std::size_t i = 0; i < 8; ++i)
      buffer_[sha256_block_size - 1 - i] = static_cast<std::byte>((bit_length >> (8 * i)) & 0xFFu);
    compress(buffer_.data(), 1);

    sha256_digest out{};
    for (std::size_t i = 0; i < 8; ++i) {
      out[4 * i + 0] = static_cast<std::uint8_t>(state_[i] >> 24);
      out[4 * i + 1] = static_cast<std::uint8_t>(state_[i] >> 16);
      out[4 * i + 2] = static_cast<std::uint8_t>(state_[i] >> 8);
      out[4 * i + 3] = static_cast<std::uint8_t>(state_[i]);
    }
    reset();
    return out;
  }

 private:
  void compress(const std::byte* blocks, std::size_t count) noexcept {
    if (count == 0) return;
#if UNTOLD_DETAIL_SHA_X86
    if (Accelerated && sha256_cpu_has_extensions()) return sha256_compress_x86(state_, blocks, count);
#endif
    sha256_compress_generic(state_, blocks, count);
  }

  std::array<std::uint32_t, 8> state_{};
  std::array<std::byte, sha256_block_size> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace detail

/// SHA-256 written from FIPS 180-4 (section 6.2), with no dependencies.
/// Incremental: update() any number of times, then finish(); midstate() and
/// the sha256_midstate constructor save and resume a message. Slower than the
/// OpenSSL path; used when OpenSSL is absent and as a cross-check in tests.
/// Safe on untrusted input (any bytes, any length below 2^61 bytes).
using sha256_portable = detail::basic_sha256<false>;

/// sha256_portable on the CPU's SHA extensions when it has them (x86 SHA-NI;
/// as fast as OpenSSL there), else the same plain code. For a message whose
/// midstate() must be known: OpenSSL's EVP interface does not expose it. The
/// writer hashes the content through it when it binds the integrity chunk.
/// Safe on untrusted input.
using sha256_resumable = detail::basic_sha256<true>;

/// One-shot portable SHA-256 of `data`. Safe on untrusted input.
[[nodiscard]] inline sha256_digest sha256_portable_of(byte_span data) noexcept {
  sha256_portable h;
  h.update(data);
  return h.finish();
}

/// Incremental SHA-256: OpenSSL EVP when available, else sha256_portable.
/// Errors inside OpenSSL (context allocation, init, update) are remembered
/// and reported by finish() as errc::encode_failed; nothing throws.
/// Move-only; a moved-from object may only be assigned to or destroyed.
/// Not thread-safe.
/// Safe on untrusted input.
class sha256 {
 public:
  sha256() noexcept {
#if UNTOLD_DETAIL_OPENSSL
    ctx_ = EVP_MD_CTX_new();
    ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_, algorithm(), nullptr) == 1;
#endif
  }
  sha256(sha256&& other) noexcept { swap(other); }
  sha256& operator=(sha256&& other) noexcept {
    if (this != &other) {
      sha256 tmp(static_cast<sha256&&>(other));
      swap(tmp);
    }
    return *this;
  }
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  ~sha256() {
#if UNTOLD_DETAIL_OPENSSL
    EVP_MD_CTX_free(ctx_);  // accepts null
#endif
  }

  /// Appends `data` to the message.
  void update(byte_span data) noexcept {
    if (!ok_ || data.empty()) return;
#if UNTOLD_DETAIL_OPENSSL
    ok_ = EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1;
#else
    portable_.update(data);
#endif
  }

  /// The digest of everything since construction or the last finish(); the
  /// object then starts a new, empty message. Fails with encode_failed when
  /// OpenSSL failed at any point (the object stays unusable afterwards).
  [[nodiscard]] result<sha256_digest> finish() noexcept {
    if (!ok_) return make_error(errc::encode_failed);
#if UNTOLD_DETAIL_OPENSSL
    sha256_digest out{};
    unsigned int length = 0;
    ok_ = EVP_DigestFinal_ex(ctx_, out.data(), &length) == 1 && length == out.size();
    if (!ok_) return make_error(errc::encode_failed);
    // Restart for the next message; a failure shows at the next finish().
    ok_ = EVP_DigestInit_ex(ctx_, algorithm(), nullptr) == 1;
    return out;
#else
    return portable_.finish();
#endif
  }

 private:
  void swap(sha256& other) noexcept {
    std::swap(ok_, other.ok_);
#if UNTOLD_DETAIL_OPENSSL
    std::swap(ctx_, other.ctx_);
#else
    std::swap(portable_, other.portable_);
#endif
  }

#if UNTOLD_DETAIL_OPENSSL
  // With EVP_sha256(), OpenSSL 3 looks the implementation up again on every
  // init (a global lock and string compares: most of the time of hashing a
  // small block). Fetched once, it is reused by every digest.
  static const EVP_MD* algorithm() noexcept {
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
    static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched != nullptr) return fetched;
#endif
    return EVP_sha256();
  }

  EVP_MD_CTX* ctx_ = nullptr;
  bool ok_ = false;
#else
  sha256_portable portable_{};
  bool ok_ = true;
#endif
};

/// One-shot SHA-256 of `data` (OpenSSL when available). Safe on untrusted
/// input. Fails only with encode_failed when OpenSSL fails.
[[nodiscard]] inline result<sha256_digest> sha256_of(byte_span data) noexcept {
  sha256 h;
  h.update(data);
  return h.finish();
}

/// The SHA-256 digests of two messages, hashed together: on the CPU's SHA
/// extensions the two computations interleave over the 64-byte blocks both
/// messages have (nearly twice the throughput of one after the other), and
/// the rest of the longer one continues alone; elsewhere each goes through
/// `sha256`. Fails only with encode_failed when OpenSSL fails. Safe on
/// untrusted input.
[[nodiscard]] inline result<std::array<sha256_digest, 2>> sha256_pair(byte_span first, byte_span second) noexcept {
#if UNTOLD_DETAIL_SHA_X86
  if (detail::sha256_cpu_has_extensions()) {
    const std::size_t whole = (first.size() < second.size() ? first.size() : second.size()) / detail::sha256_block_size;
    sha256_midstate m0{detail::sha256_initial_state, whole * detail::sha256_block_size}, m1 = m0;
    detail::sha256_compress_x86_x2(m0.words, first.data(), m1.words, second.data(), whole);
    sha256_resumable h0(m0), h1(m1);  // the last partial block and the padding
    h0.update(first.subspan(static_cast<std::size_t>(m0.length)));
    h1.update(second.subspan(static_cast<std::size_t>(m1.length)));
    return std::array<sha256_digest, 2>{h0.finish(), h1.finish()};
  }
#endif
  sha256 h;
  h.update(first);
  auto d0 = h.finish();
  if (!d0) return d0.error();
  h.update(second);
  auto d1 = h.finish();
  if (!d1) return d1.error();
  return std::array<sha256_digest, 2>{*d0, *d1};
}

}  // namespace untold
