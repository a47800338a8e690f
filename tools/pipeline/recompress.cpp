#include "recompress.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <untold/compression.hpp>
#include <untold/content_hash.hpp>
#include <untold/integrity.hpp>
#include <untold/integrity_writer.hpp>
#include <untold/reader.hpp>

namespace untold::tools {

namespace {

// A VERTEX_DATA or INDEX_DATA payload as the meshopt compressions' streams:
// one per distinct mesh range, in payload order, with the zero padding
// between them. Empty `error` on success; else why the meshes' ranges do not
// cut the payload that way (ranges that overlap without being the same,
// bytes no mesh uses beyond 15 zero padding bytes, an element size the
// codec cannot take).
std::vector<codec_input> codec_inputs_for(const asset& a, const chunk_entry& c, byte_span payload, std::string& error) {
  const bool vertex = c.chunk_type == static_cast<std::uint32_t>(chunk_type::vertex_data);
  struct range {
    std::uint64_t offset, size;
    std::uint32_t element_size;
    bool operator<(const range& o) const noexcept { return offset != o.offset ? offset < o.offset : size < o.size; }
    bool operator==(const range& o) const noexcept = default;
  };
  std::vector<range> ranges;
  for (const mesh_record& m : a.meshes()) {
    const range r = vertex ? range{m.vertex_data_offset, m.vertex_data_size_bytes, m.vertex_stride_bytes}
                           : range{m.index_data_offset, m.index_data_size_bytes, index_size(m.index_type)};
    if (r.size != 0) ranges.push_back(r);
  }
  std::sort(ranges.begin(), ranges.end());
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  std::vector<codec_input> inputs;
  std::uint64_t at = 0;
  const auto padding = [&](std::uint64_t end) {
    if (end < at || end - at > codec_max_gap) return false;
    const byte_span gap = payload.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(end - at));
    if (std::any_of(gap.begin(), gap.end(), [](std::byte b) { return b != std::byte{0}; })) return false;
    if (!gap.empty()) inputs.push_back({gap, 0, vertex});
    return true;
  };
  for (const range& r : ranges) {
    if (!padding(r.offset)) {
      error.assign("mesh ranges at byte ").append(std::to_string(r.offset)).append(" overlap or leave unused bytes");
      return {};
    }
    inputs.push_back({payload.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.size)),
                      static_cast<std::uint16_t>(r.element_size), vertex});
    at = r.offset + r.size;
  }
  if (at != payload.size()) {
    error.assign("bytes after the last mesh range (from byte ").append(std::to_string(at)).append(")");
    return {};
  }
  return inputs;
}

}  // namespace

recompress_result recompress(byte_span input, const compression_policy& policy) {
  recompress_result out;
  // Every byte verified before it is re-stored: new block digests and a new
  // contentHash over altered bytes would launder them.
  auto opened = open(input, {.integrity = integrity::full});
  if (!opened) {
    out.error = "invalid input: " + opened.error().describe();
    return out;
  }
  const asset& a = *opened;
  std::vector<chunk_entry> table(a.chunks().begin(), a.chunks().end());
  // Block digests (the untold.integrity chunk) describe the stored bytes, so
  // they are rebuilt for the new ones, with the input's block size.
  const auto integrity_row = find_integrity_chunk(table);
  if (!integrity_row) {
    out.error = "invalid input: " + integrity_row.error().describe();
    return out;
  }
  std::uint32_t block_size = 0;
  if (*integrity_row != none) {
    // The open checked a current chunk; a stale one (computed for another
    // contentHash, ignored by the open) may not even fit this table: new
    // digests at the default block size replace it.
    const auto digests = parse_integrity_chunk(a.payload(*integrity_row), table, *integrity_row);
    block_size = digests && a.block_digests() == digest_status::current ? digests->block_size
                                                                         : default_digest_block_size;
  }
  std::vector<std::vector<std::byte>> stored(table.size());
  for (std::uint32_t row = 0; row < table.size(); ++row) {
    chunk_entry& c = table[row];
    const byte_span payload = a.payload(row);
    c.compression_type = static_cast<std::uint32_t>(compression::none);
    if (row == *integrity_row) continue;  // rebuilt below, always stored uncompressed
    stored[row].assign(payload.begin(), payload.end());
    const chunk_compression wanted = policy.for_chunk(c.chunk_type);
    if (wanted.method != compression::none && !payload.empty()) {
      std::string uncut;
      const std::vector<codec_input> streams =
          is_mesh_codec(wanted.method) ? codec_inputs_for(a, c, payload, uncut) : std::vector<codec_input>{};
      if (!uncut.empty()) {
        out.error.assign("chunk ").append(std::to_string(row)).append(" cannot be cut into one meshopt stream per mesh: ").append(uncut);
        return out;
      }
      auto packed = is_mesh_codec(wanted.method) ? compress_streams(wanted.method, wanted.level, streams)
                                                 : compress(wanted.method, wanted.level, payload);
      if (!packed) {
        out.error = "chunk " + std::to_string(row) + ": " + packed.error().describe();
        return out;
      }
      if (packed->size() < payload.size()) {  // keep compression only when it pays (spec 7)
        c.compression_type = static_cast<std::uint32_t>(wanted.method);
        stored[row] = std::move(*packed);
      }
    }
    c.compressed_size = stored[row].size();
  }
  if (block_size != 0)  // its size follows from the others' stored sizes
    table[*integrity_row].compressed_size = table[*integrity_row].uncompressed_size =
        integrity_chunk_size(table, *integrity_row, block_size);

  // Payloads keep the input's physical order (metadata first, spec 7).
  std::vector<std::uint32_t> order(table.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return a.chunks()[x].file_offset < a.chunks()[y].file_offset;
  });
  std::uint64_t cursor = std::uint64_t{header_size} + std::uint64_t{chunk_entry_size} * table.size();
  for (const std::uint32_t row : order) {
    cursor = (cursor + chunk_alignment - 1) / chunk_alignment * chunk_alignment;
    table[row].file_offset = cursor;
    cursor += table[row].compressed_size;
  }

  file_header h = a.header();
  if (block_size != 0) {  // the directory digest covers header and table (contentHash excluded)
    std::vector<std::byte> directory(header_size + std::size_t{chunk_entry_size} * table.size());
    codec<file_header>::encode(h, directory);
    for (std::size_t row = 0; row < table.size(); ++row)
      codec<chunk_entry>::encode(table[row], mutable_byte_span(directory).subspan(header_size + row * chunk_entry_size));
    auto sealed = seal_integrity_chunk(directory, table, *integrity_row, block_size, is_hashed(h),
                                       [&](std::uint32_t row) { return byte_span(stored[row]); });
    if (!sealed) {
      out.error = "block digests: " + sealed.error().describe();
      return out;
    }
    stored[*integrity_row] = std::move(sealed->chunk);
    h.content_hash = sealed->content_hash;  // zero when the input was not hashed
  } else if (is_hashed(h)) {
    auto digest = compute_content_hash(std::span<const chunk_entry>(table),
                                       [&](std::uint32_t row) { return byte_span(stored[row]); });
    if (!digest) {
      out.error = "content hash: " + digest.error().describe();
      return out;
    }
    h.content_hash = *digest;
  }

  out.bytes.assign(static_cast<std::size_t>(cursor), std::byte{0});
  // Every header field (reserved ones included) is carried over; only the hash changes.
  codec<file_header>::encode(h, out.bytes);
  for (std::size_t row = 0; row < table.size(); ++row) {
    codec<chunk_entry>::encode(table[row], mutable_byte_span(out.bytes).subspan(header_size + row * chunk_entry_size));
    if (!stored[row].empty())
      std::memcpy(out.bytes.data() + table[row].file_offset, stored[row].data(), stored[row].size());
  }

  if (std::string diff = compare_payloads(input, out.bytes); !diff.empty()) {
    out.error = "verification failed: " + diff;
    out.bytes.clear();
  }
  return out;
}

std::string compare_payloads(byte_span a_bytes, byte_span b_bytes) {
  auto a = open(a_bytes, {.integrity = integrity::full});
  if (!a) return "first file: " + a.error().describe();
  auto b = open(b_bytes, {.integrity = integrity::full});
  if (!b) return "second file: " + b.error().describe();
  file_header ha = a->header(), hb = b->header();
  ha.content_hash = hb.content_hash = {};
  if (!(ha == hb)) return "headers differ";
  if (is_hashed(a->header()) != is_hashed(b->header())) return "one file is hashed, the other not";
  if (a->chunks().size() != b->chunks().size()) return "chunk counts differ";
  for (std::uint32_t row = 0; row < a->chunks().size(); ++row) {
    const chunk_entry& x = a->chunks()[row];
    const chunk_entry& y = b->chunks()[row];
    if (x.chunk_type != y.chunk_type || x.element_count != y.element_count || x.reserved0 != y.reserved0)
      return "chunk " + std::to_string(row) + ": table rows differ";
    // Block digests describe the stored bytes: they differ whenever the
    // compression does (each file's were verified by its open above).
    if (x.chunk_type == integrity_chunk_type) continue;
    if (x.uncompressed_size != y.uncompressed_size) return "chunk " + std::to_string(row) + ": table rows differ";
    const byte_span pa = a->payload(row), pb = b->payload(row);
    if (pa.size() != pb.size() || (!pa.empty() && std::memcmp(pa.data(), pb.data(), pa.size()) != 0))
      return "chunk " + std::to_string(row) + ": payloads differ";
  }
  return {};
}

}  // namespace untold::tools
