// tests/doctest_main.hpp - what every test binary's main runs before doctest.
// Include it after `#define DOCTEST_CONFIG_IMPLEMENT` and <doctest/doctest.h>.
//
// ctest runs each test case by its name (doctest_discover_tests), and CMake
// cuts a name at every ';' into names that select nothing: such a case would
// pass under ctest without running. Every binary refuses to run, or to list
// its cases for the discovery, while one of its names has a ';', so the
// build fails until it is renamed.
#pragma once

#include <cstdio>
#include <cstring>

namespace test {

[[nodiscard]] inline bool case_names_selectable() {
  bool ok = true;
  for (const doctest::detail::TestCase& tc : doctest::detail::getRegisteredTests())
    if (std::strchr(tc.m_name, ';') != nullptr) {
      std::fprintf(stderr, "%s:%d: test case name with ';', which ctest cannot select: %s\n", tc.m_file.c_str(),
                   tc.m_line, tc.m_name);
      ok = false;
    }
  return ok;
}

}  // namespace test
