// fuzz_structured: fuzz_open's properties (untold_fuzz::check_open), reached
// through a structure-aware mutator. Byte mutations of a .untold file almost
// always break the content hash, a block digest, a compressed stream or a
// table rule first, so they rarely reach the record rules and the deep
// checks behind them. LLVMFuzzerCustomMutator below decodes the file
// (header, chunk table, every chunk decompressed), changes one thing in the
// decoded data:
//   - one 32-bit field of one record of a record table (core or extension),
//   - one 16- or 32-bit element of a data chunk (indices, positions, joints),
//   - one 32-bit word of the header,
//   - one record copied over another (duplicates: ids, ranges),
//   - one payload handed to libFuzzer's own byte mutator (size kept),
// to a value chosen to probe a rule (0, 1, NONE, a table's size and its
// neighbours, the old value +-1, NaN, +-inf, huge), then re-encodes it:
// every chunk compressed again with its own method, chunks laid out again
// (16-byte aligned, in their old order), the untold.integrity chunk rebuilt
// when the file has one (block, row, directory and top digests, by the
// writer's encoder in integrity.hpp, with the chunk's own block size, bound
// to the new hash), and the content hash recomputed when the file had one.
// Mutants therefore pass R-HASH, R-DECOMPRESS, R-BLOCK-HASH,
// R-DIRECTORY-HASH and R-INTEGRITY-HASH and exercise the rules behind them.
// One mutant in 16, and every mutant whose change landed in the integrity
// chunk itself, keeps the old digests on purpose, and half of those the old
// content hash too: a new hash leaves the digests stale (ignored, R-HASH
// decides), the old one keeps them bound, so the integrity rejection paths
// stay fuzzed too. Inputs it
// cannot decode (or whose mutant would exceed max_size) fall back to
// LLVMFuzzerMutate.
//
// replay_main.cpp runs this mutator too (a few seeds per corpus file), so
// the ctest replay covers it in every build.
#include "traverse.hpp"

#include <optional>

#include <untold/compression.hpp>
#include <untold/content_hash.hpp>
#include <untold/integrity.hpp>
#include <untold/integrity_writer.hpp>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using untold::chunk_entry;
using untold::compression;
using bytes = std::vector<std::byte>;

struct decoded_file {
  untold::file_header header;
  std::vector<chunk_entry> chunks;
  std::vector<bytes> payloads;  // decompressed
};

/// Small deterministic generator (the mutator's seed comes from libFuzzer).
class random_source {
 public:
  explicit random_source(unsigned seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  std::size_t below(std::size_t bound) { return bound == 0 ? 0 : static_cast<std::size_t>(next() % bound); }

 private:
  std::uint64_t state_;
};

/// The options files are decoded with (verifying nothing) and rebuilt
/// mutants are checked with (integrity::full).
untold::open_options mutant_options(untold::integrity verify) {
  untold::open_options options{.integrity = verify, .relaxed_header_size = true};
  options.limits.max_total_bytes = std::uint64_t{16} << 20;  // what a mutant may carry
  options.limits.max_expansion = ~std::uint32_t{0};
  return options;
}

bool is_digest_rule(untold::errc code) {
  return code == untold::errc::integrity_layout || code == untold::errc::integrity_hash ||
         code == untold::errc::directory_hash || code == untold::errc::block_hash;
}

std::optional<decoded_file> decode(untold::byte_span file) {
  const untold::open_options options = mutant_options(untold::integrity::none);
  auto header = untold::parse_header(file, options);
  if (!header) return std::nullopt;
  auto chunks = untold::parse_chunk_table(*header, file, file.size(), options);
  if (!chunks) return std::nullopt;
  decoded_file d{*header, std::move(*chunks), {}};
  for (const chunk_entry& c : d.chunks) {
    const untold::byte_span stored = untold::subspan(file, {c.file_offset, c.compressed_size});
    bytes& payload = d.payloads.emplace_back();
    if (!untold::decompress_into(static_cast<compression>(c.compression_type), stored, c.uncompressed_size, payload))
      return std::nullopt;
  }
  return d;
}

/// The row of the integrity chunk the mutator can rebuild (the file's only
/// one, stored uncompressed as the writer stores it), or none.
std::uint32_t rebuildable_integrity_row(const decoded_file& d) {
  const auto row = untold::find_integrity_chunk(d.chunks);
  if (!row || *row == untold::none) return untold::none;
  return d.chunks[*row].compression_type == static_cast<std::uint32_t>(compression::none) ? *row : untold::none;
}

/// The file for `d`: header, table, then every chunk recompressed with its
/// own method, in its old file order, 16-byte aligned; the integrity chunk
/// rebuilt for the new stored bytes and bound to the new content hash when
/// `integrity_row` is not none (rebuildable_integrity_row), kept as decoded
/// otherwise; hashed if it was, unless `keep_hash` keeps the old hash (with
/// kept digests: those stay bound to it, so the digest rules judge the
/// mutant; with a new hash they are stale, ignored, and R-HASH judges it).
std::optional<bytes> encode(decoded_file d, std::uint32_t integrity_row, bool keep_hash) {
  const std::size_t n = d.chunks.size();
  std::uint32_t block_size = 0;
  if (integrity_row != untold::none) {
    // Its own block size; the writer's default when the chunk no longer
    // parses (a broken one that an earlier mutant left is repaired).
    const auto old = untold::parse_integrity_chunk(d.payloads[integrity_row], d.chunks, integrity_row);
    block_size = old ? old->block_size : untold::default_digest_block_size;
  }
  std::vector<bytes> stored(n);
  for (std::uint32_t row = 0; row < n; ++row) {
    if (row == integrity_row) continue;  // its size follows from the others' stored sizes
    auto packed = untold::compress(static_cast<compression>(d.chunks[row].compression_type), 0, d.payloads[row]);
    if (!packed) return std::nullopt;
    stored[row] = std::move(*packed);
    d.chunks[row].compressed_size = stored[row].size();
    d.chunks[row].uncompressed_size = d.payloads[row].size();
  }
  if (integrity_row != untold::none)
    d.chunks[integrity_row].compressed_size = d.chunks[integrity_row].uncompressed_size =
        untold::integrity_chunk_size(d.chunks, integrity_row, block_size);
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return d.chunks[a].file_offset < d.chunks[b].file_offset; });
  const std::size_t directory_size = untold::header_size + n * untold::chunk_entry_size;  // header and table
  std::uint64_t size = directory_size;  // the file's, once laid out
  for (const std::uint32_t row : order) {
    size = (size + untold::chunk_alignment - 1) / untold::chunk_alignment * untold::chunk_alignment;
    d.chunks[row].file_offset = size;
    size += d.chunks[row].compressed_size;
  }
  bytes out(static_cast<std::size_t>(size));
  const untold::mutable_byte_span directory = untold::mutable_byte_span(out).first(directory_size);
  untold::codec<untold::file_header>::encode(d.header, directory);  // the contentHash is patched in below
  for (std::size_t row = 0; row < n; ++row)
    untold::codec<chunk_entry>::encode(d.chunks[row],
                                       directory.subspan(untold::header_size + row * untold::chunk_entry_size));
  const bool hashed = untold::is_hashed(d.header);
  if (integrity_row != untold::none) {  // the writer's encoder, called as tools/pipeline/recompress.cpp calls it
    auto sealed = untold::seal_integrity_chunk(directory, d.chunks, integrity_row, block_size, hashed,
                                               [&](std::uint32_t row) { return untold::byte_span(stored[row]); });
    if (!sealed || sealed->chunk.size() != d.chunks[integrity_row].compressed_size)
      untold_fuzz::die("mutator could not rebuild the integrity chunk");
    stored[integrity_row] = std::move(sealed->chunk);
    d.header.content_hash = sealed->content_hash;  // zero for an unhashed file
    keep_hash = false;
  }
  for (std::size_t row = 0; row < n; ++row)
    if (!stored[row].empty())
      std::memcpy(out.data() + d.chunks[row].file_offset, stored[row].data(), stored[row].size());
  if (hashed && !keep_hash && integrity_row == untold::none) {
    auto digest = untold::compute_content_hash(d.chunks, untold::byte_span(out));
    if (!digest) return std::nullopt;
    d.header.content_hash = *digest;
  }
  untold::codec<untold::file_header>::encode(d.header, out);
  // The whole point: a mutant of a hashed file keeps a valid hash, and one
  // with rebuilt digests passes every digest check.
  if (!keep_hash && !untold::verify_content_hash(d.header, d.chunks, out))
    untold_fuzz::die("mutator wrote a wrong content hash");
  if (integrity_row != untold::none) {
    const auto reopened = untold::open(out, mutant_options(untold::integrity::full));
    if (!reopened && is_digest_rule(reopened.error().code))
      untold_fuzz::die("mutator wrote wrong block digests: " + reopened.error().describe());
  }
  return out;
}

/// A value for a 32-bit word that probes a rule.
std::uint32_t interesting(random_source& rng, std::uint32_t old, const decoded_file& d) {
  const std::uint32_t table_size =
      d.chunks.empty() ? 0 : d.chunks[rng.below(d.chunks.size())].element_count;
  switch (rng.below(14)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return untold::none;
    case 3: return old + 1;
    case 4: return old - 1;
    case 5: return table_size;
    case 6: return table_size - 1;
    case 7: return table_size + 1;
    case 8: return 0x7FC00000u;  // NaN
    case 9: return 0x7F800000u;  // +inf
    case 10: return 0xFF800000u;  // -inf
    case 11: return 0x7149F2CAu;  // 1e30
    case 12: return old ^ (1u << rng.below(32));
    default: return static_cast<std::uint32_t>(rng.below(64));
  }
}

/// Changes one thing in `d`; returns the row of the payload it changed
/// (none: the header, or nothing).
std::uint32_t mutate(decoded_file& d, random_source& rng) {
  std::vector<std::uint32_t> tables, data;
  for (std::uint32_t row = 0; row < d.chunks.size(); ++row) {
    const std::uint32_t record_size = untold::record_size_of_chunk(d.chunks[row].chunk_type, d.header.format_version);
    if (record_size != 0 && d.payloads[row].size() >= record_size) tables.push_back(row);
    else if (record_size == 0 && d.payloads[row].size() >= 4) data.push_back(row);
  }
  const std::size_t kind = rng.below(10);
  if (kind < 5 && !tables.empty()) {  // a record field
    const std::uint32_t row = tables[rng.below(tables.size())];
    const std::size_t record_size = untold::record_size_of_chunk(d.chunks[row].chunk_type, d.header.format_version);
    const std::size_t at = rng.below(d.payloads[row].size() / record_size) * record_size + rng.below(record_size / 4) * 4;
    std::byte* p = d.payloads[row].data() + at;
    untold::store_le_unchecked<std::uint32_t>(p, interesting(rng, untold::load_le_unchecked<std::uint32_t>(p), d));
    return row;
  } else if (kind < 7 && !data.empty()) {  // a data element, 16 or 32 bits
    const std::uint32_t row = data[rng.below(data.size())];
    bytes& payload = d.payloads[row];
    if (rng.below(2) == 0) {
      std::byte* p = payload.data() + rng.below(payload.size() / 2) * 2;
      untold::store_le_unchecked<std::uint16_t>(
          p, static_cast<std::uint16_t>(interesting(rng, untold::load_le_unchecked<std::uint16_t>(p), d)));
    } else {
      std::byte* p = payload.data() + rng.below(payload.size() / 4) * 4;
      untold::store_le_unchecked<std::uint32_t>(p, interesting(rng, untold::load_le_unchecked<std::uint32_t>(p), d));
    }
    return row;
  } else if (kind == 7) {  // a header word (the hash is recomputed after)
    std::array<std::byte, untold::header_size> h{};
    untold::codec<untold::file_header>::encode(d.header, h);
    std::byte* p = h.data() + 8 + rng.below((untold::header_size - 8) / 4) * 4;
    untold::store_le_unchecked<std::uint32_t>(p, interesting(rng, untold::load_le_unchecked<std::uint32_t>(p), d));
    d.header = untold::codec<untold::file_header>::decode(h);
  } else if (kind == 8 && !tables.empty()) {  // one record over another
    const std::uint32_t row = tables[rng.below(tables.size())];
    const std::size_t record_size = untold::record_size_of_chunk(d.chunks[row].chunk_type, d.header.format_version);
    const std::size_t count = d.payloads[row].size() / record_size;
    std::byte* base = d.payloads[row].data();
    std::memmove(base + rng.below(count) * record_size, base + rng.below(count) * record_size, record_size);
    return row;
  } else if (!d.payloads.empty()) {  // libFuzzer's byte mutations, inside one decoded payload
    const auto row = static_cast<std::uint32_t>(rng.below(d.payloads.size()));
    bytes& payload = d.payloads[row];
    if (payload.empty()) return untold::none;
    const std::size_t size = payload.size();
    payload.resize(size * 2);
    const std::size_t produced = LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(payload.data()), size, payload.size());
    payload.resize(std::max(produced, size), std::byte{0});
    payload.resize(size);  // keep R-TABLE-SIZE: this mutator changes values, not sizes
    return row;
  }
  return untold::none;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  random_source rng(seed);
  auto decoded = decode(untold_fuzz::as_span(data, size));
  if (decoded) {
    // One to three changes per mutant. The digests are rebuilt unless they
    // stay stale on purpose (one mutant in 16, or a change to the integrity
    // chunk itself, which the rebuild would undo); half of those keep the
    // old content hash too (encode).
    const std::uint32_t integrity_row = rebuildable_integrity_row(*decoded);
    bool stale = rng.below(16) == 0;
    for (std::size_t n = 1 + rng.below(3); n > 0; --n) {
      const std::uint32_t changed = mutate(*decoded, rng);
      stale = stale || (changed != untold::none && changed == integrity_row);
    }
    const bool keep_hash = stale && rng.below(2) == 0;
    const auto file = encode(std::move(*decoded), stale ? untold::none : integrity_row, keep_hash);
    if (file && file->size() <= max_size) {
      if (!file->empty()) std::memcpy(data, file->data(), file->size());
      return file->size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  untold_fuzz::check_open(untold_fuzz::as_span(data, size));
  return 0;
}
