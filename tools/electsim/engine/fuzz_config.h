// What one fuzz campaign runs: the algorithm and its options, the --set
// edits applied to every generated document, the generator's settings and
// the guarantees a seed is judged by. One seed's scenario and verdict come
// from here, for the campaign and for `fuzz --seed N` alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/engine/option_swarm.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/engine/scenario_generator.h"
#include "tools/electsim/language/overrides.h"

namespace electsim {

struct FuzzSettings {
  std::string algorithm;
  std::vector<std::string> options;  // "name=value": a JSON value, or else a string
  std::vector<std::string> sets;     // --set PATH=VALUE
  GuaranteesOf guarantees_of = GuaranteesOf::kOptions;
  // Whether a run with no stable leader once the faults are over breaks a
  // guarantee (Raft, the lease) or is a finding (Bully, Ring).
  bool liveness_guaranteed = true;
  // Each seed draws some of the options not given (engine/option_swarm.h).
  bool option_swarm = true;
  GeneratorSettings generator;
};

struct FuzzVerdict {
  std::vector<std::string> broken;    // judged invariants violated
  std::vector<std::string> findings;  // other violations
  // The options the swarm drew for the seed, as a summary counts them
  // (OptionDraw::counted); none when it is off.
  std::vector<std::string> drawn;
  // Guarantees declared for the seed's faults but not judged, with why:
  // "liveness (timings)", "liveness (network)", "liveness (window)",
  // "disruption (timings)".
  std::vector<std::string> unjudged;
};

class FuzzConfig {
 public:
  // Checks the algorithm, the options (as a scenario's are checked) and the
  // --set edits (against the first seed's document: a --set that contradicts
  // a fuzz flag, such as algorithm or nodes, is refused).
  static absl::StatusOr<FuzzConfig> Make(const FuzzSettings& settings, uint64_t first_seed);

  const FuzzSettings& settings() const { return settings_; }
  const algorithms::Algorithm& algorithm() const { return *algorithm_; }
  // "fuzz-raft": the name of every generated scenario.
  std::string Name() const;
  // The document of `seed`, --set applied, as `fuzz --emit-scenario` prints it.
  absl::StatusOr<nlohmann::json> DocumentFor(uint64_t seed) const { return DocumentFor(seed, settings_.option_swarm); }
  absl::StatusOr<Scenario> ScenarioFor(uint64_t seed) const;
  // Liveness and disruption are judged only where the timings keep the
  // defaults' proportions (KeepsTimingProportions), whether drawn or given;
  // liveness also only in a network left calm (NetworkFaultsOnceOver) and a
  // window of two detection timeouts. What is left is named in `unjudged`.
  FuzzVerdict Judge(const Scenario& scenario, const RunResult& result) const;
  // A line telling the user so, when the timings given (--option, --set)
  // leave those proportions (the swarm may still draw a seed's other
  // timings back into them); nullopt when they keep them.
  std::optional<std::string> TimingNote() const;
  // A line telling the user that the --set edits leave the network faulty
  // once the faults are over (on the first seed's scenario), where liveness
  // is not judged; nullopt when they leave it calm.
  std::optional<std::string> NetworkNote() const;
  // A line telling the user that --guarantees-of defaults, which judges
  // against a fencing resource, judges a resource that does not fence (no
  // --fencing): stale_token breaks whatever the algorithm does.
  std::optional<std::string> FencingNote() const;
  // The flags that generate and judge the same scenarios, word by word.
  std::vector<std::string> Flags() const;
  // What shards of one campaign must agree on.
  nlohmann::json Identity() const;

 private:
  absl::StatusOr<nlohmann::json> DocumentFor(uint64_t seed, bool option_swarm) const;
  absl::StatusOr<OptionDraw> Draw(uint64_t seed) const;

  FuzzSettings settings_;
  const algorithms::Algorithm* algorithm_ = nullptr;
  nlohmann::json options_ = nlohmann::json::object();
  // The options the swarm leaves alone: --option's, and those a --set gives.
  nlohmann::json fixed_options_ = nlohmann::json::object();
  algorithms::OptionValues values_;
  algorithms::OptionValues effective_values_;  // after --set, before the swarm's draws
  std::vector<Override> overrides_;
  algorithms::FaultKinds network_once_over_;  // of the first seed's scenario, with --set
  uint64_t first_seed_ = 0;
};

}  // namespace electsim
