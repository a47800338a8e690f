// untold/cursor.hpp - a bounds-checked sequential reader for the formats that
// are read front to back (Urho3D, UDM, assetc's variable-length records).
//
// Every read checks the remaining bytes first and fails with the format's own
// "truncated" rule; every count read from a file is checked against what the
// remaining bytes could possibly hold (`count`) before anyone allocates for
// it. Errors carry the field name, the byte offset and the offending value.
// Loads are memcpy based: any alignment.
//
// Safe on untrusted input: nothing here reads outside the span it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "bytes.hpp"
#include "error.hpp"

namespace untold {

template <class R>
struct codec;  // records.hpp: include it to read records with record<R>()

/// The rules a cursor reports: running out of bytes, and a count that the
/// remaining bytes cannot hold. Each format passes its own.
struct cursor_rules {
  errc truncated = errc::ok;
  errc count_too_large = errc::ok;
};

class byte_cursor {
 public:
  /// `base` is the offset of bytes[0] in the file, so errors report file
  /// offsets when the cursor reads a sub-range.
  constexpr byte_cursor(byte_span bytes, cursor_rules rules, std::uint64_t base = 0) noexcept
      : bytes_(bytes), rules_(rules), base_(base) {}

  [[nodiscard]] constexpr std::uint64_t offset() const noexcept { return base_ + pos_; }  // in the file
  [[nodiscard]] constexpr std::size_t position() const noexcept { return pos_; }           // in the span
  [[nodiscard]] constexpr std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
  [[nodiscard]] constexpr bool at_end() const noexcept { return pos_ == bytes_.size(); }
  [[nodiscard]] constexpr byte_span rest() const noexcept { return bytes_.subspan(pos_); }
  [[nodiscard]] constexpr const cursor_rules& rules() const noexcept { return rules_; }

  /// An error of `code` at the current offset.
  [[nodiscard]] error fail(errc code, const char* field, std::uint64_t value, bool has_value = true) const noexcept {
    error e = make_error(code).at_field(field).at_offset(offset());
    return has_value ? e.with_value(value) : e;
  }
  /// As fail(), with the bound the value broke.
  [[nodiscard]] error fail_limit(errc code, const char* field, std::uint64_t value, std::uint64_t limit) const noexcept {
    error e = fail(code, field, value);
    e.context.limit = limit;
    e.context.has_limit = true;
    return e;
  }

  /// A little-endian scalar (uint8..uint64, int16/int32, float).
  template <class T>
  [[nodiscard]] result<T> read(const char* field) noexcept {
    if (remaining() < sizeof(T)) return truncated(field, sizeof(T));
    const T v = load_le_unchecked<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  [[nodiscard]] result<std::int8_t> read_i8(const char* field) noexcept {
    auto v = read<std::uint8_t>(field);
    if (!v) return v.error();
    return static_cast<std::int8_t>(*v);
  }
  [[nodiscard]] result<std::int64_t> read_i64(const char* field) noexcept {
    auto v = read<std::uint64_t>(field);
    if (!v) return v.error();
    return static_cast<std::int64_t>(*v);
  }
  [[nodiscard]] result<double> read_f64(const char* field) noexcept {
    auto v = read<std::uint64_t>(field);
    if (!v) return v.error();
    return std::bit_cast<double>(*v);
  }

  /// The next n bytes, as a view into the input.
  [[nodiscard]] result<byte_span> bytes(std::uint64_t n, const char* field) noexcept {
    if (n > remaining()) return truncated(field, n);
    const byte_span s = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }

  /// The next record R, decoded field by field as record_traits<R> lists
  /// it (records.hpp, which the caller includes): the layout is described
  /// once for the reader and the writer (byte_sink::record).
  template <class R>
  [[nodiscard]] result<R> record(const char* field) noexcept {
    auto b = bytes(codec<R>::size(), field);
    if (!b) return b.error();
    return codec<R>::decode(*b);
  }

  /// count x element_size bytes; overflow-safe.
  [[nodiscard]] result<byte_span> array_bytes(std::uint64_t count, std::uint64_t element_size,
                                              const char* field) noexcept {
    const auto size = checked_mul(count, element_size);
    if (!size || *size > remaining()) return fail_limit(rules_.count_too_large, field, count, remaining());
    return bytes(*size, field);
  }

  /// Skips n bytes.
  [[nodiscard]] status skip(std::uint64_t n, const char* field) noexcept {
    auto s = bytes(n, field);
    if (!s) return s.error();
    return {};
  }

  /// A NUL-terminated string; the view excludes the NUL, the cursor moves past
  /// it. A missing NUL is `missing_nul` (or the truncated rule).
  [[nodiscard]] result<std::string_view> cstring(const char* field, errc missing_nul = errc::ok) noexcept {
    const byte_span r = rest();
    const void* nul = r.empty() ? nullptr : std::memchr(r.data(), 0, r.size());
    if (nul == nullptr)
      return fail(missing_nul == errc::ok ? rules_.truncated : missing_nul, field, r.size());
    const std::size_t n = static_cast<std::size_t>(static_cast<const std::byte*>(nul) - r.data());
    const std::string_view s(reinterpret_cast<const char*>(r.data()), n);
    pos_ += n + 1;
    return s;
  }

  /// A string of n bytes (no terminator).
  [[nodiscard]] result<std::string_view> string(std::uint64_t n, const char* field) noexcept {
    auto b = bytes(n, field);
    if (!b) return b.error();
    return std::string_view(reinterpret_cast<const char*>(b->data()), b->size());
  }

  /// Checks a count read from the file before anything is allocated for it:
  /// `count` items of at least `min_element_size` bytes each must fit in the
  /// remaining bytes (count_too_large otherwise), and count <= max_count
  /// (limit_code otherwise, defaulting to count_too_large).
  [[nodiscard]] status check_count(std::uint64_t count, std::uint64_t min_element_size, const char* field,
                                   std::uint64_t max_count = ~std::uint64_t{0},
                                   errc limit_code = errc::ok) const noexcept {
    if (count > max_count)
      return fail_limit(limit_code == errc::ok ? rules_.count_too_large : limit_code, field, count, max_count);
    const auto size = checked_mul(count, min_element_size);
    if (!size || *size > remaining()) return fail_limit(rules_.count_too_large, field, count, remaining());
    return {};
  }

  /// Reads a u32 count and checks it with check_count.
  [[nodiscard]] result<std::uint32_t> count_u32(std::uint64_t min_element_size, const char* field,
                                                std::uint64_t max_count = ~std::uint64_t{0},
                                                errc limit_code = errc::ok) noexcept {
    const std::uint64_t at = offset();
    auto n = read<std::uint32_t>(field);
    if (!n) return n;
    if (auto s = check_count(*n, min_element_size, field, max_count, limit_code); !s) {
      error e = s.error();
      e.context.offset = at;
      return e;
    }
    return n;
  }

  /// A cursor over the next n bytes; this one moves past them.
  [[nodiscard]] result<byte_cursor> sub(std::uint64_t n, const char* field) noexcept {
    const std::uint64_t at = offset();
    auto b = bytes(n, field);
    if (!b) return b.error();
    return byte_cursor(*b, rules_, at);
  }

 private:
  [[nodiscard]] error truncated(const char* field, std::uint64_t wanted) const noexcept {
    return fail_limit(rules_.truncated, field, wanted, remaining());
  }

  byte_span bytes_;
  cursor_rules rules_;
  std::uint64_t base_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace untold
