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

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "electsim/algorithms/options.h"
#include "electsim/sim/check.h"
#include "electsim/sim/types.h"

namespace algorithms {

struct Mutant {
  // The "bug" option's value that runs it.
  std::string_view name;
  // The mistake, as a reviewer would state it.
  std::string_view description;
  // What `electsim fuzz` needs to reach the mutated step, as flags (options
  // the step depends on, --fencing); empty when the defaults reach it.
  std::string_view fuzz_flags;
  // Empty, or why no run can tell this mutant from the reference: an
  // equivalent mutant, which tools/mutation-score leaves out of the score
  // (and fails on if a seed kills it after all: then the claim is wrong).
  std::string_view equivalent = {};
};

inline constexpr std::string_view kBugOption = "bug";

// The "bug" option over `mutants`: "none" first, then each mutant by name.
OptionSpec BugOption(const std::vector<Mutant>& mutants);

// The mutant the "bug" option picks, nullptr for "none".
const Mutant* ChosenMutant(const std::vector<Mutant>& mutants, const OptionValues& options);

// An algorithm's mutants with the factories of their nodes: `Base` is the
// reference node's class (or sim::Process), `Config` what builds one. The
// "bug" option's value picks: 0 the reference, i the i-th entry.
template <typename Base, typename Config>
class MutantTable {
 public:
  using Factory = std::unique_ptr<Base> (*)(sim::NodeId, Config);
  struct Entry {
    Mutant mutant;
    Factory create;
  };
  template <typename Node>
  static std::unique_ptr<Base> Make(sim::NodeId self, Config config) {
    return std::make_unique<Node>(self, std::move(config));
  }

  explicit MutantTable(std::vector<Entry> entries) : entries_(std::move(entries)) {
    for (const Entry& entry : entries_) mutants_.push_back(entry.mutant);
  }

  const std::vector<Mutant>& mutants() const { return mutants_; }

  template <typename Reference>
  std::unique_ptr<Base> Create(int64_t bug, sim::NodeId self, Config config) const {
    SIM_CHECK(bug >= 0 && static_cast<size_t>(bug) <= entries_.size(), "bug is an index into the \"bug\" option");
    if (bug == 0) return std::make_unique<Reference>(self, std::move(config));
    return entries_[static_cast<size_t>(bug - 1)].create(self, std::move(config));
  }

 private:
  std::vector<Entry> entries_;
  std::vector<Mutant> mutants_;
};

}  // namespace algorithms
