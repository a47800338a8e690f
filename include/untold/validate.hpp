// untold/validate.hpp - the record rules (spec 6 "Records") and the deep
// checks (spec 6 "Deep checks"), one function per record kind.
//
// The header and chunk-table rules live in reader.hpp, where the directory is
// parsed. Everything here runs on an asset whose directory already passed, so
// tables have whole records and payloads are in memory. All work is linear in
// the table sizes (string validity is precomputed in one pass).
#pragma once

#include <cstddef>
#include <cstdint>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "detail/lean_std.hpp"
#include "detail/scan.hpp"
#include "error.hpp"
#include "format.hpp"
#include "records.hpp"

namespace untold {

namespace detail {

/// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when the
/// bytes there are not a valid, shortest-form, non-surrogate code point.
[[nodiscard]] inline std::size_t utf8_sequence_length(byte_span s, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) -> int { return i + k < s.size() ? static_cast<int>(s[i + k]) : -1; };
  const auto cont = [&](std::size_t k, int lo = 0x80, int hi = 0xBF) {
    const int b = at(k);
    return b >= lo && b <= hi;
  };
  const int b0 = at(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;            // no overlongs
  if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;      // no surrogates
  if (b0 >= 0xE1 && b0 <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;  // no overlongs
  if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;  // <= U+10FFFF
  return 0;
}

}  // namespace detail

namespace detail {
/// Elements, steps and tree nodes read by the validation loops a hostile file
/// could try to make quadratic (string starts, parent walks, deep checks of
/// meshes that share bytes). Per thread, only ever increased; tests read it
/// to prove the work stays linear in the file size.
inline thread_local std::uint64_t validation_work = 0;
}  // namespace detail

/// Which offsets of a string table start a valid string (R-STRING): valid
/// UTF-8 up to a NUL that lies inside the table. Built right to left in one
/// linear pass, so checking any number of references costs O(1) each, however
/// long or overlapping the strings are.
class string_validator {
 public:
  explicit string_validator(byte_span table) : valid_start_(table.size(), 0) {
    detail::validation_work += table.size();
    for (std::size_t i = table.size(); i-- > 0;) {
      if (table[i] == std::byte{0}) {
        valid_start_[i] = 1;
        continue;
      }
      const std::size_t len = detail::utf8_sequence_length(table, i);
      valid_start_[i] = (len != 0 && i + len < table.size() && valid_start_[i + len]) ? 1 : 0;
    }
  }
  /// True for NONE and for offsets that start a valid string.
  [[nodiscard]] bool valid(std::uint32_t offset) const noexcept {
    return offset == none || (offset < valid_start_.size() && valid_start_[offset] != 0);
  }

 private:
  std::vector<std::uint8_t> valid_start_;
};

namespace detail {

inline error record_error(errc code, const asset& a, chunk_type table, std::size_t record, const char* field,
                          std::uint64_t value) noexcept {
  error_context ctx;
  ctx.chunk_index = a.find_chunk(table).value_or(no_index);
  ctx.chunk_type = static_cast<std::uint32_t>(table);
  ctx.record_index = static_cast<std::uint32_t>(record);
  ctx.field = field;
  ctx.value = value;
  ctx.has_value = true;
  return make_error(code, ctx);
}

}  // namespace detail

// R-STRING: every string reference of the core tables.
template <class = void>
status validate_strings(const asset& a, const string_validator& strings) {
  const auto check = [&](chunk_type table, std::size_t row, const char* field, std::uint32_t offset) -> status {
    if (!strings.valid(offset)) return detail::record_error(errc::bad_string, a, table, row, field, offset);
    return {};
  };
  std::size_t row = 0;
  for (const entity_record& e : a.entities()) UNTOLD_TRY(check(chunk_type::entity_table, row++, "nameOffset", e.name_offset));
  row = 0;
  for (const mesh_record& m : a.meshes())
    UNTOLD_TRY(check(chunk_type::mesh_table, row++, "meshNameOffset", m.mesh_name_offset));
  row = 0;
  for (const material_record& m : a.materials())
    UNTOLD_TRY(check(chunk_type::material_table, row++, "nameOffset", m.name_offset));
  row = 0;
  for (const texture_record& t : a.textures()) {
    UNTOLD_TRY(check(chunk_type::texture_table, row, "nameOffset", t.name_offset));
    UNTOLD_TRY(check(chunk_type::texture_table, row++, "uriOffset", t.uri_offset));
  }
  return {};
}

// R-ENTITY-MESH-RANGE, R-ENTITY-PARENT (R-ENTITY-ID is checked when the id
// index is built, see reader.hpp).
template <class = void>
status validate_entities(const asset& a) {
  const auto entities = a.entities();
  const std::uint64_t mesh_count = a.meshes().size();
  for (std::size_t row = 0; row < entities.size(); ++row) {
    const entity_record e = entities[row];
    if (std::uint64_t{e.first_mesh_record_index} + e.mesh_record_count > mesh_count)
      return detail::record_error(errc::entity_mesh_range, a, chunk_type::entity_table, row, "meshRecordCount",
                                  e.mesh_record_count);
    if (e.parent_entity_id != none && !a.entity_row(e.parent_entity_id))
      return detail::record_error(errc::bad_entity_parent, a, chunk_type::entity_table, row, "parentEntityId",
                                  e.parent_entity_id);
  }
  // Parent chains form a functional graph; walk each chain once, marking the
  // rows of the current walk, so cycle detection is linear.
  constexpr std::uint32_t unvisited = 0, done = none;
  std::vector<std::uint32_t> walk_of(entities.size(), unvisited);
  for (std::uint32_t start = 0; start < entities.size(); ++start) {
    const std::uint32_t walk = start + 1;
    std::uint32_t row = start;
    while (walk_of[row] == unvisited) {
      ++detail::validation_work;
      walk_of[row] = walk;
      const std::uint32_t parent = entities[row].parent_entity_id;
      if (parent == none) break;
      row = *a.entity_row(parent);
      if (walk_of[row] == walk)
        return detail::record_error(errc::bad_entity_parent, a, chunk_type::entity_table, row, "parentEntityId",
                                    parent);
    }
    for (row = start; walk_of[row] == walk;) {
      ++detail::validation_work;
      walk_of[row] = done;
      const std::uint32_t parent = entities[row].parent_entity_id;
      if (parent == none) break;
      row = *a.entity_row(parent);
    }
  }
  return {};
}

// R-MESH-ENTITY, R-MESH-MATERIAL, R-INDEX-TYPE, R-STRIDE, R-VERTEX-SIZE,
// R-INDEX-SIZE, R-INDEX-COUNT, R-VERTEX-RANGE, R-INDEX-RANGE, R-EDGE-RANGE.
template <class = void>
status validate_meshes(const asset& a) {
  const auto meshes = a.meshes();
  const std::uint64_t material_count = a.materials().size();
  const auto chunk_size = [&](chunk_type t) -> std::optional<std::uint64_t> {
    const auto row = a.find_chunk(t);
    if (!row) return std::nullopt;
    return a.chunks()[*row].uncompressed_size;
  };
  const std::uint64_t vertex_bytes = chunk_size(chunk_type::vertex_data).value_or(0);
  const std::uint64_t index_bytes = chunk_size(chunk_type::index_data).value_or(0);
  const auto edge_bytes = chunk_size(chunk_type::edge_index_data);
  constexpr chunk_type table = chunk_type::mesh_table;

  for (std::size_t row = 0; row < meshes.size(); ++row) {
    const mesh_record m = meshes[row];
    const auto fail = [&](errc code, const char* field, std::uint64_t value) {
      return detail::record_error(code, a, table, row, field, value);
    };
    if (!a.entity_row(m.entity_id)) return fail(errc::mesh_entity, "entityId", m.entity_id);
    if (m.material_index != none && m.material_index >= material_count)
      return fail(errc::mesh_material, "materialIndex", m.material_index);
    const std::uint32_t isize = index_size(m.index_type);
    if (isize == 0) return fail(errc::bad_index_type, "indexType", m.index_type);
    if (m.vertex_stride_bytes != vertex_stride_of(a.header().vertex_layout))
      return fail(errc::bad_stride, "vertexStrideBytes", m.vertex_stride_bytes);
    if (m.vertex_data_size_bytes != std::uint64_t{m.vertex_count} * m.vertex_stride_bytes)
      return fail(errc::vertex_size, "vertexDataSizeBytes", m.vertex_data_size_bytes);
    if (m.index_data_size_bytes != std::uint64_t{m.index_count} * isize)
      return fail(errc::index_size, "indexDataSizeBytes", m.index_data_size_bytes);
    // Every mesh is a triangle list (the format has no other topology), so a
    // count that is not a multiple of 3 leaves a partial triangle.
    if (m.index_count % 3 != 0) return fail(errc::index_count, "indexCount", m.index_count);
    if (!checked_range(m.vertex_data_offset, m.vertex_data_size_bytes, 1, vertex_bytes))
      return fail(errc::vertex_range, "vertexDataOffset", m.vertex_data_offset);
    if (!checked_range(m.index_data_offset, m.index_data_size_bytes, 1, index_bytes))
      return fail(errc::index_range, "indexDataOffset", m.index_data_offset);
    if (m.edge_index_count() > 0) {
      if (!edge_bytes) return fail(errc::edge_range, "reserved0.edgeIndexCount", m.edge_index_count());
      if (!checked_range(m.edge_index_offset(), m.edge_index_count(), isize, *edge_bytes))
        return fail(errc::edge_range, "reserved0.edgeIndexDataOffset", m.edge_index_offset());
    }
  }
  return {};
}

// R-TEXTURE-INDEX.
template <class = void>
status validate_materials(const asset& a) {
  const auto materials = a.materials();
  const std::uint64_t texture_count = a.textures().size();
  for (std::size_t row = 0; row < materials.size(); ++row) {
    const material_record m = materials[row];
    const std::pair<std::uint32_t, const char*> refs[] = {
        {m.base_color_texture, "baseColorTextureIndex"}, {m.normal_texture, "normalTextureIndex"},
        {m.metallic_texture, "metallicTextureIndex"},    {m.roughness_texture, "roughnessTextureIndex"},
        {m.emissive_texture, "emissiveTextureIndex"},    {m.occlusion_texture, "occlusionTextureIndex"},
        {m.height_texture, "heightTextureIndex"},
    };
    for (const auto& [index, field] : refs)
      if (index != none && index >= texture_count)
        return detail::record_error(errc::texture_index, a, chunk_type::material_table, row, field, index);
  }
  return {};
}

// R-TEXTURE-FORMAT.
template <class = void>
status validate_textures(const asset& a) {
  const auto textures = a.textures();
  for (std::size_t row = 0; row < textures.size(); ++row) {
    const texture_record t = textures[row];
    if (t.texture_format > max_texture_format)
      return detail::record_error(errc::texture_format, a, chunk_type::texture_table, row, "textureFormat",
                                  t.texture_format);
  }
  return {};
}

/// Every record rule of the core tables, in spec order, with `strings` built
/// over the asset's string table (so one pass serves every string rule).
template <class = void>
status validate_records(const asset& a, const string_validator& strings) {
  UNTOLD_TRY(validate_strings(a, strings));
  UNTOLD_TRY(validate_entities(a));
  UNTOLD_TRY(validate_meshes(a));
  UNTOLD_TRY(validate_materials(a));
  UNTOLD_TRY(validate_textures(a));
  return {};
}

/// Every record rule of the core tables, in spec order.
template <class = void>
status validate_records(const asset& a) {
  return validate_records(a, string_validator(a.payload(chunk_type::string_table)));
}

// ---- deep checks (opt-in; linear in geometry size) ---------------------------

namespace detail {
[[nodiscard]] inline bool all_finite(const aabb& b) noexcept { return all_finite(b.min) && all_finite(b.max); }
}  // namespace detail

namespace detail {

/// Per-component minimum and maximum of some elements.
template <class T, std::size_t K>
struct extrema {
  std::array<T, K> lo{}, hi{};
  [[nodiscard]] static constexpr extrema none() noexcept {
    using lim = std::numeric_limits<T>;
    extrema e;
    e.lo.fill(lim::has_infinity ? lim::infinity() : lim::max());
    e.hi.fill(lim::has_infinity ? -lim::infinity() : lim::lowest());
    return e;
  }
  constexpr void add(const extrema& o) noexcept {
    for (std::size_t k = 0; k < K; ++k) {
      lo[k] = std::min(lo[k], o.lo[k]);
      hi[k] = std::max(hi[k], o.hi[k]);
    }
  }
};

/// The reference scan: each element through Key::read, one at a time.
template <class Key>
void scan_reference(typename Key::value& e, const std::byte* p, std::size_t stride, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) e.add(Key::read(p + i * stride));
}

// The deep rules' scans, fast and reference. The fast scans use GCC/Clang
// generic vectors of 16 bytes (SSE2 on x86-64, NEON on AArch64; no
// intrinsics header, so the reader path stays light): every lane keeps its
// own minimum and maximum and a NaN flag, so the result is exactly the
// reference's (one element at a time through Key::read) up to the sign of a
// zero extremum, which compares equal. tests/unit/test_deep_fast.cpp checks
// the two against each other. The vectors are detail/scan.hpp's (simd::).

/// A vertex position as extrema: a NaN coordinate widens to -inf..+inf, so a
/// range holding any non-finite coordinate has a non-finite extremum.
struct position_key {
  using value = extrema<float, 3>;
  static value read(const std::byte* p) noexcept {
    value e;
    for (std::size_t axis = 0; axis < 3; ++axis) {
      const float c = load_le_unchecked<float>(p + 4 * axis);
      e.lo[axis] = detail::is_nan(c) ? -std::numeric_limits<float>::infinity() : c;
      e.hi[axis] = detail::is_nan(c) ? std::numeric_limits<float>::infinity() : c;
    }
    return e;
  }
  /// Adds `count` positions `stride` bytes apart from `p` to `e`, 16 bytes
  /// per element (x, y, z and a lane ignored). Precondition: stride >= 16 and
  /// the elements are readable. One pass gives R-FINITE and R-BOUNDS.
  static void accumulate(value& e, const std::byte* p, std::size_t stride, std::size_t count) noexcept {
    using simd::f32x4;
    constexpr float inf = std::numeric_limits<float>::infinity();
    f32x4 lo0 = simd::splat<f32x4>(inf), lo1 = lo0, hi0 = -lo0, hi1 = hi0;
    simd::u32x4 nan{};
    std::size_t i = 0;
    for (; i + 2 <= count; i += 2, p += 2 * stride) {  // two chains: the min/max latency overlaps
      const f32x4 a = simd::load<f32x4>(p), b = simd::load<f32x4>(p + stride);
      nan |= reinterpret_cast<simd::u32x4>(a != a) | reinterpret_cast<simd::u32x4>(b != b);
      lo0 = simd::min(lo0, a), hi0 = simd::max(hi0, a);
      lo1 = simd::min(lo1, b), hi1 = simd::max(hi1, b);
    }
    if (i < count) {
      const f32x4 a = simd::load<f32x4>(p);
      nan |= reinterpret_cast<simd::u32x4>(a != a);
      lo0 = simd::min(lo0, a), hi0 = simd::max(hi0, a);
    }
    lo0 = simd::min(lo0, lo1), hi0 = simd::max(hi0, hi1);
    for (std::size_t axis = 0; axis < 3; ++axis) {
      e.lo[axis] = std::min(e.lo[axis], nan[axis] ? -inf : lo0[axis]);
      e.hi[axis] = std::max(e.hi[axis], nan[axis] ? inf : hi0[axis]);
    }
  }
};
/// N consecutive little-endian indices (e.g. the 4 joints of a skinned
/// vertex) as one element: their smallest and largest value.
template <class Index, std::size_t N = 1>
struct index_key {
  using value = extrema<std::uint32_t, 1>;
  static value read(const std::byte* p) noexcept {
    value e = value::none();
    for (std::size_t k = 0; k < N; ++k) {
      const std::uint32_t v = load_le_unchecked<Index>(p + k * sizeof(Index));
      e.add({{v}, {v}});
    }
    return e;
  }
  /// Adds `count` elements `stride` bytes apart from `p` to `e`. Packed
  /// elements (stride N x sizeof(Index)) are one run of indices, scanned 16
  /// bytes at a time; others one at a time.
  static void accumulate(value& e, const std::byte* p, std::size_t stride, std::size_t count) noexcept {
    if (stride != N * sizeof(Index)) {
      for (std::size_t i = 0; i < count; ++i) e.add(read(p + i * stride));
      return;
    }
    using V = std::conditional_t<sizeof(Index) == 2, simd::u16x8, simd::u32x4>;
    constexpr std::size_t lanes = 16 / sizeof(Index);
    const std::size_t n = count * N;
    V lo0 = simd::splat<V>(static_cast<Index>(~Index{0})), lo1 = lo0, hi0{}, hi1{};
    std::size_t i = 0;
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const V a = simd::load<V>(p + i * sizeof(Index)), b = simd::load<V>(p + (i + lanes) * sizeof(Index));
      lo0 = simd::min(lo0, a), hi0 = simd::max(hi0, a);
      lo1 = simd::min(lo1, b), hi1 = simd::max(hi1, b);
    }
    lo0 = simd::min(lo0, lo1), hi0 = simd::max(hi0, hi1);
    value r = value::none();
    for (std::size_t k = 0; k < lanes && n != 0; ++k) r.add({{lo0[k]}, {hi0[k]}});
    for (; i < n; ++i) {
      const std::uint32_t v = load_le_unchecked<Index>(p + i * sizeof(Index));
      r.add({{v}, {v}});
    }
    if (n != 0) e.add(r);
  }
};

/// Adds elements [0, count) of `stride` bytes from `p` to `e`: Key::accumulate
/// (the fast scan) where the key has one and the host is little-endian,
/// else scan_reference.
template <class Key>
void scan(typename Key::value& e, const std::byte* p, std::size_t stride, std::size_t count) noexcept {
  if constexpr (simd::usable && requires { Key::accumulate(e, p, stride, count); })
    Key::accumulate(e, p, stride, count);
  else
    scan_reference<Key>(e, p, stride, count);
}

/// Extrema of element ranges of one sequence (n elements, `stride` bytes
/// apart, from `base`). Short ranges are scanned; long ones too until they
/// have read 4 x n elements, then a segment tree over blocks of 64 elements
/// answers them with at most 128 element reads and O(log n) nodes each. So
/// any number of ranges, however they overlap (meshes may share vertex and
/// index bytes), costs O(n + ranges x (64 + log n)) reads, not O(n x ranges).
template <class Key>
class range_extrema {
 public:
  using value = typename Key::value;
  range_extrema(const std::byte* base, std::size_t stride, std::size_t n) noexcept
      : base_(base), stride_(stride), n_(n) {}

  /// Elements [first, first + count). Precondition: first + count <= n.
  value query(std::size_t first, std::size_t count) {
    value e = value::none();
    const std::size_t end = first + count;
    if (count <= 2 * block || (tree_.empty() && (scanned_ += count) <= 4 * n_)) {
      scan(e, first, end);
      return e;
    }
    if (tree_.empty()) build();
    const std::size_t whole_first = (first + block - 1) / block, whole_end = end / block;
    scan(e, first, whole_first * block);
    scan(e, whole_end * block, end);
    for (std::size_t lo = whole_first + blocks_, hi = whole_end + blocks_; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) e.add(tree_[lo++]);
      if (hi & 1) e.add(tree_[--hi]);
      validation_work += 2;
    }
    return e;
  }

 private:
  static constexpr std::size_t block = 64;
  void scan(value& e, std::size_t begin, std::size_t end) const noexcept {
    if (begin < end) detail::scan<Key>(e, base_ + begin * stride_, stride_, end - begin);
    validation_work += end - begin;
  }
  void build() {
    blocks_ = (n_ + block - 1) / block;
    tree_.assign(2 * blocks_, value::none());
    for (std::size_t b = 0; b < blocks_; ++b) scan(tree_[blocks_ + b], b * block, std::min(n_, (b + 1) * block));
    for (std::size_t i = blocks_; i-- > 1;) {
      tree_[i] = tree_[2 * i];
      tree_[i].add(tree_[2 * i + 1]);
    }
  }

  const std::byte* base_;
  std::size_t stride_, n_;
  std::size_t scanned_ = 0, blocks_ = 0;
  std::vector<value> tree_;  // [blocks_, 2 blocks_): blocks; [1, blocks_): unions
};

/// range_extrema over a chunk's elements of `stride` bytes for every start
/// phase (a mesh's byte offset need not be a multiple of its element size),
/// each built on first use.
template <class Key>
class chunk_extrema {
 public:
  chunk_extrema(byte_span chunk, std::size_t stride) : chunk_(chunk), stride_(stride), phases_(stride) {}
  /// The `count` elements at byte `offset`. Precondition: they lie inside the chunk.
  typename Key::value query(std::uint64_t offset, std::uint64_t count) {
    const auto phase = static_cast<std::size_t>(offset % stride_);
    auto& r = phases_[phase];
    if (!r) r.emplace(chunk_.data() + phase, stride_, (chunk_.size() - phase) / stride_);
    return r->query(static_cast<std::size_t>(offset / stride_), static_cast<std::size_t>(count));
  }

 private:
  byte_span chunk_;
  std::size_t stride_;
  std::vector<std::optional<range_extrema<Key>>> phases_;
};

}  // namespace detail

/// Absolute slack allowed by R-BOUNDS around a mesh's localBounds: bounds
/// written from float positions are exact, so the slack only absorbs writers
/// that round bounds through another precision (1e-5 relative, at least 1e-6).
[[nodiscard]] inline float bounds_tolerance(const aabb& b) noexcept {
  float largest = 1.0f;
  for (int i = 0; i < 3; ++i) largest = std::max(largest, std::max(detail::abs(b.min[i]), detail::abs(b.max[i])));
  return largest * 1e-5f;
}

namespace detail {
/// R-FINITE and R-BOUNDS of positions with extrema `e` (position_key) in a
/// mesh with localBounds `b`: every extremum finite and inside b +- slack.
[[nodiscard]] inline bool positions_inside(const extrema<float, 3>& e, const aabb& b) noexcept {
  const float slack = bounds_tolerance(b);
  bool inside = true;
  for (std::size_t axis = 0; axis < 3; ++axis)
    inside = inside && is_finite(e.lo[axis]) && is_finite(e.hi[axis]) && !(e.lo[axis] < b.min[axis] - slack) &&
             !(e.hi[axis] > b.max[axis] + slack);
  return inside;
}
}  // namespace detail

namespace detail {
/// PBR_QUANT_V1 positions scale max - min: it must be finite too (R-FINITE).
[[nodiscard]] inline bool finite_extent(const aabb& b) noexcept {
  for (std::size_t axis = 0; axis < 3; ++axis)
    if (!is_finite(b.max[axis] - b.min[axis])) return false;
  return true;
}
}  // namespace detail

/// The deep rules of mesh `row` of `a` over the given bytes, scanned
/// directly: R-FINITE of its localBounds and vertex positions, R-BOUNDS
/// (positions inside localBounds), R-INDEX-VALUE (indices and edge indices
/// below vertexCount, read with the mesh's indexType). Reports the first bad
/// element, in that order. O(bytes given). validate_deep applies it to every
/// mesh of a loaded asset (through range extrema, so meshes sharing bytes
/// stay linear); streamed_asset::load_mesh applies it to the bytes it
/// loaded. Safe on untrusted input: spans of any size (a trailing partial
/// element is ignored); `row` out of range is invalid_argument.
template <class = void>
status validate_mesh_deep(const asset& a, std::size_t row, byte_span vertices, byte_span indices,
                          byte_span edge_indices) {
  const auto meshes = a.meshes();
  if (row >= meshes.size())
    return make_error(errc::invalid_argument, {.record_index = static_cast<std::uint32_t>(row), .field = "mesh_index"});
  const mesh_record m = meshes[row];
  const auto fail = [&](errc code, const char* field, std::uint64_t value) {
    return detail::record_error(code, a, chunk_type::mesh_table, row, field, value);
  };
  if (!detail::all_finite(m.local_bounds)) return fail(errc::not_finite, "localBounds", 0);
  if (a.header().vertex_layout == static_cast<std::uint32_t>(vertex_layout::pbr_quant_v1)) {
    // Positions are codes inside localBounds: finite and inside by
    // construction, once the extent they scale is finite.
    if (!detail::finite_extent(m.local_bounds)) return fail(errc::not_finite, "localBounds", 0);
    vertices = {};
  }

  // The fast scans (detail::scan) prove the common case, a valid mesh, in one
  // pass over the bytes; only a mesh they show to be bad is scanned again,
  // element by element, to report its first bad element.
  const std::size_t vertex_count = vertices.size() / vertex_stride_pbr_static_v1;
  detail::validation_work += vertex_count;
  auto positions = detail::position_key::value::none();
  detail::scan<detail::position_key>(positions, vertices.data(), vertex_stride_pbr_static_v1, vertex_count);
  if (vertex_count != 0 && !detail::positions_inside(positions, m.local_bounds)) {
    const float slack = bounds_tolerance(m.local_bounds);
    for (std::size_t v = 0; v < vertex_count; ++v) {
      const std::byte* p = vertices.data() + v * vertex_stride_pbr_static_v1;
      for (std::size_t axis = 0; axis < 3; ++axis) {
        const float c = load_le_unchecked<float>(p + 4 * axis);
        if (!detail::is_finite(c)) return fail(errc::not_finite, "position", v);
        if (c < m.local_bounds.min[axis] - slack || c > m.local_bounds.max[axis] + slack)
          return fail(errc::out_of_bounds, "position", v);
      }
    }
  }

  const std::uint32_t isize = index_size(m.index_type);
  const auto check_indices = [&](byte_span bytes, const char* field) -> status {
    const std::size_t count = isize == 0 ? 0 : bytes.size() / isize;
    detail::validation_work += count;
    if (count == 0) return {};
    auto largest = detail::extrema<std::uint32_t, 1>::none();
    if (isize == 2)
      detail::scan<detail::index_key<std::uint16_t>>(largest, bytes.data(), 2, count);
    else
      detail::scan<detail::index_key<std::uint32_t>>(largest, bytes.data(), 4, count);
    if (largest.hi[0] < m.vertex_count) return {};
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t value = isize == 2 ? load_le_unchecked<std::uint16_t>(bytes.data() + 2 * i)
                                             : load_le_unchecked<std::uint32_t>(bytes.data() + 4 * i);
      if (value >= m.vertex_count) {
        // What to act on: the index value, the bound it broke and where it is.
        error e = fail(errc::index_value, field, value);
        e.context.limit = m.vertex_count;
        e.context.has_limit = true;
        char digits[24];
        std::size_t n = sizeof(digits);
        std::size_t position = i;
        do digits[--n] = static_cast<char>('0' + position % 10), position /= 10;
        while (position != 0);
        char where[32] = "index ";
        std::memcpy(where + 6, digits + n, sizeof(digits) - n);
        return e.with_subject(std::string_view(where, 6 + sizeof(digits) - n));
      }
    }
    return {};
  };
  UNTOLD_TRY(check_indices(indices, "indices"));
  UNTOLD_TRY(check_indices(edge_indices, "edgeIndices"));
  return {};
}

namespace detail {
/// What a mesh's deep rules need of its bytes, as extrema: the positions'
/// (position_key; PBR_STATIC_V1 only, none for PBR_QUANT_V1) and the largest
/// index and edge index, with the element counts they cover.
struct mesh_deep_extrema {
  std::size_t vertices = 0, indices = 0, edge_indices = 0;
  extrema<float, 3> positions = extrema<float, 3>::none();
  std::uint32_t largest_index = 0, largest_edge_index = 0;
};

/// Whether mesh `m` passes R-FINITE, R-BOUNDS and R-INDEX-VALUE given the
/// extrema of its bytes (validate_mesh_deep finds the first bad element
/// when it does not).
/// `float_positions`: the file's layout is PBR_STATIC_V1 (PBR_QUANT_V1
/// positions are codes inside localBounds, whose extent must be finite).
[[nodiscard]] inline bool mesh_deep_passes(const mesh_record& m, const mesh_deep_extrema& e,
                                           bool float_positions) noexcept {
  const bool positions = float_positions ? e.vertices == 0 || positions_inside(e.positions, m.local_bounds)
                                         : finite_extent(m.local_bounds);
  return all_finite(m.local_bounds) && positions && (e.indices == 0 || e.largest_index < m.vertex_count) &&
         (e.edge_indices == 0 || e.largest_edge_index < m.vertex_count);
}

/// Whether the asset's vertices hold float positions (PBR_STATIC_V1).
[[nodiscard]] inline bool has_float_positions(const asset& a) noexcept {
  return a.header().vertex_layout == static_cast<std::uint32_t>(vertex_layout::pbr_static_v1);
}

/// validate_mesh_deep of mesh `row` when its extrema `e` fail, else success.
template <class = void>
status check_mesh_deep(const asset& a, std::size_t row, const mesh_deep_extrema& e) {
  const mesh_record m = a.meshes()[row];
  if (mesh_deep_passes(m, e, has_float_positions(a))) return {};
  return validate_mesh_deep(a, row, a.vertices(m), a.indices(m), a.edge_indices(m));
}
}  // namespace detail

/// The deep rules that read no geometry, R-FINITE of: header bounds and root
/// transform, entity bounds and transforms (validate_deep runs them first).
template <class = void>
status validate_deep_records(const asset& a) {
  const file_header& h = a.header();
  if (!detail::all_finite(h.world_bounds)) return make_error(errc::not_finite, {.field = "worldBounds"});
  if (!detail::all_finite(h.root_transform)) return make_error(errc::not_finite, {.field = "rootTransform"});

  const auto entities = a.entities();
  for (std::size_t row = 0; row < entities.size(); ++row) {
    const entity_record e = entities[row];
    const char* field = !detail::all_finite(e.local_bounds)      ? "localBounds"
                        : !detail::all_finite(e.world_bounds)    ? "worldBounds"
                        : !detail::all_finite(e.local_transform) ? "localTransform"
                                                                 : nullptr;
    if (field) return detail::record_error(errc::not_finite, a, chunk_type::entity_table, row, field, 0);
  }
  return {};
}

// R-FINITE: header bounds and root transform, entity bounds and transforms,
// mesh bounds and vertex positions. R-BOUNDS: vertex positions inside the
// mesh's localBounds. R-INDEX-VALUE: indices and edge indices < vertexCount.
template <class = void>
status validate_deep(const asset& a) {
  UNTOLD_TRY(validate_deep_records(a));

  // Meshes may share (overlap) vertex and index bytes, so scanning every
  // mesh's ranges could cost (meshes x data), quadratic in the file size.
  // Range extrema answer each mesh in O(64 + log n); only a mesh they show
  // to be bad is scanned (validate_mesh_deep), to report its first bad element.
  const bool float_positions = detail::has_float_positions(a);
  detail::chunk_extrema<detail::position_key> positions(float_positions ? a.payload(chunk_type::vertex_data) : byte_span{},
                                                        vertex_stride_pbr_static_v1);
  detail::chunk_extrema<detail::index_key<std::uint16_t>> indices16(a.payload(chunk_type::index_data), 2),
      edges16(a.payload(chunk_type::edge_index_data), 2);
  detail::chunk_extrema<detail::index_key<std::uint32_t>> indices32(a.payload(chunk_type::index_data), 4),
      edges32(a.payload(chunk_type::edge_index_data), 4);

  const auto meshes = a.meshes();
  for (std::size_t row = 0; row < meshes.size(); ++row) {
    const mesh_record m = meshes[row];
    // Spans from the asset are inside their chunks by construction (empty
    // when a chunk is not loaded), so the range queries stay in bounds.
    const byte_span vertices = a.vertices(m), indices = a.indices(m), edges = a.edge_indices(m);
    const std::uint32_t isize = index_size(m.index_type);
    detail::mesh_deep_extrema e;
    e.vertices = float_positions ? vertices.size() / vertex_stride_pbr_static_v1 : 0;
    e.indices = isize == 0 ? 0 : indices.size() / isize;
    e.edge_indices = isize == 0 ? 0 : edges.size() / isize;
    if (e.vertices != 0) e.positions = positions.query(m.vertex_data_offset, e.vertices);
    const auto largest = [&](std::size_t count, std::uint64_t offset, auto& ranges16, auto& ranges32) {
      if (count == 0) return std::uint32_t{0};
      return isize == 2 ? ranges16.query(offset, count).hi[0] : ranges32.query(offset, count).hi[0];
    };
    e.largest_index = largest(e.indices, m.index_data_offset, indices16, indices32);
    e.largest_edge_index = largest(e.edge_indices, m.edge_index_offset(), edges16, edges32);
    UNTOLD_TRY(detail::check_mesh_deep(a, row, e));
  }
  return {};
}

}  // namespace untold
