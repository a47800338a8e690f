// tools/cli_commands.hpp - the `untold` subcommands, one file each, thin
// over the library and the tooling (inspect, cook, recompress, formats).
// Each add_* registers a subcommand whose callback stores its exit code in
// ctx.exit_code. docs/cli.md describes them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cli_common.hpp"

namespace untold::tools::cli {

void add_info_command(CLI::App& app, context& ctx);        // cli_inspect.cpp
void add_validate_command(CLI::App& app, context& ctx);    // cli_inspect.cpp
void add_dump_command(CLI::App& app, context& ctx);        // cli_inspect.cpp
void add_cook_command(CLI::App& app, context& ctx);        // cli_cook.cpp
void add_recompress_command(CLI::App& app, context& ctx);  // cli_recompress.cpp
void add_manifest_command(CLI::App& app, context& ctx);    // cli_manifest.cpp

/// `cook --tiles` (cli_cook_tiles.cpp): add_cook_tiles_options registers
/// --tiles and its options on the cook subcommand; when the user gave
/// --tiles, cook runs run_cook_tiles instead of the single-file cook.
struct cook_tiles_args;
struct cook_tiles_io {
  std::string input, output, compress;
};
std::shared_ptr<cook_tiles_args> add_cook_tiles_options(CLI::App& cook);
bool cook_tiles_requested(const cook_tiles_args& args);
int run_cook_tiles(const cook_tiles_args& args, const cook_tiles_io& io, const common_flags& flags,
                   const std::function<void(std::string_view stage, float fraction)>& progress);
void add_stream_sim_command(CLI::App& app, context& ctx);  // cli_stream_sim.cpp
/// `untold help [COMMAND]` and `untold version` (cli_help.cpp).
void add_help_command(CLI::App& app, context& ctx);
void add_version_command(CLI::App& app, context& ctx, const std::string& version);

}  // namespace untold::tools::cli
