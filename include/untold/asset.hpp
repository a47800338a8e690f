// untold/asset.hpp - an opened, validated .untold file.
//
// An `asset` is what `untold::open` returns once every rule has passed. Its
// accessors are infallible and bounds-safe: they only hand out ranges that
// validation proved. It does not own the file bytes (keep the buffer or
// mapped_file alive); it owns only the payloads it had to decompress.
// Move-only, because its spans may point into its own storage.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "detail/lean_std.hpp"
#include "format.hpp"
#include "records.hpp"
#include "view.hpp"

namespace untold {

/// What a file's block digests (the untold.integrity chunk, integrity.hpp)
/// meant for the open that returned an asset: asset::block_digests().
enum class digest_status : std::uint8_t {
  /// The file has none.
  absent,
  /// Computed for this file (bound to its contentHash, or a version 1 chunk
  /// or a file without contentHash, which cannot be bound): verified as
  /// open_options::integrity says.
  current,
  /// Computed for another contentHash, e.g. before a tool that does not know
  /// the chunk rewrote the file: ignored, and the contentHash verified over
  /// the whole file instead (R-HASH), as for a file without block digests.
  stale,
  /// Not looked at: opened with integrity::none.
  unchecked,
};

namespace detail {
struct integrity_access;  // integrity.hpp: fills and checks block_digest_state

/// What an asset keeps of the file's block digests (the untold.integrity
/// chunk, integrity.hpp) to verify chunks on first access. Empty (block_size
/// 0) when there is nothing left to verify: no digests, integrity::none, or
/// everything was verified at open.
struct block_digest_state {
  std::uint64_t block_size = 0;
  byte_span row_digests;                   // per chunk row: SHA-256 of its block digests
  byte_span block_digests;                 // 32 bytes per block, rows in table order
  std::vector<std::uint64_t> first_block;  // per row: index of its first block digest (rows + 1)
  bool defer_uncompressed = false;         // whole-file lazy open: uncompressed data waits for first access
  bool roots_content_hash = false;         // a bound version 3 chunk: every block proves the contentHash
  // 1 = verified. Read and written only atomically (integrity.hpp
  // detail::flag_*), so const accessors may verify from several threads.
  std::vector<std::uint8_t> row_verified;    // the row's block digests vs its row digest
  std::vector<std::uint8_t> block_verified;  // the block's stored bytes vs its digest
};
}  // namespace detail

class asset {
 public:
  asset() = default;
  asset(const asset&) = delete;
  asset& operator=(const asset&) = delete;
  asset(asset&&) noexcept = default;
  asset& operator=(asset&&) noexcept = default;

  [[nodiscard]] const file_header& header() const noexcept { return header_; }
  [[nodiscard]] std::uint32_t format_version() const noexcept { return header_.format_version; }
  [[nodiscard]] untold::file_type file_type() const noexcept {
    return static_cast<untold::file_type>(header_.file_type);
  }

  /// Every chunk table row, in table order (unknown core and plugin chunks too).
  [[nodiscard]] std::span<const chunk_entry> chunks() const noexcept { return chunks_; }

  /// The row index of a known core chunk type, or nullopt when absent.
  [[nodiscard]] std::optional<std::uint32_t> find_chunk(chunk_type type) const noexcept {
    const auto t = static_cast<std::uint32_t>(type);
    if (t > max_known_chunk_type || chunk_by_type_[t] == none) return std::nullopt;
    return chunk_by_type_[t];
  }

  /// The uncompressed payload of chunk row `chunk_index` (empty when out of
  /// range or not loaded). Uncompressed chunks are views into the file bytes.
  [[nodiscard]] byte_span payload(std::size_t chunk_index) const noexcept {
    return chunk_index < payloads_.size() ? payloads_[chunk_index] : byte_span{};
  }
  /// The uncompressed payload of a core chunk type (empty when absent).
  [[nodiscard]] byte_span payload(chunk_type type) const noexcept {
    const auto row = find_chunk(type);
    return row ? payload(*row) : byte_span{};
  }
  /// Whether chunk row `chunk_index` has its payload in memory (always true
  /// for a whole-file open; byte-range loading fills payloads on demand).
  [[nodiscard]] bool is_loaded(std::size_t chunk_index) const noexcept {
    return chunk_index < loaded_.size() && loaded_[chunk_index] != 0;
  }

  /// Rows of the chunk table whose type the library does not interpret
  /// (25, the Gaussian splats; 28..0x7FFF; plugin chunks >= 0x8000: see
  /// is_known_chunk_type), in table order.
  [[nodiscard]] std::vector<std::uint32_t> raw_chunks() const {
    std::vector<std::uint32_t> rows;
    for (std::uint32_t i = 0; i < chunks_.size(); ++i)
      if (!is_known_chunk_type(chunks_[i].chunk_type)) rows.push_back(i);
    return rows;
  }

  [[nodiscard]] string_table strings() const noexcept { return string_table(payload(chunk_type::string_table)); }
  /// The string at a validated offset; "" for NONE.
  [[nodiscard]] std::string_view string(std::uint32_t offset) const noexcept { return strings()[offset]; }

  /// A typed view of a record table (empty when the chunk is absent).
  template <class R>
  [[nodiscard]] record_view<R> table() const noexcept {
    return record_view<R>::make_or_empty(payload(record_traits<R>::table), header_.format_version);
  }
  [[nodiscard]] record_view<entity_record> entities() const noexcept { return table<entity_record>(); }
  [[nodiscard]] record_view<mesh_record> meshes() const noexcept { return table<mesh_record>(); }
  [[nodiscard]] record_view<material_record> materials() const noexcept { return table<material_record>(); }
  [[nodiscard]] record_view<texture_record> textures() const noexcept { return table<texture_record>(); }

  /// Records [first, first + count) of table R as a view (e.g. a skeleton's
  /// joints, a clip's channels). Empty when that range is not inside the table
  /// (never for a range a validated record declares). Safe for any values.
  template <class R>
  [[nodiscard]] record_view<R> records(std::uint64_t first, std::uint64_t count) const noexcept {
    const record_view<R> all = table<R>();
    const auto offset = checked_mul(first, all.stride());  // `first` counts records, not bytes
    const auto range = offset ? checked_range(*offset, count, all.stride(), all.bytes().size()) : std::nullopt;
    if (!range) return {};
    return record_view<R>::make_or_empty(subspan(all.bytes(), *range), header_.format_version);
  }

  /// A mesh's PBR_STATIC_V1 vertex bytes (vertexCount * 32). Empty when the
  /// record's range is not inside VERTEX_DATA (never for a validated record)
  /// or the chunk is not loaded. Safe for any record, even a made-up one.
  [[nodiscard]] byte_span vertices(const mesh_record& mesh) const noexcept {
    return slice(chunk_type::vertex_data, mesh.vertex_data_offset, mesh.vertex_data_size_bytes);
  }
  /// A mesh's index bytes (indexCount * index size, little-endian).
  [[nodiscard]] byte_span indices(const mesh_record& mesh) const noexcept {
    return slice(chunk_type::index_data, mesh.index_data_offset, mesh.index_data_size_bytes);
  }
  /// A mesh's edge index bytes (edgeIndexCount * index size); empty when none.
  [[nodiscard]] byte_span edge_indices(const mesh_record& mesh) const noexcept {
    const auto size = std::uint64_t{mesh.edge_index_count()} * index_size(mesh.index_type);
    return slice(chunk_type::edge_index_data, mesh.edge_index_offset(), size);
  }

  /// The table row of the entity with this entityId, or nullopt.
  [[nodiscard]] std::optional<std::uint32_t> entity_row(std::uint32_t entity_id) const noexcept {
    const auto it = detail::lower_bound(entity_rows_.begin(), entity_rows_.end(), std::pair{entity_id, 0u});
    if (it == entity_rows_.end() || it->first != entity_id) return std::nullopt;
    return it->second;
  }

  /// What the file's block digests meant for this open (digest_status): a
  /// `stale` file was verified by its whole-file contentHash, and its
  /// verified accessors and byte-range loads check nothing more.
  [[nodiscard]] digest_status block_digests() const noexcept { return digests_; }

  /// Whether the asset was opened with open_options::relaxed_extension_ranges
  /// (the library's stricter extension rules relaxed; see docs/format.md).
  [[nodiscard]] bool relaxed_extension_ranges() const noexcept { return relaxed_extension_ranges_; }

  /// Bytes [offset, offset + size) of a core chunk's uncompressed payload;
  /// empty when the chunk is absent or not loaded or the range is not inside
  /// it. Safe for any values.
  [[nodiscard]] byte_span slice(chunk_type type, std::uint64_t offset, std::uint64_t size) const noexcept {
    const byte_span chunk = payload(type);
    const auto range = checked_range(offset, size, 1, chunk.size());
    return range ? subspan(chunk, *range) : byte_span{};
  }

 private:

  friend class asset_loader;
  friend struct detail::integrity_access;

  file_header header_{};
  std::vector<chunk_entry> chunks_;
  std::vector<byte_span> payloads_;          // per row: uncompressed payload
  std::vector<std::uint8_t> loaded_;         // per row: payload present
  std::vector<byte_buffer> owned_;           // storage of decoded payloads and of bytes read by range
  std::array<std::uint32_t, max_known_chunk_type + 1> chunk_by_type_ = filled_none();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> entity_rows_;  // (entityId, row), sorted
  mutable detail::block_digest_state integrity_;                      // integrity.hpp
  digest_status digests_ = digest_status::absent;                     // integrity.hpp
  bool relaxed_extension_ranges_ = false;

  static constexpr std::array<std::uint32_t, max_known_chunk_type + 1> filled_none() noexcept {
    std::array<std::uint32_t, max_known_chunk_type + 1> a{};
    a.fill(none);
    return a;
  }
};

}  // namespace untold
