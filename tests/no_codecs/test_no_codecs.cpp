// A build of the library without liblz4, libzstd and OpenSSL (what
// -DUNTOLD_WITH_LZ4=OFF -DUNTOLD_WITH_ZSTD=OFF -DUNTOLD_WITH_OPENSSL=OFF gives a
// consumer): compressed chunks are refused with R-DECOMPRESS
// compression_unsupported, the writer refuses to compress, and SHA-256 falls
// back to the portable implementation, so hashed files still verify.
// Compiled without the codec macros (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include <untold/compression.hpp>
#include <untold/hash.hpp>
#include <untold/reader.hpp>
#include <untold/writer.hpp>

static_assert(!untold::compression_available(untold::compression::lz4));
static_assert(!untold::compression_available(untold::compression::zstd));
static_assert(!untold::compression_available(untold::compression::meshopt));
static_assert(!untold::compression_available(untold::compression::meshopt_zstd));
static_assert(!untold::sha256_uses_openssl);

namespace {

std::vector<std::byte> one_triangle(const untold::write_options& options) {
  std::vector<std::byte> vertices(3 * 32, std::byte{0});
  const float xyz[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (int v = 0; v < 3; ++v)
    for (int k = 0; k < 3; ++k) untold::store_le_unchecked<float>(vertices.data() + 32 * v + 4 * k, xyz[v][k]);
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  b.add_mesh({.entity = e, .name = "m", .vertices = vertices, .indices = indices});
  auto bytes = b.finish(options);
  REQUIRE_MESSAGE(bytes, bytes.error().describe());
  return *bytes;
}

}  // namespace

TEST_CASE("no codecs: the codec calls report compression_unsupported") {
  const std::vector<std::byte> raw(64, std::byte{7});
  std::vector<std::byte> out(64);
  for (auto method : {untold::compression::lz4, untold::compression::zstd}) {
    CHECK(untold::decompress(method, raw, out).error().code == untold::errc::compression_unsupported);
    CHECK(untold::compress(method, 0, raw).error().code == untold::errc::compression_unsupported);
  }
}

TEST_CASE("no codecs: the meshopt compressions report compression_unsupported") {
  const std::vector<std::byte> raw(64, std::byte{7});
  std::vector<std::byte> out(64);
  const untold::codec_input stream[] = {{raw, 32, true}};
  for (auto method : {untold::compression::meshopt, untold::compression::meshopt_zstd}) {
    CHECK(untold::decompress(method, raw, out).error().code == untold::errc::compression_unsupported);
    CHECK(untold::compress_streams(method, 0, stream).error().code == untold::errc::compression_unsupported);
  }
}

TEST_CASE("no codecs: the writer refuses a compression it cannot do, uncompressed files hash and verify") {
  untold::write_options zstd;
  zstd.compression.data = {untold::compression::zstd, 3};
  untold::builder b;
  std::vector<std::byte> vertices(3 * 32, std::byte{0});
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  b.add_mesh({.entity = b.add_entity({.name = "e"}), .vertices = vertices, .indices = indices});
  auto refused = b.finish(zstd);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == untold::errc::compression_unsupported);

  const auto file = one_triangle({.block_digests = false});  // the contentHash alone, checked at open
  auto a = untold::open(file, {.deep_checks = true, .verify_hash = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  auto tampered = file;
  tampered.back() ^= std::byte{1};  // index bytes come last: still a valid index, wrong hash
  auto bad = untold::open(tampered);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == untold::errc::hash_mismatch);
}

TEST_CASE("no codecs: a file with an lz4 chunk is rejected with compression_unsupported") {
  auto file = one_triangle({.content_hash = false});
  auto a = untold::open(file);
  REQUIRE(a);
  // Mark the index chunk as lz4: its bytes can no longer be decoded here.
  std::uint32_t row = 0;
  for (; row < a->chunks().size(); ++row)
    if (a->chunks()[row].chunk_type == static_cast<std::uint32_t>(untold::chunk_type::index_data)) break;
  REQUIRE(row < a->chunks().size());
  const std::size_t entry = untold::header_size + row * untold::chunk_entry_size;
  untold::store_le_unchecked<std::uint32_t>(file.data() + entry + 4, 1);  // compressionType = lz4
  auto rejected = untold::open(file);
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().code == untold::errc::compression_unsupported);
  CHECK(rejected.error().rule_id() == "R-DECOMPRESS");
}
