// `electsim explain`: a readable account of a run's violation. First the
// invariant and the claims that clash (nodes, terms or tokens, simulated
// times) and the facts that decide the story (the stale write, the pause,
// the lease expiry, the partition step); then the causal history of those
// claims, walked back through happened-before (vector clocks over send ->
// deliver edges), as a compact timeline with a column per node and the
// faults marked, cut to the relevant window.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

struct ExplainOptions {
  // Timeline lines at most; the earliest of the causal history are cut
  // first (faults are always kept), with a note of what was skipped.
  size_t max_timeline_lines = 40;
};

// The account of the run's first violation (by trace position), or a line
// saying there was none. Errors: the scenario cannot run.
absl::StatusOr<std::string> ExplainRun(const Scenario& scenario, uint64_t seed, const ExplainOptions& options = {});

}  // namespace electsim
