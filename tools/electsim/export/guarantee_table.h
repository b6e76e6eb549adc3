// The table `electsim list` prints of what an algorithm promises.
#pragma once

#include <string>

#include "electsim/algorithms/algorithm.h"

namespace electsim {

// One row per safety checker, one column per fault kind (after "none", a
// run without faults): "yes" where the algorithm, with `options`, declares
// the invariant kept, "-" where it does not. Every line is indented by
// `indent` spaces and ends with a newline.
std::string FormatGuarantees(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& options,
                             int indent);

// One line per value of a boolean or choice option that changes the
// guarantees from the defaults' ("with deadline_clock \"wall\": single_leader
// not under clock_step; ..."), indented by `indent`; "" when none does.
std::string FormatGuaranteeChanges(const algorithms::Algorithm& algorithm, int indent);

}  // namespace electsim
