// Scenarios generated from a seed alone, for `electsim fuzz`: a random
// cluster, run length, network weather and fault schedule, in the scenario
// language every other command reads. Swarm testing (Groce et al., 2012):
// each seed turns on a random subset of fault kinds, each at its own
// intensity, so that kinds which mask each other also get runs apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/guarantees.h"
#include "electsim/sim/types.h"
#include "nlohmann/json.hpp"

namespace electsim {

// Which scenarios the generator draws from a seed. Bump it with any change
// that makes a seed generate another scenario: shards of one campaign must
// agree on it, and a merge refuses summaries that do not.
// 2: the option swarm; 3: leader chains, quick restarts, focused seeds;
// 4: chains of next leaders, cut off as they take office, the last crashed
// as it commits (with a log); some cuts and isolations at a campaign.
inline constexpr int kGeneratorVersion = 4;

struct GeneratorSettings {
  uint32_t nodes_min = 3;
  uint32_t nodes_max = 7;
  sim::TimeNs duration_min = sim::TimeNs::Seconds(10);
  sim::TimeNs duration_max = sim::TimeNs::Seconds(30);
  bool fencing = false;  // the resource checks tokens
  // The kinds a seed's swarm draws from. Leaving some out focuses a run on
  // the rest, as a Jepsen nemesis does; with all of them (the default) a
  // seed's scenario is the one it was before the setting existed.
  algorithms::FaultKinds fault_kinds = algorithms::FaultKinds::All();
};

// The names of `kinds` in declaration order, joined by commas:
// "loss,crash"; and back (nullopt for an unknown name or an empty list).
std::string FaultKindList(algorithms::FaultKinds kinds);
std::optional<algorithms::FaultKinds> ParseFaultKindList(std::string_view text);

// A whole scenario document (to go through ParseScenarioJson like any file)
// for `algorithm` with `options` (a JSON object as a scenario writes them;
// `values` are the same options read), drawn from the stream "fuzz.generator"
// of `seed` only; its own "seed" is `seed` too. Every safety checker is on
// and no violation is expected. Clock drift stays within the bound a
// `safety_margin` option sets, so that a drifting lease holder is one its
// margin covers.
nlohmann::json GenerateScenario(const algorithms::Algorithm& algorithm, const nlohmann::json& options,
                                const algorithms::OptionValues& values, uint64_t seed,
                                const GeneratorSettings& settings);

}  // namespace electsim
