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
#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/guarantees.h"
#include "electsim/algorithms/options.h"
#include "electsim/sim/types.h"
#include "nlohmann/json.hpp"
#include "sim/network.h"
#include "sim/simulator.h"
#include "tools/electsim/language/json_document.h"

namespace electsim {

// Names a node in a fault step; "leader" is resolved when the step runs.
struct NodeSelector {
  // kNextLeader ({"next_leader": N}): the Nth node to take the leader role
  // after the step's time (a leader already in office does not count), for
  // the node a crash, pause, isolation, clock step or cut's "from" acts on.
  enum class Kind { kId, kLeader, kStore, kResource, kNextLeader };
  Kind kind = Kind::kId;
  uint32_t id = 0;  // kId: the node; kNextLeader: N, from 1
  std::string Describe() const;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

// A time in a scenario: fixed (min == max) or drawn per seed, uniformly in
// [min, max], from the run's "scenario-times" stream.
struct TimeRange {
  sim::TimeNs min;
  sim::TimeNs max;
  bool fixed() const { return min == max; }
};

// "after": a step that happens `delay` after an event of the run rather than
// at a time known beforehand (scenarios/README.md defines the events).
struct Trigger {
  enum class Event { kLeaderElected, kLeaderKnown, kStepDone };
  Event event = Event::kStepDone;
  // The step (its index in the file's "faults") that must be over first;
  // required for kStepDone.
  std::optional<size_t> step;
  std::string step_name;  // as written, when the file names the step
  TimeRange delay;
};

struct FaultStep {
  enum class Action {
    kCrash,
    kRestart,
    kPause,
    kResume,
    kPartition,
    kIsolate,
    kCut,
    kHeal,
    kClockDrift,
    kClockShift,
    kNetwork,
    kLink,
  };
  // When the step happens. In a Scenario: at_range.min (or 0 with `after`);
  // in a run, the time drawn or the moment its trigger fired.
  sim::TimeNs at;
  TimeRange at_range;
  std::optional<Trigger> after;
  size_t file_index = 0;   // its place in the file's "faults"
  std::string name;        // optional, for "after": {"step": NAME}
  std::string json_path;   // "/faults/3", for messages and notes
  std::string action_key;  // the step's action as written: "crash", "clock", ...
  Action action = Action::kHeal;
  NodeSelector node;                              // crash, restart, pause, resume, isolate, clock; cut/link: from
  NodeSelector to;                                // cut, link
  std::vector<std::vector<NodeSelector>> groups;  // partition
  std::optional<sim::TimeNs> for_ns;              // undo after this long (in a Scenario: for_range->min)
  std::optional<TimeRange> for_range;
  // A moment of the node's own a crash, pause, isolation, one-way cut (of
  // its "from" node) or clock step waits for ("during"): the fault lands as
  // soon as the handler that reached it returns, where faults hurt
  // (FoundationDB's BUGGIFY puts them there too): a write begun
  // (write_begin), a vote granted (vote), a term taken (term), a lease
  // request sent (lease.request), an entry committed (log.commit), an
  // election begun (role: candidate). A cut then drops what that handler
  // sent, as it drops every message in flight.
  enum class Moment { kNone, kWrite, kVote, kTerm, kRenewal, kCommit, kCampaign };
  Moment during = Moment::kNone;
  // With "during": how long after its time the step waits for the moment
  // ("within"); past it the step is skipped. Unset: as long as the run lasts.
  std::optional<sim::TimeNs> within;
  bool lose_unsynced = false;  // crash: a power loss, stable-storage writes not synced are lost
  int64_t drift_ppm = 0;
  sim::TimeNs shift;
  sim::LinkConfig link;  // network, link
  // "write", "vote", "term", "renewal", "commit", "campaign"; "" for kNone.
  static std::string_view MomentName(Moment moment);
  // "crash the leader for 3s": for trace notes and reports.
  std::string Describe() const;
  // When the fault (including its undo) is over; in a Scenario, with its
  // times at their latest (unknown, so nullopt, for a step with "after").
  sim::TimeNs EndsAt() const { return for_ns ? at + *for_ns : at; }
  std::optional<sim::TimeNs> LatestEnd() const;
  // The kinds of fault the step inflicts, by which an algorithm's declared
  // guarantees are judged (a heal inflicts none).
  algorithms::FaultKinds Kinds() const;
};

// A latency is a fault when it can exceed this: below it every algorithm's
// timeouts hold with room to spare.
inline constexpr sim::TimeNs kCalmLatencyMax = sim::TimeNs::Millis(20);
// The kinds of fault network weather inflicts.
algorithms::FaultKinds LinkFaultKinds(const sim::LinkConfig& link);

// What pending events may take when a scenario says nothing: about a million of them.
inline constexpr uint64_t kDefaultPendingEventsMemoryMib = 150;

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
  // The --set changes made to the file (or the generated document), as
  // given: `document` holds them, the description is from before them.
  std::vector<std::string> sets;
  std::string description;
  uint32_t nodes = 0;
  uint64_t seed = 1;
  sim::TimeNs duration;
  const algorithms::Algorithm* algorithm = nullptr;
  algorithms::OptionValues options;
  sim::LinkConfig network;
  // "nodes_model": each node's processing and persist times (zero: none).
  sim::NodeModel node_model;
  bool fencing = true;
  // With fencing: the resource refuses the highest token from a writer other than its first.
  bool exclusive_token = false;
  algorithms::LeaderWorkConfig leader_work;
  std::vector<FaultStep> faults;  // in time order, steps with "after" last
  // "stop": end the run at the first instant, once every fault step is over,
  // when one live election node leads and every live one believes it.
  bool stop_when_leader_known = false;
  // The memory the events pending at once may take; past it the run stops
  // (sim::Simulator::SetMaxPendingEvents, at sim::kBytesPerPendingEvent each).
  uint64_t pending_events_memory_mib = kDefaultPendingEventsMemoryMib;
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
  // last fault step (with its "for") is over at the latest; nullopt when a
  // step with "after" makes that known only as the run goes.
  std::optional<sim::TimeNs> LivenessAfter() const;
};

// The longest description the loader takes (the schema's maxLength counts
// characters; bytes are never fewer).
inline constexpr size_t kMaxDescriptionBytes = 1000;

// Election nodes a scenario may have. Set-up and memory are linear in nodes
// (and in the links used); results/scale.md measures up to this.
inline constexpr uint32_t kMaxNodes = 100000;
// A clock runs at most this many millionths fast or slow (clock.drift_ppm).
inline constexpr int64_t kMaxDriftPpm = 499'999;
// {"next_leader": N}: at most this many elections ahead.
inline constexpr int64_t kMaxNextLeader = 100;

// `source` names the text in messages (a file path).
absl::StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& source);
// `json_path_prefix` is where the document sits in its file, for messages
// ("/scenario" inside a repro).
absl::StatusOr<Scenario> ParseScenarioJson(nlohmann::json document, const std::string& source,
                                           const std::string& json_path_prefix = "");
// For a document electsim made itself (fuzz's generated scenarios, the
// option swarm's probes), many per second: the schema check, a tenth of a
// 60 s fuzz seed, is left out. The readers' own checks all still apply (a
// reader that meets a type the schema would have refused fails cleanly),
// and tests hold the generator's documents to the schema.
absl::StatusOr<Scenario> ParseGeneratedScenarioJson(nlohmann::json document, const std::string& source);
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);

// The scenario name a file path gives when the scenario sets none.
std::string ScenarioNameFromPath(const std::string& path);

}  // namespace electsim
