// fuzz_structured: fuzz_open's properties (untold_fuzz::check_open), reached
// through a structure-aware mutator. Byte mutations of a .untold file almost
// always break the content hash, a compressed stream or a table rule first,
// so they rarely reach the record rules and the deep checks behind them.
// LLVMFuzzerCustomMutator below decodes the file (header, chunk table, every
// chunk decompressed), changes one thing in the decoded data:
//   - one 32-bit field of one record of a record table (core or extension),
//   - one 16- or 32-bit element of a data chunk (indices, positions, joints),
//   - one 32-bit word of the header,
//   - one record copied over another (duplicates: ids, ranges),
//   - one payload handed to libFuzzer's own byte mutator (size kept),
// to a value chosen to probe a rule (0, 1, NONE, a table's size and its
// neighbours, the old value +-1, NaN, +-inf, huge), then re-encodes it:
// every chunk compressed again with its own method, chunks laid out again
// (16-byte aligned, in their old order), and the content hash recomputed
// when the file had one. Mutants therefore pass R-HASH and R-DECOMPRESS and
// exercise the rules behind them. Inputs it cannot decode (or whose mutant
// would exceed max_size) fall back to LLVMFuzzerMutate.
//
// replay_main.cpp runs this mutator too (a few seeds per corpus file), so
// the ctest replay covers it in every build.
#include "traverse.hpp"

#include <optional>

#include <untold/compression.hpp>
#include <untold/content_hash.hpp>

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

std::optional<decoded_file> decode(untold::byte_span file) {
  untold::open_options options{.verify_hash = false, .relaxed_header_size = true};
  options.limits.max_total_bytes = std::uint64_t{16} << 20;  // what a mutant may carry
  options.limits.max_expansion = ~std::uint32_t{0};
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

/// The file for `d`: header, table, then every chunk recompressed with its
/// own method, in its old file order, 16-byte aligned; hashed if it was.
std::optional<bytes> encode(decoded_file d) {
  const std::size_t n = d.chunks.size();
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return d.chunks[a].file_offset < d.chunks[b].file_offset; });
  bytes out(untold::header_size + n * untold::chunk_entry_size);
  for (const std::uint32_t row : order) {
    chunk_entry& c = d.chunks[row];
    const auto method = static_cast<compression>(c.compression_type);
    auto stored = untold::compress(method, 0, d.payloads[row]);
    if (!stored) return std::nullopt;
    out.resize((out.size() + untold::chunk_alignment - 1) / untold::chunk_alignment * untold::chunk_alignment);
    c.file_offset = out.size();
    c.compressed_size = stored->size();
    c.uncompressed_size = d.payloads[row].size();
    out.insert(out.end(), stored->begin(), stored->end());
  }
  for (std::size_t row = 0; row < n; ++row)
    untold::codec<chunk_entry>::encode(
        d.chunks[row], untold::mutable_byte_span(out).subspan(untold::header_size + row * untold::chunk_entry_size));
  if (untold::is_hashed(d.header)) {
    auto digest = untold::compute_content_hash(d.chunks, untold::byte_span(out));
    if (!digest) return std::nullopt;
    d.header.content_hash = *digest;
  }
  untold::codec<untold::file_header>::encode(d.header, out);
  // The whole point: a mutant of a hashed file keeps a valid hash.
  if (!untold::verify_content_hash(d.header, d.chunks, out)) untold_fuzz::die("mutator wrote a wrong content hash");
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

void mutate(decoded_file& d, random_source& rng) {
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
  } else if (kind < 7 && !data.empty()) {  // a data element, 16 or 32 bits
    bytes& payload = d.payloads[data[rng.below(data.size())]];
    if (rng.below(2) == 0) {
      std::byte* p = payload.data() + rng.below(payload.size() / 2) * 2;
      untold::store_le_unchecked<std::uint16_t>(
          p, static_cast<std::uint16_t>(interesting(rng, untold::load_le_unchecked<std::uint16_t>(p), d)));
    } else {
      std::byte* p = payload.data() + rng.below(payload.size() / 4) * 4;
      untold::store_le_unchecked<std::uint32_t>(p, interesting(rng, untold::load_le_unchecked<std::uint32_t>(p), d));
    }
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
  } else if (!d.payloads.empty()) {  // libFuzzer's byte mutations, inside one decoded payload
    bytes& payload = d.payloads[rng.below(d.payloads.size())];
    if (payload.empty()) return;
    const std::size_t size = payload.size();
    payload.resize(size * 2);
    const std::size_t produced = LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(payload.data()), size, payload.size());
    payload.resize(std::max(produced, size), std::byte{0});
    payload.resize(size);  // keep R-TABLE-SIZE: this mutator changes values, not sizes
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  random_source rng(seed);
  auto decoded = decode(untold_fuzz::as_span(data, size));
  if (decoded) {
    // One to three changes per mutant.
    for (std::size_t n = 1 + rng.below(3); n > 0; --n) mutate(*decoded, rng);
    const auto file = encode(std::move(*decoded));
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
