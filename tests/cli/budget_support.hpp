// The budget tests' harness (issue 27): run a command of the `untold` tool on
// generated inputs at three sizes and assert that its peak heap (the tool's
// heap meter, tools/cli/heap_meter.cpp, UNTOLD_HEAP_REPORT) and its output stay
// within a stated multiple of the input's size plus a constant. No timing:
// the bounds are on bytes, so a quadratic stage fails them at 10x or 100x.
#pragma once

#include "cli_support.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cli_test {

inline constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

/// The arguments of a quiet `untold cook` of `in` into `out`.
inline std::string cook_command(const fs::path& in, const fs::path& out) {
  return "cook -q " + quoted(in) + " -o " + quoted(out);
}

struct measured_run {
  run_result run;
  std::uint64_t peak_heap = 0;     // bytes held through operator new at the peak
  std::uint64_t output_bytes = 0;  // stdout + stderr + every file under `outputs`
};

inline std::uint64_t bytes_under(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return fs::file_size(p, ec);
  std::uint64_t n = 0;
  if (fs::is_directory(p, ec))
    for (const auto& e : fs::recursive_directory_iterator(p, ec))
      if (e.is_regular_file(ec)) n += e.file_size(ec);
  return n;
}

/// Runs `untold ARGS` with the heap meter on; `outputs` are files or
/// directories the command writes (counted in output_bytes).
inline measured_run run_untold_measured(const std::string& args, const std::vector<fs::path>& outputs = {}) {
  static int counter = 0;
  const fs::path report = fs::path(UNTOLD_CLI_WORK_DIR) / ("heap_" + std::to_string(::getpid()) + "_" +
                                                          std::to_string(counter++) + ".txt");
  fs::create_directories(report.parent_path());
  measured_run m;
  m.run = run_untold("env UNTOLD_HEAP_REPORT=" + quoted(report) + " " + std::string(UNTOLD_CLI) + " " + args,
                     /*raw_command=*/true);
  const std::string text = read_text(report);
  fs::remove(report);
  REQUIRE_MESSAGE(text.rfind("peak_heap_bytes ", 0) == 0, "the tool wrote no heap report");
  m.peak_heap = std::stoull(text.substr(16));
  m.output_bytes = m.run.out.size() + m.run.err.size();
  for (const fs::path& p : outputs) m.output_bytes += bytes_under(p);
  return m;
}

/// The stated bound of one command: peak heap <= heap_per_input_byte x input
/// + heap_constant, output <= output_per_input_byte x input + output_constant.
struct budget_bound {
  double heap_per_input_byte = 0;
  std::uint64_t heap_constant = 0;
  double output_per_input_byte = 0;
  std::uint64_t output_constant = 0;
};

/// Checks one measured run of an input of `input_bytes` against `bound`.
inline void check_within(const measured_run& m, std::uint64_t input_bytes, const budget_bound& bound) {
  INFO("input ", input_bytes, " B: peak heap ", m.peak_heap, " B, output ", m.output_bytes, " B");
  CHECK(static_cast<double>(m.peak_heap) <=
        bound.heap_per_input_byte * static_cast<double>(input_bytes) + static_cast<double>(bound.heap_constant));
  CHECK(static_cast<double>(m.output_bytes) <=
        bound.output_per_input_byte * static_cast<double>(input_bytes) + static_cast<double>(bound.output_constant));
}

}  // namespace cli_test
