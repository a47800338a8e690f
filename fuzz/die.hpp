// fuzz/die.hpp - how every fuzz target reports a broken property: a message
// on stderr, then abort, so libFuzzer (and fuzz/replay_main.cpp) record the
// input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace untold_fuzz {

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "untold fuzz property violated: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace untold_fuzz
