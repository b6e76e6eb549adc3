// `electsim run`: one scenario under one seed, judged against its `expect`
// block; a failing run writes a repro and prints the command that reproduces it.
#include <iostream>
#include <memory>
#include <optional>

#include "fmt/format.h"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/commands/trace_flags.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/export/summary_json.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/overrides.h"

namespace electsim::commands {
namespace {

struct RunFlags {
  std::string path;
  std::string seed;  // "": the scenario's
  TraceFlags trace;
  std::string repro_dir = ".";
  std::string repro_on = "failure";
  bool quiet = false;
  bool json_summary = false;
  std::vector<std::string> sets;
};

// Whether this run writes a repro: a failed run always (unless --repro-dir
// ""), one that missed a violation it expects too, as sweep writes it; a run
// that only showed the violations it expects when asked.
bool WritesRepro(const RunFlags& flags, const RunResult& result) {
  if (flags.repro_dir.empty()) return false;
  if (!result.met_expectations()) return true;
  return flags.repro_on == "violation" && !result.violations.empty();
}

void PrintVerdict(const RunFlags& flags, const Scenario& scenario, const RunResult& result, std::ostream& out) {
  if (flags.json_summary) {
    out << SummaryJson(scenario, result).dump() << "\n";
  } else if (!flags.quiet) {
    out << FormatSummary(scenario, result);
  }
}

int Run(const RunFlags& flags) {
  if (flags.repro_on != "failure" && flags.repro_on != "violation") {
    return ReportError(InputError(
        fmt::format("--repro-on: expected failure or violation; got \"{}\"", EscapeForTerminal(flags.repro_on))));
  }
  auto overrides = ParseOverrides(flags.sets);
  if (!overrides.ok()) return ReportError(overrides.status());
  if (!flags.seed.empty()) {
    if (auto status = RefuseOverrideOf(*overrides, "/seed", "run", "--seed"); !status.ok()) return ReportError(status);
  }
  auto scenario = LoadScenarioFile(flags.path, *overrides);
  if (!scenario.ok()) return ReportError(scenario.status());
  uint64_t seed = scenario->seed;
  if (!flags.seed.empty()) {
    auto parsed = campaign::ParseSeed("--seed", flags.seed);
    if (!parsed.ok()) return ReportError(parsed.status());
    seed = *parsed;
  }
  campaign::OutputPlan outputs({flags.path});
  const campaign::SeedFileFamily repros{"--repro-dir",
                                        flags.repro_dir,
                                        scenario->name,
                                        {campaign::SeedRange::Between(seed, seed), {}},
                                        {campaign::kReproSuffix}};
  if (!flags.repro_dir.empty()) outputs.AddFamily(repros);
  flags.trace.Declare(outputs);
  if (auto status = outputs.Check(); !status.ok()) return ReportError(status);
  auto trace = flags.trace.Open(outputs, *scenario, seed);
  if (!trace.ok()) return ReportError(trace.status());
  // Standard output carries exactly the trace when it streams there.
  std::ostream& out = flags.trace.ToStandardOutput() ? std::cerr : std::cout;
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  auto result = RunScenario(*scenario, seed, options);
  if (!result.ok()) return ReportError(result.status());
  CommandOutcome outcome;
  if (!result->met_expectations()) outcome.Failed();
  PrintVerdict(flags, *scenario, *result, out);
  // With --json, standard output holds the JSON object alone.
  std::ostream& notes = flags.json_summary ? std::cerr : out;
  if (WritesRepro(flags, *result)) {
    const std::string path = repros.PathFor(seed, campaign::kReproSuffix);
    if (auto status =
            WriteReproFile(path, *scenario, *result, UnexpectedViolations(*scenario, *result), outputs.inputs());
        status.ok()) {
      notes << fmt::format("repro: {} (replay: {})\n", EscapeForTerminal(path),
                           EscapeForTerminal(CommandLine().Add("replay").AddPath(path).Text()));
    } else {
      out << std::flush;
      outcome.CouldNotWrite(status);
    }
  }
  if (outcome.failed()) {
    const CommandLine reproduce =
        CommandLine().Add("run").AddPath(flags.path).Add("--seed", std::to_string(seed)).AddSets(flags.sets);
    notes << "reproduce: " << EscapeForTerminal(reproduce.Text()) << "\n";
  }
  out << std::flush;
  notes << std::flush;
  CommitTrace(trace->get(), *result, outcome);
  return outcome.Finish();
}

}  // namespace

Command AddRunCommand(CLI::App& parent) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* app = parent.add_subcommand("run", "run a scenario under a seed and check its invariants");
  app->add_option("scenario", flags->path, "scenario file (JSON)")->required();
  app->add_option("--seed", flags->seed, "seed (default: the scenario's)");
  flags->trace.Add(*app);
  app->add_option("--repro-dir", flags->repro_dir, "where a failing run writes its repro file (\"\": none)")
      ->capture_default_str();
  app->add_option("--repro-on", flags->repro_on,
                  "write a repro on a failure (a run that broke its expectations) or on any violation, also one "
                  "the scenario expects")
      ->capture_default_str();
  app->add_flag("--quiet", flags->quiet, "print nothing but repro and reproduce lines");
  app->add_flag("--json", flags->json_summary,
                "print the summary as one JSON object (scenarios/schema/summary.schema.json) instead of text");
  AddSetFlag(*app, flags->sets);
  return {app, [flags] {
            HandleTerminatingSignals(SignalResponse::kExitNow);
            return Run(*flags);
          }};
}

}  // namespace electsim::commands
