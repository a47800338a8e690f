// Tests for untold::write_file / write_file_with (untold/io.hpp), the one
// atomic write the library and the tools use: every failure leaves no
// temporary file, leaves the target as it was, and carries errno.
#include <untold/io.hpp>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#if !defined(_WIN32)
#include <csignal>
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;
using untold::errc;

namespace {

/// A fresh, uniquely named directory in the temp directory, removed with
/// everything in it at scope exit.
class scratch_dir {
 public:
  scratch_dir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("untold_write_file_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& get() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::byte> some_bytes(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 7 + 1);
  return v;
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path temp_of(const fs::path& p) { return fs::path(p.string() + ".tmp"); }

/// The OS error number a failed write carries (context.field "errno").
int carried_errno(const untold::status& s) {
  REQUIRE_FALSE(s.has_value());
  CHECK(std::string(s.error().context.field) == "errno");
  CHECK(s.error().context.has_value);
  return static_cast<int>(s.error().context.value);
}

}  // namespace

TEST_CASE("write_file: success replaces the target and leaves no temporary file") {
  scratch_dir dir;
  const fs::path target = dir.get() / "out.bin";
  std::ofstream(target) << "old";
  const auto bytes = some_bytes(1000);
  REQUIRE(untold::write_file(target, bytes).has_value());
  CHECK(file_text(target).size() == 1000);
  CHECK_FALSE(fs::exists(temp_of(target)));
}

TEST_CASE("write_file: a missing directory is E-IO-OPEN with ENOENT") {
  scratch_dir dir;
  const fs::path target = dir.get() / "no_such_dir" / "out.bin";
  const auto s = untold::write_file(target, some_bytes(10));
  CHECK(s.error().code == errc::io_open_failed);
  CHECK(carried_errno(s) == ENOENT);
  CHECK(s.error().describe().find("field errno, value " + std::to_string(ENOENT)) != std::string::npos);
  CHECK_FALSE(fs::exists(temp_of(target)));
}

TEST_CASE("write_file: a directory at the target fails the rename, the temporary file is removed") {
  scratch_dir dir;
  const fs::path target = dir.get() / "taken";
  fs::create_directories(target / "inside");
  const auto s = untold::write_file(target, some_bytes(10));
  CHECK(s.error().code == errc::io_write_failed);
#if !defined(_WIN32)
  CHECK(carried_errno(s) == EISDIR);
#endif
  CHECK_FALSE(fs::exists(temp_of(target)));
  CHECK(fs::is_directory(target / "inside"));  // left as it was
}

TEST_CASE("write_file: a directory in the temporary file's place is an open failure and is not removed") {
  scratch_dir dir;
  const fs::path target = dir.get() / "out.bin";
  fs::create_directories(temp_of(target) / "keep");
  const auto s = untold::write_file(target, some_bytes(10));
  CHECK(s.error().code == errc::io_open_failed);
#if !defined(_WIN32)
  CHECK(carried_errno(s) == EISDIR);
#endif
  CHECK(fs::is_directory(temp_of(target) / "keep"));  // not the writer's to remove
  CHECK_FALSE(fs::exists(target));
}

#if !defined(_WIN32)
TEST_CASE("write_file: an unwritable directory is E-IO-OPEN with EACCES") {
  if (geteuid() == 0) return;  // root writes everywhere; nothing to test
  scratch_dir dir;
  fs::permissions(dir.get(), fs::perms::owner_read | fs::perms::owner_exec);
  const fs::path target = dir.get() / "out.bin";
  const auto s = untold::write_file(target, some_bytes(10));
  CHECK(s.error().code == errc::io_open_failed);
  CHECK(carried_errno(s) == EACCES);
  CHECK_FALSE(fs::exists(temp_of(target)));
}

TEST_CASE("write_file: a write that fails midway (file size limit: EFBIG) removes the temporary file") {
  scratch_dir dir;
  const fs::path target = dir.get() / "out.bin";
  std::ofstream(target) << "old";
  // The limit makes write(2) fail with EFBIG (SIGXFSZ ignored) without
  // filling a disk; it is restored before any check.
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const auto s = untold::write_file(target, some_bytes(1 << 20));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK(s.error().code == errc::io_write_failed);
  CHECK(carried_errno(s) == EFBIG);
  CHECK_FALSE(fs::exists(temp_of(target)));
  CHECK(file_text(target) == "old");  // left as it was
}
#endif

TEST_CASE("write_file_with: a producer's own error comes back unchanged, nothing left behind") {
  scratch_dir dir;
  const fs::path target = dir.get() / "out.bin";
  const auto s = untold::write_file_with(target, [](auto&& sink) -> untold::status {
    const auto bytes = some_bytes(100);
    if (!sink(untold::byte_span(bytes))) return untold::make_error(errc::io_write_failed);
    return untold::make_error(errc::invalid_argument).at_field("producer");
  });
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(std::string(s.error().context.field) == "producer");
  CHECK_FALSE(fs::exists(target));
  CHECK_FALSE(fs::exists(temp_of(target)));
}
