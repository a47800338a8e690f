// untold/assetc/hmesh.hpp - assetc .hmesh v2: reader, validator, zero-copy
// views and a deterministic writer (docs/assetc.md, "hmesh").
//
// Reads: a 32-byte header ("HMSH", version 2, chunkCount, flags, 2 x u64
// reserved), a table of 24-byte entries (fourcc, flags, offset, size) and the
// chunks of the catalogue DESC BNDS VTXS IDXS MLET MLVR MLTR MLBN MTRL SUBM
// SKIN SKEL LODI LODT. Other chunks are kept (listed, payload reachable) and
// not interpreted. Every data chunk is a bare array sized by DESC, so the
// views below decode elements in place at any alignment: nothing is copied.
//
// Rejects (open_hmesh): HM-TRUNC HM-MAGIC HM-VERSION HM-LIMITS HM-CHUNK-ALIGN
// HM-CHUNK-RANGE HM-DUP-CHUNK HM-MISSING-CHUNK HM-DESC HM-CHUNK-SIZE
// HM-SUBMESH-RANGE HM-MATERIAL-SLOT HM-MESHLET-RANGE HM-SKEL-PARENT
// HM-LOD-RANGE; with open_options::deep_checks also HM-INDEX-VALUE
// HM-MESHLET-INDEX HM-SKIN-JOINT HM-FINITE (positions, bounds, weights, SKEL
// joint transforms). check_meshlet_coverage (separate, allocates) adds
// HM-MESHLET-COVER.
//
// Safe on untrusted input: every range is checked_range'd against the file,
// counts are checked against the chunk sizes and the caller's limits before
// use, work is linear in the file size (meshlet ranges may not overlap, so
// the deep meshlet pass touches each MLTR byte once), and the only
// allocation is one entry per table row (<= limits.max_chunks), charged to
// open_options::budget with the deep pass's values.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "../bytes.hpp"
#include "../detail/scan.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "../vertex.hpp"
#include "common.hpp"

namespace untold::assetc {

inline constexpr std::uint32_t hmesh_version = 2;
inline constexpr std::size_t hmesh_header_size = 32;
inline constexpr std::size_t hmesh_entry_size = 24;
inline constexpr std::uint32_t no_material = 0xFFFFFFFFu;

/// The chunks of the v2 catalogue, in the order the writer lays them out.
enum class chunk_id : std::uint8_t { desc, bnds, vtxs, idxs, mlet, mlvr, mltr, mlbn, mtrl, subm, skin, skel, lodi, lodt };
inline constexpr std::size_t chunk_id_count = 14;
inline constexpr std::array<std::uint32_t, chunk_id_count> chunk_fourccs = {
    fourcc("DESC"), fourcc("BNDS"), fourcc("VTXS"), fourcc("IDXS"), fourcc("MLET"), fourcc("MLVR"), fourcc("MLTR"),
    fourcc("MLBN"), fourcc("MTRL"), fourcc("SUBM"), fourcc("SKIN"), fourcc("SKEL"), fourcc("LODI"), fourcc("LODT")};

[[nodiscard]] constexpr std::uint32_t fourcc_of(chunk_id id) noexcept {
  return chunk_fourccs[static_cast<std::size_t>(id)];
}
/// The catalogue id of a fourcc, or nullopt for a chunk this reader keeps uninterpreted.
[[nodiscard]] constexpr std::optional<chunk_id> catalogue_id(std::uint32_t code) noexcept {
  for (std::size_t i = 0; i < chunk_id_count; ++i)
    if (chunk_fourccs[i] == code) return static_cast<chunk_id>(i);
  return std::nullopt;
}

// ---- records (plain values; codec<T> reads/writes the file layout) --------------------

using float3 = std::array<float, 3>;

struct hmesh_header {
  std::uint32_t magic = hmesh_magic;
  std::uint32_t version = hmesh_version;
  std::uint32_t chunk_count = 0;
  std::uint32_t flags = 0;
  std::uint64_t reserved1 = 0;
  std::uint64_t reserved2 = 0;
  friend constexpr bool operator==(const hmesh_header&, const hmesh_header&) = default;
};

struct chunk_entry {
  std::uint32_t fourcc = 0;
  std::uint32_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  friend constexpr bool operator==(const chunk_entry&, const chunk_entry&) = default;
};

/// DESC (32 B).
struct mesh_desc {
  std::uint32_t vertex_count = 0;
  std::uint32_t index_count = 0;
  std::uint32_t meshlet_count = 0;
  std::uint32_t submesh_count = 0;
  std::uint32_t material_count = 0;
  std::uint16_t vertex_stride = 28;
  std::uint8_t index_width = 4;  // 2 or 4
  std::uint8_t flags = 0;        // bit 0: has tangents
  std::uint32_t meshlet_max_vertices = 0;
  std::uint32_t meshlet_max_triangles = 0;
  friend constexpr bool operator==(const mesh_desc&, const mesh_desc&) = default;
};
inline constexpr std::uint8_t desc_flag_tangents = 1;

/// BNDS (40 B), also the bounds of a submesh.
struct mesh_bounds {
  float3 min{};
  float3 max{};
  float3 center{};
  float radius = 0;
  friend constexpr bool operator==(const mesh_bounds&, const mesh_bounds&) = default;
};

/// MLET (16 B). Offsets count elements: vertex_offset indexes MLVR (u32),
/// triangle_offset indexes MLTR triangles (3 bytes each), not bytes.
struct meshlet {
  std::uint32_t vertex_offset = 0;
  std::uint32_t vertex_count = 0;
  std::uint32_t triangle_offset = 0;
  std::uint32_t triangle_count = 0;
  friend constexpr bool operator==(const meshlet&, const meshlet&) = default;
};

/// MLTR (3 B): local vertex indices into the meshlet's MLVR range.
struct meshlet_triangle {
  std::array<std::uint8_t, 3> v{};
  friend constexpr bool operator==(const meshlet_triangle&, const meshlet_triangle&) = default;
};

/// MLBN (32 B).
struct meshlet_bound {
  float3 center{};
  float radius = 0;
  float3 cone_axis{};
  float cone_cutoff = 0;
  friend constexpr bool operator==(const meshlet_bound&, const meshlet_bound&) = default;
};

/// SUBM (64 B).
struct submesh {
  std::uint32_t first_index = 0;
  std::uint32_t index_count = 0;
  std::uint32_t first_meshlet = 0;
  std::uint32_t meshlet_count = 0;
  std::uint32_t material_slot = no_material;
  std::uint32_t base_vertex = 0;
  mesh_bounds bounds{};
  friend constexpr bool operator==(const submesh&, const submesh&) = default;
};

/// SKIN (24 B), parallel to VTXS.
struct skin_vertex {
  std::array<std::uint16_t, 4> joints{};
  std::array<float, 4> weights{};
  friend constexpr bool operator==(const skin_vertex&, const skin_vertex&) = default;
};

/// SKEL (112 B). inverse_bind is column-major; bind_rotation is xyzw.
struct joint {
  std::array<float, 16> inverse_bind{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  float3 bind_translation{};
  std::array<float, 4> bind_rotation{0, 0, 0, 1};
  float3 bind_scale{1, 1, 1};
  std::int32_t parent = -1;
  friend constexpr bool operator==(const joint&, const joint&) = default;
};

/// LODT row (8 B): a range of LODI.
struct mesh_lod {
  std::uint32_t first_index = 0;
  std::uint32_t index_count = 0;  // 0: simplification stalled, reuse the previous level
  friend constexpr bool operator==(const mesh_lod&, const mesh_lod&) = default;
};

}  // namespace untold::assetc

// Each record's fields once, in file order (records.hpp's record_traits): the
// one codec reads and writes them (assetc::codec<T> delegates to it).
namespace untold {

template <>
struct record_traits<assetc::hmesh_header> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return assetc::hmesh_header_size; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.magic, "magic"), v(r.version, "version"), v(r.chunk_count, "chunkCount"), v(r.flags, "flags");
    v(r.reserved1, "reserved1"), v(r.reserved2, "reserved2");
  }
};

template <>
struct record_traits<assetc::chunk_entry> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 24; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.fourcc, "fourcc"), v(r.flags, "flags"), v(r.offset, "offset"), v(r.size, "size");
  }
};

template <>
struct record_traits<assetc::mesh_desc> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 32; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.vertex_count, "vertexCount"), v(r.index_count, "indexCount"), v(r.meshlet_count, "meshletCount");
    v(r.submesh_count, "submeshCount"), v(r.material_count, "materialCount"), v(r.vertex_stride, "vertexStride");
    v(r.index_width, "indexWidth"), v(r.flags, "flags"), v(r.meshlet_max_vertices, "meshletMaxVertices");
    v(r.meshlet_max_triangles, "meshletMaxTriangles");
  }
};

template <>
struct record_traits<assetc::mesh_bounds> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 40; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.min, "min"), v(r.max, "max"), v(r.center, "center"), v(r.radius, "radius");
  }
};

template <>
struct record_traits<assetc::meshlet> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 16; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.vertex_offset, "vertexOffset"), v(r.vertex_count, "vertexCount"), v(r.triangle_offset, "triangleOffset");
    v(r.triangle_count, "triangleCount");
  }
};

template <>
struct record_traits<assetc::meshlet_triangle> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 3; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.v, "v");
  }
};

template <>
struct record_traits<assetc::meshlet_bound> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 32; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.center, "center"), v(r.radius, "radius"), v(r.cone_axis, "coneAxis"), v(r.cone_cutoff, "coneCutoff");
  }
};

template <>
struct record_traits<assetc::submesh> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 64; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.first_index, "firstIndex"), v(r.index_count, "indexCount"), v(r.first_meshlet, "firstMeshlet");
    v(r.meshlet_count, "meshletCount"), v(r.material_slot, "materialSlot"), v(r.base_vertex, "baseVertex");
    v(r.bounds, "bounds");
  }
};

template <>
struct record_traits<assetc::skin_vertex> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 24; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.joints, "joints"), v(r.weights, "weights");
  }
};

template <>
struct record_traits<assetc::joint> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 112; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    const zero_padding<4> padding{};
    v(r.inverse_bind, "inverseBind"), v(r.bind_translation, "bindTranslation"), v(r.bind_rotation, "bindRotation");
    v(r.bind_scale, "bindScale"), v(r.parent, "parent"), v(padding, "padding");
  }
};

template <>
struct record_traits<assetc::mesh_lod> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 8; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.first_index, "firstIndex"), v(r.index_count, "indexCount");
  }
};

}  // namespace untold

namespace untold::assetc {

/// IDXS: u16 or u32 per DESC.indexWidth, read as u32. Precondition of operator[]: i < size().
class index_view {
 public:
  constexpr index_view() noexcept = default;
  constexpr index_view(byte_span bytes, std::uint8_t width) noexcept : bytes_(bytes), width_(width == 2 ? 2 : 4) {}
  [[nodiscard]] constexpr std::size_t size() const noexcept { return bytes_.size() / width_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] constexpr std::uint8_t width() const noexcept { return width_; }
  [[nodiscard]] constexpr byte_span bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::uint32_t operator[](std::size_t i) const noexcept {
    return width_ == 2 ? load_le_unchecked<std::uint16_t>(bytes_.data() + 2 * i)
                       : load_le_unchecked<std::uint32_t>(bytes_.data() + 4 * i);
  }

 private:
  byte_span bytes_{};
  std::uint8_t width_ = 4;
};

// ---- the opened file ----------------------------------------------------------------

/// A validated .hmesh over the caller's bytes (which must outlive it). Every
/// accessor is infallible and bounds-safe: open_hmesh proved every size.
/// Absent optional chunks give empty views.
class hmesh {
 public:
  [[nodiscard]] byte_span file() const noexcept { return file_; }
  [[nodiscard]] hmesh_header header() const noexcept { return header_; }
  /// Every table row, in file order (catalogue and unknown chunks).
  [[nodiscard]] le_array<chunk_entry> chunks() const noexcept { return table_; }
  /// The payload of table row i. Precondition: i < chunks().size().
  [[nodiscard]] byte_span payload(std::size_t i) const noexcept {
    const chunk_entry e = table_[i];
    return file_.subspan(static_cast<std::size_t>(e.offset), static_cast<std::size_t>(e.size));
  }
  /// The payload of a catalogue chunk, or nullopt when absent.
  [[nodiscard]] std::optional<byte_span> chunk(chunk_id id) const noexcept {
    const std::size_t k = static_cast<std::size_t>(id);
    if (!present_[k]) return std::nullopt;
    return spans_[k];
  }
  [[nodiscard]] bool has(chunk_id id) const noexcept { return present_[static_cast<std::size_t>(id)]; }
  /// True when table row i is not in the catalogue (kept, not interpreted).
  [[nodiscard]] bool is_unknown(std::size_t i) const noexcept { return !catalogue_id(table_[i].fourcc); }

  [[nodiscard]] const mesh_desc& desc() const noexcept { return desc_; }
  [[nodiscard]] std::optional<mesh_bounds> bounds() const noexcept {
    if (!has(chunk_id::bnds)) return std::nullopt;
    return codec<mesh_bounds>::load(spans_[static_cast<std::size_t>(chunk_id::bnds)].data());
  }
  [[nodiscard]] gpu_vertex_view vertices() const noexcept { return *gpu_vertex_view::from_bytes(span(chunk_id::vtxs)); }
  [[nodiscard]] index_view indices() const noexcept { return {span(chunk_id::idxs), desc_.index_width}; }
  [[nodiscard]] le_array<meshlet> meshlets() const noexcept { return le_array<meshlet>(span(chunk_id::mlet)); }
  [[nodiscard]] le_array<std::uint32_t> meshlet_vertices() const noexcept {
    return le_array<std::uint32_t>(span(chunk_id::mlvr));
  }
  [[nodiscard]] le_array<meshlet_triangle> meshlet_triangles() const noexcept {
    return le_array<meshlet_triangle>(span(chunk_id::mltr));
  }
  [[nodiscard]] le_array<meshlet_bound> meshlet_bounds() const noexcept {
    return le_array<meshlet_bound>(span(chunk_id::mlbn));
  }
  [[nodiscard]] le_array<std::uint64_t> materials() const noexcept { return le_array<std::uint64_t>(span(chunk_id::mtrl)); }
  [[nodiscard]] le_array<submesh> submeshes() const noexcept { return le_array<submesh>(span(chunk_id::subm)); }
  [[nodiscard]] le_array<skin_vertex> skin() const noexcept { return le_array<skin_vertex>(span(chunk_id::skin)); }
  [[nodiscard]] le_array<joint> skeleton() const noexcept { return le_array<joint>(span(chunk_id::skel)); }
  [[nodiscard]] le_array<std::uint32_t> lod_indices() const noexcept { return le_array<std::uint32_t>(span(chunk_id::lodi)); }
  /// Reduced levels per submesh (LODT lodCount; 0 without LODT).
  [[nodiscard]] std::uint32_t lod_count() const noexcept { return lod_count_; }
  /// The LOD rows of submesh s, level 1 first. Precondition: s < desc().submesh_count.
  [[nodiscard]] le_array<mesh_lod> lods(std::size_t s) const noexcept {
    const byte_span t = span(chunk_id::lodt);
    if (lod_count_ == 0) return {};
    return le_array<mesh_lod>(t.subspan(8 + s * lod_count_ * 8, std::size_t{lod_count_} * 8));
  }
  /// Indices of LOD row `lod` (a range of LODI).
  [[nodiscard]] le_array<std::uint32_t> lod_index_range(mesh_lod lod) const noexcept {
    return le_array<std::uint32_t>(span(chunk_id::lodi).subspan(std::size_t{lod.first_index} * 4,
                                                                std::size_t{lod.index_count} * 4));
  }
  /// Meshlets of submesh s. Precondition: s < desc().submesh_count.
  [[nodiscard]] le_array<meshlet> submesh_meshlets(std::size_t s) const noexcept {
    const submesh m = submeshes()[s];
    return le_array<meshlet>(span(chunk_id::mlet).subspan(std::size_t{m.first_meshlet} * 16, std::size_t{m.meshlet_count} * 16));
  }
  /// The global vertices (MLVR range) of a meshlet of this mesh. Precondition: `m` is one of meshlets().
  [[nodiscard]] le_array<std::uint32_t> meshlet_vertex_range(const meshlet& m) const noexcept {
    return le_array<std::uint32_t>(span(chunk_id::mlvr).subspan(std::size_t{m.vertex_offset} * 4, std::size_t{m.vertex_count} * 4));
  }
  /// The local triangles (MLTR range) of a meshlet of this mesh. Precondition: `m` is one of meshlets().
  [[nodiscard]] le_array<meshlet_triangle> meshlet_triangle_range(const meshlet& m) const noexcept {
    return le_array<meshlet_triangle>(
        span(chunk_id::mltr).subspan(std::size_t{m.triangle_offset} * 3, std::size_t{m.triangle_count} * 3));
  }
  /// Indices of submesh s (LOD0). Precondition: s < desc().submesh_count.
  [[nodiscard]] index_view submesh_indices(std::size_t s) const noexcept {
    const submesh m = submeshes()[s];
    const std::size_t w = desc_.index_width;
    return {span(chunk_id::idxs).subspan(m.first_index * w, m.index_count * w), desc_.index_width};
  }

 private:
  friend result<hmesh> open_hmesh(byte_span, const open_options&);
  [[nodiscard]] byte_span span(chunk_id id) const noexcept { return spans_[static_cast<std::size_t>(id)]; }

  byte_span file_{};
  hmesh_header header_{};
  le_array<chunk_entry> table_{};
  std::array<byte_span, chunk_id_count> spans_{};
  std::array<bool, chunk_id_count> present_{};
  mesh_desc desc_{};
  std::uint32_t lod_count_ = 0;
};

/// Opens and validates a .hmesh (rules in the header comment). The result
/// views `bytes`. Safe on untrusted input; the bytes may be at any alignment.
[[nodiscard]] inline result<hmesh> open_hmesh(byte_span bytes, const open_options& options = {}) {
  hmesh m;
  m.file_ = bytes;
  if (bytes.size() < 4) return make_error(errc::hm_truncated).at_field("magic").with_value(bytes.size()).at_offset(0);
  if (magic_of(bytes) != hmesh_magic) return make_error(errc::hm_bad_magic).at_field("magic")
      .with_value(magic_of(bytes)).at_offset(0);
  if (bytes.size() < hmesh_header_size) return make_error(errc::hm_truncated).at_field("header")
      .with_value(bytes.size()).at_offset(0);
  m.header_ = codec<hmesh_header>::load(bytes.data());
  if (m.header_.version != hmesh_version) return make_error(errc::hm_bad_version).at_field("version")
      .with_value(m.header_.version).at_offset(4);
  const std::uint32_t n = m.header_.chunk_count;
  if (n > options.limits.max_chunks)
    return make_error(errc::hm_limit_exceeded).at_field("chunkCount").with_value(n)
        .with_limit(options.limits.max_chunks);
  const auto table = checked_range(hmesh_header_size, n, hmesh_entry_size, bytes.size());
  if (!table) return make_error(errc::hm_truncated).at_field("chunkCount").with_value(n).at_offset(8);
  m.table_ = le_array<chunk_entry>(subspan(bytes, *table));
  const std::uint64_t table_end = table->end();

  // Ranges, alignment, limits; then overlaps by sorting the non-empty ranges.
  budget own(options.limits, bytes.size());
  budget& spend = detail::reader_budget(options, own);
  UNTOLD_TRY(spend.charge_items(n, sizeof(std::pair<std::uint64_t, std::uint32_t>), "chunks", errc::hm_limit_exceeded));
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order;
  order.reserve(n);
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const chunk_entry e = m.table_[i];
    if (e.offset % 16 != 0) return make_error(errc::hm_chunk_align).at_field("offset").with_value(e.offset)
        .at_chunk(i, e.fourcc);
    if (e.size > options.limits.max_chunk_bytes) {
      error err = make_error(errc::hm_limit_exceeded).at_field("size").with_value(e.size).at_chunk(i, e.fourcc);
      err.context.limit = options.limits.max_chunk_bytes, err.context.has_limit = true;
      return err;
    }
    const auto r = checked_range(e.offset, e.size, 1, bytes.size());
    if (!r || (e.size != 0 && e.offset < table_end)) return make_error(errc::hm_chunk_range).at_field("offset")
        .with_value(e.offset).at_chunk(i, e.fourcc);
    total += e.size;  // each <= file size, n <= 2^32: no overflow
    if (e.size != 0) order.emplace_back(e.offset, i);
    if (const auto id = catalogue_id(e.fourcc)) {
      const std::size_t k = static_cast<std::size_t>(*id);
      if (m.present_[k]) return make_error(errc::hm_duplicate_chunk).at_field("fourcc").with_value(e.fourcc)
          .at_chunk(i, e.fourcc);
      m.present_[k] = true;
      m.spans_[k] = subspan(bytes, *r);
    }
  }
  if (total > options.limits.max_total_bytes)
    return make_error(errc::hm_limit_exceeded).at_field("total chunk bytes").with_value(total)
        .with_limit(options.limits.max_total_bytes);
  std::sort(order.begin(), order.end());
  for (std::size_t k = 1; k < order.size(); ++k) {
    const chunk_entry prev = m.table_[order[k - 1].second];
    if (prev.offset + prev.size > order[k].first) {
      const chunk_entry e = m.table_[order[k].second];
      return make_error(errc::hm_chunk_range).at_field("offset").with_value(e.offset)
          .at_chunk(order[k].second, e.fourcc);
    }
  }

  // Where a catalogue chunk sits in the table, for error context.
  auto row_of = [&m](chunk_id id) -> std::uint32_t {
    for (std::uint32_t i = 0; i < m.table_.size(); ++i)
      if (m.table_[i].fourcc == fourcc_of(id)) return i;
    return no_index;
  };
  auto size_fail = [&](chunk_id id, std::uint64_t expected) {
    error e = make_error(errc::hm_chunk_size).at_field("size").with_value(m.span(id).size())
        .at_chunk(row_of(id), fourcc_of(id));
    e.context.limit = expected, e.context.has_limit = true;
    return e;
  };
  auto missing = [&](chunk_id id) { return make_error(errc::hm_missing_chunk).at_field("fourcc")
      .with_value(fourcc_of(id)).at_chunk(no_index, fourcc_of(id)); };

  if (!m.has(chunk_id::desc)) return missing(chunk_id::desc);
  if (m.span(chunk_id::desc).size() != codec<mesh_desc>::size) return size_fail(chunk_id::desc, codec<mesh_desc>::size);
  const mesh_desc d = codec<mesh_desc>::load(m.span(chunk_id::desc).data());
  m.desc_ = d;
  const std::uint32_t desc_row = row_of(chunk_id::desc);
  if (d.vertex_stride != gpu_vertex_stride)
    return make_error(errc::hm_bad_desc).at_field("vertexStride").with_value(d.vertex_stride)
        .at_chunk(desc_row, fourcc_of(chunk_id::desc));
  if (d.index_width != 2 && d.index_width != 4)
    return make_error(errc::hm_bad_desc).at_field("indexWidth").with_value(d.index_width)
        .at_chunk(desc_row, fourcc_of(chunk_id::desc));
  const std::pair<const char*, std::uint32_t> counts[] = {{"vertexCount", d.vertex_count},
                                                          {"indexCount", d.index_count},
                                                          {"meshletCount", d.meshlet_count},
                                                          {"submeshCount", d.submesh_count},
                                                          {"materialCount", d.material_count}};
  for (const auto& [field, count] : counts)
    if (count > options.limits.max_records) {
      error e = make_error(errc::hm_limit_exceeded).at_field(field).with_value(count)
          .at_chunk(desc_row, fourcc_of(chunk_id::desc));
      e.context.limit = options.limits.max_records, e.context.has_limit = true;
      return e;
    }

  // Exact sizes from DESC (a missing chunk is only allowed when its count is 0).
  auto exact = [&](chunk_id id, std::uint64_t count, std::uint64_t element) -> status {
    if (!m.has(id)) {
      if (count != 0) return missing(id);
      return {};
    }
    if (m.span(id).size() != count * element) return size_fail(id, count * element);  // count < 2^32: no overflow
    return {};
  };
  auto whole = [&](chunk_id id, std::uint64_t element) -> status {
    if (m.span(id).size() % element != 0) return size_fail(id, m.span(id).size() / element * element);
    if (m.span(id).size() / element > options.limits.max_records) {
      error e = make_error(errc::hm_limit_exceeded).at_field("size").with_value(m.span(id).size() / element)
          .at_chunk(row_of(id), fourcc_of(id));
      e.context.limit = options.limits.max_records, e.context.has_limit = true;
      return e;
    }
    return {};
  };
  if (m.has(chunk_id::bnds) && m.span(chunk_id::bnds).size() != 40) return size_fail(chunk_id::bnds, 40);
  UNTOLD_TRY(exact(chunk_id::vtxs, d.vertex_count, gpu_vertex_stride));
  UNTOLD_TRY(exact(chunk_id::idxs, d.index_count, d.index_width));
  UNTOLD_TRY(exact(chunk_id::mlet, d.meshlet_count, 16));
  if (m.has(chunk_id::mlbn)) UNTOLD_TRY(exact(chunk_id::mlbn, d.meshlet_count, 32));
  UNTOLD_TRY(exact(chunk_id::mtrl, d.material_count, 8));
  UNTOLD_TRY(exact(chunk_id::subm, d.submesh_count, 64));
  UNTOLD_TRY(whole(chunk_id::mlvr, 4));
  UNTOLD_TRY(whole(chunk_id::mltr, 3));
  UNTOLD_TRY(whole(chunk_id::skel, 112));
  UNTOLD_TRY(whole(chunk_id::lodi, 4));
  if (m.has(chunk_id::skin)) {
    if (!m.has(chunk_id::skel)) return missing(chunk_id::skel);
    UNTOLD_TRY(exact(chunk_id::skin, d.vertex_count, 24));
  }

  // Submeshes: index/meshlet ranges and material slots.
  const le_array<submesh> subs = m.submeshes();
  const std::uint32_t subm_row = row_of(chunk_id::subm);
  for (std::uint32_t s = 0; s < subs.size(); ++s) {
    const submesh sm = subs[s];
    const std::uint32_t code = fourcc_of(chunk_id::subm);
    if (!checked_range(sm.first_index, sm.index_count, 1, d.index_count))
      return make_error(errc::hm_submesh_range).at_field("indexCount").with_value(sm.index_count).at_record(s)
          .at_chunk(subm_row, code);
    if (!checked_range(sm.first_meshlet, sm.meshlet_count, 1, d.meshlet_count))
      return make_error(errc::hm_submesh_range).at_field("meshletCount").with_value(sm.meshlet_count).at_record(s)
          .at_chunk(subm_row, code);
    if (sm.base_vertex > d.vertex_count)
      return make_error(errc::hm_submesh_range).at_field("baseVertex").with_value(sm.base_vertex).at_record(s)
          .at_chunk(subm_row, code);
    if (sm.material_slot != no_material && sm.material_slot >= d.material_count)
      return make_error(errc::hm_material_slot).at_field("materialSlot").with_value(sm.material_slot).at_record(s)
          .at_chunk(subm_row, code);
  }

  // Meshlets: ranges inside MLVR/MLTR, counts within the DESC maxima, and
  // no two meshlets sharing MLVR or MLTR elements (their sums fit).
  const le_array<meshlet> lets = m.meshlets();
  const std::uint64_t mlvr_count = m.span(chunk_id::mlvr).size() / 4;
  const std::uint64_t mltr_count = m.span(chunk_id::mltr).size() / 3;
  {
    const std::uint32_t row = row_of(chunk_id::mlet);
    const std::uint32_t code = fourcc_of(chunk_id::mlet);
    std::uint64_t vertex_sum = 0;
    std::uint64_t triangle_sum = 0;
    for (std::uint32_t i = 0; i < lets.size(); ++i) {
      const meshlet ml = lets[i];
      if (!checked_range(ml.vertex_offset, ml.vertex_count, 1, mlvr_count))
        return make_error(errc::hm_meshlet_range).at_field("vertexCount").with_value(ml.vertex_count).at_record(i)
            .at_chunk(row, code);
      if (!checked_range(ml.triangle_offset, ml.triangle_count, 1, mltr_count))
        return make_error(errc::hm_meshlet_range).at_field("triangleCount").with_value(ml.triangle_count)
            .at_record(i).at_chunk(row, code);
      if (ml.vertex_count > d.meshlet_max_vertices || ml.vertex_count > 256)
        return make_error(errc::hm_meshlet_range).at_field("vertexCount").with_value(ml.vertex_count).at_record(i)
            .at_chunk(row, code);
      if (ml.triangle_count > d.meshlet_max_triangles)
        return make_error(errc::hm_meshlet_range).at_field("triangleCount").with_value(ml.triangle_count)
            .at_record(i).at_chunk(row, code);
      vertex_sum += ml.vertex_count;
      triangle_sum += ml.triangle_count;
      if (vertex_sum > mlvr_count || triangle_sum > mltr_count)
        return make_error(errc::hm_meshlet_range).at_field(vertex_sum > mlvr_count ? "vertexCount" : "triangleCount")
            .with_value(vertex_sum > mlvr_count ? vertex_sum : triangle_sum).at_record(i).at_chunk(row, code);
    }
  }

  // Skeleton: parents are earlier joints or -1, so the hierarchy is a forest.
  const le_array<joint> joints = m.skeleton();
  for (std::uint32_t j = 0; j < joints.size(); ++j) {
    const std::int32_t parent = load_le_unchecked<std::int32_t>(m.span(chunk_id::skel).data() + std::size_t{j} * 112 + 104);
    if (parent != -1 && (parent < 0 || static_cast<std::uint32_t>(parent) >= j))
      return make_error(errc::hm_skeleton_parent).at_field("parent").with_value(static_cast<std::uint32_t>(parent))
          .at_record(j).at_chunk(row_of(chunk_id::skel), fourcc_of(chunk_id::skel));
  }

  // LODs: the table matches DESC and every range lands inside LODI.
  if (m.has(chunk_id::lodt)) {
    const byte_span t = m.span(chunk_id::lodt);
    const std::uint32_t row = row_of(chunk_id::lodt);
    const std::uint32_t code = fourcc_of(chunk_id::lodt);
    if (t.size() < 8) return size_fail(chunk_id::lodt, 8);
    const auto lod_count = load_le_unchecked<std::uint32_t>(t.data());
    const auto lod_submeshes = load_le_unchecked<std::uint32_t>(t.data() + 4);
    if (lod_submeshes != d.submesh_count) return make_error(errc::hm_lod_range).at_field("submeshCount")
        .with_value(lod_submeshes).at_chunk(row, code);
    const auto rows = checked_mul(lod_count, lod_submeshes);
    if (!rows || *rows > (t.size() - 8) / 8 || t.size() != 8 + *rows * 8) return size_fail(chunk_id::lodt, 8 + (rows ? *rows * 8 : 0));
    const std::uint64_t lodi_count = m.span(chunk_id::lodi).size() / 4;
    for (std::uint64_t r = 0; r < *rows; ++r) {
      const mesh_lod l = codec<mesh_lod>::load(t.data() + 8 + r * 8);
      if (!checked_range(l.first_index, l.index_count, 1, lodi_count))
        return make_error(errc::hm_lod_range).at_field("indexCount").with_value(l.index_count).at_record(r)
            .at_chunk(row, code);
    }
    m.lod_count_ = lod_submeshes == 0 ? 0 : lod_count;
  }

  if (!options.deep_checks) return m;

  // ---- deep: values ----
  UNTOLD_TRY(spend.charge_work(std::uint64_t{d.vertex_count} + m.indices().size() + m.meshlet_vertices().size() +
                                   m.lod_indices().size() + m.span(chunk_id::mltr).size() + m.skin().size() +
                                   joints.size(),
                               "deep values", errc::hm_limit_exceeded));
  auto value_fail = [&](errc code, chunk_id id, const char* field, std::uint64_t value, std::uint64_t record) {
    return make_error(code).at_field(field).with_value(value).at_record(record).at_chunk(row_of(id), fourcc_of(id));
  };
  // Each array is summarised in one pass (whether its values are in range,
  // or its floats finite: detail/scan.hpp); the element loops, which find the
  // first offending value for the error's context, run only when a summary
  // shows one.
  const index_view idx = m.indices();
  if (!untold::detail::indices_below(idx.bytes(), idx.width(), d.vertex_count))
    for (std::size_t i = 0; i < idx.size(); ++i)
      if (idx[i] >= d.vertex_count) return value_fail(errc::hm_index_value, chunk_id::idxs, "index", idx[i], i);
  const le_array<std::uint32_t> mlvr = m.meshlet_vertices();
  if (!untold::detail::indices_below(m.span(chunk_id::mlvr), 4, d.vertex_count))
    for (std::size_t i = 0; i < mlvr.size(); ++i)
      if (mlvr[i] >= d.vertex_count) return value_fail(errc::hm_index_value, chunk_id::mlvr, "vertex", mlvr[i], i);
  const le_array<std::uint32_t> lodi = m.lod_indices();
  if (!untold::detail::indices_below(m.span(chunk_id::lodi), 4, d.vertex_count))
    for (std::size_t i = 0; i < lodi.size(); ++i)
      if (lodi[i] >= d.vertex_count) return value_fail(errc::hm_index_value, chunk_id::lodi, "index", lodi[i], i);
  const byte_span mltr = m.span(chunk_id::mltr);
  for (std::uint32_t i = 0; i < lets.size(); ++i) {
    const meshlet ml = lets[i];
    const std::byte* p = mltr.data() + std::size_t{ml.triangle_offset} * 3;
    const std::size_t corners = std::size_t{ml.triangle_count} * 3;
    if (untold::detail::all_below_le<std::uint8_t>(p, corners, ml.vertex_count)) continue;
    for (std::size_t k = 0; k < corners; ++k)
      if (static_cast<std::uint8_t>(p[k]) >= ml.vertex_count)
        return value_fail(errc::hm_meshlet_index, chunk_id::mltr, "local index", static_cast<std::uint8_t>(p[k]),
                          std::size_t{ml.triangle_offset} + k / 3);
  }
  const le_array<skin_vertex> skin = m.skin();
  constexpr std::uint32_t skin_joint_words[] = {0, 1}, skin_weight_words[] = {2, 3, 4, 5};
  const auto skin_scan = untold::detail::scan_records(m.span(chunk_id::skin).data(), skin.size(), 24, skin_weight_words,
                                              skin_joint_words);
  const std::uint32_t joint_bound = std::max(skin_scan.ored & 0xFFFFu, skin_scan.ored >> 16);
  if (!skin_scan.all_finite || (!skin.empty() && joint_bound >= joints.size()))
    for (std::size_t v = 0; v < skin.size(); ++v) {
      const skin_vertex sv = skin[v];
      for (const std::uint16_t j : sv.joints)
        if (j >= joints.size()) return value_fail(errc::hm_skin_joint, chunk_id::skin, "joints", j, v);
      for (const float w : sv.weights)
        if (!detail::is_finite(w)) return make_error(errc::hm_not_finite).at_field("weights").with_float(w)
            .at_record(v).at_chunk(
              row_of(chunk_id::skin), fourcc_of(chunk_id::skin));
    }
  auto finite_bounds = [](const mesh_bounds& b) {
    for (const auto* a : {&b.min, &b.max, &b.center})
      for (const float f : *a)
        if (!detail::is_finite(f)) return false;
    return detail::is_finite(b.radius);
  };
  if (const auto b = m.bounds(); b && !finite_bounds(*b))
    return value_fail(errc::hm_not_finite, chunk_id::bnds, "bounds", 0, no_index);
  for (std::uint32_t s = 0; s < subs.size(); ++s)
    if (!finite_bounds(subs[s].bounds)) return value_fail(errc::hm_not_finite, chunk_id::subm, "bounds", 0, s);
  // SKEL: every float of a joint (inverse bind, bind translation, rotation, scale).
  const byte_span skel = m.span(chunk_id::skel);
  for (std::uint32_t j = 0; j < joints.size(); ++j) {
    for (std::size_t k = 0; k < 26; ++k) {
      const float f = load_le_unchecked<float>(skel.data() + std::size_t{j} * 112 + 4 * k);
      if (!detail::is_finite(f))
        return value_fail(errc::hm_not_finite, chunk_id::skel,
                          k < 16 ? "inverseBind" : k < 19 ? "bindTranslation" : k < 23 ? "bindRotation" : "bindScale", 0, j)
            .with_float(f);
    }
  }
  const byte_span vtx = m.span(chunk_id::vtxs);
  constexpr std::uint32_t position_words[] = {0, 1, 2};
  if (!untold::detail::scan_records(vtx.data(), d.vertex_count, gpu_vertex_stride, position_words, {}).all_finite)
    for (std::size_t v = 0; v < d.vertex_count; ++v)
    for (std::size_t c = 0; c < 3; ++c)
      if (!detail::is_finite(load_le_unchecked<float>(vtx.data() + v * gpu_vertex_stride + 4 * c)))
        return value_fail(errc::hm_not_finite, chunk_id::vtxs, "position", c, v);
  return m;
}

// ---- meshlet coverage ----------------------------------------------------------------

/// HM-MESHLET-COVER: for every submesh with meshlets, the triangles of its
/// meshlets (MLVR[vertexOffset + local] per corner) are exactly the
/// triangles of its IDXS range, as a multiset, each compared up to rotation
/// (winding kept). Not part of open_hmesh: it allocates two arrays of the
/// submesh's triangle count and sorts them (n log n). Submeshes without
/// meshlets are skipped. Precondition: `mesh` came from open_hmesh (any
/// options); safe on any such mesh (deep values are not assumed).
[[nodiscard]] inline status check_meshlet_coverage(const hmesh& mesh) {
  using tri = std::array<std::uint32_t, 3>;
  auto canonical = [](tri t) {
    // Rotate the smallest index first; rotation keeps the winding.
    while (t[0] > t[1] || t[0] > t[2]) t = {t[1], t[2], t[0]};
    return t;
  };
  const index_view idx = mesh.indices();
  const le_array<meshlet> lets = mesh.meshlets();
  const le_array<std::uint32_t> mlvr = mesh.meshlet_vertices();
  const le_array<meshlet_triangle> mltr = mesh.meshlet_triangles();
  // Submeshes sharing indices or meshlets cannot each be covered exactly; refusing
  // them first also keeps the work linear in the file.
  std::uint64_t index_sum = 0, meshlet_sum = 0;
  for (const submesh& sm : mesh.submeshes()) {
    if (sm.meshlet_count == 0) continue;
    index_sum += sm.index_count;
    meshlet_sum += sm.meshlet_count;
  }
  if (index_sum > idx.size() || meshlet_sum > lets.size())
    return make_error(errc::hm_meshlet_coverage).at_field(index_sum > idx.size() ? "indexCount" : "meshletCount")
        .with_value(index_sum > idx.size() ? index_sum : meshlet_sum).at_chunk(no_index, fourcc_of(chunk_id::subm));
  std::vector<tri> from_indices, from_meshlets;
  for (std::uint32_t s = 0; s < mesh.submeshes().size(); ++s) {
    const submesh sm = mesh.submeshes()[s];
    if (sm.meshlet_count == 0) continue;
    from_indices.clear();
    from_meshlets.clear();
    for (std::size_t i = 0; i + 2 < sm.index_count; i += 3) {
      const std::size_t at = std::size_t{sm.first_index} + i;
      from_indices.push_back(canonical({idx[at], idx[at + 1], idx[at + 2]}));
    }
    for (std::uint32_t k = sm.first_meshlet; k < sm.first_meshlet + sm.meshlet_count; ++k) {
      const meshlet ml = lets[k];
      for (std::uint32_t t = 0; t < ml.triangle_count; ++t) {
        const meshlet_triangle local = mltr[std::size_t{ml.triangle_offset} + t];
        tri g{};
        for (std::size_t c = 0; c < 3; ++c) {
          // A local index past the meshlet is HM-MESHLET-INDEX (deep); here it just cannot match.
          if (local.v[c] >= ml.vertex_count)
            return make_error(errc::hm_meshlet_coverage).at_field("local index").with_value(local.v[c]).at_record(s)
                .at_chunk(no_index, fourcc_of(chunk_id::mltr));
          g[c] = mlvr[std::size_t{ml.vertex_offset} + local.v[c]];
        }
        from_meshlets.push_back(canonical(g));
      }
    }
    std::sort(from_indices.begin(), from_indices.end());
    std::sort(from_meshlets.begin(), from_meshlets.end());
    if (from_indices != from_meshlets) {
      error e = make_error(errc::hm_meshlet_coverage).at_field("triangles").with_value(from_meshlets.size())
          .at_record(s).at_chunk(no_index, fourcc_of(chunk_id::subm));
      e.context.limit = from_indices.size(), e.context.has_limit = true;
      return e;
    }
  }
  return {};
}

// ---- writer --------------------------------------------------------------------------------

/// A chunk outside the catalogue, written after the catalogue chunks in input order.
struct extra_chunk {
  std::uint32_t fourcc = 0;
  std::uint32_t flags = 0;
  byte_span payload{};
};

/// What write_hmesh lays out. Spans must stay valid during the call. Counts
/// come from the spans (DESC is derived); empty optional parts are omitted.
struct hmesh_input {
  byte_span vertices{};                              // GpuVertex bytes (encode_gpu_vertices), count * 28
  std::span<const std::uint32_t> indices{};          // global vertex indices, all submeshes
  std::uint8_t index_width = 0;                      // 2, 4, or 0: 2 when vertexCount <= 65536
  std::uint8_t flags = 0;                            // DESC flags (desc_flag_tangents)
  mesh_bounds bounds{};                              // BNDS
  std::span<const meshlet> meshlets{};               // MLET (offsets in elements, see meshlet)
  std::span<const std::uint32_t> meshlet_vertices{}; // MLVR
  std::span<const meshlet_triangle> meshlet_triangles{};  // MLTR, dense
  std::span<const meshlet_bound> meshlet_bounds{};  // MLBN: empty or one per meshlet
  std::uint32_t meshlet_max_vertices = 0;            // DESC build parameters
  std::uint32_t meshlet_max_triangles = 0;
  std::span<const std::uint64_t> materials{};        // MTRL, dense slot order
  std::span<const submesh> submeshes{};              // SUBM
  std::span<const skin_vertex> skin{};               // SKIN: empty or one per vertex (needs skeleton)
  std::span<const joint> skeleton{};                 // SKEL
  std::span<const std::uint32_t> lod_indices{};      // LODI
  std::uint32_t lod_count = 0;                       // LODT levels per submesh (0: no LODI/LODT)
  std::span<const mesh_lod> lods{};                  // LODT rows [submesh][lod], submeshes x lod_count
  std::span<const extra_chunk> extra_chunks{};       // unknown chunks kept on a round trip
};

/// The bytes of a .hmesh: header, table, then the chunks in catalogue order
/// (DESC BNDS VTXS IDXS MLET MLVR MLTR MLBN MTRL SUBM, then SKIN SKEL when
/// there is a skeleton, LODI LODT when lod_count > 0, then extra_chunks),
/// each at the next multiple of 16 with zero padding, no padding after the
/// last one; chunk flags and reserved header fields 0. Deterministic.
/// The result is checked with open_hmesh(deep_checks): bad input (an index >=
/// vertexCount, a slot past the materials, a mismatched array...) is
/// returned as that HM- error, or invalid_argument for what the file cannot
/// express (more than 2^32 - 1 elements, a uint16 index width with
/// vertexCount > 65536, an extra chunk using a catalogue fourcc).
[[nodiscard]] inline result<std::vector<std::byte>> write_hmesh(const hmesh_input& in) {
  auto too_many = [](const char* field, std::size_t n) {
    return make_error(errc::invalid_argument).at_field(field).with_value(n);
  };
  if (in.vertices.size() % gpu_vertex_stride != 0) return too_many("vertices", in.vertices.size());
  const std::size_t vertex_count = in.vertices.size() / gpu_vertex_stride;
  for (const auto& [field, n] : {std::pair<const char*, std::size_t>{"vertices", vertex_count},
                                 {"indices", in.indices.size()},
                                 {"meshlets", in.meshlets.size()},
                                 {"submeshes", in.submeshes.size()},
                                 {"materials", in.materials.size()}})
    if (n > 0xFFFFFFFFu) return too_many(field, n);
  std::uint8_t width = in.index_width;
  if (width == 0) width = vertex_count <= 65536 ? 2 : 4;
  if (width != 2 && width != 4) return too_many("index_width", width);
  if (width == 2) {
    for (const std::uint32_t i : in.indices)
      if (i > 0xFFFFu) return make_error(errc::invalid_argument).at_field("indices").with_value(i);
  }
  for (std::size_t i = 0; i < in.extra_chunks.size(); ++i)
    if (catalogue_id(in.extra_chunks[i].fourcc)) return make_error(errc::invalid_argument).at_field("extra_chunks")
        .with_value(in.extra_chunks[i].fourcc).at_record(i);
  if (in.lod_count == 0 && (!in.lods.empty() || !in.lod_indices.empty()))
    return make_error(errc::invalid_argument).at_field("lod_count").with_value(0);
  if (in.lod_count != 0) {
    const auto rows = checked_mul(in.lod_count, in.submeshes.size());
    if (!rows || *rows != in.lods.size()) return make_error(errc::invalid_argument).at_field("lods")
        .with_value(in.lods.size());
  }

  mesh_desc d;
  d.vertex_count = static_cast<std::uint32_t>(vertex_count);
  d.index_count = static_cast<std::uint32_t>(in.indices.size());
  d.meshlet_count = static_cast<std::uint32_t>(in.meshlets.size());
  d.submesh_count = static_cast<std::uint32_t>(in.submeshes.size());
  d.material_count = static_cast<std::uint32_t>(in.materials.size());
  d.index_width = width;
  d.flags = in.flags;
  d.meshlet_max_vertices = in.meshlet_max_vertices;
  d.meshlet_max_triangles = in.meshlet_max_triangles;

  struct planned {
    std::uint32_t fourcc;
    std::uint32_t flags;
    std::uint64_t size;
  };
  std::vector<planned> plan;
  auto add = [&plan](chunk_id id, std::uint64_t size) { plan.push_back({fourcc_of(id), 0, size}); };
  add(chunk_id::desc, 32);
  add(chunk_id::bnds, 40);
  add(chunk_id::vtxs, in.vertices.size());
  add(chunk_id::idxs, in.indices.size() * width);
  add(chunk_id::mlet, in.meshlets.size() * 16);
  add(chunk_id::mlvr, in.meshlet_vertices.size() * 4);
  add(chunk_id::mltr, in.meshlet_triangles.size() * 3);
  add(chunk_id::mlbn, in.meshlet_bounds.size() * 32);
  add(chunk_id::mtrl, in.materials.size() * 8);
  add(chunk_id::subm, in.submeshes.size() * 64);
  if (!in.skin.empty()) add(chunk_id::skin, in.skin.size() * 24);
  if (!in.skin.empty() || !in.skeleton.empty()) add(chunk_id::skel, in.skeleton.size() * 112);
  if (in.lod_count != 0) {
    add(chunk_id::lodi, in.lod_indices.size() * 4);
    add(chunk_id::lodt, 8 + in.lods.size() * 8);
  }
  for (const extra_chunk& e : in.extra_chunks) plan.push_back({e.fourcc, e.flags, e.payload.size()});

  std::vector<std::byte> out;
  byte_sink sink(out);
  sink.zeros(hmesh_header_size);
  hmesh_header header;
  header.chunk_count = static_cast<std::uint32_t>(plan.size());
  codec<hmesh_header>::store(out.data(), header);
  const std::size_t table_at = sink.size();
  sink.zeros(plan.size() * hmesh_entry_size);

  std::size_t extra = 0;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    sink.align(16);
    const std::size_t at = sink.size();
    codec<chunk_entry>::store(out.data() + table_at + k * hmesh_entry_size, {plan[k].fourcc, plan[k].flags, at, plan[k].size});
    out.resize(at + plan[k].size);
    std::byte* p = out.data() + at;
    auto put_array = [&p](auto values) {
      using T = typename decltype(values)::value_type;
      for (const T& v : values) {
        codec<std::remove_cv_t<T>>::store(p, v);
        p += codec<std::remove_cv_t<T>>::size;
      }
    };
    const auto id = catalogue_id(plan[k].fourcc);
    if (!id) {
      const byte_span src = in.extra_chunks[extra++].payload;
      if (!src.empty()) std::memcpy(p, src.data(), src.size());
      continue;
    }
    switch (*id) {
      case chunk_id::desc: codec<mesh_desc>::store(p, d); break;
      case chunk_id::bnds: codec<mesh_bounds>::store(p, in.bounds); break;
      case chunk_id::vtxs:
        if (!in.vertices.empty()) std::memcpy(p, in.vertices.data(), in.vertices.size());
        break;
      case chunk_id::idxs:
        for (const std::uint32_t i : in.indices) {
          if (width == 2) store_le_unchecked(p, static_cast<std::uint16_t>(i));
          else store_le_unchecked(p, i);
          p += width;
        }
        break;
      case chunk_id::mlet: put_array(in.meshlets); break;
      case chunk_id::mlvr: put_array(in.meshlet_vertices); break;
      case chunk_id::mltr: put_array(in.meshlet_triangles); break;
      case chunk_id::mlbn: put_array(in.meshlet_bounds); break;
      case chunk_id::mtrl: put_array(in.materials); break;
      case chunk_id::subm: put_array(in.submeshes); break;
      case chunk_id::skin: put_array(in.skin); break;
      case chunk_id::skel: put_array(in.skeleton); break;
      case chunk_id::lodi: put_array(in.lod_indices); break;
      case chunk_id::lodt:
        store_le_unchecked(p, in.lod_count);
        store_le_unchecked(p + 4, static_cast<std::uint32_t>(in.submeshes.size()));
        p += 8;
        put_array(in.lods);
        break;
    }
  }
  open_options check;
  check.deep_checks = true;
  check.limits.max_chunks = 0xFFFFFFFFu;
  check.limits.max_chunk_bytes = ~std::uint64_t{0};
  check.limits.max_total_bytes = ~std::uint64_t{0};
  check.limits.max_records = 0xFFFFFFFFu;
  if (auto opened = open_hmesh(out, check); !opened) return opened.error();
  return out;
}

/// The uninterpreted chunks of `mesh`, ready for hmesh_input::extra_chunks
/// (they view mesh's bytes).
[[nodiscard]] inline std::vector<extra_chunk> unknown_chunks(const hmesh& mesh) {
  std::vector<extra_chunk> out;
  for (std::size_t i = 0; i < mesh.chunks().size(); ++i)
    if (mesh.is_unknown(i)) out.push_back({mesh.chunks()[i].fourcc, mesh.chunks()[i].flags, mesh.payload(i)});
  return out;
}

}  // namespace untold::assetc
