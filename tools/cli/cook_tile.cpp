// tools/cli/cook_tile.cpp - `untold cook-tile PLAN --job N`: runs one job of a
// distributed tile cook (pipeline/cook_tiles.hpp, docs/distributed.md). The
// plan comes from `untold cook SCENE --tiles ... -o OUT/ --plan PLAN`; jobs
// may run in any order their `after` lists allow and any number of times, on
// any machine that sees the output directory and PLAN.d/ (the pieces); the
// last job (the manifest) needs every other job's result.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "cook_tiles.hpp"

namespace untold::tools::cli {
namespace {

struct cook_tile_args {
  std::string plan;
  std::size_t job = 0;
  bool list = false;
};

int run_cook_tile(const cook_tile_args& a, const common_flags& flags) {
  const auto fail = [&](int code, const std::string& message) {
    complain(message);
    if (flags.json) print(to_text(json{{"plan", a.plan}, {"job", a.job}, {"ok", false}, {"error", message}}));
    return code;
  };
  const tile_plan_result planned = read_tile_plan(a.plan);
  if (!planned) return fail(planned.io_failure ? exit_io : exit_invalid, planned.error);
  if (a.list) {
    json jobs = json::array();
    for (const tile_job& j : planned.plan.jobs) {
      json entry{{"kind", name(j.what)}, {"tile", j.tile}, {"after", j.after}};
      if (j.what == tile_job::kind::lod) entry["level"] = j.level;
      jobs.push_back(std::move(entry));
    }
    if (flags.json) print(to_text(json{{"plan", a.plan}, {"jobs", std::move(jobs)}}));
    else
      for (std::size_t k = 0; k < planned.plan.jobs.size(); ++k) {
        const tile_job& j = planned.plan.jobs[k];
        std::string line = std::to_string(k) + " " + std::string(name(j.what));
        if (!j.tile.empty()) line.append(" ").append(escaped(j.tile));
        if (j.what == tile_job::kind::lod) line.append(" ").append(std::to_string(j.level));
        for (std::size_t i = 0; i < j.after.size(); ++i) line.append(i == 0 ? " after " : ",").append(std::to_string(j.after[i]));
        if (j.what == tile_job::kind::manifest) line.append(" after every other job");
        std::printf("%s\n", line.c_str());
      }
    return exit_ok;
  }
  const tile_cook_report r = run_tile_job(planned.plan, a.job);
  if (!r) return fail(r.io_failure ? exit_io : exit_invalid, r.error);
  if (flags.json) {
    json written = json::array();
    for (const auto& p : r.written) written.push_back(p.string());
    print(to_text(json{{"plan", a.plan}, {"job", a.job}, {"ok", true}, {"kind", name(planned.plan.jobs[a.job].what)},
                       {"tile", planned.plan.jobs[a.job].tile}, {"written", std::move(written)}, {"bytes", r.total_bytes}}));
  } else if (!flags.quiet) {
    std::printf("job %zu (%s %s): %zu files, %llu bytes\n", a.job, std::string(name(planned.plan.jobs[a.job].what)).c_str(),
                escaped(planned.plan.jobs[a.job].tile).c_str(), r.written.size(),
                static_cast<unsigned long long>(r.total_bytes));
  }
  return exit_ok;
}

}  // namespace

void add_cook_tile_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<cook_tile_args>();
  CLI::App* cmd = app.add_subcommand("cook-tile", "Run one job of a distributed tile cook (cook --tiles --plan)");
  cmd->add_option("plan", a->plan, "the plan JSON written by `untold cook --tiles ... --plan PLAN`")->required();
  CLI::Option* job = cmd->add_option("--job", a->job, "the job to run (0-based; the last one writes the manifest)");
  cmd->add_flag("--list", a->list, "list the plan's jobs (index, kind, tile, LOD level, the jobs each waits for) and run none")->excludes(job);
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  cmd->callback([a, job, &ctx] {
    if (!a->list && job->count() == 0) {
      complain("cook-tile needs --job N or --list");
      ctx.exit_code = exit_usage;
      return;
    }
    ctx.exit_code = run_cook_tile(*a, ctx.flags);
  });
}

}  // namespace untold::tools::cli
