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
/// SDBM over `bytes`, continuing from `hash` (0 for a fresh hash).
/// The step is h' = h * 65599 + c (mod 2^32), so eight steps are
/// h * 65599^8 + sum c_i * 65599^(7-i): one dependent multiply per 8 bytes
/// instead of per byte (about 4x faster), same result.
[[nodiscard]] inline std::uint32_t sdbm(byte_span bytes, std::uint32_t hash = 0) noexcept {
  constexpr std::uint32_t p1 = 65599u;
  constexpr std::uint32_t p2 = p1 * p1, p3 = p2 * p1, p4 = p3 * p1, p5 = p4 * p1, p6 = p5 * p1, p7 = p6 * p1,
                          p8 = p7 * p1;
  const std::byte* d = bytes.data();
  std::size_t n = bytes.size();
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
