// untold/sink.hpp - appends little-endian values to a byte vector: the
// writers' counterpart of cursor.hpp, shared by every format's writer.
//
// Deterministic by construction: padding and reserved fields are written as
// zero bytes, never left uninitialised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "bytes.hpp"

namespace untold {

template <class R>
struct codec;  // records.hpp: include it to write records with record()

class byte_sink {
 public:
  explicit byte_sink(std::vector<std::byte>& out) noexcept : out_(out) {}

  [[nodiscard]] std::size_t size() const noexcept { return out_.size(); }

  template <class T>
  void put(T value) {
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    store_le_unchecked<T>(out_.data() + at, value);
  }
  void put_i8(std::int8_t v) { put<std::uint8_t>(static_cast<std::uint8_t>(v)); }
  void put_i64(std::int64_t v) { put<std::uint64_t>(static_cast<std::uint64_t>(v)); }
  void put_f64(double v) { put<std::uint64_t>(std::bit_cast<std::uint64_t>(v)); }

  void bytes(byte_span b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void string(std::string_view s) { bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  /// The string and a terminating NUL.
  void cstring(std::string_view s) {
    string(s);
    put<std::uint8_t>(0);
  }
  /// `r` encoded field by field as record_traits<R> lists it (records.hpp,
  /// which the caller includes); the reader's counterpart is
  /// byte_cursor::record.
  template <class R>
  void record(const R& r) {
    const std::size_t at = out_.size();
    out_.resize(at + codec<R>::size());
    codec<R>::encode(r, mutable_byte_span(out_).subspan(at, codec<R>::size()));
  }
  void zeros(std::size_t n) { out_.resize(out_.size() + n, std::byte{0}); }
  /// Zero bytes up to the next multiple of `alignment`.
  void align(std::size_t alignment) {
    const std::size_t r = out_.size() % alignment;
    if (r != 0) zeros(alignment - r);
  }
  /// Overwrites a record written earlier (as zeros, its fields known only later).
  /// Precondition: at + codec<R>::size() <= size().
  template <class R>
  void patch_record(std::size_t at, const R& r) noexcept {
    codec<R>::encode(r, mutable_byte_span(out_).subspan(at, codec<R>::size()));
  }
  /// Overwrites a value written earlier (sizes known only later).
  /// Precondition: at + sizeof(T) <= size().
  template <class T>
  void patch(std::size_t at, T value) noexcept {
    store_le_unchecked<T>(out_.data() + at, value);
  }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace untold
