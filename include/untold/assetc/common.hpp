// untold/assetc/common.hpp - what every assetc format header shares: the
// read options, fourcc codes, typed little-endian array views over bare
// arrays, error helpers and the runtime-path rule (HM-PATH).
//
// Reads nothing by itself. le_array<T> is safe on untrusted bytes once its
// size is a whole number of elements (every reader proves that first);
// check_runtime_path is safe on any string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "../budget.hpp"
#include "../bytes.hpp"
#include "../detail/checks.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../limits.hpp"
#include "../records.hpp"
#include "../vertex.hpp"

namespace untold::assetc {

/// Options of every assetc reader. `deep_checks` adds the value-level checks
/// (index values, local meshlet indices, joint indices, finite floats).
/// `budget`: the memory and work budget (budget.hpp) the reader charges for
/// the entries it stores and the items it visits, before it allocates or
/// loops; null makes one per file from `limits` and the file's size. Stages
/// that share one input (several files of one `check` run, a reader and
/// its printer) pass one budget. A refusal is HM-LIMITS.
struct open_options {
  untold::limits limits{};
  bool deep_checks = false;
  untold::budget* budget = nullptr;
};


/// 'a' | 'b' << 8 | 'c' << 16 | 'd' << 24, the order the files store magics and chunk ids in.
[[nodiscard]] constexpr std::uint32_t fourcc(const char (&s)[5]) noexcept {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(s[0])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[3])) << 24;
}

/// The four characters of a fourcc (non-printable bytes as '?'), for messages.
[[nodiscard]] constexpr std::array<char, 5> fourcc_chars(std::uint32_t code) noexcept {
  std::array<char, 5> out{};
  for (int i = 0; i < 4; ++i) {
    const auto c = static_cast<char>((code >> (8 * i)) & 0xFFu);
    out[static_cast<std::size_t>(i)] = (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  return out;
}

inline constexpr std::uint32_t hmesh_magic = fourcc("HMSH");
inline constexpr std::uint32_t hmat_magic = fourcc("HMAT");
inline constexpr std::uint32_t hman_magic = fourcc("HMAN");
inline constexpr std::uint32_t hpack_magic = fourcc("HPAK");
inline constexpr std::uint32_t hanim_magic = fourcc("HANM");

/// The u32 magic at the start of `bytes`, or 0 when shorter than 4 bytes.
[[nodiscard]] inline std::uint32_t magic_of(byte_span bytes) noexcept {
  return bytes.size() >= 4 ? load_le_unchecked<std::uint32_t>(bytes.data()) : 0;
}

// ---- codecs: one per element type of a bare array --------------------------------

/// codec<T>: size (bytes in the file), load(p) and store(p, v); p need not be aligned.
template <class T>
struct codec;

template <class T>
  requires detail::is_le_scalar<T>
struct codec<T> {
  static constexpr std::size_t size = sizeof(T);
  [[nodiscard]] static T load(const std::byte* p) noexcept { return load_le_unchecked<T>(p); }
  static void store(std::byte* p, T v) noexcept { store_le_unchecked<T>(p, v); }
};

/// A record described once by record_traits (records.hpp): the core's codec
/// reads and writes it field by field.
template <class T>
  requires untold::detail::described_record<T>
struct codec<T> {
  static constexpr std::size_t size = untold::record_traits<T>::size(0);
  [[nodiscard]] static T load(const std::byte* p) noexcept { return untold::codec<T>::decode(byte_span(p, size)); }
  static void store(std::byte* p, const T& v) noexcept { untold::codec<T>::encode(v, mutable_byte_span(p, size)); }
};

namespace detail {

template <class T>
struct array_traits {
  using value_type = T;
  static constexpr std::size_t stride = codec<T>::size;
  static value_type decode(const std::byte* p) noexcept { return codec<T>::load(p); }
};

}  // namespace detail

/// A zero-copy view over a bare little-endian array of T at any alignment:
/// elements decode on access. Precondition of the constructor: the byte count
/// is a multiple of codec<T>::size (the readers prove it); of operator[]: i < size().
template <class T>
class le_array {
 public:
  using value_type = T;
  using iterator = untold::detail::vertex_iterator<detail::array_traits<T>>;
  using const_iterator = iterator;
  static constexpr std::size_t stride = codec<T>::size;

  constexpr le_array() noexcept = default;
  constexpr explicit le_array(byte_span bytes) noexcept : bytes_(bytes) {}

  [[nodiscard]] constexpr std::size_t size() const noexcept { return bytes_.size() / stride; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bytes_.size() < stride; }
  /// The raw bytes, ready for a GPU upload.
  [[nodiscard]] constexpr byte_span bytes() const noexcept { return bytes_; }
  [[nodiscard]] T operator[](std::size_t i) const noexcept { return codec<T>::load(bytes_.data() + i * stride); }
  [[nodiscard]] iterator begin() const noexcept { return iterator(bytes_.data()); }
  [[nodiscard]] iterator end() const noexcept { return iterator(bytes_.data() + size() * stride); }

 private:
  byte_span bytes_{};
};

// ---- the budget ----------------------------------------------------------------------

namespace detail {

/// options.budget, or `own` (made from the limits and the file's size): the
/// budget one open_* call charges.
[[nodiscard]] constexpr untold::budget& reader_budget(const open_options& options, untold::budget& own) noexcept {
  return untold::budget::own_or_shared(options.budget, own);
}

/// What a byte_cursor reports when an assetc structure runs out of bytes.
inline constexpr cursor_rules hm_cursor_rules{errc::hm_truncated, errc::hm_count_too_large};

using untold::detail::is_finite;  // the shared bit test (detail/checks.hpp)

}  // namespace detail

/// HM-PATH: a runtime path (.hman and .hpack entries) is relative,
/// '/'-separated and cannot climb out of the runtime root: the shared
/// untold::detail::is_safe_relative_path (no empty, "." or ".." component,
/// no leading '/', no '\\', ':', NUL or control byte). An engine opens
/// root + "/" + path, so this is what keeps a hostile manifest inside the
/// root. Safe on any string.
[[nodiscard]] constexpr bool is_safe_runtime_path(std::string_view path) noexcept {
  return untold::detail::is_safe_relative_path(path);
}

}  // namespace untold::assetc
