#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "doctest_main.hpp"

int main(int argc, char** argv) {
  if (!test::case_names_selectable()) return 1;
  doctest::Context context(argc, argv);
  return context.run();
}
