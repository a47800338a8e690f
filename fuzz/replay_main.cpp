// fuzz/replay_main.cpp - runs the fuzz targets without libFuzzer:
// `untold_fuzz_replay TARGET PATH...` sends every file named, or inside a
// directory named (sorted, recursively), once through TARGET's
// LLVMFuzzerTestOneInput. Any compiler; the ctest replay tests use it to run
// each target over its committed corpus. Every target is in this one
// executable (replay.hpp). A target that defines LLVMFuzzerCustomMutator
// (fuzz_structured) also gets mutants_per_input mutants of every input, from
// fixed seeds, so the mutator runs in every build; LLVMFuzzerMutate, which
// libFuzzer provides to it, is a deterministic byte flip here.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "replay.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size) {
  static std::uint32_t state = 1;
  if (size == 0 || max_size == 0) return 0;
  state = state * 1664525u + 1013904223u;
  data[(state >> 8) % size] ^= static_cast<std::uint8_t>(1u << (state >> 29));
  return size;
}

namespace {
constexpr unsigned mutants_per_input = 16;
constexpr std::size_t max_mutant_size = 1 << 20;
}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using untold_fuzz::replay_targets;
  const untold_fuzz::replay_target* target = nullptr;
  for (std::size_t i = 0; argc > 1 && i < untold_fuzz::replay_target_count; ++i)
    if (std::strcmp(replay_targets[i].name, argv[1]) == 0) target = &replay_targets[i];
  if (target == nullptr) {
    std::fprintf(stderr, "usage: untold_fuzz_replay TARGET PATH...\ntargets:");
    for (std::size_t i = 0; i < untold_fuzz::replay_target_count; ++i) std::fprintf(stderr, " %s", replay_targets[i].name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 2; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", p.string().c_str());
      return 2;
    }
    std::vector<std::uint8_t> bytes(chars.begin(), chars.end());
    // A fresh heap copy of exactly the file's size, so ASan sees any overread.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.string().c_str(), bytes.size());
    target->test_one_input(bytes.empty() ? nullptr : bytes.data(), bytes.size());
    if (target->custom_mutator == nullptr) continue;
    for (unsigned seed = 1; seed <= mutants_per_input; ++seed) {
      std::vector<std::uint8_t> mutant(bytes);
      mutant.resize(std::max(max_mutant_size, bytes.size()));
      mutant.resize(target->custom_mutator(mutant.data(), bytes.size(), mutant.size(), seed));
      target->test_one_input(mutant.empty() ? nullptr : mutant.data(), mutant.size());
    }
  }
  std::printf("replay: %s: %zu inputs passed\n", target->name, inputs.size());
  return inputs.empty() ? 1 : 0;
}
