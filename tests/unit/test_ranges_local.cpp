// streamed_asset over bytes in memory (a mapped local file; issue 19 item 6):
// chunks are viewed in place rather than copied, and every rule still runs
// exactly as over a range source that copies.
#include "../support.hpp"

#include <untold/ranges.hpp>

#include <string>

using test::bytes;

namespace {

bool inside(untold::byte_span part, const bytes& whole) {
  return !part.empty() && part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

/// load_all's outcome through a copying source and over the bytes in place.
std::pair<std::string, std::string> load_all_both_ways(const bytes& f, const untold::stream_options& options) {
  const auto outcome = [](untold::result<untold::streamed_asset>& s) {
    if (!s) return "open: " + s.error().describe();
    const auto st = s->load_all();
    return st ? std::string("loaded") : st.error().describe();
  };
  untold::memory_range_source source(f);
  auto copied = untold::streamed_asset::open(source, options);
  auto viewed = untold::streamed_asset::open(untold::byte_span(f), options);
  return {outcome(copied), outcome(viewed)};
}

}  // namespace

TEST_CASE("ranges local: load_all over bytes views every uncompressed chunk in place") {
  const bytes f = test::write_scene(true);
  auto s = untold::streamed_asset::open(untold::byte_span(f), {.open = {.deep_checks = true}});
  REQUIRE_MESSAGE(s, s.error().describe());
  REQUIRE(s->load_all());
  const untold::asset& a = s->metadata();
  for (const auto type : {untold::chunk_type::vertex_data, untold::chunk_type::index_data})
    CHECK(inside(a.payload(type), f));
  std::uint64_t stored = 0;
  for (const auto& c : a.chunks()) stored += c.compressed_size;
  CHECK(s->bytes_read() >= stored);  // counted as read, though not copied

  // The same geometry as untold::open gives.
  auto whole = untold::open(f);
  REQUIRE(whole);
  const auto m = whole->meshes()[1];
  const auto v = a.vertices(a.meshes()[1]);
  REQUIRE(v.size() == whole->vertices(m).size());
  CHECK(std::equal(v.begin(), v.end(), whole->vertices(m).begin()));
}

TEST_CASE("ranges local: load_mesh over bytes returns what a copying source returns") {
  const bytes f = test::write_scene();
  untold::memory_range_source source(f);
  auto copied = untold::streamed_asset::open(source, {.open = {.deep_checks = true}});
  auto viewed = untold::streamed_asset::open(untold::byte_span(f), {.open = {.deep_checks = true}});
  REQUIRE(copied);
  REQUIRE(viewed);
  for (std::uint32_t row = 0; row < copied->metadata().meshes().size(); ++row) {
    const auto a = copied->load_mesh(row), b = viewed->load_mesh(row);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->vertices == b->vertices);
    CHECK(a->indices == b->indices);
    CHECK(a->edge_indices == b->edge_indices);
  }
}

TEST_CASE("ranges local: a changed byte, a bad index: the same errors either way") {
  const bytes clean = test::write_scene(true, {.block_digests = false});  // R-HASH both ways
  const untold::stream_options deep{.open = {.deep_checks = true}};
  {
    const auto [copied, viewed] = load_all_both_ways(clean, deep);
    CHECK(copied == "loaded");
    CHECK(viewed == "loaded");
  }
  {  // one geometry byte changed: R-HASH
    bytes f = clean;
    f[test::chunk_payload_offset(f, static_cast<std::uint32_t>(untold::chunk_type::vertex_data)) + 40] ^= std::byte{1};
    const auto [copied, viewed] = load_all_both_ways(f, deep);
    CHECK(copied.find("R-HASH") != std::string::npos);
    CHECK(viewed == copied);
  }
  {  // an index past vertexCount in an unhashed file: R-INDEX-VALUE with deep checks, loaded without
    bytes f = test::write_scene(false);
    auto whole = untold::open(f);
    REQUIRE(whole);
    const auto m = whole->meshes()[0];
    untold::store_le_unchecked<std::uint16_t>(
        f.data() + test::chunk_payload_offset(f, static_cast<std::uint32_t>(untold::chunk_type::index_data)) +
            m.index_data_offset + 2,
        static_cast<std::uint16_t>(m.vertex_count));
    const auto [copied, viewed] = load_all_both_ways(f, deep);
    CHECK(copied.find("R-INDEX-VALUE") != std::string::npos);
    CHECK(viewed == copied);
    CHECK(load_all_both_ways(f, {}).second == "loaded");
  }
}
