// untold/vertex.hpp - vertex layouts: PBR_STATIC_V1 (32 B, spec 4) and the
// related GpuVertex (28 B, spec 4.1). For each: a decoded struct, a zero-copy
// view over the vertex bytes, and an encoder from float (or double) streams.
// PBR_STATIC_V1 also has bulk decoders (interleaved and per-attribute streams)
// with SSE4.1, AVX2+F16C and NEON paths that are bit-identical to the scalar
// path, and a PBR_STATIC_V1 -> GpuVertex converter.
//
// Decoding is total: any bytes decode to some value (positions are copied bit
// for bit, NaN included), so views and bulk decoders are safe on untrusted
// input once the byte count is a multiple of the stride (checked by
// from_bytes / the decoders). Encoders validate their input and report
// errc::invalid_argument with the offending field and vertex index.
//
// SIMD selection: the default build needs no -m flags. The x86-64 kernels are
// compiled with __attribute__((target(...))) and chosen at run time from
// __builtin_cpu_supports / cpuid (cached once); NEON is used on AArch64
// (__ARM_NEON, where it is baseline). decode_path forces one path. Define
// UNTOLD_NO_SIMD to compile only the scalar path. Bit-identity relies on IEEE
// semantics (no -ffast-math): every path computes max(float(q) / 511.0f, -1)
// with a true division, byte / 255.0f, and exact half -> float conversion.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "untold/bytes.hpp"
#include "untold/error.hpp"
#include "untold/format.hpp"
#include "untold/packing.hpp"

#if !defined(UNTOLD_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define UNTOLD_VERTEX_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif
#if !defined(UNTOLD_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__) && \
    (defined(__LITTLE_ENDIAN__) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__))
// AArch64 only: ARMv7 NEON has no float division, which the bit-exact
// snorm decode needs.
#define UNTOLD_VERTEX_NEON 1
#include <arm_neon.h>
#endif

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

static_assert(std::random_access_iterator<pbr_vertex_view::iterator>);
static_assert(std::ranges::random_access_range<pbr_vertex_view>);
static_assert(std::ranges::random_access_range<gpu_vertex_view>);

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
    if (!std::isfinite(f)) return input_error("positions", vertex, c, true);
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
      if (!std::isfinite(uv)) return detail::input_error("uvs", i, c, true);
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

// ---- bulk decode ------------------------------------------------------------------

/// Which implementation a bulk decode uses. `automatic` picks the best one the
/// CPU supports (avx2 > sse41 on x86-64, neon on AArch64, else scalar); the
/// others force a path (for tests and benchmarks). All give identical bits.
enum class decode_path : std::uint8_t { automatic, scalar, sse41, avx2, neon };

[[nodiscard]] constexpr std::string_view decode_path_name(decode_path p) noexcept {
  switch (p) {
    case decode_path::automatic: return "automatic";
    case decode_path::scalar: return "scalar";
    case decode_path::sse41: return "sse41";
    case decode_path::avx2: return "avx2";
    case decode_path::neon: return "neon";
  }
  return "unknown";
}

/// Per-attribute output streams for the bulk decode ("structure of arrays":
/// one array per attribute, its components consecutive per vertex, e.g.
/// positions = x0 y0 z0 x1 ...). An empty span skips that attribute; a
/// non-empty one must hold exactly count * components floats.
struct pbr_vertex_streams {
  std::span<float> positions{};  // 3 per vertex, bit copies
  std::span<float> normals{};    // 3, dequantised
  std::span<float> tangents{};   // 4: xyz + handedness (+1/-1)
  std::span<float> uv0{};        // 2
  std::span<float> uv1{};        // 2
  std::span<float> colors{};     // 4: RGBA byte / 255
};

namespace detail {

#if UNTOLD_VERTEX_X86
struct x86_features {
  bool sse41 = false;
  bool avx2 = false;  // and F16C, which every AVX2 CPU has but cpuid reports separately
};

[[nodiscard]] inline x86_features detect_x86_features() noexcept {
  __builtin_cpu_init();
  x86_features f;
  f.sse41 = __builtin_cpu_supports("sse4.1") != 0;
  // __builtin_cpu_supports("avx2") also checks that the OS saves the YMM
  // state; F16C comes from cpuid leaf 1 (clang 14's builtin does not know
  // "f16c").
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  f.avx2 = __builtin_cpu_supports("avx2") != 0 && f16c;
  return f;
}

[[nodiscard]] inline const x86_features& x86_cpu() noexcept {
  static const x86_features features = detect_x86_features();
  return features;
}
#endif

}  // namespace detail

/// Whether `p` can run on this CPU and build (automatic and scalar: always).
[[nodiscard]] inline bool decode_path_supported(decode_path p) noexcept {
  switch (p) {
    case decode_path::automatic:
    case decode_path::scalar: return true;
#if UNTOLD_VERTEX_X86
    case decode_path::sse41: return detail::x86_cpu().sse41;
    case decode_path::avx2: return detail::x86_cpu().avx2;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: return true;
#endif
    default: return false;
  }
}

/// The path `automatic` resolves to on this machine.
[[nodiscard]] inline decode_path best_decode_path() noexcept {
  if (decode_path_supported(decode_path::avx2)) return decode_path::avx2;
  if (decode_path_supported(decode_path::sse41)) return decode_path::sse41;
  if (decode_path_supported(decode_path::neon)) return decode_path::neon;
  return decode_path::scalar;
}

namespace detail {

/// Raw output pointers of the streams (nullptr = skip).
struct stream_ptrs {
  float* positions = nullptr;
  float* normals = nullptr;
  float* tangents = nullptr;
  float* uv0 = nullptr;
  float* uv1 = nullptr;
  float* colors = nullptr;
};

template <std::size_t N>
inline void put_floats(float* dst, const std::array<float, N>& v) noexcept {
  std::memcpy(dst, v.data(), sizeof(float) * N);
}

inline void decode_aos_scalar(const std::byte* in, std::size_t begin, std::size_t end, pbr_vertex* out) noexcept {
  for (std::size_t i = begin; i < end; ++i) out[i] = decode_pbr_vertex(in + i * pbr_vertex_stride);
}

inline void decode_soa_scalar(const std::byte* in, std::size_t begin, std::size_t end,
                              const stream_ptrs& s) noexcept {
  for (std::size_t i = begin; i < end; ++i) {
    const pbr_vertex v = decode_pbr_vertex(in + i * pbr_vertex_stride);
    if (s.positions) put_floats(s.positions + 3 * i, v.position);
    if (s.normals) put_floats(s.normals + 3 * i, v.normal);
    if (s.tangents) put_floats(s.tangents + 4 * i, v.tangent);
    if (s.uv0) put_floats(s.uv0 + 2 * i, v.uv0);
    if (s.uv1) put_floats(s.uv1 + 2 * i, v.uv1);
    if (s.colors) put_floats(s.colors + 4 * i, v.color0);
  }
}

#if UNTOLD_VERTEX_X86
// The kernels below compute exactly what the scalar decode computes:
//  snorm10: shift the field to the top, arithmetic shift back, cvt, / 511, max -1;
//  handedness: +1 with the sign bit of the tangent word;
//  half: exact (integer rebias + exact subnormal scaling, or F16C);
//  color: byte -> int -> float / 255.
// Positions are stored as integers so NaN payloads survive.
//
// Interleaved output is assembled into four full 16-byte rows and one 8-byte
// tail per 72-byte vertex with shuffles (bit moves, NaN payloads intact)
// rather than five overlapping 16-byte stores, which a store-only test ran at
// half the speed on x86.

#define UNTOLD_TARGET_SSE41 __attribute__((target("sse4.1")))
#define UNTOLD_TARGET_AVX2 __attribute__((target("avx2,f16c")))

/// Exact binary16 -> binary32 of the low 16 bits of each lane (SSE4.1).
UNTOLD_TARGET_SSE41 inline __m128i half_to_float_bits_sse41(__m128i h) noexcept {
  const __m128i em = _mm_and_si128(h, _mm_set1_epi32(0x7FFF));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i rebias = _mm_set1_epi32(112 << 23);
  __m128i o = _mm_add_epi32(_mm_slli_epi32(em, 13), rebias);
  const __m128i inf_nan = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7BFF));
  o = _mm_add_epi32(o, _mm_and_si128(inf_nan, rebias));  // exponent 31 -> 255
  const __m128i nan = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7C00));
  o = _mm_or_si128(o, _mm_and_si128(nan, _mm_set1_epi32(0x00400000)));  // quiet bit
  // Zero and subnormals: em * 2^-24 is exact and a normal float (or 0).
  const __m128i small = _mm_cmplt_epi32(em, _mm_set1_epi32(0x0400));
  const __m128 sub = _mm_mul_ps(_mm_cvtepi32_ps(em), _mm_set1_ps(0x1p-24f));
  o = _mm_blendv_epi8(o, _mm_castps_si128(sub), small);
  return _mm_or_si128(o, sign);
}

struct sse41_vertex {
  __m128i position;  // p0 p1 p2 (lane 3: normal word, spare)
  __m128 normal;     // nx ny nz (lane 3 spare)
  __m128 tangent;    // tx ty tz w
  __m128 uv;         // u0 v0 u1 v1
  __m128 color;      // r g b a
};

UNTOLD_TARGET_SSE41 inline sse41_vertex decode_vertex_sse41(const std::byte* p) noexcept {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));       // p0 p1 p2 N
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));  // T U0 U1 C
  const __m128 k511 = _mm_set1_ps(511.0f);
  const __m128 kneg1 = _mm_set1_ps(-1.0f);
  // SSE4.1 has no per-lane shifts; multiplying by 2^k is the per-lane left shift.
  const __m128i lift = _mm_setr_epi32(1 << 22, 1 << 12, 1 << 2, 1);
  sse41_vertex v;
  v.position = a;
  const __m128i n = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi32(a, 0xFF), lift), 22);
  v.normal = _mm_max_ps(_mm_div_ps(_mm_cvtepi32_ps(n), k511), kneg1);
  const __m128i t = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi32(b, 0x00), lift), 22);
  const __m128 txyz = _mm_max_ps(_mm_div_ps(_mm_cvtepi32_ps(t), k511), kneg1);
  // Lane 3 of t is T >> 22, whose sign is bit 31 of T.
  const __m128 w = _mm_or_ps(_mm_set1_ps(1.0f), _mm_and_ps(_mm_castsi128_ps(t), _mm_set1_ps(-0.0f)));
  v.tangent = _mm_blend_ps(txyz, w, 0x8);
  v.uv = _mm_castsi128_ps(half_to_float_bits_sse41(_mm_cvtepu16_epi32(_mm_srli_si128(b, 4))));
  v.color = _mm_div_ps(_mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_srli_si128(b, 12))), _mm_set1_ps(255.0f));
  return v;
}

/// Writes one pbr_vertex (18 floats) at o from its decoded rows.
UNTOLD_TARGET_SSE41 inline void store_pbr_vertex_sse41(float* o, __m128 pos, __m128 nrm, __m128 tan, __m128 uv,
                                                       __m128 col) noexcept {
  _mm_storeu_ps(o, _mm_blend_ps(pos, _mm_shuffle_ps(nrm, nrm, 0x00), 0x8));  // p0 p1 p2 nx
  _mm_storeu_ps(o + 4, _mm_shuffle_ps(nrm, tan, _MM_SHUFFLE(1, 0, 2, 1)));  // ny nz tx ty
  _mm_storeu_ps(o + 8, _mm_shuffle_ps(tan, uv, _MM_SHUFFLE(1, 0, 3, 2)));   // tz tw u0 v0
  _mm_storeu_ps(o + 12, _mm_shuffle_ps(uv, col, _MM_SHUFFLE(1, 0, 3, 2)));  // u1 v1 r g
  _mm_storeh_pi(reinterpret_cast<__m64*>(o + 16), col);                     // b a
}

UNTOLD_TARGET_SSE41 inline void decode_aos_sse41(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const sse41_vertex v = decode_vertex_sse41(in + i * pbr_vertex_stride);
    store_pbr_vertex_sse41(reinterpret_cast<float*>(out + i), _mm_castsi128_ps(v.position), v.normal, v.tangent, v.uv,
                           v.color);
  }
}

UNTOLD_TARGET_SSE41 inline void decode_soa_sse41(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  // 3-component streams take a 16-byte store whose spare lane lands on the
  // next vertex; the last vertex goes through the scalar code instead.
  const std::size_t simd_end = n == 0 ? 0 : n - 1;
  for (std::size_t i = 0; i < simd_end; ++i) {
    const sse41_vertex v = decode_vertex_sse41(in + i * pbr_vertex_stride);
    if (s.positions) _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i), v.position);
    if (s.normals) _mm_storeu_ps(s.normals + 3 * i, v.normal);
    if (s.tangents) _mm_storeu_ps(s.tangents + 4 * i, v.tangent);
    if (s.uv0) _mm_storel_pi(reinterpret_cast<__m64*>(s.uv0 + 2 * i), v.uv);
    if (s.uv1) _mm_storeh_pi(reinterpret_cast<__m64*>(s.uv1 + 2 * i), v.uv);
    if (s.colors) _mm_storeu_ps(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, simd_end, n, s);
}

struct avx2_vertex_pair {
  __m256i position;  // [p0 p1 p2 N] x 2 vertices
  __m256 normal;     // [nx ny nz -] x 2
  __m256 tangent;    // [tx ty tz w] x 2
  __m256 uv;         // [u0 v0 u1 v1] x 2
  __m256 color;      // [r g b a] x 2
};

/// Decodes vertices p[0..32) and p[32..64): low 128-bit lane = first vertex.
UNTOLD_TARGET_AVX2 inline avx2_vertex_pair decode_vertex_pair_avx2(const std::byte* p) noexcept {
  const auto* q = reinterpret_cast<const __m128i*>(p);
  const __m256i a = _mm256_loadu2_m128i(q + 2, q);      // p0 p1 p2 N | same, vertex 1
  const __m256i b = _mm256_loadu2_m128i(q + 3, q + 1);  // T U0 U1 C | same, vertex 1
  const __m256 k511 = _mm256_set1_ps(511.0f);
  const __m256 kneg1 = _mm256_set1_ps(-1.0f);
  const __m256i lift = _mm256_setr_epi32(22, 12, 2, 0, 22, 12, 2, 0);
  avx2_vertex_pair v;
  v.position = a;
  const __m256i n = _mm256_srai_epi32(_mm256_sllv_epi32(_mm256_shuffle_epi32(a, 0xFF), lift), 22);
  v.normal = _mm256_max_ps(_mm256_div_ps(_mm256_cvtepi32_ps(n), k511), kneg1);
  const __m256i t = _mm256_srai_epi32(_mm256_sllv_epi32(_mm256_shuffle_epi32(b, 0x00), lift), 22);
  const __m256 txyz = _mm256_max_ps(_mm256_div_ps(_mm256_cvtepi32_ps(t), k511), kneg1);
  const __m256 w = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(_mm256_castsi256_ps(t), _mm256_set1_ps(-0.0f)));
  v.tangent = _mm256_blend_ps(txyz, w, 0x88);
  // The 4 halves of each vertex (bytes 20..27) side by side, then one 8-wide
  // exact conversion.
  const __m128i halves = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + pbr_offset::uv0)),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 32 + pbr_offset::uv0)));
  v.uv = _mm256_cvtph_ps(halves);
  // Bytes 12..15 of each lane (the color word) zero-extended to 32 bits.
  const __m256i spread = _mm256_setr_epi8(12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1,  //
                                          12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1);
  v.color = _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_shuffle_epi8(b, spread)), _mm256_set1_ps(255.0f));
  return v;
}

UNTOLD_TARGET_AVX2 inline void decode_aos_avx2(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const avx2_vertex_pair v = decode_vertex_pair_avx2(in + i * pbr_vertex_stride);
    // The same row assembly as store_pbr_vertex_sse41, both vertices at once.
    const __m256 pos = _mm256_castsi256_ps(v.position);
    const __m256 r0 = _mm256_blend_ps(pos, _mm256_shuffle_ps(v.normal, v.normal, 0x00), 0x88);  // p0 p1 p2 nx
    const __m256 r1 = _mm256_shuffle_ps(v.normal, v.tangent, _MM_SHUFFLE(1, 0, 2, 1));        // ny nz tx ty
    const __m256 r2 = _mm256_shuffle_ps(v.tangent, v.uv, _MM_SHUFFLE(1, 0, 3, 2));            // tz tw u0 v0
    const __m256 r3 = _mm256_shuffle_ps(v.uv, v.color, _MM_SHUFFLE(1, 0, 3, 2));              // u1 v1 r g
    float* o = reinterpret_cast<float*>(out + i);
    _mm_storeu_ps(o, _mm256_castps256_ps128(r0));
    _mm_storeu_ps(o + 4, _mm256_castps256_ps128(r1));
    _mm_storeu_ps(o + 8, _mm256_castps256_ps128(r2));
    _mm_storeu_ps(o + 12, _mm256_castps256_ps128(r3));
    _mm_storeh_pi(reinterpret_cast<__m64*>(o + 16), _mm256_castps256_ps128(v.color));  // b a
    // Upper-lane extracts straight to memory are store-only operations.
    _mm_storeu_ps(o + 18, _mm256_extractf128_ps(r0, 1));
    _mm_storeu_ps(o + 22, _mm256_extractf128_ps(r1, 1));
    _mm_storeu_ps(o + 26, _mm256_extractf128_ps(r2, 1));
    _mm_storeu_ps(o + 30, _mm256_extractf128_ps(r3, 1));
    _mm_storeh_pi(reinterpret_cast<__m64*>(o + 34), _mm256_extractf128_ps(v.color, 1));
  }
  decode_aos_scalar(in, i, n, out);
}

UNTOLD_TARGET_AVX2 inline void decode_soa_avx2(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  std::size_t i = 0;
  // Keep the spare lane of the second vertex's 3-float stores inside the
  // stream: stop while a vertex after the pair remains.
  for (; i + 2 < n; i += 2) {
    const avx2_vertex_pair v = decode_vertex_pair_avx2(in + i * pbr_vertex_stride);
    if (s.positions) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i), _mm256_castsi256_si128(v.position));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(s.positions + 3 * i + 3), _mm256_extracti128_si256(v.position, 1));
    }
    if (s.normals) {
      _mm_storeu_ps(s.normals + 3 * i, _mm256_castps256_ps128(v.normal));
      _mm_storeu_ps(s.normals + 3 * i + 3, _mm256_extractf128_ps(v.normal, 1));
    }
    if (s.tangents) _mm256_storeu_ps(s.tangents + 4 * i, v.tangent);
    if (s.uv0 || s.uv1) {
      // [u0 v0 u1 v1 | u0' v0' u1' v1'] -> uv0 pair and uv1 pair.
      const __m256d uv = _mm256_permute4x64_pd(_mm256_castps_pd(v.uv), 0xD8);  // uv0 uv0' uv1 uv1'
      if (s.uv0) _mm_storeu_pd(reinterpret_cast<double*>(s.uv0 + 2 * i), _mm256_castpd256_pd128(uv));
      if (s.uv1) _mm_storeu_pd(reinterpret_cast<double*>(s.uv1 + 2 * i), _mm256_extractf128_pd(uv, 1));
    }
    if (s.colors) _mm256_storeu_ps(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, i, n, s);
}
#endif  // UNTOLD_VERTEX_X86

#if UNTOLD_VERTEX_NEON
/// Exact binary16 -> binary32 of the low 16 bits of each lane (same integer
/// method as the SSE4.1 path; independent of FPCR.DN/FZ).
inline uint32x4_t half_to_float_bits_neon(uint32x4_t h) noexcept {
  const uint32x4_t em = vandq_u32(h, vdupq_n_u32(0x7FFF));
  const uint32x4_t sign = vshlq_n_u32(vandq_u32(h, vdupq_n_u32(0x8000)), 16);
  const uint32x4_t rebias = vdupq_n_u32(112u << 23);
  uint32x4_t o = vaddq_u32(vshlq_n_u32(em, 13), rebias);
  o = vaddq_u32(o, vandq_u32(vcgtq_u32(em, vdupq_n_u32(0x7BFF)), rebias));
  o = vorrq_u32(o, vandq_u32(vcgtq_u32(em, vdupq_n_u32(0x7C00)), vdupq_n_u32(0x00400000)));
  const float32x4_t sub = vmulq_f32(vcvtq_f32_u32(em), vdupq_n_f32(0x1p-24f));
  o = vbslq_u32(vcltq_u32(em, vdupq_n_u32(0x0400)), vreinterpretq_u32_f32(sub), o);
  return vorrq_u32(o, sign);
}

struct neon_vertex {
  uint32x4_t position;
  float32x4_t normal;
  float32x4_t tangent;
  float32x4_t uv;
  float32x4_t color;
};

inline neon_vertex decode_vertex_neon(const std::byte* p) noexcept {
  const uint8x16_t a8 = vld1q_u8(reinterpret_cast<const std::uint8_t*>(p));
  const uint8x16_t b8 = vld1q_u8(reinterpret_cast<const std::uint8_t*>(p + 16));
  const uint32x4_t a = vreinterpretq_u32_u8(a8);  // p0 p1 p2 N
  const uint32x4_t b = vreinterpretq_u32_u8(b8);  // T U0 U1 C
  const float32x4_t k511 = vdupq_n_f32(511.0f);
  const float32x4_t kneg1 = vdupq_n_f32(-1.0f);
  const int32x4_t lift = {22, 12, 2, 0};
  neon_vertex v;
  v.position = a;
  const int32x4_t n = vshrq_n_s32(vreinterpretq_s32_u32(vshlq_u32(vdupq_laneq_u32(a, 3), lift)), 22);
  v.normal = vmaxq_f32(vdivq_f32(vcvtq_f32_s32(n), k511), kneg1);
  const int32x4_t t = vshrq_n_s32(vreinterpretq_s32_u32(vshlq_u32(vdupq_laneq_u32(b, 0), lift)), 22);
  const float32x4_t txyz = vmaxq_f32(vdivq_f32(vcvtq_f32_s32(t), k511), kneg1);
  const uint32x4_t w = vorrq_u32(vreinterpretq_u32_f32(vdupq_n_f32(1.0f)),
                                 vandq_u32(vreinterpretq_u32_s32(t), vdupq_n_u32(0x80000000u)));
  v.tangent = vcopyq_laneq_f32(txyz, 3, vreinterpretq_f32_u32(w), 3);
  const uint16x4_t halves = vget_low_u16(vreinterpretq_u16_u32(vextq_u32(b, b, 1)));  // U0 U1
  v.uv = vreinterpretq_f32_u32(half_to_float_bits_neon(vmovl_u16(halves)));
  const uint16x4_t c16 = vget_high_u16(vmovl_u8(vget_high_u8(b8)));  // bytes 12..15
  v.color = vdivq_f32(vcvtq_f32_u32(vmovl_u16(c16)), vdupq_n_f32(255.0f));
  return v;
}

// Overlapping 16-byte stores in increasing address order: each store's
// spare lane is overwritten by the next and the last ends at the vertex end.
inline void decode_aos_neon(const std::byte* in, std::size_t n, pbr_vertex* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const neon_vertex v = decode_vertex_neon(in + i * pbr_vertex_stride);
    float* o = reinterpret_cast<float*>(out + i);
    vst1q_f32(o, vreinterpretq_f32_u32(v.position));
    vst1q_f32(o + 3, v.normal);
    vst1q_f32(o + 6, v.tangent);
    vst1q_f32(o + 10, v.uv);
    vst1q_f32(o + 14, v.color);
  }
}

inline void decode_soa_neon(const std::byte* in, std::size_t n, const stream_ptrs& s) noexcept {
  const std::size_t simd_end = n == 0 ? 0 : n - 1;
  for (std::size_t i = 0; i < simd_end; ++i) {
    const neon_vertex v = decode_vertex_neon(in + i * pbr_vertex_stride);
    if (s.positions) vst1q_f32(s.positions + 3 * i, vreinterpretq_f32_u32(v.position));
    if (s.normals) vst1q_f32(s.normals + 3 * i, v.normal);
    if (s.tangents) vst1q_f32(s.tangents + 4 * i, v.tangent);
    if (s.uv0) vst1_f32(s.uv0 + 2 * i, vget_low_f32(v.uv));
    if (s.uv1) vst1_f32(s.uv1 + 2 * i, vget_high_f32(v.uv));
    if (s.colors) vst1q_f32(s.colors + 4 * i, v.color);
  }
  decode_soa_scalar(in, simd_end, n, s);
}
#endif  // UNTOLD_VERTEX_NEON

[[nodiscard]] inline result<decode_path> resolve_path(decode_path requested) noexcept {
  if (requested == decode_path::automatic) return best_decode_path();
  if (!decode_path_supported(requested)) {
    return make_error(errc::invalid_argument,
                      {.field = "decode_path", .value = static_cast<std::uint64_t>(requested), .has_value = true});
  }
  return requested;
}

[[nodiscard]] inline status check_stream_out(std::span<float> s, std::size_t count, std::size_t components,
                                             const char* field) noexcept {
  if (!s.empty() && s.size() != count * components) return input_error(field, no_index, s.size(), true);
  return {};
}

}  // namespace detail

/// Decodes every vertex of `vertex_bytes` (PBR_STATIC_V1, any alignment) into
/// `out`, which must hold exactly vertex_bytes.size() / 32 elements (layout:
/// see pbr_vertex). errc::invalid_argument when the byte count is not a
/// multiple of 32, `out` has the wrong size, or a forced `path` is not
/// supported here. Every path produces the same bits. Safe on untrusted input.
[[nodiscard]] inline status decode_pbr_vertices(byte_span vertex_bytes, std::span<pbr_vertex> out,
                                                decode_path path = decode_path::automatic) noexcept {
  if (vertex_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(vertex_bytes.size());
  }
  const std::size_t n = vertex_bytes.size() / pbr_vertex_stride;
  if (out.size() != n) return detail::input_error("out", no_index, out.size(), true);
  const auto resolved = detail::resolve_path(path);
  if (!resolved) return resolved.error();
  const std::byte* in = vertex_bytes.data();
  switch (*resolved) {
#if UNTOLD_VERTEX_X86
    case decode_path::avx2: detail::decode_aos_avx2(in, n, out.data()); break;
    case decode_path::sse41: detail::decode_aos_sse41(in, n, out.data()); break;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: detail::decode_aos_neon(in, n, out.data()); break;
#endif
    default: detail::decode_aos_scalar(in, 0, n, out.data()); break;
  }
  return {};
}

/// Decodes every vertex of `vertex_bytes` into per-attribute streams (see
/// pbr_vertex_streams; empty streams are skipped, non-empty ones must hold
/// exactly count * components floats). Errors as for the interleaved
/// overload. Every path produces the same bits. Safe on untrusted input.
[[nodiscard]] inline status decode_pbr_vertices(byte_span vertex_bytes, const pbr_vertex_streams& out,
                                                decode_path path = decode_path::automatic) noexcept {
  if (vertex_bytes.size() % pbr_vertex_stride != 0) {
    return detail::vertex_bytes_error(vertex_bytes.size());
  }
  const std::size_t n = vertex_bytes.size() / pbr_vertex_stride;
  UNTOLD_TRY(detail::check_stream_out(out.positions, n, 3, "positions"));
  UNTOLD_TRY(detail::check_stream_out(out.normals, n, 3, "normals"));
  UNTOLD_TRY(detail::check_stream_out(out.tangents, n, 4, "tangents"));
  UNTOLD_TRY(detail::check_stream_out(out.uv0, n, 2, "uv0"));
  UNTOLD_TRY(detail::check_stream_out(out.uv1, n, 2, "uv1"));
  UNTOLD_TRY(detail::check_stream_out(out.colors, n, 4, "colors"));
  const auto resolved = detail::resolve_path(path);
  if (!resolved) return resolved.error();
  auto ptr = [](std::span<float> s) { return s.empty() ? nullptr : s.data(); };
  const detail::stream_ptrs s{ptr(out.positions), ptr(out.normals), ptr(out.tangents),
                              ptr(out.uv0),       ptr(out.uv1),     ptr(out.colors)};
  const std::byte* in = vertex_bytes.data();
  switch (*resolved) {
#if UNTOLD_VERTEX_X86
    case decode_path::avx2: detail::decode_soa_avx2(in, n, s); break;
    case decode_path::sse41: detail::decode_soa_sse41(in, n, s); break;
#endif
#if UNTOLD_VERTEX_NEON
    case decode_path::neon: detail::decode_soa_neon(in, n, s); break;
#endif
    default: detail::decode_soa_scalar(in, 0, n, s); break;
  }
  return {};
}

}  // namespace untold
