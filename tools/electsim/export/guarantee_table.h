// The table `electsim list` prints of what an algorithm promises.
#pragma once

#include <string>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "nlohmann/json.hpp"

namespace electsim {

// One row per safety checker, one column per fault kind (after "none", a
// run without faults): "yes" where the algorithm, with `options`, declares
// the invariant kept, "-" where it does not. Every line is indented by
// `indent` spaces and ends with a newline.
std::string FormatGuarantees(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& options,
                             int indent);

// The option values whose guarantees `electsim list` shows, checked by
// check-guarantees and backed by counterexamples: the defaults, each other
// value of a boolean or choice option, and every boolean option changed at
// once when there are several (Raft's pre_vote with check_quorum).
struct GuaranteeVariant {
  std::string label;       // "defaults", "pre_vote true, check_quorum true", "deadline_clock \"wall\""
  std::string slug;        // for file names: "", "pre_vote.check_quorum", "deadline_clock.wall"
  nlohmann::json options;  // as a scenario writes them
  algorithms::OptionValues values;
};
std::vector<GuaranteeVariant> GuaranteeVariants(const algorithms::Algorithm& algorithm);

// For each variant but the defaults whose guarantees differ from the
// defaults': its table, after a line "with pre_vote true:" (or that line
// alone, "...: nothing is guaranteed", when it promises nothing), indented
// by `indent`; "" when none differs.
std::string FormatGuaranteeChanges(const algorithms::Algorithm& algorithm, int indent);

}  // namespace electsim
