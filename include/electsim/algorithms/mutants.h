// Mutants: realistic bugs kept out of an algorithm's reference code, so a
// fuzz campaign can be scored on how many of them it catches.
//
// The one seam: a mutant is a subclass of the reference node that overrides
// one of its virtual steps, in the algorithm's own mutants file. The
// reference code holds no trace of any bug; it only names its steps. An
// algorithm with mutants has a "bug" option whose choices are "none" (the
// reference) and the mutants' names, and lists them in mutants().
// `electsim list --mutants` prints them; tools/mutation-score fuzzes each.
#pragma once

#include <string_view>
#include <vector>

#include "electsim/algorithms/options.h"

namespace algorithms {

struct Mutant {
  // The "bug" option's value that runs it.
  std::string_view name;
  // The mistake, as a reviewer would state it.
  std::string_view description;
  // What `electsim fuzz` needs to reach the mutated step, as flags (options
  // the step depends on, --fencing); empty when the defaults reach it.
  std::string_view fuzz_flags;
};

inline constexpr std::string_view kBugOption = "bug";

// The "bug" option over `mutants`: "none" first, then each mutant by name.
OptionSpec BugOption(const std::vector<Mutant>& mutants);

// The mutant the "bug" option picks, nullptr for "none".
const Mutant* ChosenMutant(const std::vector<Mutant>& mutants, const OptionValues& options);

}  // namespace algorithms
