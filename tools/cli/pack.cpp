// tools/cli/pack.cpp - `untold pack info FILE`: the layout, per-kind
// summary and entry listing of an assetc .hpack (docs/assetc.md).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/source.hpp>

#include "commands.hpp"
#include "format_assetc.hpp"

namespace untold::tools::cli {
namespace {

namespace ua = untold::assetc;

std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%5.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

int run_pack_info(const std::string& path, bool as_json) {
  auto file = mapped_file::open(path);
  if (!file) {
    complain("pack info: " + escaped(path) + ": " + file.error().describe());
    return exit_io;
  }
  auto p = ua::open_hpack(file->bytes(), assetc_open_options());
  if (!p) {
    if (as_json) print(to_text(json{{"file", path}, {"valid", false}, {"error", error_json(p.error())}}));
    else complain("pack info: " + escaped(path) + ": " + p.error().describe());
    return exit_invalid;
  }
  if (as_json) {  // the format's dump (formats.hpp), streamed
    document_stream out(print);
    (void)find_format("assetc-hpack")->dump(path, file->bytes(), out);  // valid: open_hpack accepted it above
    return exit_ok;
  }
  const ua::pack_layout l = p->layout();
  std::printf("%s: .hpack v%u, %zu entries, %llu bytes\n\nlayout\n", escaped(path).c_str(), ua::hpack_version, p->size(),
              static_cast<unsigned long long>(l.file));
  const std::pair<const char*, std::uint64_t> parts[] = {
      {"header", l.header}, {"toc", l.toc}, {"payload", l.payload}, {"padding", l.padding}};
  for (const auto& [name, bytes] : parts)
    std::printf("  %-8s %12llu  %s\n", name, static_cast<unsigned long long>(bytes), percent(bytes, l.file).c_str());
  std::printf("\nby kind\n");
  std::map<std::uint8_t, std::pair<std::size_t, std::uint64_t>> kinds;
  for (const ua::pack_entry& e : p->entries()) {
    kinds[e.kind].first += 1;
    kinds[e.kind].second += e.size;
  }
  for (const auto& [kind, v] : kinds)
    std::printf("  %-10s %6zu files %12llu bytes\n", std::string(ua::pack_kind_name(kind)).c_str(), v.first,
                static_cast<unsigned long long>(v.second));
  std::printf("\nentries\n  %-10s %12s %12s  path\n", "kind", "size", "offset");
  for (const ua::pack_entry& e : p->entries())
    std::printf("  %-10s %12llu %12llu  %s\n", std::string(ua::pack_kind_name(e.kind)).c_str(),
                static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(e.offset),
                escaped(e.path).c_str());
  return exit_ok;
}

}  // namespace

void add_pack_command(CLI::App& app, context& ctx) {
  auto file = std::make_shared<std::string>();
  CLI::App* pack = app.add_subcommand("pack", "assetc .hpack bundles");
  pack->require_subcommand(1, 1);
  CLI::App* info = pack->add_subcommand("info", "Layout breakdown, per-kind summary and entry listing of a .hpack");
  info->add_option("FILE", *file, "the .hpack")->required();
  info->add_flag("--json", ctx.flags.json, "print a JSON object");
  info->callback([file, &ctx] { ctx.exit_code = run_pack_info(*file, ctx.flags.json); });
}

}  // namespace untold::tools::cli
