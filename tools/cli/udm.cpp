// tools/cli/udm.cpp - `untold udm`: Pragma UDM files (docs/udm.md).
//
//   untold udm convert IN OUT [--to binary|ascii] [--sort-keys] [--json] [-q] [-v]
//     binary <-> ASCII; the output form follows --to, else OUT's extension
//     ("_b" suffix: binary; .udm/.pmdl/.pmat/...: ASCII), else the opposite
//     of the input's. What it writes is read back by the strict reader first.
// The input has one budget (untold/budget.hpp) that the reader, the
// converter and the writer all charge (UDM-LIMITS).
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/budget.hpp>
#include <untold/udm/udm.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

namespace u = untold::udm;

std::string_view as_text(byte_span b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

struct convert_args {
  std::string input, output, to;
  bool sort_keys = false;
};

int run_convert(const convert_args& a, const common_flags& flags) {
  // One JSON document on stdout with --json, also on failure; else messages on stderr.
  const auto fail = [&a, &flags](int code, const std::string& message, const json& error) {
    if (flags.json) print(to_text(json{{"file", a.input}, {"output", a.output}, {"valid", false}, {"error", error}}));
    else complain(message);
    return code;
  };
  std::string io_message;
  json io_error;
  auto in = input::load(a.input, io_message, io_error);
  if (!in) return fail(exit_io, io_message, io_error);
  const byte_span bytes = in->bytes();
  const bool input_binary = u::is_binary_udm(bytes);
  const auto invalid_input = [&](const error& e) {
    return fail(exit_invalid, quote_path(a.input) + ": " + e.describe(), error_json(e));
  };
  budget charged(limits{}, bytes.size());
  u::property tree;
  std::uint32_t version = u::current_version;
  if (input_binary) {
    std::uint64_t document_bytes = 0;
    {
      u::open_options ro;
      ro.budget = &charged;
      auto doc = u::open_document(bytes, ro);
      if (!doc) return invalid_input(doc.error());
      document_bytes = charged.memory().used;
      version = doc->version();
      auto t = u::tree_from_view(doc->root(), charged);
      if (!t) return invalid_input(t.error());
      tree = std::move(*t);
    }
    charged.release_memory(document_bytes);  // the document is gone; the tree stays
  } else {
    u::ascii_open_options ao;
    ao.budget = &charged;
    auto t = u::open_ascii(as_text(bytes), ao);
    if (!t) return invalid_input(t.error());
    tree = std::move(*t);
  }
  bool to_binary = !input_binary;
  if (!a.to.empty()) {
    to_binary = a.to == "binary";
  } else {
    const std::string ext = std::filesystem::path(a.output).extension().string();
    if (ext.size() > 2 && ext.ends_with("_b")) to_binary = true;
    else if (ext == ".udm" || ext == ".pmdl" || ext == ".pmat" || ext == ".pmap" || ext == ".pskel" || ext == ".pani" ||
             ext == ".txt")
      to_binary = false;
  }
  // What is written is read back by the strict reader first (write_binary
  // verifies by default; the text is read here): a file this tool writes,
  // this tool reads.
  std::vector<std::byte> out;
  if (to_binary) {
    auto bin = u::write_binary(tree, {.version = version, .budget = &charged});
    if (!bin) return invalid_input(bin.error());
    out = std::move(*bin);
  } else {
    auto text = u::write_ascii(tree, {.sort_keys = a.sort_keys, .budget = &charged});
    if (!text) return invalid_input(text.error());
    if (auto back = u::open_ascii(*text); !back) return invalid_input(back.error());
    out.resize(text->size());
    std::memcpy(out.data(), text->data(), text->size());
  }
  if (auto failed = write_output(a.output, out)) return fail(exit_io, failed->message, io_error_json(*failed));
  const char* form = to_binary ? "binary" : "ascii";
  if (flags.json)
    print(to_text(json{{"file", a.input}, {"output", a.output}, {"valid", true}, {"to", form}, {"bytes", out.size()}}));
  else if (flags.verbose)
    complain("converted " + quote_path(a.input) + " -> " + quote_path(a.output) + " (" + form + ", " +
                  std::to_string(out.size()) + " bytes)");
  return exit_ok;
}

}  // namespace

void add_udm_command(CLI::App& app, context& ctx) {
  CLI::App* udm = app.add_subcommand("udm", "Pragma UDM files (docs/udm.md)");
  udm->require_subcommand(1);
  auto args = std::make_shared<convert_args>();
  CLI::App* convert = udm->add_subcommand("convert", "Convert a UDM file between binary and ASCII");
  convert->add_option("IN", args->input, "input file (binary or ASCII UDM; '-' for stdin)")->required();
  convert->add_option("OUT", args->output, "output file")->required();
  convert->add_option("--to", args->to, "output form (default: from OUT's extension, else the other form)")
      ->check(CLI::IsMember({"binary", "ascii"}));
  convert->add_flag("--sort-keys", args->sort_keys, "ASCII: sort keys by name, as Pragma writes them");
  add_common_flags(*convert, ctx.flags, "print {file, output, to, bytes} (or the error) as JSON");
  convert->callback([args, &ctx] { ctx.exit_code = run_convert(*args, ctx.flags); });
}

}  // namespace untold::tools::cli
