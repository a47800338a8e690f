// tools/cli/check.cpp - `untold check DIR|FILE.hpack`: the cross-file
// integrity of an assetc runtime tree, like `assetc check` (docs/assetc.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/source.hpp>

#include "commands.hpp"
#include "format_assetc.hpp"

namespace untold::tools::cli {
namespace {

namespace ua = untold::assetc;

/// The report of `untold check`, streamed: each problem is printed as soon as
/// check_files finds it (text: "FILE: <describe>"; JSON: one element of
/// "problems"), so memory does not grow with the number of problems; the
/// counts follow them.
class check_printer {
 public:
  check_printer(const std::string& where, bool deep, bool as_json) : json_(as_json) {
    if (!json_) return;
    js_.open(nullptr, '{');
    js_.value("dir", where);
    js_.value("deep", deep);
    js_.open("problems", '[');
  }
  void problem(std::string_view file, const error& e) {
    if (json_) js_.value(nullptr, json{{"file", std::string(file)}, {"error", error_json(e)}});
    else std::printf("%s: %s\n", escaped(file).c_str(), e.describe().c_str());
  }
  int finish(std::size_t files, const ua::check_report& r) {
    if (json_) {
      js_.close(']');
      const json counts{{"ok", r.ok()},
                        {"files", files},
                        {"meshes", r.meshes},
                        {"materials", r.materials},
                        {"manifests", r.manifests},
                        {"animations", r.animations},
                        {"packs", r.packs},
                        {"textureRefs", r.texture_refs},
                        {"manifestEntries", r.manifest_entries},
                        {"problemCount", r.problem_count}};
      for (const auto& [key, value] : counts.items()) js_.value(key.c_str(), value);
      js_.close('}');
    } else {
      std::printf("%zu meshes, %zu material tables, %zu manifests (%zu entries), %zu animations, %zu packs; %zu texture refs: %s\n",
                  r.meshes, r.materials, r.manifests, r.manifest_entries, r.animations, r.packs, r.texture_refs,
                  r.ok() ? "ok" : (std::to_string(r.problem_count) + " problem(s)").c_str());
    }
    return r.ok() ? exit_ok : exit_invalid;
  }
  [[nodiscard]] ua::problem_sink sink() {
    return [this](std::string_view file, const error& e) { problem(file, e); };
  }

 private:
  bool json_;
  text_sink out_ = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); };
  document_stream js_{out_};
};

/// `untold check runtime.hpack`: the same rules over the pack's entries, under
/// one budget for the pack.
int run_check_pack(const std::string& path, bool deep, bool as_json) {
  auto file = mapped_file::open(path);
  if (!file) {
    complain("check: " + escaped(path) + ": " + file.error().describe());
    return exit_io;
  }
  ua::open_options options = assetc_open_options(deep);
  budget spend(options.limits, file->bytes().size());
  options.budget = &spend;
  check_printer printer(path, deep, as_json);
  auto p = ua::open_hpack(file->bytes(), options);
  if (!p) {
    ua::check_report r;
    r.packs = 1;
    r.problem_count = 1;
    printer.problem(path, p.error());
    return printer.finish(1, r);
  }
  std::vector<std::string> paths;
  for (const ua::pack_entry& e : p->entries()) paths.emplace_back(e.path);
  const ua::check_report r = ua::check_files(
      paths, [&p](std::string_view rel) { return p->bytes(rel); }, options, printer.sink());
  return printer.finish(paths.size(), r);
}

/// `untold check DIR`: every file of the tree, mapped when first read, under
/// one budget for the bytes of the whole tree.
int run_check(const std::string& dir, bool deep, bool as_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) return run_check_pack(dir, deep, as_json);
  if (!fs::is_directory(dir, ec)) {
    complain("check: " + quote_path(dir) + " is neither a directory nor a .hpack");
    return exit_io;
  }
  std::vector<std::string> paths;
  std::uint64_t tree_bytes = 0;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    // The build cache is not part of the runtime tree.
    if (it->is_directory(ec) && rel.filename().string().starts_with(".assetc-cache")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    paths.push_back(rel.generic_string());
    std::error_code size_ec;
    const std::uintmax_t size = it->file_size(size_ec);
    if (!size_ec) tree_bytes += size;
  }
  if (ec) {
    complain("check: cannot list " + quote_path(dir) + ": " + ec.message());
    return exit_io;
  }
  std::sort(paths.begin(), paths.end());
  std::map<std::string, mapped_file, std::less<>> open_files;
  const auto lookup = [&](std::string_view rel) -> std::optional<byte_span> {
    auto it = open_files.find(rel);
    if (it == open_files.end()) {
      auto f = mapped_file::open(fs::path(dir) / fs::path(std::string(rel)));
      if (!f) return std::nullopt;
      it = open_files.emplace(std::string(rel), std::move(*f)).first;
    }
    return it->second.bytes();
  };
  ua::open_options options = assetc_open_options(deep);
  budget spend(options.limits, tree_bytes);
  options.budget = &spend;
  check_printer printer(dir, deep, as_json);
  const ua::check_report r = ua::check_files(paths, lookup, options, printer.sink());
  return printer.finish(paths.size(), r);
}

}  // namespace

void add_check_command(CLI::App& app, context& ctx) {
  struct check_args {
    std::string dir;
    bool deep = false;
  };
  auto c = std::make_shared<check_args>();
  CLI::App* check = app.add_subcommand("check", "Cross-file integrity of an assetc runtime directory (like `assetc check`)");
  check->add_option("DIR", c->dir, "the runtime directory (.hmesh, .hmat, .hman, .hanim, .ktx2 ...) or a .hpack of it")
      ->required();
  check->add_flag("--deep", c->deep, "also the value-level checks of every file");
  check->add_flag("--json", ctx.flags.json, "print a JSON object");
  check->callback([c, &ctx] { ctx.exit_code = run_check(c->dir, c->deep, ctx.flags.json); });
}

}  // namespace untold::tools::cli
