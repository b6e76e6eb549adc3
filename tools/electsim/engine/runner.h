// Runs a scenario under a seed: builds the cluster, schedules the faults,
// feeds the trace to the hasher, the checkers and the metrics, and judges the
// result against the scenario's expectations.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkers/checker.h"
#include "checkers/metrics.h"
#include "checkers/shard_metrics.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tools/electsim/engine/failover.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The running trace hash after every `every` records: a repro keeps them, so
// that a replay whose trace differs can say where it first differs. At most
// kMaxCheckpoints: when full, every other one goes and `every` doubles.
struct TraceCheckpoints {
  static constexpr size_t kMaxCheckpoints = 128;
  uint64_t every = 64;
  std::vector<uint64_t> hashes;  // hashes[i]: after record (i + 1) * every - 1
};

struct RunResult {
  uint64_t seed = 0;
  // Set only when the run hashed its trace (RunOptions::hash_trace), with
  // checkpoints: trace_hashed says which.
  bool trace_hashed = false;
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  TraceCheckpoints checkpoints;
  sim::TimeNs end;
  sim::SimulatorStats stats;
  checkers::RunMetrics metrics;
  std::vector<checkers::Violation> violations;   // one per checker that fired, in checker-name order
  std::vector<std::string> failed_expectations;  // readable, empty when the run met them all
  std::vector<std::string> notes;                // fault steps that could not apply (e.g. no leader to crash)
  // With RunOptions::log_fault_applications: which step made which records.
  std::vector<FaultApplication> fault_applications;
  std::vector<FailoverEpisode> failovers;  // one per fault step that hit the leader
  // For an algorithm that observes keys and has a "keys" option (shards).
  std::optional<checkers::ShardMetrics> shards;

  bool met_expectations() const { return failed_expectations.empty(); }
  std::vector<std::string> violated_checkers() const;
};

struct RunOptions {
  std::vector<sim::TraceSink*> extra_sinks;  // e.g. a JSONL writer
  // Asked now and then (every kStopCheckInterval of simulated time); true
  // abandons the run with a Cancelled status. Checking never changes a trace.
  std::function<bool()> should_stop;
  // Every sink is offered every observation, whatever types it declares
  // (sim::Simulator::OfferEveryObservation): for the test of those declarations.
  bool offer_every_observation = false;
  // Every sink is offered every record of every kind, and none is told where
  // instants start (sim::Simulator::OfferEveryRecord): for the test of the
  // kinds sinks declare.
  bool offer_every_record = false;
  // Off: the trace is not hashed. Sweep, fuzz and bench judge a seed by its
  // verdict alone, which needs no hash, and run the few seeds that get a
  // repro again, hashed (RunAgainHashed). Hashing is about an eighth of a
  // short Raft trial's instructions.
  bool hash_trace = true;
  // Off: no run metrics (RunResult::metrics stays empty), which fuzz and
  // check-guarantees never read: they judge a seed by its violations. A
  // scenario that expects what only the metrics tell (expect.elected,
  // multi_leader, writes_*) and a run that tracks failovers collect them all
  // the same, so the verdict never depends on this. Counting every send by
  // type is about a twentieth of a fuzz run's instructions.
  bool collect_metrics = true;
  // Off: no failover episodes (RunResult::failovers), which only a run's
  // report, its summary, bench and --metrics read. Tracking them is about a
  // twentieth of a short Raft trial's instructions; the trace is the same.
  bool track_failovers = true;
  // For an algorithm that observes keys: the per-key measures (RunResult::
  // shards) count from this time on, a fault's in bench.
  sim::TimeNs key_measures_from = sim::TimeNs(0);
  // On: RunResult::fault_applications, for explain, which must tell apart
  // steps armed together whose records come later in any order.
  bool log_fault_applications = false;
};

inline constexpr sim::TimeNs kStopCheckInterval = sim::TimeNs::Millis(100);

// Errors are bad input (InvalidArgument: a scenario that cannot run), a
// simulator failure (Internal) or Cancelled; violations are results, judged
// into RunResult::failed_expectations for run and sweep alike.
absl::StatusOr<RunResult> RunScenario(const Scenario& scenario, uint64_t seed, const RunOptions& options = {});

class ScenarioDriver;

// RunScenario for one scenario under many seeds, one after another (a
// campaign's worker): the simulator, the cluster view and the checkers are
// made once and anew in place for each seed, not built and registered again.
// Run(seed) returns what RunScenario(*scenario, seed, options) would, trace
// for trace (ScenarioRunner tests compare them over every shipped scenario).
// `options.extra_sinks` see the records of every run in turn.
class ScenarioRunner {
 public:
  ScenarioRunner(std::shared_ptr<const Scenario> scenario, RunOptions options);
  ~ScenarioRunner();
  ScenarioRunner(const ScenarioRunner&) = delete;
  ScenarioRunner& operator=(const ScenarioRunner&) = delete;

  absl::StatusOr<RunResult> Run(uint64_t seed);
  const std::shared_ptr<const Scenario>& scenario() const { return scenario_; }

 private:
  std::shared_ptr<const Scenario> scenario_;
  RunOptions options_;
  std::unique_ptr<ScenarioDriver> driver_;  // null before the first run and after a failed one
};

// Runs `seed` of `scenario` again with its trace hashed, for the repro of a
// run (`unhashed`) that was not. The same seed makes the same trace, so the
// verdict must come out the same: if it does not (violations, expectations,
// records or end), that is a determinism bug, returned as an Internal error
// rather than written into a repro that would not replay. `options` as for
// the first run (hash_trace is set here).
absl::StatusOr<RunResult> RunAgainHashed(const Scenario& scenario, uint64_t seed, const RunResult& unhashed,
                                         RunOptions options);

}  // namespace electsim
