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
// STRING, ENTITY, MESH, MATERIAL, TEXTURE, the extension tables (8-15, 19-23,
// 26, 27), VERTEX_DATA, INDEX_DATA, JOINT_INDEX/JOINT_WEIGHT/EDGE_INDEX and
// MORPH_TARGET data, then raw
// (unknown/plugin) chunks in call order - so one prefix range holds all
// metadata. Required chunks of the file type are written even when empty,
// other empty chunks are omitted. Meshes are stored grouped by entity
// (stable), as each entity addresses a contiguous mesh range; skins name
// meshes by handle and the builder stores the final row.
//
// Engine extensions (extensions.hpp):
//   auto skel = b.add_skeleton({.name = "rig", .entity = root, .joints = joints});
//   b.add_skin({.mesh = body, .skeleton = skel, .joints = palette,
//               .joint_indices = per_vertex_joints, .joint_weights = per_vertex_weights});
//   b.add_animation_clip({.name = "walk", .channels = channels});
//   b.add_light({.name = "sun", .light = {.light_type = 1}});
//   b.add_morph_targets(body, targets);        // glTF morph targets: dense deltas per vertex
//   b.add_muscle({.skeleton = skel, .name = "bicepsL", .origin_joint = "arm", .insertion_joint = "forearm"});
//   b.add_plugin_chunk("com.example.physics", 1, 3, cooked_bytes);
//
// The file is written in format version 4 unless write_options asks for an
// older one; a version that cannot store the content is an error.
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
#include "records.hpp"
#include "scene.hpp"
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
  /// Instancing: a mesh handle added earlier whose vertex and index bytes this
  /// record references instead of storing its own copy (vertices, indices,
  /// edge_indices and index_type must then be empty). Several entities can
  /// draw one stored geometry this way; the format lets mesh records share
  /// vertex and index ranges.
  std::uint32_t geometry_of = none;
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
  /// Stored in flags bits 0-1 (alpha bits already in `flags` must agree
  /// when both are set); alpha_cutoff applies to alpha_mode::mask.
  untold::alpha_mode alpha_mode = untold::alpha_mode::opaque;
  /// KHR_materials_transmission's factor, 0..1; needs 4 when not 0.
  float transmission_factor = 0.0f;
  /// Sets flags bit 2, untold's double-sided convention (material_flags::double_sided).
  bool double_sided = false;
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

// ---- engine extensions (spec 3.3) ----------------------------------------------------
//
// Records that carry an entityId take it from `entity` (an entity handle) or,
// when that is none, from `entity_id` as given (spec 3.3 lets lights and
// cameras name ids that have no entity record).

struct skeleton_joint_desc {
  std::string_view path{};
  /// Index of another joint of the same skeleton, or none for a root; any
  /// order, but parent chains must not cycle.
  std::uint32_t parent = none;
  mat4 bind_transform = identity_matrix;
  mat4 rest_transform = identity_matrix;
  std::uint32_t flags = 0;
};

struct skeleton_desc {
  std::string_view name{};
  std::uint32_t entity = none;     // entity handle; skins find the skeleton by its entityId
  std::uint32_t entity_id = none;  // or the entityId itself (required one way or the other)
  /// Joints in skeleton order (more can follow with add_joint).
  std::span<const skeleton_joint_desc> joints{};
};

struct skin_desc {
  std::uint32_t mesh = none;      // mesh handle (required)
  std::uint32_t skeleton = none;  // skeleton handle (required)
  std::uint32_t entity = none;    // default: the mesh's entity
  std::uint32_t entity_id = none;
  /// Skin joint j -> index of a joint within the skeleton; jointCount = size().
  std::span<const std::uint32_t> joints{};
  /// One entry per mesh vertex: four indices into `joints`, and their weights.
  std::span<const std::array<std::uint16_t, 4>> joint_indices{};
  std::span<const float4> joint_weights{};
};

struct animation_channel_desc {
  std::string_view joint_path{};
  /// Keys in time order (finite, non-decreasing times; finite values).
  std::span<const translation_keyframe_record> translations{};
  std::span<const rotation_keyframe_record> rotations{};
  std::uint32_t flags = 0;
};

struct animation_clip_desc {
  std::string_view name{};
  std::span<const animation_channel_desc> channels{};
  /// Default: the latest key time of any channel (0 without keys).
  std::optional<float> duration{};
  std::uint32_t flags = 0;
};

struct light_desc {
  std::string_view name{};
  std::uint32_t entity = none;
  std::uint32_t entity_id = none;
  /// Every other field; entityId and nameOffset are filled by the builder.
  light_record light{};
};

struct camera_desc {
  std::string_view name{};
  std::uint32_t entity = none;
  std::uint32_t entity_id = none;
  /// Every other field; entityId and nameOffset are filled by the builder.
  camera_record camera{};
};

struct color_management_desc {
  std::string_view view_transform{};
  std::string_view look{};
  std::uint32_t lut_texture = none;  // texture handle or none
  /// exposure, gamma, shaper stops, lutSize; the references are filled by the builder.
  color_management_record settings{};
};

struct color_grade_lut_desc {
  std::string_view uri{};
  std::uint32_t lut_size = 0;
  float3 domain_min{0, 0, 0};
  float3 domain_max{1, 1, 1};
};

/// One sparse morph delta: a vertex of the mesh and how far it moves.
struct morph_delta {
  std::uint32_t vertex = 0;
  float3 position{0, 0, 0};
  float3 normal{0, 0, 0};  // stored only when morph_target_desc::normal_deltas
};

/// A joint rotation that drives a morph target (chunk 26).
struct morph_driver_desc {
  std::string_view joint_path{};
  float4 pose_rotation{0, 0, 0, 1};  // quaternion xyzw
  float radius = 0.5f;
  std::uint32_t kernel = 0;
};

/// A morph target (blend shape) of one mesh. Give either dense deltas, one per
/// mesh vertex (glTF's morph target POSITION / NORMAL accessors), or sparse
/// `deltas`. The builder stores the vertices whose encoded deltas are not all
/// zero, as binary16 (round to nearest even: relative error <= 2^-11 of the
/// delta / positionScale, absolute below 2^-25 x positionScale).
struct morph_target_desc {
  std::string_view name{};
  std::span<const float3> positions{};  // dense: vertexCount position deltas
  std::span<const float3> normals{};    // dense: empty, or vertexCount normal deltas
  std::span<const morph_delta> deltas{};  // sparse, instead of positions / normals
  bool normal_deltas = false;             // sparse: store the normal parts too
  /// Default: 1, or the power of two that keeps every position delta inside
  /// binary16's range (65504) when one is larger.
  std::optional<float> position_scale{};
  std::uint32_t flags = 0;  // morph_flags::has_normal_deltas is set by the builder
  std::optional<morph_driver_desc> driver{};
};

/// A muscle (chunk 27) on the joints of a skeleton, named by joint paths.
struct muscle_desc {
  std::uint32_t skeleton = none;  // skeleton handle (required)
  std::string_view name{};
  std::string_view forward_joint{}, forward_tip_joint{};
  std::string_view origin_joint{}, origin_tip_joint{};
  std::string_view insertion_joint{}, insertion_tip_joint{};
  /// Non-empty: sets muscle_flags::has_driver.
  std::string_view driver_joint{};
  /// Every number (fractions, offsets, radii, compliances, rings, segments,
  /// driver angles, flags); the builder fills the ids and string offsets.
  muscle_record settings{};
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
    return is_data_chunk(type) ? data : metadata;
  }
};

struct write_options {
  /// Default: 4, what the reference exporter writes (spec 7). An older
  /// version that cannot store the content (see minimum_format_version) is
  /// errc::format_version_too_low, never a silent loss.
  std::optional<std::uint32_t> format_version{};
  /// Default: the union of the entities' world bounds.
  std::optional<aabb> world_bounds{};
  mat4 root_transform = identity_matrix;
  std::uint32_t flags = 0;
  /// Fill contentHash (SHA-256 of the stored chunk bytes). On by default.
  bool content_hash = true;
  /// Write the untold.integrity chunk (integrity.hpp): a SHA-256 per
  /// `digest_block_size` block of every chunk's stored bytes, so readers can
  /// verify at open only what they read and the rest on first access.
  /// Stored first, before the metadata (one prefix read holds it); costs
  /// 32 bytes per block (0.05% at 64 KiB) and one more SHA-256 pass, which
  /// runs on the other `threads` while the content hash is computed.
  /// The chunk is bound to the contentHash: a tool that rewrites the file
  /// without knowing the chunk, and recomputes the contentHash, leaves it
  /// stale, and readers then verify the contentHash instead.
  /// Default (unset): on whenever `content_hash` is, so default files open
  /// without a pass over their geometry; false leaves the chunk out
  /// (SECURITY.md, "Integrity").
  std::optional<bool> block_digests{};
  std::uint32_t digest_block_size = default_digest_block_size;
  compression_policy compression{};
  /// Threads that compress chunks, compute block digests and (finish())
  /// copy the result while the content hash runs (the calling thread is one
  /// of them); 0 = std::thread::hardware_concurrency(). The
  /// output bytes are the same for every value: each chunk is compressed
  /// whole, on its own, into its own slot. A thread that cannot be started
  /// leaves its work to the others (with -fno-exceptions the standard
  /// library aborts instead).
  unsigned threads = 0;

  [[nodiscard]] bool writes_block_digests() const noexcept { return block_digests.value_or(content_hash); }
};

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

/// The writer. A class template only so that its member functions are
/// instantiated where they are used: a translation unit that includes this
/// header without building files pays half the compile time (measured in
/// docs/compile-time.md). Use it as `untold::builder`.
template <class Deferred = void>
class basic_builder {
 public:
  explicit basic_builder(untold::file_type type = untold::file_type::tile) : type_(type) {}

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
    if (d.geometry_of != none) {
      // Shares an earlier mesh's stored geometry (itself an owner of bytes).
      if (d.geometry_of >= handle || meshes_[d.geometry_of].geometry_of != none || !d.vertices.empty() ||
          !d.indices.empty() || !d.edge_indices.empty() || d.index_type.has_value())
        fail_here("geometryOf", d.geometry_of);
      else {
        const mesh_record& shared = meshes_[d.geometry_of].record;
        m.record.index_type = shared.index_type;
        m.record.vertex_count = shared.vertex_count;
        m.record.index_count = shared.index_count;
        m.record.local_bounds = shared.local_bounds;
        m.geometry_of = d.geometry_of;
      }
      meshes_.push_back(std::move(m));
      return handle;
    }
    if (d.vertices.size() % vertex_stride_pbr_static_v1 != 0 ||
        d.vertices.size() / vertex_stride_pbr_static_v1 > 0xFFFFFFFFu)
      fail_here("vertices", d.vertices.size());
    const auto vertex_count = static_cast<std::uint32_t>(d.vertices.size() / vertex_stride_pbr_static_v1);
    const index_type type = d.index_type.value_or(vertex_count <= 65535 ? index_type::uint16 : index_type::uint32);
    const std::uint32_t max_index = type == index_type::uint16 ? 0xFFFFu : 0xFFFFFFFFu;
    if (index_size(static_cast<std::uint32_t>(type)) == 0) fail_here("indexType", static_cast<std::uint32_t>(type));
    if (d.indices.size() > 0xFFFFFFFFu || d.indices.size() % 3 != 0) fail_here("indices", d.indices.size());
    if (d.edge_indices.size() > 0xFFFFFFFFu) fail_here("edgeIndices", d.edge_indices.size());
    // Every index below vertexCount and representable: one max per array
    // (vectorises), the offending index searched only on failure.
    const std::uint64_t limit = std::min<std::uint64_t>(vertex_count, std::uint64_t{max_index} + 1);
    for (const auto& [list, field] : {std::pair{d.indices, "indices"}, std::pair{d.edge_indices, "edgeIndices"}})
      if (!list.empty() && *std::max_element(list.begin(), list.end()) >= limit)
        fail_here(field, *std::find_if(list.begin(), list.end(), [&](std::uint32_t i) { return i >= limit; }));

    m.record.index_type = static_cast<std::uint32_t>(type);
    m.record.vertex_count = vertex_count;
    m.record.index_count = static_cast<std::uint32_t>(d.indices.size());
    // The builder's one copy of the geometry, already in stored form: the
    // file is written from these bytes without copying them again.
    m.vertices.assign(d.vertices.begin(), d.vertices.end());
    m.indices = encode_indices(d.indices, type);
    m.edge_indices = encode_indices(d.edge_indices, type);
    m.edge_index_count = static_cast<std::uint32_t>(d.edge_indices.size());

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
    const auto mode = static_cast<std::uint32_t>(d.alpha_mode);
    const std::uint32_t flag_mode = d.flags & material_flags::alpha_mode_mask;  // callers may set it in flags
    if (mode > static_cast<std::uint32_t>(untold::alpha_mode::blend) || (mode != 0 && flag_mode != 0 && flag_mode != mode))
      fail(errc::invalid_argument, chunk_type::material_table, handle, "alphaMode", mode);
    m.flags |= mode;
    if (d.double_sided) m.set_double_sided(true);
    m.transmission_factor = d.transmission_factor;
    if (!(d.transmission_factor >= 0.0f && d.transmission_factor <= 1.0f))
      fail(errc::invalid_argument, chunk_type::material_table, handle, "transmissionFactor", 0);
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

  /// Adds a skeleton and its joints; returns its handle. Errors (at finish):
  /// no entity, a dangling entity handle, a joint parent outside the skeleton,
  /// a parent cycle, a non-finite transform, two skeletons with one entityId.
  std::uint32_t add_skeleton(const skeleton_desc& d) {
    const auto handle = static_cast<std::uint32_t>(skeletons_.size());
    pending_skeleton s;
    s.entity = d.entity;
    s.record.entity_id = d.entity_id;
    s.record.name_offset = add_string(d.name, chunk_type::skeleton_table, handle, "name");
    skeletons_.push_back(std::move(s));
    for (const skeleton_joint_desc& joint : d.joints) add_joint(handle, joint);
    return handle;
  }

  /// Appends a joint to skeleton `skeleton`; returns its index within the
  /// skeleton (what parent and skin joints refer to).
  std::uint32_t add_joint(std::uint32_t skeleton, const skeleton_joint_desc& d) {
    if (skeleton >= skeletons_.size()) {
      fail(errc::invalid_argument, chunk_type::skeleton_table, skeleton, "skeleton", skeleton);
      return none;
    }
    std::vector<skeleton_joint_record>& joints = skeletons_[skeleton].joints;
    const auto index = static_cast<std::uint32_t>(joints.size());
    skeleton_joint_record j;
    j.parent_joint_index = d.parent;
    j.joint_path_offset = add_string(d.path, chunk_type::skeleton_joint_table, index, "path");
    j.flags = d.flags;
    j.bind_transform = d.bind_transform;
    j.rest_transform = d.rest_transform;
    if (!detail::all_finite(d.bind_transform) || !detail::all_finite(d.rest_transform))
      fail(errc::invalid_argument, chunk_type::skeleton_joint_table, index, "transform", 0);
    joints.push_back(j);
    return index;
  }

  /// Adds a skin binding mesh handle `mesh` to skeleton handle `skeleton`,
  /// with per-vertex joints and weights (stored in JOINT_INDEX_DATA and
  /// JOINT_WEIGHT_DATA); returns its handle. Errors: joint indices >=
  /// joints.size(), non-finite weights; at finish, dangling handles, a
  /// per-vertex count that is not the mesh's vertexCount, skin joints outside
  /// the skeleton.
  std::uint32_t add_skin(const skin_desc& d) {
    const auto handle = static_cast<std::uint32_t>(skins_.size());
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::skin_table, handle, field, value);
    };
    pending_skin s{d.mesh, d.skeleton, d.entity, d.entity_id,
                   std::vector<std::uint32_t>(d.joints.begin(), d.joints.end()),
                   std::vector<std::array<std::uint16_t, 4>>(d.joint_indices.begin(), d.joint_indices.end()),
                   std::vector<float4>(d.joint_weights.begin(), d.joint_weights.end())};
    if (d.joints.size() > 0xFFFFFFFFu) fail_here("joints", d.joints.size());
    for (std::size_t v = 0; v < s.joint_indices.size(); ++v)
      for (const std::uint16_t joint : s.joint_indices[v])
        if (joint >= d.joints.size()) fail_here("jointIndices", v);
    for (std::size_t v = 0; v < s.joint_weights.size(); ++v)
      if (!detail::all_finite(s.joint_weights[v])) fail_here("jointWeights", v);
    skins_.push_back(std::move(s));
    return handle;
  }

  /// Adds an animation clip with its channels and keys; returns its handle.
  /// Errors: key times not finite or decreasing within a channel, non-finite
  /// key values, a non-finite duration.
  std::uint32_t add_animation_clip(const animation_clip_desc& d) {
    const auto handle = static_cast<std::uint32_t>(clips_.size());
    animation_clip_record clip;
    clip.name_offset = add_string(d.name, chunk_type::animation_clip_table, handle, "name");
    clip.first_channel_record_index = static_cast<std::uint32_t>(channels_.size());
    clip.channel_record_count = static_cast<std::uint32_t>(d.channels.size());
    clip.flags = d.flags;
    float latest = 0;
    for (const animation_channel_desc& c : d.channels) {
      const auto row = static_cast<std::uint32_t>(channels_.size());
      animation_channel_record channel;
      channel.joint_path_offset = add_string(c.joint_path, chunk_type::animation_channel_table, row, "jointPath");
      channel.first_translation_index = static_cast<std::uint32_t>(translation_keys_.size());
      channel.translation_count = static_cast<std::uint32_t>(c.translations.size());
      channel.first_rotation_index = static_cast<std::uint32_t>(rotation_keys_.size());
      channel.rotation_count = static_cast<std::uint32_t>(c.rotations.size());
      channel.flags = c.flags;
      latest = std::max({latest, append_keys(translation_keys_, c.translations, row, "translations"),
                         append_keys(rotation_keys_, c.rotations, row, "rotations")});
      channels_.push_back(channel);
    }
    clip.duration = d.duration.value_or(latest);
    if (!untold::detail::is_finite(clip.duration))
      fail(errc::invalid_argument, chunk_type::animation_clip_table, handle, "duration", 0);
    clips_.push_back(clip);
    return handle;
  }

  /// Adds a light; returns its handle. Errors: an unknown lightType, a
  /// non-finite localTransform; at finish, a dangling entity handle.
  std::uint32_t add_light(const light_desc& d) {
    const auto handle = static_cast<std::uint32_t>(lights_.size());
    light_record l = d.light;
    l.entity_id = d.entity_id;
    l.name_offset = add_string(d.name, chunk_type::light_table, handle, "name");
    if (!is_known_light_type(l.light_type))
      fail(errc::invalid_argument, chunk_type::light_table, handle, "lightType", l.light_type);
    if (!detail::all_finite(l.local_transform))
      fail(errc::invalid_argument, chunk_type::light_table, handle, "localTransform", 0);
    lights_.push_back({l, d.entity});
    return handle;
  }

  /// Adds a camera; returns its handle. Errors: a non-finite localTransform;
  /// at finish, a dangling entity handle.
  std::uint32_t add_camera(const camera_desc& d) {
    const auto handle = static_cast<std::uint32_t>(cameras_.size());
    camera_record c = d.camera;
    c.entity_id = d.entity_id;
    c.name_offset = add_string(d.name, chunk_type::camera_table, handle, "name");
    if (!detail::all_finite(c.local_transform))
      fail(errc::invalid_argument, chunk_type::camera_table, handle, "localTransform", 0);
    cameras_.push_back({c, d.entity});
    return handle;
  }

  /// Sets the file's color management (at most one record; a second call
  /// replaces it). Errors (at finish): a dangling LUT texture handle.
  void set_color_management(const color_management_desc& d) {
    color_management_record c = d.settings;
    c.lut_texture_index = d.lut_texture;  // a handle until finish()
    c.view_transform_name_offset = add_string(d.view_transform, chunk_type::color_management_table, 0, "viewTransform");
    c.look_name_offset = add_string(d.look, chunk_type::color_management_table, 0, "look");
    color_management_ = c;
  }

  /// Adds a color-grade LUT; returns its handle.
  std::uint32_t add_color_grade_lut(const color_grade_lut_desc& d) {
    const auto handle = static_cast<std::uint32_t>(luts_.size());
    color_grade_lut_record l;
    l.lut_uri_offset = add_string(d.uri, chunk_type::color_grade_lut_table, handle, "uri");
    l.lut_size = d.lut_size;
    l.domain_min = d.domain_min;
    l.domain_max = d.domain_max;
    luts_.push_back(l);
    return handle;
  }

  /// Adds a morph target to mesh handle `mesh`; returns its handle (its row
  /// in the morph target table; targets are stored in call order, their
  /// entries in MORPH_TARGET_DATA in the same order). Errors: a dangling mesh
  /// handle; dense arrays whose length is not the mesh's vertexCount (normals
  /// may be empty); both dense and sparse deltas; a sparse vertex >= the
  /// vertexCount; a non-finite delta; a position delta that does not fit
  /// binary16 at the given positionScale; a positionScale that is not finite
  /// and > 0.
  std::uint32_t add_morph_target(std::uint32_t mesh, const morph_target_desc& d) {
    const auto handle = static_cast<std::uint32_t>(morphs_.size());
    const auto fail_here = [&](const char* field, std::uint64_t value) {
      fail(errc::invalid_argument, chunk_type::morph_target_table, handle, field, value);
    };
    pending_morph p;
    p.mesh = mesh;
    p.record.name_offset = add_string(d.name, chunk_type::morph_target_table, handle, "name");
    if (d.driver) {
      p.driver = morph_driver_record{};
      p.driver->joint_path_offset = add_string(d.driver->joint_path, chunk_type::morph_driver_table, handle, "jointPath");
      p.driver->kernel = d.driver->kernel;
      p.driver->pose_rotation = d.driver->pose_rotation;
      p.driver->radius = d.driver->radius;
      if (!detail::all_finite(d.driver->pose_rotation) || !untold::detail::is_finite(d.driver->radius))
        fail(errc::invalid_argument, chunk_type::morph_driver_table, handle, "driver", 0);
    }
    if (mesh >= meshes_.size()) {
      fail_here("mesh", mesh);
      morphs_.push_back(std::move(p));
      return handle;
    }
    const std::uint32_t vertex_count = meshes_[mesh].record.vertex_count;
    const bool dense = !d.positions.empty() || !d.normals.empty();
    if (dense && !d.deltas.empty()) fail_here("deltas", d.deltas.size());
    if (dense && (d.positions.size() != vertex_count || (!d.normals.empty() && d.normals.size() != vertex_count)))
      fail_here("positions", d.positions.size());
    const bool with_normals = dense ? !d.normals.empty() : d.normal_deltas;

    // The deltas as (vertex, position, normal), from either form.
    std::vector<morph_delta> deltas;
    if (dense && d.positions.size() == vertex_count) {
      for (std::uint32_t v = 0; v < vertex_count; ++v)
        deltas.push_back({v, d.positions[v], d.normals.empty() ? float3{0, 0, 0} : d.normals[v]});
    } else if (!dense) {
      deltas.assign(d.deltas.begin(), d.deltas.end());
    }
    float largest = 0;
    for (const morph_delta& delta : deltas) {
      if (delta.vertex >= vertex_count) { fail_here("vertex", delta.vertex); break; }
      if (!detail::all_finite(delta.position) || !detail::all_finite(delta.normal)) { fail_here("delta", delta.vertex); break; }
      for (const float c : delta.position) largest = std::max(largest, std::fabs(c));
    }
    float scale = d.position_scale.value_or(1.0f);
    if (!d.position_scale)
      while (largest / scale > static_cast<float>(half_max)) scale *= 2.0f;
    if (!untold::detail::is_finite(scale) || !(scale > 0.0f)) fail_here("positionScale", 0);

    p.record.flags = d.flags | (with_normals ? morph_flags::has_normal_deltas : 0u);
    p.record.position_scale = scale;
    for (const morph_delta& delta : deltas) {
      morph_target_entry e;
      e.vertex_index = delta.vertex;
      bool moves = false;
      for (int k = 0; k < 3; ++k) {
        const auto position = float_to_half(static_cast<double>(delta.position[k]) / scale);
        const auto normal = float_to_half(with_normals ? delta.normal[k] : 0.0f);
        if (!position || !normal) {
          fail_here(position ? "normalDelta" : "positionDelta", delta.vertex);
          break;
        }
        e.position_delta[k] = *position;
        e.normal_delta[k] = *normal;
        moves = moves || (*position & 0x7FFFu) != 0 || (*normal & 0x7FFFu) != 0;
      }
      if (moves) p.entries.push_back(e);
    }
    morphs_.push_back(std::move(p));
    return handle;
  }

  /// add_morph_target for each of `targets`, in order (e.g. a glTF
  /// primitive's targets, whose indices then are the returned handle + i).
  /// Returns the first one's handle.
  std::uint32_t add_morph_targets(std::uint32_t mesh, std::span<const morph_target_desc> targets) {
    const auto first = static_cast<std::uint32_t>(morphs_.size());
    for (const morph_target_desc& t : targets) add_morph_target(mesh, t);
    return first;
  }

  /// Adds a muscle on skeleton handle `d.skeleton`; returns its handle.
  /// Errors (at finish): a dangling skeleton handle.
  std::uint32_t add_muscle(const muscle_desc& d) {
    const auto handle = static_cast<std::uint32_t>(muscles_.size());
    muscle_record m = d.settings;
    const auto text = [&](std::string_view s, const char* field) {
      return add_string(s, chunk_type::muscle_table, handle, field);
    };
    m.name_offset = text(d.name, "name");
    m.forward_joint_offset = text(d.forward_joint, "forwardJoint");
    m.forward_tip_joint_offset = text(d.forward_tip_joint, "forwardTipJoint");
    m.origin_joint_offset = text(d.origin_joint, "originJoint");
    m.origin_tip_joint_offset = text(d.origin_tip_joint, "originTipJoint");
    m.insertion_joint_offset = text(d.insertion_joint, "insertionJoint");
    m.insertion_tip_joint_offset = text(d.insertion_tip_joint, "insertionTipJoint");
    m.driver_joint_offset = text(d.driver_joint, "driverJoint");
    if (!d.driver_joint.empty()) m.flags |= muscle_flags::has_driver;
    muscles_.push_back({m, d.skeleton});
    return handle;
  }

  /// Adds a plugin chunk of type `type` (>= 0x8000): the library writes the
  /// envelope (magic, version 1, plugin id, kind, chunk version) before
  /// `payload`. Stored after every other chunk, in call order. Errors: an
  /// invalid plugin id (see is_valid_plugin_id), a type below 0x8000.
  void add_plugin_chunk(std::string_view plugin_id, std::uint32_t kind, std::uint32_t chunk_version,
                        byte_span payload, std::uint32_t type = first_plugin_chunk_type) {
    if (!is_plugin_chunk_type(type)) {
      fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, "chunkType", type);
      return;
    }
    auto encoded = encode_plugin_chunk(plugin_id, kind, chunk_version, payload);
    if (!encoded) {
      fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, "pluginId", plugin_id.size());
      return;
    }
    raw_chunks_.push_back({type, std::move(*encoded), 0});
  }

  /// Adds a chunk the library does not interpret (type 23..0x7FFF, or a
  /// plugin chunk >= 0x8000 whose payload already starts with a valid
  /// envelope), stored after every other chunk, in call order.
  void add_raw_chunk(std::uint32_t type, byte_span payload, std::uint32_t element_count = 0) {
    if (is_known_chunk_type(type) || type == 0) fail(errc::invalid_argument, chunk_type::string_table, no_index, "chunkType", type);
    if (is_plugin_chunk_type(type)) {
      if (const auto envelope = parse_plugin_chunk(payload); !envelope)
        fail(errc::invalid_argument, static_cast<chunk_type>(type), no_index, envelope.error().context.field,
             envelope.error().context.value);
    }
    raw_chunks_.push_back({type, std::vector<std::byte>(payload.begin(), payload.end()), element_count});
  }

  /// The first problem any add_* call met (errc::ok when none).
  [[nodiscard]] const error& first_error() const noexcept { return error_; }

  /// The lowest formatVersion that stores every material field that is set:
  /// 4 for a transmission factor or a height remap, 3 for other height
  /// fields, 2 for a non-zero emissive factor (the reference engine ignores it
  /// in version 1), else 1.
  [[nodiscard]] std::uint32_t minimum_format_version() const noexcept {
    std::uint32_t v = 1;
    for (const material_record& m : materials_) v = std::max(v, detail::material_version(m).first);
    return v;
  }

  /// Lays out the file and streams its bytes to `sink(byte_span) -> bool`
  /// (e.g. write_file_with's file sink) in order, piece by piece: header and
  /// table, then each chunk where it lies in the builder (geometry is never
  /// gathered into a whole-file buffer) with zero padding between. Peak
  /// memory beyond the builder's own: the tables, compressed chunks and the
  /// block digests. A sink that returns false gives errc::io_write_failed
  /// (nothing more is passed to it). Same bytes as finish().
  template <class Sink>
  status write(Sink&& sink, const write_options& options = {}) const {
    auto file = lay_out_file(options);
    if (!file) return file.error();
    // The header holds the content hash and the integrity chunk comes first:
    // a sink that only appends gets its first byte after every hash is done.
    UNTOLD_TRY(hash_stored_bytes(*file, nullptr));
    if (!emit(*file, sink, false)) return make_error(errc::io_write_failed, {.field = "sink"});
    return {};
  }

  /// The whole file in memory (one copy of every byte into the result).
  /// The copy runs while the hashes are computed (on its own thread when
  /// write_options::threads allows two), so with the content hash on it adds
  /// next to nothing to the serial SHA-256 pass.
  [[nodiscard]] result<std::vector<std::byte>> finish(const write_options& options = {}) const {
    auto file = lay_out_file(options);
    if (!file) return file.error();
    std::vector<std::byte> out;
    out.reserve(static_cast<std::size_t>(file->size));  // never reallocated below: appending cannot throw
    const auto append = [&out](byte_span piece) {
      out.insert(out.end(), piece.begin(), piece.end());
      return true;
    };
    // The header, table and integrity chunk are still being filled in by the
    // hashing: zeros here, their bytes copied over once it is done.
    UNTOLD_TRY(hash_stored_bytes(*file, [&] { emit(*file, append, true); }));
    std::memcpy(out.data(), file->directory.data(), file->directory.size());
    for (std::size_t row = 0; row < file->table.size(); ++row)
      if (file->table[row].chunk_type == integrity_chunk_type)
        std::memcpy(out.data() + file->table[row].file_offset, file->owned[row].data(), file->owned[row].size());
    return out;
  }

 private:
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

    [[nodiscard]] std::uint64_t size() const noexcept { return parts.empty() ? payload.size() : parts_size; }
    void append(byte_span bytes) {
      if (bytes.empty()) return;
      parts.push_back(bytes);
      parts_size += bytes.size();
    }
    // Zero bytes up to the next multiple of `alignment` (<= chunk_alignment).
    void align(std::uint64_t alignment) {
      if (const std::uint64_t r = parts_size % alignment; r != 0)
        append(byte_span(detail::zero_padding).first(static_cast<std::size_t>(alignment - r)));
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
  struct laid_out_file_t {
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

  // Passes the file's bytes to `sink` in order. `hashed_as_zeros`: zeros
  // instead of the header, table and integrity chunk (what
  // hash_stored_bytes writes, possibly at the same time).
  template <class Sink>
  static bool emit(const laid_out_file_t& f, Sink& sink, bool hashed_as_zeros) {
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

  result<laid_out_file_t> lay_out_file(const write_options& options) const {
    if (error_.code != errc::ok) return error_;
    const std::uint32_t version = options.format_version.value_or(max_format_version);
    if (version < min_format_version || version > max_format_version)
      return make_error(errc::invalid_argument, {.field = "formatVersion", .value = version, .has_value = true});
    for (std::uint32_t i = 0; i < materials_.size(); ++i)  // the first material the version cannot store
      if (const auto [needed, field] = detail::material_version(materials_[i]); needed > version)
        return make_error(errc::format_version_too_low,
                          {.chunk_type = static_cast<std::uint32_t>(chunk_type::material_table), .record_index = i,
                           .field = field, .value = version, .has_value = true, .limit = needed, .has_limit = true});

    file_header h;
    h.format_version = version;
    h.file_type = static_cast<std::uint32_t>(type_);
    h.flags = options.flags;
    h.root_transform = options.root_transform;
    if (!detail::all_finite(options.root_transform))
      return make_error(errc::invalid_argument, {.field = "rootTransform"});

    auto core = build_core_tables(h, options);
    if (!core) return core.error();
    auto extensions = build_extension_tables(h.format_version, core->mesh_rows);
    if (!extensions) return extensions.error();
    std::vector<pending_chunk>& chunks = core->chunks;
    for (pending_chunk& c : *extensions) chunks.push_back(std::move(c));
    // Spec 7: metadata in type order, then data in type order; empty chunks
    // only when the file type requires them; raw chunks last, in call order.
    std::erase_if(chunks, [&](const pending_chunk& c) {
      return c.size() == 0 && !is_required_chunk(type_, c.type);
    });
    std::stable_sort(chunks.begin(), chunks.end(), [](const pending_chunk& a, const pending_chunk& b) {
      return std::pair{is_data_chunk(a.type), a.type} < std::pair{is_data_chunk(b.type), b.type};
    });
    for (const pending_chunk& raw : raw_chunks_) {
      chunks.push_back({raw.type, {}, raw.element_count});
      chunks.back().append(raw.payload);
    }
    return lay_out(h, std::move(chunks), options);
  }

  // Appends a channel's keys after checking them (finite fields, times in
  // order; an error names the channel and the key); returns the last key time.
  template <class K>
  float append_keys(std::vector<K>& out, std::span<const K> keys, std::uint32_t channel, const char* field) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      bool finite = true;
      const auto check = [&finite](const auto& field, const char*) {
        if constexpr (std::is_floating_point_v<std::remove_cvref_t<decltype(field)>>)
          finite = finite && untold::detail::is_finite(field);
      };
      record_traits<K>::fields(check, keys[i], max_format_version);
      if (!finite || (i > 0 && keys[i].time < keys[i - 1].time))
        fail(errc::invalid_argument, chunk_type::animation_channel_table, channel, field, i);
      out.push_back(keys[i]);
    }
    return keys.empty() ? 0.0f : keys.back().time;
  }

  // The entityId a record carries: that of entity handle `entity`, else `raw`.
  result<std::uint32_t> entity_id_of(std::uint32_t entity, std::uint32_t raw, chunk_type table,
                                     std::uint32_t record) const {
    if (entity == none) return raw;
    if (entity >= entities_.size()) return input_error(table, record, "entity", entity);
    return entities_[entity].entity_id;
  }

  // The error for bad input to the builder: which table, record and field.
  static error input_error(chunk_type table, std::uint32_t record, const char* field, std::uint64_t value) noexcept {
    return make_error(errc::invalid_argument, {.chunk_type = static_cast<std::uint32_t>(table), .record_index = record,
                                               .field = field, .value = value, .has_value = true});
  }

  void fail(errc code, chunk_type table, std::uint32_t record, const char* field, std::uint64_t value) {
    if (error_.code != errc::ok) return;
    error_ = input_error(table, record, field, value);
    error_.code = code;
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
  result<core_tables> build_core_tables(file_header& h, const write_options& options) const {
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
      world[i] = multiply(parent == none ? options.root_transform : world[parent], e.local_transform);
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
    std::unordered_map<std::uint32_t, mesh_record> stored;  // owner of shared bytes -> its first record
    for (const std::uint32_t source : order) {
      const pending_mesh& pm = meshes_[source];
      mesh_record m = pm.record;
      entity_record& owner = entities[pm.entity];
      const auto row = static_cast<std::uint32_t>(meshes.size());
      if (owner.mesh_record_count == 0) owner.first_mesh_record_index = row;
      ++owner.mesh_record_count;
      owner.local_bounds = has_bounds[pm.entity] ? detail::merge(owner.local_bounds, m.local_bounds) : m.local_bounds;
      has_bounds[pm.entity] = true;

      const std::uint32_t isize = index_size(m.index_type);
      m.entity_id = owner.entity_id;
      m.vertex_stride_bytes = vertex_stride_pbr_static_v1;
      // Geometry is stored once per owner of bytes; instances reuse its ranges.
      const std::uint32_t bytes_of = pm.geometry_of == none ? source : pm.geometry_of;
      if (const auto it = stored.find(bytes_of); it != stored.end()) {
        const mesh_record& first = it->second;
        m.vertex_data_offset = first.vertex_data_offset;
        m.vertex_data_size_bytes = first.vertex_data_size_bytes;
        m.index_data_offset = first.index_data_offset;
        m.index_data_size_bytes = first.index_data_size_bytes;
        m.reserved0 = first.reserved0;
      } else {
        const pending_mesh& data = meshes_[bytes_of];
        m.vertex_data_offset = vertex_data.size();
        m.vertex_data_size_bytes = data.vertices.size();
        vertex_data.append(data.vertices);
        // Index ranges start 4-byte aligned so a GPU upload can take them as is.
        index_data.align(4);
        m.index_data_offset = index_data.size();
        m.index_data_size_bytes = data.indices.size();
        index_data.append(data.indices);
        if (!data.edge_indices.empty()) {
          edge_data.align(4);
          if (edge_data.size() > 0xFFFFFFFFu)
            return make_error(errc::invalid_argument, {.chunk_type = 18, .record_index = source, .field = "edgeIndices"});
          m.set_edge_indices(static_cast<std::uint32_t>(edge_data.size()), data.edge_index_count);
          edge_data.append(data.edge_indices);
        }
        stored.emplace(bytes_of, m);
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
    // Finite local transforms and positions can still overflow float in a
    // world transform or its bounds; the file would then fail R-FINITE.
    for (std::uint32_t i = 0; i < entities.size(); ++i)
      if (!detail::all_finite(entities[i].world_bounds))
        return make_error(errc::invalid_argument, {.chunk_type = 2, .record_index = i, .field = "worldBounds"});
    if (!detail::all_finite(h.world_bounds)) return make_error(errc::invalid_argument, {.field = "worldBounds"});

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

    core_tables out;
    out.mesh_rows.resize(order.size());
    for (std::uint32_t row = 0; row < order.size(); ++row) out.mesh_rows[order[row]] = row;
    std::vector<pending_chunk>& chunks = out.chunks;
    chunks.push_back({static_cast<std::uint32_t>(chunk_type::string_table), {}, 0});
    chunks.back().append(strings_.bytes());
    chunks.push_back(encode_table<entity_record>(entities, h.format_version));
    chunks.push_back(encode_table<mesh_record>(meshes, h.format_version));
    chunks.push_back(encode_table<material_record>(materials_, h.format_version));
    chunks.push_back(encode_table<texture_record>(textures_, h.format_version));
    chunks.push_back(std::move(vertex_data));
    chunks.push_back(std::move(index_data));
    chunks.push_back(std::move(edge_data));
    return out;
  }

  // Resolves the extension records' handles and encodes tables 8-15, 19-23,
  // 26, 27 and the joint index / weight and morph target data (16, 17, 24).
  result<std::vector<pending_chunk>> build_extension_tables(std::uint32_t version,
                                                            std::span<const std::uint32_t> mesh_rows) const {
    // Skeletons: joints concatenated in skeleton order; parents stay skeleton-local.
    std::vector<skeleton_record> skeletons;
    std::vector<skeleton_joint_record> joints;
    for (std::uint32_t i = 0; i < skeletons_.size(); ++i) {
      const pending_skeleton& ps = skeletons_[i];
      skeleton_record s = ps.record;
      auto id = entity_id_of(ps.entity, s.entity_id, chunk_type::skeleton_table, i);
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
    for (std::uint32_t i = 0; i < skins_.size(); ++i) {
      const pending_skin& d = skins_[i];
      if (d.mesh >= meshes_.size()) return input_error(chunk_type::skin_table, i, "mesh", d.mesh);
      if (d.skeleton >= skeletons.size()) return input_error(chunk_type::skin_table, i, "skeleton", d.skeleton);
      const std::uint32_t vertex_count = meshes_[d.mesh].record.vertex_count;
      if (d.joint_indices.size() != vertex_count)
        return input_error(chunk_type::skin_table, i, "jointIndices", d.joint_indices.size());
      if (d.joint_weights.size() != vertex_count)
        return input_error(chunk_type::skin_table, i, "jointWeights", d.joint_weights.size());
      for (const std::uint32_t joint : d.joints)
        if (joint >= skeletons[d.skeleton].joint_record_count)
          return input_error(chunk_type::skin_table, i, "joints", joint);
      auto id = entity_id_of(d.entity == none && d.entity_id == none ? meshes_[d.mesh].entity : d.entity, d.entity_id,
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
    for (std::uint32_t i = 0; i < lights_.size(); ++i) {
      auto id = entity_id_of(lights_[i].entity, lights_[i].record.entity_id, chunk_type::light_table, i);
      if (!id) return id.error();
      lights.push_back(lights_[i].record);
      lights.back().entity_id = *id;
    }
    std::vector<camera_record> cameras;
    for (std::uint32_t i = 0; i < cameras_.size(); ++i) {
      auto id = entity_id_of(cameras_[i].entity, cameras_[i].record.entity_id, chunk_type::camera_table, i);
      if (!id) return id.error();
      cameras.push_back(cameras_[i].record);
      cameras.back().entity_id = *id;
    }
    std::vector<color_management_record> color;
    if (color_management_) {
      const std::uint32_t texture = color_management_->lut_texture_index;  // textures are stored in handle order
      if (texture != none && texture >= textures_.size())
        return input_error(chunk_type::color_management_table, 0, "lutTexture", texture);
      color.push_back(*color_management_);
    }

    // Morph targets in call order, entries concatenated; drivers follow them.
    std::vector<morph_target_record> morphs;
    std::vector<morph_driver_record> drivers;
    pending_chunk morph_data{static_cast<std::uint32_t>(chunk_type::morph_target_data), {}, 0};
    for (std::uint32_t i = 0; i < morphs_.size(); ++i) {
      const pending_morph& p = morphs_[i];
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
    for (std::uint32_t i = 0; i < muscles_.size(); ++i) {
      const std::uint32_t skeleton = muscles_[i].entity;  // a skeleton handle here
      if (skeleton >= skeletons.size()) return input_error(chunk_type::muscle_table, i, "skeleton", skeleton);
      muscles.push_back(muscles_[i].record);
      muscles.back().skeleton_entity_id = skeletons[skeleton].entity_id;
    }

    std::vector<pending_chunk> chunks;
    chunks.push_back(encode_table<skeleton_record>(skeletons, version));
    chunks.push_back(encode_table<skeleton_joint_record>(joints, version));
    chunks.push_back(encode_table<skin_record>(skins, version));
    chunks.push_back(encode_table<skin_joint_mapping_record>(mappings, version));
    chunks.push_back(encode_table<animation_clip_record>(clips_, version));
    chunks.push_back(encode_table<animation_channel_record>(channels_, version));
    chunks.push_back(encode_table<translation_keyframe_record>(translation_keys_, version));
    chunks.push_back(encode_table<rotation_keyframe_record>(rotation_keys_, version));
    chunks.push_back(encode_table<light_record>(lights, version));
    chunks.push_back(encode_table<camera_record>(cameras, version));
    chunks.push_back(encode_table<color_management_record>(color, version));
    chunks.push_back(encode_table<color_grade_lut_record>(luts_, version));
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
  static result<laid_out_file_t> lay_out(file_header& h, std::vector<pending_chunk> chunks,
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
    laid_out_file_t f;
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
      auto packed = compress(policy.method, policy.level, raw);
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
  static status hash_stored_bytes(laid_out_file_t& f, Concurrent&& concurrent) {
    // The binding records the content hash's midstate, which OpenSSL's EVP
    // interface does not expose: sha256_resumable (SHA extensions where the
    // CPU has them) computes the content hash of files with both.
    if (f.content_hash && f.block_size != 0) return hash_stored_bytes_with<sha256_resumable>(f, concurrent);
    return hash_stored_bytes_with<sha256>(f, concurrent);
  }

  template <class Hasher, class Concurrent>
  static status hash_stored_bytes_with(laid_out_file_t& f, Concurrent&& concurrent) {
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
        bind_integrity_chunk(f.owned[0], content);
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

  untold::file_type type_;
  string_pool strings_;
  std::vector<entity_record> entities_;
  std::vector<pending_mesh> meshes_;
  std::vector<material_record> materials_;
  std::vector<texture_record> textures_;
  std::vector<pending_skeleton> skeletons_;
  std::vector<pending_skin> skins_;
  std::vector<animation_clip_record> clips_;
  std::vector<animation_channel_record> channels_;
  std::vector<translation_keyframe_record> translation_keys_;
  std::vector<rotation_keyframe_record> rotation_keys_;
  std::vector<pending_morph> morphs_;
  std::vector<with_entity<muscle_record>> muscles_;  // entity: the skeleton handle
  std::vector<with_entity<light_record>> lights_;
  std::vector<with_entity<camera_record>> cameras_;
  std::optional<color_management_record> color_management_;
  std::vector<color_grade_lut_record> luts_;
  std::vector<pending_chunk> raw_chunks_;
  error error_{};
};

using builder = basic_builder<>;

}  // namespace untold
