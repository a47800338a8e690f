// tools/cli_commands.hpp - the `untold` subcommands, one file each, thin
// over the library and the tooling (inspect, cook, recompress, formats).
// Each add_* registers a subcommand whose callback stores its exit code in
// ctx.exit_code. docs/cli.md describes them.
#pragma once

#include <string>

#include "cli_common.hpp"

namespace untold::tools::cli {

void add_info_command(CLI::App& app, context& ctx);        // cli_inspect.cpp
void add_validate_command(CLI::App& app, context& ctx);    // cli_inspect.cpp
void add_dump_command(CLI::App& app, context& ctx);        // cli_inspect.cpp
void add_cook_command(CLI::App& app, context& ctx);        // cli_cook.cpp
void add_recompress_command(CLI::App& app, context& ctx);  // cli_recompress.cpp
/// `untold help [COMMAND]` and `untold version` (cli_help.cpp).
void add_help_command(CLI::App& app, context& ctx);
void add_version_command(CLI::App& app, context& ctx, const std::string& version);

}  // namespace untold::tools::cli
