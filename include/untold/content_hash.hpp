// untold/content_hash.hpp - the header's contentHash (spec 5, rule R-HASH).
//
// contentHash = SHA-256 over the stored (possibly compressed) bytes of every
// chunk in the table, concatenated in ascending chunkType order (ties: table
// order). Header, table and padding are excluded; all-zero means "not hashed".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bytes.hpp"
#include "detail/lean_std.hpp"
#include "error.hpp"
#include "hash.hpp"
#include "records.hpp"

namespace untold {

/// Chunk table rows in the order their bytes enter the content hash.
[[nodiscard]] inline std::vector<std::uint32_t> content_hash_order(std::span<const chunk_entry> chunks) {
  std::vector<std::uint32_t> rows(chunks.size());
  for (std::uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  // Stable by construction: equal types keep their table order (row breaks ties).
  detail::sort(rows.begin(), rows.end(), [&](std::uint32_t a, std::uint32_t b) {
    return chunks[a].chunk_type != chunks[b].chunk_type ? chunks[a].chunk_type < chunks[b].chunk_type : a < b;
  });
  return rows;
}

/// The content hash of a file whose chunk table is `chunks`.
/// `stored_bytes(row)` returns chunk `row`'s stored bytes (compressedSize of them).
template <class StoredBytes>
[[nodiscard]] result<sha256_digest> compute_content_hash(std::span<const chunk_entry> chunks,
                                                         StoredBytes&& stored_bytes) {
  sha256 hasher;
  for (const std::uint32_t row : content_hash_order(chunks)) hasher.update(stored_bytes(row));
  return hasher.finish();
}

/// The content hash of a file held whole in memory. Precondition: every
/// chunk's stored range lies inside `file` (parse_chunk_table proved it).
[[nodiscard]] inline result<sha256_digest> compute_content_hash(std::span<const chunk_entry> chunks, byte_span file) {
  return compute_content_hash(chunks, [&](std::uint32_t row) {
    return subspan(file, byte_range{chunks[row].file_offset, chunks[row].compressed_size});
  });
}

[[nodiscard]] inline bool is_hashed(const file_header& h) noexcept {
  for (const std::uint8_t b : h.content_hash)
    if (b != 0) return true;
  return false;
}

/// R-HASH: a non-zero contentHash must match the chunk bytes.
inline status verify_content_hash(const file_header& h, std::span<const chunk_entry> chunks, byte_span file) {
  if (!is_hashed(h)) return {};
  auto digest = compute_content_hash(chunks, file);
  if (!digest) return digest.error();
  if (*digest != h.content_hash) return make_error(errc::hash_mismatch, {.field = "contentHash"});
  return {};
}

}  // namespace untold
