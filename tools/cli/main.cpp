// untold - the command-line tool. One file per subcommand (tools/cli/),
// each thin over the library and the pipeline (tools/pipeline/); this file
// only lists them. See docs/cli.md. Exit codes: 0 ok, 1 invalid input,
// 2 usage, 3 I/O.
#include <exception>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace {

namespace cli = untold::tools::cli;

int run(int argc, char** argv) {
  cli::context ctx;
  ctx.version = UNTOLD_VERSION_STRING;
  CLI::App app{
      "untold: inspect, validate, cook, build and stream runtime 3D assets: .untold, Urho3D (.mdl .ani .pak), "
      "Pragma UDM/PMDL and assetc (.hmesh .hmat .hman .hpack .hanim)",
      "untold"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", "untold " + ctx.version);
  app.footer("Exit codes: 0 success, 1 invalid input, 2 usage error, 3 I/O error (cannot read or write a file).\n"
             "Run 'untold help COMMAND' or 'untold COMMAND --help' for the options of a command.");

  cli::add_info_command(app, ctx);
  cli::add_validate_command(app, ctx);
  cli::add_dump_command(app, ctx);
  cli::add_cook_command(app, ctx);
  cli::add_cook_tile_command(app, ctx);
  cli::add_convert_command(app, ctx);
  cli::add_recompress_command(app, ctx);
  cli::add_manifest_command(app, ctx);
  cli::add_stream_sim_command(app, ctx);
#if defined(UNTOLD_CLI_FETCH)
  cli::add_fetch_command(app, ctx);
#endif
  cli::add_pak_command(app, ctx);
  cli::add_udm_command(app, ctx);
  cli::add_check_command(app, ctx);
  cli::add_pack_command(app, ctx);
  cli::add_build_command(app, ctx);
  cli::add_render_command(app, ctx);
  cli::add_help_command(app, ctx);
  cli::add_version_command(app, ctx);

  try {
    app.parse(argc, argv);  // the subcommand runs inside, from its callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? cli::exit_ok : cli::exit_usage;
  }
  return ctx.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::filesystem::filesystem_error& e) {  // names the path and the system's reason
    cli::complain(cli::escaped(e.what()));
    return cli::exit_io;
  } catch (const std::exception& e) {  // e.g. out of memory
    cli::complain("error: " + cli::escaped(e.what()));
    return cli::exit_invalid;
  }
}
