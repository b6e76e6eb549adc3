// `electsim explain`: a readable account of a run's violations. First what
// ran (the options changed from the defaults and any deliberate bug, the
// resource's fencing, the checkers, the seed and the trace hash); then why,
// as chains that end at the fault step responsible, what did not happen
// included (messages a fault cut or held up, timers that fired because an
// expected message never came); every violation in time order with its
// evidence; each lease holder's deadline beside the store's expiry; and the
// causal history of the claims, walked back through happened-before (vector
// clocks over send -> deliver edges) with the cut messages added, as a
// compact timeline with a column per node, cut to the relevant window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

struct ExplainOptions {
  // Timeline lines at most; the earliest of the causal history are cut
  // first (faults are always kept), with a note of what was skipped.
  size_t max_timeline_lines = 40;
  // A repro's recorded trace hash: when the run's differs, the account
  // opens with a warning and then tells the run as it now is.
  std::optional<uint64_t> expected_trace_hash;
  // The checkers the repro recorded firing, named when the run now shows none.
  std::vector<std::string> recorded_violations;
};

// The account of the run's violations, or a line saying there was none.
// Errors: the scenario cannot run.
absl::StatusOr<std::string> ExplainRun(const Scenario& scenario, uint64_t seed, const ExplainOptions& options = {});

}  // namespace electsim
