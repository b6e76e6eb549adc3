// `electsim explain`: how a run's violation came about (export/explain.h).
#include "tools/electsim/export/explain.h"

#include <iostream>
#include <memory>

#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/campaign/seeds.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/io/exit_status.h"

namespace electsim::commands {
namespace {

struct ExplainFlags {
  std::string path;
  std::string seed;  // "": the repro's, or the scenario's
  ExplainOptions options;
};

int Explain(const ExplainFlags& flags) {
  // No file of its own, but standard output must not go into the input.
  if (auto status = campaign::OutputPlan({flags.path}).Check(); !status.ok()) return ReportError(status);
  auto text = ReadFile(flags.path);
  if (!text.ok()) return ReportError(text.status());
  std::optional<uint64_t> seed;
  if (!flags.seed.empty()) {
    auto parsed = campaign::ParseSeed("--seed", flags.seed);
    if (!parsed.ok()) return ReportError(parsed.status());
    seed = *parsed;
  }
  // A repro names itself in its first key; anything else is read as a scenario.
  std::optional<Scenario> scenario;
  uint64_t run_seed = 0;
  ExplainOptions options = flags.options;
  if (text->find("\"electsim_repro\"") != std::string::npos) {
    auto repro = ParseRepro(*text, flags.path);
    if (!repro.ok()) return ReportError(repro.status());
    run_seed = seed.value_or(repro->seed);
    // Another seed is another run: its hash is not the repro's to compare.
    if (!seed || *seed == repro->seed) {
      options.expected_trace_hash = repro->trace_hash;
      options.recorded_violations = repro->violations;
    }
    scenario = std::move(repro->scenario);
  } else {
    auto parsed = ParseScenario(*text, flags.path);
    if (!parsed.ok()) return ReportError(parsed.status());
    run_seed = seed.value_or(parsed->seed);
    scenario = std::move(*parsed);
  }
  auto account = ExplainRun(*scenario, run_seed, options);
  if (!account.ok()) return ReportError(account.status());
  std::cout << *account;
  return CommandOutcome().Finish();
}

}  // namespace

Command AddExplainCommand(CLI::App& parent) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* app = parent.add_subcommand(
      "explain",
      "tell why a run broke: the fault steps and what they cut, each violation (a repro, or a scenario and --seed)");
  app->add_option("file", flags->path, "repro file, or scenario file")->required();
  app->add_option("--seed", flags->seed, "seed (default: the repro's, or the scenario's)");
  app->add_option("--lines", flags->options.max_timeline_lines, "timeline lines at most (faults are always shown)")
      ->check(UnsignedText("a number of lines", 1, 100000))
      ->capture_default_str();
  return {app, [flags] { return Explain(*flags); }};
}

}  // namespace electsim::commands
