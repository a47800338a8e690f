// tools/cli/common.cpp - see common.hpp.
#include "common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <CLI/CLI.hpp>

#include <untold/compression.hpp>
#include <untold/format.hpp>

#include "compress_spec.hpp"

namespace untold::tools::cli {

int worse(int a, int b) noexcept {
  const auto rank = [](int code) { return code == exit_io ? 3 : code == exit_usage ? 2 : code == exit_invalid ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

void add_common_flags(CLI::App& command, common_flags& flags, const std::string& json_help) {
  command.add_flag("-q,--quiet", flags.quiet, "print only errors and the requested result");
  command.add_flag("-v,--verbose", flags.verbose, "also say on stderr what the tool does");
  command.add_flag("--json", flags.json, json_help);
}

CLI::Validator compression_validator() {
  return CLI::Validator(
      [](std::string& value) {
        std::string error;
        const auto c = parse_compression(value, error);
        if (!c) return error;
        if (!compression_available(c->method)) return value + " is not available in this build";
        return std::string();
      },
      "none|lz4|lz4hc[:N]|zstd[:N]");
}

void print(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

void complain(std::string_view text) {
  std::fprintf(stderr, "untold: %.*s\n", static_cast<int>(text.size()), text.data());
}

json io_error_json(errc code, const std::string& describe, const std::string& reason,
                   std::optional<std::uint64_t> os_error) {
  json context = json::object();
  if (os_error) context = json{{"field", "errno"}, {"value", *os_error}};
  return json{{"rule", rule_id(code)},
              {"name", name(code)},
              {"message", reason},
              {"context", std::move(context)},
              {"describe", describe}};
}

json io_error_json(const write_failure& failed) {
  const error_context& c = failed.cause.context;
  const std::string reason = c.has_value ? system_reason(c.value) : failed.cause.describe();
  return io_error_json(failed.cause.code, failed.message, reason,
                       c.has_value ? std::optional<std::uint64_t>(c.value) : std::nullopt);
}

namespace {

/// Reads a stream to its end (stdin, a pipe, a device). False on a read
/// error, with errno set.
bool read_all(std::FILE* f, std::vector<std::byte>& out) {
  std::byte chunk[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, f);
    out.insert(out.end(), chunk, chunk + n);
    if (n < sizeof chunk) return std::ferror(f) == 0;
  }
}

}  // namespace

std::optional<input> input::load(const std::string& path, std::string& io_message, json& io_error) {
  input in;
  in.name_ = path;
  const auto fail_open = [&](const std::string& reason, std::optional<std::uint64_t> os_error) {
    io_message = "cannot open " + quote_path(path) + ": " + reason;
    io_error = io_error_json(errc::io_open_failed, io_message, reason, os_error);
    return std::nullopt;
  };
  const auto fail_read = [&](int os_error) {
    const std::string reason = system_reason(static_cast<std::uint64_t>(os_error));
    io_message = "cannot read " + quote_path(path) + ": " + reason;
    io_error = io_error_json(errc::io_read_failed, io_message, reason, static_cast<std::uint64_t>(os_error));
    return std::nullopt;
  };
  if (path == "-") {
    if (!read_all(stdin, in.buffer_)) return fail_read(errno);
    return in;
  }
  auto mapped = mapped_file::open(path);
  if (mapped) {
    in.mapped_ = std::move(*mapped);
    return in;
  }
  const error& e = mapped.error();
  if (e.code == errc::io_empty_file) return in;  // the format's reader judges an empty file
  const std::string_view field = e.context.field != nullptr ? e.context.field : "";
  if (field == "st_mode") {
    // A pipe or device (e.g. `untold info <(gunzip -c x.untold.gz)`): no size
    // to map, so read it like stdin.
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return fail_open(system_reason(static_cast<std::uint64_t>(errno)), static_cast<std::uint64_t>(errno));
    const bool ok = read_all(f, in.buffer_);
    const int read_errno = errno;
    std::fclose(f);
    if (!ok) return fail_read(read_errno);
    return in;
  }
  if (field == "size") return fail_open("the file is too large to map", std::nullopt);
  if (e.context.has_value) return fail_open(system_reason(e.context.value), e.context.value);
  return fail_open(std::string(e.message()), std::nullopt);
}

/// "  dropped  morph targets x3 in mesh 'Body': this library writes no morph tables yet"
std::string report_text(const convert::conversion_report& r, bool with_info) {
  using kind = convert::report_entry::kind;
  std::string s;
  if (r.entries.empty()) return s;
  s += "conversion report: " + std::to_string(r.count(kind::dropped)) + " dropped, " +
       std::to_string(r.count(kind::changed)) + " changed, " + std::to_string(r.count(kind::info)) + " info\n";
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

void complain_about(const cook_report& r, bool failed, bool strict, const common_flags& flags) {
  if (!flags.quiet)
    for (const std::string& w : r.warnings) complain("warning: " + w);
  if (!failed) return;
  complain(r.error);
  // --strict: the entries that made it fail belong to the error.
  if (strict && r.conversion.lost_anything() && !flags.json)
    std::fputs(report_text(r.conversion, false).c_str(), stderr);
}

}  // namespace untold::tools::cli
