// A scenario as data: cluster, algorithm and options, network, timed faults,
// checkers and expectations. Loaded from JSON with every error naming the
// file, the JSON path and what was expected (see scenarios/README.md); the
// format itself is scenarios/schema/scenario.schema.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/options.h"
#include "nlohmann/json.hpp"
#include "sim/network.h"
#include "sim/types.h"
#include "tools/electsim/json_document.h"

namespace electsim {

// Names a node in a fault step; "leader" is resolved when the step runs.
struct NodeSelector {
  enum class Kind { kId, kLeader, kStore, kResource };
  Kind kind = Kind::kId;
  uint32_t id = 0;
  std::string Describe() const;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

struct FaultStep {
  enum class Action {
    kCrash, kRestart, kPause, kResume, kPartition, kIsolate, kCut, kHeal,
    kClockDrift, kClockShift, kNetwork, kLink,
  };
  sim::TimeNs at;
  std::string json_path;   // "/faults/3", for messages and notes
  std::string action_key;  // the step's action as written: "crash", "clock", ...
  Action action = Action::kHeal;
  NodeSelector node;                              // crash, restart, pause, resume, isolate, clock; cut/link: from
  NodeSelector to;                                // cut, link
  std::vector<std::vector<NodeSelector>> groups;  // partition
  std::optional<sim::TimeNs> for_ns;              // undo after this long
  bool during_write = false;                      // pause: wait for the node's next write_begin
  bool lose_unsynced = false;                     // crash: a power loss, stable-storage writes not synced are lost
  int64_t drift_ppm = 0;
  sim::TimeNs shift;
  sim::LinkConfig link;                           // network, link
  // "crash the leader for 3s": for trace notes and reports.
  std::string Describe() const;
  // When the fault (including its undo) is over.
  sim::TimeNs EndsAt() const { return for_ns ? at + *for_ns : at; }
};

struct Expectation {
  std::vector<std::string> violations;  // sorted
  std::optional<bool> multi_leader;
  std::optional<uint64_t> writes_rejected_min;
  std::optional<uint64_t> writes_accepted_min;
  std::optional<bool> elected;
};

struct Scenario {
  std::string source;  // where it was loaded from (file path or "<repro>")
  std::string name;    // file stem
  std::string description;
  uint32_t nodes = 0;
  uint64_t seed = 1;
  sim::TimeNs duration;
  const algorithms::Algorithm* algorithm = nullptr;
  algorithms::OptionValues options;
  sim::LinkConfig network;
  bool fencing = true;
  // With fencing: the resource refuses the highest token from a writer other than its first.
  bool exclusive_token = false;
  algorithms::LeaderWorkConfig leader_work;
  std::vector<FaultStep> faults;
  std::vector<std::string> checkers;  // sorted, unique
  bool liveness = false;
  std::optional<sim::TimeNs> liveness_after;
  sim::TimeNs liveness_within = sim::TimeNs::Seconds(5);
  // How long the leader found by the deadline must then hold; unset: until the end.
  std::optional<sim::TimeNs> liveness_stable_for;
  Expectation expect;
  nlohmann::json document;  // the JSON as given, kept for repro files

  algorithms::Cluster cluster() const;
  uint32_t total_nodes() const;  // election nodes + resource (+ store)
  // When liveness starts to be judged: `liveness_after`, or else when the
  // last fault step (with its "for") is over.
  sim::TimeNs LivenessAfter() const;
};

inline constexpr uint32_t kMaxNodes = 64;

// `source` names the text in messages (a file path).
absl::StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& source);
// `json_path_prefix` is where the document sits in its file, for messages
// ("/scenario" inside a repro).
absl::StatusOr<Scenario> ParseScenarioJson(nlohmann::json document, const std::string& source,
                                           const std::string& json_path_prefix = "");
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);

// The scenario name a file path gives when the scenario sets none.
std::string ScenarioNameFromPath(const std::string& path);

}  // namespace electsim
