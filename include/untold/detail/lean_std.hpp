// untold/detail/lean_std.hpp - the few <algorithm> and <cmath> functions the
// reader path needs, without those headers.
//
// Why: <algorithm> adds about 12,000 and <cmath> about 10,000 preprocessed
// lines to every translation unit that includes the reader; an engine
// includes it in many (docs/compile-time.md). These are small, exact
// equivalents: the float tests work on the bit pattern (no rounding mode, no
// errno), sqrt and nearbyint map to the compiler builtins that <cmath>'s own
// functions use.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "checks.hpp"  // is_finite, is_nan: the shared bit tests

namespace untold::detail {

[[nodiscard]] constexpr float abs(float f) noexcept {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) & 0x7FFFFFFFu);
}
[[nodiscard]] inline float sqrt(float f) noexcept { return __builtin_sqrtf(f); }
/// Rounds to an integral value in the current rounding mode (nearest-even by default).
[[nodiscard]] inline float nearbyint(float f) noexcept { return __builtin_nearbyintf(f); }

/// Heap sort: O(n log n) worst case, no allocation, not stable (callers that
/// need a deterministic order break ties in `less`).
template <class It, class Less>
void sort(It first, It last, Less less) {
  const std::ptrdiff_t n = last - first;
  const auto sift_down = [&](std::ptrdiff_t root, std::ptrdiff_t end) {
    for (;;) {
      std::ptrdiff_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && less(first[child], first[child + 1])) ++child;
      if (!less(first[root], first[child])) return;
      std::swap(first[root], first[child]);
      root = child;
    }
  };
  for (std::ptrdiff_t i = n / 2 - 1; i >= 0; --i) sift_down(i, n);
  for (std::ptrdiff_t end = n - 1; end > 0; --end) {
    std::swap(first[0], first[end]);
    sift_down(0, end);
  }
}
template <class It>
void sort(It first, It last) {
  detail::sort(first, last, [](const auto& a, const auto& b) { return a < b; });
}

/// The first position in the sorted [first, last) whose element is not < value.
template <class It, class T>
[[nodiscard]] It lower_bound(It first, It last, const T& value) {
  std::ptrdiff_t count = last - first;
  while (count > 0) {
    const std::ptrdiff_t step = count / 2;
    if (first[step] < value) {
      first += step + 1;
      count -= step + 1;
    } else {
      count = step;
    }
  }
  return first;
}

}  // namespace untold::detail
