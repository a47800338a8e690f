// untold/bytes.hpp - the byte layer: little-endian loads and stores at any
// alignment, and overflow-checked range arithmetic.
//
// Every multi-byte value in a .untold file is little-endian and may sit at any
// address (mmapped files, byte-range buffers), so nothing here ever
// dereferences a typed pointer into the buffer: loads go through memcpy and
// std::bit_cast, which compilers turn into single unaligned moves.
//
// Safe on untrusted input: every function either checks its range or states
// the precondition the caller has already proven.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

namespace untold {

using byte_span = std::span<const std::byte>;
using mutable_byte_span = std::span<std::byte>;

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "mixed-endian platforms are not supported");

namespace detail {
template <class T>
inline constexpr bool is_le_scalar = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                                     std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
                                     std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::int32_t> ||
                                     std::is_same_v<T, float>;

template <class U>
constexpr U byteswap_unsigned(U v) noexcept {
  U out = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    out = static_cast<U>((out << 8) | (v & 0xFFu));
    v = static_cast<U>(v >> 8);
  }
  return out;
}

template <std::size_t N>
struct unsigned_of_size;
template <> struct unsigned_of_size<1> { using type = std::uint8_t; };
template <> struct unsigned_of_size<2> { using type = std::uint16_t; };
template <> struct unsigned_of_size<4> { using type = std::uint32_t; };
template <> struct unsigned_of_size<8> { using type = std::uint64_t; };
}  // namespace detail

/// Reads a little-endian T from p[0, sizeof(T)).
/// Precondition: p points at sizeof(T) readable bytes (no alignment needed).
template <class T>
[[nodiscard]] inline T load_le_unchecked(const std::byte* p) noexcept {
  static_assert(detail::is_le_scalar<T>);
  using U = typename detail::unsigned_of_size<sizeof(T)>::type;
  U raw;
  std::memcpy(&raw, p, sizeof(U));
  if constexpr (std::endian::native == std::endian::big) raw = detail::byteswap_unsigned(raw);
  return std::bit_cast<T>(raw);
}

/// Writes T little-endian into p[0, sizeof(T)).
/// Precondition: p points at sizeof(T) writable bytes (no alignment needed).
template <class T>
inline void store_le_unchecked(std::byte* p, T value) noexcept {
  static_assert(detail::is_le_scalar<T>);
  using U = typename detail::unsigned_of_size<sizeof(T)>::type;
  U raw = std::bit_cast<U>(value);
  if constexpr (std::endian::native == std::endian::big) raw = detail::byteswap_unsigned(raw);
  std::memcpy(p, &raw, sizeof(U));
}

/// Reads a little-endian T at `offset`; returns nullopt when the value does not
/// fit in `bytes`. Safe on untrusted input.
template <class T>
[[nodiscard]] inline std::optional<T> load_le(byte_span bytes, std::uint64_t offset) noexcept {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  return load_le_unchecked<T>(bytes.data() + offset);
}

/// Writes a little-endian T at `offset`; returns false (and writes nothing)
/// when it does not fit.
template <class T>
inline bool store_le(mutable_byte_span bytes, std::uint64_t offset, T value) noexcept {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  store_le_unchecked<T>(bytes.data() + offset, value);
  return true;
}

// ---- overflow-checked arithmetic -------------------------------------------

/// a + b, or nullopt on uint64 overflow.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) noexcept {
  if (a > std::numeric_limits<std::uint64_t>::max() - b) return std::nullopt;
  return a + b;
}

/// a * b, or nullopt on uint64 overflow.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

/// A half-open byte range [offset, offset + size).
struct byte_range {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  [[nodiscard]] constexpr std::uint64_t end() const noexcept { return offset + size; }
  friend constexpr bool operator==(const byte_range&, const byte_range&) = default;
};

/// The range [offset, offset + count * element_size) when it is computable
/// without overflow and ends at or before `limit`; nullopt otherwise. This is
/// the one way the library forms a range from file values.
[[nodiscard]] constexpr std::optional<byte_range> checked_range(std::uint64_t offset, std::uint64_t count,
                                                                std::uint64_t element_size,
                                                                std::uint64_t limit) noexcept {
  const auto size = checked_mul(count, element_size);
  if (!size) return std::nullopt;
  const auto end = checked_add(offset, *size);
  if (!end || *end > limit) return std::nullopt;
  return byte_range{offset, *size};
}

/// The sub-span of `bytes` for a range already proven to lie inside it.
[[nodiscard]] inline byte_span subspan(byte_span bytes, byte_range r) noexcept {
  return bytes.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.size));
}

/// Rounds up to a multiple of `alignment` (a power of two); nullopt on overflow.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_align_up(std::uint64_t value,
                                                                      std::uint64_t alignment) noexcept {
  const auto bumped = checked_add(value, alignment - 1);
  if (!bumped) return std::nullopt;
  return *bumped & ~(alignment - 1);
}

/// A heap byte array whose bytes start uninitialised, for storage that is
/// about to be written in full (a decoded chunk, a range read from a file): a
/// std::vector<std::byte> would zero-fill it first, touching every page
/// twice. Reading a byte before writing it is the caller's bug, as with
/// `new std::byte[n]`. Move-only (a moved-from buffer is empty); converts to
/// byte_span / mutable_byte_span.
class byte_buffer {
 public:
  byte_buffer() noexcept = default;
  /// `size` uninitialised bytes. Allocation failure behaves as operator new[].
  explicit byte_buffer(std::size_t size) : data_(size == 0 ? nullptr : new std::byte[size]), size_(size) {}
  byte_buffer(byte_buffer&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  byte_buffer& operator=(byte_buffer&& o) noexcept {
    if (this != &o) {
      delete[] data_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  byte_buffer(const byte_buffer&) = delete;
  byte_buffer& operator=(const byte_buffer&) = delete;
  ~byte_buffer() { delete[] data_; }

  [[nodiscard]] std::byte* data() noexcept { return data_; }
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::byte* begin() noexcept { return data_; }
  [[nodiscard]] std::byte* end() noexcept { return data_ + size_; }
  [[nodiscard]] const std::byte* begin() const noexcept { return data_; }
  [[nodiscard]] const std::byte* end() const noexcept { return data_ + size_; }
  operator mutable_byte_span() noexcept { return {data_, size_}; }
  operator byte_span() const noexcept { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Views any trivially copyable contiguous range as bytes.
template <class T>
[[nodiscard]] inline byte_span as_bytes_span(std::span<const T> values) noexcept {
  return std::as_bytes(values);
}

}  // namespace untold
