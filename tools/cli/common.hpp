// tools/cli/common.hpp - what every `untold` subcommand shares: exit codes,
// the -q/-v/--json flags, messages on stderr, reading an input (a path or
// "-" for stdin) with the system's reason on failure, and deciding which
// format an input is by its magic bytes (.untold, a registered foreign
// format, or unrecognised). See docs/cli.md.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/bytes.hpp>
#include <untold/convert/model.hpp>
#include <untold/source.hpp>

#include "cook.hpp"
#include "files.hpp"
#include "formats.hpp"
#include "inspect.hpp"
#include "report_json.hpp"

namespace untold::tools::cli {

// The pipeline's (inspect.hpp, files.hpp): what every text output does with
// names and paths, and the system's reason for an OS error number.
using tools::escaped;
using tools::quote_path;
using tools::system_reason;

/// The documented exit codes (docs/cli.md).
enum exit_code : int { exit_ok = 0, exit_invalid = 1, exit_usage = 2, exit_io = 3 };

/// Combines per-file outcomes: an I/O failure outranks an invalid file,
/// which outranks success.
[[nodiscard]] int worse(int a, int b) noexcept;

struct common_flags {
  bool quiet = false;    // only errors and the requested result
  bool verbose = false;  // also what the tool does, on stderr
  bool json = false;     // one JSON document on stdout, also on failure
};

/// State shared by the subcommands of one run.
struct context {
  std::string version;      // `untold version`, --version
  common_flags flags;
  int exit_code = exit_ok;  // set by the subcommand that ran
};

/// Adds -q/--quiet, -v/--verbose and --json to a subcommand.
void add_common_flags(CLI::App& command, common_flags& flags, const std::string& json_help);

/// The --compress check: a malformed or unavailable method is a usage error.
[[nodiscard]] CLI::Validator compression_validator();

void print(std::string_view text);     // stdout, as is
void complain(std::string_view text);  // stderr: "untold: TEXT\n"

/// An input file's bytes: mapped when it is a regular file, read into memory
/// otherwise (stdin, pipes, devices). An empty file is not an error here: the
/// format's reader reports it (for .untold, R-TRUNC-HEADER, as untold::open).
class input {
 public:
  [[nodiscard]] static std::optional<input> load(const std::string& path, std::string& io_message, json& io_error);
  [[nodiscard]] byte_span bytes() const noexcept { return mapped_ ? mapped_->bytes() : byte_span(buffer_); }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  std::optional<mapped_file> mapped_;
  std::vector<std::byte> buffer_;
};

/// error_json's shape for an I/O failure: rule E-IO-OPEN / E-IO-READ /
/// E-IO-WRITE, "message" the system's reason, "describe" the whole sentence
/// ("cannot open 'x.untold': No such file or directory").
[[nodiscard]] json io_error_json(errc code, const std::string& describe, const std::string& reason,
                                 std::optional<std::uint64_t> os_error);
/// The same for a failed write_output (files.hpp).
[[nodiscard]] json io_error_json(const write_failure& failed);

/// A conversion report as text (cook, convert): a count line, then one
/// line per entry, e.g. "  dropped  morph targets x3 in mesh 'Body': ...";
/// info entries only `with_info` (--verbose). Names are escaped.
[[nodiscard]] std::string report_text(const convert::conversion_report& r, bool with_info);

/// What a cook or conversion prints on stderr: its warnings (unless quiet),
/// and on failure the error and, for a --strict refusal, the entries that
/// made it fail (text mode).
void complain_about(const cook_report& r, bool failed, bool strict, const common_flags& flags);

}  // namespace untold::tools::cli
