// Helpers of the stand-alone CLI checkers (one ctest each, no doctest):
// cook_check.cpp and texture_compress_check.cpp. A failed check prints
// "FAIL: what" and is counted; main returns 1 when any failed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <sys/wait.h>

namespace check_support {

inline int failures = 0;

inline void check(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

inline void check_equal(std::uint64_t got, std::uint64_t want, const std::string& what) {
  check(got == want, what + ": " + std::to_string(got) + ", expected " + std::to_string(want));
}

/// A path in single quotes for a shell command line.
inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

/// Runs a shell command: its exit status, or -1 when it did not exit normally.
inline int run(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace check_support
