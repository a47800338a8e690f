// Tests for untold/source.hpp: mapped files, range sources and read_file.
#include <untold/source.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#if !defined(_WIN32)
#include <unistd.h>
#include "support.hpp"
#endif

namespace fs = std::filesystem;
using untold::errc;
using bytes = std::vector<std::byte>;

namespace {

using test::random_bytes;


/// A uniquely named path in the temp directory, removed (recursively) at
/// scope exit. Unique per process and call, so parallel ctest runs and test
/// cases never collide.
class temp_path {
 public:
  explicit temp_path(const char* tag) {
    std::random_device rd;
    const auto suffix = std::to_string(rd()) + std::to_string(rd());
    std::error_code ec;
    path_ = fs::temp_directory_path(ec) / (std::string("untold_source_") + tag + "_" + suffix);
  }
  temp_path(const temp_path&) = delete;
  temp_path& operator=(const temp_path&) = delete;
  ~temp_path() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& get() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, const bytes& content) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  REQUIRE(f.good());
  f.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  REQUIRE(f.good());
}

bool same(untold::byte_span a, const bytes& b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }

}  // namespace

TEST_CASE("source: mapped_file of a temp file equals its bytes") {
  for (const std::size_t n : {1u, 7u, 4096u, 4097u, 1u << 20}) {
    temp_path tmp("map");
    const bytes content = random_bytes(n, n);
    write_file(tmp.get(), content);
    auto mapped = untold::mapped_file::open(tmp.get());
    REQUIRE(mapped.has_value());
    CHECK(mapped->size() == n);
    CHECK(same(mapped->bytes(), content));

    // Moves transfer the mapping; the moved-from object is empty.
    untold::mapped_file other = std::move(*mapped);
    CHECK(mapped->bytes().empty());
    CHECK(same(other.bytes(), content));
    untold::mapped_file third = std::move(other);
    CHECK(same(third.bytes(), content));

    // The read-ahead hint changes paging, never the bytes.
    auto ahead = untold::mapped_file::open(tmp.get(), untold::read_ahead::whole_file);
    REQUIRE(ahead.has_value());
    CHECK(same(ahead->bytes(), content));
  }
}

TEST_CASE("source: missing file, directory and empty file") {
  temp_path dir("dir");
  std::error_code ec;
  REQUIRE(fs::create_directory(dir.get(), ec));
  const fs::path missing = dir.get() / "does_not_exist.untold";
  const fs::path empty = dir.get() / "empty.untold";
  write_file(empty, {});

  {
    const auto m = untold::mapped_file::open(missing);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code == errc::io_open_failed);
#if !defined(_WIN32)
    CHECK(m.error().context.has_value);
    CHECK(m.error().context.value == ENOENT);
#endif
  }
  CHECK(untold::mapped_file::open(dir.get()).error().code == errc::io_open_failed);
  CHECK(untold::mapped_file::open(empty).error().code == errc::io_empty_file);

  CHECK(untold::file_range_source::open(missing).error().code == errc::io_open_failed);
  CHECK(untold::file_range_source::open(dir.get()).error().code == errc::io_open_failed);
  CHECK(untold::file_range_source::open(empty).error().code == errc::io_empty_file);

  CHECK(untold::read_file(missing).error().code == errc::io_open_failed);
  CHECK(untold::read_file(dir.get()).error().code == errc::io_open_failed);
  CHECK(untold::read_file(empty).error().code == errc::io_empty_file);
#if !defined(_WIN32)
  CHECK(untold::mapped_file::open(dir.get()).error().context.value == EISDIR);
  CHECK(untold::mapped_file::open("/dev/null").error().code == errc::io_open_failed);  // not a regular file
#endif
}

TEST_CASE("source: unreadable file") {
#if !defined(_WIN32)
  if (geteuid() == 0) return;  // root reads everything; nothing to test
  temp_path tmp("noread");
  write_file(tmp.get(), random_bytes(10, 1));
  fs::permissions(tmp.get(), fs::perms::none);
  const auto m = untold::mapped_file::open(tmp.get());
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error().code == errc::io_open_failed);
  CHECK(m.error().context.value == EACCES);
  CHECK(untold::file_range_source::open(tmp.get()).error().code == errc::io_open_failed);
#endif
}

TEST_CASE("source: memory_range_source serves exact bytes and counts them") {
  const bytes content = random_bytes(1000, 3);
  untold::memory_range_source src(content);
  CHECK(src.size() == 1000);
  bytes out(100);
  REQUIRE(src.read(250, out).has_value());
  CHECK(same(out, bytes(content.begin() + 250, content.begin() + 350)));
  bytes tail(10);
  REQUIRE(src.read(990, tail).has_value());
  CHECK(same(tail, bytes(content.end() - 10, content.end())));
  REQUIRE(src.read(1000, {}).has_value());  // empty read at the end is fine
  CHECK(src.bytes_served() == 110);
  CHECK(src.reads() == 3);

  // Out of range: past the end, straddling the end, offsets that overflow.
  bytes buf(11);
  for (const std::uint64_t offset : {std::uint64_t{990}, std::uint64_t{1000}, std::uint64_t{5000},
                                     UINT64_MAX, UINT64_MAX - 5}) {
    const auto st = src.read(offset, buf);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code == errc::io_read_failed);
    CHECK(st.error().context.value == offset);
  }
  CHECK(src.read(1001, {}).error().code == errc::io_read_failed);
  CHECK(src.bytes_served() == 110);  // failed reads serve nothing
  CHECK(src.reads() == 3);
  src.reset_counters();
  CHECK(src.bytes_served() == 0);
  CHECK(src.reads() == 0);

  // Through the interface.
  untold::range_source& base = src;
  bytes one(1);
  REQUIRE(base.read(0, one).has_value());
  CHECK(one[0] == content[0]);
  CHECK(base.size() == 1000);
}

TEST_CASE("source: file_range_source serves exact bytes and rejects out-of-range reads") {
  temp_path tmp("range");
  const bytes content = random_bytes(300000, 4);
  write_file(tmp.get(), content);
  for (const auto access : {untold::file_access::mapped, untold::file_access::pread}) {
    CAPTURE(static_cast<int>(access));
    auto opened = untold::file_range_source::open(tmp.get(), access);
    REQUIRE(opened.has_value());
    untold::file_range_source src = std::move(*opened);
    CHECK(src.is_mapped() == (access == untold::file_access::mapped));
    CHECK(src.size() == content.size());
    std::mt19937_64 rng(9);
    std::uint64_t served = 0;
    for (int i = 0; i < 200; ++i) {
      const std::size_t offset = rng() % content.size();
      const std::size_t n = rng() % (content.size() - offset + 1);
      bytes out(n);
      REQUIRE(src.read(offset, out).has_value());
      CHECK(std::equal(out.begin(), out.end(), content.begin() + static_cast<std::ptrdiff_t>(offset)));
      served += n;
    }
    bytes all(content.size());
    REQUIRE(src.read(0, all).has_value());
    CHECK(all == content);
    CHECK(src.bytes_served() == served + content.size());
    CHECK(src.reads() == 201);

    bytes buf(2);
    for (const std::uint64_t offset : {std::uint64_t{content.size() - 1}, std::uint64_t{content.size()}, UINT64_MAX}) {
      const auto st = src.read(offset, buf);
      REQUIRE_FALSE(st.has_value());
      CHECK(st.error().code == errc::io_read_failed);
    }
    CHECK(src.reads() == 201);
  }
}

TEST_CASE("source: file_range_source lends views of the mapping equal to what pread reads") {
  temp_path tmp("view");
  const bytes content = random_bytes(200003, 7);  // not a whole number of pages
  write_file(tmp.get(), content);
  auto mapped = untold::file_range_source::open(tmp.get());  // the default maps
  auto pread = untold::file_range_source::open(tmp.get(), untold::file_access::pread);
  REQUIRE(mapped.has_value());
  REQUIRE(pread.has_value());
  REQUIRE(mapped->is_mapped());
  CHECK(mapped->lends_views());
  CHECK_FALSE(pread->lends_views());

  std::mt19937_64 rng(11);
  for (int i = 0; i < 100; ++i) {
    const std::size_t offset = rng() % content.size();
    const std::size_t n = rng() % (content.size() - offset + 1);
    const auto lent = mapped->view(offset, n);
    REQUIRE(lent.has_value());
    bytes copied(n);
    REQUIRE(pread->read(offset, copied).has_value());
    CHECK(same(*lent, copied));
  }
  // Views are in place: one mapping, not a copy per call.
  const auto whole = mapped->view(0, content.size());
  REQUIRE(whole.has_value());
  CHECK(same(*whole, content));
  CHECK(mapped->view(1000, 10)->data() == whole->data() + 1000);
  CHECK(mapped->reads() == 102);  // 100 random views, the whole file, one more
  CHECK(mapped->bytes_served() >= content.size());

  // Out of range, overflowing, or from a source that reads: io_read_failed.
  for (const auto& [offset, n] : {std::pair<std::uint64_t, std::uint64_t>{content.size(), 1},
                                  {content.size() - 1, 2},
                                  {1, UINT64_MAX},
                                  {UINT64_MAX, 1}}) {
    const auto v = mapped->view(offset, n);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code == errc::io_read_failed);
  }
  CHECK(mapped->reads() == 102);  // failures are not counted
  const auto refused = pread->view(0, 1);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::io_read_failed);
  CHECK(std::string(refused.error().context.field) == "view");
  CHECK(mapped->view(content.size(), 0).has_value());  // an empty range at the end is inside

  // The mapping moves with the source.
  untold::file_range_source moved = std::move(*mapped);
  CHECK(moved.view(0, content.size())->data() == whole->data());
}

TEST_CASE("source: memory_range_source lends views of its bytes") {
  const bytes content = random_bytes(1000, 12);
  untold::memory_range_source src(content);
  CHECK(src.lends_views());
  const auto v = src.view(10, 20);
  REQUIRE(v.has_value());
  CHECK(v->data() == content.data() + 10);
  CHECK(v->size() == 20);
  CHECK(src.bytes_served() == 20);
  CHECK(src.reads() == 1);
  CHECK(src.view(990, 11).error().code == errc::io_read_failed);
}

TEST_CASE("source: file_range_source reports a file that shrank") {
#if !defined(_WIN32)
  // read() is a positional read with or without a mapping (only views carry
  // mapped_file's caveat), so a shrunk file is an error, never a signal.
  for (const auto access : {untold::file_access::mapped, untold::file_access::pread}) {
    temp_path tmp("shrink");
    write_file(tmp.get(), random_bytes(5000, 5));
    auto src = untold::file_range_source::open(tmp.get(), access);
    REQUIRE(src.has_value());
    REQUIRE(::truncate(tmp.get().c_str(), 1000) == 0);
    bytes out(100);
    REQUIRE(src->read(900, out).has_value());  // still there
    const auto st = src->read(4000, out);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code == errc::io_read_failed);
    CHECK(st.error().context.value == 4000);
  }
#endif
}

TEST_CASE("source: read_file returns the whole file and honours max_size") {
  temp_path tmp("read");
  const bytes content = random_bytes(123457, 6);
  write_file(tmp.get(), content);
  auto r = untold::read_file(tmp.get());
  REQUIRE(r.has_value());
  CHECK(*r == content);
  CHECK(untold::read_file(tmp.get(), content.size()).has_value());
  const auto limited = untold::read_file(tmp.get(), content.size() - 1);
  REQUIRE_FALSE(limited.has_value());
  CHECK(limited.error().code == errc::limit_exceeded);
  CHECK(limited.error().context.value == content.size());
}
