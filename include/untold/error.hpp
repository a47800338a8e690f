// untold/error.hpp - errors as values.
//
// Every failure the library can report is one `errc` value. Each value knows
// its stable name, the rule id it enforces (`R-...` for .untold, `U3D-...`,
// `UDM-...`, `HM-...` for the foreign formats, or an `E-...` id for failures
// that are not file rules, such as I/O or bad writer input), its format
// family and a one-line message. An `error` adds where it happened: chunk,
// record, field, the offending value (an integer or a float, shown with its
// bits), the limit it broke, the byte offset, a name from the file.
// `result<T>` carries either a value or an error; nothing in the library
// throws.
//
// The rules are data: one table per family in rules/ (core.hpp, urho3d.hpp,
// udm.hpp, assetc.hpp), rows X(family, name, rule id, message). To find the
// code that enforces a rule, grep for its errc name next to the rule id in
// those tables (e.g. R-MESH-MATERIAL -> mesh_material).
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <iosfwd>
#include <new>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "detail/error_enum.hpp"
#include "rules/assetc.hpp"
#include "rules/core.hpp"
#include "rules/udm.hpp"
#include "rules/urho3d.hpp"

namespace untold {

/// Every family's rows, in one enum.
#define UNTOLD_ERROR_TABLE(X) \
  UNTOLD_CORE_RULES(X)        \
  UNTOLD_URHO3D_RULES(X)      \
  UNTOLD_UDM_RULES(X)         \
  UNTOLD_ASSETC_RULES(X)

/// errc, name(errc) ("mesh_material"), rule_id(errc) ("R-MESH-MATERIAL"),
/// message(errc).
UNTOLD_DEFINE_ERROR_ENUM(errc, UNTOLD_ERROR_TABLE)

/// Which format's rules a value enforces: the family column of its row.
enum class format_family : std::uint8_t { untold, urho3d, udm, assetc };

[[nodiscard]] constexpr format_family family(errc e) noexcept {
  switch (e) {
#define UNTOLD_X(fam, n, id, msg) \
  case errc::n:                   \
    return format_family::fam;
    UNTOLD_ERROR_TABLE(UNTOLD_X)
#undef UNTOLD_X
  }
  return format_family::untold;
}

[[nodiscard]] constexpr std::string_view name(format_family f) noexcept {
  switch (f) {
    case format_family::untold: return "untold";
    case format_family::urho3d: return "urho3d";
    case format_family::udm: return "udm";
    case format_family::assetc: return "assetc";
  }
  return "unknown";
}

inline constexpr std::uint32_t no_index = 0xFFFFFFFFu;
inline constexpr std::uint64_t no_offset = ~std::uint64_t{0};

/// Where an error happened and the values needed to act on it. Unknown parts
/// stay at their defaults. Chunk/record are the .untold terms; the foreign
/// formats use record_index for "the n-th item of the structure being read"
/// (vertex buffer, entry, property) and `offset` for the byte position.
struct error_context {
  std::uint32_t chunk_index = no_index;   // row in the chunk table
  std::uint32_t chunk_type = 0;           // that row's chunkType (0 = n/a)
  std::uint32_t record_index = no_index;  // row in the record table / mesh index
  const char* field = nullptr;            // spec field name, e.g. "materialIndex"
  std::uint64_t value = 0;                // the offending value, when one helps
  bool has_value = false;
  bool value_is_float = false;            // value holds a float's 32 bits (shown as a float with its bits)
  std::uint64_t offset = no_offset;       // byte offset in the file, when known
  std::uint64_t limit = 0;                // the bound the value broke, when one helps
  bool has_limit = false;
  /// A name from the file (package entry, bone, property key), truncated to
  /// fit; stored inline so an error never points into the caller's buffer.
  std::array<char, 48> subject{};
};

namespace detail {

/// The length of the well-formed UTF-8 sequence at the start of `s` (1-4),
/// or 0 when it is not one (a stray continuation byte, an overlong form, a
/// surrogate, past U+10FFFF, cut short).
[[nodiscard]] constexpr std::size_t utf8_sequence_length(std::string_view s) noexcept {
  const auto at = [&s](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  const unsigned c = at(0);
  const auto continuation = [&at](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return at(i) >= lo && at(i) <= hi;
  };
  if (c < 0x80) return s.empty() ? 0 : 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const bool second = c == 0xE0 ? continuation(1, 0xA0) : c == 0xED ? continuation(1, 0x80, 0x9F) : continuation(1);
    return second && continuation(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const bool second = c == 0xF0 ? continuation(1, 0x90) : c == 0xF4 ? continuation(1, 0x80, 0x8F) : continuation(1);
    return second && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

/// Appends `text` so that it is one line of valid UTF-8 without control
/// characters: '\\' as \\, \n \t \r as themselves escaped, every other byte
/// of a C0 control, DEL, a C1 control (U+0080..U+009F, which some terminals
/// obey as escape sequences) or of a malformed UTF-8 sequence as \xHH; other
/// characters as they are. What every text output does with a name taken
/// from a file (or a path, which may hold the same bytes).
template <class String>
void append_escaped(String& out, std::string_view text) {
  const auto hex = [&out](unsigned char c) {
    const char h[] = {'\\', 'x', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 0xFu]};
    out.append(std::string_view(h, 4));
  };
  const auto plain_ascii = [](char ch) { return ch >= 0x20 && ch < 0x7F && ch != '\\'; };
  for (std::size_t i = 0; i < text.size();) {
    // A run of printable ASCII other than '\\' (most names): one append.
    std::size_t plain = i;
    while (plain < text.size() && plain_ascii(text[plain])) ++plain;
    if (plain != i) {
      out.append(text.substr(i, plain - i));
      i = plain;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_sequence_length(text.substr(i));
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c < 0x20 || c == 0x7F || n == 0) {
      hex(c);
    } else if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // C1 control
      hex(c), hex(static_cast<unsigned char>(text[i + 1]));
    } else {
      out.append(text.substr(i, n));
    }
    i += n == 0 ? 1 : n;
  }
}

/// Appends a float given by its bits: nan, inf, -inf, or about 7 significant
/// digits (the bits beside it in describe() are exact). No <cstdio>/<charconv>
/// so error.hpp stays light.
template <class String>
void append_float(String& out, std::uint32_t bits) {
  if ((bits & 0x7F800000u) == 0x7F800000u) {
    out.append((bits & 0x007FFFFFu) != 0 ? "nan" : (bits >> 31) != 0 ? "-inf" : "inf");
    return;
  }
  double d = std::bit_cast<float>(bits);
  if ((bits >> 31) != 0) out.push_back('-'), d = -d;
  int exponent = 0;
  if (d != 0.0) {
    while (d >= 10.0) d /= 10.0, ++exponent;
    while (d < 1.0) d *= 10.0, --exponent;
  }
  auto digits = static_cast<std::uint64_t>(d * 1e6 + 0.5);  // 7 significant digits: d.dddddd
  if (digits >= 10000000u) digits /= 10, ++exponent;
  char text[7];
  for (int i = 6; i >= 0; --i) text[i] = static_cast<char>('0' + digits % 10), digits /= 10;
  int last = 6;
  while (last > 0 && text[last] == '0') --last;  // trailing zeros of the fraction
  if (exponent >= -4 && exponent <= 8) {  // plain notation: 0.00012345, 3.25, 12345678
    if (exponent < 0) {
      out.append("0.");
      for (int i = -1; i > exponent; --i) out.push_back('0');
      out.append(std::string_view(text, static_cast<std::size_t>(last + 1)));
      return;
    }
    for (int i = 0; i <= (exponent > last ? exponent : last); ++i) {
      if (i == exponent + 1) out.push_back('.');
      out.push_back(i <= 6 ? text[i] : '0');
    }
    return;
  }
  out.push_back(text[0]);
  if (last > 0) out.push_back('.'), out.append(std::string_view(text + 1, static_cast<std::size_t>(last)));
  out.push_back('e');
  if (exponent < 0) out.push_back('-'), exponent = -exponent;
  char e[4];
  int n = 0;
  do e[n++] = static_cast<char>('0' + exponent % 10), exponent /= 10;
  while (exponent != 0);
  while (n > 0) out.push_back(e[--n]);
}

}  // namespace detail

struct error {
  errc code = errc::ok;
  error_context context{};

  /// Copies `s` (truncated to 47 bytes) into context.subject.
  constexpr error& with_subject(std::string_view s) noexcept {
    const std::size_t n = s.size() < context.subject.size() - 1 ? s.size() : context.subject.size() - 1;
    for (std::size_t i = 0; i < context.subject.size(); ++i) context.subject[i] = i < n ? s[i] : '\0';
    return *this;
  }
  [[nodiscard]] constexpr std::string_view subject() const noexcept { return context.subject.data(); }

  // Named context setters: every family builds its errors with these (a
  // swapped field cannot compile into a wrong message, as positional u64
  // arguments could), e.g.
  //   return make_error(errc::u3d_draw_range).at_field("indexStart").with_value(v).with_limit(n).at_offset(at);
  constexpr error& at_field(const char* field) noexcept { return context.field = field, *this; }
  constexpr error& with_value(std::uint64_t v) noexcept {
    context.value = v, context.has_value = true, context.value_is_float = false;
    return *this;
  }
  /// A float value: kept as its bits, shown as "nan (bits 0xffffffff)".
  constexpr error& with_float(float f) noexcept {
    context.value = std::bit_cast<std::uint32_t>(f), context.has_value = true, context.value_is_float = true;
    return *this;
  }
  constexpr error& with_limit(std::uint64_t limit) noexcept {
    context.limit = limit, context.has_limit = true;
    return *this;
  }
  /// The n-th record/item; indices that do not fit 32 bits read as unknown.
  constexpr error& at_record(std::uint64_t index) noexcept {
    context.record_index = index < no_index ? static_cast<std::uint32_t>(index) : no_index;
    return *this;
  }
  constexpr error& at_offset(std::uint64_t offset) noexcept { return context.offset = offset, *this; }
  constexpr error& at_chunk(std::uint32_t index, std::uint32_t type) noexcept {
    context.chunk_index = index, context.chunk_type = type;
    return *this;
  }
  [[nodiscard]] constexpr format_family family() const noexcept { return untold::family(code); }

  [[nodiscard]] constexpr std::string_view name() const noexcept { return untold::name(code); }
  [[nodiscard]] constexpr std::string_view rule_id() const noexcept { return untold::rule_id(code); }
  [[nodiscard]] constexpr std::string_view message() const noexcept { return untold::message(code); }

  /// "R-MESH-MATERIAL mesh_material: <message> (chunk 2, record 3, field materialIndex, value 7)"
  /// A template so error.hpp needs no <string> (a reader's translation units
  /// stay light): include <string> where you call it.
  template <class String = std::string>
  [[nodiscard]] String describe() const {
    String s;
    s.append(rule_id()).append(" ").append(name()).append(": ").append(message());
    String where;
    auto add = [&where](std::string_view label, std::string_view v) {
      where.append(where.empty() ? "" : ", ").append(label).append(" ").append(v);
    };
    char digits[24];
    const auto number = [&digits](std::uint64_t v) {
      std::size_t n = sizeof(digits);
      do digits[--n] = static_cast<char>('0' + v % 10), v /= 10;
      while (v != 0);
      return std::string_view(digits + n, sizeof(digits) - n);
    };
    if (context.chunk_index != no_index) add("chunk", number(context.chunk_index));
    if (context.chunk_type != 0) add("type", number(context.chunk_type));
    if (context.record_index != no_index) add("record", number(context.record_index));
    if (context.field != nullptr) add("field", context.field);
    if (context.has_value && context.value_is_float) {
      String v;
      detail::append_float(v, static_cast<std::uint32_t>(context.value));
      v.append(" (bits 0x");
      for (int shift = 28; shift >= 0; shift -= 4) v.push_back("0123456789abcdef"[(context.value >> shift) & 0xFu]);
      v.append(")");
      add("value", v);
    } else if (context.has_value) {
      add("value", number(context.value));
    }
    if (context.has_limit) add("limit", number(context.limit));
    if (context.offset != no_offset) add("offset", number(context.offset));
    if (!subject().empty()) {
      // The name comes from the file: control characters are escaped so a
      // hostile name cannot forge lines or terminal sequences in a log.
      where.append(where.empty() ? "" : ", ").append("name '");
      detail::append_escaped(where, subject());
      where.append("'");
    }
    if (!where.empty()) s.append(" (").append(where).append(")");
    return s;
  }
};

/// Builds an error with context fields in spec order.
[[nodiscard]] constexpr error make_error(errc code, error_context ctx = {}) noexcept { return error{code, ctx}; }

/// Either a T or an error of type E. Deliberately small: no exceptions, no
/// RTTI. Accessing the value of a failed result is a precondition violation,
/// trapped by assert() in debug builds.
/// E is any error type whose value-initialised `code` means "no error"
/// (untold::error here, untold::remote::error for the remote layer).
/// The value lives in a union rather than a std::optional<T>: every result<T>
/// type instantiated std::optional's layered bases and traits, about 20 % of
/// the compile time of the reader headers (docs/compile-time.md). Copy and
/// move behave as std::optional's.
template <class T, class E>
class [[nodiscard]] basic_result {
 public:
  basic_result(T value) noexcept(__is_nothrow_constructible(T, T&&)) : has_value_(true) {  // NOLINT
    construct(std::move(value));
  }
  basic_result(E e) noexcept : error_(std::move(e)) {}  // NOLINT

  basic_result(const basic_result& other) noexcept(__is_nothrow_constructible(T, const T&))
    requires __is_constructible(T, const T&)
      : error_(other.error_), has_value_(other.has_value_) {
    if (has_value_) construct(other.value_);
  }
  basic_result(basic_result&& other) noexcept(__is_nothrow_constructible(T, T&&))
    requires __is_constructible(T, T&&)
      : error_(std::move(other.error_)), has_value_(other.has_value_) {
    if (has_value_) construct(std::move(other.value_));
  }
  basic_result& operator=(const basic_result& other)
    requires __is_constructible(T, const T&) && __is_assignable(T&, const T&)
  {
    assign(other.has_value_, other.value_);
    error_ = other.error_;
    return *this;
  }
  basic_result& operator=(basic_result&& other) noexcept(__is_nothrow_constructible(T, T&&) &&
                                                         __is_nothrow_assignable(T&, T&&))
    requires __is_constructible(T, T&&) && __is_assignable(T&, T&&)
  {
    assign(other.has_value_, std::move(other.value_));
    error_ = std::move(other.error_);
    return *this;
  }
  ~basic_result() {
    if (has_value_) value_.~T();
  }

  [[nodiscard]] bool has_value() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& value() & noexcept { return checked(), value_; }
  [[nodiscard]] const T& value() const& noexcept { return checked(), value_; }
  [[nodiscard]] T&& value() && noexcept { return checked(), std::move(value_); }
  T& operator*() & noexcept { return checked(), value_; }
  const T& operator*() const& noexcept { return checked(), value_; }
  T&& operator*() && noexcept { return checked(), std::move(value_); }
  T* operator->() noexcept { return checked(), &value_; }
  const T* operator->() const noexcept { return checked(), &value_; }

  [[nodiscard]] const E& error() const noexcept { return error_; }

 private:
  void checked() const noexcept { assert(has_value_ && "untold: value of a failed result"); }
  template <class U>
  void construct(U&& v) {
    ::new (static_cast<void*>(&value_)) T(std::forward<U>(v));
  }
  // std::optional's assignment: assign value to value, else construct or destroy.
  template <class U>
  void assign(bool other_has_value, U&& v) {
    if (has_value_ && other_has_value) {
      value_ = std::forward<U>(v);
    } else if (other_has_value) {
      construct(std::forward<U>(v));
      has_value_ = true;
    } else if (has_value_) {
      value_.~T();
      has_value_ = false;
    }
  }

  union {
    T value_;
  };
  E error_{};
  bool has_value_ = false;
};

/// Success or an error of type E.
template <class E>
class [[nodiscard]] basic_result<void, E> {
 public:
  basic_result() noexcept = default;
  basic_result(E e) noexcept : error_(std::move(e)) {}  // NOLINT
  [[nodiscard]] bool has_value() const noexcept { return error_.code == decltype(error_.code){}; }
  explicit operator bool() const noexcept { return has_value(); }
  [[nodiscard]] const E& error() const noexcept { return error_; }

 private:
  E error_{};
};

template <class T>
using result = basic_result<T, error>;
using status = result<void>;

}  // namespace untold

/// Propagates the error of a status/result expression.
#define UNTOLD_TRY(expr)                                        \
  do {                                                          \
    if (auto untold_try_status_ = (expr); !untold_try_status_) \
      return untold_try_status_.error();                        \
  } while (false)
