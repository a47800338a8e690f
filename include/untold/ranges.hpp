// untold/ranges.hpp - open a .untold file one byte range at a time.
//
// For files behind HTTP range requests or inside pack files. The writer puts
// every metadata chunk before the geometry (spec 7), so opening costs one
// prefix read; each mesh can then be fetched on its own.
//
//   untold::file_range_source src = *untold::file_range_source::open("tile.untold");
//   auto tile = untold::streamed_asset::open(src);     // header, table, metadata
//   if (!tile) return fail(tile.error());
//   tile->metadata().meshes();                          // validated records
//   tile->ranges_for_mesh(3);                           // what mesh 3 will read
//   auto mesh = tile->load_mesh(3);                     // vertices + indices
//
// A source that lends views (range_source::lends_views: file_range_source's
// default mapping of a local file, memory_range_source, open(byte_span)) has
// its chunks viewed in place by load_chunk / load_all, not copied into fresh
// buffers, so load_all costs what untold::open_file does (docs/benchmarks.md,
// range_bench). Other sources (pread, HTTPS) read each chunk into a buffer
// the asset owns.
//
// The same rules run as in untold::open: header, table and record rules at
// open; R-DECOMPRESS per chunk as it loads (and the plugin envelope,
// R-EXT-RANGES, of a plugin chunk as it loads); with open.deep_checks, a
// mesh's deep rules (R-FINITE of its bounds and positions, R-BOUNDS,
// R-INDEX-VALUE) on every load_mesh; R-HASH and the remaining deep checks
// (header, entity and extension values) once everything is loaded
// (load_all).
//
// Integrity: a file with current block digests (the untold.integrity chunk,
// integrity.hpp) has them read and checked at open (R-INTEGRITY-*,
// R-DIRECTORY-HASH), and every chunk and every mesh range verified as it
// loads (R-BLOCK-HASH; a mesh range is read out to whole 64 KiB blocks),
// unless open.integrity is none; load_all then checks the contentHash only
// with integrity::full, as untold::open does. A file without them, or with
// stale ones (computed for another contentHash: the same decision as
// untold::open's, metadata().block_digests() == digest_status::stale),
// cannot be verified by range: the content hash covers every stored byte of
// every chunk in one SHA-256, so bytes from load_mesh / load_chunk are then
// range-checked, decoded exactly and (with deep checks) value-checked, but
// NOT authenticated (has_block_digests(metadata()) is false). Only load_all,
// which reads every stored byte, verifies R-HASH; call it (or verify the
// file by other means, e.g. a pinned ETag plus a digest the caller trusts)
// before relying on integrity.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "content_hash.hpp"
#include "error.hpp"
#include "extensions.hpp"
#include "format.hpp"
#include "reader.hpp"
#include "source.hpp"
#include "validate.hpp"

namespace untold {

struct stream_options {
  open_options open{};
  /// Bytes read by the first request. It usually covers header, table and
  /// all metadata, making open a single round trip. 0 reads exactly what is
  /// needed (header, then table, then metadata: three reads).
  std::uint64_t initial_read = 64 * 1024;
};

/// A mesh's bytes, owned: PBR_STATIC_V1 vertices, indices, edge indices.
struct mesh_bytes {
  std::vector<std::byte> vertices;
  std::vector<std::byte> indices;
  std::vector<std::byte> edge_indices;
};

/// Where streamed_asset::load_mesh_into writes one mesh's bytes.
struct mesh_targets {
  mutable_byte_span vertices;
  mutable_byte_span indices;
  mutable_byte_span edge_indices;
};

/// Sorts ranges and merges those that touch or are separated by less than
/// `gap` bytes (alignment padding), so adjacent chunks become one request.
[[nodiscard]] inline std::vector<byte_range> coalesce(std::vector<byte_range> ranges, std::uint64_t gap = 16) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const byte_range& r) { return r.size == 0; }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(), [](const byte_range& a, const byte_range& b) { return a.offset < b.offset; });
  std::vector<byte_range> out;
  for (const byte_range& r : ranges) {
    if (!out.empty() && r.offset <= out.back().end() + gap) {
      out.back().size = std::max(out.back().end(), r.end()) - out.back().offset;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

/// A .untold file loaded by byte ranges. The members that load or validate
/// are `template <class = void>` only so that they are compiled where they
/// are called (reader.hpp says why); call them as ordinary members.
class streamed_asset {
 public:
  /// Reads header, chunk table and metadata from `source` and validates them.
  /// `source` must outlive the streamed_asset. Safe on untrusted input.
  template <class = void>
  static result<streamed_asset> open(range_source& source, const stream_options& options = {}) {
    streamed_asset s(source, options);
    const std::uint64_t file_size = source.size();
    // First read: the caller's guess, at least the header.
    std::uint64_t want = std::min(file_size, std::max<std::uint64_t>(options.initial_read, header_size));
    UNTOLD_TRY(s.read_into(s.prefix_, 0, want));
    auto header = parse_header(s.prefix_, options.open);
    if (!header) return header.error();
    // Then the rest of the chunk table if the first read missed it.
    const byte_range table = chunk_table_range(*header);
    if (table.end() > file_size)
      return make_error(errc::truncated_table, {.field = "chunkCount", .value = header->chunk_count, .has_value = true});
    if (header->chunk_count > options.open.limits.max_chunks)
      return make_error(errc::limit_exceeded, {.field = "chunkCount", .value = header->chunk_count, .has_value = true});
    if (table.end() > s.prefix_.size()) UNTOLD_TRY(s.extend_prefix(table.end()));
    auto a = asset_loader::from_directory(s.prefix_, file_size, options.open);
    if (!a) return a.error();
    s.asset_ = std::move(*a);
    UNTOLD_TRY(s.attach_block_digests());  // first, so every chunk below is verified as it loads
    // Then the metadata chunks, one read per coalesced range: a range that
    // continues the prefix extends it, any other is read as a block.
    for (const byte_range& r : s.metadata_ranges()) {
      if (r.end() <= s.prefix_.size()) continue;
      if (r.offset <= s.prefix_.size() + chunk_alignment) {
        UNTOLD_TRY(s.extend_prefix(r.end()));
        continue;
      }
      std::vector<std::byte> block;
      UNTOLD_TRY(s.read_into(block, r.offset, r.size));
      for (std::uint32_t row = 0; row < s.asset_.chunks().size(); ++row) {
        const chunk_entry& c = s.asset_.chunks()[row];
        if (is_metadata_chunk(c.chunk_type) && c.compressed_size != 0 && c.file_offset >= r.offset &&
            c.file_offset + c.compressed_size <= r.end())
          UNTOLD_TRY(s.load_from(block, r.offset, row));
      }
    }
    for (std::uint32_t row = 0; row < s.asset_.chunks().size(); ++row)
      if (is_metadata_chunk(s.asset_.chunks()[row].chunk_type)) UNTOLD_TRY(s.load_chunk(row));
    UNTOLD_TRY(s.read_codec_directories());
    s.prefix_ = {};
    UNTOLD_TRY(asset_loader::validate_metadata(s.asset_));
    return s;
  }

  /// The same over bytes already in memory, typically a mapped local file
  /// (mapped_file::bytes()): ranges are served from them without a read, and
  /// chunks (load_chunk, load_all) are viewed in place instead of copied, as
  /// untold::open does. `bytes` must outlive the streamed_asset. Every rule
  /// runs as over any other source. Safe on untrusted input.
  template <class = void>
  static result<streamed_asset> open(byte_span bytes, const stream_options& options = {}) {
    auto source = std::make_shared<memory_range_source>(bytes);
    auto s = open(*source, options);
    if (!s) return s.error();
    s->owned_source_ = std::move(source);  // source_ points at it; it does not move with the streamed_asset
    return s;
  }

  /// The asset: metadata tables are loaded and validated; data chunks are
  /// loaded by load_chunk/load_all (see asset::is_loaded).
  [[nodiscard]] const asset& metadata() const noexcept { return asset_; }

  /// Total bytes read from the source so far.
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }

  /// The coalesced file ranges that hold every metadata chunk.
  [[nodiscard]] std::vector<byte_range> metadata_ranges() const {
    std::vector<byte_range> ranges;
    for (const chunk_entry& c : asset_.chunks())
      if (is_metadata_chunk(c.chunk_type)) ranges.push_back({c.file_offset, c.compressed_size});
    return coalesce(std::move(ranges));
  }

  /// The file range of chunk row `row` (its stored bytes); empty when out of range.
  [[nodiscard]] byte_range range_for_chunk(std::uint32_t row) const noexcept {
    if (row >= asset_.chunks().size()) return {};
    return {asset_.chunks()[row].file_offset, asset_.chunks()[row].compressed_size};
  }

  /// The file ranges load_mesh(mesh_index) reads: the mesh's own vertex,
  /// index and edge-index bytes where those chunks are stored uncompressed,
  /// the mesh's own streams where meshopt-compressed (read with their
  /// directory at open), the whole chunk where otherwise compressed (it must
  /// be decoded whole). Chunks already loaded need no range. Empty for a
  /// mesh index out of range.
  [[nodiscard]] std::vector<byte_range> ranges_for_mesh(std::uint32_t mesh_index) const {
    std::vector<byte_range> ranges;
    const auto mesh = asset_.meshes().at(mesh_index);
    if (!mesh) return ranges;
    for (const auto& part : mesh_parts(*mesh)) {
      if (part.size == 0 || asset_.is_loaded(*part.row)) continue;
      const chunk_entry& c = asset_.chunks()[*part.row];
      if (c.compression_type == static_cast<std::uint32_t>(compression::none)) {
        const byte_range blocks = detail::integrity_access::covering_blocks(asset_, *part.row, part.offset, part.size);
        ranges.push_back({c.file_offset + blocks.offset, blocks.size});
      } else if (const byte_range streams = stored_streams(*part.row, part.offset, part.size); streams.size != 0) {
        const byte_range blocks = detail::integrity_access::covering_blocks(asset_, *part.row, streams.offset, streams.size);
        ranges.push_back({c.file_offset + blocks.offset, blocks.size});
      } else {
        ranges.push_back({c.file_offset, c.compressed_size});
      }
    }
    return coalesce(std::move(ranges), 0);
  }

  /// Loads (and decodes) chunk row `row` into the asset. R-DECOMPRESS, and
  /// R-EXT-RANGES for a plugin chunk's envelope.
  template <class = void>
  status load_chunk(std::uint32_t row) {
    if (row >= asset_.chunks().size())
      return make_error(errc::invalid_argument, {.chunk_index = row, .field = "row"});
    if (asset_.is_loaded(row)) return {};
    const chunk_entry& c = asset_.chunks()[row];
    if (c.file_offset + c.compressed_size <= prefix_.size()) {
      UNTOLD_TRY(load_from(prefix_, 0, row));
    } else if (lends_views_) {
      const auto stored = view(c.file_offset, c.compressed_size);
      if (!stored) return stored.error();
      UNTOLD_TRY(asset_loader::load_payload(asset_, row, *stored));
    } else {
      byte_buffer stored;
      UNTOLD_TRY(read_into(stored, c.file_offset, c.compressed_size));
      UNTOLD_TRY(asset_loader::load_payload(asset_, row, std::move(stored)));
    }
    return validate_plugin_chunk(asset_, row);
  }

  /// Decodes chunk row `row` straight into `out`, caller memory (e.g. a
  /// mapped GPU staging buffer) that must hold exactly the chunk's
  /// uncompressedSize bytes, else invalid_argument (field "out") before
  /// anything is read. The stored bytes are lent by the source or read into a
  /// temporary buffer; block digests, when the file has them, are checked
  /// first (R-BLOCK-HASH), then the decode is exact (R-DECOMPRESS; a plugin
  /// chunk's envelope, R-EXT-RANGES, is checked on `out`). The asset does not
  /// keep the chunk (is_loaded(row) is unchanged); a chunk it already holds
  /// is copied from there. On failure the contents of `out` are unspecified.
  /// Safe on untrusted input: nothing is allocated from the declared size.
  template <class = void>
  status load_chunk_into(std::uint32_t row, mutable_byte_span out) {
    if (row >= asset_.chunks().size())
      return make_error(errc::invalid_argument, {.chunk_index = row, .field = "row"});
    const chunk_entry& c = asset_.chunks()[row];
    if (out.size() != c.uncompressed_size)
      return make_error(errc::invalid_argument,
                        {.chunk_index = row, .chunk_type = c.chunk_type, .field = "out", .value = out.size(), .has_value = true});
    if (asset_.is_loaded(row)) {
      if (!out.empty()) std::memcpy(out.data(), asset_.payload(row).data(), out.size());
      return {};
    }
    const auto decode = [&](byte_span stored) -> status {
      UNTOLD_TRY(detail::integrity_access::verify_on_load(asset_, row, stored));
      if (auto s = decompress(static_cast<compression>(c.compression_type), stored, out); !s) {
        error e = s.error();
        e.context.chunk_index = row;
        e.context.chunk_type = c.chunk_type;
        return e;
      }
      if (!is_plugin_chunk_type(c.chunk_type)) return {};
      if (const auto parsed = parse_plugin_chunk(out); !parsed) {
        error e = parsed.error();
        e.context.chunk_index = row;
        e.context.chunk_type = c.chunk_type;
        return e;
      }
      return {};
    };
    if (lends_views_) {
      const auto stored = view(c.file_offset, c.compressed_size);
      if (!stored) return stored.error();
      return decode(*stored);
    }
    byte_buffer stored;
    UNTOLD_TRY(read_into(stored, c.file_offset, c.compressed_size));
    return decode(stored);
  }

  /// The bytes of one mesh, reading only ranges_for_mesh(mesh_index). With
  /// open.deep_checks, the mesh's deep rules run on the bytes returned
  /// (validate_mesh_deep: R-FINITE, R-BOUNDS, R-INDEX-VALUE), so every index
  /// handed out is below the mesh's vertexCount. Block digests, when the
  /// file has current ones (has_block_digests(metadata())), are checked as
  /// the bytes are read; the content hash never is, so without current
  /// digests (none, or metadata().block_digests() == digest_status::stale)
  /// the bytes are not authenticated until load_all (file comment). Safe on untrusted input. load_mesh_into does
  /// the same into memory the caller owns.
  template <class = void>
  result<mesh_bytes> load_mesh(std::uint32_t mesh_index) {
    const auto sizes = mesh_sizes(mesh_index);
    if (!sizes) return sizes.error();
    mesh_bytes out;
    out.vertices.resize(static_cast<std::size_t>((*sizes)[0]));
    out.indices.resize(static_cast<std::size_t>((*sizes)[1]));
    out.edge_indices.resize(static_cast<std::size_t>((*sizes)[2]));
    UNTOLD_TRY(load_mesh_into(mesh_index, {out.vertices, out.indices, out.edge_indices}));
    return out;
  }

  /// load_mesh into caller memory, e.g. a mapped GPU staging buffer: the
  /// same reads, checks and errors, with the bytes written straight into
  /// `out` (each span exactly the size of that part of the mesh, as
  /// mesh_sizes returns it; an absent part takes an empty span), so nothing
  /// is allocated for them (a range read out to whole digest blocks passes
  /// through one scratch buffer). Errors: invalid_argument for a bad
  /// mesh_index (field "mesh_index") or a span of another size (field
  /// "vertices", "indices" or "edge_indices", value = the span's size). On
  /// failure the contents of `out` are unspecified. Safe on untrusted input.
  template <class = void>
  status load_mesh_into(std::uint32_t mesh_index, const mesh_targets& out) {
    const auto mesh = asset_.meshes().at(mesh_index);
    if (!mesh) return make_error(errc::invalid_argument, {.record_index = mesh_index, .field = "mesh_index"});
    const mutable_byte_span targets[] = {out.vertices, out.indices, out.edge_indices};
    const char* const names[] = {"vertices", "indices", "edge_indices"};
    std::size_t i = 0;
    for (const auto& part : mesh_parts(*mesh)) {
      const mutable_byte_span target = targets[i];
      const char* const name = names[i++];
      if (target.size() != part.size)
        return make_error(errc::invalid_argument,
                          {.record_index = mesh_index, .field = name, .value = target.size(), .has_value = true});
      if (target.empty()) continue;
      const chunk_entry& c = asset_.chunks()[*part.row];
      if (!asset_.is_loaded(*part.row) && !codec_streams_[*part.row].empty()) {
        UNTOLD_TRY(decode_streams(target, *part.row, part.offset));
        continue;
      }
      if (!asset_.is_loaded(*part.row) && c.compression_type != static_cast<std::uint32_t>(compression::none)) {
        UNTOLD_TRY(load_chunk(*part.row));
      }
      if (asset_.is_loaded(*part.row)) {
        std::memcpy(target.data(), subspan(asset_.payload(*part.row), {part.offset, part.size}).data(), target.size());
      } else {
        UNTOLD_TRY(read_verified(target, *part.row, part.offset));
      }
    }
    if (options_.open.deep_checks)
      UNTOLD_TRY(validate_mesh_deep(asset_, mesh_index, out.vertices, out.indices, out.edge_indices));
    return {};
  }

  /// The byte sizes of mesh `mesh_index`'s vertices, indices and edge
  /// indices: what load_mesh returns and load_mesh_into's spans must hold
  /// (0 for an absent part). invalid_argument for a bad index.
  [[nodiscard]] result<std::array<std::uint64_t, 3>> mesh_sizes(std::uint32_t mesh_index) const {
    const auto mesh = asset_.meshes().at(mesh_index);
    if (!mesh) return make_error(errc::invalid_argument, {.record_index = mesh_index, .field = "mesh_index"});
    std::array<std::uint64_t, 3> sizes{};
    std::size_t i = 0;
    for (const auto& part : mesh_parts(*mesh)) sizes[i++] = part.size;
    return sizes;
  }

  /// Loads every chunk, then runs the deep checks (when asked), so that every
  /// stored byte is verified as untold::open with the same integrity mode
  /// verifies it: with block digests attached, each chunk's blocks as it
  /// loads (R-BLOCK-HASH); the contentHash (R-HASH) only with
  /// integrity::full, or when the file has no current block digests (none,
  /// or stale ones: then it is the only check there is). A contentHash pass reads each stored byte once
  /// more (from a source that lends views: hashes them in place).
  template <class = void>
  status load_all() {
    const auto& chunks = asset_.chunks();
    const bool hash = is_hashed(asset_.header()) &&
                      detail::integrity_access::verifies_content_hash(options_.open.effective_integrity(), asset_);
    sha256 hasher;
    for (const std::uint32_t row : content_hash_order(chunks)) {
      const chunk_entry& c = chunks[row];
      const bool raw = c.compression_type == static_cast<std::uint32_t>(compression::none);
      if (asset_.is_loaded(row) && raw) {
        if (hash) hasher.update(asset_.payload(row));
        continue;
      }
      if (!hash && asset_.is_loaded(row)) continue;
      if (lends_views_) {  // in place: no buffer, no copy
        const auto stored = view(c.file_offset, c.compressed_size);
        if (!stored) return stored.error();
        if (hash) hasher.update(*stored);
        if (!asset_.is_loaded(row)) {
          UNTOLD_TRY(asset_loader::load_payload(asset_, row, *stored));
          UNTOLD_TRY(validate_plugin_chunk(asset_, row));
        }
        continue;
      }
      byte_buffer stored;
      UNTOLD_TRY(read_into(stored, c.file_offset, c.compressed_size));
      if (hash) hasher.update(stored);
      if (!asset_.is_loaded(row)) {
        UNTOLD_TRY(asset_loader::load_payload(asset_, row, std::move(stored)));
        UNTOLD_TRY(validate_plugin_chunk(asset_, row));
      }
    }
    if (hash) {
      auto digest = hasher.finish();
      if (!digest) return digest.error();
      if (*digest != asset_.header().content_hash) return make_error(errc::hash_mismatch, {.field = "contentHash"});
    }
    if (options_.open.deep_checks) UNTOLD_TRY(asset_loader::validate_all_deep(asset_));
    return {};
  }

 private:
  streamed_asset(range_source& source, const stream_options& options)
      : source_(&source), lends_views_(source.lends_views()), options_(options) {}

  struct mesh_part {
    std::optional<std::uint32_t> row;  // chunk row, nullopt when absent
    std::uint64_t offset = 0;          // within the uncompressed payload
    std::uint64_t size = 0;
  };
  // A part whose chunk the file lacks has size 0 (nothing to read or hand out).
  [[nodiscard]] std::array<mesh_part, 3> mesh_parts(const mesh_record& m) const noexcept {
    const auto part = [&](chunk_type type, std::uint64_t offset, std::uint64_t size) {
      const auto row = asset_.find_chunk(type);
      return mesh_part{row, offset, row ? size : 0};
    };
    return {part(chunk_type::vertex_data, m.vertex_data_offset, m.vertex_data_size_bytes),
            part(chunk_type::index_data, m.index_data_offset, m.index_data_size_bytes),
            part(chunk_type::edge_index_data, m.edge_index_offset(),
                 std::uint64_t{m.edge_index_count()} * index_size(m.index_type))};
  }

  // Loads chunk `row` from `block`, which holds the file bytes starting at `base`.
  template <class = void>
  status load_from(byte_span block, std::uint64_t base, std::uint32_t row) {
    const chunk_entry& c = asset_.chunks()[row];
    const auto part = subspan(block, {c.file_offset - base, c.compressed_size});
    if (c.compression_type != static_cast<std::uint32_t>(compression::none))
      return asset_loader::load_payload(asset_, row, part);  // decoded into storage of its own: no copy needed
    byte_buffer copy(part.size());
    if (!part.empty()) std::memcpy(copy.data(), part.data(), part.size());
    return asset_loader::load_payload(asset_, row, std::move(copy));
  }

  // Reads [offset, offset + size) into `out`, resized to `size` (a
  // std::vector, or a byte_buffer: uninitialised, for bytes the asset keeps).
  // The range is checked before anything is allocated.
  template <class Buffer>
  status read_into(Buffer& out, std::uint64_t offset, std::uint64_t size) {
    if (!checked_range(offset, size, 1, source_->size()))
      return make_error(errc::io_read_failed, {.value = offset, .has_value = true});
    if constexpr (std::is_same_v<Buffer, byte_buffer>)
      out = byte_buffer(static_cast<std::size_t>(size));
    else
      out.resize(static_cast<std::size_t>(size));
    return read_exact(out, offset);
  }

  // Reads [offset, offset + out.size()) into `out`.
  template <class = void>
  status read_exact(mutable_byte_span out, std::uint64_t offset) {
    if (!checked_range(offset, out.size(), 1, source_->size()))
      return make_error(errc::io_read_failed, {.value = offset, .has_value = true});
    UNTOLD_TRY(source_->read(offset, out));
    bytes_read_ += out.size();
    return {};
  }

  // The bytes [offset, offset + size) lent by a source that lends views, in
  // place; the same range check and count as read_into.
  template <class = void>
  result<byte_span> view(std::uint64_t offset, std::uint64_t size) {
    if (!checked_range(offset, size, 1, source_->size()))
      return make_error(errc::io_read_failed, {.value = offset, .has_value = true});
    auto bytes = source_->view(offset, size);
    if (!bytes) return bytes.error();
    // A source handing back another length breaks its contract: never trust it.
    if (bytes->size() != size) return make_error(errc::io_read_failed, {.value = offset, .has_value = true});
    bytes_read_ += size;
    return *bytes;
  }

  // Reads and checks the integrity chunk, if the file has one and
  // open.integrity asks for verification: from here on load_payload verifies
  // every chunk it is given (integrity.hpp), unless the chunk is stale
  // (computed for another contentHash): then nothing is verified by range,
  // as in a file without block digests, and load_all checks the contentHash.
  template <class = void>
  status attach_block_digests() {
    if (options_.open.effective_integrity() == integrity::none) {
      detail::integrity_access::mark_unchecked(asset_);
      return {};
    }
    const auto row = find_integrity_chunk(asset_.chunks());
    if (!row) return row.error();
    if (*row == none)
      return detail::integrity_access::use_integrity_chunk(asset_, {}, none, {}, false,
                                                           [](std::uint32_t) { return byte_span{}; });
    const chunk_entry& c = asset_.chunks()[*row];
    if (c.file_offset <= prefix_.size() + chunk_alignment && c.file_offset + c.compressed_size > prefix_.size())
      UNTOLD_TRY(extend_prefix(c.file_offset + c.compressed_size));  // the writer stores it right after the table
    UNTOLD_TRY(load_chunk(*row));
    // The binding covers the rows the contentHash takes after the integrity
    // chunk (chunkType above it; the writer's files have none unless a
    // caller added such plugin chunks): their stored bytes are read now.
    std::vector<byte_span> later(asset_.chunks().size());
    std::vector<byte_buffer> owned;
    for (std::uint32_t r = 0; r < asset_.chunks().size(); ++r) {
      const chunk_entry& e = asset_.chunks()[r];
      if (e.chunk_type <= integrity_chunk_type || e.compressed_size == 0) continue;
      if (lends_views_) {
        const auto stored = view(e.file_offset, e.compressed_size);
        if (!stored) return stored.error();
        later[r] = *stored;
        continue;
      }
      byte_buffer stored;
      UNTOLD_TRY(read_into(stored, e.file_offset, e.compressed_size));
      owned.push_back(std::move(stored));  // moving keeps the buffer, and the span into it
      later[r] = owned.back();
    }
    const auto directory = byte_span(prefix_).first(static_cast<std::size_t>(chunk_table_range(asset_.header()).end()));
    return detail::integrity_access::use_integrity_chunk(asset_, directory, *row, asset_.payload(*row), false,
                                                         [&](std::uint32_t r) { return later[r]; });
  }

  // Payload bytes [offset, offset + out.size()) of uncompressed chunk `row`
  // into `out`; with block digests, the whole blocks around them are read
  // (into a scratch buffer unless they are exactly `out`) and verified first
  // (R-BLOCK-HASH).
  template <class = void>
  status read_verified(mutable_byte_span out, std::uint32_t row, std::uint64_t offset) {
    const std::uint64_t file_offset = asset_.chunks()[row].file_offset;
    const byte_range blocks = detail::integrity_access::covering_blocks(asset_, row, offset, out.size());
    if (blocks.offset == offset && blocks.size == out.size()) {
      UNTOLD_TRY(read_exact(out, file_offset + offset));
      return detail::integrity_access::verify_stored(asset_, row, blocks.offset, out);
    }
    byte_buffer stored;
    UNTOLD_TRY(read_into(stored, file_offset + blocks.offset, blocks.size));
    UNTOLD_TRY(detail::integrity_access::verify_stored(asset_, row, blocks.offset, stored));
    std::memcpy(out.data(), stored.data() + (offset - blocks.offset), out.size());
    return {};
  }

  // The stream directory of every meshopt chunk (mesh_codec.hpp), read and
  // verified like any stored bytes: load_mesh then decodes only the streams
  // that hold its own bytes. R-DECOMPRESS, R-CODEC-CHUNK.
  template <class = void>
  status read_codec_directories() {
    codec_streams_.assign(asset_.chunks().size(), {});
    for (std::uint32_t row = 0; row < asset_.chunks().size(); ++row) {
      const chunk_entry& c = asset_.chunks()[row];
      const auto method = static_cast<compression>(c.compression_type);
      if (!is_mesh_codec(method)) continue;
      const auto fail = [&](error e) { return e.at_chunk(row, c.chunk_type); };
      if (c.compressed_size < codec_directory_header_size)
        return fail(detail::directory_error("streamCount", c.compressed_size));
      // One read holds the directory of up to 170 streams (one per mesh);
      // only a larger one is read again, whole.
      byte_buffer directory(static_cast<std::size_t>(std::min<std::uint64_t>(c.compressed_size, 4096)));
      UNTOLD_TRY(read_verified(directory, row, 0));
      const std::uint64_t size = *codec_directory_size(directory);
      if (size > c.compressed_size) return fail(detail::directory_error("streamCount", size));
      if (size > directory.size()) {
        directory = byte_buffer(static_cast<std::size_t>(size));
        UNTOLD_TRY(read_verified(directory, row, 0));
      }
      auto streams = parse_codec_directory(method, directory, c.compressed_size);
      if (!streams) return fail(streams.error());
      if (auto kinds = check_codec_streams(*streams, c.chunk_type); !kinds) return fail(kinds.error());
      if (codec_decoded_size(*streams) != c.uncompressed_size)
        return fail(detail::directory_error("uncompressedSize", c.uncompressed_size));
      codec_streams_[row] = std::move(*streams);
    }
    return {};
  }

  // The first and last streams of meshopt chunk `row` that hold payload
  // bytes [offset, offset + size): indices into codec_streams_[row].
  [[nodiscard]] std::pair<std::size_t, std::size_t> streams_between(std::uint32_t row, std::uint64_t offset,
                                                                    std::uint64_t size) const {
    const std::vector<codec_stream>& streams = codec_streams_[row];
    const auto first = std::upper_bound(streams.begin(), streams.end(), offset,
                                        [](std::uint64_t at, const codec_stream& s) { return at < s.raw_end(); });
    const auto last = std::lower_bound(first, streams.end(), offset + size,
                                       [](const codec_stream& s, std::uint64_t end) { return s.raw_offset < end; });
    return {static_cast<std::size_t>(first - streams.begin()), static_cast<std::size_t>(last - streams.begin())};
  }

  // The stored bytes of those streams (empty when `row` is no meshopt chunk).
  [[nodiscard]] byte_range stored_streams(std::uint32_t row, std::uint64_t offset, std::uint64_t size) const {
    if (row >= codec_streams_.size() || codec_streams_[row].empty()) return {};
    const auto [first, last] = streams_between(row, offset, size);
    if (first >= last) return {};
    const std::vector<codec_stream>& streams = codec_streams_[row];
    return {streams[first].stored_offset, streams[last - 1].stored_offset + streams[last - 1].stored_size -
                                              streams[first].stored_offset};
  }

  // Payload bytes [offset, offset + out.size()) of meshopt chunk `row`: reads
  // (and verifies) only the streams that hold them and decodes those, each
  // straight into `out` when it is exactly the bytes asked for.
  template <class = void>
  status decode_streams(mutable_byte_span out, std::uint32_t row, std::uint64_t offset) {
    const chunk_entry& c = asset_.chunks()[row];
    const auto method = static_cast<compression>(c.compression_type);
    const byte_range span = stored_streams(row, offset, out.size());
    byte_buffer stored(static_cast<std::size_t>(span.size));
    if (span.size != 0) UNTOLD_TRY(read_verified(stored, row, span.offset));
    std::memset(out.data(), 0, out.size());  // the gaps between streams are zero
    const auto [first, last] = streams_between(row, offset, out.size());
    byte_buffer decoded;
    for (std::size_t k = first; k < last; ++k) {
      const codec_stream& s = codec_streams_[row][k];
      const byte_span bytes = byte_span(stored).subspan(static_cast<std::size_t>(s.stored_offset - span.offset),
                                                        static_cast<std::size_t>(s.stored_size));
      const std::uint64_t from = std::max(offset, s.raw_offset), to = std::min(offset + out.size(), s.raw_end());
      const bool whole = s.raw_offset == offset && s.raw_size() == out.size();
      if (!whole && decoded.size() < s.raw_size()) decoded = byte_buffer(static_cast<std::size_t>(s.raw_size()));
      const mutable_byte_span into = whole ? out : mutable_byte_span(decoded.data(), static_cast<std::size_t>(s.raw_size()));
      if (auto st = detail::thread_decompressor().decompress_stream(method, s, bytes, into); !st)
        return error(st.error()).at_chunk(row, c.chunk_type).at_record(k);
      if (!whole)
        std::memcpy(out.data() + (from - offset), decoded.data() + (from - s.raw_offset), static_cast<std::size_t>(to - from));
    }
    return {};
  }

  template <class = void>
  status extend_prefix(std::uint64_t new_size) {
    std::vector<std::byte> more;
    const std::uint64_t old_size = prefix_.size();
    UNTOLD_TRY(read_into(more, old_size, new_size - old_size));
    prefix_.insert(prefix_.end(), more.begin(), more.end());
    return {};
  }

  range_source* source_;
  std::shared_ptr<range_source> owned_source_;  // open(byte_span)'s source
  bool lends_views_;                            // source_->lends_views(): chunks are viewed, not copied
  stream_options options_;
  std::vector<std::byte> prefix_;  // the first bytes of the file, during open
  asset asset_;
  std::vector<std::vector<codec_stream>> codec_streams_;  // per row: a meshopt chunk's directory, else empty
  std::uint64_t bytes_read_ = 0;
};

}  // namespace untold
