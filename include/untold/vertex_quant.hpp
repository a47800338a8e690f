// untold/vertex_quant.hpp - PBR_QUANT_V1 (vertexLayout 2), the library's
// quantized vertex layout: 24 bytes a GPU fetches as is (the formats are in
// gpu_formats.hpp, the dequantization in shaders/untold_decode.glsl), and
// bytes meshoptimizer's codec compresses well (mesh_codec.hpp).
//
//   offset  field     encoding                                    GPU fetch
//   0       position  unorm16 x 3, relative to the mesh record's  unorm16x4
//                     localBounds: min + q / 65535 x (max - min);
//           (w)       unorm16: the tangent's handedness,
//                     65535 = +1, 0 = -1
//   8       normal    snorm8 x 2 octahedral (q / 127)              snorm8x2
//   10      tangent   snorm8 x 2 octahedral (direction)            snorm8x2
//   12      uv0       binary16 x 2 (as PBR_STATIC_V1)              float16x2
//   16      uv1       binary16 x 2                                 float16x2
//   20      color0    unorm8 x 4                                   unorm8x4
//
// A library extension, like the meshopt compressions: the reference engine
// reads vertexLayout 1 only. Error bounds (tests/unit/test_vertex_quant.cpp
// checks them): a position is within (max - min) / 65535 of its
// PBR_STATIC_V1 value per axis (half a step from rounding, plus float
// rounding); a normal or tangent direction within 1 degree of the
// PBR_STATIC_V1 direction it was converted from (8-bit octahedral; 0.93
// degrees is the largest seen over 300,000 directions);
// UVs and colours are the PBR_STATIC_V1 bits unchanged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "bytes.hpp"
#include "error.hpp"
#include "format.hpp"
#include "packing.hpp"
#include "records.hpp"
#include "vertex.hpp"

namespace untold {

inline constexpr std::size_t quant_vertex_stride = vertex_stride_pbr_quant_v1;  // 24

/// Byte offsets of the PBR_QUANT_V1 fields.
namespace quant_offset {
inline constexpr std::size_t position = 0;
inline constexpr std::size_t handedness = 6;
inline constexpr std::size_t normal = 8;
inline constexpr std::size_t tangent = 10;
inline constexpr std::size_t uv0 = 12;
inline constexpr std::size_t uv1 = 16;
inline constexpr std::size_t color0 = 20;
}  // namespace quant_offset

namespace detail {

[[nodiscard]] constexpr std::int8_t quantize_snorm8_away(double c) noexcept {
  return static_cast<std::int8_t>(round_half_away(clamp_or(c, -1.0, 1.0, 0.0) * 127.0));
}

[[nodiscard]] constexpr float dequantize_snorm8(std::int8_t q) noexcept {
  const float f = static_cast<float>(q) / 127.0f;
  return f < -1.0f ? -1.0f : f;
}

/// unorm16 code of `v` in [lo, hi]: round((v - lo) / (hi - lo) x 65535),
/// clamped; 0 for an empty or non-finite extent.
[[nodiscard]] inline std::uint16_t quantize_in_bounds(float v, float lo, float hi) noexcept {
  const double extent = static_cast<double>(hi) - static_cast<double>(lo);
  if (!(extent > 0.0) || !is_finite_value(extent)) return 0;
  const double t = (static_cast<double>(v) - static_cast<double>(lo)) / extent;
  return static_cast<std::uint16_t>(round_half_even(clamp_or(t, 0.0, 1.0, 0.0) * 65535.0));
}

}  // namespace detail

/// The position a unorm16 code stands for inside [lo, hi]: the shader's
/// lo + q / 65535 x (hi - lo), computed as a lerp in double so bounds whose
/// extent overflows float still decode inside them. Safe on any input.
[[nodiscard]] inline float dequantize_in_bounds(std::uint16_t q, float lo, float hi) noexcept {
  const double t = static_cast<double>(q) / 65535.0;
  return static_cast<float>(static_cast<double>(lo) * (1.0 - t) + static_cast<double>(hi) * t);
}

/// Octahedral 8-bit code of a direction (zero or non-finite: `fallback`).
[[nodiscard]] constexpr std::array<std::int8_t, 2> pack_octahedral8(double x, double y, double z,
                                                                    std::array<double, 3> fallback) noexcept {
  const auto uv = detail::octahedral_fold(x, y, z, fallback);
  return {detail::quantize_snorm8_away(uv[0]), detail::quantize_snorm8_away(uv[1])};
}

/// Decodes an 8-bit octahedral code to a unit vector (q / 127, clamped to
/// >= -1, unfolded, normalised in float). Safe on any input.
[[nodiscard]] inline std::array<float, 3> unpack_octahedral8(std::int8_t qx, std::int8_t qy) noexcept {
  return detail::octahedral_unfold(detail::dequantize_snorm8(qx), detail::dequantize_snorm8(qy));
}

/// Converts PBR_STATIC_V1 vertices (32 bytes each) to PBR_QUANT_V1 (24 bytes
/// each) relative to `bounds` (the mesh record's localBounds; positions
/// outside clamp to it). Errors: invalid_argument when `in` is not whole
/// vertices, `out` is not 24 bytes per vertex, or an extent max - min is
/// not finite (field "localBounds"). Safe on untrusted input.
[[nodiscard]] inline status quantize_vertices(byte_span in, const aabb& bounds, mutable_byte_span out) noexcept {
  if (in.size() % pbr_vertex_stride != 0)
    return make_error(errc::invalid_argument).at_field("vertices").with_value(in.size());
  const std::size_t count = in.size() / pbr_vertex_stride;
  if (out.size() != count * quant_vertex_stride)
    return make_error(errc::invalid_argument).at_field("out").with_value(out.size());
  for (int axis = 0; axis < 3; ++axis)
    if (!detail::is_finite_value(static_cast<double>(bounds.max[axis] - bounds.min[axis])) ||
        !detail::is_finite_value(static_cast<double>(bounds.min[axis])))
      return make_error(errc::invalid_argument).at_field("localBounds").with_float(bounds.max[axis] - bounds.min[axis]);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* p = in.data() + i * pbr_vertex_stride;
    std::byte* q = out.data() + i * quant_vertex_stride;
    const auto normal = unpack_normal_1010102(load_le_unchecked<std::uint32_t>(p + pbr_offset::normal));
    const auto tangent = unpack_tangent_1010102(load_le_unchecked<std::uint32_t>(p + pbr_offset::tangent));
    for (int axis = 0; axis < 3; ++axis)
      store_le_unchecked<std::uint16_t>(q + 2 * axis, detail::quantize_in_bounds(load_le_unchecked<float>(p + 4 * axis),
                                                                                 bounds.min[axis], bounds.max[axis]));
    store_le_unchecked<std::uint16_t>(q + quant_offset::handedness, tangent[3] < 0.0f ? 0 : 65535);
    const auto n = pack_octahedral8(normal[0], normal[1], normal[2], {0.0, 0.0, 1.0});
    const auto t = pack_octahedral8(tangent[0], tangent[1], tangent[2], {1.0, 0.0, 0.0});
    q[quant_offset::normal] = static_cast<std::byte>(n[0]);
    q[quant_offset::normal + 1] = static_cast<std::byte>(n[1]);
    q[quant_offset::tangent] = static_cast<std::byte>(t[0]);
    q[quant_offset::tangent + 1] = static_cast<std::byte>(t[1]);
    std::memcpy(q + quant_offset::uv0, p + pbr_offset::uv0, 12);  // uv0, uv1, color0: the same bits
  }
  return {};
}

/// Decodes one PBR_QUANT_V1 vertex relative to `bounds` into the
/// PBR_STATIC_V1 decode's struct: unit normal and tangent directions,
/// handedness +1/-1. Precondition: p points at 24 readable bytes.
[[nodiscard]] inline pbr_vertex decode_quant_vertex(const std::byte* p, const aabb& bounds) noexcept {
  pbr_vertex v;
  for (int axis = 0; axis < 3; ++axis)
    v.position[axis] = dequantize_in_bounds(load_le_unchecked<std::uint16_t>(p + 2 * axis), bounds.min[axis], bounds.max[axis]);
  v.normal = unpack_octahedral8(static_cast<std::int8_t>(p[quant_offset::normal]),
                                static_cast<std::int8_t>(p[quant_offset::normal + 1]));
  const auto t = unpack_octahedral8(static_cast<std::int8_t>(p[quant_offset::tangent]),
                                    static_cast<std::int8_t>(p[quant_offset::tangent + 1]));
  v.tangent = {t[0], t[1], t[2], load_le_unchecked<std::uint16_t>(p + quant_offset::handedness) >= 32768 ? 1.0f : -1.0f};
  v.uv0 = detail::load_half2(p + quant_offset::uv0);
  v.uv1 = detail::load_half2(p + quant_offset::uv1);
  v.color0 = detail::load_color(p + quant_offset::color0);
  return v;
}

/// Decodes vertex `i` of a mesh's stored bytes in either layout (`layout`:
/// the header's vertexLayout, `bounds`: the mesh's localBounds, used by
/// PBR_QUANT_V1). Precondition: (i + 1) x vertex_stride_of(layout) <=
/// bytes.size() and layout is 1 or 2.
[[nodiscard]] inline pbr_vertex decode_stored_vertex(byte_span bytes, std::size_t i, std::uint32_t layout,
                                                     const aabb& bounds) noexcept {
  if (layout == static_cast<std::uint32_t>(vertex_layout::pbr_quant_v1))
    return decode_quant_vertex(bytes.data() + i * quant_vertex_stride, bounds);
  return detail::decode_pbr_vertex(bytes.data() + i * pbr_vertex_stride);
}

/// Converts PBR_QUANT_V1 vertices back to PBR_STATIC_V1 (for readers and
/// converters that take the stored layout): positions dequantized, normal
/// and tangent re-packed as 10:10:10:2. Same errors as quantize_vertices
/// for the sizes. Safe on untrusted input.
[[nodiscard]] inline status dequantize_vertices(byte_span in, const aabb& bounds, mutable_byte_span out) noexcept {
  if (in.size() % quant_vertex_stride != 0)
    return make_error(errc::invalid_argument).at_field("vertices").with_value(in.size());
  const std::size_t count = in.size() / quant_vertex_stride;
  if (out.size() != count * pbr_vertex_stride)
    return make_error(errc::invalid_argument).at_field("out").with_value(out.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* q = in.data() + i * quant_vertex_stride;
    std::byte* p = out.data() + i * pbr_vertex_stride;
    const pbr_vertex v = decode_quant_vertex(q, bounds);
    for (int axis = 0; axis < 3; ++axis) store_le_unchecked<float>(p + 4 * axis, v.position[axis]);
    store_le_unchecked<std::uint32_t>(p + pbr_offset::normal, pack_normal_1010102(v.normal[0], v.normal[1], v.normal[2]));
    store_le_unchecked<std::uint32_t>(p + pbr_offset::tangent,
                                      pack_tangent_1010102(v.tangent[0], v.tangent[1], v.tangent[2], v.tangent[3]));
    std::memcpy(p + pbr_offset::uv0, q + quant_offset::uv0, 12);
  }
  return {};
}

}  // namespace untold
