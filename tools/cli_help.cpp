// tools/cli_help.cpp - `untold help [COMMAND]` and `untold version`, as git
// and ktx have them (`--help` and `--version` work too).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_commands.hpp"

namespace untold::tools::cli {

void add_help_command(CLI::App& app, context& ctx) {
  auto topic = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("help", "Show the help of untold, or of one COMMAND");
  cmd->add_option("COMMAND", *topic, "a subcommand");
  cmd->callback([&app, topic, &ctx] {
    // The formatter directly: App::help() would show this subcommand's help,
    // the one being run.
    if (topic->empty()) {
      print(app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal));
      ctx.exit_code = exit_ok;
      return;
    }
    CLI::App* sub = nullptr;
    try {
      sub = app.get_subcommand(*topic);
    } catch (const CLI::OptionNotFound&) {
    }
    if (sub == nullptr) {
      complain("help: no command '" + *topic + "' (run 'untold help' for the list)");
      ctx.exit_code = exit_usage;
      return;
    }
    print(sub->get_formatter()->make_help(sub, app.get_name() + " " + sub->get_name(), CLI::AppFormatMode::Normal));
    ctx.exit_code = exit_ok;
  });
}

void add_version_command(CLI::App& app, context& ctx, const std::string& version) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version of untold");
  cmd->add_flag("--json", ctx.flags.json, "print {\"version\": ...}");
  cmd->callback([version, &ctx] {
    print(ctx.flags.json ? to_text(json{{"version", version}}) : "untold " + version + "\n");
    ctx.exit_code = exit_ok;
  });
}

}  // namespace untold::tools::cli
