// A minimal `untold` with only the fetch subcommand, to test
// tools/fetch_command.cpp against the test server (the real tool wires the
// same add_fetch_command into tools/main.cpp).
#include <CLI/CLI.hpp>

#include "fetch_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"untold fetch (test build)", "untold"};
  app.require_subcommand(1, 1);
  int exit_code = 0;
  untold::tools::add_fetch_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}
