// Byte-range loading: open reads only the metadata prefix, a mesh reads only
// its own ranges, and the streamed asset equals the whole-file open.
#include "../support.hpp"

#include <untold/io.hpp>
#include <untold/ranges.hpp>

#include <filesystem>

using test::bytes;

namespace {

std::uint64_t metadata_end(const untold::asset& a) {
  std::uint64_t end = 0;
  for (const untold::chunk_entry& c : a.chunks())
    if (untold::is_metadata_chunk(c.chunk_type)) end = std::max(end, c.file_offset + c.compressed_size);
  return end;
}

bool equal(untold::byte_span a, untold::byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

}  // namespace

TEST_CASE("ranges: opening reads exactly the header, table and metadata prefix") {
  const bytes f = test::write_scene(true, {.block_digests = false});  // the read plan of a file without them
  auto whole = untold::open(f);
  REQUIRE(whole.has_value());

  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src, {.initial_read = 0});
  REQUIRE_MESSAGE(tile.has_value(), tile.error().describe());
  CHECK(src.bytes_served() == metadata_end(*whole));
  CHECK(src.reads() == 3);  // header, table, metadata
  CHECK(tile->metadata_ranges().size() == 1);
  CHECK(tile->metadata_ranges()[0].end() == metadata_end(*whole));
  CHECK(src.bytes_served() < f.size() / 10);

  // Same records as the whole-file open.
  const untold::asset& m = tile->metadata();
  REQUIRE(m.meshes().size() == whole->meshes().size());
  for (std::size_t i = 0; i < m.meshes().size(); ++i) CHECK(m.meshes()[i] == whole->meshes()[i]);
  CHECK(m.string(m.entities()[2].name_offset) == "room");
  CHECK_FALSE(m.is_loaded(*m.find_chunk(untold::chunk_type::vertex_data)));
  CHECK(m.vertices(m.meshes()[0]).empty());  // not loaded yet
}

TEST_CASE("ranges: the default first read covers a small tile's metadata in one request") {
  const bytes f = test::write_scene();
  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src);
  REQUIRE(tile.has_value());
  CHECK(src.reads() == 1);
  CHECK(src.bytes_served() == 64 * 1024);
}

TEST_CASE("ranges: one mesh reads only its own vertex and index ranges") {
  const bytes f = test::write_scene();
  auto whole = untold::open(f);
  REQUIRE(whole.has_value());
  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src, {.initial_read = 0});
  REQUIRE(tile.has_value());

  for (std::uint32_t i = 0; i < whole->meshes().size(); ++i) {
    CAPTURE(i);
    const untold::mesh_record m = whole->meshes()[i];
    const auto ranges = tile->ranges_for_mesh(i);
    std::uint64_t planned = 0;
    for (const auto& r : ranges) planned += r.size;
    CHECK(planned == m.vertex_data_size_bytes + m.index_data_size_bytes +
                         std::uint64_t{m.edge_index_count()} * untold::index_size(m.index_type));
    src.reset_counters();
    auto mesh = tile->load_mesh(i);
    REQUIRE(mesh.has_value());
    CHECK(src.bytes_served() == planned);
    CHECK(equal(mesh->vertices, whole->vertices(m)));
    CHECK(equal(mesh->indices, whole->indices(m)));
    CHECK(equal(mesh->edge_indices, whole->edge_indices(m)));
  }
  CHECK_FALSE(tile->load_mesh(99).has_value());
  CHECK(tile->ranges_for_mesh(99).empty());
}

TEST_CASE("ranges: load_mesh_into writes load_mesh's bytes into caller memory, reading the same ranges") {
  struct variant {
    const char* name;
    bool content_hash;
    untold::write_options options;
  };
  untold::write_options lz4;
  lz4.compression.data = {untold::compression::lz4, 0};
  for (const variant& v : {variant{"block digests (default)", true, {}},
                           variant{"no digests, no hash", false, {}},
                           variant{"lz4 geometry", true, lz4}}) {
    CAPTURE(v.name);
    const bytes f = test::write_scene(v.content_hash, v.options);
    auto whole = untold::open(f, {.integrity = untold::integrity::full});
    REQUIRE(whole.has_value());
    untold::memory_range_source by_vector(f), by_span(f);
    auto a = untold::streamed_asset::open(by_vector, {.open = {.deep_checks = true}, .initial_read = 0});
    auto b = untold::streamed_asset::open(by_span, {.open = {.deep_checks = true}, .initial_read = 0});
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    for (std::uint32_t i = 0; i < whole->meshes().size(); ++i) {
      CAPTURE(i);
      const untold::mesh_record m = whole->meshes()[i];
      const auto sizes = b->mesh_sizes(i);
      REQUIRE(sizes.has_value());
      CHECK((*sizes)[0] == whole->vertices(m).size());
      CHECK((*sizes)[1] == whole->indices(m).size());
      CHECK((*sizes)[2] == whole->edge_indices(m).size());
      // Poisoned caller memory: every byte must be overwritten.
      std::vector<std::byte> vertices((*sizes)[0], std::byte{0xCD}), indices((*sizes)[1], std::byte{0xCD}),
          edges((*sizes)[2], std::byte{0xCD});
      by_vector.reset_counters();
      by_span.reset_counters();
      const auto expected = a->load_mesh(i);
      REQUIRE(expected.has_value());
      const auto status = b->load_mesh_into(i, {vertices, indices, edges});
      REQUIRE_MESSAGE(status.has_value(), status.error().describe());
      CHECK(by_span.bytes_served() == by_vector.bytes_served());
      CHECK(equal(vertices, whole->vertices(m)));
      CHECK(equal(indices, whole->indices(m)));
      CHECK(equal(edges, whole->edge_indices(m)));
      CHECK(vertices == expected->vertices);
    }
    // Spans of the wrong size, and a mesh past the end, are refused before anything is read.
    const auto sizes = b->mesh_sizes(0);
    REQUIRE(sizes.has_value());
    std::vector<std::byte> vertices((*sizes)[0] + 1), indices((*sizes)[1]), edges((*sizes)[2]);
    by_span.reset_counters();
    const auto too_big = b->load_mesh_into(0, {vertices, indices, edges});
    REQUIRE_FALSE(too_big.has_value());
    CHECK(too_big.error().code == untold::errc::invalid_argument);
    CHECK(std::string(too_big.error().context.field) == "vertices");
    CHECK(too_big.error().context.value == (*sizes)[0] + 1);
    CHECK(by_span.bytes_served() == 0);
    const auto past_end = b->load_mesh_into(static_cast<std::uint32_t>(whole->meshes().size()), {});
    REQUIRE_FALSE(past_end.has_value());
    CHECK(std::string(past_end.error().context.field) == "mesh_index");
    CHECK_FALSE(b->mesh_sizes(static_cast<std::uint32_t>(whole->meshes().size())).has_value());
  }
}

TEST_CASE("ranges: load_mesh_into verifies block digests like load_mesh") {
  bytes f = test::write_scene(true);  // default options: block digests
  auto whole = untold::open(f);
  REQUIRE(whole.has_value());
  const untold::mesh_record m = whole->meshes()[0];
  const auto vertex_row = *whole->find_chunk(untold::chunk_type::vertex_data);
  // One byte of mesh 0's vertices changed: R-BLOCK-HASH from both.
  f[whole->chunks()[vertex_row].file_offset + m.vertex_data_offset] ^= std::byte{0x40};
  untold::memory_range_source src(f);
  auto s = untold::streamed_asset::open(src);
  REQUIRE(s.has_value());
  const auto sizes = s->mesh_sizes(0);
  REQUIRE(sizes.has_value());
  std::vector<std::byte> vertices((*sizes)[0]), indices((*sizes)[1]), edges((*sizes)[2]);
  const auto status = s->load_mesh_into(0, {vertices, indices, edges});
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().rule_id() == "R-BLOCK-HASH");
  CHECK(s->load_mesh(0).error().rule_id() == "R-BLOCK-HASH");
}

TEST_CASE("ranges: compressed geometry loads whole chunks once, then serves from memory") {
  untold::write_options options;
  options.compression.data = {untold::compression::lz4, 0};
  const bytes f = test::write_scene(true, options);
  auto whole = untold::open(f);
  REQUIRE(whole.has_value());
  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src, {.initial_read = 0});
  REQUIRE(tile.has_value());
  const auto& vertex_chunk = whole->chunks()[*whole->find_chunk(untold::chunk_type::vertex_data)];
  REQUIRE(vertex_chunk.compression_type == 1);
  const auto first = tile->ranges_for_mesh(0);
  CHECK(std::any_of(first.begin(), first.end(), [&](const untold::byte_range& r) {
    return r.offset <= vertex_chunk.file_offset && r.end() >= vertex_chunk.file_offset + vertex_chunk.compressed_size;
  }));
  for (std::uint32_t i = 0; i < whole->meshes().size(); ++i) {
    auto mesh = tile->load_mesh(i);
    REQUIRE(mesh.has_value());
    CHECK(equal(mesh->vertices, whole->vertices(whole->meshes()[i])));
  }
  src.reset_counters();
  CHECK(tile->ranges_for_mesh(2).empty());  // no edge indices; both chunks decoded
  REQUIRE(tile->load_mesh(2).has_value());
  CHECK(src.bytes_served() == 0);
}

TEST_CASE("ranges: load_all verifies the hash and runs deep checks like open") {
  bytes f = test::write_scene(true, {.block_digests = false});  // R-HASH: block digests would answer first
  {
    untold::memory_range_source src(f);
    untold::stream_options options;
    options.open.deep_checks = true;
    auto tile = untold::streamed_asset::open(src, options);
    REQUIRE(tile.has_value());
    CHECK(tile->load_all().has_value());
    const untold::asset& a = tile->metadata();
    for (std::size_t row = 0; row < a.chunks().size(); ++row) CHECK(a.is_loaded(row));
  }
  // A flipped geometry byte passes open (metadata is intact) but not load_all.
  f[test::chunk_payload_offset(f, 6) + 40] ^= std::byte{0x10};
  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src);
  REQUIRE(tile.has_value());
  const auto status = tile->load_all();
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().rule_id() == "R-HASH");
}

TEST_CASE("ranges: with current block digests, load_all checks the contentHash only with integrity::full, as open does") {
  const auto load_all_rule = [](const bytes& file, untold::integrity mode) -> std::string {
    untold::memory_range_source src(file);
    untold::stream_options options;
    options.open.integrity = mode;
    auto tile = untold::streamed_asset::open(src, options);
    REQUIRE(tile.has_value());
    const auto status = tile->load_all();
    return status ? "loaded" : std::string(status.error().rule_id());
  };
  const auto whole_rule = [](const bytes& file, untold::integrity mode) -> std::string {
    auto a = untold::open(file, {.integrity = mode});
    if (!a) return std::string(a.error().rule_id());
    const auto all = untold::verify_all(*a);
    return all ? "loaded" : std::string(all.error().rule_id());
  };
  bytes f = test::write_scene(true);  // default options: contentHash and block digests
  REQUIRE(untold::open(f).has_value());
  REQUIRE(untold::has_block_digests(*untold::open(f)));
  SUBCASE("a contentHash byte changed: the block digests are stale then, and the contentHash decides") {
    f[140] ^= std::byte{0x01};  // the chunk is bound to the old one: stale, ignored, R-HASH over the whole file
    CHECK(load_all_rule(f, untold::integrity::lazy) == "R-HASH");
    CHECK(whole_rule(f, untold::integrity::lazy) == "R-HASH");
    CHECK(load_all_rule(f, untold::integrity::full) == "R-HASH");
    CHECK(whole_rule(f, untold::integrity::full) == "R-HASH");
    CHECK(load_all_rule(f, untold::integrity::none) == "loaded");
  }
  SUBCASE("a geometry byte changed: its block digest rejects it in lazy and full") {
    f[test::chunk_payload_offset(f, 6) + 40] ^= std::byte{0x10};
    CHECK(load_all_rule(f, untold::integrity::lazy) == "R-BLOCK-HASH");
    CHECK(whole_rule(f, untold::integrity::lazy) == "R-BLOCK-HASH");
    CHECK(load_all_rule(f, untold::integrity::full) == "R-BLOCK-HASH");
    CHECK(load_all_rule(f, untold::integrity::none) == "loaded");
  }
}

TEST_CASE("ranges: the same rules reject a bad file at open") {
  bytes f = test::write_scene();
  test::put_u32(f, test::record_offset(f, 3, 1, 104) + 8, 7);  // R-MESH-MATERIAL
  untold::memory_range_source src(f);
  auto tile = untold::streamed_asset::open(src, {.initial_read = 0});
  REQUIRE_FALSE(tile.has_value());
  CHECK(tile.error().rule_id() == "R-MESH-MATERIAL");

  const bytes truncated(f.begin(), f.begin() + 100);
  untold::memory_range_source short_src(truncated);
  auto t2 = untold::streamed_asset::open(short_src);
  REQUIRE_FALSE(t2.has_value());
  CHECK(t2.error().rule_id() == "R-TRUNC-HEADER");
}

TEST_CASE("coalesce merges touching and padded ranges only") {
  using untold::byte_range;
  const auto merged = untold::coalesce({{100, 10}, {0, 50}, {60, 20}, {50, 5}, {300, 0}});
  CHECK(merged == std::vector<byte_range>{{0, 80}, {100, 10}});
  CHECK(untold::coalesce({{0, 10}, {26, 4}}, 16) == std::vector<byte_range>{{0, 30}});
  CHECK(untold::coalesce({{0, 10}, {27, 4}}, 16).size() == 2);
}

TEST_CASE("open_file maps a file from a path, write_file writes it atomically") {
  const auto dir = std::filesystem::temp_directory_path() / "untold_test_io";
  std::filesystem::create_directories(dir);
  const auto path = dir / "scene.untold";
  const bytes f = test::write_scene(true);
  REQUIRE(untold::write_file(path, f).has_value());
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  auto opened = untold::open_file(path, {.deep_checks = true});
  REQUIRE_MESSAGE(opened.has_value(), opened.error().describe());
  CHECK(opened->asset.meshes().size() == 4);
  CHECK(opened->file.bytes().size() == f.size());

  CHECK(untold::open_file(dir / "missing.untold").error().code == untold::errc::io_open_failed);
  const auto empty = dir / "empty.untold";
  REQUIRE(untold::write_file(empty, {}).has_value());
  // An empty file is the same condition as an empty buffer: R-TRUNC-HEADER.
  CHECK(untold::open_file(empty).error().code == untold::errc::truncated_header);
  CHECK(untold::open(untold::byte_span{}).error().code == untold::errc::truncated_header);
  const auto too_short = dir / "short.untold";
  REQUIRE(untold::write_file(too_short, untold::byte_span(f).first(100)).has_value());
  CHECK(untold::open_file(too_short).error().rule_id() == "R-TRUNC-HEADER");
  CHECK(untold::write_file(dir / "no_such_dir" / "x.untold", f).error().code == untold::errc::io_open_failed);
  std::filesystem::remove_all(dir);
}
