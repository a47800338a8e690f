// The `untold render` tests' main: without a Vulkan device they cannot run,
// so it exits with 77 (ctest SKIP_RETURN_CODE) and prints why: a machine
// without Vulkan reports them skipped, never passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "vulkan_offscreen.hpp"

#include "../doctest_main.hpp"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (!test::case_names_selectable()) return 1;
  bool listing = false;  // doctest_discover_tests lists the cases at build time: no device needed
  for (int i = 1; i < argc; ++i)
    if (std::strstr(argv[i], "-list-") != nullptr || std::strcmp(argv[i], "-ltc") == 0) listing = true;
  if (!listing) {
    std::string why_not;
    if (!untold::vulkan::device::create(why_not, "untold_render_tests")) {
      std::printf("skipped: %s\n", why_not.c_str());
      return 77;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
