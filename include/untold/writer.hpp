// untold/writer.hpp - build a .untold file (spec 7).
//
//   untold::builder b{untold::file_type::tile};
//   auto tex  = b.add_texture({.name = "wall", .uri = "Textures/wall.png", .format = untold::texture_format::rgba8});
//   auto mat  = b.add_material({.name = "wall", .base_color_texture = tex});
//   auto room = b.add_entity({.name = "room"});
//   b.add_mesh({.entity = room, .material = mat, .vertices = encoded, .indices = idx});
//   auto bytes = b.finish();            // result<std::vector<std::byte>>
//
// Handles are the order of the add_* calls (0, 1, ...). Bad input never
// produces a corrupt file: the builder remembers the first problem (with the
// record and field) and finish() returns it. Output is byte-for-byte
// deterministic: same calls, same options, same bytes; padding is zero.
//
// Layout: header, chunk table, then 16-byte aligned payloads in the order
// STRING, ENTITY, MESH, MATERIAL, TEXTURE, other metadata tables, VERTEX_DATA,
// INDEX_DATA, other data chunks, raw (unknown/plugin) chunks - so one prefix
// range holds all metadata. Meshes are stored grouped by entity (stable), as
// each entity addresses a contiguous mesh range.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "compression.hpp"
#include "content_hash.hpp"
#include "error.hpp"
#include "format.hpp"
#include "records.hpp"
#include "validate.hpp"

namespace untold {

struct entity_desc {
  std::string_view name{};
  /// Handle of an entity added earlier, or none for a root.
  std::uint32_t parent = none;
  mat4 local_transform = identity_matrix;
  std::uint32_t flags = 0;
  /// entityId to store; default: the entity's row (what the reference exporter writes).
  std::optional<std::uint32_t> entity_id{};
};

struct mesh_desc {
  std::uint32_t entity = none;  // entity handle (required)
  std::string_view name{};
  std::uint32_t material = none;  // material handle or none
  /// PBR_STATIC_V1 vertices, 32 bytes each (see vertex.hpp for the encoder).
  byte_span vertices{};
  std::span<const std::uint32_t> indices{};
  /// Optional edge (line) indices, stored in EDGE_INDEX_DATA with the mesh's index type.
  std::span<const std::uint32_t> edge_indices{};
  /// Default: uint16 when vertexCount <= 65535, else uint32.
  std::optional<untold::index_type> index_type{};
  std::uint32_t flags = 0;
};

struct material_desc {
  std::string_view name{};
  std::uint32_t flags = 0;
  float4 base_color_factor{1, 1, 1, 1};
  float3 emissive_factor{0, 0, 0};
  float normal_scale = 1;
  float metallic_factor = 1;
  float roughness_factor = 1;
  float occlusion_strength = 1;
  float alpha_cutoff = 0.5f;
  std::uint32_t base_color_texture = none;  // texture handles or none
  std::uint32_t normal_texture = none;
  std::uint32_t metallic_texture = none;
  std::uint32_t roughness_texture = none;
  std::uint32_t emissive_texture = none;
  std::uint32_t occlusion_texture = none;
  std::uint32_t height_texture = none;  // needs format version 3
  float height_scale = 0.05f;           // needs 3 when not the default
  float height_midlevel = 0.5f;         // needs 3 when not the default
  float height_remap_min = 0.0f;        // needs 4 when not the default
  float height_remap_max = 1.0f;        // needs 4 when not the default
  texture_channel roughness_channel = texture_channel::r;
  texture_channel metallic_channel = texture_channel::r;
};

struct texture_desc {
  std::string_view name{};
  std::string_view uri{};  // relative to the .untold file's directory
  texture_format format = texture_format::unknown;
  std::uint32_t flags = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t mip_count = 0;
};

/// How one chunk is stored. lz4 with level > 0 means lz4hc at that level;
/// zstd level 0 means zstd's default level.
struct chunk_compression {
  compression method = compression::none;
  int level = 0;
};

/// Compression per chunk kind; `overrides[type]` (a known core type) wins.
struct compression_policy {
  chunk_compression metadata{};  // string and record tables
  chunk_compression data{};      // vertex, index, joint and edge data
  std::array<std::optional<chunk_compression>, max_known_chunk_type + 1> overrides{};

  [[nodiscard]] chunk_compression for_chunk(std::uint32_t type) const noexcept {
    if (is_known_chunk_type(type) && overrides[type]) return *overrides[type];
    const bool is_data = type == 6 || type == 7 || type == 16 || type == 17 || type == 18;
    return is_data ? data : metadata;
  }
};

struct write_options {
  /// Default: the lowest version that expresses the content (spec 7).
  std::optional<std::uint32_t> format_version{};
  /// Default: the union of the entities' world bounds.
  std::optional<aabb> world_bounds{};
  mat4 root_transform = identity_matrix;
  std::uint32_t flags = 0;
  /// Fill contentHash (SHA-256 of the stored chunk bytes). On by default.
  bool content_hash = true;
  compression_policy compression{};
};

namespace detail {

[[nodiscard]] inline mat4 multiply(const mat4& a, const mat4& b) noexcept {
  mat4 out{};
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) {
      float sum = 0;
      for (int k = 0; k < 4; ++k) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
  return out;
}

/// The axis-aligned box around `box` transformed by the affine part of `m`.
[[nodiscard]] inline aabb transform_bounds(const mat4& m, const aabb& box) noexcept {
  aabb out;
  for (int r = 0; r < 3; ++r) {
    float lo = m[12 + r], hi = m[12 + r];
    for (int c = 0; c < 3; ++c) {
      const float a = m[c * 4 + r] * box.min[c], b = m[c * 4 + r] * box.max[c];
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    out.min[r] = lo;
    out.max[r] = hi;
  }
  return out;
}

[[nodiscard]] inline aabb merge(const aabb& a, const aabb& b) noexcept {
  aabb out;
  for (int i = 0; i < 3; ++i) {
    out.min[i] = std::min(a.min[i], b.min[i]);
    out.max[i] = std::max(a.max[i], b.max[i]);
  }
  return out;
}

[[nodiscard]] inline bool is_valid_utf8(std::string_view s) noexcept {
  const byte_span bytes = std::as_bytes(std::span(s.data(), s.size()));
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t len = utf8_sequence_length(bytes, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace detail

/// Deduplicating string table writer: NUL-terminated UTF-8, offsets in first-add order.
class string_pool {
 public:
  /// The offset of `s` (added once), none for "", or nullopt when `s` holds a
  /// NUL or is not valid UTF-8.
  [[nodiscard]] std::optional<std::uint32_t> add(std::string_view s) {
    if (s.empty()) return none;
    if (s.find('\0') != std::string_view::npos || !detail::is_valid_utf8(s)) return std::nullopt;
    if (const auto it = offsets_.find(std::string(s)); it != offsets_.end()) return it->second;
    if (bytes_.size() + s.size() + 1 >= none) return std::nullopt;  // offsets are u32
    const auto offset = static_cast<std::uint32_t>(bytes_.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    bytes_.insert(bytes_.end(), p, p + s.size());
    bytes_.push_back(std::byte{0});
    offsets_.emplace(std::string(s), offset);
    return offset;
  }
  [[nodiscard]] const std::vector<std::byte>& bytes() const noexcept { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
  std::unordered_map<std::string, std::uint32_t> offsets_;
};

class builder {
 public:
  explicit builder(untold::file_type type = untold::file_type::tile) : type_(type) {}

  /// Adds a string to the string table; its offset (none for ""). For
  /// extension records that reference strings. A NUL or invalid UTF-8 is
  /// remembered as the builder's error and returns none.
  std::uint32_t add_string(std::string_view s, chunk_type table = chunk_type::string_table,
                           std::uint32_t record = no_index, const char* field = "string") {
    const auto offset = strings_.add(s);
    if (!offset) {
      fail(errc::invalid_argument, table, record, field, s.size());
      return none;
    }
    return *offset;
  }

  std::uint32_t add_entity(const entity_desc& d) {
    const auto handle = static_cast<std::uint32_t>(entities_.size());
    entity_record e;
    e.entity_id = d.entity_id.value_or(handle);
    e.name_offset = add_string(d.name, chunk_type::entity_table, handle, "name");
    e.flags = d.flags;
    e.local_transform = d.local_transform;
    e.parent_entity_id = d.parent;  // a handle until finish()
    if (d.parent != none && d.parent >= handle) fail(errc::invalid_argument, chunk_type::entity_table, handle, "parent", d.parent);
    if (!detail::all_finite(d.local_transform)) fail(errc::invalid_argument, chunk_type::entity_table, handle, "localTransform", 0);
    entities_.push_back(e);
    return handle;
  }

  std::uint32_t add_mesh(const mesh_desc& d) {
    const auto handle = static_cast<std::uint32_t>(meshes_.size());
    pending_mesh m;
    m.entity = d.entity;
    m.record.mesh_name_offset = add_string(d.name, chunk_type::mesh_table, handle, "name");
    m.record.material_index = d.material;  // a handle until finish()
    m.record.flags = d.flags;
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::mesh_table, handle, field, value);
    };
    if (d.vertices.size() % vertex_stride_pbr_static_v1 != 0 ||
        d.vertices.size() / vertex_stride_pbr_static_v1 > 0xFFFFFFFFu)
      fail_here("vertices", d.vertices.size());
    const auto vertex_count = static_cast<std::uint32_t>(d.vertices.size() / vertex_stride_pbr_static_v1);
    const index_type type = d.index_type.value_or(vertex_count <= 65535 ? index_type::uint16 : index_type::uint32);
    const std::uint32_t max_index = type == index_type::uint16 ? 0xFFFFu : 0xFFFFFFFFu;
    if (index_size(static_cast<std::uint32_t>(type)) == 0) fail_here("indexType", static_cast<std::uint32_t>(type));
    if (d.indices.size() > 0xFFFFFFFFu) fail_here("indices", d.indices.size());
    if (d.edge_indices.size() > 0xFFFFFFFFu) fail_here("edgeIndices", d.edge_indices.size());
    for (const std::uint32_t i : d.indices)
      if (i >= vertex_count || i > max_index) { fail_here("indices", i); break; }
    for (const std::uint32_t i : d.edge_indices)
      if (i >= vertex_count || i > max_index) { fail_here("edgeIndices", i); break; }

    m.record.index_type = static_cast<std::uint32_t>(type);
    m.record.vertex_count = vertex_count;
    m.record.index_count = static_cast<std::uint32_t>(d.indices.size());
    m.vertices.assign(d.vertices.begin(), d.vertices.end());
    m.indices.assign(d.indices.begin(), d.indices.end());
    m.edge_indices.assign(d.edge_indices.begin(), d.edge_indices.end());

    // localBounds from the positions; a writer never emits a non-finite one.
    aabb bounds{};
    for (std::uint32_t v = 0; v < vertex_count; ++v) {
      float3 p;
      for (int axis = 0; axis < 3; ++axis)
        p[axis] = load_le_unchecked<float>(m.vertices.data() + std::size_t{v} * vertex_stride_pbr_static_v1 + 4 * axis);
      if (!detail::all_finite(p)) { fail_here("position", v); break; }
      bounds = v == 0 ? aabb{p, p} : detail::merge(bounds, aabb{p, p});
    }
    m.record.local_bounds = bounds;
    meshes_.push_back(std::move(m));
    return handle;
  }

  std::uint32_t add_material(const material_desc& d) {
    const auto handle = static_cast<std::uint32_t>(materials_.size());
    material_record m;
    m.name_offset = add_string(d.name, chunk_type::material_table, handle, "name");
    m.flags = d.flags;
    m.base_color_factor = d.base_color_factor;
    m.emissive_factor = d.emissive_factor;
    m.normal_scale = d.normal_scale;
    m.metallic_factor = d.metallic_factor;
    m.roughness_factor = d.roughness_factor;
    m.occlusion_strength = d.occlusion_strength;
    m.alpha_cutoff = d.alpha_cutoff;
    m.base_color_texture = d.base_color_texture;
    m.normal_texture = d.normal_texture;
    m.metallic_texture = d.metallic_texture;
    m.roughness_texture = d.roughness_texture;
    m.emissive_texture = d.emissive_texture;
    m.occlusion_texture = d.occlusion_texture;
    m.height_texture = d.height_texture;
    m.height_scale = d.height_scale;
    m.height_midlevel = d.height_midlevel;
    m.height_remap_min = d.height_remap_min;
    m.height_remap_max = d.height_remap_max;
    m.set_channels(d.roughness_channel, d.metallic_channel);
    materials_.push_back(m);
    return handle;
  }

  std::uint32_t add_texture(const texture_desc& d) {
    const auto handle = static_cast<std::uint32_t>(textures_.size());
    texture_record t;
    t.name_offset = add_string(d.name, chunk_type::texture_table, handle, "name");
    t.uri_offset = add_string(d.uri, chunk_type::texture_table, handle, "uri");
    t.texture_format = static_cast<std::uint32_t>(d.format);
    if (t.texture_format > max_texture_format) fail(errc::invalid_argument, chunk_type::texture_table, handle, "format", t.texture_format);
    t.flags = d.flags;
    t.width = d.width;
    t.height = d.height;
    t.mip_count = d.mip_count;
    textures_.push_back(t);
    return handle;
  }

  /// Adds a chunk the library does not interpret (type 23..0x7FFF or a plugin
  /// chunk >= 0x8000), stored after every other chunk, in call order.
  void add_raw_chunk(std::uint32_t type, byte_span payload, std::uint32_t element_count = 0) {
    if (is_known_chunk_type(type) || type == 0) fail(errc::invalid_argument, chunk_type::string_table, no_index, "chunkType", type);
    raw_chunks_.push_back({type, std::vector<std::byte>(payload.begin(), payload.end()), element_count});
  }

  /// The first problem any add_* call met (errc::ok when none).
  [[nodiscard]] const error& first_error() const noexcept { return error_; }

  /// The lowest formatVersion that stores every material field that is set:
  /// 4 for a height remap, 3 for other height fields, 2 for a non-zero
  /// emissive factor (the reference engine ignores it in version 1), else 1.
  [[nodiscard]] std::uint32_t minimum_format_version() const noexcept {
    std::uint32_t v = 1;
    for (const material_record& m : materials_) {
      if (m.height_remap_min != 0.0f || m.height_remap_max != 1.0f) v = std::max(v, 4u);
      if (m.height_texture != none || m.height_scale != 0.05f || m.height_midlevel != 0.5f) v = std::max(v, 3u);
      if (m.emissive_factor != float3{0, 0, 0}) v = std::max(v, 2u);
    }
    return v;
  }

  /// Lays out the file and passes its bytes to `sink(byte_span) -> bool`
  /// (e.g. a file writer); a sink that returns false gives errc::io_write_failed.
  template <class Sink>
  status write(Sink&& sink, const write_options& options = {}) const {
    auto file = finish(options);
    if (!file) return file.error();
    if (!sink(byte_span(*file))) return make_error(errc::io_write_failed, {.field = "sink"});
    return {};
  }

  /// Lays out the whole file in memory.
  [[nodiscard]] result<std::vector<std::byte>> finish(const write_options& options = {}) const {
    if (error_.code != errc::ok) return error_;
    const std::uint32_t min_version = minimum_format_version();
    const std::uint32_t version = options.format_version.value_or(min_version);
    if (version < min_format_version || version > max_format_version || version < min_version)
      return make_error(errc::invalid_argument, {.field = "formatVersion", .value = version, .has_value = true});

    file_header h;
    h.format_version = version;
    h.file_type = static_cast<std::uint32_t>(type_);
    h.flags = options.flags;
    h.root_transform = options.root_transform;
    if (!detail::all_finite(options.root_transform))
      return make_error(errc::invalid_argument, {.field = "rootTransform"});

    auto tables = build_core_tables(h, options);
    if (!tables) return tables.error();
    std::vector<pending_chunk>& chunks = *tables;
    for (const pending_chunk& raw : raw_chunks_) chunks.push_back(raw);
    return lay_out(h, std::move(chunks), options);
  }

 private:
  struct pending_mesh {
    std::uint32_t entity = none;
    mesh_record record;
    std::vector<std::byte> vertices;
    std::vector<std::uint32_t> indices;
    std::vector<std::uint32_t> edge_indices;
  };
  struct pending_chunk {
    std::uint32_t type = 0;
    std::vector<std::byte> payload;
    std::uint32_t element_count = 0;
  };

  void fail(errc code, chunk_type table, std::uint32_t record, const char* field, std::uint64_t value) {
    if (error_.code != errc::ok) return;
    error_ = make_error(code, {.chunk_type = static_cast<std::uint32_t>(table), .record_index = record,
                               .field = field, .value = value, .has_value = true});
  }

  template <class R>
  static pending_chunk encode_table(std::span<const R> records, std::uint32_t version) {
    const std::size_t stride = codec<R>::size(version);
    pending_chunk c{static_cast<std::uint32_t>(record_traits<R>::table), std::vector<std::byte>(records.size() * stride),
                    static_cast<std::uint32_t>(records.size())};
    for (std::size_t i = 0; i < records.size(); ++i)
      codec<R>::encode(records[i], mutable_byte_span(c.payload).subspan(i * stride, stride), version);
    return c;
  }

  static void append_indices(std::vector<std::byte>& out, std::span<const std::uint32_t> indices, index_type type) {
    const std::size_t isize = index_size(static_cast<std::uint32_t>(type));
    const std::size_t at = out.size();
    out.resize(at + indices.size() * isize);
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (type == index_type::uint16)
        store_le_unchecked<std::uint16_t>(out.data() + at + 2 * i, static_cast<std::uint16_t>(indices[i]));
      else
        store_le_unchecked<std::uint32_t>(out.data() + at + 4 * i, indices[i]);
    }
  }

  // Resolves handles, fills bounds and offsets, and encodes the core tables
  // and geometry chunks in spec 7 order.
  result<std::vector<pending_chunk>> build_core_tables(file_header& h, const write_options& options) const {
    // Entities: ids, parents (handles -> entityIds), world transforms.
    std::vector<entity_record> entities = entities_;
    std::vector<mat4> world(entities.size());
    {
      std::vector<std::uint32_t> ids;
      for (const entity_record& e : entities) ids.push_back(e.entity_id);
      std::sort(ids.begin(), ids.end());
      if (const auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
        return make_error(errc::invalid_argument, {.chunk_type = 2, .field = "entity_id", .value = *dup, .has_value = true});
    }
    for (std::size_t i = 0; i < entities.size(); ++i) {
      entity_record& e = entities[i];
      const std::uint32_t parent = e.parent_entity_id;
      world[i] = detail::multiply(parent == none ? options.root_transform : world[parent], e.local_transform);
      e.parent_entity_id = parent == none ? none : entities[parent].entity_id;
    }

    // Meshes grouped by entity, stable within an entity.
    std::vector<std::uint32_t> order(meshes_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::uint32_t i = 0; i < meshes_.size(); ++i) {
      if (meshes_[i].entity >= entities.size())
        return make_error(errc::invalid_argument, {.chunk_type = 3, .record_index = i, .field = "entity",
                                                   .value = meshes_[i].entity, .has_value = true});
      const std::uint32_t material = meshes_[i].record.material_index;
      if (material != none && material >= materials_.size())
        return make_error(errc::invalid_argument, {.chunk_type = 3, .record_index = i, .field = "materialIndex",
                                                   .value = material, .has_value = true});
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return meshes_[a].entity < meshes_[b].entity; });

    std::vector<mesh_record> meshes;
    meshes.reserve(meshes_.size());
    pending_chunk vertex_data{static_cast<std::uint32_t>(chunk_type::vertex_data), {}, 0};
    pending_chunk index_data{static_cast<std::uint32_t>(chunk_type::index_data), {}, 0};
    pending_chunk edge_data{static_cast<std::uint32_t>(chunk_type::edge_index_data), {}, 0};
    std::vector<bool> has_bounds(entities.size(), false);
    for (const std::uint32_t source : order) {
      const pending_mesh& pm = meshes_[source];
      mesh_record m = pm.record;
      entity_record& owner = entities[pm.entity];
      const auto row = static_cast<std::uint32_t>(meshes.size());
      if (owner.mesh_record_count == 0) owner.first_mesh_record_index = row;
      ++owner.mesh_record_count;
      owner.local_bounds = has_bounds[pm.entity] ? detail::merge(owner.local_bounds, m.local_bounds) : m.local_bounds;
      has_bounds[pm.entity] = true;

      const auto type = static_cast<index_type>(m.index_type);
      const std::uint32_t isize = index_size(m.index_type);
      m.entity_id = owner.entity_id;
      m.vertex_stride_bytes = vertex_stride_pbr_static_v1;
      m.vertex_data_offset = vertex_data.payload.size();
      m.vertex_data_size_bytes = pm.vertices.size();
      vertex_data.payload.insert(vertex_data.payload.end(), pm.vertices.begin(), pm.vertices.end());
      // Index ranges start 4-byte aligned so a GPU upload can take them as is.
      index_data.payload.resize(*checked_align_up(index_data.payload.size(), 4));
      m.index_data_offset = index_data.payload.size();
      m.index_data_size_bytes = std::uint64_t{m.index_count} * isize;
      append_indices(index_data.payload, pm.indices, type);
      if (!pm.edge_indices.empty()) {
        edge_data.payload.resize(*checked_align_up(edge_data.payload.size(), 4));
        if (edge_data.payload.size() > 0xFFFFFFFFu)
          return make_error(errc::invalid_argument, {.chunk_type = 18, .record_index = source, .field = "edgeIndices"});
        m.set_edge_indices(static_cast<std::uint32_t>(edge_data.payload.size()),
                           static_cast<std::uint32_t>(pm.edge_indices.size()));
        append_indices(edge_data.payload, pm.edge_indices, type);
      }
      m.estimated_gpu_bytes = std::uint64_t{m.vertex_count} * 32 + std::uint64_t{m.index_count} * isize +
                              std::uint64_t{m.edge_index_count()} * isize;
      meshes.push_back(m);
    }

    // Entity world bounds, and the file's as their union (unless given).
    std::optional<aabb> world_bounds = options.world_bounds;
    const bool compute_world = !world_bounds.has_value();
    for (std::size_t i = 0; i < entities.size(); ++i) {
      if (!has_bounds[i]) continue;
      entities[i].world_bounds = detail::transform_bounds(world[i], entities[i].local_bounds);
      if (compute_world)
        world_bounds = world_bounds ? detail::merge(*world_bounds, entities[i].world_bounds) : entities[i].world_bounds;
    }
    h.world_bounds = world_bounds.value_or(aabb{});

    // Materials: texture handles must exist.
    for (std::uint32_t i = 0; i < materials_.size(); ++i) {
      const material_record& m = materials_[i];
      for (const std::uint32_t t : {m.base_color_texture, m.normal_texture, m.metallic_texture, m.roughness_texture,
                                    m.emissive_texture, m.occlusion_texture, m.height_texture})
        if (t != none && t >= textures_.size())
          return make_error(errc::invalid_argument, {.chunk_type = 4, .record_index = i, .field = "textureIndex",
                                                     .value = t, .has_value = true});
    }

    h.entity_count = static_cast<std::uint32_t>(entities.size());
    h.mesh_count = static_cast<std::uint32_t>(meshes.size());
    h.material_count = static_cast<std::uint32_t>(materials_.size());
    h.texture_ref_count = static_cast<std::uint32_t>(textures_.size());

    std::vector<pending_chunk> chunks;
    chunks.push_back({static_cast<std::uint32_t>(chunk_type::string_table), strings_.bytes(), 0});
    chunks.push_back(encode_table<entity_record>(entities, h.format_version));
    chunks.push_back(encode_table<mesh_record>(meshes, h.format_version));
    chunks.push_back(encode_table<material_record>(materials_, h.format_version));
    chunks.push_back(encode_table<texture_record>(textures_, h.format_version));
    chunks.push_back(std::move(vertex_data));
    chunks.push_back(std::move(index_data));
    if (!edge_data.payload.empty()) chunks.push_back(std::move(edge_data));
    return chunks;
  }

  // Compresses per policy, places chunks 16-byte aligned, hashes, writes.
  static result<std::vector<std::byte>> lay_out(file_header& h, std::vector<pending_chunk> chunks,
                                                const write_options& options) {
    if (chunks.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument, {.field = "chunkCount"});
    h.chunk_count = static_cast<std::uint32_t>(chunks.size());
    std::vector<chunk_entry> table(chunks.size());
    std::vector<std::vector<std::byte>> stored(chunks.size());
    std::uint64_t cursor = std::uint64_t{header_size} + std::uint64_t{chunk_entry_size} * chunks.size();
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      pending_chunk& c = chunks[i];
      chunk_entry& e = table[i];
      e.chunk_type = c.type;
      e.element_count = c.element_count;
      e.uncompressed_size = c.payload.size();
      const chunk_compression policy = options.compression.for_chunk(c.type);
      stored[i] = std::move(c.payload);
      if (policy.method != compression::none && !stored[i].empty()) {
        auto packed = compress(policy.method, policy.level, stored[i]);
        if (!packed) {
          error err = packed.error();
          err.context.chunk_index = static_cast<std::uint32_t>(i);
          err.context.chunk_type = c.type;
          return err;
        }
        if (packed->size() < stored[i].size()) {  // keep compression only when it pays
          e.compression_type = static_cast<std::uint32_t>(policy.method);
          stored[i] = std::move(*packed);
        }
      }
      e.compressed_size = stored[i].size();
      cursor = *checked_align_up(cursor, chunk_alignment);
      e.file_offset = cursor;
      cursor += e.compressed_size;
    }

    if (options.content_hash) {
      auto digest = compute_content_hash(std::span<const chunk_entry>(table),
                                         [&](std::uint32_t row) { return byte_span(stored[row]); });
      if (!digest) return digest.error();
      h.content_hash = *digest;
    }

    std::vector<std::byte> file(static_cast<std::size_t>(cursor), std::byte{0});
    codec<file_header>::encode(h, file);
    for (std::size_t i = 0; i < table.size(); ++i) {
      codec<chunk_entry>::encode(table[i], mutable_byte_span(file).subspan(header_size + i * chunk_entry_size));
      if (!stored[i].empty()) std::memcpy(file.data() + table[i].file_offset, stored[i].data(), stored[i].size());
    }
    return file;
  }

  untold::file_type type_;
  string_pool strings_;
  std::vector<entity_record> entities_;
  std::vector<pending_mesh> meshes_;
  std::vector<material_record> materials_;
  std::vector<texture_record> textures_;
  std::vector<pending_chunk> raw_chunks_;
  error error_{};
};

}  // namespace untold
