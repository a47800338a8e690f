// The golden files tests/data/minimal_v1.untold and minimal_v4.untold: their
// expected bytes are laid out here by hand from the spec (sections 3, 4 and
// 7), independently of the library's codecs and writer. The committed files
// must equal them, the reader must read them back, and the writer must
// reproduce them exactly: version 4 by default (spec 7), version 1 when
// asked for. The two differ only in the material record (88 / 108 bytes) and
// the offsets after it.
//
// Regenerate the files (only after a deliberate format change) with
//   UNTOLD_WRITE_GOLDEN=1 ./untold_tests -tc='golden*'
#include "../support.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

using test::bytes;

namespace {

struct hand_writer {
  bytes out;
  explicit hand_writer(std::size_t size) : out(size, std::byte{0}) {}
  void u16(std::size_t at, std::uint16_t v) {
    out[at] = std::byte(v & 0xFF);
    out[at + 1] = std::byte(v >> 8);
  }
  void u32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out[at + i] = std::byte((v >> (8 * i)) & 0xFF);
  }
  void u64(std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out[at + i] = std::byte((v >> (8 * i)) & 0xFF);
  }
  void f32(std::size_t at, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(at, bits);
  }
  void text(std::size_t at, const char* s) {
    for (std::size_t i = 0; s[i] != 0; ++i) out[at + i] = std::byte(static_cast<unsigned char>(s[i]));
  }
  void box(std::size_t at, float x0, float y0, float z0, float x1, float y1, float z1) {
    const float v[6] = {x0, y0, z0, x1, y1, z1};
    for (int i = 0; i < 6; ++i) f32(at + 4 * i, v[i]);
  }
  void identity(std::size_t at) {
    for (int i = 0; i < 16; ++i) f32(at + 4 * i, i % 5 == 0 ? 1.0f : 0.0f);
  }
};

// One entity "root" with one triangle mesh "tri" (material "mat", texture
// "tex" at "t.png"), no content hash.
//
//   0    header (204)          204  chunk table, 7 x 40 -> 484
//   496  STRING   23 B: "root\0tri\0mat\0tex\0t.png\0" (offsets 0, 5, 9, 13, 17)
//   528  ENTITY   136 B         672  MESH     104 B
//   784  MATERIAL  88 B (v1) / 108 B (v4)
//   v1:  880 TEXTURE 32 B   912 VERTEX 96 B (3 x 32)   1008 INDEX 6 B (uint16 0 1 2) -> 1014 bytes
//   v4:  896 TEXTURE 32 B   928 VERTEX 96 B            1024 INDEX 6 B                -> 1030 bytes
bytes hand_made_minimal_file(std::uint32_t version) {
  const bool v4 = version == 4;
  const std::size_t material_size = v4 ? 108 : 88, texture_at = v4 ? 896 : 880, vertex_at = texture_at + 32,
                    index_at = vertex_at + 96;
  hand_writer w(index_at + 6);
  // Header (3.1).
  w.text(0, "UNTOLD");
  w.u32(8, version);  // formatVersion
  w.u32(12, 1);    // fileType tile
  w.u32(16, 0);    // flags
  w.u32(20, 204);  // headerSize
  w.u32(24, 7);    // chunkCount
  w.u32(28, 1);    // meshCount
  w.u32(32, 1);    // materialCount
  w.u32(36, 1);    // textureRefCount
  w.u32(40, 1);    // entityCount
  w.u32(44, 1);    // vertexLayout
  w.box(52, 0, 0, 0, 1, 1, 0);
  w.identity(76);
  // Chunk table (3.2): type, compression, offset, stored, raw, elementCount.
  const struct {
    std::uint32_t type;
    std::uint64_t offset, size;
    std::uint32_t count;
  } chunks[] = {{1, 496, 23, 0},         {2, 528, 136, 1},       {3, 672, 104, 1}, {4, 784, material_size, 1},
                {5, texture_at, 32, 1}, {6, vertex_at, 96, 0}, {7, index_at, 6, 0}};
  for (std::size_t i = 0; i < 7; ++i) {
    const std::size_t row = 204 + 40 * i;
    w.u32(row, chunks[i].type);
    w.u32(row + 4, 0);
    w.u64(row + 8, chunks[i].offset);
    w.u64(row + 16, chunks[i].size);
    w.u64(row + 24, chunks[i].size);
    w.u32(row + 32, chunks[i].count);
  }
  // String table.
  w.text(496, "root");
  w.text(501, "tri");
  w.text(505, "mat");
  w.text(509, "tex");
  w.text(513, "t.png");
  // Entity (136 B).
  w.u32(528 + 0, 0);            // entityId
  w.u32(528 + 4, 0xFFFFFFFF);   // parent NONE
  w.u32(528 + 8, 0);            // name "root"
  w.u32(528 + 12, 0);           // firstMeshRecordIndex
  w.u32(528 + 16, 1);           // meshRecordCount
  w.box(528 + 24, 0, 0, 0, 1, 1, 0);
  w.box(528 + 48, 0, 0, 0, 1, 1, 0);
  w.identity(528 + 72);
  // Mesh (104 B).
  w.u32(672 + 0, 0);   // entityId
  w.u32(672 + 4, 5);   // "tri"
  w.u32(672 + 8, 0);   // material 0
  w.u32(672 + 12, 1);  // uint16
  w.u32(672 + 16, 3);  // vertexCount
  w.u32(672 + 20, 3);  // indexCount
  w.u32(672 + 24, 32); // stride
  w.u64(672 + 32, 0);  // vertexDataOffset
  w.u64(672 + 40, 0);  // indexDataOffset
  w.u64(672 + 48, 96);
  w.u64(672 + 56, 6);
  w.u64(672 + 64, 3 * 32 + 3 * 2);  // estimatedGPUBytes
  w.box(672 + 80, 0, 0, 0, 1, 1, 0);
  // Material (v1 88 B; v4 adds the height fields and transmission, 108 B).
  w.u32(784 + 0, 9);  // "mat"
  for (int i = 0; i < 4; ++i) w.f32(784 + 8 + 4 * i, 1.0f);  // baseColorFactor
  w.f32(784 + 36, 1.0f);                                     // normalScale
  w.f32(784 + 40, 1.0f);                                     // metallic
  w.f32(784 + 44, 1.0f);                                     // roughness
  w.f32(784 + 48, 1.0f);                                     // occlusionStrength
  w.f32(784 + 52, 0.5f);                                     // alphaCutoff
  w.u32(784 + 56, 0);                                        // baseColor texture
  for (int i = 1; i < 6; ++i) w.u32(784 + 56 + 4 * i, 0xFFFFFFFF);
  if (v4) {
    w.u32(784 + 80, 0xFFFFFFFF);  // heightTextureIndex NONE
    w.f32(784 + 84, 0.05f);       // heightScale
    w.f32(784 + 88, 0.5f);        // heightMidlevel
    w.f32(784 + 92, 0.0f);        // heightRemapMin
    w.f32(784 + 96, 1.0f);        // heightRemapMax
    // 100 packed channels r/r = 0, 104 transmissionFactor 0
  }
  // Texture (32 B).
  w.u32(texture_at + 0, 13);  // "tex"
  w.u32(texture_at + 4, 17);  // "t.png"
  w.u32(texture_at + 8, 1);   // rgba8
  w.u32(texture_at + 12, 1);  // srgb
  w.u32(texture_at + 16, 4);
  w.u32(texture_at + 20, 4);
  w.u32(texture_at + 24, 1);
  // Vertices (spec 4): positions, normal (0,0,1) = z 511 -> 0x1FF << 20,
  // tangent (1,0,0,+1) = x 511 | w 0b01 << 30, uvs 0, color 255 x 4.
  const float positions[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (int v = 0; v < 3; ++v) {
    const std::size_t at = vertex_at + 32 * v;
    for (int k = 0; k < 3; ++k) w.f32(at + 4 * k, positions[v][k]);
    w.u32(at + 12, 0x1FF00000);
    w.u32(at + 16, 0x400001FF);
    w.u32(at + 28, 0xFFFFFFFF);
  }
  // Indices.
  w.u16(index_at, 0);
  w.u16(index_at + 2, 1);
  w.u16(index_at + 4, 2);
  return w.out;
}

/// What the writer makes of the same content; `version` nullopt = its default.
bytes writer_minimal_file(std::optional<std::uint32_t> version) {
  // Strings are stored in first-add order: root, tri, mat, tex, t.png.
  untold::builder b;
  const auto root = b.add_entity({.name = "root"});
  b.add_string("tri");
  b.add_string("mat");
  const auto texture = b.add_texture({.name = "tex", .uri = "t.png", .format = untold::texture_format::rgba8,
                                      .flags = untold::texture_flags::srgb, .width = 4, .height = 4, .mip_count = 1});
  const auto material = b.add_material({.name = "mat", .base_color_texture = texture});
  const bytes vertices = test::raw_vertices({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  b.add_mesh({.entity = root, .name = "tri", .material = material, .vertices = vertices, .indices = indices});
  auto out = b.finish({.format_version = version, .content_hash = false});
  REQUIRE_MESSAGE(out.has_value(), out.error().describe());
  return std::move(*out);
}

std::string golden_path(std::uint32_t version) {
  return std::string(UNTOLD_TEST_DATA_DIR "/minimal_v") + char('0' + version) + ".untold";
}

}  // namespace

TEST_CASE("golden: the committed files equal the hand-made bytes") {
  for (const std::uint32_t version : {1u, 4u}) {
    CAPTURE(version);
    const bytes expected = hand_made_minimal_file(version);
    if (std::getenv("UNTOLD_WRITE_GOLDEN") != nullptr) {
      std::ofstream(golden_path(version), std::ios::binary)
          .write(reinterpret_cast<const char*>(expected.data()), static_cast<std::streamsize>(expected.size()));
    }
    CHECK(test::read_binary(golden_path(version)) == expected);
  }
}

TEST_CASE("golden: the reader reads the hand-made files") {
  for (const std::uint32_t version : {1u, 4u}) {
    CAPTURE(version);
    const bytes f = test::read_binary(golden_path(version));
    auto a = untold::open(f, {.deep_checks = true});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    CHECK(a->format_version() == version);
    REQUIRE(a->meshes().size() == 1);
    const untold::mesh_record m = a->meshes()[0];
    CHECK(a->string(m.mesh_name_offset) == "tri");
    CHECK(m.vertex_count == 3);
    CHECK(a->indices(m).size() == 6);
    CHECK(a->string(a->textures()[0].uri_offset) == "t.png");
    CHECK(a->materials()[0].alpha_cutoff == 0.5f);
    CHECK(a->entities()[0].world_bounds == untold::aabb{{0, 0, 0}, {1, 1, 0}});
    CHECK(a->materials()[0].height_scale == 0.05f);
    CHECK(a->materials()[0].transmission_factor == 0.0f);
  }
}

TEST_CASE("golden: the writer reproduces the hand-made bytes exactly, version 4 by default") {
  CHECK(writer_minimal_file(std::nullopt) == test::read_binary(golden_path(4)));
  CHECK(writer_minimal_file(4) == test::read_binary(golden_path(4)));
  CHECK(writer_minimal_file(1) == test::read_binary(golden_path(1)));
}
