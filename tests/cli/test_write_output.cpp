// One atomic write for every output file the tools write
// (tools/pipeline/files.hpp over untold::write_file): a failure names the
// path and the system's reason for its errno, leaves no temporary file and
// leaves the target as it was; the commands report it with exit code 3.
#include "cli_support.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/io.hpp>

#include "files.hpp"

using namespace cli_test;
using untold::errc;

namespace {

std::vector<std::byte> some_bytes(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 13 + 5);
  return v;
}

fs::path temp_of(const fs::path& p) { return fs::path(p.string() + ".tmp"); }

}  // namespace

TEST_CASE("write_output: writes, replaces, and leaves no temporary file") {
  const fs::path dir = scratch("write_output_ok");
  const fs::path target = dir / "out.bin";
  std::ofstream(target) << "old";
  const auto bytes = some_bytes(3000);
  CHECK_FALSE(untold::tools::write_output(target, bytes).has_value());
  const std::string text = read_text(target);
  CHECK(std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                               reinterpret_cast<const std::byte*>(text.data()) + text.size()) == bytes);
  CHECK_FALSE(fs::exists(temp_of(target)));
}

TEST_CASE("write_output: a missing directory names the path and ENOENT's reason") {
  const fs::path dir = scratch("write_output_missing");
  const fs::path target = dir / "missing" / "out.bin";
  const auto failed = untold::tools::write_output(target, some_bytes(10));
  REQUIRE(failed.has_value());
  CHECK(failed->cause.code == errc::io_open_failed);
  CHECK(failed->cause.context.value == ENOENT);
  CHECK(failed->message == "cannot write " + quoted(target) + ": " + std::strerror(ENOENT));
  CHECK_FALSE(fs::exists(temp_of(target)));
}

TEST_CASE("write_output: a directory at the target fails the rename, with EISDIR, the temporary file is removed") {
  const fs::path dir = scratch("write_output_directory");
  const fs::path target = dir / "taken";
  fs::create_directories(target / "inside");
  const auto failed = untold::tools::write_output(target, some_bytes(10));
  REQUIRE(failed.has_value());
  CHECK(failed->cause.code == errc::io_write_failed);
  CHECK(failed->cause.context.value == EISDIR);
  CHECK(failed->message == "cannot write " + quoted(target) + ": " + std::strerror(EISDIR));
  CHECK_FALSE(fs::exists(temp_of(target)));
  CHECK(fs::is_directory(target / "inside"));
}

TEST_CASE("copy_output: copies a file, an unreadable source names it, a failed write leaves no temporary file") {
  const fs::path dir = scratch("copy_output");
  const fs::path from = dir / "image.png";
  const auto bytes = some_bytes(200000);  // more than one chunk of the stream
  REQUIRE(untold::write_file(from, bytes).has_value());
  const fs::path to = dir / "copy.png";
  CHECK_FALSE(untold::tools::copy_output(from, to).has_value());
  CHECK(read_text(to) == read_text(from));
  CHECK_FALSE(fs::exists(temp_of(to)));

  const auto missing = untold::tools::copy_output(dir / "missing.png", dir / "never.png");
  REQUIRE(missing.has_value());
  CHECK(missing->cause.code == errc::io_open_failed);
  CHECK(missing->message == "cannot read " + quoted(dir / "missing.png") + ": " + std::strerror(ENOENT));
  CHECK_FALSE(fs::exists(dir / "never.png"));

  fs::create_directories(dir / "taken" / "inside");
  const auto taken = untold::tools::copy_output(from, dir / "taken");
  REQUIRE(taken.has_value());
  CHECK(taken->message == "cannot write " + quoted(dir / "taken") + ": " + std::strerror(EISDIR));
  CHECK_FALSE(fs::exists(temp_of(dir / "taken")));
}

TEST_CASE("commands that write a file: exit 3, the path and the reason, no temporary file left") {
  const fs::path dir = scratch("write_output_commands");
  const fs::path taken = dir / "adir";
  fs::create_directories(taken);
  const std::string cannot_write = "untold: cannot write " + quoted(taken) + ": " + std::strerror(EISDIR) + "\n";
  const fs::path source = dir / "source";
  fs::create_directories(source);
  std::ofstream(source / "a.txt") << "entry";
  for (const std::string& command :
       {"cook " + quoted(sample_model()) + " -o ", "cook " + quoted(test_data("urho3d/Models/Box.mdl")) + " -o ",
        "recompress --compress lz4 " + quoted(test_data("minimal_v1.untold")) + " -o ",
        "pak create " + quoted(source) + " -o ", "udm convert " + quoted(test_data("udm/models/cube.pmdl_b")) + " "}) {
    CAPTURE(command);
    const run_result r = run_untold(command + quoted(taken));
    CHECK(r.exit_code == 3);
    CHECK(r.err == cannot_write);
    CHECK_FALSE(fs::exists(temp_of(taken)));
  }
  // --json: the error document carries the rule and errno.
  const run_result j = run_untold("udm convert --json " + quoted(test_data("udm/models/cube.pmdl_b")) + " " + quoted(taken));
  CHECK(j.exit_code == 3);
  const nlohmann::json error = nlohmann::json::parse(j.out)["error"];
  CHECK(error["rule"] == "E-IO-WRITE");
  CHECK(error["message"] == std::strerror(EISDIR));
  CHECK(error["context"]["field"] == "errno");
  CHECK(error["context"]["value"] == EISDIR);
  CHECK(error["describe"] == "cannot write " + quoted(taken) + ": " + std::strerror(EISDIR));
}
