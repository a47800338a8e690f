// fuzz/replay_main.cpp - runs a fuzz target without libFuzzer: every file
// named on the command line, or inside a directory named there (sorted,
// recursively), goes once through LLVMFuzzerTestOneInput. Any compiler; the
// ctest replay tests use it to run each target over its committed corpus.
// A target that defines LLVMFuzzerCustomMutator (fuzz_structured) also gets
// mutants_per_input mutants of every input, from fixed seeds, so the
// mutator runs in every build; LLVMFuzzerMutate, which libFuzzer provides
// to it, is a deterministic byte flip here.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                                                      std::size_t max_size, unsigned int seed);

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
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
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
    LLVMFuzzerTestOneInput(bytes.empty() ? nullptr : bytes.data(), bytes.size());
    if (LLVMFuzzerCustomMutator == nullptr) continue;
    for (unsigned seed = 1; seed <= mutants_per_input; ++seed) {
      std::vector<std::uint8_t> mutant(bytes);
      mutant.resize(std::max(max_mutant_size, bytes.size()));
      mutant.resize(LLVMFuzzerCustomMutator(mutant.data(), bytes.size(), mutant.size(), seed));
      LLVMFuzzerTestOneInput(mutant.empty() ? nullptr : mutant.data(), mutant.size());
    }
  }
  std::printf("replay: %zu inputs passed\n", inputs.size());
  return inputs.empty() ? 1 : 0;
}
