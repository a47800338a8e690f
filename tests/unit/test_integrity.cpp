// Integrity: compressed chunks through the reader and writer, the content
// hash checked against an independent SHA-256 of the chunk bytes, and the
// block digests of the untold.integrity chunk (integrity.hpp).
#include "../support.hpp"

#include <openssl/sha.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <untold/ranges.hpp>

using test::bytes;

namespace {

// Every chunk kind compressed with one codec: the file must open, deep checks
// included, and expose exactly the payloads of the uncompressed file.
void check_round_trip(untold::chunk_compression codec) {
  untold::write_options packed_options;
  packed_options.compression.metadata = codec;
  packed_options.compression.data = codec;
  const bytes plain = test::write_scene(true);
  const bytes packed = test::write_scene(true, packed_options);
  auto a = untold::open(plain);
  auto b = untold::open(packed, {.deep_checks = true});
  REQUIRE_MESSAGE(b.has_value(), b.error().describe());
  REQUIRE(a->chunks().size() == b->chunks().size());
  std::size_t compressed_chunks = 0;
  for (std::size_t row = 0; row < a->chunks().size(); ++row) {
    CAPTURE(row);
    const auto& c = b->chunks()[row];
    if (c.compression_type != 0) {
      ++compressed_chunks;
      CHECK(c.compression_type == static_cast<std::uint32_t>(codec.method));
      CHECK(c.compressed_size < c.uncompressed_size);  // kept only when smaller
    }
    const auto pa = a->payload(row), pb = b->payload(row);
    if (c.chunk_type == untold::integrity_chunk_type) {  // written by default; digests of the stored bytes
      CHECK(c.compression_type == 0);
      CHECK(untold::verify_all(*b).has_value());
      continue;
    }
    CHECK(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()));
  }
  if (packed_options.writes_block_digests()) CHECK(b->chunks()[0].chunk_type == untold::integrity_chunk_type);
  CHECK(compressed_chunks >= 5);  // every chunk that compresses at all
  CHECK(packed.size() < plain.size() / 2);
}

}  // namespace

TEST_CASE("compressed round trip: every chunk kind with lz4, lz4hc and zstd") {
  SUBCASE("lz4") { check_round_trip({untold::compression::lz4, 0}); }
  SUBCASE("lz4hc") { check_round_trip({untold::compression::lz4, 9}); }
  SUBCASE("zstd") { check_round_trip({untold::compression::zstd, 3}); }
  SUBCASE("zstd 19") { check_round_trip({untold::compression::zstd, 19}); }
}

TEST_CASE("a chunk that does not shrink is stored uncompressed") {
  untold::builder b;
  bytes noise(4096);
  std::uint32_t x = 12345;
  for (auto& byte : noise) {
    x = x * 1664525u + 1013904223u;
    byte = std::byte(x >> 24);
  }
  b.add_plugin_chunk("com.example.noise", 1, 1, noise);  // type 0x8000
  untold::write_options options;
  options.compression.metadata = {untold::compression::zstd, 3};
  auto f = b.finish(options);
  REQUIRE(f.has_value());
  auto a = untold::open(*f);
  REQUIRE(a.has_value());
  const auto row = a->raw_chunks().at(0);
  CHECK(a->chunks()[row].compression_type == 0);
}

TEST_CASE("per-type overrides win over the chunk-kind policy") {
  untold::write_options options;
  options.compression.data = {untold::compression::lz4, 0};
  options.compression.overrides[7] = untold::chunk_compression{untold::compression::zstd, 1};
  const bytes f = test::write_scene(false, options);
  auto a = untold::open(f);
  REQUIRE(a.has_value());
  CHECK(a->chunks()[*a->find_chunk(untold::chunk_type::vertex_data)].compression_type == 1);
  CHECK(a->chunks()[*a->find_chunk(untold::chunk_type::index_data)].compression_type == 2);
  CHECK(a->chunks()[*a->find_chunk(untold::chunk_type::string_table)].compression_type == 0);
}

TEST_CASE("contentHash equals an independent SHA-256 of the stored chunk bytes in type order") {
  untold::write_options options;
  options.compression.data = {untold::compression::zstd, 3};
  options.block_digests = false;  // the reordered table below would fail R-DIRECTORY-HASH first
  bytes f = test::write_scene(true, options);
  // Reorder the table so table order differs from type order: swap rows 0 and 5.
  std::vector<std::array<std::byte, 40>> rows(test::get_u32(f, 24));
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(f.begin() + static_cast<std::ptrdiff_t>(204 + 40 * i), 40, rows[i].begin());
  std::swap(rows[0], rows[5]);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), f.begin() + static_cast<std::ptrdiff_t>(204 + 40 * i));

  // Independent: collect (type, row, offset, size) from the raw table, sort by
  // type, hash with OpenSSL's one-shot SHA256.
  struct entry {
    std::uint32_t type;
    std::size_t row;
    std::uint64_t offset, size;
  };
  std::vector<entry> entries;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t at = 204 + 40 * i;
    entries.push_back({test::get_u32(f, at), i, test::get_u64(f, at + 8), test::get_u64(f, at + 16)});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) { return a.type < b.type; });
  std::vector<unsigned char> concatenated;
  for (const entry& e : entries)
    for (std::uint64_t i = 0; i < e.size; ++i) concatenated.push_back(static_cast<unsigned char>(f[e.offset + i]));
  unsigned char expected[32];
  SHA256(concatenated.data(), concatenated.size(), expected);
  for (int i = 0; i < 32; ++i) CHECK(static_cast<unsigned char>(f[140 + i]) == expected[i]);

  CHECK(test::rejection(f) == "accepted");  // table order does not matter
}

TEST_CASE("an all-zero contentHash means not hashed, hashing can be turned off") {
  bytes f = test::write_scene(false);
  for (std::size_t i = 140; i < 172; ++i) CHECK(f[i] == std::byte{0});
  f[test::chunk_payload_offset(f, 6) + 1] ^= std::byte{1};
  CHECK(test::rejection(f) == "accepted");
}

// ---- block digests: the untold.integrity chunk (integrity.hpp) ------------------------

namespace {

// The scene with block digests; lz4 data chunks when `compressed`. No
// contentHash, so that R-HASH never decides a test about the block digests.
bytes digest_scene(bool compressed = false, bool content_hash = false) {
  untold::write_options options;
  options.block_digests = true;
  if (compressed) options.compression.data = {untold::compression::lz4, 0};
  return test::write_scene(content_hash, options);
}

std::string rule_of(const untold::error& e) { return std::string(e.rule_id()); }

// Where the parts of the integrity chunk are, from the raw bytes, in the
// layout of its version: 3 (the writer's) or the older 2 and 1.
struct integrity_layout {
  std::size_t row = 0, payload = 0, body = 0, rows = 0, top_digest = 0, blocks = 0, binding = 0, end = 0;
  std::uint32_t version = 0, block_size = 0, chunk_count = 0, digest_count = 0;
  // What the top digest covers: [payload, top_end) and [top_rest, top_digest).
  [[nodiscard]] std::size_t top_end() const { return version == 3 ? blocks : top_digest; }
  [[nodiscard]] std::size_t top_rest() const { return version == 3 ? rows : top_digest; }
};
integrity_layout locate(const bytes& f) {
  integrity_layout l;
  l.row = test::chunk_row(f, untold::integrity_chunk_type);
  l.payload = static_cast<std::size_t>(test::get_u64(f, test::chunk_row_offset(l.row) + 8));
  l.end = l.payload + static_cast<std::size_t>(test::get_u64(f, test::chunk_row_offset(l.row) + 16));
  l.version = test::get_u32(f, l.payload + 12);
  l.body = l.payload + 16 + untold::integrity_plugin_id.size();
  l.block_size = test::get_u32(f, l.body);
  l.chunk_count = test::get_u32(f, l.body + 4);
  l.digest_count = test::get_u32(f, l.body + 8);
  if (l.version == 3) {  // fixed part, directory, blocks, binding, rows, top
    l.blocks = l.body + 48;
    l.binding = l.blocks + 32 * std::size_t{l.digest_count};
    l.rows = l.binding + 40;
    l.top_digest = l.rows + 32 * std::size_t{l.chunk_count};
  } else {  // fixed part, directory, rows, top, blocks, binding (version 2)
    l.rows = l.body + 48;
    l.top_digest = l.rows + 32 * std::size_t{l.chunk_count};
    l.blocks = l.top_digest + 32;
    l.binding = l.blocks + 32 * std::size_t{l.digest_count};
  }
  return l;
}

// The stored bytes of every chunk, in content-hash order (spec 5), and the
// length of those before the integrity chunk.
bytes content_message(const bytes& f, std::uint64_t* prefix = nullptr) {
  const std::uint32_t count = test::get_u32(f, 24);
  std::vector<std::pair<std::uint32_t, std::size_t>> by_type;
  for (std::size_t row = 0; row < count; ++row) by_type.push_back({test::get_u32(f, test::chunk_row_offset(row)), row});
  std::stable_sort(by_type.begin(), by_type.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  bytes message;
  if (prefix != nullptr) *prefix = 0;
  for (const auto& [type, row] : by_type) {
    const std::uint64_t size = test::get_u64(f, test::chunk_row_offset(row) + 16);
    if (type < untold::integrity_chunk_type && prefix != nullptr) *prefix += size;
    const std::uint64_t offset = test::get_u64(f, test::chunk_row_offset(row) + 8);
    message.insert(message.end(), f.begin() + static_cast<std::ptrdiff_t>(offset),
                   f.begin() + static_cast<std::ptrdiff_t>(offset + size));
  }
  return message;
}

// Every digest of `f`'s integrity chunk recomputed in place from the bytes
// as they are now - directory, blocks, rows, top - in the chunk's own
// layout; the binding and the contentHash are left as they are.
void redigest(bytes& f) {
  const integrity_layout l = locate(f);
  const auto put = [&](std::size_t at, const untold::result<untold::sha256_digest>& d) {
    REQUIRE(d.has_value());
    std::memcpy(f.data() + at, d->data(), 32);
  };
  put(l.body + 16, untold::directory_digest(untold::byte_span(f).first(204 + 40 * std::size_t{l.chunk_count})));
  std::size_t digest = 0;
  for (std::size_t row = 0; row < l.chunk_count; ++row) {
    const std::size_t first = digest;
    const std::uint64_t offset = test::get_u64(f, test::chunk_row_offset(row) + 8);
    const std::uint64_t size = test::get_u64(f, test::chunk_row_offset(row) + 16);
    if (row != l.row)
      for (std::uint64_t at = 0; at < size; at += l.block_size, ++digest)
        put(l.blocks + 32 * digest, untold::sha256_of(untold::byte_span(f).subspan(
                                        static_cast<std::size_t>(offset + at),
                                        static_cast<std::size_t>(std::min<std::uint64_t>(l.block_size, size - at)))));
    put(l.rows + 32 * row, untold::sha256_of(untold::byte_span(f).subspan(l.blocks + 32 * first, 32 * (digest - first))));
  }
  REQUIRE(digest == l.digest_count);
  untold::sha256 top;
  top.update(untold::byte_span(f).subspan(l.payload, l.top_end() - l.payload));
  top.update(untold::byte_span(f).subspan(l.top_rest(), l.top_digest - l.top_rest()));
  put(l.top_digest, top.finish());
}

// `f`'s contentHash recomputed over its stored bytes (spec 5, by OpenSSL).
void rehash(bytes& f) {
  const bytes message = content_message(f);
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(),
         reinterpret_cast<unsigned char*>(f.data() + 140));
}

// The binding of `f`'s integrity chunk recomputed: contentPrefixLength and
// the contentHash computation's state before it, by the plain SHA-256.
void rebind(bytes& f) {
  const integrity_layout l = locate(f);
  std::uint64_t prefix = 0;
  const bytes before = content_message(f, &prefix);
  test::put_u64(f, l.binding, prefix);
  untold::sha256_portable plain;
  plain.update(untold::byte_span(before).first(static_cast<std::size_t>(prefix) + (l.binding - l.payload)));
  const untold::sha256_midstate state = plain.midstate();
  for (std::size_t i = 0; i < 32; ++i)
    f[l.binding + 8 + i] = static_cast<std::byte>(state.words[i / 4] >> (24 - 8 * (i % 4)));
}

bool equals_sha256(const bytes& f, std::size_t at, const unsigned char* data, std::size_t size) {
  unsigned char expected[32];
  SHA256(data, size, expected);
  return std::memcmp(f.data() + at, expected, 32) == 0;
}

// Records every byte range a streamed open asks for.
class recording_source final : public untold::range_source {
 public:
  explicit recording_source(untold::byte_span bytes) : inner_(bytes) {}
  [[nodiscard]] std::uint64_t size() const override { return inner_.size(); }
  [[nodiscard]] untold::status read(std::uint64_t offset, untold::mutable_byte_span out) override {
    reads.push_back({offset, out.size()});
    return inner_.read(offset, out);
  }
  std::vector<untold::byte_range> reads;

 private:
  untold::memory_range_source inner_;
};

// A copy of `file` in anonymous memory in which every page lying wholly
// inside `chunk` (at least 16 pages, or the test fails) is PROT_NONE: code run
// on span() that read one of them would crash the test, so code that returns
// did not read the chunk. unprotect() makes the pages readable again.
class protected_copy {
 public:
  protected_copy(const bytes& file, const untold::chunk_entry& chunk)
      : mapping_{::mmap(nullptr, file.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                 file.size()} {
    REQUIRE(mapping_.memory != MAP_FAILED);
    std::memcpy(mapping_.memory, file.data(), file.size());
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    first_ = (chunk.file_offset + page - 1) / page * page;
    end_ = (chunk.file_offset + chunk.compressed_size) / page * page;
    REQUIRE(end_ > first_ + 16 * page);
    REQUIRE(::mprotect(data() + first_, end_ - first_, PROT_NONE) == 0);
  }
  [[nodiscard]] untold::byte_span span() const { return {data(), mapping_.size}; }
  void unprotect() { REQUIRE(::mprotect(data() + first_, end_ - first_, PROT_READ) == 0); }

 private:
  struct mapping {  // unmapped even when a REQUIRE in the constructor fails
    mapping(void* m, std::size_t n) : memory(m), size(n) {}
    mapping(const mapping&) = delete;
    mapping& operator=(const mapping&) = delete;
    ~mapping() {
      if (memory != MAP_FAILED) ::munmap(memory, size);
    }
    void* memory;
    std::size_t size;
  };
  [[nodiscard]] std::byte* data() const { return static_cast<std::byte*>(mapping_.memory); }
  mapping mapping_;
  std::size_t first_ = 0, end_ = 0;  // the protected pages, as file offsets
};

}  // namespace

TEST_CASE("block digests: the writer's integrity chunk, checked against OpenSSL") {
  const bytes f = digest_scene();
  const integrity_layout l = locate(f);
  const std::uint32_t count = test::get_u32(f, 24);
  CHECK(l.row == 0);                                          // first row,
  CHECK(l.payload == (204 + 40 * count + 15) / 16 * 16);      // first payload: one prefix read holds it
  CHECK(test::get_u32(f, l.payload) == 0x54584555u);          // the UEXT envelope
  CHECK(test::get_u32(f, l.payload + 8) == 1);                // chunkKind
  CHECK(test::get_u32(f, l.payload + 12) == 3);               // chunkVersion
  CHECK(std::memcmp(f.data() + l.payload + 16, "untold.integrity", 16) == 0);
  CHECK(l.block_size == 65536);
  CHECK(l.chunk_count == count);
  CHECK(test::get_u32(f, l.body + 12) == 0);

  // The directory digest: header without contentHash, then the table.
  std::vector<unsigned char> directory(reinterpret_cast<const unsigned char*>(f.data()),
                                       reinterpret_cast<const unsigned char*>(f.data()) + 204 + 40 * count);
  directory.erase(directory.begin() + 140, directory.begin() + 172);
  CHECK(equals_sha256(f, l.body + 16, directory.data(), directory.size()));

  // Every block of every other chunk, and each row's digest of its block digests.
  std::size_t digest = 0;
  for (std::size_t row = 0; row < count; ++row) {
    CAPTURE(row);
    const std::size_t first = digest;
    const std::uint64_t offset = test::get_u64(f, test::chunk_row_offset(row) + 8);
    const std::uint64_t size = test::get_u64(f, test::chunk_row_offset(row) + 16);
    if (row != l.row)
      for (std::uint64_t at = 0; at < size; at += l.block_size, ++digest)
        CHECK(equals_sha256(f, l.blocks + 32 * digest, reinterpret_cast<const unsigned char*>(f.data() + offset + at),
                            std::min<std::uint64_t>(l.block_size, size - at)));
    CHECK(equals_sha256(f, l.rows + 32 * row, reinterpret_cast<const unsigned char*>(f.data() + l.blocks + 32 * first),
                        32 * (digest - first)));
  }
  CHECK(digest == l.digest_count);
  CHECK(digest > 40);  // the 2.9 MB vertex chunk alone has 44 blocks
  // Then the binding, the row digests and the top digest, the chunk's end.
  CHECK(l.binding == l.blocks + 32 * std::size_t{l.digest_count});
  CHECK(l.top_digest + 32 == l.end);
  bytes top(f.begin() + static_cast<std::ptrdiff_t>(l.payload), f.begin() + static_cast<std::ptrdiff_t>(l.blocks));
  top.insert(top.end(), f.begin() + static_cast<std::ptrdiff_t>(l.rows), f.begin() + static_cast<std::ptrdiff_t>(l.top_digest));
  CHECK(equals_sha256(f, l.top_digest, reinterpret_cast<const unsigned char*>(top.data()), top.size()));
  for (std::size_t i = 0; i < 40; ++i) CHECK(f[l.binding + i] == std::byte{0});  // no contentHash: not bound
  CHECK(test::write_scene(false, {.block_digests = true}) == f);  // deterministic
}

TEST_CASE("block digests: the binding is the contentHash computation's state before it") {
  for (const std::uint32_t late_type : {0u, 0xFFFF0100u}) {  // with a plugin chunk hashed after the integrity chunk
    CAPTURE(late_type);
    untold::builder b;
    std::vector<test::grid> grids;
    test::fill_realistic_scene(b, grids);
    const bytes late(1000, std::byte{9});
    if (late_type != 0) b.add_plugin_chunk("com.example.late", 1, 1, late, late_type);
    const auto written = b.finish();  // default options: contentHash and block digests
    REQUIRE(written.has_value());
    const bytes& f = *written;
    const integrity_layout l = locate(f);
    // The contentHash message (spec 5), rebuilt from the raw table, and its
    // digest by OpenSSL.
    std::uint64_t prefix = 0;  // message bytes before the integrity chunk
    const bytes message = content_message(f, &prefix);
    CHECK(equals_sha256(f, 140, reinterpret_cast<const unsigned char*>(message.data()), message.size()));
    // contentPrefixLength, then the state after the message's whole blocks
    // before it, as the plain implementation (cross-checked against OpenSSL
    // in test_hash.cpp) reaches it.
    CHECK(test::get_u64(f, l.binding) == prefix);
    const std::size_t before_binding = static_cast<std::size_t>(prefix) + (l.binding - l.payload);
    untold::sha256_portable plain;
    plain.update(untold::byte_span(message).first(before_binding));
    const untold::sha256_midstate state = plain.midstate();
    CHECK(state.length == before_binding / 64 * 64);
    for (std::size_t i = 0; i < 32; ++i) {  // eight big-endian words
      CAPTURE(i);
      CHECK(f[l.binding + 8 + i] == static_cast<std::byte>(state.words[i / 4] >> (24 - 8 * (i % 4))));
    }
    auto a = untold::open(f);
    REQUIRE(a.has_value());
    CHECK(a->block_digests() == untold::digest_status::current);
  }
}

TEST_CASE("block digests: round trip, the payloads equal a file without them") {
  for (const bool compressed : {false, true}) {
    CAPTURE(compressed);
    const bytes with = digest_scene(compressed, true);
    untold::write_options plain_options{.block_digests = false};
    if (compressed) plain_options.compression.data = {untold::compression::lz4, 0};
    const bytes without = test::write_scene(true, plain_options);
    auto a = untold::open(with);
    auto b = untold::open(without);
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    REQUIRE(b.has_value());
    CHECK(untold::has_block_digests(*a));
    CHECK_FALSE(untold::has_block_digests(*b));
    REQUIRE(a->chunks().size() == b->chunks().size() + 1);
    for (std::uint32_t row = 1; row < a->chunks().size(); ++row) {  // row 0: the integrity chunk
      const auto pa = a->payload(row), pb = b->payload(row - 1);
      CHECK(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()));
    }
    for (const untold::mesh_record& m : a->meshes()) {
      const auto v = untold::verified_vertices(*a, m);
      const auto i = untold::verified_indices(*a, m);
      const auto e = untold::verified_edge_indices(*a, m);
      REQUIRE(v.has_value());
      REQUIRE(i.has_value());
      REQUIRE(e.has_value());
      CHECK(v->data() == a->vertices(m).data());
      CHECK(v->size() == a->vertices(m).size());
      CHECK(i->size() == a->indices(m).size());
      CHECK(e->size() == a->edge_indices(m).size());
    }
    CHECK(untold::verify_all(*a).has_value());
    CHECK(untold::open(with, {.deep_checks = true, .integrity = untold::integrity::full}).has_value());
    CHECK(untold::open(with, {.integrity = untold::integrity::none}).has_value());
  }
}

TEST_CASE("block digests: a flipped byte in each chunk is found at open or on first access") {
  for (const bool compressed : {false, true}) {
    const bytes good = digest_scene(compressed);
    const std::uint32_t count = test::get_u32(good, 24);
    for (std::uint32_t row = 1; row < count; ++row) {
      const std::uint32_t type = test::get_u32(good, test::chunk_row_offset(row));
      const std::uint32_t compression = test::get_u32(good, test::chunk_row_offset(row) + 4);
      const std::uint64_t offset = test::get_u64(good, test::chunk_row_offset(row) + 8);
      const std::uint64_t size = test::get_u64(good, test::chunk_row_offset(row) + 16);
      if (size == 0) continue;
      CAPTURE(compressed);
      CAPTURE(row);
      CAPTURE(type);
      bytes f = good;
      f[offset + size / 2] ^= std::byte{0x01};
      auto a = untold::open(f);
      const bool read_at_open = untold::is_read_at_open(type) || compression != 0;
      if (read_at_open) {  // metadata and compressed chunks: before they are decoded
        REQUIRE_FALSE(a.has_value());
        CHECK(rule_of(a.error()) == "R-BLOCK-HASH");
        CHECK(a.error().context.chunk_index == row);
        CHECK(a.error().context.value == (size / 2) / 65536);  // the block
      } else {  // uncompressed data: on first access, not at open
        REQUIRE_MESSAGE(a.has_value(), a.error().describe());
        const auto s = untold::verify_chunk(*a, row);
        REQUIRE_FALSE(s.has_value());
        CHECK(rule_of(s.error()) == "R-BLOCK-HASH");
        CHECK(s.error().context.chunk_index == row);
        CHECK_FALSE(untold::verified_payload(*a, row).has_value());
        CHECK_FALSE(untold::verify_all(*a).has_value());
        for (std::uint32_t other = 0; other < count; ++other)  // every other chunk is fine
          if (other != row) CHECK(untold::verify_chunk(*a, other).has_value());
      }
      // integrity::full finds it at open, wherever it is; none never does.
      auto full = untold::open(f, {.integrity = untold::integrity::full});
      REQUIRE_FALSE(full.has_value());
      CHECK(rule_of(full.error()) == "R-BLOCK-HASH");
      if (!read_at_open) CHECK(untold::open(f, {.integrity = untold::integrity::none}).has_value());
      // Byte ranges: open (metadata) or the load of that chunk.
      untold::memory_range_source src(f);
      auto s = untold::streamed_asset::open(src);
      if (untold::is_read_at_open(type)) {
        REQUIRE_FALSE(s.has_value());
        CHECK(rule_of(s.error()) == "R-BLOCK-HASH");
      } else {
        REQUIRE_MESSAGE(s.has_value(), s.error().describe());
        const auto loaded = s->load_chunk(row);
        REQUIRE_FALSE(loaded.has_value());
        CHECK(rule_of(loaded.error()) == "R-BLOCK-HASH");
      }
    }
  }
}

TEST_CASE("block digests: a mesh is verified by its own blocks, by whole-file and range access") {
  const bytes good = digest_scene();
  bytes f = good;
  auto clean = untold::open(good);
  REQUIRE(clean.has_value());
  const auto vertex_row = *clean->find_chunk(untold::chunk_type::vertex_data);
  const std::uint64_t vertex_offset = clean->chunks()[vertex_row].file_offset;
  // "terrain" (90000 vertices, 2.9 MB) and a small mesh whose vertices lie in
  // another block: flip the terrain's last vertex byte.
  std::uint32_t terrain_index = 0, small_index = 0;
  for (std::uint32_t m = 0; m < clean->meshes().size(); ++m) {
    if (clean->meshes()[m].vertex_count == 90000) terrain_index = m;
    if (clean->meshes()[m].vertex_data_offset == 0) small_index = m;
  }
  const untold::mesh_record terrain = clean->meshes()[terrain_index];
  const untold::mesh_record walls = clean->meshes()[small_index];
  REQUIRE(terrain.vertex_data_offset + terrain.vertex_data_size_bytes > 2 * 65536);
  REQUIRE(walls.vertex_data_size_bytes < 65536);
  f[vertex_offset + terrain.vertex_data_offset + terrain.vertex_data_size_bytes - 1] ^= std::byte{0x80};

  auto a = untold::open(f);
  REQUIRE(a.has_value());
  CHECK(untold::verified_vertices(*a, walls).has_value());  // its block is intact
  CHECK(untold::verified_indices(*a, terrain).has_value());
  const auto bad = untold::verified_vertices(*a, terrain);
  REQUIRE_FALSE(bad.has_value());
  CHECK(rule_of(bad.error()) == "R-BLOCK-HASH");
  CHECK(untold::verified_vertices(*a, walls).has_value());  // still: a failure is not remembered as success
  CHECK_FALSE(untold::verified_vertices(*a, terrain).has_value());

  untold::memory_range_source src(f);
  auto s = untold::streamed_asset::open(src);
  REQUIRE(s.has_value());
  CHECK(s->load_mesh(small_index).has_value());
  const auto mesh = s->load_mesh(terrain_index);
  REQUIRE_FALSE(mesh.has_value());
  CHECK(rule_of(mesh.error()) == "R-BLOCK-HASH");
  // Mesh ranges grow to whole blocks so they can be verified.
  CHECK(s->ranges_for_mesh(small_index).front().offset == vertex_offset);
  // A clean file streams with the same bytes as the whole-file open.
  untold::memory_range_source clean_src(good);
  auto t = untold::streamed_asset::open(clean_src);
  REQUIRE(t.has_value());
  for (std::uint32_t m = 0; m < clean->meshes().size(); ++m) {
    CAPTURE(m);
    auto loaded = t->load_mesh(m);
    REQUIRE_MESSAGE(loaded.has_value(), loaded.error().describe());
    const auto v = clean->vertices(clean->meshes()[m]);
    CHECK(std::equal(v.begin(), v.end(), loaded->vertices.begin(), loaded->vertices.end()));
  }
  CHECK(t->load_all().has_value());
}

TEST_CASE("block digests: a corrupted digest table or directory is found at open") {
  const bytes good = digest_scene();
  const integrity_layout l = locate(good);
  SUBCASE("a row digest (the top part): R-INTEGRITY-HASH") {
    bytes f = good;
    f[l.rows + 32 * 3 + 7] ^= std::byte{0x01};
    CHECK(test::rejection(f) == "R-INTEGRITY-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-INTEGRITY-HASH");
  }
  SUBCASE("the top digest itself: R-INTEGRITY-HASH") {
    bytes f = good;
    f[l.top_digest] ^= std::byte{0x01};
    CHECK(test::rejection(f) == "R-INTEGRITY-HASH");
  }
  SUBCASE("a block digest of a metadata chunk: R-INTEGRITY-HASH at open") {
    bytes f = good;
    f[l.blocks + 5] ^= std::byte{0x01};  // row 1's first block (the string table)
    CHECK(test::rejection(f) == "R-INTEGRITY-HASH");
  }
  SUBCASE("a block digest of the vertex data: R-INTEGRITY-HASH on first access, before any block is trusted") {
    bytes f = good;
    auto a = untold::open(good);
    const auto row = *a->find_chunk(untold::chunk_type::vertex_data);
    std::size_t first = 0;
    for (std::uint32_t r = 1; r < row; ++r) first += (a->chunks()[r].compressed_size + 65535) / 65536;
    f[l.blocks + 32 * first + 3] ^= std::byte{0x01};
    auto b = untold::open(f);
    REQUIRE(b.has_value());
    const auto s = untold::verify_chunk(*b, row);
    REQUIRE_FALSE(s.has_value());
    CHECK(rule_of(s.error()) == "R-INTEGRITY-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-INTEGRITY-HASH");
  }
  SUBCASE("a header field contentHash never covered: R-DIRECTORY-HASH") {
    bytes f = good;
    test::put_f32(f, 52, -1000.0f);  // worldBounds.min.x: valid, and not in the contentHash
    CHECK(test::rejection(f) == "R-DIRECTORY-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::none}) == "accepted");
  }
  SUBCASE("a chunk table field: R-DIRECTORY-HASH") {
    bytes f = good;
    test::put_u32(f, test::chunk_row_offset(3) + 36, 7);  // reserved0 of a row
    CHECK(test::rejection(f) == "R-DIRECTORY-HASH");
  }
}

TEST_CASE("R-INTEGRITY-LAYOUT: crafted integrity chunks") {
  const bytes good = digest_scene();
  const integrity_layout l = locate(good);
  const auto layout_field = [](const bytes& f) {
    auto a = untold::open(f);
    REQUIRE_FALSE(a.has_value());
    CHECK(rule_of(a.error()) == "R-INTEGRITY-LAYOUT");
    return std::string(a.error().context.field ? a.error().context.field : "");
  };
  SUBCASE("block size not a power of two") {
    bytes f = good;
    test::put_u32(f, l.body, 65535);
    CHECK(layout_field(f) == "blockSize");
  }
  SUBCASE("block size below 4 KiB") {
    bytes f = good;
    test::put_u32(f, l.body, 2048);
    CHECK(layout_field(f) == "blockSize");
  }
  SUBCASE("chunk count") {
    bytes f = good;
    test::put_u32(f, l.body + 4, l.chunk_count + 1);
    CHECK(layout_field(f) == "chunkCount");
  }
  SUBCASE("digest count") {
    bytes f = good;
    test::put_u32(f, l.body + 8, l.digest_count - 1);
    CHECK(layout_field(f) == "digestCount");
  }
  SUBCASE("reserved") {
    bytes f = good;
    test::put_u32(f, l.body + 12, 1);
    CHECK(layout_field(f) == "reserved");
  }
  SUBCASE("chunk kind and version") {
    bytes f = good;
    test::put_u32(f, l.payload + 8, 2);
    CHECK(layout_field(f) == "chunkKind");
    f = good;
    test::put_u32(f, l.payload + 12, 4);
    CHECK(layout_field(f) == "chunkVersion");
    f = good;  // read as version 1, which has no binding: 40 bytes too many
    test::put_u32(f, l.payload + 12, 1);
    CHECK(layout_field(f) == "size");
  }
  SUBCASE("another plugin id") {
    bytes f = good;
    f[l.payload + 16] = std::byte{'U'};
    CHECK(layout_field(f) == "pluginId");
  }
  SUBCASE("a size the counts do not imply") {
    bytes f = good;  // the table says the chunk is 16 bytes shorter; the padding absorbs it
    test::put_u64(f, test::chunk_row_offset(l.row) + 16, test::get_u64(f, test::chunk_row_offset(l.row) + 16) - 16);
    test::put_u64(f, test::chunk_row_offset(l.row) + 24, test::get_u64(f, test::chunk_row_offset(l.row) + 24) - 16);
    CHECK(layout_field(f) == "size");
  }
  SUBCASE("two integrity chunks") {
    untold::builder b;
    std::vector<test::grid> grids;
    test::fill_realistic_scene(b, grids);
    const bytes noise(64, std::byte{7});
    b.add_plugin_chunk("com.example.noise", 1, 1, noise, 0x9000);
    auto built = b.finish({.content_hash = false, .block_digests = true});
    REQUIRE(built.has_value());
    bytes f = *built;
    test::put_u32(f, test::chunk_row_offset(test::chunk_row(f, 0x9000)), untold::integrity_chunk_type);
    CHECK(layout_field(f) == "chunkType");
  }
  SUBCASE("a broken envelope stays R-EXT-RANGES") {
    bytes f = good;
    test::put_u32(f, l.payload, 0);
    CHECK(test::rejection(f) == "R-EXT-RANGES");
  }
  SUBCASE("with integrity::none the chunk is an opaque plugin chunk") {
    bytes f = good;
    test::put_u32(f, l.body, 65535);
    CHECK(test::rejection(f, {.integrity = untold::integrity::none}) == "accepted");
    CHECK(test::rejection(f, {.verify_hash = false}) == "accepted");
  }
}

TEST_CASE("block digests: files without them keep the full contentHash check by default") {
  bytes f = test::write_scene(true, {.block_digests = false});
  f[test::chunk_payload_offset(f, 6) + 1000] ^= std::byte{1};  // a vertex byte
  CHECK(test::rejection(f) == "R-HASH");
  CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-HASH");
  CHECK(test::rejection(f, {.integrity = untold::integrity::none}) == "accepted");
  auto a = untold::open(f, {.integrity = untold::integrity::none});
  REQUIRE(a.has_value());
  CHECK_FALSE(untold::has_block_digests(*a));
  CHECK(untold::verify_all(*a).has_value());  // nothing to check: the caller chose none
  // With both, full checks every block (the contentHash commits to them),
  // strict the contentHash too, first.
  bytes g = digest_scene(false, true);
  g[test::chunk_payload_offset(g, 6) + 1000] ^= std::byte{1};
  CHECK(test::rejection(g) == "accepted");  // the vertex block waits for first access
  CHECK(test::rejection(g, {.integrity = untold::integrity::full}) == "R-BLOCK-HASH");
  CHECK(test::rejection(g, {.integrity = untold::integrity::strict}) == "R-HASH");
  // The contentHash field itself, which no block covers: the digests are
  // bound to the old one, stale now, so lazy checks the contentHash too.
  g = digest_scene(false, true);
  g[150] ^= std::byte{1};
  CHECK(test::rejection(g) == "R-HASH");
  CHECK(test::rejection(g, {.integrity = untold::integrity::full}) == "R-HASH");
}

TEST_CASE("block digests: the lazy default reads no geometry at open") {
  const bytes f = digest_scene();
  auto reference = untold::open(f);
  REQUIRE(reference.has_value());
  const untold::chunk_entry vertex = reference->chunks()[*reference->find_chunk(untold::chunk_type::vertex_data)];
  const untold::chunk_entry index = reference->chunks()[*reference->find_chunk(untold::chunk_type::index_data)];

  SUBCASE("byte ranges: the open reads no vertex or index byte") {
    recording_source src(f);
    auto s = untold::streamed_asset::open(src, {.initial_read = 0});
    REQUIRE(s.has_value());
    for (const untold::byte_range& r : src.reads) {
      CAPTURE(r.offset);
      CHECK((r.end() <= vertex.file_offset || r.offset >= vertex.file_offset + vertex.compressed_size));
      CHECK((r.end() <= index.file_offset || r.offset >= index.file_offset + index.compressed_size));
    }
    CHECK(s->bytes_read() <= vertex.file_offset);
  }
  SUBCASE("whole file: geometry pages made unreadable do not stop the open") {
    // The open would crash if it touched a page wholly inside VERTEX_DATA.
    protected_copy in(f, vertex);
    auto a = untold::open(in.span());
    CHECK(a.has_value());
    CHECK(untold::has_block_digests(*a));
    in.unprotect();
    CHECK(untold::verify_all(*a).has_value());  // and now everything checks out
  }
}

TEST_CASE("block digests: writer options") {
  untold::builder b;
  std::vector<test::grid> grids;
  test::fill_realistic_scene(b, grids);
  auto odd = b.finish({.block_digests = true, .digest_block_size = 5000});
  REQUIRE_FALSE(odd.has_value());
  CHECK(rule_of(odd.error()) == "E-INVALID-ARGUMENT");
  auto small = b.finish({.block_digests = true, .digest_block_size = 4096});
  REQUIRE(small.has_value());
  CHECK(test::get_u32(*small, locate(*small).body) == 4096);
  CHECK(untold::open(*small, {.integrity = untold::integrity::full}).has_value());
  // The integrity chunk is derived data: a caller cannot add one.
  const bytes payload(8, std::byte{0});
  b.add_plugin_chunk("untold.integrity", 1, 1, payload, untold::integrity_chunk_type);
  auto refused = b.finish();
  REQUIRE_FALSE(refused.has_value());
  CHECK(rule_of(refused.error()) == "E-INVALID-ARGUMENT");
}

TEST_CASE("block digests: verified accessors from several threads agree") {
  const bytes good = digest_scene();
  bytes bad = good;
  auto probe = untold::open(good);
  REQUIRE(probe.has_value());
  const auto vertex_row = *probe->find_chunk(untold::chunk_type::vertex_data);
  bad[probe->chunks()[vertex_row].file_offset + 200000] ^= std::byte{0x01};
  const bytes* const files[] = {&good, &bad};
  for (const bytes* f : files) {
    auto a = untold::open(*f);
    REQUIRE(a.has_value());
    std::vector<int> ok(4, -1);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < ok.size(); ++t)
      threads.emplace_back([&, t] { ok[t] = untold::verify_all(*a).has_value() ? 1 : 0; });
    for (std::thread& t : threads) t.join();
    for (const int r : ok) CHECK(r == (f == &good ? 1 : 0));
  }
}

TEST_CASE("default options: block digests written, a flipped vertex byte fails when its block is first accessed") {
  // Everything default: the builder's write_options{} and open_options{}.
  CHECK(untold::write_options{}.writes_block_digests());
  CHECK_FALSE(untold::write_options{.content_hash = false}.writes_block_digests());  // nothing to verify against
  CHECK_FALSE(untold::write_options{.block_digests = false}.writes_block_digests());
  untold::builder b;
  std::vector<test::grid> grids;
  test::fill_realistic_scene(b, grids);
  const auto written = b.finish();
  REQUIRE(written.has_value());
  const bytes& good = *written;
  const integrity_layout l = locate(good);
  CHECK(l.row == 0);
  CHECK(l.block_size == untold::default_digest_block_size);
  CHECK(test::get_u64(good, 140) != 0);  // and the contentHash, as before

  auto clean = untold::open(good);
  REQUIRE(clean.has_value());
  CHECK(untold::has_block_digests(*clean));
  const std::uint32_t vertex_row = *clean->find_chunk(untold::chunk_type::vertex_data);
  const untold::chunk_entry vertex = clean->chunks()[vertex_row];
  // The largest mesh spans many blocks; flip a byte in its third block.
  std::uint32_t big = 0;
  for (std::uint32_t m = 0; m < clean->meshes().size(); ++m)
    if (clean->meshes()[m].vertex_data_size_bytes > clean->meshes()[big].vertex_data_size_bytes) big = m;
  const untold::mesh_record terrain = clean->meshes()[big];
  const std::uint64_t flipped = 2 * 65536 + 123;  // within VERTEX_DATA
  REQUIRE(flipped >= terrain.vertex_data_offset);
  REQUIRE(flipped < terrain.vertex_data_offset + terrain.vertex_data_size_bytes);
  bytes f = good;
  f[vertex.file_offset + flipped] ^= std::byte{0x01};

  // The open succeeds: it did not hash the geometry (integrity::full would
  // have failed it by the block, strict by the contentHash, which it checks
  // first).
  auto a = untold::open(f);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  CHECK(rule_of(untold::open(f, {.integrity = untold::integrity::full}).error()) == "R-BLOCK-HASH");
  CHECK(rule_of(untold::open(f, {.integrity = untold::integrity::strict}).error()) == "R-HASH");
  // Ranges around it verify; the flipped block does not, and the error names
  // the chunk row, its type and the block.
  CHECK(untold::verify_range(*a, vertex_row, 0, 2 * 65536).has_value());
  CHECK(untold::verify_range(*a, vertex_row, 3 * 65536, 65536).has_value());
  const auto bad = untold::verify_range(*a, vertex_row, flipped, 1);
  REQUIRE_FALSE(bad.has_value());
  CHECK(rule_of(bad.error()) == "R-BLOCK-HASH");
  CHECK(bad.error().context.chunk_index == vertex_row);
  CHECK(bad.error().context.chunk_type == static_cast<std::uint32_t>(untold::chunk_type::vertex_data));
  CHECK(bad.error().context.value == 2);
  const auto mesh = untold::verified_vertices(*a, terrain);
  REQUIRE_FALSE(mesh.has_value());
  CHECK(mesh.error().context.value == 2);
  // Meshes whose vertices lie in other blocks are served.
  for (const untold::mesh_record& m : a->meshes()) {
    const std::uint64_t first = m.vertex_data_offset / 65536;
    const std::uint64_t last = (m.vertex_data_offset + m.vertex_data_size_bytes + 65535) / 65536;
    if (m.vertex_data_size_bytes != 0 && (last <= 2 || first > 2)) CHECK(untold::verified_vertices(*a, m).has_value());
  }
  CHECK(untold::verified_indices(*a, terrain).has_value());  // another chunk

  // The intact file: every verified access passes, and the open itself never
  // read the geometry (its pages are PROT_NONE during the open).
  protected_copy in(good, vertex);
  auto opened = untold::open(in.span());
  CHECK(opened.has_value());
  in.unprotect();
  if (opened) {
    for (const untold::mesh_record& m : opened->meshes()) CHECK(untold::verified_vertices(*opened, m).has_value());
    CHECK(untold::verify_all(*opened).has_value());
  }
}

// ---- stale block digests: files rewritten by tools that do not know the chunk ----------

namespace {

constexpr std::string_view baked_uri = "Textures/baked/wall_albedo.ktx2";

// The rule a streamed open + load_all gives, or "loaded".
std::string streamed_rule(const bytes& f, untold::integrity mode = untold::integrity::lazy) {
  untold::memory_range_source src(f);
  untold::stream_options options;
  options.open.integrity = mode;
  auto s = untold::streamed_asset::open(src, options);
  if (!s) return rule_of(s.error());
  const auto all = s->load_all();
  return all ? "loaded" : rule_of(all.error());
}

// `f` (written by the library: a version 3 chunk) with its integrity chunk
// in the layout of an older version, every digest over it recomputed and,
// for a hashed file, bound (version 2) and the contentHash recomputed: what
// the library wrote before. Version 1 has no binding: 40 bytes fewer.
bytes as_version(bytes f, std::uint32_t version) {
  const integrity_layout l = locate(f);
  REQUIRE(l.version == 3);
  const bytes blocks(f.begin() + static_cast<std::ptrdiff_t>(l.blocks),
                     f.begin() + static_cast<std::ptrdiff_t>(l.binding));
  const std::size_t rows_size = 32 * std::size_t{l.chunk_count};
  // Version 2: rows and top digest where the block digests began, then the
  // block digests, then the binding.
  std::fill(f.begin() + static_cast<std::ptrdiff_t>(l.blocks), f.begin() + static_cast<std::ptrdiff_t>(l.end),
            std::byte{0});
  std::copy(blocks.begin(), blocks.end(), f.begin() + static_cast<std::ptrdiff_t>(l.blocks + rows_size + 32));
  test::put_u32(f, l.payload + 12, version);
  if (version == 1) {  // the binding's 40 bytes are padding now
    const std::size_t size_field = test::chunk_row_offset(l.row) + 16;
    test::put_u64(f, size_field, test::get_u64(f, size_field) - 40);
    test::put_u64(f, size_field + 8, test::get_u64(f, size_field + 8) - 40);
  }
  redigest(f);
  const bool hashed = std::any_of(f.begin() + 140, f.begin() + 172, [](std::byte b) { return b != std::byte{0}; });
  if (!hashed) return f;
  if (version == 2) rebind(f);
  rehash(f);
  return f;
}

}  // namespace

TEST_CASE("stale block digests: a chunk-unaware rewrite that recomputes the contentHash opens") {
  const bytes good = test::write_scene(true);  // default options: contentHash and bound block digests
  const bytes f = test::patch_texture_uri(good, baked_uri, true);
  // What the tool did: a longer string table, every later chunk moved, the
  // integrity chunk copied byte for byte, a new contentHash.
  REQUIRE(f.size() > good.size());
  const integrity_layout before = locate(good), after = locate(f);
  CHECK(std::equal(good.begin() + static_cast<std::ptrdiff_t>(before.payload),
                   good.begin() + static_cast<std::ptrdiff_t>(before.binding + 40),
                   f.begin() + static_cast<std::ptrdiff_t>(after.payload)));
  CHECK(test::get_u64(f, test::chunk_row_offset(5) + 8) != test::get_u64(good, test::chunk_row_offset(5) + 8));
  CHECK(std::memcmp(f.data() + 140, good.data() + 140, 32) != 0);

  for (const auto mode : {untold::integrity::lazy, untold::integrity::full}) {
    CAPTURE(static_cast<int>(mode));
    auto a = untold::open(f, {.deep_checks = mode == untold::integrity::full, .integrity = mode});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    CHECK(a->block_digests() == untold::digest_status::stale);
    CHECK_FALSE(untold::has_block_digests(*a));   // ignored: the contentHash was verified instead
    CHECK(untold::verify_all(*a).has_value());    // nothing left to verify
    CHECK(a->string(a->textures()[0].uri_offset) == baked_uri);
    for (const untold::mesh_record& m : a->meshes()) CHECK(untold::verified_vertices(*a, m).has_value());
  }
  CHECK(streamed_rule(f) == "loaded");
  CHECK(streamed_rule(f, untold::integrity::full) == "loaded");
  untold::memory_range_source src(f);
  auto s = untold::streamed_asset::open(src);
  REQUIRE(s.has_value());
  CHECK(s->metadata().block_digests() == untold::digest_status::stale);
  CHECK_FALSE(untold::has_block_digests(s->metadata()));  // range loads are not authenticated
  CHECK(s->load_mesh(0).has_value());
  // The original stays current.
  auto original = untold::open(good);
  REQUIRE(original.has_value());
  CHECK(original->block_digests() == untold::digest_status::current);
  CHECK(untold::open(good, {.integrity = untold::integrity::none})->block_digests() ==
        untold::digest_status::unchecked);
  CHECK(untold::open(test::write_scene(true, {.block_digests = false}))->block_digests() ==
        untold::digest_status::absent);
}

TEST_CASE("stale block digests: never skip verification") {
  const bytes good = test::write_scene(true);
  SUBCASE("the same rewrite without recomputing the contentHash is rejected") {
    const bytes f = test::patch_texture_uri(good, baked_uri, false);
    // The string table grew: the chunk's contentPrefixLength is not this
    // file's, so it is stale, and the old contentHash fails over the whole file.
    CHECK(test::rejection(f) == "R-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-HASH");
    CHECK(streamed_rule(f) == "R-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::none}) == "accepted");
    // A rewrite that keeps every size (a string of the same length) leaves
    // the chunk bound to the old contentHash, current: its digests reject it.
    const auto change_case = [](std::uint32_t type, bytes& payload) {
      if (type == static_cast<std::uint32_t>(untold::chunk_type::string_table)) payload[0] ^= std::byte{0x20};
    };
    bytes same_size = test::rewrite_unaware(good, change_case, false);
    CHECK(test::rejection(same_size) == "R-BLOCK-HASH");
    CHECK(streamed_rule(same_size) == "R-BLOCK-HASH");
    same_size = test::rewrite_unaware(good, change_case, true);  // with the contentHash recomputed: stale, it opens
    CHECK(test::rejection(same_size) == "accepted");
    CHECK(streamed_rule(same_size) == "loaded");
  }
  SUBCASE("after the rewrite, a changed geometry byte fails the whole-file contentHash") {
    bytes f = test::patch_texture_uri(good, baked_uri, true);
    f[test::chunk_payload_offset(f, 6) + 1000] ^= std::byte{1};
    CHECK(test::rejection(f) == "R-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-HASH");
    CHECK(streamed_rule(f) == "R-HASH");
  }
  SUBCASE("a chunk made stale on purpose: the contentHash still decides") {
    bytes f = good;
    f[test::chunk_payload_offset(f, 6) + 1000] ^= std::byte{1};
    f[141] ^= std::byte{1};  // the contentHash no longer matches the binding
    CHECK(test::rejection(f) == "R-HASH");
    CHECK(streamed_rule(f) == "R-HASH");
    f = good;
    const integrity_layout l = locate(f);
    f[l.binding + 20] ^= std::byte{1};  // or the binding itself: the chunk's own bytes changed
    CHECK(test::rejection(f) == "R-HASH");
    CHECK(streamed_rule(f) == "R-HASH");
  }
  SUBCASE("a contentHash removed: nothing to bind, so the chunk is the check") {
    bytes f = good;
    std::fill_n(f.begin() + 140, 32, std::byte{0});
    auto a = untold::open(f);
    REQUIRE(a.has_value());
    CHECK(a->block_digests() == untold::digest_status::current);
    f[test::chunk_payload_offset(f, 6) + 1000] ^= std::byte{1};
    a = untold::open(f);
    REQUIRE(a.has_value());
    const auto vertex_row = *a->find_chunk(untold::chunk_type::vertex_data);
    CHECK(rule_of(untold::verify_chunk(*a, vertex_row).error()) == "R-BLOCK-HASH");
    bytes g = test::patch_texture_uri(good, baked_uri, true);
    std::fill_n(g.begin() + 140, 32, std::byte{0});
    CHECK(test::rejection(g) == "R-DIRECTORY-HASH");
    CHECK(streamed_rule(g) == "R-DIRECTORY-HASH");
  }
  SUBCASE("a chunk hashed after the integrity chunk is part of the binding") {
    untold::builder b;
    std::vector<test::grid> grids;
    test::fill_realistic_scene(b, grids);
    const bytes late(70000, std::byte{9});  // more than a digest block
    b.add_plugin_chunk("com.example.late", 1, 1, late, 0xFFFF0100u);
    const auto written = b.finish();
    REQUIRE(written.has_value());
    CHECK(untold::open(*written)->block_digests() == untold::digest_status::current);
    CHECK(streamed_rule(*written) == "loaded");
    recording_source unlent(*written);  // reads instead of views
    auto s = untold::streamed_asset::open(unlent);
    REQUIRE(s.has_value());
    CHECK(s->metadata().block_digests() == untold::digest_status::current);
    bytes f = *written;
    f[test::chunk_payload_offset(f, 0xFFFF0100u) + 40000] ^= std::byte{1};  // changes the resumed contentHash
    CHECK(test::rejection(f) == "R-HASH");
    CHECK(streamed_rule(f) == "R-HASH");
    const bytes rewritten = test::patch_texture_uri(*written, baked_uri, true);
    CHECK(untold::open(rewritten)->block_digests() == untold::digest_status::stale);
    CHECK(streamed_rule(rewritten) == "loaded");
  }
}

TEST_CASE("current block digests: a tampered geometry block is still caught lazily") {
  bytes f = test::write_scene(true);
  const std::size_t vertex_offset = test::chunk_payload_offset(f, 6);
  f[vertex_offset + 3 * 65536 + 5] ^= std::byte{0x40};  // the contentHash (and the binding) untouched
  auto a = untold::open(f);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  CHECK(a->block_digests() == untold::digest_status::current);
  const auto vertex_row = *a->find_chunk(untold::chunk_type::vertex_data);
  CHECK(untold::verify_range(*a, vertex_row, 0, 3 * 65536).has_value());
  const auto bad = untold::verify_range(*a, vertex_row, 3 * 65536, 1);
  REQUIRE_FALSE(bad.has_value());
  CHECK(rule_of(bad.error()) == "R-BLOCK-HASH");
  CHECK(bad.error().context.value == 3);
  CHECK(streamed_rule(f) == "R-BLOCK-HASH");
}

TEST_CASE("stale block digests: a version 1 chunk cannot be bound and is read as before") {
  const bytes v1 = as_version(test::write_scene(true), 1);
  auto a = untold::open(v1, {.integrity = untold::integrity::full});
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  CHECK(a->block_digests() == untold::digest_status::current);
  CHECK(streamed_rule(v1) == "loaded");
  bytes tampered = v1;
  tampered[test::chunk_payload_offset(tampered, 6) + 1000] ^= std::byte{1};
  auto b = untold::open(tampered);
  REQUIRE(b.has_value());
  CHECK(rule_of(untold::verify_all(*b).error()) == "R-BLOCK-HASH");
  // A chunk-unaware rewrite breaks it, as it broke every file before version 2.
  CHECK(test::rejection(test::patch_texture_uri(v1, baked_uri, true)) == "R-DIRECTORY-HASH");
}

namespace {

// `f` with its chainingValue forged (one bit flipped) and its contentHash made
// to agree with it: the SHA-256 resumed from the forged state over the rest
// of the message. Spec 5's contentHash of the bytes no longer matches.
bytes forge_chaining_value(bytes f) {
  const integrity_layout l = locate(f);
  f[l.binding + 8 + 5] ^= std::byte{0x10};
  std::uint64_t prefix = 0;
  const bytes message = content_message(f, &prefix);
  untold::sha256_midstate state;
  for (std::size_t i = 0; i < 32; ++i)  // eight big-endian words
    state.words[i / 4] = state.words[i / 4] << 8 | std::to_integer<std::uint32_t>(f[l.binding + 8 + i]);
  state.length = (prefix + (l.binding - l.payload)) / 64 * 64;
  untold::sha256_resumable resumed(state);
  resumed.update(untold::byte_span(message).subspan(static_cast<std::size_t>(state.length)));
  const untold::sha256_digest hash = resumed.finish();
  std::memcpy(f.data() + 140, hash.data(), 32);
  return f;
}

}  // namespace

TEST_CASE("block digests version 3: the contentHash commits to every digest, so a re-digested forgery is caught") {
  const bytes good = test::write_scene(true);
  const std::size_t vertex_byte = test::chunk_payload_offset(good, 6) + 1000;
  // A changed vertex byte with every digest recomputed over it - blocks, rows,
  // top, directory - and the binding and contentHash kept: all a forger who
  // cannot change the contentHash (the caller pins it) can do.
  bytes forged = good;
  forged[vertex_byte] ^= std::byte{1};
  redigest(forged);
  // Version 3: the new row digests are in what the binding's resumed hash
  // covers, so the chunk is stale and the contentHash over the file decides.
  {
    auto a = untold::open(forged, {.integrity = untold::integrity::none});
    REQUIRE(a.has_value());
    CHECK(test::rejection(forged) == "R-HASH");
    CHECK(test::rejection(forged, {.integrity = untold::integrity::full}) == "R-HASH");
    CHECK(streamed_rule(forged) == "R-HASH");
  }
  // Version 2: its binding follows the block digests and commits to none of
  // them, so the forged chunk stays current and only a contentHash pass
  // (`full`) catches the byte.
  const bytes v2 = as_version(good, 2);
  auto a2 = untold::open(v2, {.integrity = untold::integrity::full});
  REQUIRE_MESSAGE(a2.has_value(), a2.error().describe());
  CHECK(a2->block_digests() == untold::digest_status::current);
  bytes forged2 = v2;
  forged2[vertex_byte] ^= std::byte{1};
  redigest(forged2);
  auto lazy2 = untold::open(forged2);
  REQUIRE(lazy2.has_value());
  CHECK(lazy2->block_digests() == untold::digest_status::current);
  CHECK(untold::verify_all(*lazy2).has_value());  // the weakness version 3 removes
  CHECK(test::rejection(forged2, {.integrity = untold::integrity::full}) == "R-HASH");
}

TEST_CASE("integrity::full on a version 3 chunk proves the contentHash by the blocks, strict hashes the file too") {
  const bytes good = test::write_scene(true);
  for (const bool deep : {false, true}) {
    CAPTURE(deep);
    auto a = untold::open(good, {.deep_checks = deep, .integrity = untold::integrity::full});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    CHECK(a->block_digests() == untold::digest_status::current);
    CHECK(untold::verify_all(*a).has_value());
    CHECK(untold::open(good, {.deep_checks = deep, .integrity = untold::integrity::strict}).has_value());
  }
  SUBCASE("a flipped byte anywhere in a chunk fails `full` by its block") {
    bytes f = good;
    f[test::chunk_payload_offset(f, 6) + 5 * 65536 + 17] ^= std::byte{4};
    CHECK(test::rejection(f, {.integrity = untold::integrity::full}) == "R-BLOCK-HASH");
    CHECK(test::rejection(f, {.integrity = untold::integrity::strict}) == "R-HASH");  // the serial order's first
  }
  SUBCASE("a forged chainingValue: `full` trusts the tree, `strict` recomputes spec 5's contentHash") {
    // Only the file's author can forge it (the contentHash changes with it),
    // and every byte still matches its digest; a reader of spec 5 alone
    // rejects the file, and so does `strict`, what untold validate uses.
    const bytes f = forge_chaining_value(good);
    CHECK(untold::open(f)->block_digests() == untold::digest_status::current);
    auto a = untold::open(f, {.deep_checks = true, .integrity = untold::integrity::full});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    CHECK(test::rejection(f, {.integrity = untold::integrity::strict}) == "R-HASH");
    CHECK(streamed_rule(f, untold::integrity::full) == "loaded");
    CHECK(streamed_rule(f, untold::integrity::strict) == "R-HASH");
    // A version 2 chunk proves nothing by its blocks: `full` hashes the file.
    const bytes v2 = forge_chaining_value(as_version(good, 2));
    CHECK(untold::open(v2)->block_digests() == untold::digest_status::current);
    CHECK(test::rejection(v2, {.integrity = untold::integrity::full}) == "R-HASH");
  }
  SUBCASE("a version 2 chunk is still read, current, with every mode") {
    const bytes v2 = as_version(good, 2);
    for (const auto mode : {untold::integrity::lazy, untold::integrity::full, untold::integrity::strict}) {
      CAPTURE(static_cast<int>(mode));
      auto a = untold::open(v2, {.deep_checks = true, .integrity = mode});
      REQUIRE_MESSAGE(a.has_value(), a.error().describe());
      CHECK(a->block_digests() == untold::digest_status::current);
      CHECK(untold::verify_all(*a).has_value());
      CHECK(streamed_rule(v2, mode) == "loaded");
    }
    CHECK(test::rejection(test::patch_texture_uri(v2, baked_uri, true)) == "accepted");  // stale, as version 3
    CHECK(untold::open(test::patch_texture_uri(v2, baked_uri, true))->block_digests() ==
          untold::digest_status::stale);
  }
}
