// Compressed chunks through the reader and writer, and the content hash
// checked against an independent SHA-256 of the chunk bytes.
#include "../support.hpp"

#include <openssl/sha.h>

#include <algorithm>

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
    CHECK(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()));
  }
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

TEST_CASE("an all-zero contentHash means not hashed; hashing can be turned off") {
  bytes f = test::write_scene(false);
  for (std::size_t i = 140; i < 172; ++i) CHECK(f[i] == std::byte{0});
  f[test::chunk_payload_offset(f, 6) + 1] ^= std::byte{1};
  CHECK(test::rejection(f) == "accepted");
}
