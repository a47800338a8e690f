// Byte-range loading with deep checks (issue 18 item 10): every mesh that
// streamed_asset::load_mesh hands out has passed its deep rules - indices and
// edge indices below vertexCount (R-INDEX-VALUE), finite positions inside
// the mesh's bounds (R-FINITE, R-BOUNDS) - with the same errors untold::open
// reports for the whole file.
#include "../support.hpp"

#include <untold/ranges.hpp>

#include <limits>
#include <string>

using test::bytes;

namespace {

constexpr std::uint32_t kIndex = 7, kVertex = 6, kEdge = 18;

const untold::stream_options deep{.open = {.deep_checks = true}};

/// The error load_mesh(mesh) reports under `options`, or "loaded".
std::string load_rule(const bytes& f, std::uint32_t mesh, const untold::stream_options& options) {
  untold::memory_range_source source(f);
  auto tile = untold::streamed_asset::open(source, options);
  REQUIRE_MESSAGE(tile, tile.error().describe());
  const auto loaded = tile->load_mesh(mesh);
  return loaded ? std::string("loaded") : std::string(loaded.error().rule_id());
}

untold::mesh_record mesh_of(const bytes& f, std::uint32_t row) {
  auto whole = untold::open(f);
  REQUIRE(whole);
  return whole->meshes()[row];
}

}  // namespace

TEST_CASE("ranges: load_mesh with deep checks refuses an index past vertexCount") {
  bytes f = test::write_scene();  // unhashed and uncompressed: bytes can be patched
  const auto m = mesh_of(f, 0);
  REQUIRE(m.index_type == static_cast<std::uint32_t>(untold::index_type::uint16));
  const std::size_t at = test::chunk_payload_offset(f, kIndex) + static_cast<std::size_t>(m.index_data_offset) + 2 * 4;
  untold::store_le_unchecked<std::uint16_t>(f.data() + at, static_cast<std::uint16_t>(m.vertex_count));

  untold::memory_range_source source(f);
  auto tile = untold::streamed_asset::open(source, deep);
  REQUIRE(tile);
  const auto bad = tile->load_mesh(0);
  REQUIRE_FALSE(bad);
  // The same error untold::open reports with deep checks: value, bound, position.
  CHECK(bad.error().rule_id() == "R-INDEX-VALUE");
  CHECK(bad.error().context.record_index == 0);
  CHECK(bad.error().context.value == m.vertex_count);
  CHECK(bad.error().context.limit == m.vertex_count);
  CHECK(bad.error().subject() == "index 4");
  const auto whole = untold::open(f, deep.open);
  REQUIRE_FALSE(whole);
  CHECK(whole.error().describe() == bad.error().describe());
  {  // into caller memory: the same error
    const auto sizes = tile->mesh_sizes(0);
    REQUIRE(sizes);
    std::vector<std::byte> vertices((*sizes)[0]), indices((*sizes)[1]), edges((*sizes)[2]);
    const auto into = tile->load_mesh_into(0, {vertices, indices, edges});
    REQUIRE_FALSE(into);
    CHECK(into.error().describe() == bad.error().describe());
  }

  // Other meshes still load; without deep checks the index is handed out,
  // as documented (SECURITY.md).
  CHECK(tile->load_mesh(2));  // the ceiling: bytes of its own
  CHECK(load_rule(f, 0, {}) == "loaded");
}

TEST_CASE("ranges: load_mesh with deep checks refuses an edge index past vertexCount") {
  bytes f = test::write_scene();
  auto whole = untold::open(f);
  REQUIRE(whole);
  std::uint32_t row = 0;
  while (row < whole->meshes().size() && whole->meshes()[row].edge_index_count() == 0) ++row;
  REQUIRE(row < whole->meshes().size());
  const auto m = whole->meshes()[row];
  const std::size_t at = test::chunk_payload_offset(f, kEdge) + static_cast<std::size_t>(m.edge_index_offset());
  untold::store_le_unchecked<std::uint16_t>(f.data() + at, static_cast<std::uint16_t>(m.vertex_count + 7));
  CHECK(load_rule(f, row, {}) == "loaded");
  CHECK(load_rule(f, row, deep) == "R-INDEX-VALUE");
}

TEST_CASE("ranges: load_mesh with deep checks refuses non-finite and out-of-bounds positions") {
  SUBCASE("NaN position") {
    bytes f = test::write_scene();
    const auto m = mesh_of(f, 0);
    test::put_f32(f, test::chunk_payload_offset(f, kVertex) + static_cast<std::size_t>(m.vertex_data_offset) + 32 + 4,
                  std::numeric_limits<float>::quiet_NaN());
    CHECK(load_rule(f, 0, {}) == "loaded");
    CHECK(load_rule(f, 0, deep) == "R-FINITE");
  }
  SUBCASE("position outside localBounds") {
    bytes f = test::write_scene();
    const auto m = mesh_of(f, 0);
    test::put_f32(f, test::chunk_payload_offset(f, kVertex) + static_cast<std::size_t>(m.vertex_data_offset),
                  m.local_bounds.max[0] + 10.0f);
    CHECK(load_rule(f, 0, {}) == "loaded");
    CHECK(load_rule(f, 0, deep) == "R-BOUNDS");
  }
}

TEST_CASE("ranges: with deep checks every mesh of a valid file loads, compressed or not") {
  for (const auto method : {untold::compression::none, untold::compression::lz4, untold::compression::zstd}) {
    if (!untold::compression_available(method)) continue;
    untold::write_options options;
    options.compression.data = {method, 0};
    const bytes f = test::write_scene(true, options);
    auto whole = untold::open(f, deep.open);
    REQUIRE(whole);
    untold::memory_range_source source(f);
    auto tile = untold::streamed_asset::open(source, deep);
    REQUIRE(tile);
    for (std::uint32_t i = 0; i < whole->meshes().size(); ++i) {
      const auto mesh = tile->load_mesh(i);
      REQUIRE_MESSAGE(mesh, mesh.error().describe());
      CHECK(std::equal(mesh->indices.begin(), mesh->indices.end(), whole->indices(whole->meshes()[i]).begin(),
                       whole->indices(whole->meshes()[i]).end()));
    }
  }
}
