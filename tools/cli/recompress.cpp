// tools/cli/recompress.cpp - `untold recompress FILE -o OUT --compress SPEC`
// (the logic is pipeline/recompress.hpp).
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "compress_spec.hpp"
#include "recompress.hpp"

namespace untold::tools::cli {
namespace {

struct recompress_args {
  std::string input, output, compress;
};

int run_recompress(const recompress_args& a, const common_flags& flags) {
  int code = exit_ok;
  std::string error;
  std::size_t in_size = 0, out_size = 0;
  std::string io_message;
  json io_error;
  if (const auto in = input::load(a.input, io_message, io_error); !in) {
    code = exit_io;
    error = io_message;
  } else if (const detected d = detect(in->bytes()); d.what != detected::kind::untold) {
    code = exit_invalid;
    error = quote_path(a.input) + " is not a .untold file" +
            (d.what == detected::kind::foreign ? " but a " + std::string(d.handler->description) : std::string());
  } else {
    in_size = in->bytes().size();
    std::string ignored;
    const recompress_result r =
        recompress(in->bytes(), uniform_policy(parse_compression(a.compress, ignored).value_or(chunk_compression{})));
    if (!r) {
      code = exit_invalid;
      error = escaped(a.input) + ": " + r.error;
    } else if (auto failed = write_output(a.output, r.bytes)) {
      code = exit_io;
      error = std::move(failed->message);
    } else {
      out_size = r.bytes.size();
    }
  }
  if (code != exit_ok) complain(error);
  if (flags.json) {
    print(to_text(json{{"input", a.input},
                       {"output", a.output},
                       {"compress", a.compress},
                       {"ok", code == exit_ok},
                       {"error", code == exit_ok ? json(nullptr) : json(error)},
                       {"inputBytes", in_size},
                       {"outputBytes", out_size}}));
  } else if (code == exit_ok && !flags.quiet) {
    std::printf("recompressed %s -> %s (%s): %zu -> %zu bytes, payloads verified identical\n", escaped(a.input).c_str(),
                escaped(a.output).c_str(), a.compress.c_str(), in_size, out_size);
  }
  return code;
}

}  // namespace

void add_recompress_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<recompress_args>();
  CLI::App* cmd = app.add_subcommand("recompress", "Rewrite chunk compression; content stays byte-identical");
  cmd->add_option("FILE", a->input, "input .untold file ('-' reads standard input)")->required();
  cmd->add_option("-o,--output", a->output, "output file (may equal FILE)")->required();
  cmd->add_option("--compress", a->compress, "chunk compression")->required()->check(compression_validator());
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_recompress(*a, ctx.flags); });
}

}  // namespace untold::tools::cli
