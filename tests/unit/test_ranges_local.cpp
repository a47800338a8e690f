// streamed_asset over bytes in memory (a mapped local file; issue 19 item 6):
// chunks are viewed in place rather than copied, and every rule still runs
// exactly as over a range source that copies.
#include "../support.hpp"

#include <untold/io.hpp>
#include <untold/ranges.hpp>

#include <filesystem>
#include <string>
#include <random>
#include <system_error>

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

namespace {

/// A uniquely named temp file (parallel ctest runs never collide), removed at scope exit.
class temp_file {
 public:
  temp_file(const char* name, untold::byte_span content)
      : path_(std::filesystem::temp_directory_path() /
              ("untold_ranges_local_" + std::to_string(std::random_device{}()) + "_" + name)) {
    REQUIRE(untold::write_file(path_, content).has_value());
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

/// load_all's outcome through a file_range_source of `path` opened with `access`.
std::string load_all_from_file(const std::filesystem::path& path, untold::file_access access,
                               const untold::stream_options& options) {
  auto source = untold::file_range_source::open(path, access);
  REQUIRE(source);
  auto s = untold::streamed_asset::open(*source, options);
  if (!s) return "open: " + s.error().describe();
  const auto st = s->load_all();
  return st ? std::string("loaded") : st.error().describe();
}

}  // namespace

TEST_CASE("ranges local: a local file by default is viewed in its mapping, pread copies the same bytes") {
  untold::write_options compressed;
  compressed.compression.data = {untold::compression::lz4, 0};  // geometry decoded, metadata viewed
  for (const auto& options : {untold::write_options{}, compressed}) {
    const bytes f = test::write_scene(true, options);
    const temp_file file("scene.untold", f);
    auto whole = untold::open(f, {.deep_checks = true});
    REQUIRE(whole);

    auto mapped = untold::file_range_source::open(file.path());  // what a user reaches for first
    auto pread = untold::file_range_source::open(file.path(), untold::file_access::pread);
    REQUIRE(mapped);
    REQUIRE(pread);
    REQUIRE(mapped->is_mapped());
    const auto mapping = mapped->view(0, mapped->size());
    REQUIRE(mapping);
    const auto in_mapping = [&](untold::byte_span part) {
      return !part.empty() && part.data() >= mapping->data() && part.data() + part.size() <= mapping->data() + mapping->size();
    };

    auto viewed = untold::streamed_asset::open(*mapped, {.open = {.deep_checks = true}});
    auto copied = untold::streamed_asset::open(*pread, {.open = {.deep_checks = true}});
    REQUIRE_MESSAGE(viewed, viewed.error().describe());
    REQUIRE_MESSAGE(copied, copied.error().describe());
    REQUIRE(viewed->load_all());
    REQUIRE(copied->load_all());
    CHECK(viewed->bytes_read() >= f.size() / 2);
    for (std::uint32_t row = 0; row < whole->chunks().size(); ++row) {
      CAPTURE(row);
      const auto expected = whole->payload(row), a = viewed->metadata().payload(row), b = copied->metadata().payload(row);
      CHECK(std::equal(a.begin(), a.end(), expected.begin(), expected.end()));
      CHECK(std::equal(b.begin(), b.end(), expected.begin(), expected.end()));
      CHECK_FALSE(in_mapping(b));
      // Stored raw and outside open's prefix: lent in place, no copy.
      const auto& c = whole->chunks()[row];
      if (c.compression_type == 0 && c.file_offset >= untold::stream_options{}.initial_read) CHECK(in_mapping(a));
      if (c.compression_type != 0) CHECK_FALSE(in_mapping(a));
    }
  }
}

TEST_CASE("ranges local: a truncated or altered local file is rejected through either access") {
  const bytes clean = test::write_scene(true, {.block_digests = false});
  const untold::stream_options deep{.open = {.deep_checks = true}};
  {  // cut inside the geometry: the table points past the end
    const temp_file file("cut.untold", untold::byte_span(clean).first(clean.size() - 100));
    const std::string viewed = load_all_from_file(file.path(), untold::file_access::mapped, deep);
    CHECK(viewed.rfind("open: ", 0) == 0);
    CHECK(viewed == load_all_from_file(file.path(), untold::file_access::pread, deep));
  }
  {  // cut inside the header
    const temp_file file("short.untold", untold::byte_span(clean).first(100));
    auto source = untold::file_range_source::open(file.path());
    REQUIRE(source);
    auto s = untold::streamed_asset::open(*source);
    REQUIRE_FALSE(s);
    CHECK(s.error().rule_id() == "R-TRUNC-HEADER");
  }
  {  // one geometry byte changed: R-HASH at load_all
    bytes f = clean;
    f[test::chunk_payload_offset(f, static_cast<std::uint32_t>(untold::chunk_type::vertex_data)) + 40] ^= std::byte{1};
    const temp_file file("changed.untold", f);
    const std::string viewed = load_all_from_file(file.path(), untold::file_access::mapped, deep);
    CHECK(viewed.find("R-HASH") != std::string::npos);
    CHECK(viewed == load_all_from_file(file.path(), untold::file_access::pread, deep));
  }
}

TEST_CASE("ranges local: load_chunk_into decodes into caller memory of exactly the declared size") {
  untold::write_options compressed;
  compressed.compression.data = {untold::compression::lz4, 0};
  const bytes f = test::write_scene(false, compressed);
  auto whole = untold::open(f);
  REQUIRE(whole);
  const std::uint32_t row = *whole->find_chunk(untold::chunk_type::vertex_data);
  REQUIRE(whole->chunks()[row].compression_type != 0);
  const untold::byte_span expected = whole->payload(row);

  untold::memory_range_source lending(f);
  const temp_file file("into.untold", f);
  auto pread = untold::file_range_source::open(file.path(), untold::file_access::pread);
  REQUIRE(pread);
  for (untold::range_source* source : {static_cast<untold::range_source*>(&lending),
                                       static_cast<untold::range_source*>(&*pread)}) {
    auto s = untold::streamed_asset::open(*source);
    REQUIRE(s);
    bytes out(expected.size() + 1);
    // One byte too many or too few: rejected before anything is read.
    const std::uint64_t before = s->bytes_read();
    CHECK(s->load_chunk_into(row, out).error().code == untold::errc::invalid_argument);
    CHECK(s->load_chunk_into(row, untold::mutable_byte_span(out).first(expected.size() - 1)).error().code ==
          untold::errc::invalid_argument);
    CHECK(s->bytes_read() == before);
    CHECK(s->load_chunk_into(static_cast<std::uint32_t>(whole->chunks().size()), out).error().code ==
          untold::errc::invalid_argument);
    REQUIRE(s->load_chunk_into(row, untold::mutable_byte_span(out).first(expected.size())));
    CHECK(std::equal(expected.begin(), expected.end(), out.begin()));
    CHECK_FALSE(s->metadata().is_loaded(row));  // the asset does not keep it
  }
  {  // a corrupt stored stream: R-DECOMPRESS, as load_chunk reports it
    bytes bad = f;
    const auto& c = whole->chunks()[row];
    for (std::uint64_t i = 0; i < 64; ++i) bad[static_cast<std::size_t>(c.file_offset + c.compressed_size / 2 + i)] = std::byte{0xFF};
    untold::memory_range_source src(bad);
    auto s = untold::streamed_asset::open(src);
    REQUIRE(s);
    bytes out(expected.size());
    const auto st = s->load_chunk_into(row, out);
    REQUIRE_FALSE(st);
    CHECK(st.error().rule_id() == "R-DECOMPRESS");
    CHECK(st.error().context.chunk_index == row);
  }
}
