// tools/cli_cook.cpp - `untold cook INPUT -o OUT.untold`.
//
// An input whose magic names a foreign format with an importer (formats.hpp)
// goes importer -> neutral scene -> convert::to_untold, and its conversion
// report is printed; anything else goes to the assimp cook (tools/cook.hpp).
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

#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>

#include "cli_commands.hpp"
#include "compress_spec.hpp"
#include "cook.hpp"

namespace untold::tools::cli {
namespace {

namespace fs = std::filesystem;

struct cook_args {
  std::string input, output, compress = "none";
  std::vector<std::string> animations;
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

/// What the command reports, as text or JSON.
struct outcome {
  int code = exit_ok;
  std::string error;
  std::string format = "assimp";
  std::vector<std::string> warnings;
  std::vector<std::string> written;
  convert::conversion_report report;
  std::uint64_t bytes = 0, vertices = 0, triangles = 0;
  std::uint32_t entities = 0, meshes = 0, materials = 0, textures = 0;
};

json report_json(const convert::conversion_report& r) {
  json list = json::array();
  for (const convert::report_entry& e : r.entries)
    list.push_back(json{{"severity", convert::name(e.severity)},
                        {"what", e.what},
                        {"where", e.where},
                        {"reason", e.reason},
                        {"count", e.count}});
  return list;
}

std::size_t count(const convert::conversion_report& r, convert::report_entry::kind k) {
  std::size_t n = 0;
  for (const convert::report_entry& e : r.entries) n += e.severity == k ? 1 : 0;
  return n;
}

/// "  dropped  morph targets x3 in mesh 'Body': this library writes no morph tables yet"
std::string report_text(const convert::conversion_report& r, bool with_info) {
  using kind = convert::report_entry::kind;
  std::string s;
  if (r.entries.empty()) return s;
  s += "conversion report: " + std::to_string(count(r, kind::dropped)) + " dropped, " +
       std::to_string(count(r, kind::changed)) + " changed, " + std::to_string(count(r, kind::info)) + " info\n";
  for (const convert::report_entry& e : r.entries) {
    if (e.severity == kind::info && !with_info) continue;
    // what/where/reason quote names from the source file: escaped.
    s += "  " + std::string(convert::name(e.severity)) + std::string(8 - convert::name(e.severity).size(), ' ') +
         escaped(e.what);
    if (e.count != 1) s += " x" + std::to_string(e.count);
    if (!e.where.empty()) s += " in " + escaped(e.where);
    s += ": " + escaped(e.reason) + "\n";
  }
  return s;
}

/// OUT.lodN.untold, as the assimp cook names its LOD files.
fs::path lod_path(const fs::path& output, std::size_t level) {
  fs::path p = output;
  p.replace_filename(output.stem().string() + ".lod" + std::to_string(level) + output.extension().string());
  return p;
}

void fill_counts(outcome& o, byte_span file) {
  auto a = untold::open(file);
  if (!a) return;
  o.entities = static_cast<std::uint32_t>(a->entities().size());
  o.meshes = static_cast<std::uint32_t>(a->meshes().size());
  o.materials = static_cast<std::uint32_t>(a->materials().size());
  o.textures = static_cast<std::uint32_t>(a->textures().size());
  for (const mesh_record& m : a->meshes()) {
    o.vertices += m.vertex_count;
    o.triangles += m.index_count / 3;
  }
}

/// importer -> scene -> to_untold -> files.
void cook_foreign(const cook_args& args, const input& in, const format_handler& h, progress_display& progress,
                  outcome& o) {
  o.format = std::string(h.name);
  if (args.lods != 0) o.warnings.push_back("--lod applies to assimp inputs; " + o.format + " LOD levels come from the file");
  if (args.copy_textures) o.warnings.push_back("--copy-textures applies to assimp inputs");
  if (args.no_optimize) o.warnings.push_back("--no-optimize applies to assimp inputs");
  if (args.split_animations) o.warnings.push_back("--split-animations applies to assimp inputs");
  progress.update("import", 0);
  import_request request;
  request.input = args.input;
  request.bytes = in.bytes();
  // One budget for every input (the model and its --animations files),
  // shared by the importer and the writer (untold/budget.hpp).
  std::uint64_t input_bytes = in.bytes().size();
  for (const std::string& a : args.animations) {
    request.animations.emplace_back(a);
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(a, ec);
    if (!ec) input_bytes += size;
  }
  untold::budget budget(request.limits, input_bytes);
  request.budget = &budget;
  auto scene = h.import(request);
  progress.update("import", 1);
  if (!scene) {
    // An --animations file the importer could not read is an I/O failure.
    const errc code = scene.error().code;
    o.code = code == errc::io_open_failed || code == errc::io_read_failed ? exit_io : exit_invalid;
    o.error = escaped(args.input) + ": cannot import: " + scene.error().describe();
    return;
  }
  progress.update("convert", 0);
  o.report = scene->report;
  convert::to_untold_options options;
  std::string ignored;
  options.write.compression = uniform_policy(parse_compression(args.compress, ignored).value_or(chunk_compression{}));
  if (args.format_version != 0) options.write.format_version = args.format_version;
  if (args.animations_only) options.content = convert::untold_content::animations_only;
  options.embed_images = args.embed;
  options.uv_wrap = args.uv_wrap;
  options.limits = request.limits;
  options.budget = &budget;
  auto out = convert::to_untold(*scene, options, o.report);
  progress.update("convert", 1);
  if (!out) {
    o.code = exit_invalid;
    o.error = escaped(args.input) + ": cannot convert: " + out.error().describe();
    return;
  }
  if (args.strict && o.report.lost_anything()) {
    o.code = exit_invalid;
    o.error = escaped(args.input) + ": --strict: the conversion drops content (" +
              std::to_string(count(o.report, convert::report_entry::kind::dropped)) +
              " dropped entries in the report); nothing written";
    return;
  }
  progress.update("write", 0);
  const fs::path output(args.output);
  std::string message;
  if (!write_output(output, out->file, message)) {
    o.code = exit_io;
    o.error = message;
    return;
  }
  o.written.push_back(output.string());
  o.bytes = out->file.size();
  for (std::size_t k = 0; k < out->lod_files.size(); ++k) {
    const fs::path p = lod_path(output, k + 1);
    if (!write_output(p, out->lod_files[k], message)) {
      o.code = exit_io;
      o.error = message;
      return;
    }
    o.written.push_back(p.string());
  }
  // Embedded images have no file of their own: write them where the URI
  // says (with --embed they are in the output already).
  for (const convert::texture& t : scene->textures) {
    if (t.embedded.empty() || args.embed) continue;
    if (!portable_relative_uri(t.uri)) {
      o.warnings.push_back("embedded image '" + escaped(t.name) + "' not written: its URI '" + escaped(t.uri) +
                           "' leaves the output directory");
      continue;
    }
    const fs::path p = output.parent_path() / fs::path(t.uri);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (!write_output(p, t.embedded, message)) {
      o.code = exit_io;
      o.error = message;
      return;
    }
    o.written.push_back(p.string());
  }
  progress.update("write", 1);
  fill_counts(o, out->file);
}

void cook_assimp(const cook_args& args, bool quiet, progress_display& progress, outcome& o) {
  cook_options c;
  c.input = args.input;
  c.output = args.output;
  std::string ignored;
  c.compression = uniform_policy(parse_compression(args.compress, ignored).value_or(chunk_compression{}));
  c.format_version = args.format_version;
  c.copy_textures = args.copy_textures;
  c.embed_textures = args.embed;
  c.uv_wrap = args.uv_wrap;
  c.lod_count = args.lods;
  c.optimize = !args.no_optimize;
  c.strict = args.strict;
  c.animations = args.animations_only    ? cook_animations::only
                 : args.split_animations ? cook_animations::split
                                         : cook_animations::in_file;
  if (!quiet) c.progress = [&progress](std::string_view stage, float fraction) { progress.update(stage, fraction); };
  cook_report r = cook(c);
  o.warnings.insert(o.warnings.end(), r.warnings.begin(), r.warnings.end());
  o.report = std::move(r.conversion);
  if (!r) {
    o.code = r.io_failure ? exit_io : exit_invalid;
    o.error = r.error;
    return;
  }
  for (const fs::path& p : r.written) o.written.push_back(p.string());
  o.bytes = r.bytes;
  o.entities = r.entities;
  o.meshes = r.meshes;
  o.materials = r.materials;
  o.textures = r.textures;
  o.vertices = r.vertices;
  o.triangles = r.triangles;
}

/// The output's directory must exist unless --mkdir creates it.
bool prepare_output_directory(const cook_args& args, outcome& o) {
  const fs::path dir = fs::path(args.output).parent_path();
  if (dir.empty()) return true;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return true;
  o.code = exit_io;
  if (fs::exists(dir, ec)) {
    o.error = "cannot write " + quote_path(args.output) + ": " + std::strerror(ENOTDIR);
    return false;
  }
  if (!args.mkdir) {
    o.error = "cannot write " + quote_path(args.output) + ": " + std::strerror(ENOENT) + " (directory " +
              quote_path(dir.string()) + " does not exist; --mkdir creates it)";
    return false;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    o.error = "cannot create directory " + quote_path(dir.string()) + ": " + ec.message();
    return false;
  }
  o.code = exit_ok;
  return true;
}

outcome cook_command(const cook_args& args, const common_flags& flags) {
  outcome o;
  std::string io_message;
  json io_error;
  const auto in = input::load(args.input, io_message, io_error);
  if (!in) {
    o.code = exit_io;
    o.error = io_message;
    return o;
  }
  const detected d = detect(in->bytes());
  // An empty or tiny file "matches" a magic prefix; only a whole magic means .untold here.
  if (d.what == detected::kind::untold && in->bytes().size() >= file_magic.size()) {
    o.code = exit_invalid;
    o.error = quote_path(args.input) + " is already a .untold file (recompress changes its compression)";
    return o;
  }
  const bool foreign = d.what == detected::kind::foreign && d.handler->import != nullptr;
  if (d.what == detected::kind::foreign && !foreign) {
    o.code = exit_invalid;
    o.error = quote_path(args.input) + ": cook cannot import this format (" + std::string(d.handler->description) + ")";
    return o;
  }
  if (!foreign && args.input == "-") {
    o.code = exit_invalid;
    // No path to hand assimp: empty is E-IO-EMPTY, anything else E-FORMAT-UNKNOWN to this command.
    const errc code = in->bytes().empty() ? errc::io_empty_file : errc::format_unknown;
    o.error = "standard input: " + std::string(rule_id(code)) + " " + std::string(untold::name(code)) +
              ": standard input is not a format recognised by its magic; assimp inputs (glTF, OBJ, FBX, ...) "
              "need a file path, as they reference side files";
    return o;
  }
  if (!foreign && !args.animations.empty()) {
    o.code = exit_usage;
    o.error = "--animations is for formats that keep clips in separate files (Urho3D .ani, ...)";
    return o;
  }
  if (flags.verbose)
    complain("cooking " + quote_path(args.input) + " (" +
             (foreign ? std::string(d.handler->description) : std::string("assimp")) + ") into " +
             quote_path(args.output));
  if (!prepare_output_directory(args, o)) return o;
  progress_display progress(!flags.quiet && (args.progress || flags.verbose || ::isatty(STDERR_FILENO) != 0),
                            ::isatty(STDERR_FILENO) != 0);
  if (foreign) cook_foreign(args, *in, *d.handler, progress, o);
  else cook_assimp(args, flags.quiet, progress, o);
  progress.finish();
  return o;
}

int run_cook(const cook_args& args, const common_flags& flags) {
  const outcome o = cook_command(args, flags);
  if (!flags.quiet)
    for (const std::string& w : o.warnings) complain("warning: " + w);
  if (o.code != exit_ok) {
    complain(o.error);
    // --strict: the entries that made it fail belong to the error.
    if (args.strict && o.report.lost_anything() && !flags.json)
      std::fputs(report_text(o.report, false).c_str(), stderr);
  }
  if (flags.json) {
    json written = json::array();
    for (const std::string& w : o.written) written.push_back(w);
    json warnings = json::array();
    for (const std::string& w : o.warnings) warnings.push_back(w);
    using kind = convert::report_entry::kind;
    print(to_text(json{{"input", args.input},
                       {"output", args.output},
                       {"format", o.format.empty() ? json(nullptr) : json(o.format)},
                       {"ok", o.code == exit_ok},
                       {"error", o.code == exit_ok ? json(nullptr) : json(o.error)},
                       {"bytes", o.bytes},
                       {"entities", o.entities},
                       {"meshes", o.meshes},
                       {"vertices", o.vertices},
                       {"triangles", o.triangles},
                       {"materials", o.materials},
                       {"textures", o.textures},
                       {"written", std::move(written)},
                       {"warnings", std::move(warnings)},
                       {"dropped", count(o.report, kind::dropped)},
                       {"changed", count(o.report, kind::changed)},
                       {"report", report_json(o.report)}}));
    return o.code;
  }
  if (o.code != exit_ok || flags.quiet) return o.code;
  std::printf("cooked %s -> %s: %llu bytes, %u entities, %u meshes, %llu vertices, %llu triangles, %u materials, %u textures\n",
              escaped(args.input).c_str(), escaped(args.output).c_str(), static_cast<unsigned long long>(o.bytes), o.entities, o.meshes,
              static_cast<unsigned long long>(o.vertices), static_cast<unsigned long long>(o.triangles), o.materials,
              o.textures);
  for (const std::string& path : o.written)
    if (path != args.output) std::printf("  also wrote %s\n", escaped(path).c_str());
  print(report_text(o.report, flags.verbose));
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
  cmd->add_flag("-p,--mkdir", a->mkdir, "create the output's directory when it does not exist");
  cmd->add_flag("--strict", a->strict, "fail (exit 1, nothing written) when the conversion drops anything");
  cmd->add_option("--animations", a->animations, "animation clip files for formats that keep them apart (Urho3D .ani)")
      ->expected(1, -1);
  cmd->add_flag("--copy-textures", a->copy_textures, "copy referenced images next to the output (assimp inputs)");
  cmd->add_flag("--embed", a->embed,
                "store the images inside the output (untold.images chunk, URIs '#name'; an untold convention) "
                "instead of next to it");
  cmd->add_flag("--uv-wrap", a->uv_wrap,
                "shift UVs beyond the half-float range by whole units where the samplers repeat (else clamped, reported)");
  cmd->add_option("--lod", a->lods, "also write N simplified LOD files OUT.lod1.untold ... (assimp inputs)")
      ->check(CLI::Range(0, 8));
  cmd->add_flag("--progress", a->progress, "show progress on stderr also when it is not a terminal (one line per step)");
  cmd->add_flag("--no-optimize", a->no_optimize, "keep assimp's vertex and triangle order (unused vertices are still dropped)");
  cmd->add_option("--format-version", a->format_version,
                  "write this .untold format version (default: the writer's, 4); "
                  "an error when it cannot express the content")
      ->check(CLI::Range(1, 99));
  CLI::Option* split = cmd->add_flag("--split-animations", a->split_animations,
                "write the clips to OUT.clipK.untold (fileType animation), one per clip, not into OUT (assimp inputs)");
  cmd->add_flag("--animations-only", a->animations_only, "write only the clips, as one fileType-animation file")
      ->excludes(split);
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  const auto tiles = add_cook_tiles_options(*cmd);  // --tiles: the partitioning cook (cli_cook_tiles.cpp)
  cmd->callback([a, tiles, &ctx] {
    if (!cook_tiles_requested(*tiles)) {
      ctx.exit_code = run_cook(*a, ctx.flags);
      return;
    }
    progress_display progress(!ctx.flags.quiet && (a->progress || ctx.flags.verbose || ::isatty(STDERR_FILENO) != 0),
                              ::isatty(STDERR_FILENO) != 0);
    ctx.exit_code = run_cook_tiles(*tiles, {a->input, a->output, a->compress}, ctx.flags,
                                   [&progress](std::string_view stage, float f) { progress.update(stage, f); });
    progress.finish();
  });
}

}  // namespace untold::tools::cli
