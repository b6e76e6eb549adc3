// `electsim list`: the algorithms with their options and guarantees, and the checkers.
#include <algorithm>
#include <iostream>
#include <memory>

#include "checkers/checker.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/export/guarantee_table.h"
#include "tools/electsim/io/exit_status.h"

namespace electsim::commands {
namespace {

void ListAlgorithm(const algorithms::Algorithm& algorithm) {
  std::cout << fmt::format("  {}{}: {}\n", algorithm.name(), algorithm.uses_store() ? " (uses a store)" : "",
                           algorithm.summary());
  for (const algorithms::OptionSpec& option : algorithm.options()) {
    const std::string range = option.RangeText();
    std::cout << fmt::format("    {:<22} {:<12} default {:<10}{} {}\n", option.name,
                             algorithms::OptionTypeName(option.type), option.DefaultText(),
                             range.empty() ? "" : fmt::format(" [{}]", range), option.help);
  }
  std::cout << "    guarantees with these defaults, against a resource that checks no token (\"yes\": kept under any "
               "mix of the fault kinds marked yes):\n"
            << FormatGuarantees(algorithm, algorithms::OptionValues::Defaults(algorithm.options()), 4)
            << FormatGuaranteeChanges(algorithm, 4);
}

int List() {
  std::cout << "algorithms:\n";
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) ListAlgorithm(*algorithm);
  std::cout << "checkers:\n";
  size_t name_width = 0;
  for (const auto& checker : checkers::AllCheckers()) name_width = std::max(name_width, checker.name.size());
  for (const auto& checker : checkers::AllCheckers()) {
    std::cout << fmt::format("  {:<{}} {:<4} {}\n", checker.name, name_width, checker.on_by_default ? "on" : "off",
                             checker.summary);
  }
  std::cout
      << "  (\"on\" checkers run when a scenario lists none; liveness runs when a scenario has a liveness block)\n";
  return CommandOutcome().Finish();
}

// One mutant a line, tab-separated under a header, for tools/mutation-score.
int ListMutants() {
  std::cout << "algorithm\tmutant\tfuzz_flags\tdescription\tequivalent\n";
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (const algorithms::Mutant& mutant : algorithm->mutants()) {
      std::cout << fmt::format("{}\t{}\t{}\t{}\t{}\n", algorithm->name(), mutant.name, mutant.fuzz_flags,
                               mutant.description, mutant.equivalent);
    }
  }
  return CommandOutcome().Finish();
}

}  // namespace

Command AddListCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("list", "show algorithms with their options and guarantees, and checkers");
  auto mutants = std::make_shared<bool>(false);
  app->add_flag("--mutants", *mutants,
                "list the mutants instead (realistic bugs the \"bug\" option runs), one a line: algorithm, name, "
                "the fuzz flags that reach it and what it gets wrong, separated by tabs");
  return {app, [mutants] { return *mutants ? ListMutants() : List(); }};
}

}  // namespace electsim::commands
