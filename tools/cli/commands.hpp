// tools/cli/commands.hpp - the `untold` subcommands, one file each (named
// after the command), thin over the pipeline (tools/pipeline/). Every
// command registers through the one signature
//
//   void add_<name>_command(CLI::App& app, context& ctx);
//
// and its callback stores its exit code in ctx.exit_code. main.cpp lists
// them; docs/cli.md describes them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <untold/format.hpp>

#include "common.hpp"

namespace untold::tools::cli {

void add_info_command(CLI::App& app, context& ctx);        // inspect.cpp
void add_validate_command(CLI::App& app, context& ctx);    // inspect.cpp
void add_dump_command(CLI::App& app, context& ctx);        // inspect.cpp
void add_cook_command(CLI::App& app, context& ctx);        // cook.cpp (--tiles: cook_tiles.cpp)
void add_cook_tile_command(CLI::App& app, context& ctx);   // cook_tile.cpp: one job of cook --tiles --plan
void add_convert_command(CLI::App& app, context& ctx);     // convert.cpp: any format to any format
void add_recompress_command(CLI::App& app, context& ctx);  // recompress.cpp
void add_manifest_command(CLI::App& app, context& ctx);    // manifest.cpp
void add_stream_sim_command(CLI::App& app, context& ctx);  // stream_sim.cpp
void add_fetch_command(CLI::App& app, context& ctx);       // fetch.cpp (built with untold::remote)
void add_pak_command(CLI::App& app, context& ctx);         // pak.cpp: Urho3D packages
void add_udm_command(CLI::App& app, context& ctx);         // udm.cpp: Pragma UDM
void add_check_command(CLI::App& app, context& ctx);       // check.cpp: assetc runtime trees
void add_pack_command(CLI::App& app, context& ctx);        // pack.cpp: assetc .hpack bundles
void add_build_command(CLI::App& app, context& ctx);       // build.cpp: the assetc compiler
void add_render_command(CLI::App& app, context& ctx);      // render.cpp: a PNG through Vulkan
void add_help_command(CLI::App& app, context& ctx);        // help.cpp
void add_version_command(CLI::App& app, context& ctx);     // help.cpp

/// `cook --tiles` (cook_tiles.cpp): add_cook_tiles_options registers
/// --tiles and its options on the cook subcommand; when the user gave
/// --tiles, cook runs run_cook_tiles instead of the single-file cook.
struct cook_tiles_args;
struct cook_tiles_io {
  std::string input, output, compress;
  untold::vertex_layout vertex_layout = untold::vertex_layout::pbr_static_v1;
};
std::shared_ptr<cook_tiles_args> add_cook_tiles_options(CLI::App& cook);
bool cook_tiles_requested(const cook_tiles_args& args);
int run_cook_tiles(const cook_tiles_args& args, const cook_tiles_io& io, const common_flags& flags,
                   const std::function<void(std::string_view stage, float fraction)>& progress);

}  // namespace untold::tools::cli
