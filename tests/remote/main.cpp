// doctest main for the remote tests: a peer closing a socket must be an
// error value, never SIGPIPE.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>

#include "../doctest_main.hpp"

int main(int argc, char** argv) {
  if (!test::case_names_selectable()) return 1;
  std::signal(SIGPIPE, SIG_IGN);
  doctest::Context context(argc, argv);
  return context.run();
}
