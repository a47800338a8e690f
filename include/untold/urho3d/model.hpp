// untold/urho3d/model.hpp - Urho3D binary models (.mdl): UMDL (legacy
// element mask), UMD2 (element descriptions) and rbfx's UMD3 (a version, then
// the UMD2 layout; morph weights from version 2).
//
// Reads: vertex buffers (layout, morph range, vertex bytes as a view into the
// file), index buffers (16/32-bit, a view), geometries (bone mapping, LOD
// levels), vertex morphs (per-vertex deltas, a view), the skeleton (bind TRS,
// 3x4 offset matrix, collision sphere/box), the bounding box and the optional
// per-geometry centres. Writes the same structure back byte-exactly.
//
// Rejects (open_model): U3D-MAGIC, U3D-MAGIC-NONE, U3D-VERSION, U3D-TRUNC,
// U3D-COUNT, U3D-STRING, U3D-ELEMENT-TYPE, U3D-ELEMENT-SEMANTIC,
// U3D-ELEMENT-MASK, U3D-VERTEX-SIZE, U3D-MORPH-RANGE, U3D-INDEX-SIZE,
// U3D-LOD-COUNT, U3D-PRIMITIVE, U3D-BUFFER-REF, U3D-DRAW-RANGE,
// U3D-BONE-MAPPING, U3D-BONE-PARENT, U3D-COLLISION, U3D-MORPH-BUFFER,
// U3D-MORPH-MASK, U3D-MORPH-VERTEX, U3D-TRAILING, R-LIMITS (counts, a bone
// deeper than limits.max_depth, the input's budget); with deep checks
// (validate_model_deep) also U3D-INDEX-VALUE, U3D-BLEND-INDEX, U3D-FINITE.
// NaN geometry centres are accepted (Urho3D only sorts by them).
//
// Safe on untrusted input: every count is checked against the remaining
// bytes (and the caller's limits and budget) before anything is allocated,
// every range is overflow-checked, no recursion, work linear in the file
// size. The returned model views the input buffer: keep it alive.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../budget.hpp"
#include "../detail/scan.hpp"
#include "../records.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::urho3d {

enum class model_kind : std::uint8_t { umdl, umd2, umd3 };

[[nodiscard]] constexpr std::string_view model_id(model_kind k) noexcept {
  switch (k) {
    case model_kind::umdl: return "UMDL";
    case model_kind::umd2: return "UMD2";
    case model_kind::umd3: return "UMD3";
  }
  return "UMDL";
}

enum class element_type : std::uint8_t { int32, float32, vector2, vector3, vector4, ubyte4, ubyte4_norm };
enum class element_semantic : std::uint8_t {
  position,
  normal,
  binormal,
  tangent,
  texcoord,
  color,
  blend_weights,
  blend_indices,
  object_index
};
enum class primitive_type : std::uint8_t { triangle_list, line_list, point_list, triangle_strip, line_strip, triangle_fan };

[[nodiscard]] constexpr std::uint32_t element_size(element_type t) noexcept {
  switch (t) {
    case element_type::int32:
    case element_type::float32:
    case element_type::ubyte4:
    case element_type::ubyte4_norm: return 4;
    case element_type::vector2: return 8;
    case element_type::vector3: return 12;
    case element_type::vector4: return 16;
  }
  return 0;
}

[[nodiscard]] constexpr std::string_view name(element_type t) noexcept {
  constexpr std::array<std::string_view, 7> names{"INT", "FLOAT", "VECTOR2", "VECTOR3", "VECTOR4", "UBYTE4", "UBYTE4_NORM"};
  return static_cast<std::size_t>(t) < names.size() ? names[static_cast<std::size_t>(t)] : "unknown";
}
[[nodiscard]] constexpr std::string_view name(element_semantic s) noexcept {
  constexpr std::array<std::string_view, 9> names{"POSITION", "NORMAL",       "BINORMAL",     "TANGENT",    "TEXCOORD",
                                                  "COLOR",    "BLENDWEIGHTS", "BLENDINDICES", "OBJECTINDEX"};
  return static_cast<std::size_t>(s) < names.size() ? names[static_cast<std::size_t>(s)] : "unknown";
}
[[nodiscard]] constexpr std::string_view name(primitive_type p) noexcept {
  constexpr std::array<std::string_view, 6> names{"TRIANGLE_LIST",  "LINE_LIST",  "POINT_LIST",
                                                  "TRIANGLE_STRIP", "LINE_STRIP", "TRIANGLE_FAN"};
  return static_cast<std::size_t>(p) < names.size() ? names[static_cast<std::size_t>(p)] : "unknown";
}

struct vertex_element {
  element_type type = element_type::float32;
  element_semantic semantic = element_semantic::position;
  std::uint8_t index = 0;
  std::uint32_t offset = 0;  // within a vertex; set by the reader (and by layout())
  friend constexpr bool operator==(const vertex_element&, const vertex_element&) = default;
};

/// The legacy mask bits of UMDL files, in vertex order.
struct legacy_element {
  std::uint32_t bit;
  element_type type;
  element_semantic semantic;
  std::uint8_t index;
};
inline constexpr std::array<legacy_element, 14> legacy_elements{{
    {0x1, element_type::vector3, element_semantic::position, 0},
    {0x2, element_type::vector3, element_semantic::normal, 0},
    {0x4, element_type::ubyte4_norm, element_semantic::color, 0},
    {0x8, element_type::vector2, element_semantic::texcoord, 0},
    {0x10, element_type::vector2, element_semantic::texcoord, 1},
    {0x20, element_type::vector3, element_semantic::texcoord, 0},  // cube texcoord 0
    {0x40, element_type::vector3, element_semantic::texcoord, 1},  // cube texcoord 1
    {0x80, element_type::vector4, element_semantic::tangent, 0},
    {0x100, element_type::vector4, element_semantic::blend_weights, 0},
    {0x200, element_type::ubyte4, element_semantic::blend_indices, 0},
    {0x400, element_type::vector4, element_semantic::texcoord, 4},  // instance matrix rows
    {0x800, element_type::vector4, element_semantic::texcoord, 5},
    {0x1000, element_type::vector4, element_semantic::texcoord, 6},
    {0x2000, element_type::int32, element_semantic::object_index, 0},
}};
inline constexpr std::uint32_t legacy_mask_bits = 0x3FFF;

/// Fills each element's offset (tight packing in declaration order) and
/// returns the vertex size. No preconditions.
inline std::uint32_t layout(std::vector<vertex_element>& elements) noexcept {
  std::uint32_t offset = 0;
  for (vertex_element& e : elements) {
    e.offset = offset;
    offset += element_size(e.type);
  }
  return offset;
}

/// The elements a legacy mask declares (bits above 0x2000 are ignored: the
/// reader rejects them first).
[[nodiscard]] inline std::vector<vertex_element> elements_from_mask(std::uint32_t mask) {
  std::vector<vertex_element> out;
  for (const legacy_element& l : legacy_elements)
    if ((mask & l.bit) != 0) out.push_back({l.type, l.semantic, l.index, 0});
  layout(out);
  return out;
}

struct vertex_buffer {
  std::uint32_t vertex_count = 0;
  std::uint32_t legacy_mask = 0;  // UMDL: the stored mask; elements derive from it
  std::vector<vertex_element> elements;
  std::uint32_t vertex_size = 0;
  std::uint32_t morph_range_start = 0, morph_range_count = 0;
  byte_span data;  // vertex_count * vertex_size bytes

  /// The first element with this semantic and index, or nullptr.
  [[nodiscard]] const vertex_element* find(element_semantic s, std::uint8_t index = 0) const noexcept {
    for (const vertex_element& e : elements)
      if (e.semantic == s && e.index == index) return &e;
    return nullptr;
  }
  /// The bytes of vertex v. Precondition: v < vertex_count, data sized as above.
  [[nodiscard]] const std::byte* vertex(std::uint32_t v) const noexcept {
    return data.data() + static_cast<std::size_t>(v) * vertex_size;
  }
};

struct index_buffer {
  std::uint32_t index_count = 0;
  std::uint32_t index_size = 2;  // 2 or 4
  byte_span data;                // index_count * index_size bytes

  /// Index i. Precondition: i < index_count, data sized as above.
  [[nodiscard]] std::uint32_t at(std::size_t i) const noexcept {
    return index_size == 2 ? load_le_unchecked<std::uint16_t>(data.data() + 2 * i)
                           : load_le_unchecked<std::uint32_t>(data.data() + 4 * i);
  }
};

struct lod_level {
  float distance = 0;
  primitive_type primitive = primitive_type::triangle_list;
  std::uint32_t vertex_buffer = 0, index_buffer = 0;
  std::uint32_t index_start = 0, index_count = 0;
};

struct geometry {
  std::vector<std::uint32_t> bone_mapping;  // geometry bone index -> skeleton bone; empty: identity
  std::vector<lod_level> lods;
};

inline constexpr std::uint32_t morph_position = 0x1, morph_normal = 0x2, morph_tangent = 0x80;

struct morph_buffer {
  std::uint32_t buffer = 0;  // vertex buffer index
  std::uint32_t mask = 0;    // morph_position | morph_normal | morph_tangent
  std::uint32_t vertex_count = 0;
  byte_span data;            // vertex_count * stride() bytes

  /// u32 vertex index, then a vec3 per masked element (tangent is xyz here).
  [[nodiscard]] constexpr std::uint32_t stride() const noexcept {
    return 4 + ((mask & morph_position) != 0 ? 12 : 0) + ((mask & morph_normal) != 0 ? 12 : 0) +
           ((mask & morph_tangent) != 0 ? 12 : 0);
  }
  /// Vertex index of entry i. Precondition: i < vertex_count.
  [[nodiscard]] std::uint32_t vertex_index(std::uint32_t i) const noexcept {
    return load_le_unchecked<std::uint32_t>(data.data() + static_cast<std::size_t>(i) * stride());
  }
  /// The delta of element `bit` for entry i (zero when not masked).
  [[nodiscard]] float3 delta(std::uint32_t i, std::uint32_t bit) const noexcept {
    if ((mask & bit) == 0) return {0, 0, 0};
    std::size_t at = static_cast<std::size_t>(i) * stride() + 4;
    if (bit != morph_position && (mask & morph_position) != 0) at += 12;
    if (bit == morph_tangent && (mask & morph_normal) != 0) at += 12;
    return {load_le_unchecked<float>(data.data() + at), load_le_unchecked<float>(data.data() + at + 4),
            load_le_unchecked<float>(data.data() + at + 8)};
  }
};

struct morph {
  std::string_view name;
  float weight = 0;  // UMD3 version >= 2 only
  std::vector<morph_buffer> buffers;
};

inline constexpr std::uint8_t collision_sphere = 1, collision_box = 2;

struct bone {
  std::string_view name;
  std::uint32_t parent = 0;  // its own index for a root
  float3 position{0, 0, 0};
  quat_wxyz rotation{1, 0, 0, 0};
  float3 scale{1, 1, 1};
  std::array<float, 12> offset_matrix{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};  // 3x4 row-major
  std::uint8_t collision_mask = 0;
  float radius = 0;                                  // when collision_mask & 1
  float3 box_min{0, 0, 0}, box_max{0, 0, 0};         // when collision_mask & 2

  [[nodiscard]] constexpr bool is_root(std::uint32_t self) const noexcept { return parent == self; }
};

struct model {
  model_kind kind = model_kind::umd2;
  std::uint32_t version = 1;  // UMD3's stored version; 1 for UMDL/UMD2
  std::vector<vertex_buffer> vertex_buffers;
  std::vector<index_buffer> index_buffers;
  std::vector<geometry> geometries;
  std::vector<morph> morphs;
  std::vector<bone> bones;
  float3 bounds_min{0, 0, 0}, bounds_max{0, 0, 0};
  std::vector<float3> geometry_centers;  // empty (older files) or one per geometry

  [[nodiscard]] constexpr bool has_morph_weights() const noexcept { return kind == model_kind::umd3 && version >= 2; }
};

}  // namespace untold::urho3d

// The fixed-layout parts of the model's records, described once for the
// reader and the writer (records.hpp). A bone's name and collision data,
// and a morph buffer's vertex data, follow them in the file.
template <>
struct untold::record_traits<untold::urho3d::bone> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 92; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.parent, "parent"), v(r.position, "position"), v(r.rotation, "rotation"), v(r.scale, "scale");
    v(r.offset_matrix, "offsetMatrix");
  }
};

template <>
struct untold::record_traits<untold::urho3d::morph_buffer> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 12; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.buffer, "buffer"), v(r.mask, "elementMask"), v(r.vertex_count, "vertexCount");
  }
};

namespace untold::urho3d {

struct model_options {
  untold::limits limits{};
  bool deep_checks = false;  // + U3D-INDEX-VALUE, U3D-BLEND-INDEX, U3D-FINITE
  /// The input's budget (budget.hpp), shared with the stages that follow
  /// (import, cook); none: the reader makes its own from `limits`.
  untold::budget* budget = nullptr;
};

/// Highest UMD3 version this reader knows (rbfx's morphWeightVersion).
inline constexpr std::uint32_t max_model_version = 2;

/// True when `head` starts with UMDL, UMD2 or UMD3.
[[nodiscard]] inline bool is_model(byte_span head) noexcept {
  return starts_with_id(head, "UMDL") || starts_with_id(head, "UMD2") || starts_with_id(head, "UMD3");
}

namespace detail {

/// U3D-BONE-PARENT (a parent out of range, a cycle) and R-LIMITS (field
/// boneDepth) for a bone more than limits.max_depth levels below its root:
/// every consumer that walks the chain (joint paths in cook, an engine's
/// recursive skeleton) then stays within that depth.
[[nodiscard]] inline status check_bone_parents(const std::vector<bone>& bones, std::uint64_t skeleton_offset,
                                               const untold::limits& lim) {
  const std::size_t n = bones.size();
  for (std::size_t i = 0; i < n; ++i)
    if (bones[i].parent >= n)
      return make_error(errc::u3d_bone_parent).at_field("bone.parent").with_value(bones[i].parent)
          .at_offset(skeleton_offset).with_subject(bones[i].name);
  // Linear cycle and depth check without recursion: walk each unvisited
  // chain, marking it "on the current path"; meeting a marked-on-path bone is
  // a cycle; a chain ends at a root or at a bone whose depth is known.
  std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on the current path, 2 depth known
  std::vector<std::uint32_t> depth(n, 0);
  std::vector<std::uint32_t> path;
  for (std::size_t start = 0; start < n; ++start) {
    path.clear();
    std::uint32_t b = static_cast<std::uint32_t>(start);
    while (state[b] == 0) {
      state[b] = 1;
      path.push_back(b);
      if (bones[b].parent == b) break;
      b = bones[b].parent;
    }
    if (state[b] == 1 && bones[b].parent != b)
      return make_error(errc::u3d_bone_parent).at_field("bone.parent").with_value(bones[b].parent)
          .at_offset(skeleton_offset).with_subject(bones[b].name);
    // path.back() is a root (state 1) or the child of b (state 2).
    std::uint64_t d = state[b] == 2 ? std::uint64_t{depth[b]} + 1 : 0;
    for (std::size_t k = path.size(); k-- > 0; ++d) {
      const std::uint32_t p = path[k];
      if (d > lim.max_depth)
        return make_error(errc::limit_exceeded).at_field("boneDepth").with_value(d).with_limit(lim.max_depth)
            .at_record(p).at_offset(skeleton_offset).with_subject(bones[p].name);
      depth[p] = static_cast<std::uint32_t>(d);
      state[p] = 2;
    }
  }
  return {};
}

[[nodiscard]] inline status read_vertex_buffer(byte_cursor& c, model_kind kind, const untold::limits& lim,
                                               untold::budget& budget, vertex_buffer& vb) {
  auto count = c.read<std::uint32_t>("vertexCount");
  if (!count) return count.error();
  vb.vertex_count = *count;
  if (kind == model_kind::umdl) {
    const std::uint64_t at = c.offset();
    auto mask = c.read<std::uint32_t>("elementMask");
    if (!mask) return mask.error();
    if ((*mask & ~legacy_mask_bits) != 0) return make_error(errc::u3d_element_mask).at_field("elementMask")
        .with_value(*mask).at_offset(at);
    vb.legacy_mask = *mask;
    vb.elements = elements_from_mask(*mask);
  } else {
    auto n = c.count_u32(4, "elementCount", lim.max_records, errc::limit_exceeded);
    if (!n) return n.error();
    UNTOLD_TRY(budget.charge_items(*n, sizeof(vertex_element), "elements", errc::limit_exceeded));
    vb.elements.reserve(*n);
    for (std::uint32_t j = 0; j < *n; ++j) {
      const std::uint64_t at = c.offset();
      auto desc = c.read<std::uint32_t>("element");
      if (!desc) return desc.error();
      const std::uint32_t type = *desc & 0xFFu, semantic = (*desc >> 8) & 0xFFu;
      if (type > 6 || (*desc >> 24) != 0) return make_error(errc::u3d_element_type).at_field("element.type")
          .with_value(*desc).at_offset(at);
      if (semantic > 8) return make_error(errc::u3d_element_semantic).at_field("element.semantic").with_value(*desc)
          .at_offset(at);
      vb.elements.push_back({static_cast<element_type>(type), static_cast<element_semantic>(semantic),
                             static_cast<std::uint8_t>((*desc >> 16) & 0xFFu), 0});
    }
    layout(vb.elements);
  }
  std::uint64_t size = 0;
  for (const vertex_element& e : vb.elements) size += element_size(e.type);
  vb.vertex_size = static_cast<std::uint32_t>(size);  // <= 16 x 2^24 elements: fits
  const std::uint64_t at = c.offset();
  auto start = c.read<std::uint32_t>("morphRangeStart");
  if (!start) return start.error();
  auto range = c.read<std::uint32_t>("morphRangeCount");
  if (!range) return range.error();
  vb.morph_range_start = *start;
  vb.morph_range_count = *range;
  if (std::uint64_t{*start} + *range > vb.vertex_count)
    return make_error(errc::u3d_morph_range).at_field("morphRangeCount").with_value(std::uint64_t{*start} + *range)
        .at_offset(at);
  const std::uint64_t bytes = std::uint64_t{vb.vertex_count} * vb.vertex_size;
  // The engine sizes the read in u32; a buffer with vertices but no layout has no bytes to read.
  if ((vb.vertex_size == 0 && vb.vertex_count != 0) || bytes > 0xFFFFFFFFu)
    return c.fail(errc::u3d_vertex_size, "vertexSize", vb.vertex_size);
  auto data = c.array_bytes(vb.vertex_count, vb.vertex_size, "vertexData");
  if (!data) return data.error();
  vb.data = *data;
  return {};
}

}  // namespace detail

/// The draw-range work the deep checks and the importer allow: the LODs'
/// index counts summed may reach 8x the indices stored plus 64 Ki. Real
/// files stay near 1x (LOD ranges rarely overlap); without a cap, thousands
/// of 24-byte LOD records over one large range would make the work grow with
/// the square of the file size.
[[nodiscard]] inline std::uint64_t draw_budget(const model& m) noexcept {
  std::uint64_t stored = 0;
  for (const index_buffer& ib : m.index_buffers) stored += ib.index_count;
  return 8 * stored + 65536;
}
/// R-LIMITS (field drawRanges) when the summed LOD index counts exceed draw_budget.
[[nodiscard]] inline status check_draw_budget(const model& m) noexcept {
  std::uint64_t drawn = 0;
  for (const geometry& g : m.geometries)
    for (const lod_level& l : g.lods) drawn += l.index_count;
  if (drawn <= draw_budget(m)) return {};
  error e = make_error(errc::limit_exceeded);
  e.context.field = "drawRanges";
  e.context.value = drawn;
  e.context.has_value = true;
  e.context.limit = draw_budget(m);
  e.context.has_limit = true;
  return e;
}

[[nodiscard]] inline status validate_model_deep(const model& m, byte_span file = {});

/// Reads and checks a .mdl (see the header comment for the rules).
/// Preconditions: none; `file` may hold any bytes (safe on untrusted input).
/// The result views `file`.
/// What it holds is charged to options.budget (R-LIMITS beyond it).
[[nodiscard]] inline result<model> open_model(byte_span file, const model_options& options = {}) {
  const untold::limits& lim = options.limits;
  untold::budget own(lim, file.size());
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const auto hold = [&budget](std::uint64_t count, std::uint64_t each, const char* what) {
    return budget.charge_items(count, each, what, errc::limit_exceeded);
  };
  byte_cursor c(file, u3d_rules);
  model m;
  if (starts_with_id(file, "UMDL")) {
    m.kind = model_kind::umdl;
  } else if (starts_with_id(file, "UMD2")) {
    m.kind = model_kind::umd2;
  } else if (starts_with_id(file, "UMD3")) {
    m.kind = model_kind::umd3;
  } else {
    // Early-2011 models start directly with a (small) vertex buffer count.
    const auto first = load_le<std::uint32_t>(file, 0);
    if (first && *first > 0 && *first < 256) return make_error(errc::u3d_no_identifier).at_field("id")
        .with_value(*first).at_offset(0);
    error unknown = make_error(errc::u3d_bad_magic).at_field("id").at_offset(0);
    return first ? unknown.with_value(*first) : unknown;
  }
  (void)c.skip(4, "id");
  if (m.kind == model_kind::umd3) {
    const std::uint64_t at = c.offset();
    auto v = c.read<std::uint32_t>("version");
    if (!v) return v.error();
    if (*v < 1 || *v > max_model_version) return make_error(errc::u3d_bad_version).at_field("version").with_value(*v)
        .at_offset(at);
    m.version = *v;
  }

  // Vertex buffers: at least 16 bytes each (count, mask/elementCount, morph range).
  auto vb_count = c.count_u32(16, "vertexBufferCount", lim.max_records, errc::limit_exceeded);
  if (!vb_count) return vb_count.error();
  UNTOLD_TRY(hold(*vb_count, sizeof(vertex_buffer), "vertexBuffers"));
  m.vertex_buffers.resize(*vb_count);
  for (vertex_buffer& vb : m.vertex_buffers) UNTOLD_TRY(detail::read_vertex_buffer(c, m.kind, lim, budget, vb));

  auto ib_count = c.count_u32(8, "indexBufferCount", lim.max_records, errc::limit_exceeded);
  if (!ib_count) return ib_count.error();
  UNTOLD_TRY(hold(*ib_count, sizeof(index_buffer), "indexBuffers"));
  m.index_buffers.resize(*ib_count);
  for (index_buffer& ib : m.index_buffers) {
    auto n = c.read<std::uint32_t>("indexCount");
    if (!n) return n.error();
    const std::uint64_t at = c.offset();
    auto size = c.read<std::uint32_t>("indexSize");
    if (!size) return size.error();
    if (*size != 2 && *size != 4) return make_error(errc::u3d_index_size).at_field("indexSize").with_value(*size)
        .at_offset(at);
    ib.index_count = *n;
    ib.index_size = *size;
    auto data = c.array_bytes(*n, *size, "indexData");
    if (!data) return data.error();
    ib.data = *data;
  }

  auto geometry_count = c.count_u32(8, "geometryCount", lim.max_records, errc::limit_exceeded);
  if (!geometry_count) return geometry_count.error();
  UNTOLD_TRY(hold(*geometry_count, sizeof(geometry), "geometries"));
  m.geometries.resize(*geometry_count);
  std::uint64_t lod_total = 0;
  for (geometry& g : m.geometries) {
    auto mapping = c.count_u32(4, "boneMappingCount", lim.max_records, errc::limit_exceeded);
    if (!mapping) return mapping.error();
    auto mapping_bytes = c.array_bytes(*mapping, 4, "boneMapping");
    if (!mapping_bytes) return mapping_bytes.error();
    UNTOLD_TRY(hold(*mapping, 4, "boneMapping"));
    g.bone_mapping.resize(*mapping);
    for (std::uint32_t j = 0; j < *mapping; ++j) g.bone_mapping[j] = load_le_unchecked<std::uint32_t>(mapping_bytes->data() + 4 * j);
    const std::uint64_t lod_at = c.offset();
    auto lods = c.count_u32(24, "lodCount", lim.max_records, errc::limit_exceeded);
    if (!lods) return lods.error();
    if (*lods == 0) return make_error(errc::u3d_lod_count).at_field("lodCount").with_value(0).at_offset(lod_at);
    lod_total += *lods;
    if (lod_total > lim.max_records) return make_error(errc::limit_exceeded).at_field("lodCount")
        .with_value(lod_total).at_offset(lod_at);
    UNTOLD_TRY(hold(*lods, sizeof(lod_level), "lods"));
    g.lods.resize(*lods);
    for (lod_level& l : g.lods) {
      const std::uint64_t at = c.offset();
      auto raw = c.bytes(24, "lod");
      if (!raw) return raw.error();
      const std::byte* p = raw->data();
      l.distance = load_le_unchecked<float>(p);
      const std::uint32_t prim = load_le_unchecked<std::uint32_t>(p + 4);
      if (prim > 5) return make_error(errc::u3d_primitive_type).at_field("primitiveType").with_value(prim)
          .at_offset(at + 4);
      l.primitive = static_cast<primitive_type>(prim);
      l.vertex_buffer = load_le_unchecked<std::uint32_t>(p + 8);
      l.index_buffer = load_le_unchecked<std::uint32_t>(p + 12);
      l.index_start = load_le_unchecked<std::uint32_t>(p + 16);
      l.index_count = load_le_unchecked<std::uint32_t>(p + 20);
      if (l.vertex_buffer >= m.vertex_buffers.size())
        return make_error(errc::u3d_buffer_ref).at_field("vertexBuffer").with_value(l.vertex_buffer).at_offset(at + 8);
      if (l.index_buffer >= m.index_buffers.size())
        return make_error(errc::u3d_buffer_ref).at_field("indexBuffer").with_value(l.index_buffer).at_offset(at + 12);
      if (std::uint64_t{l.index_start} + l.index_count > m.index_buffers[l.index_buffer].index_count)
        return make_error(errc::u3d_draw_range).at_field("indexCount")
            .with_value(std::uint64_t{l.index_start} + l.index_count).at_offset(at + 20);
    }
  }

  // Morphs: at least a NUL and a buffer count each.
  auto morph_count = c.count_u32(5, "morphCount", lim.max_records, errc::limit_exceeded);
  if (!morph_count) return morph_count.error();
  UNTOLD_TRY(hold(*morph_count, sizeof(morph), "morphs"));
  m.morphs.resize(*morph_count);
  std::vector<std::uint32_t> seen_in(m.vertex_buffers.size(), ~std::uint32_t{0});  // last morph naming each buffer
  for (std::uint32_t mi = 0; mi < *morph_count; ++mi) {
    morph& mo = m.morphs[mi];
    auto name = detail::read_name(c, "morph.name");
    if (!name) return name.error();
    mo.name = *name;
    if (m.has_morph_weights()) {
      auto w = c.read<float>("morph.weight");
      if (!w) return w.error();
      mo.weight = *w;
    }
    auto buffers = c.count_u32(12, "morph.bufferCount", lim.max_records, errc::limit_exceeded);
    if (!buffers) return buffers.error();
    UNTOLD_TRY(hold(*buffers, sizeof(morph_buffer), "morph.buffers"));
    mo.buffers.resize(*buffers);
    for (morph_buffer& mb : mo.buffers) {
      const std::uint64_t at = c.offset();
      auto head = c.record<morph_buffer>("morph.buffer");
      if (!head) return head.error();
      if (head->buffer >= m.vertex_buffers.size() || seen_in[head->buffer] == mi)
        return make_error(errc::u3d_morph_buffer).at_field("morph.buffer").with_value(head->buffer).at_offset(at)
            .with_subject(mo.name);
      seen_in[head->buffer] = mi;
      if (head->mask == 0 || (head->mask & ~(morph_position | morph_normal | morph_tangent)) != 0)
        return make_error(errc::u3d_morph_mask).at_field("morph.elementMask").with_value(head->mask)
            .at_offset(at + 4).with_subject(mo.name);
      mb = *head;
      const std::uint64_t data_at = c.offset();
      auto data = c.array_bytes(mb.vertex_count, mb.stride(), "morph.vertices");
      if (!data) return data.error();
      mb.data = *data;
      UNTOLD_TRY(budget.charge_work(mb.vertex_count, "morph.vertices", errc::limit_exceeded));
      const std::uint32_t limit = m.vertex_buffers[mb.buffer].vertex_count;
      for (std::uint32_t v = 0; v < mb.vertex_count; ++v)
        if (mb.vertex_index(v) >= limit)
          return make_error(errc::u3d_morph_vertex).at_field("morph.vertexIndex").with_value(mb.vertex_index(v))
              .at_offset(data_at + std::uint64_t{v} * mb.stride())
              .with_subject(mo.name);
    }
  }

  // Skeleton: a bone is at least a NUL, 4 + 40 + 48 bytes and the collision mask.
  const std::uint64_t skeleton_at = c.offset();
  auto bone_count = c.count_u32(94, "boneCount", lim.max_records, errc::limit_exceeded);
  if (!bone_count) return bone_count.error();
  UNTOLD_TRY(hold(*bone_count, sizeof(bone), "bones"));
  m.bones.resize(*bone_count);
  for (bone& b : m.bones) {
    auto name = detail::read_name(c, "bone.name");
    if (!name) return name.error();
    auto pose = c.record<bone>("bone");
    if (!pose) return pose.error();
    b = *pose;
    b.name = *name;
    auto mask = c.read<std::uint8_t>("bone.collisionMask");
    if (!mask) return mask.error();
    b.collision_mask = *mask;
    if ((b.collision_mask & ~(collision_sphere | collision_box)) != 0)
      return c.fail(errc::u3d_collision_mask, "bone.collisionMask", b.collision_mask).with_subject(b.name);
    if ((b.collision_mask & collision_sphere) != 0) {
      auto r = c.read<float>("bone.radius");
      if (!r) return r.error();
      b.radius = *r;
    }
    if ((b.collision_mask & collision_box) != 0) {
      auto box = detail::read_floats<6>(c, "bone.boundingBox");
      if (!box) return box.error();
      b.box_min = {(*box)[0], (*box)[1], (*box)[2]};
      b.box_max = {(*box)[3], (*box)[4], (*box)[5]};
    }
  }
  UNTOLD_TRY(detail::check_bone_parents(m.bones, skeleton_at, lim));
  for (std::size_t gi = 0; gi < m.geometries.size(); ++gi)
    for (std::uint32_t b : m.geometries[gi].bone_mapping)
      if (b >= m.bones.size()) {
        error e = make_error(errc::u3d_bone_mapping);  // checked after the skeleton: record = geometry, no offset
        e.context.field = "boneMapping";
        e.context.record_index = static_cast<std::uint32_t>(gi);
        e.context.value = b;
        e.context.has_value = true;
        return e;
      }

  auto box = detail::read_floats<6>(c, "boundingBox");
  if (!box) return box.error();
  m.bounds_min = {(*box)[0], (*box)[1], (*box)[2]};
  m.bounds_max = {(*box)[3], (*box)[4], (*box)[5]};

  // Per-geometry centres: absent in older files (the file ends here), else one per geometry.
  if (!c.at_end()) {
    const std::uint64_t want = std::uint64_t{12} * m.geometries.size();
    if (c.remaining() > want) {
      (void)c.skip(want, "geometryCenters");
      return c.fail(errc::u3d_trailing_bytes, "end", c.remaining());
    }
    auto centers = c.bytes(want, "geometryCenters");
    if (!centers) return centers.error();
    UNTOLD_TRY(hold(m.geometries.size(), sizeof(float3), "geometryCenters"));
    m.geometry_centers.resize(m.geometries.size());
    for (std::size_t i = 0; i < m.geometries.size(); ++i)
      for (std::size_t k = 0; k < 3; ++k)
        m.geometry_centers[i][k] = load_le_unchecked<float>(centers->data() + 12 * i + 4 * k);
  }
  if (options.deep_checks) UNTOLD_TRY(validate_model_deep(m, file));
  return m;
}

/// Value-level checks of a model that open_model accepted (or one built in
/// memory whose spans are sized as documented): U3D-INDEX-VALUE (every index
/// in a LOD's draw range < its vertex buffer's vertex count), U3D-BLEND-INDEX
/// (every blend index with a non-zero weight, of the vertices a geometry
/// draws, is inside its bone mapping, or the skeleton when the mapping is
/// empty), U3D-FINITE (positions, float texture coordinates and blend
/// weights, morph deltas, LOD distances, bone transforms and bounds, the
/// model's bounds), R-LIMITS
/// when the LODs' draw ranges sum to more than draw_budget(m). Geometry
/// centres are not checked: Urho3D only sorts by them, and files its own
/// tools wrote store NaN there (non_finite_centers counts them). Linear in
/// the file size. Errors carry record_index = geometry / bone / vertex
/// buffer and field; U3D-FINITE carries the float (value, with its bits)
/// and, when it lies in `file` (the bytes open_model read), its offset.
[[nodiscard]] inline status validate_model_deep(const model& m, byte_span file) {
  auto err = [](errc code, const char* field, std::size_t record, std::uint64_t value) {
    return make_error(code).at_field(field).at_record(record).with_value(value);
  };
  UNTOLD_TRY(check_draw_budget(m));
  // Each buffer is read once up front (untold::detail::scan_records): are
  // the floats U3D-FINITE covers finite, and an upper bound of its blend
  // indices. The loops below, which find the first offending value and its
  // context, then run only where these summaries (or a draw range's index
  // scan) show a problem.
  struct buffer_summary {
    const vertex_element* position = nullptr;  // the one the engine and cook use
    const vertex_element* indices = nullptr;   // UBYTE4 blend indices (only UBYTE4 is meaningful)
    const vertex_element* weights = nullptr;   // VECTOR4 blend weights
    bool floats_finite = true;
    std::uint32_t blend_bound = 0;  // every blend index <= this
  };
  auto checked_floats = [](const buffer_summary& s, const vertex_element& e) {
    const bool floats = e.type == element_type::float32 || e.type == element_type::vector2 ||
                        e.type == element_type::vector3 || e.type == element_type::vector4;
    return floats && (&e == s.position || e.semantic == element_semantic::texcoord ||
                      e.semantic == element_semantic::blend_weights);
  };
  std::vector<buffer_summary> summaries(m.vertex_buffers.size());
  std::vector<std::uint32_t> float_words;
  for (std::size_t vi = 0; vi < m.vertex_buffers.size(); ++vi) {
    const vertex_buffer& vb = m.vertex_buffers[vi];
    buffer_summary& s = summaries[vi];
    s.position = vb.find(element_semantic::position);
    const vertex_element* indices = vb.find(element_semantic::blend_indices);
    const vertex_element* weights = vb.find(element_semantic::blend_weights);
    s.indices = indices != nullptr && indices->type == element_type::ubyte4 ? indices : nullptr;
    s.weights = weights != nullptr && weights->type == element_type::vector4 ? weights : nullptr;
    float_words.clear();
    for (const vertex_element& e : vb.elements)
      if (checked_floats(s, e))
        for (std::uint32_t k = 0; k < element_size(e.type) / 4; ++k) float_words.push_back(e.offset / 4 + k);
    const std::uint32_t blend_word = s.indices != nullptr ? s.indices->offset / 4 : 0;
    const auto scan = untold::detail::scan_records(vb.data.data(), vb.vertex_count, vb.vertex_size, float_words,
                                                   std::span(&blend_word, s.indices != nullptr ? 1 : 0));
    s.floats_finite = scan.all_finite;
    for (std::uint32_t k = 0; k < 4; ++k) s.blend_bound = std::max(s.blend_bound, (scan.ored >> (8 * k)) & 0xFFu);
  }
  for (std::size_t gi = 0; gi < m.geometries.size(); ++gi) {
    const geometry& g = m.geometries[gi];
    for (const lod_level& l : g.lods) {
      if (!untold::detail::is_finite(l.distance))
        return detail::not_finite("lod.distance", gi, {0, l.distance, nullptr});
      const vertex_buffer& vb = m.vertex_buffers[l.vertex_buffer];
      const index_buffer& ib = m.index_buffers[l.index_buffer];
      const buffer_summary& s = summaries[l.vertex_buffer];
      const std::uint64_t palette = g.bone_mapping.empty() ? m.bones.size() : g.bone_mapping.size();
      const bool in_range = untold::detail::indices_below(
          ib.data.subspan(std::size_t{l.index_start} * ib.index_size, std::size_t{l.index_count} * ib.index_size),
          ib.index_size, vb.vertex_count);
      if (l.index_count == 0 || (in_range && (s.indices == nullptr || s.blend_bound < palette))) continue;
      for (std::uint64_t i = l.index_start; i < std::uint64_t{l.index_start} + l.index_count; ++i) {
        const std::uint32_t v = ib.at(static_cast<std::size_t>(i));
        if (v >= vb.vertex_count) return err(errc::u3d_index_value, "index", gi, v);
        if (s.indices == nullptr) continue;
        const std::byte* vertex = vb.vertex(v);
        for (std::size_t k = 0; k < 4; ++k) {
          const float w = s.weights != nullptr ? load_le_unchecked<float>(vertex + s.weights->offset + 4 * k) : 1.0f;
          const auto bi = static_cast<std::uint8_t>(vertex[s.indices->offset + k]);
          if (w != 0.0f && bi >= palette) return err(errc::u3d_blend_index, "blendIndex", gi, bi);
        }
      }
    }
  }
  for (std::size_t vi = 0; vi < m.vertex_buffers.size(); ++vi) {
    const vertex_buffer& vb = m.vertex_buffers[vi];
    const buffer_summary& s = summaries[vi];
    if (s.floats_finite) continue;
    for (const vertex_element& e : vb.elements) {
      if (!checked_floats(s, e)) continue;
      const auto bad = detail::first_non_finite(vb.data, vb.vertex_size, e.offset, element_size(e.type) / 4);
      if (bad)
        return detail::not_finite(&e == s.position                                ? "position"
                                  : e.semantic == element_semantic::texcoord ? "texcoord"
                                                                              : "blendWeight",
                                  vi, bad, file);
    }
  }
  for (const morph& mo : m.morphs)
    for (const morph_buffer& mb : mo.buffers) {
      const std::size_t deltas = (mb.stride() - 4) / 4;
      constexpr std::uint32_t delta_words[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
      if (untold::detail::scan_records(mb.data.data(), mb.vertex_count, mb.stride(), std::span(delta_words, deltas), {})
              .all_finite)
        continue;
      if (const auto bad = detail::first_non_finite(mb.data, mb.stride(), 4, deltas))
        return detail::not_finite("morph.delta", mb.buffer, bad, file).with_subject(mo.name);
    }
  for (std::size_t bi = 0; bi < m.bones.size(); ++bi) {
    const bone& b = m.bones[bi];
    const std::span<const float> parts[] = {b.position,      b.rotation, b.scale,  b.offset_matrix,
                                            {&b.radius, 1}, b.box_min,  b.box_max};
    for (const std::span<const float> part : parts)
      if (const auto bad = detail::first_non_finite(part)) return detail::not_finite("bone", bi, bad).with_subject(b.name);
  }
  for (const float3& corner : {m.bounds_min, m.bounds_max})
    if (const auto bad = detail::first_non_finite(corner)) return detail::not_finite("boundingBox", 0, bad);
  return {};
}

/// How many geometry centres hold a NaN or an infinity: accepted (Urho3D
/// only sorts by them; its own tools wrote FF FF FF FF into early files),
/// reported by `untold info` and replaced by the bounding-box centre in cook.
[[nodiscard]] inline std::size_t non_finite_centers(const model& m) noexcept {
  std::size_t n = 0;
  for (const float3& c : m.geometry_centers) n += detail::first_non_finite(c) ? 1 : 0;
  return n;
}

/// Writes `m` as a .mdl of kind m.kind (UMDL: each buffer's legacy_mask;
/// UMD2/UMD3: its elements). Deterministic; real files round-trip
/// byte-exactly. Bad input (spans not sized as documented, a UMDL buffer
/// whose elements are not its mask's, centres not one per geometry, ...) is
/// invalid_argument; the bytes are then re-read with open_model, so the
/// writer never returns a file the reader rejects (that error is returned).
[[nodiscard]] inline result<std::vector<std::byte>> write_model(const model& m) {
  std::vector<std::byte> out;
  byte_sink s(out);
  put_id(out, model_id(m.kind));
  if (m.kind == model_kind::umd3) s.put<std::uint32_t>(m.version);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(m.vertex_buffers.size()));
  for (std::size_t i = 0; i < m.vertex_buffers.size(); ++i) {
    const vertex_buffer& vb = m.vertex_buffers[i];
    std::vector<vertex_element> elements = vb.elements;
    const std::uint32_t size = layout(elements);
    if (std::uint64_t{vb.vertex_count} * size != vb.data.size()) return make_error(errc::invalid_argument)
        .at_field("vertexData").at_record(i).with_value(vb.data.size());
    s.put<std::uint32_t>(vb.vertex_count);
    if (m.kind == model_kind::umdl) {
      if (elements != elements_from_mask(vb.legacy_mask) || (vb.legacy_mask & ~legacy_mask_bits) != 0)
        return make_error(errc::invalid_argument).at_field("elementMask").at_record(i).with_value(vb.legacy_mask);
      s.put<std::uint32_t>(vb.legacy_mask);
    } else {
      s.put<std::uint32_t>(static_cast<std::uint32_t>(elements.size()));
      for (const vertex_element& e : elements)
        s.put<std::uint32_t>(static_cast<std::uint32_t>(e.type) | (static_cast<std::uint32_t>(e.semantic) << 8) |
                             (static_cast<std::uint32_t>(e.index) << 16));
    }
    s.put<std::uint32_t>(vb.morph_range_start);
    s.put<std::uint32_t>(vb.morph_range_count);
    s.bytes(vb.data);
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(m.index_buffers.size()));
  for (std::size_t i = 0; i < m.index_buffers.size(); ++i) {
    const index_buffer& ib = m.index_buffers[i];
    if (std::uint64_t{ib.index_count} * ib.index_size != ib.data.size()) return make_error(errc::invalid_argument)
        .at_field("indexData").at_record(i).with_value(ib.data.size());
    s.put<std::uint32_t>(ib.index_count);
    s.put<std::uint32_t>(ib.index_size);
    s.bytes(ib.data);
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(m.geometries.size()));
  for (const geometry& g : m.geometries) {
    s.put<std::uint32_t>(static_cast<std::uint32_t>(g.bone_mapping.size()));
    for (std::uint32_t b : g.bone_mapping) s.put<std::uint32_t>(b);
    s.put<std::uint32_t>(static_cast<std::uint32_t>(g.lods.size()));
    for (const lod_level& l : g.lods) {
      s.put<float>(l.distance);
      s.put<std::uint32_t>(static_cast<std::uint32_t>(l.primitive));
      s.put<std::uint32_t>(l.vertex_buffer);
      s.put<std::uint32_t>(l.index_buffer);
      s.put<std::uint32_t>(l.index_start);
      s.put<std::uint32_t>(l.index_count);
    }
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(m.morphs.size()));
  for (std::size_t i = 0; i < m.morphs.size(); ++i) {
    const morph& mo = m.morphs[i];
    if (mo.name.find('\0') != std::string_view::npos) return make_error(errc::invalid_argument)
        .at_field("morph.name").at_record(i).with_value(0);
    s.cstring(mo.name);
    if (m.has_morph_weights()) s.put<float>(mo.weight);
    s.put<std::uint32_t>(static_cast<std::uint32_t>(mo.buffers.size()));
    for (const morph_buffer& mb : mo.buffers) {
      if (std::uint64_t{mb.vertex_count} * mb.stride() != mb.data.size()) return make_error(errc::invalid_argument)
          .at_field("morph.vertices").at_record(i).with_value(mb.data.size());
      s.record(mb);
      s.bytes(mb.data);
    }
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(m.bones.size()));
  for (std::size_t i = 0; i < m.bones.size(); ++i) {
    const bone& b = m.bones[i];
    if (b.name.find('\0') != std::string_view::npos) return make_error(errc::invalid_argument).at_field("bone.name")
        .at_record(i).with_value(0);
    s.cstring(b.name);
    s.record(b);
    s.put<std::uint8_t>(b.collision_mask);
    if ((b.collision_mask & collision_sphere) != 0) s.put<float>(b.radius);
    if ((b.collision_mask & collision_box) != 0) {
      for (float f : b.box_min) s.put<float>(f);
      for (float f : b.box_max) s.put<float>(f);
    }
  }
  for (float f : m.bounds_min) s.put<float>(f);
  for (float f : m.bounds_max) s.put<float>(f);
  if (!m.geometry_centers.empty()) {
    if (m.geometry_centers.size() != m.geometries.size())
      return make_error(errc::invalid_argument).at_field("geometryCenters").at_record(0)
          .with_value(m.geometry_centers.size());
    for (const float3& c : m.geometry_centers)
      for (float f : c) s.put<float>(f);
  }
  model_options check;
  check.limits.max_records = ~std::uint32_t{0};
  auto reread = open_model(out, check);
  if (!reread) return reread.error();
  return out;
}

}  // namespace untold::urho3d
