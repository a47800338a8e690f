// untold/view.hpp - zero-copy views over record tables and the string table.
//
// A record_view<R> is a span of encoded records that decodes one record on
// access; it never copies the table. An index_view does the same for index
// bytes (INDEX_DATA, EDGE_INDEX_DATA) of either index type. A string_table
// hands out string_views into the table bytes.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>  // also the iterator tags: <iterator> would add 12,000 lines per translation unit
#include <string_view>

#include "bytes.hpp"
#include "format.hpp"
#include "records.hpp"

namespace untold {

/// A random-access iterator over any view whose operator[](i) decodes element
/// i by value (record_view, index_view, ...). Dereferencing yields a value.
template <class View, class Value>
class decoding_iterator {
 public:
  using iterator_concept = std::random_access_iterator_tag;
  using iterator_category = std::input_iterator_tag;  // operator* yields a value
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using reference = Value;

  decoding_iterator() = default;
  decoding_iterator(const View* view, std::size_t index) noexcept : view_(view), index_(index) {}
  Value operator*() const noexcept { return (*view_)[index_]; }
  Value operator[](difference_type n) const noexcept { return (*view_)[index_ + static_cast<std::size_t>(n)]; }
  decoding_iterator& operator++() noexcept { ++index_; return *this; }
  decoding_iterator operator++(int) noexcept { auto copy = *this; ++index_; return copy; }
  decoding_iterator& operator--() noexcept { --index_; return *this; }
  decoding_iterator operator--(int) noexcept { auto copy = *this; --index_; return copy; }
  decoding_iterator& operator+=(difference_type n) noexcept { index_ += static_cast<std::size_t>(n); return *this; }
  decoding_iterator& operator-=(difference_type n) noexcept { index_ -= static_cast<std::size_t>(n); return *this; }
  friend decoding_iterator operator+(decoding_iterator it, difference_type n) noexcept { return it += n; }
  friend decoding_iterator operator+(difference_type n, decoding_iterator it) noexcept { return it += n; }
  friend decoding_iterator operator-(decoding_iterator it, difference_type n) noexcept { return it -= n; }
  friend difference_type operator-(const decoding_iterator& a, const decoding_iterator& b) noexcept {
    return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
  }
  friend bool operator==(const decoding_iterator& a, const decoding_iterator& b) noexcept {
    return a.index_ == b.index_;
  }
  friend auto operator<=>(const decoding_iterator& a, const decoding_iterator& b) noexcept {
    return a.index_ <=> b.index_;
  }

 private:
  const View* view_ = nullptr;
  std::size_t index_ = 0;
};

template <class R>
class record_view {
 public:
  using iterator = decoding_iterator<record_view, R>;

  record_view() = default;

  /// A view over `table`, which must hold a whole number of records of this
  /// format version; nullopt otherwise. Safe on untrusted input.
  [[nodiscard]] static std::optional<record_view> make(byte_span table,
                                                       std::uint32_t format_version = max_format_version) noexcept {
    if (!holds_whole_records(table, format_version)) return std::nullopt;
    return record_view(table, format_version);
  }
  /// make(table, format_version), or an empty view where make gives nullopt.
  /// (The library's own accessors use this: it spares every translation unit
  /// a std::optional<record_view<R>> per record type.) Safe on untrusted input.
  [[nodiscard]] static record_view make_or_empty(byte_span table,
                                                 std::uint32_t format_version = max_format_version) noexcept {
    return holds_whole_records(table, format_version) ? record_view(table, format_version) : record_view{};
  }

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size() / codec<R>::size(format_version_); }
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] std::size_t stride() const noexcept { return codec<R>::size(format_version_); }
  [[nodiscard]] byte_span bytes() const noexcept { return bytes_; }

  /// Record `index`. Precondition: index < size().
  [[nodiscard]] R operator[](std::size_t index) const noexcept {
    const std::size_t stride = codec<R>::size(format_version_);
    return codec<R>::decode(bytes_.subspan(index * stride, stride), format_version_);
  }
  /// Record `index`, or nullopt when out of range.
  [[nodiscard]] std::optional<R> at(std::size_t index) const noexcept {
    if (index >= size()) return std::nullopt;
    return (*this)[index];
  }

  [[nodiscard]] iterator begin() const noexcept { return iterator(this, 0); }
  [[nodiscard]] iterator end() const noexcept { return iterator(this, size()); }

 private:
  record_view(byte_span bytes, std::uint32_t format_version) noexcept
      : bytes_(bytes), format_version_(format_version) {}
  static bool holds_whole_records(byte_span table, std::uint32_t format_version) noexcept {
    return table.size() % codec<R>::size(format_version) == 0;
  }
  byte_span bytes_{};
  std::uint32_t format_version_ = max_format_version;
};

/// Indices of one index type (uint16 or uint32, little-endian) over index
/// bytes such as a mesh's INDEX_DATA or EDGE_INDEX_DATA range; each element
/// reads as a u32. Zero-copy, any alignment.
class index_view {
 public:
  using iterator = decoding_iterator<index_view, std::uint32_t>;

  index_view() = default;

  /// A view over `bytes` holding indices of `type` (1 = uint16, 2 = uint32);
  /// nullopt for an unknown type or a byte count that is not a whole number of
  /// indices. Safe on untrusted input.
  [[nodiscard]] static std::optional<index_view> make(byte_span bytes, std::uint32_t type) noexcept {
    const std::uint32_t size = index_size(type);
    if (size == 0 || bytes.size() % size != 0) return std::nullopt;
    return index_view(bytes, size);
  }
  /// make(bytes, type), or an empty view where make gives nullopt. Safe on
  /// untrusted input.
  [[nodiscard]] static index_view make_or_empty(byte_span bytes, std::uint32_t type) noexcept {
    const std::uint32_t size = index_size(type);
    return size != 0 && bytes.size() % size == 0 ? index_view(bytes, size) : index_view{};
  }

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size() / index_bytes_; }
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] byte_span bytes() const noexcept { return bytes_; }
  /// Bytes per index: 2 or 4.
  [[nodiscard]] std::uint32_t index_bytes() const noexcept { return index_bytes_; }

  /// Index `i`. Precondition: i < size().
  [[nodiscard]] std::uint32_t operator[](std::size_t i) const noexcept {
    return index_bytes_ == 2 ? load_le_unchecked<std::uint16_t>(bytes_.data() + 2 * i)
                             : load_le_unchecked<std::uint32_t>(bytes_.data() + 4 * i);
  }
  /// Index `i`, or nullopt when out of range.
  [[nodiscard]] std::optional<std::uint32_t> at(std::size_t i) const noexcept {
    if (i >= size()) return std::nullopt;
    return (*this)[i];
  }

  [[nodiscard]] iterator begin() const noexcept { return iterator(this, 0); }
  [[nodiscard]] iterator end() const noexcept { return iterator(this, size()); }

 private:
  index_view(byte_span bytes, std::uint32_t index_bytes) noexcept : bytes_(bytes), index_bytes_(index_bytes) {}
  byte_span bytes_{};
  std::uint32_t index_bytes_ = 2;
};

/// The string table: NUL-terminated UTF-8 strings addressed by byte offset.
class string_table {
 public:
  string_table() = default;
  explicit string_table(byte_span bytes) noexcept : bytes_(bytes) {}

  /// The string at `offset` (without its NUL), or nullopt when offset is NONE,
  /// outside the table, or has no NUL before the end. Does not check UTF-8
  /// (the reader's R-STRING validation does). Safe on untrusted input.
  [[nodiscard]] std::optional<std::string_view> at(std::uint32_t offset) const noexcept {
    if (offset == none || offset >= bytes_.size()) return std::nullopt;
    const auto* begin = reinterpret_cast<const char*>(bytes_.data()) + offset;
    const std::size_t remaining = bytes_.size() - offset;
    const void* nul = std::memchr(begin, 0, remaining);
    if (nul == nullptr) return std::nullopt;
    return std::string_view(begin, static_cast<std::size_t>(static_cast<const char*>(nul) - begin));
  }

  /// The string at `offset`, or "" for NONE and anything `at` rejects.
  [[nodiscard]] std::string_view operator[](std::uint32_t offset) const noexcept { return at(offset).value_or(""); }

  [[nodiscard]] byte_span bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_.size(); }

 private:
  byte_span bytes_{};
};

}  // namespace untold
