// tools/cli/build.cpp - `untold build`: the assetc asset compiler
// (pipeline/assetc_build.hpp, docs/assetc-build.md).
//
//   untold build [assets-dir] [-o runtime] [--pack] [--preset NAME] [--list-presets]
//                [--no-cache] [-j N] [--verify] [--strict] [--json] [-q|-v] [--config FILE] [--basisu PATH]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "assetc_build.hpp"
#include "assetc_ktx2.hpp"
#include "commands.hpp"

namespace untold::tools::cli {

namespace {

namespace fs = std::filesystem;

std::string generic(const fs::path& p) { return p.generic_string(); }

struct build_args {
  std::string input, output, preset, config, basisu;
  bool pack = false, list_presets = false, no_cache = false, verify = false, strict = false;
  unsigned jobs = 0;
};

void print_entry(const convert::report_entry& e) {
  std::fprintf(stdout, "    %s: %s%s%s: %s (x%llu)\n", std::string(convert::name(e.severity)).c_str(), escaped(e.what).c_str(),
               e.where.empty() ? "" : " in ", escaped(e.where).c_str(), escaped(e.reason).c_str(),
               static_cast<unsigned long long>(e.count));
}

int run_build(const build_args& a, const common_flags& flags) {
  using namespace assetc_build;
  std::error_code ec;
  config cfg;
  fs::path cfg_file;
  if (!a.config.empty()) {
    cfg_file = a.config;
  } else {
    cfg_file = find_config(a.input.empty() ? fs::current_path(ec) : fs::path(a.input));
  }
  if (!cfg_file.empty()) {
    if (auto e = load_config(cfg_file, cfg)) {
      std::fprintf(stderr, "untold: %s\n", escaped(*e).c_str());
      return a.config.empty() ? 1 : (fs::exists(cfg_file, ec) ? 1 : 2);
    }
  }
  if (!flags.quiet)
    for (const std::string& w : cfg.warnings) std::fprintf(stderr, "untold: warning: %s\n", escaped(w).c_str());
  if (a.list_presets) {
    for (const auto& [name, l] : cfg.presets)
      std::printf("%s%s%s\n", escaped(name).c_str(), name == cfg.preset ? " (default)" : "",
                  l.output ? (" -> " + escaped(*l.output)).c_str() : "");
    return 0;
  }
  const fs::path base = cfg.file.empty() ? fs::path() : cfg.file.parent_path();
  build_options o;
  o.cfg = cfg;
  o.preset_name = a.preset.empty() ? cfg.preset : a.preset;
  if (!o.preset_name.empty()) {
    o.preset = o.cfg.find_preset(o.preset_name);
    if (o.preset == nullptr) {
      std::string names;
      for (const auto& [n, l] : cfg.presets) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "untold: unknown preset '%s' (available: %s)\n", escaped(o.preset_name).c_str(),
                   names.empty() ? "none" : escaped(names).c_str());
      return 2;
    }
  }
  o.input = !a.input.empty() ? fs::path(a.input) : base / cfg.input;
  if (!a.output.empty()) o.output = a.output;
  else if (o.preset != nullptr && o.preset->output) o.output = base / *o.preset->output;
  else o.output = base / cfg.output;
  if (!fs::is_directory(o.input, ec)) {
    std::fprintf(stderr, "untold: %s: no such directory\n", escaped(o.input.string()).c_str());
    return 2;
  }
  o.pack = a.pack || cfg.pack;
  o.use_cache = !a.no_cache;
  o.jobs = a.jobs != 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  o.verify = a.verify;
  o.strict = a.strict;
  const basisu_location encoder = find_basisu(a.basisu);
  if (!encoder.error.empty()) {
    std::fprintf(stderr, "untold: %s\n", escaped(encoder.error).c_str());
    return 2;
  }
  o.basisu = encoder.path;
  const bool tty = ::isatty(2) == 1 && !flags.quiet && !flags.json;
  if (tty)
    o.progress = [](std::size_t done, std::size_t total, std::string_view src) {
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done, total, escaped(src).c_str());
      std::fflush(stderr);
    };
  const build_result r = build(o);
  if (tty) std::fprintf(stderr, "\r\033[K");
  const int code = r.exit_code(a.strict);

  std::size_t compiled = 0, cached = 0, failed = 0;
  std::uint64_t triangles = 0;
  for (const asset_result& s : r.assets) {
    compiled += s.state == asset_result::status::compiled;
    cached += s.state == asset_result::status::cached;
    failed += s.state == asset_result::status::failed;
    triangles += s.triangles;
  }
  if (flags.json) {
    json j;
    j["input"] = generic(o.input);
    j["output"] = generic(o.output);
    j["preset"] = o.preset_name;
    j["config"] = cfg.file.empty() ? "" : generic(cfg.file);
    j["encoder"] = r.encoder;
    json assets = json::array();
    for (const asset_result& s : r.assets) {
      json e;
      e["source"] = s.source;
      e["status"] = s.state == asset_result::status::compiled ? "compiled"
                    : s.state == asset_result::status::cached ? "cached"
                    : s.state == asset_result::status::failed ? "failed"
                                                              : "skipped";
      if (!s.error.empty()) e["error"] = s.error;
      e["outputs"] = s.outputs;
      e["triangles"] = s.triangles;
      e["vertices"] = s.vertices;
      e["meshlets"] = s.meshlets;
      e["textures"] = s.textures;
      e["report"] = report_json(s.report);
      assets.push_back(e);
    }
    j["assets"] = assets;
    j["compiled"] = compiled;
    j["cached"] = cached;
    j["failed"] = failed;
    j["manifest_entries"] = r.manifest_entries;
    if (!r.pack_file.empty()) j["pack"] = {{"file", generic(r.pack_file)}, {"bytes", r.pack_bytes}};
    if (a.verify) j["verified_files"] = r.verified_files;
    j["lost_anything"] = r.lost_anything();
    j["notes"] = r.notes;
    j["errors"] = r.errors;
    j["warnings"] = cfg.warnings;
    j["exit_code"] = code;
    std::printf("%s\n", j.dump(2, ' ', false, json::error_handler_t::replace).c_str());
    return code;
  }
  for (const asset_result& s : r.assets) {
    if (s.state == asset_result::status::failed) {
      std::fprintf(stderr, "untold: %s: %s\n", escaped(s.source).c_str(), escaped(s.error).c_str());
      continue;
    }
    if (flags.quiet) continue;
    const std::size_t dropped = s.report.count(convert::report_entry::kind::dropped);
    const std::size_t changed = s.report.count(convert::report_entry::kind::changed);
    std::printf("%-8s %s -> %zu file%s", s.state == asset_result::status::cached ? "cached" : "compiled", escaped(s.source).c_str(),
                s.outputs.size(), s.outputs.size() == 1 ? "" : "s");
    if (dropped + changed != 0) std::printf(" (%zu dropped, %zu changed%s)", dropped, changed, flags.verbose ? "" : "; -v lists them");
    std::printf("\n");
    if (flags.verbose)
      for (const auto& e : s.report.entries) print_entry(e);
    else if (a.strict)
      for (const auto& e : s.report.entries)
        if (e.severity == convert::report_entry::kind::dropped) print_entry(e);
  }
  for (const std::string& n : r.notes)
    if (!flags.quiet) std::printf("note: %s\n", escaped(n).c_str());
  for (const std::string& e : r.errors) std::fprintf(stderr, "untold: %s\n", escaped(e).c_str());
  if (!flags.quiet) {
    std::printf("%zu assets: %zu compiled, %zu cached, %zu failed; %llu triangles; assets.hman %zu entries", r.assets.size(),
                compiled, cached, failed, static_cast<unsigned long long>(triangles), r.manifest_entries);
    if (!r.pack_file.empty()) std::printf("; %s (%llu bytes)", escaped(generic(r.pack_file)).c_str(), static_cast<unsigned long long>(r.pack_bytes));
    if (a.verify) std::printf("; %zu files verified", r.verified_files);
    std::printf("\n");
  }
  if (a.strict && r.lost_anything() && code == 1) std::fprintf(stderr, "untold: --strict: the build lost source data (listed above)\n");
  return code;
}

}  // namespace

void add_build_command(CLI::App& app, context& ctx) {
  auto args = std::make_shared<build_args>();
  CLI::App* cmd = app.add_subcommand("build", "Compile source assets (glTF/GLB/OBJ, PNG/JPEG) into assetc runtime files");
  cmd->add_option("ASSETS", args->input, "source directory (default: assetc.yml's input, else ./assets)");
  cmd->add_option("-o,--output", args->output, "output directory (default: the preset's or assetc.yml's output, else ./runtime)");
  cmd->add_flag("--pack", args->pack, "also bundle the outputs into <output>.hpack");
  cmd->add_option("--preset", args->preset, "use this preset of assetc.yml");
  cmd->add_flag("--list-presets", args->list_presets, "print the presets of assetc.yml and exit");
  cmd->add_option("--config", args->config, "use this assetc.yml (default: the nearest one upwards from ASSETS or .)");
  cmd->add_flag("--no-cache", args->no_cache, "ignore the incremental build cache and rebuild everything");
  cmd->add_option("-j,--jobs", args->jobs, "parallel jobs (default: the number of cores)")->check(CLI::Range(1, 256));
  cmd->add_option("--basisu", args->basisu,
                  "the Basis Universal encoder for texture.compress: true (default: $UNTOLD_BASISU, else basisu on PATH; "
                  "none: raw textures, noted)");
  cmd->add_flag("--verify", args->verify, "re-open every output with the validators (deep) and run the cross-file check");
  cmd->add_flag("--strict", args->strict, "fail (exit 1) when anything of a source is dropped");
  cmd->add_flag("--json", ctx.flags.json, "print the build report as JSON");
  cmd->add_flag("-q,--quiet", ctx.flags.quiet, "print only errors");
  cmd->add_flag("-v,--verbose", ctx.flags.verbose, "list every report entry of every asset");
  cmd->callback([args, &ctx] {
    try {
      ctx.exit_code = run_build(*args, ctx.flags);
    } catch (const std::exception& e) {
      complain("build: " + escaped(e.what()));
      ctx.exit_code = exit_invalid;
    }
  });
}

}  // namespace untold::tools::cli
