// tools/cli/convert.cpp - `untold convert INPUT OUTPUT [--to FORMAT]`: any
// format the library reads into any it writes (pipeline/convert.hpp); this
// file parses the arguments and prints the report as `cook` does.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "compress_spec.hpp"
#include "convert.hpp"

namespace untold::tools::cli {
namespace {

namespace fs = std::filesystem;

struct convert_args {
  std::string input, output, to, compress;
  std::vector<std::string> animations;
  bool strict = false, mkdir = false;
};

int run_convert(const convert_args& args, const common_flags& flags) {
  cook_report r;
  int code = exit_ok;
  const auto target = args.to.empty() ? convert_target_of(args.output) : convert_target_named(args.to);
  std::error_code ec;
  const fs::path dir = fs::path(args.output).parent_path();
  if (!target) {
    code = exit_usage;
    r.error = args.to.empty() ? quote_path(args.output) + ": no known output format by its extension "
                                                          "(.untold, .mdl, .glb, .gltf, .hmesh, .pmdl_b); --to names one"
                              : "--to " + escaped(args.to) + ": not a format convert writes (untold, urho3d, glb, gltf, assetc, pmdl)";
  } else if (!args.compress.empty() && *target != convert_target::untold) {
    code = exit_usage;
    r.error.assign("--compress is for .untold output (").append(name(*target)).append(" has no chunk compression)");
  } else if (!dir.empty() && !fs::is_directory(dir, ec) && !(args.mkdir && fs::create_directories(dir, ec))) {
    code = exit_io;
    r.error = "cannot write " + quote_path(args.output) + ": directory " + quote_path(dir.string()) +
              (args.mkdir ? " cannot be created: " + ec.message() : " does not exist (--mkdir creates it)");
  } else {
    convert_options o;
    o.input = args.input;
    o.output = args.output;
    o.target = *target;
    o.animations.assign(args.animations.begin(), args.animations.end());
    o.strict = args.strict;
    std::string ignored;  // the option's validator checked it
    if (!args.compress.empty())
      o.compression = uniform_policy(parse_compression(args.compress, ignored).value_or(chunk_compression{}));
    r = convert_file(o);
    if (!r) code = r.io_failure ? exit_io : exit_invalid;
  }
  complain_about(r, code != exit_ok, args.strict, flags);
  if (flags.json) {
    json j{{"input", args.input},
           {"output", args.output},
           {"to", target ? json(name(*target)) : json(nullptr)},
           {"ok", code == exit_ok},
           {"error", code == exit_ok ? json(nullptr) : json(r.error)}};
    j.update(cook_report_json(r));
    print(to_text(j));
    return code;
  }
  if (code != exit_ok || flags.quiet) return code;
  std::printf("converted %s -> %s (%s): %llu bytes, %u meshes, %llu vertices, %llu triangles, %u materials\n",
              escaped(args.input).c_str(), escaped(args.output).c_str(), std::string(name(*target)).c_str(),
              static_cast<unsigned long long>(r.bytes), r.meshes, static_cast<unsigned long long>(r.vertices),
              static_cast<unsigned long long>(r.triangles), r.materials);
  for (const fs::path& path : r.written)
    if (path.string() != args.output) std::printf("  also wrote %s\n", escaped(path.string()).c_str());
  print(report_text(r.conversion, flags.verbose));
  return code;
}

}  // namespace

void add_convert_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<convert_args>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert between formats through the neutral scene: .untold, Urho3D, PMDL, assetc .hmesh, glTF/OBJ/FBX "
                 "(assimp) in; .untold, Urho3D .mdl + .ani, glTF 2.0 (.glb, .gltf), assetc .hmesh out");
  cmd->add_option("INPUT", a->input, "model file (its format is known by its first bytes, else assimp reads it)")
      ->required();
  cmd->add_option("OUTPUT", a->output, "output file; its extension names the format unless --to does")->required();
  cmd->add_option("--to", a->to, "output format: untold, urho3d, glb, gltf, assetc, pmdl");
  cmd->add_option("--animations", a->animations, "animation clip files for formats that keep them apart (Urho3D .ani)")
      ->expected(1, -1);
  cmd->add_option("--compress", a->compress, "chunk compression of a .untold output (default none)")
      ->check(compression_validator());
  cmd->add_flag("--strict", a->strict, "fail (exit 1, nothing written) when the conversion drops anything");
  cmd->add_flag("-p,--mkdir", a->mkdir, "create the output's directory when it does not exist");
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_convert(*a, ctx.flags); });
}

}  // namespace untold::tools::cli
