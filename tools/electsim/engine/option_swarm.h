// The option swarm of `electsim fuzz`: each seed draws some of the
// algorithm's options as well as its scenario, so that a bug that needs a
// valid option other than the default (a longer request timeout, a renewal
// by compare-and-swap, pre-vote on) is reachable. The guarantee table of the
// options drawn is the one a seed is judged by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "electsim/algorithms/algorithm.h"
#include "nlohmann/json.hpp"

namespace electsim {

struct OptionDraw {
  nlohmann::json options = nlohmann::json::object();  // the fixed ones and the drawn ones, as a scenario writes them
  algorithms::OptionValues values;                    // the same, read
  // The defaults with the drawn options only (the fixed ones left out): what
  // `--guarantees-of defaults` judges a seed by when its options are drawn.
  algorithms::OptionValues defaults_with_drawn;
  std::vector<std::string> drawn;  // "pre_vote=true", "heartbeat_interval=75ms", in declaration order
  // What a campaign summary counts: the value of a boolean or a choice, the
  // name alone of a number ("pre_vote=true", "heartbeat_interval").
  std::vector<std::string> counted;
  // The drawn timings keep the defaults' proportions: for any two duration
  // options, one of them drawn, whose defaults differ, the larger default's
  // is still larger by the square root of the defaults' ratio or two thirds
  // of it, whichever is more (Raft: a heartbeat at most half of
  // election_timeout_min, which is at most 1/1.41 of election_timeout_max:
  // room left for clocks 30% apart), no ratio is drawn below its default
  // (a lease holder acting for less of its TTL than it renews within), and
  // no duration past 1.5 times its default (the generator's liveness window
  // is sized for timeouts near the defaults). Liveness is judged only then:
  // a heartbeat as long as the election timeout, no randomization, or a
  // lease view shorter than the renewal period leaves a cluster leaderless
  // by design, not by a bug. Safety is judged always.
  bool timing_kept = true;
};

// The options that may be drawn: every boolean, choice, integer, duration
// and ratio option not in `fixed`, except choices that promise nothing (a
// deliberate bug). Each is drawn with chance 1/2 from the stream
// "fuzz.options" of `seed` alone: a boolean either way, a choice among those
// that promise something, a number between half and twice its default
// (within its range). A draw the algorithm refuses (Validate: a heartbeat
// not below the election timeout) is drawn again, up to 8 times, then
// nothing is drawn.
absl::StatusOr<OptionDraw> DrawOptions(const algorithms::Algorithm& algorithm, const nlohmann::json& fixed,
                                       uint64_t seed, uint32_t nodes);

// Whether `values` keep the defaults' timing proportions, by the rules of
// OptionDraw::timing_kept but the cap, with every duration and ratio option
// away from its default counted as drawn: one given with --option or --set
// as well as one the swarm drew. A timing the user chose is held to the
// proportions a drawn one is, since the guarantees of liveness and
// disruption assume them; it may be slower as a whole (the liveness window
// is checked against the detection timeout wherever liveness is judged).
bool KeepsTimingProportions(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& values);

// The duration and ratio options of `values` away from their defaults, as
// NAME=VALUE in declaration order.
std::vector<std::string> TimingOptionsChanged(const algorithms::Algorithm& algorithm,
                                              const algorithms::OptionValues& values);

// The names of the options DrawOptions may draw, in declaration order.
std::vector<std::string> SwarmedOptions(const algorithms::Algorithm& algorithm, const nlohmann::json& fixed);

}  // namespace electsim
