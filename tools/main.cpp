// untold - the command-line tool: info, validate, dump, cook, recompress.
// See docs/cli.md. Exit codes: 0 ok, 1 invalid or unreadable input, 2 usage.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <untold/untold.hpp>

#include "compress_spec.hpp"
#include "cook.hpp"
#include "inspect.hpp"
#include "recompress.hpp"
#if defined(UNTOLD_CLI_FETCH)
#include "fetch_command.hpp"
#endif

namespace {

namespace tools = untold::tools;
using tools::json;

constexpr int exit_ok = 0;
constexpr int exit_invalid = 1;
constexpr int exit_usage = 2;

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void complain(const std::string& what) { std::fprintf(stderr, "untold: %s\n", what.c_str()); }

/// The --compress validator: a malformed value is a usage error (exit 2).
CLI::Validator compression_validator() {
  return CLI::Validator(
      [](std::string& value) {
        std::string error;
        const auto c = tools::parse_compression(value, error);
        if (!c) return error;
        if (!untold::compression_available(c->method)) return value + " is not available in this build";
        return std::string();
      },
      "none|lz4|lz4hc[:N]|zstd[:N]");
}

untold::compression_policy policy_from(const std::string& spec) {
  std::string ignored;
  return tools::uniform_policy(tools::parse_compression(spec, ignored).value_or(untold::chunk_compression{}));
}

// ---- info ---------------------------------------------------------------------------

int run_info(const std::vector<std::string>& files, bool as_json) {
  int rc = exit_ok;
  json all = json::array();
  for (const std::string& path : files) {
    json info;
    if (auto file = untold::mapped_file::open(path)) {
      info = tools::info_json(path, file->bytes());
    } else {
      info = json{{"file", path}, {"valid", false}, {"error", tools::error_json(file.error())}};
    }
    if (!info["valid"].get<bool>()) rc = exit_invalid;
    if (as_json) all.push_back(std::move(info));
    else if (info.contains("fileSize")) print(tools::info_text(info));
    else complain(path + ": " + info["error"]["describe"].get<std::string>());
  }
  if (as_json) print(tools::to_text(all));
  return rc;
}

// ---- validate -----------------------------------------------------------------------

int run_validate(const std::vector<std::string>& files, bool deep, bool as_json) {
  json results = json::array();
  std::size_t passed = 0;
  for (const std::string& path : files) {
    json r;
    if (auto file = untold::mapped_file::open(path)) {
      r = tools::validate_json(path, file->bytes(), deep);
    } else {
      r = json{{"file", path}, {"valid", false}, {"error", tools::error_json(file.error())}};
    }
    if (r["valid"].get<bool>()) ++passed;
    if (!as_json) print(tools::validate_text(r));
    results.push_back(std::move(r));
  }
  const std::size_t failed = files.size() - passed;
  if (as_json) print(tools::to_text(json{{"deep", deep}, {"passed", passed}, {"failed", failed}, {"results", results}}));
  else std::printf("%zu passed, %zu failed\n", passed, failed);
  return failed == 0 ? exit_ok : exit_invalid;
}

// ---- dump ---------------------------------------------------------------------------

int run_dump(const std::string& path, bool as_json, std::uint32_t vertices) {
  auto opened = untold::open_file(path);
  if (!opened) {
    complain(path + ": " + opened.error().describe());
    return exit_invalid;
  }
  const json dump = tools::dump_json(path, opened->asset, vertices);
  print(as_json ? tools::to_text(dump) : tools::dump_text(dump));
  return exit_ok;
}

// ---- cook ---------------------------------------------------------------------------

/// "\rcook: meshes  42%" on stderr, redrawn only when the percentage moves.
class progress_line {
 public:
  void update(std::string_view stage, float fraction) {
    const int percent = static_cast<int>(std::lround(100.0 * fraction));
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
  std::string stage_;
  int percent_ = -1;
  bool drawn_ = false;
};

struct cook_args {
  std::string input, output, compress = "none";
  bool copy_textures = false, progress = false, no_optimize = false;
  std::uint32_t lods = 0;
};

int run_cook(const cook_args& args) {
  tools::cook_options o;
  o.input = args.input;
  o.output = args.output;
  o.compression = policy_from(args.compress);
  o.copy_textures = args.copy_textures;
  o.lod_count = args.lods;
  o.optimize = !args.no_optimize;
  progress_line line;
  if (args.progress || ::isatty(STDERR_FILENO) != 0)
    o.progress = [&line](std::string_view stage, float fraction) { line.update(stage, fraction); };
  const tools::cook_report r = tools::cook(o);
  line.finish();
  for (const std::string& w : r.warnings) std::fprintf(stderr, "untold: warning: %s\n", w.c_str());
  if (!r) {
    complain(r.error);
    return exit_invalid;
  }
  std::printf("cooked %s -> %s: %llu bytes, %u entities, %u meshes, %llu vertices, %llu triangles, %u materials, %u textures\n",
              args.input.c_str(), args.output.c_str(), static_cast<unsigned long long>(r.bytes), r.entities, r.meshes,
              static_cast<unsigned long long>(r.vertices), static_cast<unsigned long long>(r.triangles), r.materials,
              r.textures);
  for (const auto& path : r.written)
    if (path != o.output) std::printf("  also wrote %s\n", path.string().c_str());
  return exit_ok;
}

// ---- recompress ---------------------------------------------------------------------

int run_recompress(const std::string& input, const std::string& output, const std::string& compress) {
  auto bytes = untold::read_file(input);
  if (!bytes) {
    complain(input + ": " + bytes.error().describe());
    return exit_invalid;
  }
  const tools::recompress_result r = tools::recompress(*bytes, policy_from(compress));
  if (!r) {
    complain(input + ": " + r.error);
    return exit_invalid;
  }
  if (auto s = untold::write_file(output, r.bytes); !s) {
    complain(output + ": " + s.error().describe());
    return exit_invalid;
  }
  std::printf("recompressed %s -> %s (%s): %zu -> %zu bytes, payloads verified identical\n", input.c_str(),
              output.c_str(), compress.c_str(), bytes->size(), r.bytes.size());
  return exit_ok;
}

int run(int argc, char** argv) {
  CLI::App app{"untold: inspect, validate, cook and recompress .untold runtime asset files", "untold"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string(UNTOLD_VERSION_STRING));
  app.footer("Exit codes: 0 success, 1 invalid or unreadable input file, 2 usage error.\n"
             "Run 'untold SUBCOMMAND --help' for the options of a subcommand.");

  std::vector<std::string> info_files;
  bool info_as_json = false;
  auto* info = app.add_subcommand("info", "Header, chunk table (types, compression, sizes), counts and bounds");
  info->add_option("FILE", info_files, ".untold files")->required();
  info->add_flag("--json", info_as_json, "print a JSON array, one object per file");

  std::vector<std::string> validate_files;
  bool deep = false, validate_as_json = false;
  auto* validate = app.add_subcommand("validate", "Check every rule of the format; print failing rule ids");
  validate->add_option("FILE", validate_files, ".untold files")->required();
  validate->add_flag("--deep", deep, "also run the deep checks R-INDEX-VALUE, R-FINITE, R-BOUNDS");
  validate->add_flag("--json", validate_as_json, "print a JSON report instead of text");

  std::string dump_file;
  bool dump_as_json = false;
  std::uint32_t dump_vertices = 0;
  auto* dump = app.add_subcommand("dump", "Entities as a tree, meshes, materials, textures and other tables");
  dump->add_option("FILE", dump_file, ".untold file")->required();
  dump->add_flag("--json", dump_as_json, "print JSON instead of text");
  dump->add_option("--vertices", dump_vertices, "print the first N decoded vertices of each mesh")
      ->check(CLI::NonNegativeNumber);

  cook_args ca;
  auto* cook = app.add_subcommand("cook", "Convert glTF 2.0 (.gltf/.glb), OBJ or FBX into a .untold tile");
  cook->add_option("INPUT", ca.input, "model file (anything assimp imports)")->required();
  cook->add_option("-o,--output", ca.output, "output .untold file")->required();
  cook->add_option("--compress", ca.compress, "chunk compression (default none)")->check(compression_validator());
  cook->add_flag("--copy-textures", ca.copy_textures, "copy referenced images next to the output");
  cook->add_option("--lod", ca.lods, "also write N simplified LOD files OUT.lod1.untold ... (fileType lod)")
      ->check(CLI::Range(0, 8));
  cook->add_flag("--progress", ca.progress, "show progress on stderr even when it is not a terminal");
  cook->add_flag("--no-optimize", ca.no_optimize, "keep assimp's vertex and triangle order");

  std::string rc_input, rc_output, rc_compress;
  auto* recompress = app.add_subcommand("recompress", "Rewrite chunk compression; content stays byte-identical");
  recompress->add_option("FILE", rc_input, "input .untold file")->required();
  recompress->add_option("-o,--output", rc_output, "output file (may equal FILE)")->required();
  recompress->add_option("--compress", rc_compress, "chunk compression")->required()->check(compression_validator());

#if defined(UNTOLD_CLI_FETCH)
  int fetch_exit = exit_ok;
  tools::add_fetch_command(app, fetch_exit);  // runs inside parse()
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }
  if (*info) return run_info(info_files, info_as_json);
  if (*validate) return run_validate(validate_files, deep, validate_as_json);
  if (*dump) return run_dump(dump_file, dump_as_json, dump_vertices);
  if (*cook) return run_cook(ca);
  if (*recompress) return run_recompress(rc_input, rc_output, rc_compress);
#if defined(UNTOLD_CLI_FETCH)
  if (app.got_subcommand("fetch")) return fetch_exit;
#endif
  return exit_usage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // e.g. out of memory, a filesystem error
    complain(std::string("error: ") + e.what());
    return exit_invalid;
  }
}
