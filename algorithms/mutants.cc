#include "electsim/algorithms/mutants.h"

#include <string>

#include "fmt/format.h"

namespace algorithms {

OptionSpec BugOption(const std::vector<Mutant>& mutants) {
  std::vector<std::string> choices = {"none"};
  std::string help = "deliberate bug, a mutant of the reference (none: the reference):";
  for (const Mutant& mutant : mutants) {
    choices.emplace_back(mutant.name);
    help += fmt::format(" {}: {};", mutant.name, mutant.description);
  }
  help.pop_back();
  return OptionSpec::Choice(std::string(kBugOption), std::move(choices), std::move(help));
}

const Mutant* ChosenMutant(const std::vector<Mutant>& mutants, const OptionValues& options) {
  const int64_t index = options.Int(kBugOption);  // a choice's value is its index; 0 is "none"
  return index == 0 ? nullptr : &mutants.at(static_cast<size_t>(index - 1));
}

}  // namespace algorithms
