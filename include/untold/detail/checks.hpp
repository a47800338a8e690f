// untold/detail/checks.hpp - the value checks every format shares.
//
// One definition each, used by every folder (core, urho3d/, udm/, assetc/,
// convert/, the writer and tools/), so the families cannot drift apart:
// - is_finite / is_nan test the float's bits: -ffast-math (which lets the
//   compiler assume no NaN or Inf and fold std::isfinite to true) cannot
//   remove them. tests/fast_math builds a translation unit with -ffast-math
//   to keep that true.
// - is_safe_relative_path is the one path rule for names taken from files
//   (package entries, runtime paths): what an extractor or engine may join to
//   a root directory.
// Safe on any input; no allocation; only <bit>, <cstdint>, <string_view>.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace untold::detail {

[[nodiscard]] constexpr bool is_finite(float f) noexcept {
  return (std::bit_cast<std::uint32_t>(f) & 0x7F800000u) != 0x7F800000u;
}
[[nodiscard]] constexpr bool is_finite(double d) noexcept {
  return (std::bit_cast<std::uint64_t>(d) & 0x7FF0000000000000u) != 0x7FF0000000000000u;
}
[[nodiscard]] constexpr bool is_nan(float f) noexcept {
  return (std::bit_cast<std::uint32_t>(f) & 0x7FFFFFFFu) > 0x7F800000u;
}
/// Every float of `values` is finite.
[[nodiscard]] constexpr bool all_finite(std::span<const float> values) noexcept {
  for (const float f : values)
    if (!is_finite(f)) return false;
  return true;
}

/// True when `path` may be joined to a root directory without leaving it or
/// naming something else: not empty; relative ('/' not first); no drive or
/// stream prefix (':' anywhere, so "C:x" and "a:b" are out); no '\\' (a
/// separator on Windows); no NUL or other control byte (which truncate or
/// forge names in C APIs and logs); no empty, "." or ".." component
/// ('/'-separated). The union of what the Urho3D package reader and the
/// assetc runtime-path rule each used to check.
[[nodiscard]] constexpr bool is_safe_relative_path(std::string_view path) noexcept {
  if (path.empty()) return false;
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F || c == '\\' || c == ':') return false;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

}  // namespace untold::detail
