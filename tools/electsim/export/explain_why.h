// The "why" of an `explain` account: chains that end at the fault step
// responsible, each said in a sentence. They take in what did not happen
// (messages a fault cut, lost or held up; timers that fired because an
// expected message never came), which happened-before over delivered
// messages cannot show: a leader's claim and the messages of its campaign
// that faults stopped; the messages two leaders of one term never got from
// each other; a double vote and the leaders it made; a stale write and the
// pause that held it; a lease the store expired while its holder was silent.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "tools/electsim/export/explain_story.h"

namespace electsim::explain {

struct Why {
  std::vector<std::string> lines;
  // The drops and late deliveries the lines name, for the causal history.
  std::set<uint64_t> evidence;
};

// `violations` in time order.
Why ExplainWhy(const Story& story, const std::vector<const checkers::Violation*>& violations);

}  // namespace electsim::explain
