// untold/vertex.hpp - vertex layouts: PBR_STATIC_V1 (32 B, spec 4) and the
// related GpuVertex (28 B, spec 4.1). For each: a decoded struct, a zero-copy
// view over the vertex bytes, and an encoder from float (or double) streams.
// PBR_STATIC_V1 also has a PBR_STATIC_V1 -> GpuVertex converter; its bulk
// decoders (SSE4.1, AVX2+F16C, NEON) live in vertex_decode.hpp, so a loader
// that only views vertices does not compile the intrinsics headers.
//
// Decoding is total: any bytes decode to some value (positions are copied bit
// for bit, NaN included), so views and bulk decoders are safe on untrusted
// input once the byte count is a multiple of the stride (checked by
// from_bytes / the decoders). Encoders validate their input and report
// errc::invalid_argument with the offending field and vertex index.
//
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "untold/bytes.hpp"
#include "untold/error.hpp"
#include "untold/format.hpp"
#include "untold/packing.hpp"
#include "untold/detail/lean_std.hpp"


namespace untold {

inline constexpr std::size_t pbr_vertex_stride = vertex_stride_pbr_static_v1;  // 32
inline constexpr std::size_t gpu_vertex_stride = 28;

/// Byte offsets of the PBR_STATIC_V1 fields (spec 4).
namespace pbr_offset {
inline constexpr std::size_t position = 0;
inline constexpr std::size_t normal = 12;
inline constexpr std::size_t tangent = 16;
inline constexpr std::size_t uv0 = 20;
inline constexpr std::size_t uv1 = 24;
inline constexpr std::size_t color0 = 28;
}  // namespace pbr_offset

/// Byte offsets of the GpuVertex fields (spec 4.1).
namespace gpu_offset {
inline constexpr std::size_t position = 0;
inline constexpr std::size_t normal = 12;
inline constexpr std::size_t tangent = 16;
inline constexpr std::size_t uv = 20;
}  // namespace gpu_offset

// ---- decoded and packed vertex structs ---------------------------------------

/// One decoded PBR_STATIC_V1 vertex, and the element of the interleaved bulk
/// decode: 18 floats, 72 bytes, no padding, in this order:
///   position xyz | normal xyz | tangent xyz, handedness (+1/-1) |
///   uv0 uv | uv1 uv | color0 RGBA (byte / 255).
/// Normal and tangent xyz are the dequantised codes (not renormalised).
struct pbr_vertex {
  std::array<float, 3> position{};
  std::array<float, 3> normal{};
  std::array<float, 4> tangent{};
  std::array<float, 2> uv0{};
  std::array<float, 2> uv1{};
  std::array<float, 4> color0{};
};
static_assert(sizeof(pbr_vertex) == 72 && std::is_standard_layout_v<pbr_vertex> &&
              std::is_trivially_copyable_v<pbr_vertex>);
static_assert(offsetof(pbr_vertex, normal) == 12 && offsetof(pbr_vertex, tangent) == 24 &&
              offsetof(pbr_vertex, uv0) == 40 && offsetof(pbr_vertex, uv1) == 48 &&
              offsetof(pbr_vertex, color0) == 56);

/// The stored fields of one PBR_STATIC_V1 vertex, undecoded.
struct pbr_vertex_packed {
  std::array<float, 3> position{};
  std::uint32_t normal = 0;
  std::uint32_t tangent = 0;
  std::array<std::uint16_t, 2> uv0{};
  std::array<std::uint16_t, 2> uv1{};
  std::array<std::uint8_t, 4> color0{};
  friend constexpr bool operator==(const pbr_vertex_packed&, const pbr_vertex_packed&) = default;
};

/// One decoded GpuVertex: unit normal, unit tangent + handedness, float UV.
struct gpu_vertex {
  std::array<float, 3> position{};
  std::array<float, 3> normal{};
  std::array<float, 4> tangent{};
  std::array<float, 2> uv{};
};

/// The stored fields of one GpuVertex, undecoded.
struct gpu_vertex_packed {
  std::array<float, 3> position{};
  std::array<std::int16_t, 2> normal{};
  std::array<std::int16_t, 2> tangent{};
  std::array<float, 2> uv{};
};

// ---- scalar per-vertex decoding ----------------------------------------------

namespace detail {

[[nodiscard]] inline float load_f32(const std::byte* p) noexcept {
  // Through the integer so the bits (NaN payloads included) are kept as is.
  return std::bit_cast<float>(load_le_unchecked<std::uint32_t>(p));
}

[[nodiscard]] inline std::array<float, 3> load_f32x3(const std::byte* p) noexcept {
  return {load_f32(p), load_f32(p + 4), load_f32(p + 8)};
}

[[nodiscard]] inline std::array<float, 2> load_half2(const std::byte* p) noexcept {
  return {half_to_float(load_le_unchecked<std::uint16_t>(p)), half_to_float(load_le_unchecked<std::uint16_t>(p + 2))};
}

[[nodiscard]] inline std::array<float, 4> load_color(const std::byte* p) noexcept {
  return {unpack_unorm8(static_cast<std::uint8_t>(p[0])), unpack_unorm8(static_cast<std::uint8_t>(p[1])),
          unpack_unorm8(static_cast<std::uint8_t>(p[2])), unpack_unorm8(static_cast<std::uint8_t>(p[3]))};
}

/// Precondition: p points at 32 readable bytes.
[[nodiscard]] inline pbr_vertex decode_pbr_vertex(const std::byte* p) noexcept {
  pbr_vertex v;
  v.position = load_f32x3(p + pbr_offset::position);
  v.normal = unpack_normal_1010102(load_le_unchecked<std::uint32_t>(p + pbr_offset::normal));
  v.tangent = unpack_tangent_1010102(load_le_unchecked<std::uint32_t>(p + pbr_offset::tangent));
  v.uv0 = load_half2(p + pbr_offset::uv0);
  v.uv1 = load_half2(p + pbr_offset::uv1);
  v.color0 = load_color(p + pbr_offset::color0);
  return v;
}

/// Precondition: p points at 28 readable bytes.
[[nodiscard]] inline gpu_vertex decode_gpu_vertex(const std::byte* p) noexcept {
  gpu_vertex v;
  v.position = load_f32x3(p + gpu_offset::position);
  v.normal = unpack_octahedral_normal(load_le_unchecked<std::int16_t>(p + gpu_offset::normal),
                                      load_le_unchecked<std::int16_t>(p + gpu_offset::normal + 2));
  v.tangent = unpack_octahedral_tangent(load_le_unchecked<std::int16_t>(p + gpu_offset::tangent),
                                        load_le_unchecked<std::int16_t>(p + gpu_offset::tangent + 2));
  v.uv = {load_f32(p + gpu_offset::uv), load_f32(p + gpu_offset::uv + 4)};
  return v;
}

struct pbr_traits {
  using value_type = pbr_vertex;
  static constexpr std::size_t stride = pbr_vertex_stride;
  static value_type decode(const std::byte* p) noexcept { return decode_pbr_vertex(p); }
};

struct gpu_traits {
  using value_type = gpu_vertex;
  static constexpr std::size_t stride = gpu_vertex_stride;
  static value_type decode(const std::byte* p) noexcept { return decode_gpu_vertex(p); }
};

/// Random-access iterator that decodes on dereference (returns by value, so
/// it is a C++20 random_access_iterator but only a legacy input iterator).
/// It points into the bytes, not the view, so it outlives the view object.
template <class Traits>
class vertex_iterator {
 public:
  using iterator_concept = std::random_access_iterator_tag;
  using iterator_category = std::input_iterator_tag;
  using value_type = typename Traits::value_type;
  using difference_type = std::ptrdiff_t;
  using reference = value_type;
  using pointer = void;

  constexpr vertex_iterator() noexcept = default;
  constexpr explicit vertex_iterator(const std::byte* p) noexcept : p_(p) {}

  [[nodiscard]] value_type operator*() const noexcept { return Traits::decode(p_); }
  [[nodiscard]] value_type operator[](difference_type n) const noexcept { return *(*this + n); }

  constexpr vertex_iterator& operator++() noexcept { return *this += 1; }
  constexpr vertex_iterator operator++(int) noexcept {
    auto old = *this;
    ++*this;
    return old;
  }
  constexpr vertex_iterator& operator--() noexcept { return *this -= 1; }
  constexpr vertex_iterator operator--(int) noexcept {
    auto old = *this;
    --*this;
    return old;
  }
  constexpr vertex_iterator& operator+=(difference_type n) noexcept {
    p_ += n * static_cast<difference_type>(Traits::stride);
    return *this;
  }
  constexpr vertex_iterator& operator-=(difference_type n) noexcept { return *this += -n; }
  [[nodiscard]] friend constexpr vertex_iterator operator+(vertex_iterator it, difference_type n) noexcept {
    return it += n;
  }
  [[nodiscard]] friend constexpr vertex_iterator operator+(difference_type n, vertex_iterator it) noexcept {
    return it += n;
  }
  [[nodiscard]] friend constexpr vertex_iterator operator-(vertex_iterator it, difference_type n) noexcept {
    return it -= n;
  }
  [[nodiscard]] friend constexpr difference_type operator-(const vertex_iterator& a,
                                                           const vertex_iterator& b) noexcept {
    return (a.p_ - b.p_) / static_cast<difference_type>(Traits::stride);
  }
  [[nodiscard]] friend constexpr bool operator==(const vertex_iterator&, const vertex_iterator&) noexcept = default;
  [[nodiscard]] friend constexpr std::strong_ordering operator<=>(const vertex_iterator& a,
                                                                  const vertex_iterator& b) noexcept {
    return std::compare_three_way{}(a.p_, b.p_);
  }

 private:
  const std::byte* p_ = nullptr;
};

/// The byte count of a vertex buffer is not a multiple of the stride.
[[nodiscard]] inline error vertex_bytes_error(std::size_t size) noexcept {
  return make_error(errc::invalid_argument, {.field = "vertex bytes", .value = size, .has_value = true});
}

}  // namespace detail

// ---- PBR_STATIC_V1 view ------------------------------------------------------

/// Zero-copy view over PBR_STATIC_V1 vertex bytes (a mesh's vertex range) at
/// any alignment. Accessors decode on the fly; index preconditions are the
/// caller's (i < size()), the bytes may be untrusted.
class pbr_vertex_view {
 public:
  using value_type = pbr_vertex;
  using iterator = detail::vertex_iterator<detail::pbr_traits>;
  using const_iterator = iterator;
  static constexpr std::size_t stride = pbr_vertex_stride;

  constexpr pbr_vertex_view() noexcept = default;

  /// Views `vertex_bytes`; errc::invalid_argument (field "vertex bytes") when
  /// its size is not a multiple of 32. Safe on untrusted input. The bytes must
  /// outlive the view.
  [[nodiscard]] static result<pbr_vertex_view> from_bytes(byte_span vertex_bytes) noexcept {
    if (vertex_bytes.size() % stride != 0) return detail::vertex_bytes_error(vertex_bytes.size());
    return pbr_vertex_view(vertex_bytes);
  }

  [[nodiscard]] constexpr std::size_t size() const noexcept { return bytes_.size() / stride; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] constexpr byte_span bytes() const noexcept { return bytes_; }

  /// Decodes vertex i. Precondition: i < size().
  [[nodiscard]] pbr_vertex operator[](std::size_t i) const noexcept { return detail::decode_pbr_vertex(at(i)); }
  [[nodiscard]] iterator begin() const noexcept { return iterator(bytes_.data()); }
  [[nodiscard]] iterator end() const noexcept { return iterator(bytes_.data() + size() * stride); }

  // Cheap single-attribute accessors. Precondition for all: i < size().

  /// Position of vertex i, bit for bit.
  [[nodiscard]] std::array<float, 3> position(std::size_t i) const noexcept {
    return detail::load_f32x3(at(i) + pbr_offset::position);
  }
  /// Dequantised normal of vertex i (not renormalised).
  [[nodiscard]] std::array<float, 3> normal(std::size_t i) const noexcept {
    return unpack_normal_1010102(normal_packed(i));
  }
  /// Dequantised tangent xyz and handedness (+1/-1) of vertex i.
  [[nodiscard]] std::array<float, 4> tangent(std::size_t i) const noexcept {
    return unpack_tangent_1010102(tangent_packed(i));
  }
  [[nodiscard]] std::array<float, 2> uv0(std::size_t i) const noexcept {
    return detail::load_half2(at(i) + pbr_offset::uv0);
  }
  [[nodiscard]] std::array<float, 2> uv1(std::size_t i) const noexcept {
    return detail::load_half2(at(i) + pbr_offset::uv1);
  }
  /// RGBA of vertex i as byte / 255.
  [[nodiscard]] std::array<float, 4> color0(std::size_t i) const noexcept {
    return detail::load_color(at(i) + pbr_offset::color0);
  }

  [[nodiscard]] std::uint32_t normal_packed(std::size_t i) const noexcept {
    return load_le_unchecked<std::uint32_t>(at(i) + pbr_offset::normal);
  }
  [[nodiscard]] std::uint32_t tangent_packed(std::size_t i) const noexcept {
    return load_le_unchecked<std::uint32_t>(at(i) + pbr_offset::tangent);
  }
  /// All stored fields of vertex i, undecoded.
  [[nodiscard]] pbr_vertex_packed packed(std::size_t i) const noexcept {
    const std::byte* p = at(i);
    pbr_vertex_packed v;
    v.position = detail::load_f32x3(p);
    v.normal = load_le_unchecked<std::uint32_t>(p + pbr_offset::normal);
    v.tangent = load_le_unchecked<std::uint32_t>(p + pbr_offset::tangent);
    v.uv0 = {load_le_unchecked<std::uint16_t>(p + pbr_offset::uv0),
             load_le_unchecked<std::uint16_t>(p + pbr_offset::uv0 + 2)};
    v.uv1 = {load_le_unchecked<std::uint16_t>(p + pbr_offset::uv1),
             load_le_unchecked<std::uint16_t>(p + pbr_offset::uv1 + 2)};
    for (std::size_t c = 0; c < 4; ++c) v.color0[c] = static_cast<std::uint8_t>(p[pbr_offset::color0 + c]);
    return v;
  }

 private:
  constexpr explicit pbr_vertex_view(byte_span bytes) noexcept : bytes_(bytes) {}
  [[nodiscard]] const std::byte* at(std::size_t i) const noexcept { return bytes_.data() + i * stride; }

  byte_span bytes_{};
};

// ---- GpuVertex view ------------------------------------------------------------

/// Zero-copy view over GpuVertex bytes (28-byte stride) at any alignment.
/// Index preconditions are the caller's (i < size()); the bytes may be
/// untrusted.
class gpu_vertex_view {
 public:
  using value_type = gpu_vertex;
  using iterator = detail::vertex_iterator<detail::gpu_traits>;
  using const_iterator = iterator;
  static constexpr std::size_t stride = gpu_vertex_stride;

  constexpr gpu_vertex_view() noexcept = default;

  /// Views `vertex_bytes`; errc::invalid_argument (field "vertex bytes") when
  /// its size is not a multiple of 28. Safe on untrusted input.
  [[nodiscard]] static result<gpu_vertex_view> from_bytes(byte_span vertex_bytes) noexcept {
    if (vertex_bytes.size() % stride != 0) return detail::vertex_bytes_error(vertex_bytes.size());
    return gpu_vertex_view(vertex_bytes);
  }

  [[nodiscard]] constexpr std::size_t size() const noexcept { return bytes_.size() / stride; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] constexpr byte_span bytes() const noexcept { return bytes_; }

  /// Decodes vertex i. Precondition: i < size().
  [[nodiscard]] gpu_vertex operator[](std::size_t i) const noexcept { return detail::decode_gpu_vertex(at(i)); }
  [[nodiscard]] iterator begin() const noexcept { return iterator(bytes_.data()); }
  [[nodiscard]] iterator end() const noexcept { return iterator(bytes_.data() + size() * stride); }

  // Single-attribute accessors. Precondition for all: i < size().
  [[nodiscard]] std::array<float, 3> position(std::size_t i) const noexcept {
    return detail::load_f32x3(at(i) + gpu_offset::position);
  }
  /// Unit normal of vertex i.
  [[nodiscard]] std::array<float, 3> normal(std::size_t i) const noexcept {
    const auto q = normal_oct(i);
    return unpack_octahedral_normal(q[0], q[1]);
  }
  /// Unit tangent xyz and handedness (+1/-1) of vertex i.
  [[nodiscard]] std::array<float, 4> tangent(std::size_t i) const noexcept {
    const auto q = tangent_oct(i);
    return unpack_octahedral_tangent(q[0], q[1]);
  }
  [[nodiscard]] std::array<float, 2> uv(std::size_t i) const noexcept {
    return {detail::load_f32(at(i) + gpu_offset::uv), detail::load_f32(at(i) + gpu_offset::uv + 4)};
  }
  [[nodiscard]] std::array<std::int16_t, 2> normal_oct(std::size_t i) const noexcept {
    return {load_le_unchecked<std::int16_t>(at(i) + gpu_offset::normal),
            load_le_unchecked<std::int16_t>(at(i) + gpu_offset::normal + 2)};
  }
  [[nodiscard]] std::array<std::int16_t, 2> tangent_oct(std::size_t i) const noexcept {
    return {load_le_unchecked<std::int16_t>(at(i) + gpu_offset::tangent),
            load_le_unchecked<std::int16_t>(at(i) + gpu_offset::tangent + 2)};
  }
  /// All stored fields of vertex i, undecoded.
  [[nodiscard]] gpu_vertex_packed packed(std::size_t i) const noexcept {
    return {position(i), normal_oct(i), tangent_oct(i), uv(i)};
  }

 private:
  constexpr explicit gpu_vertex_view(byte_span bytes) noexcept : bytes_(bytes) {}
  [[nodiscard]] const std::byte* at(std::size_t i) const noexcept { return bytes_.data() + i * stride; }

  byte_span bytes_{};
};

}  // namespace untold

// The views only point at bytes, so their iterators stay valid after the view
// object is gone.
template <>
inline constexpr bool std::ranges::enable_borrowed_range<untold::pbr_vertex_view> = true;
template <>
inline constexpr bool std::ranges::enable_borrowed_range<untold::gpu_vertex_view> = true;

namespace untold {

// That they model std::ranges::random_access_range is checked by
// tests/unit/test_view_concepts.cpp, not here: the concept checks cost every
// translation unit that includes this header 2% of its compile time.

// ---- encoders ---------------------------------------------------------------------

/// Float (or double) attribute streams for the PBR_STATIC_V1 encoder. The
/// vertex count is positions.size() / 3. Every other stream is either empty
/// (the spec default is written) or holds exactly count * components values.
template <class Real>
struct basic_pbr_vertex_input {
  static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>);
  std::span<const Real> positions{};  // xyz per vertex; required, finite
  std::span<const Real> normals{};    // xyz; empty -> (0,0,1)
  std::span<const Real> tangents{};   // xyz + handedness; empty -> (1,0,0,+1)
  std::span<const Real> uv0{};        // uv; empty -> (0,0); |v| <= 65504 after rounding
  std::span<const Real> uv1{};        // uv; empty -> (0,0)
  std::span<const Real> colors{};     // RGBA in [0,1] (clamped); empty -> 255,255,255,255
};
using pbr_vertex_input = basic_pbr_vertex_input<float>;
/// Double input reproduces the reference exporter exactly (it quantised the
/// double values; rounding them to float first can move an exact tie).
using pbr_vertex_input_f64 = basic_pbr_vertex_input<double>;

/// Float (or double) attribute streams for the GpuVertex encoder; same rules.
template <class Real>
struct basic_gpu_vertex_input {
  static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>);
  std::span<const Real> positions{};  // xyz per vertex; required, finite
  std::span<const Real> normals{};    // xyz; empty -> (0,0,1)
  std::span<const Real> tangents{};   // xyz + handedness; empty -> (1,0,0,+1)
  std::span<const Real> uvs{};        // uv; empty -> (0,0); finite
};
using gpu_vertex_input = basic_gpu_vertex_input<float>;
using gpu_vertex_input_f64 = basic_gpu_vertex_input<double>;

namespace detail {

[[nodiscard]] constexpr std::uint32_t index32(std::size_t i) noexcept {
  return i < no_index ? static_cast<std::uint32_t>(i) : no_index;
}

[[nodiscard]] inline error input_error(const char* field, std::size_t vertex, std::uint64_t value,
                                       bool has_value) noexcept {
  return make_error(errc::invalid_argument,
                    {.record_index = index32(vertex), .field = field, .value = value, .has_value = has_value});
}

template <class Real>
[[nodiscard]] inline status check_stream(std::span<const Real> s, std::size_t count, std::size_t components,
                                         const char* field) noexcept {
  if (!s.empty() && s.size() != count * components) return input_error(field, no_index, s.size(), true);
  return {};
}

template <class Real>
[[nodiscard]] inline result<std::size_t> position_count(std::span<const Real> positions) noexcept {
  if (positions.size() % 3 != 0) return input_error("positions", no_index, positions.size(), true);
  return positions.size() / 3;
}

[[nodiscard]] inline status check_output(std::size_t out_size, std::size_t count, std::size_t stride) noexcept {
  const auto need = checked_mul(count, stride);
  if (!need || *need != out_size) return input_error("out", no_index, out_size, true);
  return {};
}

/// Stores a position as f32; double input is rounded to nearest. Rejects
/// non-finite results (also finite doubles beyond the float range).
template <class Real>
[[nodiscard]] inline status store_position(std::byte* p, const Real* xyz, std::size_t vertex) noexcept {
  for (std::size_t c = 0; c < 3; ++c) {
    const auto f = static_cast<float>(xyz[c]);
    if (!is_finite(f)) return input_error("positions", vertex, c, true);
    store_le_unchecked<float>(p + 4 * c, f);
  }
  return {};
}

}  // namespace detail

/// Encodes PBR_STATIC_V1 vertices into `out`, which must be exactly
/// count * 32 bytes (count = positions.size() / 3). Errors
/// (errc::invalid_argument, context.field names the stream, record_index the
/// vertex): positions not a multiple of 3, a stream of the wrong size, a
/// non-finite position, a UV that is not finite or exceeds 65504 after
/// rounding, an output of the wrong size. On error `out` may be partly
/// written. Safe on untrusted input.
template <class Real>
[[nodiscard]] status encode_pbr_vertices(const basic_pbr_vertex_input<Real>& in, mutable_byte_span out) noexcept {
  const auto count = detail::position_count(in.positions);
  if (!count) return count.error();
  const std::size_t n = *count;
  UNTOLD_TRY(detail::check_stream(in.normals, n, 3, "normals"));
  UNTOLD_TRY(detail::check_stream(in.tangents, n, 4, "tangents"));
  UNTOLD_TRY(detail::check_stream(in.uv0, n, 2, "uv0"));
  UNTOLD_TRY(detail::check_stream(in.uv1, n, 2, "uv1"));
  UNTOLD_TRY(detail::check_stream(in.colors, n, 4, "colors"));
  UNTOLD_TRY(detail::check_output(out.size(), n, pbr_vertex_stride));

  constexpr std::uint32_t default_normal = 0x1FF00000u;   // (0,0,1)
  constexpr std::uint32_t default_tangent = 0x400001FFu;  // (1,0,0), +1
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * pbr_vertex_stride;
    UNTOLD_TRY(detail::store_position(p, in.positions.data() + 3 * i, i));

    std::uint32_t normal = default_normal;
    if (!in.normals.empty()) {
      const Real* v = in.normals.data() + 3 * i;
      normal = pack_normal_1010102(v[0], v[1], v[2]);
    }
    store_le_unchecked<std::uint32_t>(p + pbr_offset::normal, normal);

    std::uint32_t tangent = default_tangent;
    if (!in.tangents.empty()) {
      const Real* v = in.tangents.data() + 4 * i;
      tangent = pack_tangent_1010102(v[0], v[1], v[2], v[3]);
    }
    store_le_unchecked<std::uint32_t>(p + pbr_offset::tangent, tangent);

    const std::pair<std::span<const Real>, const char*> uvs[2] = {{in.uv0, "uv0"}, {in.uv1, "uv1"}};
    for (std::size_t s = 0; s < 2; ++s) {
      std::byte* q = p + pbr_offset::uv0 + 4 * s;
      for (std::size_t c = 0; c < 2; ++c) {
        std::uint16_t h = 0;
        if (!uvs[s].first.empty()) {
          const auto r = float_to_half(uvs[s].first[2 * i + c]);
          if (!r) return detail::input_error(uvs[s].second, i, c, true);
          h = *r;
        }
        store_le_unchecked<std::uint16_t>(q + 2 * c, h);
      }
    }

    for (std::size_t c = 0; c < 4; ++c) {
      const std::uint8_t byte = in.colors.empty() ? std::uint8_t{255} : pack_unorm8(in.colors[4 * i + c]);
      p[pbr_offset::color0 + c] = static_cast<std::byte>(byte);
    }
  }
  return {};
}

/// Encodes PBR_STATIC_V1 vertices into a new buffer of count * 32 bytes; the
/// same rules and errors as the span overload. Safe on untrusted input.
template <class Real>
[[nodiscard]] result<std::vector<std::byte>> encode_pbr_vertices(const basic_pbr_vertex_input<Real>& in) {
  const auto count = detail::position_count(in.positions);
  if (!count) return count.error();
  std::vector<std::byte> bytes(*count * pbr_vertex_stride);
  UNTOLD_TRY(encode_pbr_vertices(in, mutable_byte_span(bytes)));
  return bytes;
}

/// Encodes GpuVertex vertices into `out`, exactly count * 28 bytes. Normals
/// and tangents are octahedral (spec 4.1); UVs are stored as f32 and, like
/// positions, must be finite. Errors as for encode_pbr_vertices. On error
/// `out` may be partly written. Safe on untrusted input.
template <class Real>
[[nodiscard]] status encode_gpu_vertices(const basic_gpu_vertex_input<Real>& in, mutable_byte_span out) noexcept {
  const auto count = detail::position_count(in.positions);
  if (!count) return count.error();
  const std::size_t n = *count;
  UNTOLD_TRY(detail::check_stream(in.normals, n, 3, "normals"));
  UNTOLD_TRY(detail::check_stream(in.tangents, n, 4, "tangents"));
  UNTOLD_TRY(detail::check_stream(in.uvs, n, 2, "uvs"));
  UNTOLD_TRY(detail::check_output(out.size(), n, gpu_vertex_stride));

  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * gpu_vertex_stride;
    UNTOLD_TRY(detail::store_position(p, in.positions.data() + 3 * i, i));

    auto normal = pack_octahedral_normal(0.0, 0.0, 1.0);
    if (!in.normals.empty()) {
      const Real* v = in.normals.data() + 3 * i;
      normal = pack_octahedral_normal(v[0], v[1], v[2]);
    }
    auto tangent = pack_octahedral_tangent(1.0, 0.0, 0.0, 1.0);
    if (!in.tangents.empty()) {
      const Real* v = in.tangents.data() + 4 * i;
      tangent = pack_octahedral_tangent(v[0], v[1], v[2], v[3]);
    }
    store_le_unchecked<std::int16_t>(p + gpu_offset::normal, normal[0]);
    store_le_unchecked<std::int16_t>(p + gpu_offset::normal + 2, normal[1]);
    store_le_unchecked<std::int16_t>(p + gpu_offset::tangent, tangent[0]);
    store_le_unchecked<std::int16_t>(p + gpu_offset::tangent + 2, tangent[1]);

    for (std::size_t c = 0; c < 2; ++c) {
      const float uv = in.uvs.empty() ? 0.0f : static_cast<float>(in.uvs[2 * i + c]);
      if (!detail::is_finite(uv)) return detail::input_error("uvs", i, c, true);
      store_le_unchecked<float>(p + gpu_offset::uv + 4 * c, uv);
    }
  }
  return {};
}

/// Encodes GpuVertex vertices into a new buffer of count * 28 bytes; the same
/// rules as the span overload. Safe on untrusted input.
template <class Real>
[[nodiscard]] result<std::vector<std::byte>> encode_gpu_vertices(const basic_gpu_vertex_input<Real>& in) {
  const auto count = detail::position_count(in.positions);
  if (!count) return count.error();
  std::vector<std::byte> bytes(*count * gpu_vertex_stride);
  UNTOLD_TRY(encode_gpu_vertices(in, mutable_byte_span(bytes)));
  return bytes;
}

/// Converts PBR_STATIC_V1 bytes to GpuVertex bytes: position copied bit for
/// bit, normal/tangent decoded (dequantised, not renormalised) and re-encoded
/// octahedral, uv0 widened to f32 exactly (uv1 and color0 are dropped).
/// `gpu_out` must be exactly (pbr_bytes.size() / 32) * 28 bytes and
/// pbr_bytes.size() a multiple of 32, else errc::invalid_argument. Safe on
/// untrusted input (any bytes convert; a NaN UV stays NaN).
[[nodiscard]] inline status convert_pbr_to_gpu(byte_span pbr_bytes, mutable_byte_span gpu_out) noexcept {
  if (pbr_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(pbr_bytes.size());
  }
  const std::size_t n = pbr_bytes.size() / pbr_vertex_stride;
  UNTOLD_TRY(detail::check_output(gpu_out.size(), n, gpu_vertex_stride));
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* s = pbr_bytes.data() + i * pbr_vertex_stride;
    std::byte* d = gpu_out.data() + i * gpu_vertex_stride;
    std::memcpy(d, s, 12);
    const auto nrm = unpack_normal_1010102(load_le_unchecked<std::uint32_t>(s + pbr_offset::normal));
    const auto tan = unpack_tangent_1010102(load_le_unchecked<std::uint32_t>(s + pbr_offset::tangent));
    const auto on = pack_octahedral_normal(nrm[0], nrm[1], nrm[2]);
    const auto ot = pack_octahedral_tangent(tan[0], tan[1], tan[2], tan[3]);
    store_le_unchecked<std::int16_t>(d + gpu_offset::normal, on[0]);
    store_le_unchecked<std::int16_t>(d + gpu_offset::normal + 2, on[1]);
    store_le_unchecked<std::int16_t>(d + gpu_offset::tangent, ot[0]);
    store_le_unchecked<std::int16_t>(d + gpu_offset::tangent + 2, ot[1]);
    const auto uv = detail::load_half2(s + pbr_offset::uv0);
    store_le_unchecked<float>(d + gpu_offset::uv, uv[0]);
    store_le_unchecked<float>(d + gpu_offset::uv + 4, uv[1]);
  }
  return {};
}

/// convert_pbr_to_gpu into a new buffer. Safe on untrusted input.
[[nodiscard]] inline result<std::vector<std::byte>> convert_pbr_to_gpu(byte_span pbr_bytes) {
  if (pbr_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(pbr_bytes.size());
  }
  std::vector<std::byte> bytes(pbr_bytes.size() / pbr_vertex_stride * gpu_vertex_stride);
  UNTOLD_TRY(convert_pbr_to_gpu(pbr_bytes, mutable_byte_span(bytes)));
  return bytes;
}

}  // namespace untold
