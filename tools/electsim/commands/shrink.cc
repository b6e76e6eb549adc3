// `electsim shrink`: a repro reduced to the smallest scenario found that
// still breaks the same invariant (engine/shrink.h).
#include "tools/electsim/engine/shrink.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"

namespace electsim::commands {
namespace {

struct ShrinkFlags {
  std::string repro_path;
  std::optional<std::string> invariant;  // default: DefaultInvariant
  uint64_t max_runs = 3000;
  std::optional<std::string> out_prefix;  // default: the repro's path without ".repro.json", plus ".shrunk"
};

ShrinkOutputs OutputsOf(const ShrinkFlags& flags) {
  std::string prefix = flags.out_prefix.value_or(flags.repro_path);
  if (!flags.out_prefix) {
    if (constexpr std::string_view suffix = ".repro.json"; prefix.ends_with(suffix)) {
      prefix.resize(prefix.size() - suffix.size());
    }
    prefix += ".shrunk";
  }
  return ShrinkOutputsFor(prefix);
}

void PrintShrunk(const ShrinkFlags& flags, const Repro& repro, const std::string& invariant, const ShrinkResult& s) {
  std::cout << fmt::format("shrink: {} seed {}, keeping {} broken: {} runs{}\n", EscapeForTerminal(flags.repro_path),
                           repro.seed, EscapeForTerminal(invariant), s.runs,
                           s.CutShort().empty() ? "" : fmt::format(" ({}; smaller may exist)", s.CutShort()));
  for (const std::string& what : s.removed) std::cout << "  removed: " << EscapeForTerminal(what) << "\n";
  std::cout << fmt::format("  now {} nodes, {} fault steps, {}, seed {}\n", s.scenario.nodes, s.scenario.faults.size(),
                           sim::FormatDuration(s.scenario.duration), s.result.seed);
}

// What made the run fail: the first the repro names as such, else the
// first violation its scenario did not expect; a repro of a run that met
// its expectations (a demonstration) keeps its first violation.
std::string DefaultInvariant(const Repro& repro) {
  if (!repro.failed_by.empty()) return repro.failed_by.front();
  const std::vector<std::string> unexpected = UnexpectedViolations(repro.scenario, repro.violations);
  return unexpected.empty() ? repro.violations.front() : unexpected.front();
}

int Shrink(const ShrinkFlags& flags) {
  auto text = ReadFile(flags.repro_path);
  if (!text.ok()) return ReportError(text.status());
  auto repro = ParseRepro(*text, flags.repro_path);
  if (!repro.ok()) return ReportError(repro.status());
  if (!flags.invariant && repro->violations.empty()) {
    return ReportError(
        InputError(fmt::format("{}: /violations: expected a repro with a violation to keep (or "
                               "--invariant)",
                               flags.repro_path)));
  }
  const std::string invariant = flags.invariant ? *flags.invariant : DefaultInvariant(*repro);
  // A name no checker has could only "not be broken": say it is unknown.
  const auto& known = checkers::AllCheckers();
  if (std::none_of(known.begin(), known.end(), [&](const auto& c) { return c.name == invariant; })) {
    std::vector<std::string> names;
    names.reserve(known.size());
    for (const auto& c : known) names.push_back(c.name);
    return ReportError(InputError(fmt::format("--invariant: expected a checker, one of {}; got \"{}\"",
                                              fmt::join(names, ", "), EscapeForTerminal(invariant))));
  }
  const ShrinkOutputs outputs = OutputsOf(flags);
  campaign::OutputPlan plan({flags.repro_path});
  // The scenario the repro came from, where it is a file here: a user's
  // source is no output's to replace.
  std::error_code ec;
  if (std::filesystem::is_regular_file(repro->scenario_file, ec)) plan.AddInput(repro->scenario_file);
  plan.AddFile("--out (the repro)", outputs.repro);
  plan.AddFile("--out (the scenario)", outputs.scenario);
  if (auto status = plan.Check(); !status.ok()) return ReportError(status);
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  auto shrunk = ShrinkScenario(repro->scenario.document, flags.repro_path, repro->seed, invariant, flags.max_runs);
  if (!shrunk.ok()) return ReportError(shrunk.status());
  CommandOutcome outcome;
  PrintShrunk(flags, *repro, invariant, *shrunk);
  if (auto status = WriteShrinkOutputs(outputs, *shrunk, plan.inputs()); !status.ok()) {
    outcome.CouldNotWrite(status);
  } else {
    std::cout << fmt::format("  scenario: {}\n  repro: {} (replay: {})\n", EscapeForTerminal(outputs.scenario),
                             EscapeForTerminal(outputs.repro),
                             EscapeForTerminal(CommandLine().Add("replay").AddPath(outputs.repro).Text()));
  }
  if (const int signal_number = StopSignal(); signal_number != 0) {
    outcome.Finish();
    return kExitSignalBase + signal_number;
  }
  return outcome.Finish();
}

}  // namespace

Command AddShrinkCommand(CLI::App& parent) {
  auto flags = std::make_shared<ShrinkFlags>();
  CLI::App* app = parent.add_subcommand("shrink", "reduce a repro to a minimal one that breaks the same invariant");
  app->add_option("repro", flags->repro_path, "repro file")->required();
  app->add_option(
      "--invariant", flags->invariant,
      "the invariant to keep broken (default: what made the run fail: the first violation it did not expect, "
      "or for fuzz the first declared guarantee broken)");
  app->add_option("--max-runs", flags->max_runs, "simulations to spend at most")
      ->check(UnsignedText("a number of runs", 1, UINT64_MAX))
      ->capture_default_str();
  app->add_option("--out", flags->out_prefix,
                  "write OUT.repro.json and OUT.json (default: the repro's name with .shrunk)");
  return {app, [flags] { return Shrink(*flags); }};
}

}  // namespace electsim::commands
