// One crafted file per rejection rule of spec section 6: a valid file from the
// writer, patched at spec offsets so it breaks exactly one rule, must be
// rejected with exactly that rule id.
#include "../support.hpp"

#include <cmath>
#include <limits>

using test::bytes;
using test::get_u32;
using test::get_u64;
using test::put_f32;
using test::put_u32;
using test::put_u64;
using test::rejection;

namespace {

constexpr std::uint32_t kString = 1, kEntity = 2, kMesh = 3, kMaterial = 4, kTexture = 5, kVertex = 6, kIndex = 7,
                        kEdge = 18;
constexpr std::size_t kEntitySize = 136, kMeshSize = 104, kMaterialSize = 88, kTextureSize = 32;

std::size_t row_at(const bytes& f, std::uint32_t type) { return test::chunk_row_offset(test::chunk_row(f, type)); }
std::size_t entity(const bytes& f, std::size_t row) { return test::record_offset(f, kEntity, row, kEntitySize); }
std::size_t mesh(const bytes& f, std::size_t row) { return test::record_offset(f, kMesh, row, kMeshSize); }

}  // namespace

TEST_CASE("the unpatched scene is accepted, deep checks included") {
  const bytes f = test::write_scene();
  CHECK(rejection(f) == "accepted");
  CHECK(rejection(f, {.deep_checks = true}) == "accepted");
}

TEST_CASE("R-MAGIC") {
  bytes f = test::write_scene();
  f[0] = std::byte{'X'};
  CHECK(rejection(f) == "R-MAGIC");
  f = test::write_scene();
  f[7] = std::byte{1};  // the two trailing NULs are part of the magic
  CHECK(rejection(f) == "R-MAGIC");
  const bytes short_wrong = {std::byte{'U'}, std::byte{'X'}};
  CHECK(rejection(short_wrong) == "R-MAGIC");  // checked before the length
}

TEST_CASE("R-TRUNC-HEADER") {
  const bytes f = test::write_scene();
  CHECK(rejection(bytes(f.begin(), f.begin() + 203)) == "R-TRUNC-HEADER");
  CHECK(rejection(bytes(f.begin(), f.begin() + 5)) == "R-TRUNC-HEADER");
  CHECK(rejection(bytes{}) == "R-TRUNC-HEADER");
}

TEST_CASE("R-VERSION") {
  bytes f = test::write_scene();
  put_u32(f, 8, 5);
  CHECK(rejection(f) == "R-VERSION");
  put_u32(f, 8, 0);
  CHECK(rejection(f) == "R-VERSION");
}

TEST_CASE("R-HEADER-SIZE, and the relaxed option") {
  bytes f = test::write_scene();
  put_u32(f, 20, 200);
  CHECK(rejection(f) == "R-HEADER-SIZE");
  CHECK(rejection(f, {.relaxed_header_size = true}) == "accepted");
}

TEST_CASE("R-FILE-TYPE") {
  bytes f = test::write_scene();
  put_u32(f, 12, 6);
  CHECK(rejection(f) == "R-FILE-TYPE");
  put_u32(f, 12, 0);
  CHECK(rejection(f) == "R-FILE-TYPE");
}

TEST_CASE("R-VERTEX-LAYOUT") {
  bytes f = test::write_scene();
  put_u32(f, 44, 3);  // 1 PBR_STATIC_V1, 2 PBR_QUANT_V1 (the library's)
  CHECK(rejection(f) == "R-VERTEX-LAYOUT");
}

TEST_CASE("R-TRUNC-TABLE") {
  bytes f = test::write_scene();
  put_u32(f, 24, 0xFFFFFFFFu);  // 204 + 40 * count must not wrap
  CHECK(rejection(f) == "R-TRUNC-TABLE");
  const bytes g = test::write_scene();
  CHECK(rejection(bytes(g.begin(), g.begin() + 204 + 40 * 3)) == "R-TRUNC-TABLE");
}

TEST_CASE("R-COMPRESSION") {
  bytes f = test::write_scene();
  put_u32(f, row_at(f, kEntity) + 4, 5);  // 3 and 4 are the meshopt ones (R-CODEC-CHUNK on this chunk)
  CHECK(rejection(f) == "R-COMPRESSION");
}

TEST_CASE("R-ALIGN") {
  bytes f = test::write_scene();
  const std::size_t edge = row_at(f, kEdge);
  put_u64(f, edge + 8, get_u64(f, edge + 8) + 8);
  f.resize(f.size() + 16);
  CHECK(rejection(f) == "R-ALIGN");
}

TEST_CASE("R-CHUNK-RANGE") {
  const bytes original = test::write_scene();
  SUBCASE("past the end of the file") {
    bytes f = original;
    const std::size_t v = row_at(f, kVertex);
    put_u64(f, v + 16, f.size());
    put_u64(f, v + 24, f.size());
    CHECK(rejection(f) == "R-CHUNK-RANGE");
  }
  SUBCASE("offset + size wraps around 2^64") {
    bytes f = original;
    put_u64(f, row_at(f, kVertex) + 8, 0xFFFFFFFFFFFFFFF0ull);
    CHECK(rejection(f) == "R-CHUNK-RANGE");
  }
  SUBCASE("overlapping another chunk") {
    bytes f = original;
    put_u64(f, row_at(f, kIndex) + 8, get_u64(f, row_at(f, kVertex) + 8));
    CHECK(rejection(f) == "R-CHUNK-RANGE");
  }
  SUBCASE("overlapping the header") {
    bytes f = original;
    put_u64(f, row_at(f, kString) + 8, 0);
    CHECK(rejection(f) == "R-CHUNK-RANGE");
  }
  SUBCASE("overlapping the chunk table") {
    bytes f = original;
    put_u64(f, row_at(f, kString) + 8, 208);
    CHECK(rejection(f) == "R-CHUNK-RANGE");
  }
}

TEST_CASE("R-RAW-SIZE") {
  bytes f = test::write_scene();
  const std::size_t s = row_at(f, kString);
  put_u64(f, s + 16, get_u64(f, s + 16) - 1);
  CHECK(rejection(f) == "R-RAW-SIZE");
}

TEST_CASE("R-DUP-CHUNK") {
  bytes f = test::write_scene();
  put_u32(f, row_at(f, kTexture), kMaterial);
  CHECK(rejection(f) == "R-DUP-CHUNK");
}

TEST_CASE("R-REQUIRED") {
  for (const std::uint32_t type : {kString, kEntity, kMesh, kMaterial, kTexture, kVertex, kIndex}) {
    CAPTURE(type);
    bytes f = test::write_scene();
    put_u32(f, row_at(f, type), 1000);  // now an unknown core chunk
    CHECK(rejection(f) == "R-REQUIRED");
  }
}

TEST_CASE("R-TABLE-SIZE") {
  bytes f = test::write_scene();
  const std::size_t e = row_at(f, kEntity);
  put_u32(f, e + 32, get_u32(f, e + 32) + 1);
  CHECK(rejection(f) == "R-TABLE-SIZE");
  bytes g = test::write_scene();
  put_u32(g, 8, 3);  // a v1 file read as v3: material records would be 100 bytes
  CHECK(rejection(g) == "R-TABLE-SIZE");
}

TEST_CASE("R-HEADER-COUNTS") {
  for (const std::size_t field : {28u, 32u, 36u, 40u}) {
    CAPTURE(field);
    bytes f = test::write_scene();
    put_u32(f, field, get_u32(f, field) + 1);
    CHECK(rejection(f) == "R-HEADER-COUNTS");
  }
}

TEST_CASE("R-LIMITS") {
  const bytes f = test::write_scene();
  untold::open_options few_chunks;
  few_chunks.limits.max_chunks = 3;
  CHECK(rejection(f, few_chunks) == "R-LIMITS");
  untold::open_options few_records;
  few_records.limits.max_records = 3;  // the entity table has 4
  CHECK(rejection(f, few_records) == "R-LIMITS");

  untold::write_options lz4;
  lz4.compression.data = {untold::compression::lz4, 0};
  const bytes packed = test::write_scene(false, lz4);
  CHECK(rejection(packed) == "accepted");
  untold::open_options small_chunks;
  small_chunks.limits.max_chunk_bytes = 1000;
  CHECK(rejection(packed, small_chunks) == "R-LIMITS");
  untold::open_options small_total;
  small_total.limits.max_total_bytes = 3'000'000;  // vertex data alone is 2.9 MB, + indices
  CHECK(rejection(packed, small_total) == "R-LIMITS");
}

TEST_CASE("R-DECOMPRESS") {
  untold::write_options options;
  SUBCASE("lz4 block shorter than stored") {
    options.compression.data = {untold::compression::lz4, 0};
    bytes f = test::write_scene(false, options);
    const std::size_t v = row_at(f, kVertex);
    REQUIRE(get_u32(f, v + 4) == 1);
    put_u64(f, v + 16, get_u64(f, v + 16) - 1);
    CHECK(rejection(f) == "R-DECOMPRESS");
  }
  SUBCASE("zstd frame declares another size") {
    options.compression.data = {untold::compression::zstd, 3};
    bytes f = test::write_scene(false, options);
    const std::size_t v = row_at(f, kVertex);
    REQUIRE(get_u32(f, v + 4) == 2);
    put_u64(f, v + 24, get_u64(f, v + 24) + 32);
    CHECK(rejection(f) == "R-DECOMPRESS");
  }
  SUBCASE("compressed metadata with garbage payload") {
    options.compression.metadata = {untold::compression::zstd, 3};
    bytes f = test::write_scene(false, options);
    const std::size_t e = row_at(f, kEntity);
    REQUIRE(get_u32(f, e + 4) == 2);
    const std::size_t at = static_cast<std::size_t>(get_u64(f, e + 8));
    for (std::size_t i = 0; i < 4; ++i) f[at + i] = std::byte{0xEE};  // destroys the frame magic
    CHECK(rejection(f) == "R-DECOMPRESS");
  }
}

TEST_CASE("R-HASH") {
  bytes f = test::write_scene(true, {.block_digests = false});  // R-BLOCK-HASH would answer a file with them
  CHECK(rejection(f) == "accepted");
  const std::size_t at = test::chunk_payload_offset(f, kVertex) + 100;
  f[at] ^= std::byte{0x01};
  CHECK(rejection(f) == "R-HASH");
  CHECK(rejection(f, {.verify_hash = false}) == "accepted");
}

TEST_CASE("R-STRING") {
  const bytes original = test::write_scene();
  SUBCASE("offset outside the table") {
    bytes f = original;
    const std::uint64_t table_size = get_u64(f, row_at(f, kString) + 24);
    put_u32(f, entity(f, 0) + 8, static_cast<std::uint32_t>(table_size));
    CHECK(rejection(f) == "R-STRING");
    put_u32(f, entity(f, 0) + 8, 0xFFFFFFFEu);
    CHECK(rejection(f) == "R-STRING");
  }
  SUBCASE("no NUL before the end of the table") {
    bytes f = original;
    const std::size_t s = row_at(f, kString);
    const std::size_t last = static_cast<std::size_t>(get_u64(f, s + 8) + get_u64(f, s + 24) - 1);
    REQUIRE(f[last] == std::byte{0});
    f[last] = std::byte{'x'};
    CHECK(rejection(f) == "R-STRING");
  }
  SUBCASE("invalid UTF-8: stray byte, overlong, surrogate") {
    const std::size_t at = test::chunk_payload_offset(original, kString);  // "albedo\0"
    for (const std::vector<int>& seq : {std::vector<int>{0xFF}, {0xC0, 0x80}, {0xED, 0xA0, 0x80}, {0xE2, 0x82}}) {
      bytes f = original;
      for (std::size_t i = 0; i < seq.size(); ++i) f[at + i] = static_cast<std::byte>(seq[i]);
      CHECK(rejection(f) == "R-STRING");
    }
    bytes ok = original;
    const int euro[] = {0xE2, 0x82, 0xAC};  // valid 3-byte sequence
    for (std::size_t i = 0; i < 3; ++i) ok[at + i] = static_cast<std::byte>(euro[i]);
    CHECK(rejection(ok) == "accepted");
  }
  SUBCASE("offset into the middle of a multi-byte sequence") {
    bytes f = original;
    const std::size_t at = test::chunk_payload_offset(f, kString);
    const int euro[] = {0xE2, 0x82, 0xAC};
    for (std::size_t i = 0; i < 3; ++i) f[at + i] = static_cast<std::byte>(euro[i]);
    put_u32(f, test::record_offset(f, kTexture, 0, kTextureSize), 1);  // name -> continuation byte
    CHECK(rejection(f) == "R-STRING");
  }
}

TEST_CASE("R-ENTITY-MESH-RANGE") {
  bytes f = test::write_scene();
  put_u32(f, entity(f, 1) + 16, 5);
  CHECK(rejection(f) == "R-ENTITY-MESH-RANGE");
  put_u32(f, entity(f, 1) + 12, 0xFFFFFFFFu);  // first + count must not wrap
  put_u32(f, entity(f, 1) + 16, 2);
  CHECK(rejection(f) == "R-ENTITY-MESH-RANGE");
}

TEST_CASE("R-ENTITY-ID") {
  bytes f = test::write_scene();
  put_u32(f, entity(f, 3), get_u32(f, entity(f, 2)));
  CHECK(rejection(f) == "R-ENTITY-ID");
}

TEST_CASE("R-ENTITY-PARENT") {
  const bytes original = test::write_scene();
  SUBCASE("missing parent") {
    bytes f = original;
    put_u32(f, entity(f, 1) + 4, 77);
    CHECK(rejection(f) == "R-ENTITY-PARENT");
  }
  SUBCASE("two-entity cycle") {
    bytes f = original;
    REQUIRE(get_u32(f, entity(f, 1) + 4) == 0);
    put_u32(f, entity(f, 0) + 4, 1);
    CHECK(rejection(f) == "R-ENTITY-PARENT");
  }
  SUBCASE("self parent") {
    bytes f = original;
    put_u32(f, entity(f, 3) + 4, get_u32(f, entity(f, 3)));
    CHECK(rejection(f) == "R-ENTITY-PARENT");
  }
  SUBCASE("long cycle reached from a tail") {
    bytes f = original;  // 2 -> 1 -> 0 -> 2
    put_u32(f, entity(f, 0) + 4, 2);
    CHECK(rejection(f) == "R-ENTITY-PARENT");
  }
}

TEST_CASE("R-MESH-ENTITY") {
  bytes f = test::write_scene();
  put_u32(f, mesh(f, 0), 77);
  CHECK(rejection(f) == "R-MESH-ENTITY");
}

TEST_CASE("R-MESH-MATERIAL") {
  bytes f = test::write_scene();
  put_u32(f, mesh(f, 1) + 8, 2);  // two materials
  CHECK(rejection(f) == "R-MESH-MATERIAL");
  put_u32(f, mesh(f, 1) + 8, 0xFFFFFFFFu);  // NONE is fine
  CHECK(rejection(f) == "accepted");
}

TEST_CASE("R-INDEX-TYPE") {
  for (const std::uint32_t type : {0u, 3u}) {
    bytes f = test::write_scene();
    put_u32(f, mesh(f, 0) + 12, type);
    CHECK(rejection(f) == "R-INDEX-TYPE");
  }
}

TEST_CASE("R-STRIDE") {
  bytes f = test::write_scene();
  put_u32(f, mesh(f, 0) + 24, 36);
  CHECK(rejection(f) == "R-STRIDE");
}

TEST_CASE("R-VERTEX-SIZE") {
  bytes f = test::write_scene();
  put_u64(f, mesh(f, 0) + 48, get_u64(f, mesh(f, 0) + 48) + 32);
  CHECK(rejection(f) == "R-VERTEX-SIZE");
}

TEST_CASE("R-INDEX-SIZE") {
  bytes f = test::write_scene();
  put_u64(f, mesh(f, 0) + 56, get_u64(f, mesh(f, 0) + 56) + 2);
  CHECK(rejection(f) == "R-INDEX-SIZE");
}

TEST_CASE("R-VERTEX-RANGE") {
  bytes f = test::write_scene();
  put_u64(f, mesh(f, 0) + 32, get_u64(f, row_at(f, kVertex) + 24));
  CHECK(rejection(f) == "R-VERTEX-RANGE");
  put_u64(f, mesh(f, 0) + 32, 0xFFFFFFFFFFFFFFE0ull);
  CHECK(rejection(f) == "R-VERTEX-RANGE");
}

TEST_CASE("R-INDEX-RANGE") {
  bytes f = test::write_scene();
  put_u64(f, mesh(f, 0) + 40, get_u64(f, row_at(f, kIndex) + 24) - 2);
  CHECK(rejection(f) == "R-INDEX-RANGE");
  put_u64(f, mesh(f, 0) + 40, 0xFFFFFFFFFFFFFFFEull);
  CHECK(rejection(f) == "R-INDEX-RANGE");
}

TEST_CASE("R-EDGE-RANGE") {
  const bytes original = test::write_scene();
  REQUIRE((get_u64(original, mesh(original, 1) + 72) >> 32) == 6);  // room walls carry 6 edge indices
  SUBCASE("range past EDGE_INDEX_DATA") {
    bytes f = original;
    put_u32(f, mesh(f, 1) + 72, 4);  // offset 4 + 6 * 2 > 12
    CHECK(rejection(f) == "R-EDGE-RANGE");
  }
  SUBCASE("EDGE_INDEX_DATA missing") {
    bytes f = original;
    put_u32(f, row_at(f, kEdge), 1000);
    CHECK(rejection(f) == "R-EDGE-RANGE");
  }
}

TEST_CASE("R-TEXTURE-INDEX") {
  const std::size_t fields[] = {56, 60, 64, 68, 72, 76};
  for (const std::size_t field : fields) {
    CAPTURE(field);
    bytes f = test::write_scene();
    put_u32(f, test::record_offset(f, kMaterial, 0, kMaterialSize) + field, 2);  // two textures
    CHECK(rejection(f) == "R-TEXTURE-INDEX");
  }
}

TEST_CASE("R-TEXTURE-FORMAT") {
  bytes f = test::write_scene();
  put_u32(f, test::record_offset(f, kTexture, 1, kTextureSize) + 8, 10);
  CHECK(rejection(f) == "R-TEXTURE-FORMAT");
}

TEST_CASE("R-INDEX-VALUE is a deep check") {
  const untold::open_options deep{.deep_checks = true};
  SUBCASE("triangle index") {
    bytes f = test::write_scene();
    const std::size_t at = test::chunk_payload_offset(f, kIndex) + static_cast<std::size_t>(get_u64(f, mesh(f, 0) + 40));
    f[at] = std::byte{16};  // uint16, the mesh has 16 vertices
    f[at + 1] = std::byte{0};
    CHECK(rejection(f) == "accepted");
    CHECK(rejection(f, deep) == "R-INDEX-VALUE");
    // The error carries what to act on: the value, the bound and the position.
    auto r = untold::open(f, deep);
    REQUIRE_FALSE(r);
    CHECK(r.error().context.value == 16);
    CHECK(r.error().context.has_limit);
    CHECK(r.error().context.limit == 16);
    CHECK(r.error().subject() == "index 0");
    CHECK(r.error().describe().find("value 16, limit 16") != std::string::npos);
  }
  SUBCASE("edge index") {
    bytes f = test::write_scene();
    const std::size_t at = test::chunk_payload_offset(f, kEdge);
    f[at] = std::byte{16};
    CHECK(rejection(f) == "accepted");
    CHECK(rejection(f, deep) == "R-INDEX-VALUE");
  }
}

TEST_CASE("R-FINITE is a deep check") {
  const untold::open_options deep{.deep_checks = true};
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  SUBCASE("vertex position") {
    bytes f = test::write_scene();
    put_f32(f, test::chunk_payload_offset(f, kVertex) + 4, nan);
    CHECK(rejection(f) == "accepted");
    CHECK(rejection(f, deep) == "R-FINITE");
  }
  SUBCASE("entity transform") {
    bytes f = test::write_scene();
    put_f32(f, entity(f, 2) + 72 + 4 * 13, inf);
    CHECK(rejection(f, deep) == "R-FINITE");
  }
  SUBCASE("header bounds and root transform") {
    bytes f = test::write_scene();
    put_f32(f, 52, nan);
    CHECK(rejection(f, deep) == "R-FINITE");
    f = test::write_scene();
    put_f32(f, 76, -inf);
    CHECK(rejection(f, deep) == "R-FINITE");
  }
  SUBCASE("mesh bounds") {
    bytes f = test::write_scene();
    put_f32(f, mesh(f, 2) + 80, nan);
    CHECK(rejection(f, deep) == "R-FINITE");
  }
}

TEST_CASE("R-BOUNDS is a deep check") {
  bytes f = test::write_scene();
  put_f32(f, mesh(f, 0) + 80 + 12, 2.5f);  // max.x below the grid's 3.0
  CHECK(rejection(f) == "accepted");
  CHECK(rejection(f, {.deep_checks = true}) == "R-BOUNDS");
}

TEST_CASE("errors carry their context") {
  bytes f = test::write_scene();
  put_u32(f, mesh(f, 1) + 8, 9);
  auto a = untold::open(f);
  REQUIRE_FALSE(a);
  const untold::error& e = a.error();
  CHECK(e.code == untold::errc::mesh_material);
  CHECK(e.name() == "mesh_material");
  CHECK(e.context.chunk_index == test::chunk_row(f, kMesh));
  CHECK(e.context.chunk_type == kMesh);
  CHECK(e.context.record_index == 1);
  CHECK(std::string(e.context.field) == "materialIndex");
  CHECK(e.context.value == 9);
  CHECK(e.describe() ==
        "R-MESH-MATERIAL mesh_material: a mesh's materialIndex is neither NONE nor a material "
        "(chunk 2, type 3, record 1, field materialIndex, value 9)");
}
