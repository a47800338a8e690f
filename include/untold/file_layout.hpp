// untold/file_layout.hpp - how a builder's contents become a .untold file
// (spec 7): handles resolved, the core and extension tables encoded, chunks
// ordered, compressed and placed 16-byte aligned, the header and chunk table
// encoded, and the stored bytes hashed (contentHash, the integrity chunk's
// block digests). writer.hpp's basic_builder gathers the contents (each
// add_* call checks its input) and hands them to file_layout when a file is
// written. Internal: the API is writer.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "compression.hpp"
#include "content_hash.hpp"
#include "error.hpp"
#include "extensions.hpp"
#include "format.hpp"
#include "integrity.hpp"
#include "integrity_writer.hpp"
#include "records.hpp"
#include "scene.hpp"
#include "validate.hpp"
#include "vertex_quant.hpp"
#include "write_options.hpp"

namespace untold {

namespace detail {

/// The lowest formatVersion that stores a material record's fields, and the
/// first field that needs it (nullptr for 1).
[[nodiscard]] constexpr std::pair<std::uint32_t, const char*> material_version(const material_record& m) noexcept {
  if (m.transmission_factor != 0.0f) return {4, "transmissionFactor"};
  if (m.height_remap_min != 0.0f) return {4, "heightRemapMin"};
  if (m.height_remap_max != 1.0f) return {4, "heightRemapMax"};
  if (m.height_texture != none) return {3, "heightTextureIndex"};
  if (m.height_scale != 0.05f) return {3, "heightScale"};
  if (m.height_midlevel != 0.5f) return {3, "heightMidlevel"};
  if (m.emissive_factor != float3{0, 0, 0}) return {2, "emissiveFactor"};
  return {1, nullptr};
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

/// Zero bytes for padding written by views (alignment inside and between chunks).
inline constexpr std::array<std::byte, chunk_alignment> zero_padding{};

/// `requested` threads, or the hardware's when 0 (at least 1).
[[nodiscard]] inline unsigned worker_threads(unsigned requested) noexcept {
  return requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
}

/// Runs task(i) for every i in [0, count) on up to `threads` threads, the
/// calling thread among them; tasks are taken in index order from a shared
/// counter, so which thread runs one never matters to the result. A thread
/// that cannot be started leaves its share to the others.
template <class Task>
void run_tasks(std::size_t count, unsigned threads, Task&& task) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = next.fetch_add(1, std::memory_order_relaxed))
      task(i);
  };
  std::vector<std::thread> helpers;
  const std::size_t wanted = std::min<std::size_t>(threads, count);
  for (std::size_t t = 1; t < wanted; ++t) {
#if defined(__cpp_exceptions)
    try {
      helpers.emplace_back(work);
    } catch (...) {
      break;
    }
#else
    helpers.emplace_back(work);
#endif
  }
  work();
  for (std::thread& helper : helpers) helper.join();
}

/// The stored bytes of a laid-out file (per row, in pieces) cut into the
/// integrity chunk's digest blocks: rows in table order, the integrity
/// chunk's own row holding none. Hashed in batches that threads share.
class stored_blocks {
 public:
  static constexpr std::size_t batch_blocks = 64;  // 4 MiB at 64 KiB blocks

  stored_blocks(std::span<const chunk_entry> table, std::span<const std::vector<byte_span>> stored,
                std::uint32_t block_size)
      : stored_(stored), table_(table), block_size_(block_size), first_block_(table.size() + 1, 0),
        piece_starts_(table.size()) {
    for (std::size_t row = 0; row < table.size(); ++row) {
      const bool has_blocks = table[row].chunk_type != integrity_chunk_type;
      first_block_[row + 1] =
          first_block_[row] + (has_blocks ? digest_block_count(table[row].compressed_size, block_size) : 0);
      std::uint64_t at = 0;
      for (const byte_span piece : stored[row]) {
        piece_starts_[row].push_back(at);
        at += piece.size();
      }
    }
  }

  [[nodiscard]] std::uint64_t count() const noexcept { return first_block_.back(); }
  [[nodiscard]] std::size_t tasks() const noexcept {
    return static_cast<std::size_t>((count() + batch_blocks - 1) / batch_blocks);
  }

  /// Writes the digests of batch `batch`'s blocks into `digests` (32 bytes
  /// per block, block order); false when SHA-256 failed.
  bool digest_batch(std::size_t batch, std::span<std::byte> digests) const {
    sha256 hasher;
    const std::uint64_t end = std::min<std::uint64_t>(count(), std::uint64_t{batch + 1} * batch_blocks);
    for (std::uint64_t g = std::uint64_t{batch} * batch_blocks; g < end; ++g) {
      const auto row = static_cast<std::size_t>(std::upper_bound(first_block_.begin(), first_block_.end(), g) -
                                                first_block_.begin() - 1);
      const std::uint64_t offset = (g - first_block_[row]) * block_size_;
      const std::uint64_t block_end = std::min<std::uint64_t>(offset + block_size_, table_[row].compressed_size);
      const std::vector<std::uint64_t>& starts = piece_starts_[row];
      auto piece = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin() - 1);
      for (std::uint64_t at = offset; at < block_end; ++piece) {
        const byte_span bytes = stored_[row][piece];
        const auto from = static_cast<std::size_t>(at - starts[piece]);
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() - from, block_end - at));
        hasher.update(bytes.subspan(from, take));
        at += take;
      }
      const auto digest = hasher.finish();
      if (!digest) return false;
      std::memcpy(digests.data() + g * digest_size, digest->data(), digest_size);
    }
    return true;
  }

 private:
  std::span<const std::vector<byte_span>> stored_;
  std::span<const chunk_entry> table_;
  std::uint32_t block_size_;
  std::vector<std::uint64_t> first_block_;                 // per row, and the total last
  std::vector<std::vector<std::uint64_t>> piece_starts_;  // per row: each piece's offset in the stored bytes
};

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

namespace detail {

/// The layout work of basic_builder, and what a builder gathers: a class
/// template for the same reason as the builder (its members and nested
/// types, with their std::vector and std::unordered_map specialisations,
/// are instantiated only where files are written; as namespace-scope
/// structs they cost every includer of writer.hpp a third more compile time).
template <class Deferred = void>
struct file_layout {
  struct pending_mesh {
    std::uint32_t entity = none;
    mesh_record record;
    std::vector<std::byte> vertices;      // as stored
    std::vector<std::byte> indices;       // as stored (record.index_type)
    std::vector<std::byte> edge_indices;  // as stored
    std::uint32_t edge_index_count = 0;
    std::uint32_t geometry_of = none;  // the mesh whose bytes this one references
  };
  // A chunk's payload: bytes it owns (encoded tables) or, when `parts` is
  // not empty, those views of the builder's storage in order (geometry,
  // strings, raw chunks: written where they lie, never gathered).
  struct pending_chunk {
    std::uint32_t type = 0;
    std::vector<std::byte> payload;
    std::uint32_t element_count = 0;
    std::vector<byte_span> parts{};
    std::uint64_t parts_size = 0;
    // Per part, for the meshopt compressions: its vertex stride or index
    // size, 0 for padding.
    std::vector<std::uint16_t> element_sizes{};

    [[nodiscard]] std::uint64_t size() const noexcept { return parts.empty() ? payload.size() : parts_size; }
    void append(byte_span bytes, std::uint16_t element_size = 0) {
      if (bytes.empty()) return;
      parts.push_back(bytes);
      element_sizes.push_back(element_size);
      parts_size += bytes.size();
    }
    // Zero bytes up to the next multiple of `alignment` (<= chunk_alignment).
    void align(std::uint64_t alignment) {
      if (const std::uint64_t r = parts_size % alignment; r != 0)
        append(byte_span(detail::zero_padding).first(static_cast<std::size_t>(alignment - r)));
    }
    // The parts as the meshopt compressions' streams.
    [[nodiscard]] std::vector<codec_input> codec_inputs() const {
      std::vector<codec_input> inputs(parts.size());
      const bool vertex = type == static_cast<std::uint32_t>(chunk_type::vertex_data);
      for (std::size_t i = 0; i < parts.size(); ++i) inputs[i] = {parts[i], element_sizes[i], vertex};
      return inputs;
    }
  };
  struct pending_skeleton {
    skeleton_record record;  // entity_id: the raw id, used when `entity` is none
    std::uint32_t entity = none;
    std::vector<skeleton_joint_record> joints;
  };
  struct pending_skin {
    std::uint32_t mesh, skeleton, entity, entity_id;  // as in skin_desc
    std::vector<std::uint32_t> joints;
    std::vector<std::array<std::uint16_t, 4>> joint_indices;
    std::vector<float4> joint_weights;
  };
  template <class R>
  struct with_entity {
    R record;  // entity_id: the raw id, used when `entity` is none
    std::uint32_t entity = none;
  };
  struct pending_morph {
    std::uint32_t mesh = none;  // mesh handle
    morph_target_record record;  // meshRecordIndex and firstEntryIndex filled at finish
    std::vector<morph_target_entry> entries;
    std::optional<morph_driver_record> driver;  // targetIndex filled at finish
  };
  struct core_tables {
    std::vector<pending_chunk> chunks;
    std::vector<std::uint32_t> mesh_rows;  // per mesh handle: its row in the mesh table
  };
  // A laid-out file: everything but the bytes that stay where they are.
  struct laid_out_file {
    std::vector<pending_chunk> chunks;                    // owners of the table payloads
    std::vector<std::vector<std::byte>> owned;            // per row: compressed bytes / the integrity chunk
    std::vector<std::vector<byte_span>> stored;           // per row: its stored bytes, in pieces
    std::vector<std::byte> directory;                     // header and chunk table
    std::vector<chunk_entry> table;
    std::uint64_t size = 0;
    file_header header;               // contentHash filled by hash_stored_bytes
    std::uint32_t block_size = 0;     // of the block digests; 0 = no integrity chunk
    bool content_hash = false;
    unsigned threads = 1;
  };

  /// What a builder has gathered: records with handles still unresolved,
  /// geometry as stored, and the first input problem.
  struct builder_contents {
    untold::file_type type = untold::file_type::tile;
    string_pool strings;
    std::vector<entity_record> entities;
    std::vector<pending_mesh> meshes;
    std::vector<material_record> materials;
    std::vector<texture_record> textures;
    std::vector<pending_skeleton> skeletons;
    std::vector<pending_skin> skins;
    std::vector<animation_clip_record> clips;
    std::vector<animation_channel_record> channels;
    std::vector<translation_keyframe_record> translation_keys;
    std::vector<rotation_keyframe_record> rotation_keys;
    std::vector<pending_morph> morphs;
    std::vector<with_entity<muscle_record>> muscles;  // entity: the skeleton handle
    std::vector<with_entity<light_record>> lights;
    std::vector<with_entity<camera_record>> cameras;
    std::optional<color_management_record> color_management;
    std::vector<color_grade_lut_record> luts;
    std::vector<pending_chunk> raw_chunks;
    error first_error{};
  };

  // Passes the file's bytes to `sink` in order. `hashed_as_zeros`: zeros
  // instead of the header, table and integrity chunk (what
  // hash_stored_bytes writes, possibly at the same time).
  template <class Sink>
  static bool emit(const laid_out_file& f, Sink& sink, bool hashed_as_zeros) {
    const auto zeros = [&sink](std::uint64_t n) {
      for (; n != 0; n -= std::min<std::uint64_t>(n, chunk_alignment))
        if (!sink(byte_span(detail::zero_padding).first(static_cast<std::size_t>(std::min<std::uint64_t>(n, chunk_alignment)))))
          return false;
      return true;
    };
    if (!(hashed_as_zeros ? zeros(f.directory.size()) : sink(byte_span(f.directory)))) return false;
    std::uint64_t at = f.directory.size();
    for (std::size_t row = 0; row < f.table.size(); ++row) {
      if (f.table[row].compressed_size == 0) continue;  // offsets of empty chunks need no padding
      const std::uint64_t gap = f.table[row].file_offset - at;  // < chunk_alignment
      if (gap != 0 && !sink(byte_span(detail::zero_padding).first(static_cast<std::size_t>(gap)))) return false;
      if (hashed_as_zeros && f.table[row].chunk_type == integrity_chunk_type) {
        if (!zeros(f.table[row].compressed_size)) return false;
      } else {
        for (const byte_span piece : f.stored[row])
          if (!sink(piece)) return false;
      }
      at = f.table[row].file_offset + f.table[row].compressed_size;
    }
    return at == f.size || sink(byte_span(detail::zero_padding).first(static_cast<std::size_t>(f.size - at)));
  }

  static result<laid_out_file> lay_out_file(const builder_contents& in, const write_options& options) {
    if (in.first_error.code != errc::ok) return in.first_error;
    const std::uint32_t version = options.format_version.value_or(max_format_version);
    if (version < min_format_version || version > max_format_version)
      return make_error(errc::invalid_argument, {.field = "formatVersion", .value = version, .has_value = true});
    for (std::uint32_t i = 0; i < in.materials.size(); ++i)  // the first material the version cannot store
      if (const auto [needed, field] = detail::material_version(in.materials[i]); needed > version)
        return make_error(errc::format_version_too_low,
                          {.chunk_type = static_cast<std::uint32_t>(chunk_type::material_table), .record_index = i,
                           .field = field, .value = version, .has_value = true, .limit = needed, .has_limit = true});

    file_header h;
    h.format_version = version;
    h.file_type = static_cast<std::uint32_t>(in.type);
    h.flags = options.flags;
    h.root_transform = options.root_transform;
    if (!detail::all_finite(options.root_transform))
      return make_error(errc::invalid_argument, {.field = "rootTransform"});

    auto core = build_core_tables(in, h, options);
    if (!core) return core.error();
    auto extensions = build_extension_tables(in, h.format_version, core->mesh_rows);
    if (!extensions) return extensions.error();
    std::vector<pending_chunk>& chunks = core->chunks;
    for (pending_chunk& c : *extensions) chunks.push_back(std::move(c));
    // Spec 7: metadata in type order, then data in type order; empty chunks
    // only when the file type requires them; raw chunks last, in call order.
    std::erase_if(chunks, [&](const pending_chunk& c) {
      return c.size() == 0 && !is_required_chunk(in.type, c.type);
    });
    std::stable_sort(chunks.begin(), chunks.end(), [](const pending_chunk& a, const pending_chunk& b) {
      return std::pair{is_data_chunk(a.type), a.type} < std::pair{is_data_chunk(b.type), b.type};
    });
    for (const pending_chunk& raw : in.raw_chunks) {
      chunks.push_back({raw.type, {}, raw.element_count});
      chunks.back().append(raw.payload);
    }
    return lay_out(h, std::move(chunks), options);
  }

  // The entityId a record carries: that of entity handle `entity`, else `raw`.
  static result<std::uint32_t> entity_id_of(const builder_contents& in, std::uint32_t entity, std::uint32_t raw,
                                            chunk_type table, std::uint32_t record) {
    if (entity == none) return raw;
    if (entity >= in.entities.size()) return input_error(table, record, "entity", entity);
    return in.entities[entity].entity_id;
  }

  // The error for bad input to the builder: which table, record and field.
  static error input_error(chunk_type table, std::uint32_t record, const char* field, std::uint64_t value) noexcept {
    return make_error(errc::invalid_argument, {.chunk_type = static_cast<std::uint32_t>(table), .record_index = record,
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

  // `indices` as stored with `type` (little-endian uint16 or uint32). An
  // unknown type (already an error) gives nothing.
  static std::vector<std::byte> encode_indices(std::span<const std::uint32_t> indices, index_type type) {
    const std::size_t isize = index_size(static_cast<std::uint32_t>(type));
    std::vector<std::byte> out;
    if (isize == 4 && std::endian::native == std::endian::little) {
      const byte_span raw = std::as_bytes(indices);
      out.assign(raw.begin(), raw.end());
    } else if (isize != 0) {
      out.resize(indices.size() * isize);
      for (std::size_t i = 0; i < indices.size(); ++i) {
        if (isize == 2)
          store_le_unchecked<std::uint16_t>(out.data() + 2 * i, static_cast<std::uint16_t>(indices[i]));
        else
          store_le_unchecked<std::uint32_t>(out.data() + 4 * i, indices[i]);
      }
    }
    return out;
  }

  // Resolves handles, fills bounds and offsets, and encodes the core tables
  // and geometry chunks in spec 7 order.
  static result<core_tables> build_core_tables(const builder_contents& in, file_header& h,
                                              const write_options& options) {
    // Entities: ids, parents (handles -> entityIds), world transforms.
    std::vector<entity_record> entities = in.entities;
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
      world[i] = multiply(parent == none ? options.root_transform : world[parent], e.local_transform);
      e.parent_entity_id = parent == none ? none : entities[parent].entity_id;
    }

    // Meshes grouped by entity, stable within an entity.
    std::vector<std::uint32_t> order(in.meshes.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::uint32_t i = 0; i < in.meshes.size(); ++i) {
      if (in.meshes[i].entity >= entities.size())
        return make_error(errc::invalid_argument, {.chunk_type = 3, .record_index = i, .field = "entity",
                                                   .value = in.meshes[i].entity, .has_value = true});
      const std::uint32_t material = in.meshes[i].record.material_index;
      if (material != none && material >= in.materials.size())
        return make_error(errc::invalid_argument, {.chunk_type = 3, .record_index = i, .field = "materialIndex",
                                                   .value = material, .has_value = true});
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return in.meshes[a].entity < in.meshes[b].entity; });

    std::vector<mesh_record> meshes;
    meshes.reserve(in.meshes.size());
    pending_chunk vertex_data{static_cast<std::uint32_t>(chunk_type::vertex_data), {}, 0};
    pending_chunk index_data{static_cast<std::uint32_t>(chunk_type::index_data), {}, 0};
    pending_chunk edge_data{static_cast<std::uint32_t>(chunk_type::edge_index_data), {}, 0};
    const auto layout = static_cast<std::uint32_t>(options.vertex_layout);
    const std::uint32_t stride = vertex_stride_of(layout);
    if (stride == 0) return make_error(errc::invalid_argument).at_field("vertexLayout").with_value(layout);
    h.vertex_layout = layout;
    const bool quantized = options.vertex_layout == vertex_layout::pbr_quant_v1;
    if (quantized) {  // the quantized bytes live in the chunk's payload, which the parts view: it must never move
      std::size_t total = 0;
      for (const pending_mesh& pm : in.meshes) total += pm.vertices.size() / vertex_stride_pbr_static_v1 * stride;
      vertex_data.payload.reserve(total);
    }
    std::vector<bool> has_bounds(entities.size(), false);
    std::unordered_map<std::uint32_t, mesh_record> stored;  // owner of shared bytes -> its first record
    for (const std::uint32_t source : order) {
      const pending_mesh& pm = in.meshes[source];
      mesh_record m = pm.record;
      entity_record& owner = entities[pm.entity];
      const auto row = static_cast<std::uint32_t>(meshes.size());
      if (owner.mesh_record_count == 0) owner.first_mesh_record_index = row;
      ++owner.mesh_record_count;
      owner.local_bounds = has_bounds[pm.entity] ? detail::merge(owner.local_bounds, m.local_bounds) : m.local_bounds;
      has_bounds[pm.entity] = true;

      const std::uint32_t isize = index_size(m.index_type);
      m.entity_id = owner.entity_id;
      m.vertex_stride_bytes = stride;
      // Geometry is stored once per owner of bytes; instances reuse its ranges.
      const std::uint32_t bytes_of = pm.geometry_of == none ? source : pm.geometry_of;
      if (const auto it = stored.find(bytes_of); it != stored.end()) {
        const mesh_record& first = it->second;
        m.vertex_data_offset = first.vertex_data_offset;
        m.vertex_data_size_bytes = first.vertex_data_size_bytes;
        m.index_data_offset = first.index_data_offset;
        m.index_data_size_bytes = first.index_data_size_bytes;
        m.reserved0 = first.reserved0;
        if (quantized) m.local_bounds = first.local_bounds;  // the codes are relative to the owner's bounds
      } else {
        const pending_mesh& data = in.meshes[bytes_of];
        m.vertex_data_offset = vertex_data.size();
        if (quantized) {
          const std::size_t at = vertex_data.payload.size();
          vertex_data.payload.resize(at + data.vertices.size() / vertex_stride_pbr_static_v1 * stride);  // reserved
          const mutable_byte_span codes = mutable_byte_span(vertex_data.payload).subspan(at);
          if (auto q = quantize_vertices(data.vertices, m.local_bounds, codes); !q)
            return error(q.error()).at_chunk(none, static_cast<std::uint32_t>(chunk_type::mesh_table)).at_record(source);
          m.vertex_data_size_bytes = codes.size();
          vertex_data.append(codes, static_cast<std::uint16_t>(stride));
        } else {
          m.vertex_data_size_bytes = data.vertices.size();
          vertex_data.append(data.vertices, static_cast<std::uint16_t>(stride));
        }
        // Index ranges start 4-byte aligned so a GPU upload can take them as is.
        index_data.align(4);
        m.index_data_offset = index_data.size();
        m.index_data_size_bytes = data.indices.size();
        index_data.append(data.indices, static_cast<std::uint16_t>(isize));
        if (!data.edge_indices.empty()) {
          edge_data.align(4);
          if (edge_data.size() > 0xFFFFFFFFu)
            return make_error(errc::invalid_argument, {.chunk_type = 18, .record_index = source, .field = "edgeIndices"});
          m.set_edge_indices(static_cast<std::uint32_t>(edge_data.size()), data.edge_index_count);
          edge_data.append(data.edge_indices);
        }
        stored.emplace(bytes_of, m);
      }
      m.estimated_gpu_bytes = std::uint64_t{m.vertex_count} * stride + std::uint64_t{m.index_count} * isize +
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
    // Finite local transforms and positions can still overflow float in a
    // world transform or its bounds; the file would then fail R-FINITE.
    for (std::uint32_t i = 0; i < entities.size(); ++i)
      if (!detail::all_finite(entities[i].world_bounds))
        return make_error(errc::invalid_argument, {.chunk_type = 2, .record_index = i, .field = "worldBounds"});
    if (!detail::all_finite(h.world_bounds)) return make_error(errc::invalid_argument, {.field = "worldBounds"});

    // Materials: texture handles must exist.
    for (std::uint32_t i = 0; i < in.materials.size(); ++i) {
      const material_record& m = in.materials[i];
      for (const std::uint32_t t : {m.base_color_texture, m.normal_texture, m.metallic_texture, m.roughness_texture,
                                    m.emissive_texture, m.occlusion_texture, m.height_texture})
        if (t != none && t >= in.textures.size())
          return make_error(errc::invalid_argument, {.chunk_type = 4, .record_index = i, .field = "textureIndex",
                                                     .value = t, .has_value = true});
    }

    h.entity_count = static_cast<std::uint32_t>(entities.size());
    h.mesh_count = static_cast<std::uint32_t>(meshes.size());
    h.material_count = static_cast<std::uint32_t>(in.materials.size());
    h.texture_ref_count = static_cast<std::uint32_t>(in.textures.size());

    core_tables out;
    out.mesh_rows.resize(order.size());
    for (std::uint32_t row = 0; row < order.size(); ++row) out.mesh_rows[order[row]] = row;
    std::vector<pending_chunk>& chunks = out.chunks;
    chunks.push_back({static_cast<std::uint32_t>(chunk_type::string_table), {}, 0});
    chunks.back().append(in.strings.bytes());
    chunks.push_back(encode_table<entity_record>(entities, h.format_version));
    chunks.push_back(encode_table<mesh_record>(meshes, h.format_version));
    chunks.push_back(encode_table<material_record>(in.materials, h.format_version));
    chunks.push_back(encode_table<texture_record>(in.textures, h.format_version));
    chunks.push_back(std::move(vertex_data));
    chunks.push_back(std::move(index_data));
    chunks.push_back(std::move(edge_data));
    return out;
  }

  // Resolves the extension records' handles and encodes tables 8-15, 19-23,
  // 26, 27 and the joint index / weight and morph target data (16, 17, 24).
  static result<std::vector<pending_chunk>> build_extension_tables(const builder_contents& in, std::uint32_t version,
                                                                   std::span<const std::uint32_t> mesh_rows) {
    // Skeletons: joints concatenated in skeleton order; parents stay skeleton-local.
    std::vector<skeleton_record> skeletons;
    std::vector<skeleton_joint_record> joints;
    for (std::uint32_t i = 0; i < in.skeletons.size(); ++i) {
      const pending_skeleton& ps = in.skeletons[i];
      skeleton_record s = ps.record;
      auto id = entity_id_of(in, ps.entity, s.entity_id, chunk_type::skeleton_table, i);
      if (!id) return id.error();
      if (*id == none) return input_error(chunk_type::skeleton_table, i, "entity", none);
      s.entity_id = *id;
      const auto count = static_cast<std::uint32_t>(ps.joints.size());
      const auto parent_of = [&](std::uint32_t j) { return ps.joints[j].parent_joint_index; };
      for (std::uint32_t j = 0; j < count; ++j)
        if (parent_of(j) != none && parent_of(j) >= count)
          return input_error(chunk_type::skeleton_table, i, "parent", j);
      if (const auto cycle = detail::visit_parents_first(count, parent_of, [](std::uint32_t, std::uint32_t) {});
          cycle != none)
        return input_error(chunk_type::skeleton_table, i, "parent", cycle);
      s.first_joint_record_index = static_cast<std::uint32_t>(joints.size());
      s.joint_record_count = count;
      joints.insert(joints.end(), ps.joints.begin(), ps.joints.end());
      skeletons.push_back(s);
    }
    {
      std::vector<std::uint32_t> ids;
      for (const skeleton_record& s : skeletons) ids.push_back(s.entity_id);
      std::sort(ids.begin(), ids.end());
      if (const auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
        return input_error(chunk_type::skeleton_table, no_index, "entity", *dup);
    }

    // Skins: mesh handles -> final rows, per-vertex data appended in skin order.
    std::vector<skin_record> skins;
    std::vector<skin_joint_mapping_record> mappings;
    pending_chunk joint_index_data{static_cast<std::uint32_t>(chunk_type::joint_index_data), {}, 0};
    pending_chunk joint_weight_data{static_cast<std::uint32_t>(chunk_type::joint_weight_data), {}, 0};
    for (std::uint32_t i = 0; i < in.skins.size(); ++i) {
      const pending_skin& d = in.skins[i];
      if (d.mesh >= in.meshes.size()) return input_error(chunk_type::skin_table, i, "mesh", d.mesh);
      if (d.skeleton >= skeletons.size()) return input_error(chunk_type::skin_table, i, "skeleton", d.skeleton);
      const std::uint32_t vertex_count = in.meshes[d.mesh].record.vertex_count;
      if (d.joint_indices.size() != vertex_count)
        return input_error(chunk_type::skin_table, i, "jointIndices", d.joint_indices.size());
      if (d.joint_weights.size() != vertex_count)
        return input_error(chunk_type::skin_table, i, "jointWeights", d.joint_weights.size());
      for (const std::uint32_t joint : d.joints)
        if (joint >= skeletons[d.skeleton].joint_record_count)
          return input_error(chunk_type::skin_table, i, "joints", joint);
      auto id = entity_id_of(in, d.entity == none && d.entity_id == none ? in.meshes[d.mesh].entity : d.entity, d.entity_id,
                             chunk_type::skin_table, i);
      if (!id) return id.error();
      skin_record s;
      s.entity_id = *id;
      s.mesh_record_index = mesh_rows[d.mesh];
      s.skeleton_entity_id = skeletons[d.skeleton].entity_id;
      s.joint_count = static_cast<std::uint32_t>(d.joints.size());
      s.first_joint_mapping_index = static_cast<std::uint32_t>(mappings.size());
      s.vertex_count = vertex_count;
      s.joint_index_data_offset = joint_index_data.payload.size();
      s.joint_weight_data_offset = joint_weight_data.payload.size();
      for (const std::uint32_t joint : d.joints) mappings.push_back({joint});
      append_records(joint_index_data.payload, std::span(d.joint_indices),
                     [](const std::array<std::uint16_t, 4>& v) { return skin_joint_indices{v}; });
      append_records(joint_weight_data.payload, std::span(d.joint_weights),
                     [](const float4& v) { return skin_joint_weights{v}; });
      skins.push_back(s);
    }

    std::vector<light_record> lights;
    for (std::uint32_t i = 0; i < in.lights.size(); ++i) {
      auto id = entity_id_of(in, in.lights[i].entity, in.lights[i].record.entity_id, chunk_type::light_table, i);
      if (!id) return id.error();
      lights.push_back(in.lights[i].record);
      lights.back().entity_id = *id;
    }
    std::vector<camera_record> cameras;
    for (std::uint32_t i = 0; i < in.cameras.size(); ++i) {
      auto id = entity_id_of(in, in.cameras[i].entity, in.cameras[i].record.entity_id, chunk_type::camera_table, i);
      if (!id) return id.error();
      cameras.push_back(in.cameras[i].record);
      cameras.back().entity_id = *id;
    }
    std::vector<color_management_record> color;
    if (in.color_management) {
      const std::uint32_t texture = in.color_management->lut_texture_index;  // textures are stored in handle order
      if (texture != none && texture >= in.textures.size())
        return input_error(chunk_type::color_management_table, 0, "lutTexture", texture);
      color.push_back(*in.color_management);
    }

    // Morph targets in call order, entries concatenated; drivers follow them.
    std::vector<morph_target_record> morphs;
    std::vector<morph_driver_record> drivers;
    pending_chunk morph_data{static_cast<std::uint32_t>(chunk_type::morph_target_data), {}, 0};
    for (std::uint32_t i = 0; i < in.morphs.size(); ++i) {
      const pending_morph& p = in.morphs[i];
      morph_target_record t = p.record;
      t.mesh_record_index = mesh_rows[p.mesh];
      if (std::uint64_t{morph_data.element_count} + p.entries.size() > 0xFFFFFFFFu)
        return input_error(chunk_type::morph_target_table, i, "entries", p.entries.size());
      t.first_entry_index = morph_data.element_count;
      t.entry_count = static_cast<std::uint32_t>(p.entries.size());
      morph_data.element_count += t.entry_count;
      append_records(morph_data.payload, std::span(p.entries), [](const morph_target_entry& e) { return e; });
      morphs.push_back(t);
      if (p.driver) {
        drivers.push_back(*p.driver);
        drivers.back().target_index = i;
      }
    }
    std::vector<muscle_record> muscles;
    for (std::uint32_t i = 0; i < in.muscles.size(); ++i) {
      const std::uint32_t skeleton = in.muscles[i].entity;  // a skeleton handle here
      if (skeleton >= skeletons.size()) return input_error(chunk_type::muscle_table, i, "skeleton", skeleton);
      muscles.push_back(in.muscles[i].record);
      muscles.back().skeleton_entity_id = skeletons[skeleton].entity_id;
    }

    std::vector<pending_chunk> chunks;
    chunks.push_back(encode_table<skeleton_record>(skeletons, version));
    chunks.push_back(encode_table<skeleton_joint_record>(joints, version));
    chunks.push_back(encode_table<skin_record>(skins, version));
    chunks.push_back(encode_table<skin_joint_mapping_record>(mappings, version));
    chunks.push_back(encode_table<animation_clip_record>(in.clips, version));
    chunks.push_back(encode_table<animation_channel_record>(in.channels, version));
    chunks.push_back(encode_table<translation_keyframe_record>(in.translation_keys, version));
    chunks.push_back(encode_table<rotation_keyframe_record>(in.rotation_keys, version));
    chunks.push_back(encode_table<light_record>(lights, version));
    chunks.push_back(encode_table<camera_record>(cameras, version));
    chunks.push_back(encode_table<color_management_record>(color, version));
    chunks.push_back(encode_table<color_grade_lut_record>(in.luts, version));
    chunks.push_back(encode_table<morph_target_record>(morphs, version));
    chunks.push_back(encode_table<morph_driver_record>(drivers, version));
    chunks.push_back(encode_table<muscle_record>(muscles, version));
    chunks.push_back(std::move(joint_index_data));
    chunks.push_back(std::move(joint_weight_data));
    chunks.push_back(std::move(morph_data));
    return chunks;
  }

  // Encodes make(value) for each value as consecutive R records at the end of `out`.
  template <class T, class Make>
  static void append_records(std::vector<std::byte>& out, std::span<const T> values, Make make) {
    using R = decltype(make(values[0]));
    const std::size_t at = out.size(), stride = codec<R>::size();
    out.resize(at + values.size() * stride);
    for (std::size_t i = 0; i < values.size(); ++i)
      codec<R>::encode(make(values[i]), mutable_byte_span(out).subspan(at + i * stride, stride));
  }

  // Compresses per policy (chunks in parallel), places chunks 16-byte
  // aligned and encodes header and table; hash_stored_bytes does the rest.
  static result<laid_out_file> lay_out(file_header& h, std::vector<pending_chunk> chunks,
                                         const write_options& options) {
    for (const pending_chunk& c : chunks)  // derived data: the library writes it (block_digests)
      if (c.type == integrity_chunk_type)
        return make_error(errc::invalid_argument, {.chunk_type = c.type, .field = "chunkType", .value = c.type, .has_value = true});
    const bool digests = options.writes_block_digests();
    const std::uint32_t block_size = options.digest_block_size;
    if (digests) {
      if (block_size < min_digest_block_size || block_size > max_digest_block_size || (block_size & (block_size - 1)) != 0)
        return make_error(errc::invalid_argument, {.field = "digestBlockSize", .value = block_size, .has_value = true});
      chunks.insert(chunks.begin(), pending_chunk{integrity_chunk_type, {}, 0});  // row 0, stored first
    }
    if (chunks.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument, {.field = "chunkCount"});
    const unsigned threads = detail::worker_threads(options.threads);
    h.chunk_count = static_cast<std::uint32_t>(chunks.size());
    laid_out_file f;
    f.table.resize(chunks.size());
    f.owned.resize(chunks.size());
    f.stored.resize(chunks.size());
    std::vector<std::uint32_t> to_compress;
    for (std::uint32_t i = 0; i < chunks.size(); ++i) {
      const pending_chunk& c = chunks[i];
      chunk_entry& e = f.table[i];
      e.chunk_type = c.type;
      e.element_count = c.element_count;
      e.uncompressed_size = e.compressed_size = c.size();
      if (!c.parts.empty()) f.stored[i] = c.parts;
      else if (!c.payload.empty()) f.stored[i] = {byte_span(c.payload)};
      if (options.compression.for_chunk(c.type).method != compression::none && c.size() != 0) to_compress.push_back(i);
    }

    // Each chunk whole and on its own into its own slot: the bytes do not
    // depend on the thread count. Geometry views are compressed where they
    // lie (zstd streams them; lz4 gathers them, only while that chunk is
    // compressed: one raw block needs one input buffer).
    std::vector<error> failures(chunks.size());
    detail::run_tasks(to_compress.size(), threads, [&](std::size_t task) {
      const std::uint32_t i = to_compress[task];
      const chunk_compression policy = options.compression.for_chunk(chunks[i].type);
      const byte_span payload = chunks[i].payload;
      const std::span<const byte_span> raw = chunks[i].parts.empty() ? std::span(&payload, 1) : std::span(chunks[i].parts);
      if (is_mesh_codec(policy.method) && chunks[i].parts.empty()) {  // the builder always gives geometry in parts
        failures[i] = make_error(errc::invalid_argument).at_field("compressionType").at_chunk(i, chunks[i].type);
        return;
      }
      auto packed = is_mesh_codec(policy.method) ? compress_streams(policy.method, policy.level, chunks[i].codec_inputs())
                                                 : compress(policy.method, policy.level, raw);
      if (!packed) {
        failures[i] = packed.error();
        failures[i].context.chunk_index = i;
        failures[i].context.chunk_type = chunks[i].type;
      } else if (packed->size() < chunks[i].size()) {  // keep compression only when it pays
        f.table[i].compression_type = static_cast<std::uint32_t>(policy.method);
        f.table[i].compressed_size = packed->size();
        f.owned[i] = std::move(*packed);
        f.stored[i] = {byte_span(f.owned[i])};
      }
    });
    for (const error& failure : failures)  // the first failing row, whatever finished first
      if (failure.code != errc::ok) return failure;

    if (digests)  // its size follows from the others' stored sizes
      f.table[0].compressed_size = f.table[0].uncompressed_size = integrity_chunk_size(f.table, 0, block_size);
    std::uint64_t cursor = std::uint64_t{header_size} + std::uint64_t{chunk_entry_size} * chunks.size();
    for (chunk_entry& e : f.table) {
      cursor = *checked_align_up(cursor, chunk_alignment);
      e.file_offset = cursor;
      cursor += e.compressed_size;
    }
    f.size = cursor;
    f.directory.resize(header_size + std::size_t{chunk_entry_size} * f.table.size());
    codec<file_header>::encode(h, f.directory);  // contentHash is patched in below
    for (std::size_t i = 0; i < f.table.size(); ++i)
      codec<chunk_entry>::encode(f.table[i], mutable_byte_span(f.directory).subspan(header_size + i * chunk_entry_size));

    f.header = h;
    f.block_size = digests ? block_size : 0;
    f.content_hash = options.content_hash;
    f.threads = threads;
    f.chunks = std::move(chunks);  // the owned payloads the pieces view (moving keeps their buffers)
    return f;
  }

  // Block digests (when f.block_size != 0) in parallel with the content hash
  // and with `concurrent()` (finish()'s copy; nullptr for none); then the
  // integrity chunk (row 0), bound to the content hash (integrity.hpp), the
  // rest of the content hash, and the hash in the header. The content hash
  // takes rows in chunkType order: the integrity chunk's high type puts it
  // (and rows of higher types) last. Tasks go to threads in index order: the
  // content hash (the longest, serial) first, then the concurrent work, then
  // batches of blocks.
  template <class Concurrent>
  static status hash_stored_bytes(laid_out_file& f, Concurrent&& concurrent) {
    // The binding records the content hash's midstate, which OpenSSL's EVP
    // interface does not expose: sha256_resumable (SHA extensions where the
    // CPU has them) computes the content hash of files with both.
    if (f.content_hash && f.block_size != 0) return hash_stored_bytes_with<sha256_resumable>(f, concurrent);
    return hash_stored_bytes_with<sha256>(f, concurrent);
  }

  template <class Hasher, class Concurrent>
  static status hash_stored_bytes_with(laid_out_file& f, Concurrent&& concurrent) {
    constexpr bool has_concurrent = !std::is_null_pointer_v<std::remove_cvref_t<Concurrent>>;
    constexpr bool binds = std::is_same_v<Hasher, sha256_resumable>;
    const std::uint32_t block_size = f.block_size;
    const bool content_hash = f.content_hash;
    const std::vector<std::uint32_t> order = content_hash_order(f.table);
    const std::size_t before_integrity =
        block_size == 0 ? order.size() : static_cast<std::size_t>(std::find(order.begin(), order.end(), 0u) - order.begin());
    Hasher content;
    const auto hash_rows = [&](std::size_t from, std::size_t to) {
      for (std::size_t k = from; k < to; ++k)
        for (const byte_span piece : f.stored[order[k]]) content.update(piece);
    };
    std::optional<detail::stored_blocks> blocks;
    if (block_size != 0) blocks.emplace(f.table, f.stored, block_size);
    const std::size_t batches = blocks ? blocks->tasks() : 0;
    std::vector<std::byte> block_digests(blocks ? static_cast<std::size_t>(blocks->count()) * digest_size : 0);
    std::vector<std::uint8_t> failed(batches);
    const std::size_t first_batch = (content_hash ? 1 : 0) + (has_concurrent ? 1 : 0);
    detail::run_tasks(first_batch + batches, f.threads, [&](std::size_t task) {
      if (content_hash && task == 0) return hash_rows(0, before_integrity);
      if constexpr (has_concurrent)
        if (task + 1 == first_batch) return concurrent();
      failed[task - first_batch] = !blocks->digest_batch(task - first_batch, block_digests);
    });
    if (blocks) {
      if (std::find(failed.begin(), failed.end(), std::uint8_t{1}) != failed.end())
        return make_error(errc::encode_failed, {.chunk_type = integrity_chunk_type, .field = "block"});
      auto chunk = encode_integrity_chunk(f.directory, f.table, 0, block_size, block_digests);
      if (!chunk) return chunk.error();
      if (chunk->size() != f.table[0].compressed_size)  // integrity_chunk_size() and the encoder disagree
        return make_error(errc::encode_failed, {.chunk_type = integrity_chunk_type, .field = "size"});
      f.owned[0] = std::move(*chunk);
      f.stored[0] = {byte_span(f.owned[0])};
      if constexpr (binds) {  // only with the content hash (hash_stored_bytes)
        bind_integrity_chunk(f.owned[0], f.table.size(), content);
        hash_rows(before_integrity + 1, order.size());
      }
    }
    if (!content_hash) return {};
    const result<sha256_digest> digest = content.finish();
    if (!digest) return digest.error();
    f.header.content_hash = *digest;
    codec<file_header>::encode(f.header, f.directory);
    return {};
  }

};

}  // namespace detail
}  // namespace untold
