// web/compat.hpp - force-included (-include) into every translation unit of
// the web build only (scripts/build-web.sh), never into the library.
//
// Debian's Emscripten (3.1.6) ships a libc++ that predates five C++17/20
// library features the library and the tool's inspection code use:
// std::bit_cast, std::compare_three_way, std::make_unique_for_overwrite and
// the floating-point std::to_chars (shortest round trip) and std::from_chars
// (here strtof/strtod on a terminated copy, refusing what from_chars
// refuses: leading space or '+', hexadecimal). The compiler has
// what the first three need (__builtin_bit_cast, operator<=>,
// default-initialising new); to_chars is the shortest "%.*g" that reads back
// as the same value (the same digits, so the same number once parsed; the
// notation may differ, e.g. 1e-04 for 0.0001). Each is
// defined here only when the standard library does not announce it (its
// feature-test macro), and this file costs nothing once the libc++ has them.
#pragma once

#include <version>

#if !defined(__cpp_lib_bit_cast)
#include <bit>
#include <type_traits>
namespace std {
template <class To, class From>
  requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
[[nodiscard]] constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif

#if !defined(__cpp_lib_three_way_comparison)
#include <compare>
#include <utility>
namespace std {
struct compare_three_way {
  template <class T, class U>
  constexpr auto operator()(T&& t, U&& u) const noexcept(noexcept(std::forward<T>(t) <=> std::forward<U>(u))) {
    return std::forward<T>(t) <=> std::forward<U>(u);
  }
  using is_transparent = void;
};
}  // namespace std
#endif

#if !defined(__cpp_lib_smart_ptr_for_overwrite)
#include <cstddef>
#include <memory>
#include <type_traits>
namespace std {
template <class T>
  requires(!is_array_v<T>)
[[nodiscard]] unique_ptr<T> make_unique_for_overwrite() {
  return unique_ptr<T>(new T);
}
template <class T>
  requires(is_unbounded_array_v<T>)
[[nodiscard]] unique_ptr<T> make_unique_for_overwrite(size_t n) {
  return unique_ptr<T>(new remove_extent_t<T>[n]);
}
}  // namespace std
#endif

#if !defined(__cpp_lib_to_chars)
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
namespace std {
namespace untold_web_compat {
template <class F, class Parse>
to_chars_result shortest(char* first, char* last, F value, int max_digits, Parse parse) {
  char buf[64];
  int n = 0;
  for (int digits = 1; digits <= max_digits; ++digits) {
    n = std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(value));
    if (parse(buf) == value) break;
  }
  if (n < 0 || n > last - first) return {last, errc::value_too_large};
  for (int i = 0; i < n; ++i) first[i] = buf[i];
  return {first + n, errc{}};
}
template <class F, class Parse>
from_chars_result parse(const char* first, const char* last, F& value, Parse parse) {
  char buf[128];
  const std::ptrdiff_t n = last - first;
  if (n <= 0 || n >= static_cast<std::ptrdiff_t>(sizeof buf) || *first == '+' || *first == ' ' ||
      (*first >= '\t' && *first <= '\r'))  // strtod skips space and takes '+'; from_chars does not
    return {first, errc::invalid_argument};
  for (std::ptrdiff_t i = 0; i < n; ++i) buf[i] = first[i];
  buf[n] = '\0';
  const std::ptrdiff_t sign = buf[0] == '-' ? 1 : 0;
  if (buf[sign] == '0' && (buf[sign + 1] == 'x' || buf[sign + 1] == 'X')) {  // no hex: the number is the "0"
    value = sign != 0 ? -F{0} : F{0};
    return {first + sign + 1, errc{}};
  }
  char* end = nullptr;
  errno = 0;
  const F v = parse(buf, &end);
  if (end == buf) return {first, errc::invalid_argument};
  if (errno == ERANGE && (v == 0 || std::isinf(v))) return {first + (end - buf), errc::result_out_of_range};
  value = v;
  return {first + (end - buf), errc{}};
}
}  // namespace untold_web_compat
inline from_chars_result from_chars(const char* first, const char* last, float& value) {
  return untold_web_compat::parse(first, last, value, [](const char* s, char** e) { return std::strtof(s, e); });
}
inline from_chars_result from_chars(const char* first, const char* last, double& value) {
  return untold_web_compat::parse(first, last, value, [](const char* s, char** e) { return std::strtod(s, e); });
}
inline to_chars_result to_chars(char* first, char* last, float value) {
  return untold_web_compat::shortest(first, last, value, 9, [](const char* s) { return std::strtof(s, nullptr); });
}
inline to_chars_result to_chars(char* first, char* last, double value) {
  return untold_web_compat::shortest(first, last, value, 17, [](const char* s) { return std::strtod(s, nullptr); });
}
}  // namespace std
#endif
