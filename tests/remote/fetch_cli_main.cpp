// A minimal `untold` with only the fetch subcommand, to test
// tools/cli/fetch.cpp against the test server (the real tool lists the same
// add_fetch_command in tools/cli/main.cpp).
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  namespace cli = untold::tools::cli;
  CLI::App app{"untold fetch (test build)", "untold"};
  app.require_subcommand(1, 1);
  cli::context ctx;
  cli::add_fetch_command(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? cli::exit_ok : cli::exit_usage;
  }
  return ctx.exit_code;
}
