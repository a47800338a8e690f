// Writer: round trips of a realistic scene, layout rules of spec 7,
// determinism, version selection and rejected input.
#include "../support.hpp"

#include <untold/io.hpp>

#include <algorithm>
#include <iterator>
#include <set>

using test::bytes;

namespace {

untold::asset open_ok(const bytes& f, untold::open_options options = {.deep_checks = true}) {
  auto a = untold::open(f, options);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  return std::move(*a);
}

std::vector<std::uint32_t> read_indices(untold::byte_span b, std::uint32_t type) {
  std::vector<std::uint32_t> out;
  const std::size_t size = untold::index_size(type);
  for (std::size_t i = 0; i + size <= b.size(); i += size)
    out.push_back(size == 2 ? untold::load_le_unchecked<std::uint16_t>(b.data() + i)
                            : untold::load_le_unchecked<std::uint32_t>(b.data() + i));
  return out;
}

bool same_bytes(untold::byte_span a, untold::byte_span b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

TEST_CASE("a realistic scene round-trips at format versions 1, 3 and 4") {
  struct variant {
    bool height;
    bool remap;
    std::uint32_t version;
  };
  for (const variant v : {variant{false, false, 1}, variant{true, false, 3}, variant{true, true, 4}}) {
    CAPTURE(v.version);
    untold::builder b;
    std::vector<test::grid> grids;
    test::fill_realistic_scene(b, grids, v.height, v.remap);
    CHECK(b.minimum_format_version() == v.version);
    auto file = b.finish({.format_version = v.version});
    REQUIRE(file.has_value());
    const untold::asset a = open_ok(*file);

    CHECK(a.format_version() == v.version);
    CHECK(a.file_type() == untold::file_type::tile);
    CHECK(a.header().entity_count == 4);
    CHECK(a.header().mesh_count == 4);
    CHECK(a.header().material_count == 2);
    CHECK(a.header().texture_ref_count == 2);

    // Entities keep names, hierarchy (ids = rows) and transforms.
    const auto entities = a.entities();
    REQUIRE(entities.size() == 4);
    const char* names[] = {"root", "house", "room", "floor"};
    const std::uint32_t parents[] = {untold::none, 0, 1, 0};
    for (std::uint32_t i = 0; i < 4; ++i) {
      CHECK(a.string(entities[i].name_offset) == names[i]);
      CHECK(entities[i].entity_id == i);
      CHECK(entities[i].parent_entity_id == parents[i]);
    }
    CHECK(entities[1].local_transform[12] == 10.0f);

    // Meshes are grouped by entity: house(walls), room(walls, ceiling), floor(terrain).
    const auto meshes = a.meshes();
    REQUIRE(meshes.size() == 4);
    const char* mesh_names[] = {"walls", "walls", "ceiling", "terrain"};
    const std::uint32_t owners[] = {1, 2, 2, 3};
    const std::size_t grid_of[] = {0, 0, 2, 1};
    for (std::uint32_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      const untold::mesh_record m = meshes[i];
      CHECK(a.string(m.mesh_name_offset) == mesh_names[i]);
      CHECK(m.entity_id == owners[i]);
      const test::grid& g = grids[grid_of[i]];
      CHECK(same_bytes(a.vertices(m), g.vertices));
      CHECK(read_indices(a.indices(m), m.index_type) == g.indices);
      CHECK(m.vertex_stride_bytes == 32);
      CHECK(m.index_data_offset % 4 == 0);
      CHECK(m.estimated_gpu_bytes ==
            m.vertex_count * 32ull + (m.index_count + m.edge_index_count()) * untold::index_size(m.index_type));
    }
    CHECK(meshes[0].index_type == 1);
    CHECK(meshes[3].index_type == 2);  // 90000 vertices
    CHECK(meshes[0].mesh_name_offset == meshes[1].mesh_name_offset);  // deduplicated
    CHECK(meshes[0].material_index == untold::none);
    CHECK(read_indices(a.edge_indices(meshes[1]), 1) == std::vector<std::uint32_t>(grids[0].indices.begin(), grids[0].indices.begin() + 6));
    CHECK(a.edge_indices(meshes[0]).empty());

    // Entities address their meshes; bounds are filled.
    CHECK(entities[2].first_mesh_record_index == 1);
    CHECK(entities[2].mesh_record_count == 2);
    CHECK(entities[0].mesh_record_count == 0);
    CHECK(meshes[3].local_bounds == untold::aabb{{0, 0, 1}, {299 * 0.01f, 299 * 0.01f, 1}});
    CHECK(entities[2].local_bounds == untold::aabb{{0, 0, -2}, {3, 3, 0}});
    CHECK(entities[2].world_bounds == untold::aabb{{10, 0, -2}, {13, 3, 0}});  // house moved by +10 x
    CHECK(a.header().world_bounds == untold::aabb{{0, 0, -2}, {13, 3, 1}});

    // Materials and textures.
    const auto materials = a.materials();
    REQUIRE(materials.size() == 2);
    CHECK(a.string(materials[0].name_offset) == "wall");
    CHECK(materials[0].base_color_factor == untold::float4{0.8f, 0.7f, 0.6f, 1.0f});
    CHECK(materials[0].base_color_texture == 0);
    CHECK(materials[0].normal_texture == 1);
    CHECK(materials[0].height_texture == (v.height ? 1u : untold::none));
    CHECK(materials[0].height_scale == (v.height ? 0.1f : 0.05f));
    CHECK(materials[0].height_remap_min == (v.remap ? -1.0f : 0.0f));
    CHECK(materials[0].height_remap_max == (v.remap ? 2.0f : 1.0f));
    CHECK(materials[1].base_color_texture == 0);  // shared texture
    CHECK(materials[1].roughness_channel() == untold::texture_channel::g);
    CHECK(materials[1].metallic_channel() == untold::texture_channel::b);
    const auto textures = a.textures();
    CHECK(a.string(textures[0].uri_offset) == "Textures/wall_albedo.png");
    CHECK(textures[1].texture_format == static_cast<std::uint32_t>(untold::texture_format::bc5));
    CHECK(textures[0].mip_count == 11);
    CHECK(a.string(entities[3].name_offset).data() == a.string(materials[1].name_offset).data());  // "floor" once
  }
}

TEST_CASE("layout follows spec 7: order, alignment, zero padding, no empty optional chunk") {
  const bytes f = test::write_scene();
  const untold::asset a = open_ok(f);
  std::vector<std::uint32_t> types;
  std::uint64_t previous_end = 204 + 40 * a.chunks().size();
  std::vector<bool> is_payload(f.size(), false);
  for (const untold::chunk_entry& c : a.chunks()) {
    types.push_back(c.chunk_type);
    CHECK(c.file_offset % 16 == 0);
    CHECK(c.file_offset >= previous_end);
    CHECK(c.file_offset - previous_end < 16);  // packed: only alignment padding
    previous_end = c.file_offset + c.compressed_size;
    for (std::uint64_t i = c.file_offset; i < previous_end; ++i) is_payload[i] = true;
  }
  CHECK(types == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 18});
  CHECK(previous_end == f.size());
  for (std::size_t i = 204 + 40 * a.chunks().size(); i < f.size(); ++i)
    if (!is_payload[i]) CHECK(f[i] == std::byte{0});
  // Reserved header bytes are zero.
  for (std::size_t i = 172; i < 204; ++i) CHECK(f[i] == std::byte{0});
}

TEST_CASE("an empty builder writes every required chunk, empty") {
  untold::builder b;
  auto f = b.finish({.block_digests = false});  // exactly the required chunks
  REQUIRE(f.has_value());
  const untold::asset a = open_ok(*f);
  CHECK(a.chunks().size() == 7);
  for (const untold::chunk_entry& c : a.chunks()) CHECK(c.compressed_size == 0);
  CHECK(a.header().world_bounds == untold::aabb{});
  CHECK(a.meshes().empty());
}

TEST_CASE("output is deterministic") {
  untold::write_options options;
  options.compression.data = {untold::compression::zstd, 5};
  options.compression.metadata = {untold::compression::lz4, 9};
  const bytes a = test::write_scene(true, options);
  const bytes b = test::write_scene(true, options);
  CHECK(a == b);
  CHECK(test::write_scene() == test::write_scene());
}

TEST_CASE("format version 4 by default (spec 7), an older one on request when it expresses the content") {
  const auto version_of = [](const untold::material_desc& m, std::optional<std::uint32_t> requested = {}) {
    untold::builder b;
    b.add_material(m);
    auto f = b.finish({.format_version = requested});
    return f ? static_cast<int>(open_ok(*f).format_version()) : -1;
  };
  const auto lowest = [](const untold::material_desc& m) {
    untold::builder b;
    b.add_material(m);
    return b.minimum_format_version();
  };
  CHECK(version_of({}) == 4);
  CHECK(version_of({.height_remap_max = 3.0f}) == 4);
  CHECK(lowest({}) == 1);
  CHECK(lowest({.emissive_factor = {1, 0, 0}}) == 2);  // v1 readers ignore emissive
  CHECK(lowest({.height_scale = 0.2f}) == 3);
  CHECK(lowest({.height_midlevel = 0.0f}) == 3);
  CHECK(lowest({.height_remap_max = 3.0f}) == 4);
  CHECK(lowest({.transmission_factor = 0.5f}) == 4);
  CHECK(version_of({}, 1) == 1);
  CHECK(version_of({}, 3) == 3);
  CHECK(version_of({.emissive_factor = {1, 0, 0}}, 2) == 2);
  CHECK(version_of({.emissive_factor = {1, 0, 0}}, 1) == -1);  // cannot express it
  CHECK(version_of({.height_remap_max = 3.0f}, 3) == -1);
  CHECK(version_of({}, 5) == -1);
  CHECK(version_of({}, 0) == -1);
}

TEST_CASE("bad input to the writer is a returned error, not a corrupt file") {
  const test::grid g = test::make_grid(3);
  const auto first_error = [](untold::builder& b) { return b.finish().has_value() ? std::string("ok") : std::string(b.finish().error().context.field); };

  SUBCASE("index >= vertex count") {
    untold::builder b;
    const auto e = b.add_entity({});
    const std::vector<std::uint32_t> bad = {0, 1, 9};
    b.add_mesh({.entity = e, .vertices = g.vertices, .indices = bad});
    CHECK(b.first_error().code == untold::errc::invalid_argument);
    CHECK(first_error(b) == "indices");
  }
  SUBCASE("edge index >= vertex count") {
    untold::builder b;
    const auto e = b.add_entity({});
    const std::vector<std::uint32_t> bad = {0, 9};
    b.add_mesh({.entity = e, .vertices = g.vertices, .indices = g.indices, .edge_indices = bad});
    CHECK(first_error(b) == "edgeIndices");
  }
  SUBCASE("dangling material") {
    untold::builder b;
    const auto e = b.add_entity({});
    b.add_mesh({.entity = e, .material = 0, .vertices = g.vertices, .indices = g.indices});
    CHECK(first_error(b) == "materialIndex");
  }
  SUBCASE("dangling entity") {
    untold::builder b;
    b.add_mesh({.entity = 3, .vertices = g.vertices, .indices = g.indices});
    CHECK(first_error(b) == "entity");
  }
  SUBCASE("dangling texture") {
    untold::builder b;
    b.add_material({.normal_texture = 0});
    CHECK(first_error(b) == "textureIndex");
  }
  SUBCASE("a string with a NUL or invalid UTF-8") {
    untold::builder b;
    b.add_entity({.name = std::string_view("a\0b", 3)});
    CHECK(first_error(b) == "name");
    untold::builder c;
    c.add_texture({.uri = "\xC3\x28"});
    CHECK(first_error(c) == "uri");
  }
  SUBCASE("parent not added before the child") {
    untold::builder b;
    b.add_entity({.parent = 0});
    CHECK(first_error(b) == "parent");
  }
  SUBCASE("duplicate entity ids") {
    untold::builder b;
    b.add_entity({.entity_id = 5});
    b.add_entity({.entity_id = 5});
    CHECK(first_error(b) == "entity_id");
  }
  SUBCASE("vertex bytes not a multiple of 32") {
    untold::builder b;
    const auto e = b.add_entity({});
    b.add_mesh({.entity = e, .vertices = untold::byte_span(g.vertices).first(40)});
    CHECK(first_error(b) == "vertices");
  }
  SUBCASE("non-finite position") {
    untold::builder b;
    const auto e = b.add_entity({});
    bytes v = g.vertices;
    test::put_f32(v, 32 + 8, std::numeric_limits<float>::infinity());
    b.add_mesh({.entity = e, .vertices = v, .indices = g.indices});
    CHECK(first_error(b) == "position");
  }
  SUBCASE("uint16 forced with too many vertices") {
    untold::builder b;
    const test::grid big = test::make_grid(300);
    const auto e = b.add_entity({});
    b.add_mesh({.entity = e, .vertices = big.vertices, .indices = big.indices, .index_type = untold::index_type::uint16});
    CHECK(first_error(b) == "indices");
  }
  SUBCASE("unknown texture format") {
    untold::builder b;
    b.add_texture({.format = static_cast<untold::texture_format>(12)});
    CHECK(first_error(b) == "format");
  }
}

TEST_CASE("custom entity ids and parents by id") {
  untold::builder b;
  const auto root = b.add_entity({.name = "root", .entity_id = 100});
  b.add_entity({.name = "child", .parent = root, .entity_id = 7});
  auto f = b.finish();
  REQUIRE(f.has_value());
  const untold::asset a = open_ok(*f);
  CHECK(a.entities()[1].parent_entity_id == 100);
  CHECK(a.entity_row(7) == 1u);
  CHECK(a.entity_row(100) == 0u);
  CHECK_FALSE(a.entity_row(0).has_value());
}

TEST_CASE("unknown core and plugin chunks survive a read and a rewrite") {
  untold::builder b;
  const bytes unknown = {std::byte{1}, std::byte{2}, std::byte{3}};
  const bytes opaque(40, std::byte{0x5A});
  const bytes plugin = *untold::encode_plugin_chunk("com.example.test", 7, 2, opaque);  // envelope + payload
  b.add_raw_chunk(28, unknown, 3);  // 23..27 are core tables now (28 is the first unknown type)
  b.add_raw_chunk(0x8001, plugin);
  auto f = b.finish({.block_digests = false});  // the raw chunks alone
  REQUIRE(f.has_value());
  const untold::asset a = open_ok(*f);
  const auto raw = a.raw_chunks();
  REQUIRE(raw.size() == 2);
  CHECK(a.chunks()[raw[0]].chunk_type == 28);
  CHECK(a.chunks()[raw[0]].element_count == 3);
  CHECK(same_bytes(a.payload(raw[0]), unknown));
  CHECK(a.chunks()[raw[1]].chunk_type == 0x8001);
  CHECK(same_bytes(a.payload(raw[1]), plugin));
  CHECK(untold::chunk_type_name(0x8001) == "plugin");

  untold::builder c;
  c.add_raw_chunk(5, unknown);  // a known type is not raw
  CHECK(c.first_error().code == untold::errc::invalid_argument);
  untold::builder d;
  d.add_raw_chunk(0x8001, opaque);  // a plugin chunk needs its envelope
  CHECK(d.first_error().code == untold::errc::invalid_argument);
}

TEST_CASE("write() streams the same bytes to a sink") {
  untold::builder b;
  std::vector<test::grid> grids;
  test::fill_realistic_scene(b, grids);
  bytes streamed;
  const auto status = b.write([&](untold::byte_span chunk) {
    streamed.insert(streamed.end(), chunk.begin(), chunk.end());
    return true;
  });
  CHECK(status.has_value());
  CHECK(streamed == *b.finish());
  CHECK_FALSE(b.write([](untold::byte_span) { return false; }).has_value());
}

TEST_CASE("uncompressed chunks are never copied: payloads view the input buffer") {
  const bytes f = test::write_scene();
  const untold::asset a = open_ok(f);
  for (std::size_t row = 0; row < a.chunks().size(); ++row) {
    const auto p = a.payload(row);
    if (p.empty()) continue;
    CHECK(p.data() == f.data() + a.chunks()[row].file_offset);
  }
}

// ---- streaming, threads, digests over geometry in pieces (issue 19 item 5) --------------

namespace {

// Many small meshes (uint16 indices with an odd triangle count: 2 padding
// bytes before the next mesh's indices) and a raw chunk, so that 4 KiB digest
// blocks straddle meshes, padding and pieces.
struct piecewise_scene {
  std::vector<test::grid> grids;
  untold::builder b;
  piecewise_scene() {
    const auto entity = b.add_entity({.name = "root"});
    for (std::uint32_t i = 0; i < 40; ++i) {
      test::grid g = test::make_grid(3 + i % 5, static_cast<float>(i));
      g.indices.resize(g.indices.size() / 6 * 6 - 3);  // an odd number of triangles
      grids.push_back(std::move(g));
    }
    for (const test::grid& g : grids) b.add_mesh({.entity = entity, .vertices = g.vertices, .indices = g.indices});
    const bytes opaque(5000, std::byte{0x5A});
    b.add_raw_chunk(0x7000, opaque, 1);
  }
};

}  // namespace

TEST_CASE("the bytes do not depend on write_options::threads") {
  piecewise_scene s;
  std::vector<test::grid> grids;
  untold::builder big;
  test::fill_realistic_scene(big, grids);
  for (untold::builder* b : {&s.b, &big})
    for (const untold::compression c : {untold::compression::none, untold::compression::lz4, untold::compression::zstd}) {
      if (!untold::compression_available(c)) continue;
      CAPTURE(static_cast<int>(c));
      untold::write_options o{.content_hash = true, .block_digests = true, .digest_block_size = 4096};
      o.compression.metadata = o.compression.data = {c, 0};
      o.threads = 1;
      const auto one = b->finish(o);
      REQUIRE(one.has_value());
      for (const unsigned threads : {2u, 3u, 8u, 0u}) {
        CAPTURE(threads);
        o.threads = threads;
        CHECK(*b->finish(o) == *one);
        bytes streamed;
        CHECK(b->write([&](untold::byte_span piece) {
                       streamed.insert(streamed.end(), piece.begin(), piece.end());
                       return true;
                     }, o)
                  .has_value());
        CHECK(streamed == *one);
      }
      CHECK(open_ok(*one, {.integrity = untold::integrity::full}).meshes().size() > 0);
    }
}

TEST_CASE("block digests of geometry written in pieces match the bytes, block by block") {
  piecewise_scene s;
  const auto built = s.b.finish({.content_hash = true, .block_digests = true, .digest_block_size = 4096});
  REQUIRE(built.has_value());
  const bytes& f = *built;
  const untold::asset a = open_ok(f, {.integrity = untold::integrity::full});
  const auto chunks = a.chunks();
  REQUIRE(chunks[0].chunk_type == untold::integrity_chunk_type);
  const auto d = untold::parse_integrity_chunk(a.payload(0), chunks, 0);
  REQUIRE(d.has_value());
  // Every block digest recomputed here from the file's bytes, independently
  // of the writer's pieces.
  std::size_t k = 0, straddling = 0;
  for (std::uint32_t row = 1; row < chunks.size(); ++row) {
    const untold::chunk_entry& c = chunks[row];
    for (std::uint64_t at = 0; at < c.compressed_size; at += 4096, ++k) {
      const std::uint64_t length = std::min<std::uint64_t>(4096, c.compressed_size - at);
      const auto digest = untold::sha256_of(untold::byte_span(f).subspan(c.file_offset + at, length));
      REQUIRE(digest.has_value());
      CHECK(std::equal(digest->begin(), digest->end(),
                       reinterpret_cast<const std::uint8_t*>(d->block_digests.data()) + 32 * k));
      straddling += c.chunk_type == static_cast<std::uint32_t>(untold::chunk_type::index_data);
    }
  }
  CHECK(k == d->digest_count);
  CHECK(straddling > 1);  // index data spans several blocks, so blocks cross meshes and padding
  // Padding between uint16 index ranges is zero and ranges start 4-byte aligned.
  for (const untold::mesh_record& m : a.meshes()) CHECK(m.index_data_offset % 4 == 0);
}

TEST_CASE("the builder copies its input: changing the caller's arrays after add_mesh changes nothing") {
  piecewise_scene s;
  const auto before = s.b.finish();
  REQUIRE(before.has_value());
  for (test::grid& g : s.grids) {
    std::fill(g.vertices.begin(), g.vertices.end(), std::byte{0xEE});
    std::fill(g.indices.begin(), g.indices.end(), 0u);
  }
  CHECK(*s.b.finish() == *before);
}

TEST_CASE("write_file_with streams the builder's bytes into the file, a failure leaves no file") {
  piecewise_scene s;
  const auto dir = std::filesystem::temp_directory_path() / "untold_test_write_stream";
  std::filesystem::create_directories(dir);
  const auto path = dir / "scene.untold";
  std::filesystem::remove(path);
  const untold::write_options o{.content_hash = true, .block_digests = true};
  REQUIRE(untold::write_file_with(path, [&](auto&& sink) { return s.b.write(sink, o); }).has_value());
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bytes on_disk(reinterpret_cast<const std::byte*>(text.data()),
                      reinterpret_cast<const std::byte*>(text.data()) + text.size());
  CHECK(on_disk == *s.b.finish(o));

  // A builder error reaches the caller unchanged and nothing is left behind.
  const auto failed = untold::write_file_with(dir / "bad.untold", [&](auto&& sink) {
    return s.b.write(sink, {.format_version = 99});
  });
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == untold::errc::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.untold"));
  CHECK_FALSE(std::filesystem::exists(dir / "bad.untold.tmp"));
  std::filesystem::remove_all(dir);
}
