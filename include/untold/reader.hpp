// untold/reader.hpp - open a .untold file: parse, validate, expose.
//
//   auto file = untold::mapped_file::open("tile.untold");      // or any span
//   if (!file) return fail(file.error());
//   auto a = untold::open(file->bytes());                       // validates
//   if (!a) { puts(a.error().describe().c_str()); return; }     // R-... id
//   for (const untold::mesh_record& m : a->meshes())
//     upload(a->vertices(m), a->indices(m), m.index_type);
//
// Stages (each rule is enforced in exactly one place, named by its R- id):
//   parse_header      R-MAGIC R-TRUNC-HEADER R-VERSION R-HEADER-SIZE
//                     R-FILE-TYPE R-VERTEX-LAYOUT
//   parse_chunk_table R-TRUNC-TABLE R-LIMITS R-COMPRESSION R-ALIGN
//                     R-RAW-SIZE R-CHUNK-RANGE R-DUP-CHUNK R-REQUIRED
//                     R-TABLE-SIZE R-HEADER-COUNTS
//   attach_integrity (integrity.hpp) R-INTEGRITY-LAYOUT R-INTEGRITY-HASH
//                     R-DIRECTORY-HASH; verify_content_hash (content_hash.hpp) R-HASH
//   load payloads (integrity.hpp)            R-BLOCK-HASH (as they load, or in
//                     open's pass: detail/open_pass.hpp)
//   load payloads (compression.hpp)          R-DECOMPRESS
//   index_entities    R-ENTITY-ID
//   validate_records  (validate.hpp) R-STRING .. R-TEXTURE-FORMAT
//   validate_extensions (extensions.hpp) R-STRING of extension tables,
//                     R-EXT-RANGES (incl. plugin envelopes)
//   validate_deep     (validate.hpp, opt-in) R-INDEX-VALUE R-FINITE R-BOUNDS
//   validate_extensions_deep (extensions.hpp, opt-in) joint index values,
//                     keyframe times (R-EXT-RANGES), R-FINITE of extensions
//
// Every function here is safe on untrusted input.
//
// `template <class = void>` before open(), the loader stages and the
// validators (validate.hpp, extensions.hpp, integrity.hpp, compression.hpp)
// makes them templates only so that their bodies are compiled in the
// translation units that call them: an engine includes this header in many
// translation units and opens files in one (docs/compile-time.md has both
// costs). Call them as ordinary functions: untold::open(bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "compression.hpp"
#include "detail/lean_std.hpp"
#include "detail/open_pass.hpp"
#include "content_hash.hpp"
#include "error.hpp"
#include "executor.hpp"
#include "extensions.hpp"
#include "format.hpp"
#include "integrity.hpp"
#include "limits.hpp"
#include "records.hpp"
#include "validate.hpp"

namespace untold {

/// Options of open (and of the stages it runs: parse_header,
/// parse_chunk_table ...). No `budget`: what open allocates is bounded by
/// `limits` and the file's size (limits.max_chunks rows; compressed chunks
/// decode within limits.decoded_budget); the rest are views into `file`.
struct open_options {
  untold::limits limits{};
  /// Run the deep checks R-INDEX-VALUE, R-FINITE, R-BOUNDS and the extension
  /// deep checks (joint index values, keyframe times); linear in data size.
  bool deep_checks = false;
  /// false: verify nothing, as `integrity = integrity::none` (the option
  /// from before `integrity`; kept for compatibility).
  bool verify_hash = true;
  /// How the file's bytes are verified (integrity.hpp; SECURITY.md states
  /// what each mode proves and costs). Default `lazy`: files with block
  /// digests verify the metadata at open and other chunks on first access
  /// through the verified accessors; files without verify the contentHash at
  /// open (R-HASH), as `full`.
  untold::integrity integrity = untold::integrity::lazy;
  /// Accept headerSize != 204 (the chunk table still starts at byte 204).
  bool relaxed_header_size = false;
  /// Accept what the library's stricter extension rules reject (docs/format.md,
  /// "Stricter than the format"): a skin mapping range past the mapping table
  /// (the skin uses the mappings in range) and skeleton parent cycles the
  /// linear-time budget cannot rule out (not checked then).
  bool relaxed_extension_ranges = false;
  /// Runs the whole-file open's pass over the geometry (integrity::full or
  /// deep_checks: block digests, contentHash, deep checks) as independent
  /// jobs, two 64 KiB blocks each; empty (the default): on the calling
  /// thread. The library starts no threads: give it a job system's
  /// executor, or thread_pool::executor() (thread_pool.hpp). Results and
  /// errors do not depend on it.
  untold::executor executor{};

  /// The integrity mode in effect: `integrity`, or none when !verify_hash.
  [[nodiscard]] constexpr untold::integrity effective_integrity() const noexcept {
    return verify_hash ? integrity : untold::integrity::none;
  }
};

// ---- header ---------------------------------------------------------------------

/// Decodes and checks the 204-byte header at the start of `bytes`.
template <class = void>
result<file_header> parse_header(byte_span bytes, const open_options& options = {}) {
  // R-MAGIC comes first; a buffer too short to hold all 8 magic bytes is a
  // magic error only if the bytes it does hold already differ.
  if (bytes.empty()) return make_error(errc::truncated_header, {.value = 0, .has_value = true});
  const std::size_t magic_bytes = std::min<std::size_t>(bytes.size(), file_magic.size());
  if (std::memcmp(bytes.data(), file_magic.data(), magic_bytes) != 0)
    return make_error(errc::bad_magic, {.field = "magic"});
  if (bytes.size() < header_size)  // R-TRUNC-HEADER
    return make_error(errc::truncated_header, {.value = bytes.size(), .has_value = true});
  const file_header h = codec<file_header>::decode(bytes);
  if (h.format_version < min_format_version || h.format_version > max_format_version)  // R-VERSION
    return make_error(errc::unsupported_version, {.field = "formatVersion", .value = h.format_version, .has_value = true});
  if (h.header_size != header_size && !options.relaxed_header_size)  // R-HEADER-SIZE
    return make_error(errc::bad_header_size, {.field = "headerSize", .value = h.header_size, .has_value = true});
  if (!is_known_file_type(h.file_type))  // R-FILE-TYPE
    return make_error(errc::unknown_file_type, {.field = "fileType", .value = h.file_type, .has_value = true});
  if (vertex_stride_of(h.vertex_layout) == 0)  // R-VERTEX-LAYOUT
    return make_error(errc::unknown_vertex_layout,
                      {.field = "vertexLayout", .value = h.vertex_layout, .has_value = true});
  return h;
}

// ---- chunk table ----------------------------------------------------------------

/// Byte range of the chunk table for a header: [204, 204 + 40 * chunkCount).
[[nodiscard]] inline byte_range chunk_table_range(const file_header& h) noexcept {
  return byte_range{header_size, std::uint64_t{h.chunk_count} * chunk_entry_size};
}

namespace detail {
inline error chunk_error(errc code, std::uint32_t row, const chunk_entry& c, const char* field,
                         std::uint64_t value) noexcept {
  return make_error(code, {.chunk_index = row, .chunk_type = c.chunk_type, .field = field, .value = value,
                           .has_value = true});
}
}  // namespace detail

/// Decodes the chunk table from `prefix` (the file's first bytes, at least up
/// to the end of the table) and checks every directory rule against the whole
/// file's size `file_size`.
template <class = void>
result<std::vector<chunk_entry>> parse_chunk_table(const file_header& h, byte_span prefix,
                                                   std::uint64_t file_size, const open_options& options = {}) {
  const limits& limits = options.limits;
  const byte_range table = chunk_table_range(h);
  if (table.end() > file_size)  // R-TRUNC-TABLE
    return make_error(errc::truncated_table, {.field = "chunkCount", .value = h.chunk_count, .has_value = true});
  if (h.chunk_count > limits.max_chunks)  // R-LIMITS
    return make_error(errc::limit_exceeded, {.field = "chunkCount", .value = h.chunk_count, .has_value = true});
  if (table.end() > prefix.size())
    return make_error(errc::range_missing, {.field = "chunkTable", .value = table.end(), .has_value = true});

  std::vector<chunk_entry> chunks(h.chunk_count);
  for (std::uint32_t row = 0; row < h.chunk_count; ++row)
    chunks[row] = codec<chunk_entry>::decode(prefix.subspan(table.offset + std::size_t{row} * chunk_entry_size));

  std::uint64_t total_decoded = 0;
  const std::uint64_t decoded_budget = limits.decoded_budget(file_size);
  std::array<std::uint32_t, max_known_chunk_type + 1> row_of_type{};
  row_of_type.fill(none);
  for (std::uint32_t row = 0; row < h.chunk_count; ++row) {
    const chunk_entry& c = chunks[row];
    if (!is_known_compression(c.compression_type))  // R-COMPRESSION
      return detail::chunk_error(errc::unknown_compression, row, c, "compressionType", c.compression_type);
    if (!compression_fits_chunk(c.compression_type, c.chunk_type))  // R-CODEC-CHUNK
      return detail::chunk_error(errc::codec_chunk_type, row, c, "compressionType", c.compression_type);
    if (c.file_offset % chunk_alignment != 0)  // R-ALIGN
      return detail::chunk_error(errc::misaligned_chunk, row, c, "fileOffset", c.file_offset);
    if (c.compression_type == static_cast<std::uint32_t>(compression::none) &&
        c.compressed_size != c.uncompressed_size)  // R-RAW-SIZE
      return detail::chunk_error(errc::raw_size_mismatch, row, c, "compressedSize", c.compressed_size);
    if (!checked_range(c.file_offset, c.compressed_size, 1, file_size) ||
        (c.compressed_size != 0 && c.file_offset < table.end()))  // R-CHUNK-RANGE
      return detail::chunk_error(errc::chunk_out_of_range, row, c, "fileOffset", c.file_offset);
    if (c.compression_type != static_cast<std::uint32_t>(compression::none)) {  // R-LIMITS
      if (c.uncompressed_size > limits.max_chunk_bytes)
        return detail::chunk_error(errc::limit_exceeded, row, c, "uncompressedSize", c.uncompressed_size);
      // total_decoded <= budget here, so the subtraction cannot wrap; a
      // running sum could (a caller may lift max_chunk_bytes to UINT64_MAX).
      // The budget scales with the file (limits::max_expansion).
      if (c.uncompressed_size > decoded_budget - total_decoded) {
        error e = detail::chunk_error(errc::limit_exceeded, row, c, "uncompressedSize", c.uncompressed_size);
        e.context.limit = decoded_budget - total_decoded;
        e.context.has_limit = true;
        return e;
      }
      total_decoded += c.uncompressed_size;
    }
    if (is_known_chunk_type(c.chunk_type)) {
      if (row_of_type[c.chunk_type] != none)  // R-DUP-CHUNK
        return detail::chunk_error(errc::duplicate_chunk, row, c, "chunkType", c.chunk_type);
      row_of_type[c.chunk_type] = row;
    }
  }

  // R-CHUNK-RANGE (overlap): sort the non-empty chunks by offset, then each must
  // start at or after the end of the previous one.
  std::vector<std::uint32_t> by_offset;
  for (std::uint32_t row = 0; row < h.chunk_count; ++row)
    if (chunks[row].compressed_size != 0) by_offset.push_back(row);
  detail::sort(by_offset.begin(), by_offset.end(), [&](std::uint32_t a, std::uint32_t b) {
    return chunks[a].file_offset != chunks[b].file_offset ? chunks[a].file_offset < chunks[b].file_offset : a < b;
  });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const chunk_entry& prev = chunks[by_offset[i - 1]];
    const chunk_entry& c = chunks[by_offset[i]];
    if (c.file_offset < prev.file_offset + prev.compressed_size)
      return detail::chunk_error(errc::chunk_out_of_range, by_offset[i], c, "fileOffset", c.file_offset);
  }

  // R-REQUIRED
  for (const chunk_type required : required_chunks(static_cast<file_type>(h.file_type))) {
    if (row_of_type[static_cast<std::uint32_t>(required)] == none)
      return make_error(errc::missing_required_chunk, {.chunk_type = static_cast<std::uint32_t>(required),
                                                       .field = "chunkType"});
  }

  // R-TABLE-SIZE, then R-LIMITS on record counts.
  for (std::uint32_t row = 0; row < h.chunk_count; ++row) {
    const chunk_entry& c = chunks[row];
    const std::uint32_t record_size = record_size_of_chunk(c.chunk_type, h.format_version);
    if (record_size == 0) continue;
    if (c.uncompressed_size != std::uint64_t{c.element_count} * record_size)
      return detail::chunk_error(errc::table_size_mismatch, row, c, "uncompressedSize", c.uncompressed_size);
    if (c.element_count > limits.max_records)
      return detail::chunk_error(errc::limit_exceeded, row, c, "elementCount", c.element_count);
  }

  // R-HEADER-COUNTS: an absent table counts as zero records.
  const auto count_of = [&](chunk_type t) -> std::uint32_t {
    const std::uint32_t row = row_of_type[static_cast<std::uint32_t>(t)];
    return row == none ? 0 : chunks[row].element_count;
  };
  const struct {
    std::uint32_t header_value;
    chunk_type table;
    const char* field;
  } counts[] = {{h.mesh_count, chunk_type::mesh_table, "meshCount"},
                {h.material_count, chunk_type::material_table, "materialCount"},
                {h.texture_ref_count, chunk_type::texture_table, "textureRefCount"},
                {h.entity_count, chunk_type::entity_table, "entityCount"}};
  for (const auto& c : counts)
    if (c.header_value != count_of(c.table))
      return make_error(errc::header_count_mismatch, {.chunk_index = row_of_type[static_cast<std::uint32_t>(c.table)],
                                                      .chunk_type = static_cast<std::uint32_t>(c.table),
                                                      .field = c.field, .value = c.header_value, .has_value = true});
  return chunks;
}

// ---- assembling an asset ------------------------------------------------------------

/// Builds an asset stage by stage. The whole-file `open` below and the
/// byte-range loader (ranges.hpp) share it, so both run the same rules.
class asset_loader {
 public:
  /// Stage 1: header + chunk table from the file's first bytes.
  template <class = void>
  static result<asset> from_directory(byte_span prefix, std::uint64_t file_size, const open_options& options) {
    auto header = parse_header(prefix, options);
    if (!header) return header.error();
    auto chunks = parse_chunk_table(*header, prefix, file_size, options);
    if (!chunks) return chunks.error();
    asset a;
    a.header_ = *header;
    a.chunks_ = std::move(*chunks);
    a.payloads_.assign(a.chunks_.size(), byte_span{});
    a.loaded_.assign(a.chunks_.size(), 0);
    a.owned_.resize(a.chunks_.size());
    a.relaxed_extension_ranges_ = options.relaxed_extension_ranges;
    for (std::uint32_t row = 0; row < a.chunks_.size(); ++row)
      if (is_known_chunk_type(a.chunks_[row].chunk_type)) a.chunk_by_type_[a.chunks_[row].chunk_type] = row;
    return a;
  }

  /// Stage 1b, whole file: the integrity chunk, if the file has current
  /// block digests: layout, top digest, header and table now; each chunk's
  /// blocks as load_payload takes it (the chunks open reads), the others
  /// (uncompressed data) on first access or in open's pass (integrity::full
  /// or deep checks). Returns whether the contentHash is to be verified
  /// (verifies_content_hash: without current block digests, or with `full`
  /// unless they are a tree under the contentHash), which the caller does
  /// (R-HASH).
  template <class = void>
  static result<bool> attach_integrity(asset& a, byte_span file, const open_options& options) {
    const integrity mode = options.effective_integrity();
    if (mode == integrity::none) {
      detail::integrity_access::mark_unchecked(a);
      return false;
    }
    const auto row = find_integrity_chunk(a.chunks_);
    if (!row) return row.error();
    const auto stored = [&](std::uint32_t r) { return subspan(file, {a.chunks_[r].file_offset, a.chunks_[r].compressed_size}); };
    UNTOLD_TRY(detail::integrity_access::use_integrity_chunk(
        a, file.first(static_cast<std::size_t>(chunk_table_range(a.header_).end())), *row,
        *row == none ? byte_span{} : stored(*row), true, stored));
    return detail::integrity_access::verifies_content_hash(mode, a);
  }

  /// Stage 2: give chunk `row` its stored bytes (exactly compressedSize of
  /// them). Uncompressed payloads are kept as views; compressed ones are
  /// decoded into storage the asset owns (R-DECOMPRESS). Block digests, when
  /// attached, are checked first (R-BLOCK-HASH; deferred for uncompressed
  /// data in a whole-file lazy open).
  template <class = void>
  static status load_payload(asset& a, std::uint32_t row, byte_span stored) {
    const chunk_entry& c = a.chunks_[row];
    if (stored.size() != c.compressed_size)
      return detail::chunk_error(errc::range_missing, row, c, "compressedSize", stored.size());
    UNTOLD_TRY(detail::integrity_access::verify_on_load(a, row, stored));
    if (c.compression_type == static_cast<std::uint32_t>(compression::none)) {
      a.payloads_[row] = stored;
    } else {
      // A size the stored bytes cannot decode to is rejected before it is
      // allocated: allocation stays proportional to the file, not the limits.
      const auto method = static_cast<compression>(c.compression_type);
      if (c.uncompressed_size > max_decoded_size(method, stored))
        return detail::chunk_error(errc::decompress_failed, row, c, "uncompressedSize", c.uncompressed_size);
      if (is_mesh_codec(method))  // R-CODEC-CHUNK: the chunk's own codec
        if (auto s = check_codec_chunk(method, stored, c.chunk_type); !s)
          return error(s.error()).at_chunk(row, c.chunk_type);
      // And the buffer grows only as the data delivers bytes (compression.hpp),
      // uninitialised: the decoder writes every byte once.
      byte_buffer& storage = a.owned_[row];
      if (auto s = decompress_into(static_cast<compression>(c.compression_type), stored, c.uncompressed_size, storage);
          !s) {
        error e = s.error();
        e.context.chunk_index = row;
        e.context.chunk_type = c.chunk_type;
        return e;
      }
      a.payloads_[row] = storage;
    }
    a.loaded_[row] = 1;
    return {};
  }

  /// Stage 2, for bytes that arrived in a buffer of their own (byte-range
  /// loading): the asset keeps `stored` when the chunk is uncompressed.
  template <class = void>
  static status load_payload(asset& a, std::uint32_t row, byte_buffer&& stored) {
    const chunk_entry& c = a.chunks_[row];
    if (c.compression_type != static_cast<std::uint32_t>(compression::none)) return load_payload(a, row, byte_span(stored));
    if (stored.size() != c.compressed_size)
      return detail::chunk_error(errc::range_missing, row, c, "compressedSize", stored.size());
    UNTOLD_TRY(detail::integrity_access::verify_on_load(a, row, stored));
    a.owned_[row] = std::move(stored);
    a.payloads_[row] = a.owned_[row];
    a.loaded_[row] = 1;
    return {};
  }

  /// Stage 3: the entityId index (R-ENTITY-ID), every record rule and the
  /// extension rules. Needs the metadata tables loaded; geometry payloads are
  /// not read (plugin envelopes are checked for the plugin chunks loaded).
  template <class = void>
  static status validate_metadata(asset& a) {
    const auto entities = a.entities();
    a.entity_rows_.clear();
    a.entity_rows_.reserve(entities.size());
    for (std::uint32_t row = 0; row < entities.size(); ++row) a.entity_rows_.emplace_back(entities[row].entity_id, row);
    detail::sort(a.entity_rows_.begin(), a.entity_rows_.end());
    for (std::size_t i = 1; i < a.entity_rows_.size(); ++i)
      if (a.entity_rows_[i - 1].first == a.entity_rows_[i].first)  // R-ENTITY-ID
        return detail::record_error(errc::duplicate_entity_id, a, chunk_type::entity_table, a.entity_rows_[i].second,
                                    "entityId", a.entity_rows_[i].first);
    const string_validator strings(a.payload(chunk_type::string_table));  // one pass for every string rule
    UNTOLD_TRY(validate_records(a, strings));
    UNTOLD_TRY(validate_extensions(a, strings));
    return {};
  }

  /// Stage 4 (opt-in): every deep check. Needs every chunk loaded.
  template <class = void>
  static status validate_all_deep(const asset& a) {
    UNTOLD_TRY(validate_deep(a));
    UNTOLD_TRY(validate_extensions_deep(a));
    return {};
  }
};

/// Opens a whole .untold file held in memory (a buffer or a mapped file).
/// Returns a validated asset that views `file` (keep it alive) or the first
/// rule the file breaks. With the default integrity::lazy and a file with
/// block digests, geometry is verified on first access through
/// verified_vertices / verified_payload / verify_chunk (integrity.hpp), not
/// here. Safe on untrusted input.
///
/// With integrity::full or deep_checks, open reads every byte: it loads and
/// validates the metadata first, then verifies the remaining block digests
/// (and the contentHash) and runs the deep checks in one pass, block by
/// block, through options.executor (detail/open_pass.hpp). The error it
/// returns is the one the stages above report first, as if they ran one
/// after the other.
template <class = void>
result<asset> open(byte_span file, const open_options& options = {}) {
  auto a = asset_loader::from_directory(file, file.size(), options);
  if (!a) return a.error();
  const bool one_pass = options.deep_checks || verifies_every_byte(options.effective_integrity());
  // R-INTEGRITY-*, R-DIRECTORY-HASH; R-HASH here or in the pass
  const auto content_hash = asset_loader::attach_integrity(*a, file, options);
  if (!content_hash) return content_hash.error();
  if (*content_hash && !one_pass) UNTOLD_TRY(verify_content_hash(a->header(), a->chunks(), file));
  const bool pass_hash = *content_hash && one_pass;
  // With a pass to come, what it checks comes first in the serial order:
  // an error here is reported only when the rows before it verify.
  const auto fail = [&](std::uint32_t end_row, error e) {
    return one_pass ? detail::first_error(*a, file, pass_hash, end_row, e) : e;
  };
  for (std::uint32_t row = 0; row < a->chunks().size(); ++row) {
    const chunk_entry& c = a->chunks()[row];
    if (auto s = asset_loader::load_payload(*a, row, subspan(file, {c.file_offset, c.compressed_size})); !s)
      return fail(row, s.error());
  }
  if (auto s = asset_loader::validate_metadata(*a); !s)
    return fail(static_cast<std::uint32_t>(a->chunks().size()), s.error());
  if (one_pass) UNTOLD_TRY(detail::verify_and_check(*a, file, pass_hash, options.deep_checks, options.executor));
  return a;
}

}  // namespace untold
