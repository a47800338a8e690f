// tools/cli/inspect.cpp - `untold info`, `validate` and `dump`: each input
// goes to the reader its magic names (.untold, or a foreign format's handler
// from formats.hpp); anything else is "unrecognised" (exit 1).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/reader.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

void write_stdout(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

/// -v: what the tool is about to read, and as what.
void say_reading(const common_flags& flags, const input& in, const detected& d) {
  if (!flags.verbose) return;
  std::string as = d.what == detected::kind::untold    ? "untold"
                   : d.what == detected::kind::foreign ? std::string(d.handler->name) + " (" +
                                                             std::string(d.handler->description) + ")"
                                                       : "unrecognised";
  complain("reading " + quote_path(in.name()) + ": " + std::to_string(in.bytes().size()) + " bytes, format " + as);
}

/// The document of a file that could not be read or recognised.
json failed(const std::string& path, const json& format, const json& error) {
  return json{{"file", path}, {"format", format}, {"valid", false}, {"error", error}};
}

/// A foreign handler without the function a command needs.
json unsupported(const std::string& path, const detected& d, const char* what) {
  const std::string message = std::string(d.handler->description) + " has no " + what + " in this tool";
  return failed(path, format_name(d),
                json{{"rule", "E-UNSUPPORTED"}, {"name", "unsupported"}, {"message", message},
                     {"context", json::object()}, {"describe", message}});
}

bool valid(const json& j) { return j.contains("valid") && j["valid"].is_boolean() && j["valid"].get<bool>(); }

std::string describe(const json& j) {
  if (j.contains("error") && j["error"].is_object() && j["error"].contains("describe"))
    return j["error"]["describe"].get<std::string>();
  return "invalid";
}

// ---- info ---------------------------------------------------------------------------

int run_info(const std::vector<std::string>& files, const common_flags& flags) {
  int rc = exit_ok;
  json all = json::array();
  for (const std::string& path : files) {
    std::string io_message;
    json io_error;
    const auto in = input::load(path, io_message, io_error);
    if (!in) {
      rc = worse(rc, exit_io);
      complain(io_message);
      if (flags.json) all.push_back(failed(path, nullptr, io_error));
      continue;
    }
    const detected d = detect(in->bytes());
    say_reading(flags, *in, d);
    json info;
    std::string text;
    switch (d.what) {
      case detected::kind::untold:
        info = info_json(path, in->bytes());
        text = info_text(info);
        break;
      case detected::kind::foreign:
        info = d.handler->info != nullptr ? d.handler->info(path, in->bytes()) : unsupported(path, d, "info");
        text = json_as_text(info);
        break;
      case detected::kind::unrecognised:
        info = failed(path, nullptr, unrecognised_error_json(in->bytes()));
        info["fileSize"] = in->bytes().size();
        complain(quote_path(path) + ": " + describe(info));
        break;
    }
    if (!valid(info)) rc = worse(rc, exit_invalid);
    if (flags.json) all.push_back(std::move(info));
    else print(text);
  }
  if (flags.json) print(to_text(all));
  return rc;
}

// ---- validate -----------------------------------------------------------------------

int run_validate(const std::vector<std::string>& files, bool deep, const common_flags& flags) {
  int rc = exit_ok;
  json results = json::array();
  std::size_t passed = 0;
  for (const std::string& path : files) {
    std::string io_message;
    json io_error;
    json r;
    if (const auto in = input::load(path, io_message, io_error)) {
      const detected d = detect(in->bytes());
      say_reading(flags, *in, d);
      switch (d.what) {
        case detected::kind::untold: r = validate_json(path, in->bytes(), deep); break;
        case detected::kind::foreign:
          r = d.handler->validate != nullptr ? d.handler->validate(path, in->bytes(), deep)
                                             : unsupported(path, d, "validate");
          break;
        case detected::kind::unrecognised:
          r = failed(path, nullptr, unrecognised_error_json(in->bytes()));
          break;
      }
      if (!valid(r)) rc = worse(rc, exit_invalid);
    } else {
      r = failed(path, nullptr, io_error);
      rc = worse(rc, exit_io);
    }
    if (valid(r)) ++passed;
    if (!flags.json && (!valid(r) || !flags.quiet)) print(validate_text(r));
    results.push_back(std::move(r));
  }
  const std::size_t failed_count = files.size() - passed;
  if (flags.json)
    print(to_text(json{{"deep", deep}, {"passed", passed}, {"failed", failed_count}, {"results", results}}));
  else if (!flags.quiet)
    std::printf("%zu passed, %zu failed\n", passed, failed_count);
  return rc;
}

// ---- dump ---------------------------------------------------------------------------

int run_dump(const std::string& path, std::uint32_t vertices, const common_flags& flags) {
  std::string io_message;
  json io_error;
  const auto in = input::load(path, io_message, io_error);
  if (!in) {
    complain(io_message);
    if (flags.json) print(to_text(failed(path, nullptr, io_error)));
    return exit_io;
  }
  const detected d = detect(in->bytes());
  say_reading(flags, *in, d);
  if (d.what == detected::kind::untold) {
    // dump prints vertices through the plain accessors: verify every byte first.
    auto opened = untold::open(in->bytes(), {.integrity = untold::integrity::full});
    if (!opened) {
      complain(escaped(path) + ": " + opened.error().describe());
      if (flags.json) print(to_text(failed(path, "untold", error_json(opened.error()))));
      return exit_invalid;
    }
    if (flags.json) write_dump_json(path, *opened, vertices, write_stdout);
    else write_dump_text(path, *opened, vertices, write_stdout);
    return exit_ok;
  }
  document_stream out(write_stdout, flags.json ? document_stream::syntax::json : document_stream::syntax::text);
  std::optional<json> refused;
  if (d.what == detected::kind::unrecognised) refused = failed(path, nullptr, unrecognised_error_json(in->bytes()));
  else if (d.handler->dump == nullptr) refused = unsupported(path, d, "dump");
  else refused = d.handler->dump(path, in->bytes(), out);
  if (!refused) return exit_ok;
  complain(quote_path(path) + ": " + describe(*refused));
  if (flags.json) print(to_text(*refused));
  return exit_invalid;
}

}  // namespace

void add_info_command(CLI::App& app, context& ctx) {
  struct args {
    std::vector<std::string> files;
    bool full = false;
  };
  auto a = std::make_shared<args>();
  CLI::App* cmd = app.add_subcommand("info", "Header, chunk table (types, compression, sizes), counts and bounds");
  cmd->add_option("FILE", a->files, ".untold or foreign-format files ('-' reads standard input)")->required();
  cmd->add_flag("--full", a->full,
                "foreign formats: print every item of long lists (default: the first " +
                    std::to_string(info_listing{}.max_items) + " and a count)");
  add_common_flags(*cmd, ctx.flags, "print a JSON array, one object per file");
  cmd->callback([a, &ctx] {
    if (a->full) listing().max_items = SIZE_MAX;
    ctx.exit_code = run_info(a->files, ctx.flags);
  });
}

void add_validate_command(CLI::App& app, context& ctx) {
  struct args {
    std::vector<std::string> files;
    bool deep = false;
  };
  auto a = std::make_shared<args>();
  CLI::App* cmd = app.add_subcommand("validate", "Check every rule of the format; print failing rule ids");
  cmd->add_option("FILE", a->files, ".untold or foreign-format files ('-' reads standard input)")->required();
  cmd->add_flag("--deep", a->deep, "also run the deep checks (.untold: R-INDEX-VALUE, R-FINITE, R-BOUNDS)");
  add_common_flags(*cmd, ctx.flags, "print a JSON report instead of text");
  cmd->callback([a, &ctx] { ctx.exit_code = run_validate(a->files, a->deep, ctx.flags); });
}

void add_dump_command(CLI::App& app, context& ctx) {
  struct args {
    std::string file;
    std::uint32_t vertices = 0;
  };
  auto a = std::make_shared<args>();
  CLI::App* cmd = app.add_subcommand("dump", "Entities as a tree, meshes, materials, textures and other tables");
  cmd->add_option("FILE", a->file, ".untold or foreign-format file ('-' reads standard input)")->required();
  cmd->add_option("--vertices", a->vertices, "print the first N decoded vertices of each mesh (.untold)")
      ->check(CLI::NonNegativeNumber);
  add_common_flags(*cmd, ctx.flags, "print JSON instead of text");
  cmd->callback([a, &ctx] { ctx.exit_code = run_dump(a->file, a->vertices, ctx.flags); });
}

}  // namespace untold::tools::cli
