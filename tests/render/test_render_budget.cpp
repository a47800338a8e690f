// The budget test of `untold render` (budget_support.hpp): generated .untold
// grids at 1x, 10x and 100x, each rendered at 64 x 64; the tool's peak heap
// and output must stay within the stated bounds. The importers' own budgets
// are tested per format in tests/cli (test_budget_*.cpp); this one covers
// what render adds on top: the pose (posed copies of every vertex), the
// triangles kept for upload and the image (bounded by its size, not the
// input). Vulkan's buffers are the driver's allocations (lavapipe: malloc),
// not seen by the heap meter; they hold 24 bytes per vertex and 4 per index.
#include <doctest/doctest.h>

#include "budget_support.hpp"
#include "render_files.hpp"

#include <cstdint>
#include <fstream>
#include <vector>

using namespace cli_test;

TEST_CASE("budget: render of a .untold grid at 1x, 10x, 100x") {
  // Heap <= 8 x input + 8 MiB, output <= 64 KiB (a 64 x 64 PNG and a line).
  // Measured on lavapipe: 1.38 MB at 14 KB, 1.76 MB at 130 KB, 5.78 MB at
  // 1.29 MB (3.5 x input + 1.3 MB: the scene, its posed copy, the kept
  // indices); output 330-530 bytes.
  const budget_bound bound{.heap_per_input_byte = 8, .heap_constant = 8u << 20,
                           .output_per_input_byte = 0, .output_constant = 64u << 10};
  const fs::path dir = scratch("budget");
  for (const std::uint32_t k : {1u, 10u, 100u}) {
    const std::vector<std::byte> file = render_test::grid_untold(30 * k);
    const fs::path input = dir / ("grid_" + std::to_string(k) + ".untold");
    std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    const fs::path out = dir / ("grid_" + std::to_string(k) + ".png");
    const measured_run m = run_untold_measured("render -q --size 64 " + quoted(input) + " -o " + quoted(out), {out});
    INFO("k = " << k << ": " << m.run.err);
    REQUIRE(m.run.exit_code == 0);
    MESSAGE("render grid x" << k << ": input " << file.size() << " B, peak heap " << m.peak_heap << " B, output "
                            << m.output_bytes << " B");
    check_within(m, file.size(), bound);
  }
}
