// tools/cli/help.cpp - `untold help [COMMAND [SUBCOMMAND]]` and `untold
// version`, as git and ktx have them (`--help` and `--version` work too).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace untold::tools::cli {

void add_help_command(CLI::App& app, context& ctx) {
  auto topic = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("help", "Show the help of untold, or of one COMMAND (e.g. 'help pak list')");
  cmd->add_option("COMMAND", *topic, "a command, and a subcommand of it");
  cmd->callback([&app, topic, &ctx] {
    // The formatter directly: App::help() would show the help of the
    // subcommand being run, i.e. of `help` itself.
    CLI::App* target = &app;
    std::string path = app.get_name();
    for (const std::string& name : *topic) {
      CLI::App* sub = nullptr;
      try {
        sub = target->get_subcommand(name);
      } catch (const CLI::OptionNotFound&) {
      }
      if (sub == nullptr) {
        const std::string asked = path.size() > app.get_name().size() ? path.substr(app.get_name().size() + 1) + " " : "";
        complain("help: no command '" + escaped(asked + name) + "' (run 'untold help' for the list)");
        ctx.exit_code = exit_usage;
        return;
      }
      target = sub;
      path += " " + name;
    }
    print(target->get_formatter()->make_help(target, path, CLI::AppFormatMode::Normal));
    ctx.exit_code = exit_ok;
  });
}

void add_version_command(CLI::App& app, context& ctx) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version of untold");
  cmd->add_flag("--json", ctx.flags.json, "print {\"version\": ...}");
  cmd->callback([&ctx] {
    print(ctx.flags.json ? to_text(json{{"version", ctx.version}}) : "untold " + ctx.version + "\n");
    ctx.exit_code = exit_ok;
  });
}

}  // namespace untold::tools::cli
