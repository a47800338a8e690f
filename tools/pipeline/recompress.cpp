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
      auto packed = compress(wanted.method, wanted.level, payload);
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
