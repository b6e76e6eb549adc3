// What `electsim fuzz` holds a run to: the fault kinds a scenario inflicts,
// and the invariants its algorithm declares kept under all of them. A
// violation of one of those is a broken guarantee (the fuzz fails); any other
// is a finding, counted but expected of that algorithm under those faults.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "electsim/algorithms/guarantees.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The kinds of fault the scenario's weather and steps inflict
// (FaultStep::Kinds, LinkFaultKinds).
algorithms::FaultKinds FaultKindsInPlay(const Scenario& scenario);

// The kinds of fault the network still inflicts once every step is over: the
// scenario's weather, or the last change to all links, and any change to one
// link after it (one link's later calming is not tracked: its selectors may
// name the leader, known only as the run goes; left unjudged is the safe
// side). Liveness is promised once the faults are over, in a network that
// inflicts none (a --set can leave latency past the calm bound, or loss, for
// good).
algorithms::FaultKinds NetworkFaultsOnceOver(const Scenario& scenario);

// Which option values a run is judged by.
enum class GuaranteesOf {
  kOptions,    // the options the scenario runs with
  kDefaults,   // the algorithm's defaults against a fencing resource: what a
               // deliberate bug (an option, an unfenced resource) must break
  kReference,  // the options the scenario runs with, but "bug" at none: what
               // the reference promises there, which a mutant must break
};

// The flag value that names `of`: options, defaults or reference.
std::string_view GuaranteesOfName(GuaranteesOf of);
std::optional<GuaranteesOf> ParseGuaranteesOf(std::string_view name);

// The invariants (checker names, sorted) a run of `scenario` must keep:
// those declared under every kind in play, plus stale_token when the
// resource fences (and unique_token when it also keeps tokens exclusive),
// plus liveness when the scenario judges it and `liveness` says so. With
// kDefaults, `defaults` (when given) stands for the algorithm's defaults: the
// option swarm's draws on them.
std::vector<std::string> JudgedInvariants(const Scenario& scenario, GuaranteesOf of, bool liveness = false,
                                          const algorithms::OptionValues* defaults = nullptr);

}  // namespace electsim
