// untold/integrity.hpp - block digests: integrity without a full pass at open.
//
// The header's contentHash (content_hash.hpp) is one SHA-256 over every
// stored byte, so checking it costs a pass over the whole file before the
// first draw, and a byte-range load can never check it. A writer may add the
// `untold.integrity` plugin chunk (builder option write_options::block_digests):
// a SHA-256 per 64 KiB block of every other chunk's STORED bytes, a digest of
// the header and chunk table, and a digest of its own top part. A reader then
//
//   - at open: checks the chunk's layout (R-INTEGRITY-LAYOUT), its top digest
//     (R-INTEGRITY-HASH), the header and table against the directory digest
//     (R-DIRECTORY-HASH), and the blocks of every chunk open itself reads
//     (metadata tables, compressed chunks it decodes: R-BLOCK-HASH) - work in
//     proportion to the metadata, not the file;
//   - on first access through the verified accessors below (verified_vertices,
//     verified_payload, verify_chunk ...): the blocks behind the bytes asked
//     for, once each (an atomic flag per block remembers them);
//   - in streamed_asset (ranges.hpp): every chunk or mesh range it loads.
//
// Payload of the chunk (type integrity_chunk_type, stored uncompressed),
// after the 16-byte UEXT envelope and the plugin id "untold.integrity"
// (chunkKind 1, chunkVersion 3); offsets from the start of that body:
//
//    0 u32 blockSize     power of two, 4 KiB .. 16 MiB (the writer: 64 KiB)
//    4 u32 chunkCount    = the header's chunkCount
//    8 u32 digestCount   = sum over rows of ceil(compressedSize / blockSize),
//                          the integrity chunk's own row counting 0
//   12 u32 reserved      0
//   16 32 B directoryDigest  SHA-256 of header bytes [0, 140) and [172, 204)
//                            (all but contentHash) and the whole chunk table
//   48 digestCount x 32 B  block digests, rows in table order, each row's
//                        blocks in order; block k of a row = its stored bytes
//                        [k x blockSize, min((k + 1) x blockSize, compressedSize))
//    . u64 contentPrefixLength  the binding: the stored bytes the contentHash
//                        takes before this chunk (rows of lower chunkType), and
//    . 32 B chainingValue  SHA-256's state (FIPS 180-4 H(i), 8 big-endian
//                        words) after the contentHash message's whole 64-byte
//                        blocks before contentPrefixLength. Both 0: computed
//                        for a file without contentHash.
//    . chunkCount x 32 B rowDigest  SHA-256 of the row's block digests,
//                            concatenated (of nothing for a row without blocks)
//    . 32 B topDigest    SHA-256 of the chunk payload but the block digests
//                        and the binding: [0, body + 48), then [rowDigests,
//                        topDigest)
//
// Version 2 (still read) has the same fields in another order: fixed part
// and directoryDigest, rowDigests, topDigest (of everything before it), block
// digests, binding; version 1 is version 2 without the binding.
//
// The binding: the contentHash covers this chunk, so the chunk cannot hold
// the contentHash itself; it holds the state that computation had reached.
// Resuming it over the chunk's last bytes - the binding, the row and top
// digests - and the rows of higher chunkType must give the header's
// contentHash, else the chunk is STALE: computed for other bytes, e.g. before
// a tool that does not know it rewrote the file and recomputed the
// contentHash. A stale chunk is ignored and the contentHash verified over the
// whole file instead (verifies_content_hash); so a chunk made stale on purpose
// never skips verification. A version 1 chunk and a file without contentHash
// cannot be bound: their chunk counts as current, as before version 2 (a
// rewrite then fails R-DIRECTORY-HASH or R-BLOCK-HASH).
//
// Version 3 puts the row digests after the binding, so the contentHash
// commits to them, and through them to every block digest and every stored
// byte: a current version 3 chunk is a tree under the contentHash. Verifying
// every block (in parallel) then proves what a pass of the contentHash over
// the whole file proves, and integrity::full skips that serial pass
// (SECURITY.md, "Integrity", states the assumption: SHA-256's compression
// function resists preimages from a chosen chaining value). A version 2
// binding follows the block digests and commits to nothing before it: it
// tells a rewrite from corruption, no more, so `full` hashes the whole file.
//
// Open costs O(chunkCount): the binding's resumed hash and the top digest
// cover the row digests, not the block digests (32 bytes per 64 KiB: 512 KiB
// for a 1 GiB file). A row's block digests are checked against its row
// digest the first time the row is verified. What this proves, and what an
// unkeyed digest cannot: SECURITY.md.
//
// Every function here is safe on untrusted input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "content_hash.hpp"
#include "cursor.hpp"
#include "error.hpp"
#include "extensions.hpp"
#include "format.hpp"
#include "hash.hpp"
#include "records.hpp"

namespace untold {

/// How untold::open (and streamed_asset) verify a file's bytes
/// (open_options::integrity; SECURITY.md states what each proves and costs).
enum class integrity : std::uint8_t {
  /// Files with block digests: the integrity chunk, header, table and every
  /// chunk open reads are verified at open; other chunks on first access
  /// through the verified accessors. Files without: as `full`.
  lazy,
  /// Everything at open: every block digest (when the file has current
  /// ones) and the contentHash (when the file is hashed), except where the
  /// digests are a tree under the contentHash (a bound version 3 chunk, what
  /// the writer writes): then every block verified proves it, in parallel
  /// with open_options::executor, with no serial pass. Reads every byte.
  full,
  /// Nothing (the caller verified the file already, e.g. a cache that checked
  /// its digest on download). The verified accessors then check nothing.
  none,
  /// As `full`, and the contentHash always recomputed over the whole file
  /// (spec 5; one serial SHA-256 pass) where the block digests already prove
  /// it: a file whose author forged its binding (a chainingValue that is not
  /// the state of its bytes) opens with `full` and fails here with R-HASH, as
  /// in a reader that knows only spec 5. What validators use.
  strict,
};

/// Whether opening in `mode` reads and verifies every byte at open.
[[nodiscard]] constexpr bool verifies_every_byte(integrity mode) noexcept {
  return mode == integrity::full || mode == integrity::strict;
}

/// Whether opening in `mode` verifies the contentHash (R-HASH) with a pass
/// over every stored byte, whole file or by byte ranges
/// (streamed_asset::load_all): never with `none`; always with `strict`; for
/// a file without current block digests (none, or stale ones), where it is
/// the only check; with `full`, unless the current digests are a tree under
/// the contentHash (`digests_root_content_hash`: a bound version 3 chunk,
/// whose blocks `full` verifies, every one, proving the same).
[[nodiscard]] constexpr bool verifies_content_hash(integrity mode, bool digests_current,
                                                   bool digests_root_content_hash) noexcept {
  if (mode == integrity::none) return false;
  if (mode == integrity::strict || !digests_current) return true;
  return mode == integrity::full && !digests_root_content_hash;
}

inline constexpr std::uint32_t integrity_chunk_type = 0xFFFF0001u;  // the library's own plugin chunk
inline constexpr std::string_view integrity_plugin_id = "untold.integrity";
inline constexpr std::uint32_t integrity_chunk_kind = 1;
/// The version the writer writes: the contentHash commits to its digests.
inline constexpr std::uint32_t integrity_chunk_version = 3;
/// The binding after the block digests: still read; `full` hashes the file.
inline constexpr std::uint32_t tail_bound_integrity_chunk_version = 2;
/// The first version, without the binding: still read, as current.
inline constexpr std::uint32_t unbound_integrity_chunk_version = 1;
inline constexpr std::uint32_t default_digest_block_size = 64 * 1024;
inline constexpr std::uint32_t min_digest_block_size = 4 * 1024;
inline constexpr std::uint32_t max_digest_block_size = 16 * 1024 * 1024;
inline constexpr std::size_t digest_size = 32;

/// Header bytes the directory digest covers: all but contentHash [140, 172).
inline constexpr std::size_t content_hash_field_offset = 140;
/// contentPrefixLength and chainingValue (versions 2 and 3).
inline constexpr std::size_t integrity_binding_size = 8 + digest_size;

/// Where the binding starts in the stored bytes of an integrity chunk of
/// `version` (2 or 3) in a file of `chunk_count` chunks: the last bytes of a
/// version 2 chunk; in version 3 before the row and top digests.
/// Precondition: `stored_size` holds them (integrity_chunk_body checks it).
[[nodiscard]] constexpr std::size_t integrity_binding_offset(std::size_t stored_size, std::uint32_t version,
                                                             std::size_t chunk_count) noexcept {
  const std::size_t after = version == tail_bound_integrity_chunk_version ? 0 : digest_size * (chunk_count + 1);
  return stored_size - integrity_binding_size - after;
}

/// Number of blocks of `stored_size` bytes. Precondition: block_size > 0.
[[nodiscard]] constexpr std::uint64_t digest_block_count(std::uint64_t stored_size, std::uint64_t block_size) noexcept {
  return stored_size / block_size + (stored_size % block_size != 0 ? 1 : 0);
}

/// Whether a chunk of this type is read by every open (metadata tables and
/// the integrity chunk): streamed_asset::open fetches exactly these.
[[nodiscard]] constexpr bool is_read_at_open(std::uint32_t type) noexcept {
  return is_metadata_chunk(type) || type == integrity_chunk_type;
}

/// The row of the integrity chunk, none when the file has none, or
/// R-INTEGRITY-LAYOUT (field "chunkType") when two rows have its type.
[[nodiscard]] inline result<std::uint32_t> find_integrity_chunk(std::span<const chunk_entry> chunks) noexcept {
  std::uint32_t found = none;
  for (std::uint32_t row = 0; row < chunks.size(); ++row) {
    if (chunks[row].chunk_type != integrity_chunk_type) continue;
    if (found != none)
      return make_error(errc::integrity_layout,
                        {.chunk_index = row, .chunk_type = integrity_chunk_type, .field = "chunkType",
                         .value = integrity_chunk_type, .has_value = true});
    found = row;
  }
  return found;
}

/// SHA-256 of the header without its contentHash and of the chunk table.
/// Precondition: `directory` holds the file's first 204 + 40 x chunkCount bytes.
[[nodiscard]] inline result<sha256_digest> directory_digest(byte_span directory) noexcept {
  sha256 h;
  h.update(directory.first(content_hash_field_offset));
  h.update(directory.subspan(content_hash_field_offset + digest_size));
  return h.finish();
}

/// A parsed untold.integrity chunk: views into its payload.
struct integrity_digests {
  std::uint32_t version = 0;  // integrity_chunk_version or unbound_integrity_chunk_version
  std::uint32_t block_size = 0;
  std::uint32_t chunk_count = 0;
  std::uint32_t digest_count = 0;
  byte_span directory_digest;  // 32 bytes
  byte_span row_digests;       // chunk_count x 32
  byte_span top;               // what top_digest covers: this, then top_rest
  byte_span top_rest;          // (version 3: the row digests; else empty)
  byte_span top_digest;        // 32 bytes
  byte_span block_digests;     // digest_count x 32
  byte_span binding;           // integrity_binding_size bytes (versions 2, 3), else empty
};

namespace detail {
inline constexpr std::size_t integrity_body_fixed = 48;  // blockSize .. directoryDigest

// Atomic acquire load / release store of a verified flag. The compiler
// builtins (g++, clang) instead of <atomic>, which adds about 20,000
// preprocessed lines to every file that includes the reader.
[[nodiscard]] inline bool flag_is_set(const std::uint8_t& flag) noexcept {
  return __atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 0;
}
inline void set_flag(std::uint8_t& flag) noexcept { __atomic_store_n(&flag, std::uint8_t{1}, __ATOMIC_RELEASE); }

[[nodiscard]] inline error integrity_error(errc code, std::uint32_t row, const char* field, std::uint64_t value) noexcept {
  return make_error(code, {.chunk_index = row, .chunk_type = integrity_chunk_type, .field = field, .value = value,
                           .has_value = true});
}

struct integrity_body {
  byte_span bytes;  // after the plugin id
  std::uint32_t version = 0;
};

// The body and version of the integrity chunk at row `row`: stored
// uncompressed, plugin id, kind, a known version (R-INTEGRITY-LAYOUT; a broken
// envelope is R-EXT-RANGES), and for versions 2 and 3 room for the fixed
// part and the binding (and in 3 for the digests after it), so that
// integrity_binding_offset may be taken.
template <class = void>
[[nodiscard]] result<integrity_body> integrity_chunk_body(byte_span stored, std::span<const chunk_entry> chunks,
                                                          std::uint32_t row) noexcept {
  if (chunks[row].compression_type != static_cast<std::uint32_t>(compression::none))
    return integrity_error(errc::integrity_layout, row, "compressionType", chunks[row].compression_type);
  // Expect the version found when it is a known one, so that the envelope,
  // id and kind are checked (and reported) first.
  const auto envelope = parse_plugin_chunk(stored);
  const bool known = envelope && envelope->chunk_version >= unbound_integrity_chunk_version &&
                     envelope->chunk_version <= integrity_chunk_version;
  const std::uint32_t version = known ? envelope->chunk_version : integrity_chunk_version;
  const auto body = plugin_chunk_body(
      stored, {.plugin_id = integrity_plugin_id, .kind = integrity_chunk_kind, .chunk_version = version},
      errc::integrity_layout, row, integrity_chunk_type);
  if (!body) return body.error();
  const std::uint64_t digests_after_binding =
      version == integrity_chunk_version ? digest_size * (std::uint64_t{chunks.size()} + 1) : 0;
  if (version != unbound_integrity_chunk_version &&
      body->size() < integrity_body_fixed + integrity_binding_size + digests_after_binding)
    return integrity_error(errc::integrity_layout, row, "size", stored.size());
  return integrity_body{*body, version};
}
}  // namespace detail

/// Decodes the integrity chunk at table row `row` from its stored bytes and
/// checks its layout against the chunk table (R-INTEGRITY-LAYOUT; a broken
/// envelope is R-EXT-RANGES, as for every plugin chunk). Digests are not
/// compared here. Precondition: `chunks` passed parse_chunk_table.
template <class = void>
[[nodiscard]] result<integrity_digests> parse_integrity_chunk(byte_span stored,
                                                                   std::span<const chunk_entry> chunks,
                                                                   std::uint32_t row) noexcept {
  const auto fail = [&](const char* field, std::uint64_t value) {
    return detail::integrity_error(errc::integrity_layout, row, field, value);
  };
  const auto body = detail::integrity_chunk_body(stored, chunks, row);
  if (!body) return body.error();
  const std::size_t binding_size = body->version == unbound_integrity_chunk_version ? 0 : integrity_binding_size;

  byte_cursor in(body->bytes, {.truncated = errc::integrity_layout, .count_too_large = errc::integrity_layout});
  std::uint32_t fixed[4] = {};  // blockSize, chunkCount, digestCount, reserved
  const char* const fixed_names[4] = {"blockSize", "chunkCount", "digestCount", "reserved"};
  for (int i = 0; i < 4; ++i) {
    auto v = in.read<std::uint32_t>(fixed_names[i]);
    if (!v) return detail::integrity_error(errc::integrity_layout, row, fixed_names[i], stored.size());
    fixed[i] = *v;
  }
  integrity_digests d;
  d.version = body->version;
  d.block_size = fixed[0];
  d.chunk_count = fixed[1];
  d.digest_count = fixed[2];
  if (d.block_size < min_digest_block_size || d.block_size > max_digest_block_size ||
      (d.block_size & (d.block_size - 1)) != 0)
    return fail("blockSize", d.block_size);
  if (d.chunk_count != chunks.size()) return fail("chunkCount", d.chunk_count);
  if (fixed[3] != 0) return fail("reserved", fixed[3]);
  // The table proved every chunk lies inside the file, so this sum is at most
  // file size / blockSize + chunkCount: no overflow in 64 bits.
  std::uint64_t blocks = 0;
  for (std::uint32_t r = 0; r < chunks.size(); ++r)
    if (r != row) blocks += digest_block_count(chunks[r].compressed_size, d.block_size);
  if (blocks != d.digest_count) return fail("digestCount", d.digest_count);
  // Exactly the size the counts imply, checked before any view is taken.
  if (in.remaining() != digest_size * (std::uint64_t{d.chunk_count} + 2 + d.digest_count) + binding_size)
    return fail("size", stored.size());
  d.directory_digest = *in.bytes(digest_size, "directoryDigest");
  if (d.version == integrity_chunk_version) {
    d.top = stored.first(stored.size() - in.remaining());
    d.block_digests = *in.array_bytes(d.digest_count, digest_size, "blockDigests");
    d.binding = *in.bytes(integrity_binding_size, "binding");
    d.row_digests = *in.array_bytes(d.chunk_count, digest_size, "rowDigests");
    d.top_rest = d.row_digests;
    d.top_digest = *in.bytes(digest_size, "topDigest");
    return d;
  }
  d.row_digests = *in.array_bytes(d.chunk_count, digest_size, "rowDigests");
  d.top = stored.first(stored.size() - in.remaining());
  d.top_digest = *in.bytes(digest_size, "topDigest");
  d.block_digests = *in.array_bytes(d.digest_count, digest_size, "blockDigests");
  d.binding = in.rest();
  return d;
}

/// The block digests of a file's chunks (rows in table order, each row's
/// blocks in order, `integrity_row` holding none), where
/// `stored_bytes(row)` -> byte_span are chunk `row`'s final stored bytes.
/// Single-threaded; the builder spreads the same work over threads.
/// Precondition: block_size is valid.
template <class StoredBytes>
[[nodiscard]] result<std::vector<std::byte>> compute_block_digests(std::span<const chunk_entry> chunks,
                                                                  std::uint32_t integrity_row, std::uint32_t block_size,
                                                                  StoredBytes&& stored_bytes) {
  std::vector<std::byte> blocks;
  sha256 hasher;
  for (std::uint32_t r = 0; r < chunks.size(); ++r) {
    if (r == integrity_row) continue;
    const byte_span stored = stored_bytes(r);
    for (std::size_t at = 0; at < stored.size(); at += block_size) {
      hasher.update(stored.subspan(at, std::min<std::size_t>(block_size, stored.size() - at)));
      auto digest = hasher.finish();
      if (!digest) return digest.error();
      blocks.insert(blocks.end(), reinterpret_cast<const std::byte*>(digest->data()),
                    reinterpret_cast<const std::byte*>(digest->data()) + digest_size);
    }
  }
  return blocks;
}

/// The stored size of the integrity chunk for a table of `chunks` (the
/// integrity chunk's own row among them, size ignored).
[[nodiscard]] inline std::uint64_t integrity_chunk_size(std::span<const chunk_entry> chunks, std::uint32_t integrity_row,
                                                        std::uint32_t block_size) noexcept {
  std::uint64_t blocks = 0;
  for (std::uint32_t r = 0; r < chunks.size(); ++r)
    if (r != integrity_row) blocks += digest_block_count(chunks[r].compressed_size, block_size);
  return plugin_envelope_size + integrity_plugin_id.size() + detail::integrity_body_fixed +
         digest_size * (std::uint64_t{chunks.size()} + 1 + blocks) + integrity_binding_size;
}

/// Whether the integrity chunk at table row `row`, stored bytes `stored`,
/// was computed for the file's contentHash (the binding, file comment):
/// true for a version 1 chunk and for a file without contentHash (nothing to
/// bind: the chunk is the check, as before version 2); false (stale) when
/// contentPrefixLength is not what the table's rows of lower chunkType store
/// or the computation resumed from chainingValue over the chunk's last bytes
/// and the rows of higher chunkType, `stored_bytes(r)` -> byte_span, misses
/// the header's contentHash. Costs O(chunkCount): SHA-256 of the chunk's
/// last bytes (under 64, the binding; in version 3 also the row and top
/// digests), and of those later rows (none in the writer's files unless a
/// caller added plugin chunks of types above 0xFFFF0001).
/// Errors: those of the chunk's envelope, identity and minimum size, as
/// parse_integrity_chunk reports them (R-EXT-RANGES, R-INTEGRITY-LAYOUT);
/// nothing else is parsed. Preconditions: `chunks` passed parse_chunk_table; `row` is the
/// only row of integrity_chunk_type (find_integrity_chunk). Safe on
/// untrusted input.
template <class StoredBytes>
[[nodiscard]] result<bool> integrity_chunk_is_current(const file_header& h, std::span<const chunk_entry> chunks,
                                                      std::uint32_t row, byte_span stored, StoredBytes&& stored_bytes) {
  const auto body = detail::integrity_chunk_body(stored, chunks, row);
  if (!body) return body.error();
  if (body->version == unbound_integrity_chunk_version || !is_hashed(h)) return true;
  // >= 80: envelope, id, fixed part (integrity_chunk_body)
  const std::size_t at = integrity_binding_offset(stored.size(), body->version, chunks.size());
  const std::uint64_t recorded_prefix = load_le_unchecked<std::uint64_t>(stored.data() + at);
  // Rows lie inside the file without overlapping (parse_chunk_table): no overflow.
  std::uint64_t prefix = 0;
  for (const chunk_entry& c : chunks)
    if (c.chunk_type < integrity_chunk_type) prefix += c.compressed_size;
  if (recorded_prefix != prefix) return false;
  sha256_midstate state;
  for (std::size_t i = 0; i < state.words.size(); ++i)
    for (std::size_t b = 0; b < 4; ++b)
      state.words[i] = state.words[i] << 8 | std::to_integer<std::uint32_t>(stored[at + 8 + 4 * i + b]);
  // The state covers the whole blocks before the binding; the rest of the
  // last one (< 64 bytes, at >= 80) is the chunk's own.
  state.length = (prefix + at) / 64 * 64;
  sha256_resumable content(state);
  content.update(stored.subspan(static_cast<std::size_t>(state.length - prefix)));
  bool later = false;  // past the integrity chunk in content-hash order
  for (const std::uint32_t r : content_hash_order(chunks)) {
    if (later) content.update(stored_bytes(r));
    later = later || r == row;
  }
  return content.finish() == h.content_hash;
}

namespace detail {

[[nodiscard]] inline bool digest_equals(const result<sha256_digest>& computed, byte_span expected) noexcept {
  return computed && std::memcmp(computed->data(), expected.data(), digest_size) == 0;
}

/// The reader's side: attaches block digests to an asset and checks them.
/// asset.hpp makes it a friend; nothing else touches block_digest_state.
struct integrity_access {
  [[nodiscard]] static bool has_digests(const asset& a) noexcept { return a.integrity_.block_size != 0; }
  /// untold::verifies_content_hash for an asset whose integrity chunk open
  /// has dealt with (asset::block_digests(), and whether attach found the
  /// digests a tree under the contentHash).
  [[nodiscard]] static bool verifies_content_hash(integrity mode, const asset& a) noexcept {
    return untold::verifies_content_hash(mode, a.digests_ == digest_status::current, a.integrity_.roots_content_hash);
  }

  /// integrity::none: the chunk is not looked at.
  static void mark_unchecked(asset& a) noexcept {
    a.digests_ = digest_status::absent;
    for (const chunk_entry& c : a.chunks_)
      if (c.chunk_type == integrity_chunk_type) a.digests_ = digest_status::unchecked;
  }

  /// What the open does with the file's integrity chunk, `row` (none: the
  /// file has none; else find_integrity_chunk's row). A current chunk
  /// (integrity_chunk_is_current, `stored_bytes` as there) is attached; a
  /// stale one is left alone: the caller verifies the contentHash instead
  /// (verifies_content_hash). Records the outcome (asset::block_digests()).
  /// `directory`, `stored`, `defer_uncompressed`: as for attach.
  template <class StoredBytes>
  static status use_integrity_chunk(asset& a, byte_span directory, std::uint32_t row, byte_span stored,
                                    bool defer_uncompressed, StoredBytes&& stored_bytes) {
    a.digests_ = digest_status::absent;
    if (row == none) return {};
    auto current = integrity_chunk_is_current(a.header_, a.chunks_, row, stored, stored_bytes);
    if (!current) return current.error();
    if (!*current) {
      a.digests_ = digest_status::stale;
      return {};
    }
    UNTOLD_TRY(attach(a, directory, row, stored, defer_uncompressed));
    a.digests_ = digest_status::current;
    return {};
  }

  /// Verifies the blocks of chunk `row` that lie inside its stored bytes
  /// [first, first + bytes.size()), where `bytes` are those stored bytes and
  /// `first` is a multiple of the block size; a last partial block counts
  /// only when it ends the chunk. Verified blocks are remembered.
  template <class = void>
  static status verify_stored(const asset& a, std::uint32_t row, std::uint64_t first, byte_span bytes) {
    block_digest_state& s = a.integrity_;  // mutable: verification marks blocks
    if (s.block_size == 0 || row >= a.chunks_.size()) return {};
    const std::uint64_t stored_size = a.chunks_[row].compressed_size;
    if (first % s.block_size != 0 || first > stored_size || bytes.size() > stored_size - first)
      return make_error(errc::invalid_argument, {.chunk_index = row, .field = "first", .value = first, .has_value = true});
    UNTOLD_TRY(verify_row_digests(a, row));
    const std::uint64_t row_blocks = s.first_block[row + 1] - s.first_block[row];  // 0 for the integrity chunk
    const std::uint64_t size = s.block_size;
    const auto digest_of = [&](std::uint64_t k) {
      return s.block_digests.subspan(static_cast<std::size_t>(k * digest_size), digest_size);
    };
    const auto block_error = [&](std::uint64_t block_start) {
      return make_error(errc::block_hash, {.chunk_index = row, .chunk_type = a.chunks_[row].chunk_type,
                                           .field = "block", .value = block_start / size, .has_value = true});
    };
    const auto part = [&](std::uint64_t at, std::uint64_t length) {
      return bytes.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(length));
    };
    // Bytes of the block starting at stored byte `start` (0 past the chunk).
    const auto block_length = [&](std::uint64_t start) {
      return start < stored_size ? std::min<std::uint64_t>(size, stored_size - start) : 0;
    };
    sha256 hasher;  // one context for every lone block: finish() restarts it
    for (std::uint64_t at = 0; at < bytes.size() && (first + at) / size < row_blocks;) {
      const std::uint64_t block_start = first + at;
      const std::uint64_t length = block_length(block_start);
      if (bytes.size() - at < length) break;  // a partial block that does not end the chunk
      const std::uint64_t k = s.first_block[row] + block_start / size;
      if (flag_is_set(s.block_verified[k])) {
        at += size;
        continue;
      }
      // Two blocks still to verify (a whole one and the next, which may be
      // the chunk's shorter last block): hashed together (sha256_pair).
      const std::uint64_t next_length = block_length(block_start + size);
      if (length == size && next_length != 0 && bytes.size() - at >= size + next_length &&
          !flag_is_set(s.block_verified[k + 1])) {
        const auto pair = sha256_pair(part(at, size), part(at + size, next_length));
        for (std::uint64_t j = 0; j < 2; ++j) {
          if (!pair || std::memcmp((*pair)[j].data(), digest_of(k + j).data(), digest_size) != 0)
            return block_error(block_start + j * size);
          set_flag(s.block_verified[k + j]);
        }
        at += 2 * size;
        continue;
      }
      hasher.update(part(at, length));
      if (!digest_equals(hasher.finish(), digest_of(k))) return block_error(block_start);
      set_flag(s.block_verified[k]);
      at += size;
    }
    return {};
  }

  /// The whole blocks around stored bytes [offset, offset + size) of chunk
  /// `row`: what must be read to verify them; the range itself when the
  /// asset has no pending digests. Precondition: the range lies in the chunk.
  [[nodiscard]] static byte_range covering_blocks(const asset& a, std::uint32_t row, std::uint64_t offset,
                                                  std::uint64_t size) noexcept {
    const block_digest_state& s = a.integrity_;
    if (s.block_size == 0 || size == 0 || row >= a.chunks_.size()) return {offset, size};
    const std::uint64_t first = offset / s.block_size * s.block_size;
    const std::uint64_t end = std::min<std::uint64_t>(a.chunks_[row].compressed_size,
                                                      digest_block_count(offset + size, s.block_size) * s.block_size);
    return {first, end - first};
  }

  /// Verifies the stored bytes behind payload bytes [offset, offset + size)
  /// of chunk `row`: for an uncompressed chunk the covering blocks of its
  /// payload; a compressed chunk was verified whole when it was decoded, so
  /// its blocks must all be verified already.
  template <class = void>
  static status verify_payload_range(const asset& a, std::uint32_t row, std::uint64_t offset, std::uint64_t size) {
    block_digest_state& s = a.integrity_;  // mutable: verification marks blocks
    if (s.block_size == 0 || row >= a.chunks_.size() || size == 0) return {};
    const chunk_entry& c = a.chunks_[row];
    if (!a.is_loaded(row)) return make_error(errc::range_missing, {.chunk_index = row, .chunk_type = c.chunk_type});
    if (c.compression_type != static_cast<std::uint32_t>(compression::none)) {
      for (std::uint64_t k = s.first_block[row]; k < s.first_block[row + 1]; ++k)
        if (!flag_is_set(s.block_verified[k]))
          return make_error(errc::block_hash, {.chunk_index = row, .chunk_type = c.chunk_type, .field = "block",
                                               .value = k - s.first_block[row], .has_value = true});
      return {};
    }
    const byte_range blocks = covering_blocks(a, row, offset, size);
    return verify_stored(a, row, blocks.offset, subspan(a.payload(row), blocks));
  }

  /// Whether verify_on_load left chunk `row` for later (whole-file open with
  /// deferral: an uncompressed chunk open does not read).
  [[nodiscard]] static bool is_deferred(const asset& a, std::uint32_t row) noexcept {
    const block_digest_state& s = a.integrity_;
    const chunk_entry& c = a.chunks_[row];
    return s.block_size != 0 && s.defer_uncompressed &&
           c.compression_type == static_cast<std::uint32_t>(compression::none) && !is_read_at_open(c.chunk_type);
  }
  /// The digests' block size (0: the asset has none attached).
  [[nodiscard]] static std::uint64_t block_size(const asset& a) noexcept { return a.integrity_.block_size; }

  /// asset_loader::load_payload calls this with a chunk's stored bytes before
  /// it keeps or decodes them.
  template <class = void>
  static status verify_on_load(const asset& a, std::uint32_t row, byte_span stored) {
    block_digest_state& s = a.integrity_;  // mutable: verification marks blocks
    if (s.block_size == 0) return {};
    const chunk_entry& c = a.chunks_[row];
    if (s.defer_uncompressed && c.compression_type == static_cast<std::uint32_t>(compression::none) &&
        !is_read_at_open(c.chunk_type))
      return {};
    return verify_stored(a, row, 0, stored);
  }

 private:
  // Parses and checks the integrity chunk (layout, top digest, directory
  // digest) and arms per-block verification. `directory` = the file's
  // header and chunk table; `stored` = the integrity chunk's stored bytes,
  // which must stay alive as long as the asset (the file, or the asset's
  // own storage). `defer_uncompressed`: uncompressed chunks that open does
  // not read wait for first access (whole-file lazy open).
  template <class = void>
  static status attach(asset& a, byte_span directory, std::uint32_t row, byte_span stored, bool defer_uncompressed) {
    auto d = parse_integrity_chunk(stored, a.chunks_, row);
    if (!d) return d.error();
    // The binding is not checked here: in a file without contentHash it is
    // zero from the writer, or what it was before a tool zeroed the hash
    // (still current: docs/format.md); otherwise integrity_chunk_is_current
    // resumed the contentHash over it.
    sha256 top;
    top.update(d->top);
    top.update(d->top_rest);
    if (!digest_equals(top.finish(), d->top_digest)) return integrity_error(errc::integrity_hash, row, "topDigest", 0);
    if (!digest_equals(untold::directory_digest(directory), d->directory_digest))
      return make_error(errc::directory_hash, {.chunk_index = row, .chunk_type = integrity_chunk_type,
                                               .field = "directoryDigest"});
    block_digest_state& s = a.integrity_;
    s.first_block.assign(a.chunks_.size() + 1, 0);
    for (std::uint32_t r = 0; r < a.chunks_.size(); ++r)
      s.first_block[r + 1] =
          s.first_block[r] + (r == row ? 0 : digest_block_count(a.chunks_[r].compressed_size, d->block_size));
    s.row_digests = d->row_digests;
    s.block_digests = d->block_digests;
    s.row_verified.assign(a.chunks_.size(), 0);
    s.block_verified.assign(d->digest_count, 0);
    s.defer_uncompressed = defer_uncompressed;
    s.roots_content_hash = d->version == integrity_chunk_version && is_hashed(a.header_);
    s.block_size = d->block_size;
    return {};
  }

  // A row's block digests against its row digest, once.
  template <class = void>
  static status verify_row_digests(const asset& a, std::uint32_t row) {
    block_digest_state& s = a.integrity_;  // mutable: verification marks blocks
    if (flag_is_set(s.row_verified[row])) return {};
    const byte_span digests = s.block_digests.subspan(
        static_cast<std::size_t>(s.first_block[row] * digest_size),
        static_cast<std::size_t>((s.first_block[row + 1] - s.first_block[row]) * digest_size));
    if (!digest_equals(sha256_of(digests), s.row_digests.subspan(std::size_t{row} * digest_size, digest_size)))
      return make_error(errc::integrity_hash, {.chunk_index = row, .chunk_type = a.chunks_[row].chunk_type,
                                               .field = "rowDigest", .value = row, .has_value = true});
    set_flag(s.row_verified[row]);
    return {};
  }
};

}  // namespace detail

/// Whether `a` still has chunks the verified accessors will check on first
/// access (the file has block digests, current ones - asset::block_digests()
/// - and was opened with integrity::lazy).
[[nodiscard]] inline bool has_block_digests(const asset& a) noexcept {
  return detail::integrity_access::has_digests(a);
}

/// Verifies the stored bytes behind payload bytes [offset, offset + size) of
/// chunk row `row` against the block digests, once per block (later calls
/// for verified blocks cost a flag test). Nothing to do (success) when the
/// asset has no pending digests. Errors: R-BLOCK-HASH (the bytes changed),
/// R-INTEGRITY-HASH (the row's digests changed), E-RANGE-MISSING (a chunk
/// streamed_asset has not loaded). Thread-safe; safe for any arguments.
template <class = void>
[[nodiscard]] status verify_range(const asset& a, std::uint32_t row, std::uint64_t offset, std::uint64_t size) {
  if (row >= a.chunks().size()) return make_error(errc::invalid_argument, {.chunk_index = row, .field = "row"});
  const std::uint64_t payload_size = a.payload(row).size();
  if (offset > payload_size || size > payload_size - offset)
    return make_error(errc::invalid_argument, {.chunk_index = row, .field = "offset", .value = offset, .has_value = true});
  return detail::integrity_access::verify_payload_range(a, row, offset, size);
}

/// verify_range over the whole chunk.
template <class = void>
[[nodiscard]] status verify_chunk(const asset& a, std::uint32_t row) {
  if (row >= a.chunks().size()) return make_error(errc::invalid_argument, {.chunk_index = row, .field = "row"});
  return verify_range(a, row, 0, a.payload(row).size());
}

/// Every loaded chunk (what integrity::full does at open, whenever the
/// caller likes, e.g. on a background thread). Thread-safe.
template <class = void>
[[nodiscard]] status verify_all(const asset& a) {
  for (std::uint32_t row = 0; row < a.chunks().size(); ++row)
    if (a.is_loaded(row)) UNTOLD_TRY(verify_chunk(a, row));
  return {};
}

/// Chunk row `row`'s payload, verified (see verify_range). Thread-safe.
template <class = void>
[[nodiscard]] result<byte_span> verified_payload(const asset& a, std::uint32_t row) {
  UNTOLD_TRY(verify_chunk(a, row));
  return a.payload(row);
}

namespace detail {
// `part` (a sub-span of core chunk `type`'s payload, or empty), verified.
template <class = void>
[[nodiscard]] result<byte_span> verified_part(const asset& a, chunk_type type, byte_span part) {
  const auto row = a.find_chunk(type);
  if (!row || part.empty()) return part;
  const auto offset = static_cast<std::uint64_t>(part.data() - a.payload(*row).data());
  UNTOLD_TRY(verify_range(a, *row, offset, part.size()));
  return part;
}
}  // namespace detail

/// asset::vertices(mesh), with the blocks behind those bytes verified on
/// first access. The same span (empty for a range outside VERTEX_DATA), or
/// the verification error. Thread-safe; safe for any record.
template <class = void>
[[nodiscard]] result<byte_span> verified_vertices(const asset& a, const mesh_record& mesh) {
  return detail::verified_part(a, chunk_type::vertex_data, a.vertices(mesh));
}
/// asset::indices(mesh), verified as verified_vertices.
template <class = void>
[[nodiscard]] result<byte_span> verified_indices(const asset& a, const mesh_record& mesh) {
  return detail::verified_part(a, chunk_type::index_data, a.indices(mesh));
}
/// asset::edge_indices(mesh), verified as verified_vertices.
template <class = void>
[[nodiscard]] result<byte_span> verified_edge_indices(const asset& a, const mesh_record& mesh) {
  return detail::verified_part(a, chunk_type::edge_index_data, a.edge_indices(mesh));
}

}  // namespace untold
