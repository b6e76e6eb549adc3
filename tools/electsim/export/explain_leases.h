// Leases in an `explain` account: for each holder, the deadline it believed
// on its own clock, the store's expiry on the store's clock, and the margin
// between them, read from the store protocol's messages
// (electsim/algorithms/store.h) and the algorithm's declared options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/electsim/export/explain_story.h"

namespace electsim::explain {

// One line per holder and token, from what happened up to record `up_to`;
// empty when the run took no lease from a store.
std::vector<std::string> LeaseLines(const Story& story, uint64_t up_to);

// Whether the algorithm counts its lease deadlines on the wall clock (an
// option "deadline_clock" at "wall"), where a wall-clock step moves them.
bool DeadlinesOnWallClock(const Scenario& scenario);

}  // namespace electsim::explain
