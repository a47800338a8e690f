// untold/integrity_writer.hpp - the writing side of the untold.integrity
// chunk (integrity.hpp has its layout and the reader's checks): encode the
// chunk from block digests, bind it to the contentHash being computed, and
// seal a laid-out file in one pass (what untold recompress calls). The
// builder (file_layout.hpp) and tools that rewrite stored bytes include it;
// a reader never does, so the reader path stays light (docs/compile-time.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "hash.hpp"
#include "integrity.hpp"
#include "sink.hpp"

namespace untold {

/// The stored bytes of an integrity chunk (integrity_chunk_version, its
/// binding 0: not bound; bind_integrity_chunk binds it) for a file whose header and chunk
/// table are `directory` (contentHash ignored) and whose block digests are
/// `block_digests` (compute_block_digests' layout). `integrity_row` is the
/// integrity chunk's own row; its table entry must already hold the size
/// this returns: integrity_chunk_size(). Precondition: block_size is valid
/// and `block_digests` has one digest per block of the other rows.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> encode_integrity_chunk(byte_span directory,
                                                                          std::span<const chunk_entry> chunks,
                                                                          std::uint32_t integrity_row,
                                                                          std::uint32_t block_size,
                                                                          byte_span block_digests) {
  if (block_digests.size() / digest_size > 0xFFFFFFFFu) return make_error(errc::invalid_argument, {.field = "digestCount"});
  std::vector<std::byte> rows;  // the row digests
  sha256 row_hasher;
  std::size_t first = 0;
  for (std::uint32_t r = 0; r < chunks.size(); ++r) {
    const std::size_t count =
        r == integrity_row ? 0 : static_cast<std::size_t>(digest_block_count(chunks[r].compressed_size, block_size));
    if (block_digests.size() / digest_size - first < count)
      return make_error(errc::invalid_argument, {.field = "digestCount"});
    row_hasher.update(block_digests.subspan(first * digest_size, count * digest_size));
    first += count;
    auto digest = row_hasher.finish();
    if (!digest) return digest.error();
    rows.insert(rows.end(), reinterpret_cast<const std::byte*>(digest->data()),
                reinterpret_cast<const std::byte*>(digest->data()) + digest_size);
  }
  if (first * digest_size != block_digests.size()) return make_error(errc::invalid_argument, {.field = "digestCount"});
  auto dir = directory_digest(directory);
  if (!dir) return dir.error();

  // Fixed part and directory digest, block digests, the binding (zero here),
  // row digests, then the top digest of all but the block digests and the
  // binding.
  std::vector<std::byte> body;
  byte_sink out(body);
  out.put<std::uint32_t>(block_size);
  out.put<std::uint32_t>(static_cast<std::uint32_t>(chunks.size()));
  out.put<std::uint32_t>(static_cast<std::uint32_t>(first));
  out.put<std::uint32_t>(0);
  out.bytes(std::as_bytes(std::span(*dir)));
  out.bytes(block_digests);
  body.resize(body.size() + integrity_binding_size);
  out.bytes(rows);
  auto chunk = encode_plugin_chunk(integrity_plugin_id, integrity_chunk_kind, integrity_chunk_version, body);
  if (!chunk) return chunk.error();
  const std::size_t rows_at = chunk->size() - rows.size();
  sha256 top;
  top.update(byte_span(*chunk).first(rows_at - integrity_binding_size - block_digests.size()));
  top.update(byte_span(*chunk).subspan(rows_at));
  auto top_digest = top.finish();
  if (!top_digest) return top_digest.error();
  byte_sink(*chunk).bytes(std::as_bytes(std::span(*top_digest)));
  return std::move(*chunk);
}

/// Binds `chunk` (encode_integrity_chunk's output for a file of
/// `chunk_count` chunks) to the contentHash that `content` is computing:
/// `content` must have hashed exactly the stored bytes of the rows before the
/// integrity chunk in content_hash_order. Hashes the chunk into `content` up
/// to its binding, records the state reached there, then hashes the rest (the
/// binding, the row and top digests, which the contentHash so commits to);
/// `content` goes on with the later rows, and its finish() is the
/// contentHash. Precondition: `chunk` is such an encoded chunk.
inline void bind_integrity_chunk(std::span<std::byte> chunk, std::size_t chunk_count,
                                 sha256_resumable& content) noexcept {
  const std::size_t at = integrity_binding_offset(chunk.size(), integrity_chunk_version, chunk_count);
  const std::uint64_t prefix = content.size();
  content.update(chunk.first(at));
  const sha256_midstate state = content.midstate();
  store_le_unchecked<std::uint64_t>(chunk.data() + at, prefix);
  for (std::size_t i = 0; i < state.words.size(); ++i)
    for (std::size_t b = 0; b < 4; ++b)
      chunk[at + 8 + 4 * i + b] = static_cast<std::byte>(state.words[i] >> (24 - 8 * b));
  content.update(chunk.subspan(at));
}

/// An integrity chunk and the contentHash it is bound to (all zero when the
/// file is not hashed; the chunk's binding then stays 0).
struct sealed_integrity_chunk {
  std::vector<std::byte> chunk;
  sha256_digest content_hash{};
};

/// The integrity chunk of a laid-out file (block digests, encode, bind) and,
/// when `content_hash`, its contentHash, in one single-threaded pass over
/// the stored bytes (the builder spreads the same work over threads): what
/// a tool that rewrites stored bytes calls (untold recompress).
/// `stored_bytes(row)` -> byte_span: row's final stored bytes, for every row
/// but `integrity_row`, whose table entry must already hold
/// integrity_chunk_size(). Preconditions: block_size is valid; no other row
/// has integrity_chunk_type.
template <class StoredBytes>
[[nodiscard]] result<sealed_integrity_chunk> seal_integrity_chunk(byte_span directory,
                                                                  std::span<const chunk_entry> chunks,
                                                                  std::uint32_t integrity_row, std::uint32_t block_size,
                                                                  bool content_hash, StoredBytes&& stored_bytes) {
  auto blocks = compute_block_digests(chunks, integrity_row, block_size, stored_bytes);
  if (!blocks) return blocks.error();
  auto chunk = encode_integrity_chunk(directory, chunks, integrity_row, block_size, *blocks);
  if (!chunk) return chunk.error();
  sealed_integrity_chunk sealed{std::move(*chunk)};
  if (!content_hash) return sealed;
  sha256_resumable content;
  for (const std::uint32_t row : content_hash_order(chunks)) {
    if (row == integrity_row)
      bind_integrity_chunk(sealed.chunk, chunks.size(), content);
    else
      content.update(stored_bytes(row));
  }
  sealed.content_hash = content.finish();
  return sealed;
}

}  // namespace untold
