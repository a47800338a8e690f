// Helpers for the command-line tests: run the built `untold` binary and
// capture its exit code, stdout and stderr; a scratch directory per test.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

namespace cli_test {

namespace fs = std::filesystem;

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A file's bytes (empty when it cannot be read).
inline std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string text = read_text(p);
  const auto* b = reinterpret_cast<const std::byte*>(text.data());
  return {b, b + text.size()};
}

/// Writes `bytes` to `p`, replacing it; returns `p`.
inline fs::path write_bytes(const fs::path& p, std::span<const std::byte> bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return p;
}

inline std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

/// A fresh, empty directory under the build tree for one test.
inline fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(UNTOLD_CLI_WORK_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Runs `untold ARGS` (ARGS already shell-quoted where needed), or with
/// raw_command the whole command line ARGS as given.
inline run_result run_untold(const std::string& args, bool raw_command = false) {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::path(UNTOLD_CLI_WORK_DIR) / "runs";
  fs::create_directories(dir);
  const std::string id = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const fs::path out = dir / (id + ".out"), err = dir / (id + ".err");
  const std::string command =
      (raw_command ? args : std::string(UNTOLD_CLI) + " " + args) + " > " + quoted(out) + " 2> " + quoted(err);
  const int status = std::system(command.c_str());
  run_result r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

/// `text` as JSON; a parse failure fails the test with the text.
inline nlohmann::json parse_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), text);
  return j;
}

/// Copies `from` to `to`, making `to`'s folder and replacing `to`.
inline void copy_into(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

inline fs::path test_data(const std::string& name) { return fs::path(UNTOLD_TEST_DATA_DIR) / name; }
inline fs::path sample_model() { return fs::path(UNTOLD_SAMPLE_DIR) / "sample.gltf"; }

/// The models directory of Debian's assimp-testmodels, as tests/cli/CMakeLists.txt
/// found it (dpkg) or $UNTOLD_ASSIMP_MODELS_DIR; empty when not installed.
inline fs::path assimp_models_dir() {
  if (const char* e = std::getenv("UNTOLD_ASSIMP_MODELS_DIR"); e != nullptr && *e != '\0') return fs::path(e);
  return fs::path(UNTOLD_ASSIMP_MODELS_DIR);
}

/// One model of that package, e.g. "glTF2/Box/glTF/Box.gltf".
inline fs::path assimp_model(const std::string& rel) {
  REQUIRE_MESSAGE(!assimp_models_dir().empty(), "assimp-testmodels is not installed (scripts/install-deps.sh)");
  return assimp_models_dir() / rel;
}

}  // namespace cli_test
