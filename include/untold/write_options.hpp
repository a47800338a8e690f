// untold/write_options.hpp - how basic_builder (writer.hpp) writes a file:
// format version, bounds, flags, content hash, block digests, compression
// per chunk kind, threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "compression.hpp"
#include "format.hpp"
#include "integrity.hpp"
#include "records.hpp"

namespace untold {

/// How one chunk is stored. lz4 with level > 0 means lz4hc at that level;
/// zstd level 0 means zstd's default level.
struct chunk_compression {
  compression method = compression::none;
  int level = 0;
};

/// Compression per chunk kind; `overrides[type]` (a known core type) wins.
/// meshopt and meshopt+zstd apply to VERTEX_DATA and INDEX_DATA only
/// (R-CODEC-CHUNK): asked of another chunk, meshopt stores it uncompressed
/// and meshopt+zstd as zstd at the same level.
struct compression_policy {
  chunk_compression metadata{};  // string and record tables
  chunk_compression data{};      // vertex, index, joint and edge data
  std::array<std::optional<chunk_compression>, max_known_chunk_type + 1> overrides{};

  [[nodiscard]] chunk_compression for_chunk(std::uint32_t type) const noexcept {
    chunk_compression c = is_known_chunk_type(type) && overrides[type] ? *overrides[type]
                                                                        : is_data_chunk(type) ? data : metadata;
    if (!compression_fits_chunk(static_cast<std::uint32_t>(c.method), type))
      c.method = c.method == compression::meshopt_zstd ? compression::zstd : compression::none;
    return c;
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
  /// The stored vertex layout. The builder takes PBR_STATIC_V1 vertices;
  /// pbr_quant_v1 (the library's extension, vertex_quant.hpp: 24 bytes,
  /// positions as unorm16 in each mesh's localBounds, 8-bit octahedral
  /// normal and tangent) converts them as it writes. The reference engine
  /// reads pbr_static_v1 only.
  untold::vertex_layout vertex_layout = untold::vertex_layout::pbr_static_v1;
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

}  // namespace untold
