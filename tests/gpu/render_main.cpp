// The render tests' main: finds a Vulkan device first and exits with 77
// (ctest SKIP_RETURN_CODE) and a message saying why when there is none, so a
// machine without Vulkan reports the tests as skipped, not passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "render_support.hpp"

#include "../doctest_main.hpp"

#include <cstdio>
#include <cstring>

namespace untold_gpu_test {
device* the_device = nullptr;
}

int main(int argc, char** argv) {
  if (!test::case_names_selectable()) return 1;
  bool listing = false;  // doctest_discover_tests lists the cases at build time: no device needed
  for (int i = 1; i < argc; ++i)
    if (std::strstr(argv[i], "-list-") != nullptr || std::strcmp(argv[i], "-ltc") == 0) listing = true;
  std::unique_ptr<untold_gpu_test::device> dev;
  if (!listing) {
    std::string why_not;
    dev = untold_gpu_test::device::create(why_not, "untold_gpu_render_tests");
    if (!dev) {
      std::printf("SKIPPED: %s\n", why_not.c_str());
      return untold_gpu_test::skip_exit_code;
    }
    std::printf("Vulkan device: %s\n", dev->name().c_str());
    untold_gpu_test::the_device = dev.get();
  }
  doctest::Context context(argc, argv);
  return context.run();
}
