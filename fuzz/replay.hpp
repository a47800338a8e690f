// fuzz/replay.hpp - the fuzz targets as replay_main.cpp sees them, in one
// executable without libFuzzer. fuzz/CMakeLists.txt generates
// replay_targets.cpp: it includes every fuzz_<name>.cpp with its libFuzzer
// entry points renamed (one translation unit, so the library's headers are
// compiled once for all targets, not once per target) and lists them here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace untold_fuzz {

/// libFuzzer's LLVMFuzzerCustomMutator (the generated file declares each
/// target's, weak, with this type).
using custom_mutator_fn = std::size_t(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed);

struct replay_target {
  const char* name;  // fuzz_<name>, as its source file and corpus folder
  int (*test_one_input)(const std::uint8_t* data, std::size_t size);
  custom_mutator_fn* custom_mutator;  // nullptr when the target defines none
};

extern const replay_target replay_targets[];
extern const std::size_t replay_target_count;

}  // namespace untold_fuzz
