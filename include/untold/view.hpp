// untold/view.hpp - zero-copy views over record tables and the string table.
//
// A record_view<R> is a span of encoded records that decodes one record on
// access; it never copies the table. A string_table hands out string_views
// into the table bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

#include "bytes.hpp"
#include "records.hpp"

namespace untold {

template <class R>
class record_view {
 public:
  class iterator {
   public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // operator* yields a value
    using value_type = R;
    using difference_type = std::ptrdiff_t;
    using reference = R;

    iterator() = default;
    iterator(const record_view* view, std::size_t index) noexcept : view_(view), index_(index) {}
    R operator*() const noexcept { return (*view_)[index_]; }
    R operator[](difference_type n) const noexcept { return (*view_)[index_ + static_cast<std::size_t>(n)]; }
    iterator& operator++() noexcept { ++index_; return *this; }
    iterator operator++(int) noexcept { auto copy = *this; ++index_; return copy; }
    iterator& operator--() noexcept { --index_; return *this; }
    iterator operator--(int) noexcept { auto copy = *this; --index_; return copy; }
    iterator& operator+=(difference_type n) noexcept { index_ += static_cast<std::size_t>(n); return *this; }
    iterator& operator-=(difference_type n) noexcept { index_ -= static_cast<std::size_t>(n); return *this; }
    friend iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
    friend iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
    friend iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.index_ == b.index_; }
    friend auto operator<=>(const iterator& a, const iterator& b) noexcept { return a.index_ <=> b.index_; }

   private:
    const record_view* view_ = nullptr;
    std::size_t index_ = 0;
  };

  record_view() = default;

  /// A view over `table`, which must hold a whole number of records of this
  /// format version; nullopt otherwise. Safe on untrusted input.
  [[nodiscard]] static std::optional<record_view> make(byte_span table,
                                                       std::uint32_t format_version = max_format_version) noexcept {
    const std::size_t stride = codec<R>::size(format_version);
    if (table.size() % stride != 0) return std::nullopt;
    return record_view(table, format_version);
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
  byte_span bytes_{};
  std::uint32_t format_version_ = max_format_version;
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
