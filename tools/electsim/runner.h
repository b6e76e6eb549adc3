// Runs a scenario under a seed: builds the cluster, schedules the faults,
// feeds the trace to the hasher, the checkers and the metrics, and judges the
// result against the scenario's expectations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkers/checker.h"
#include "checkers/metrics.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tools/electsim/scenario.h"

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
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  TraceCheckpoints checkpoints;
  sim::TimeNs end;
  sim::SimulatorStats stats;
  checkers::RunMetrics metrics;
  std::vector<checkers::Violation> violations;   // one per checker that fired, in checker-name order
  std::vector<std::string> failed_expectations;  // readable, empty when the run met them all
  std::vector<std::string> notes;                // fault steps that could not apply (e.g. no leader to crash)

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
};

inline constexpr sim::TimeNs kStopCheckInterval = sim::TimeNs::Millis(100);

// Errors are bad input (InvalidArgument: a scenario that cannot run), a
// simulator failure (Internal) or Cancelled; violations are results, judged
// into RunResult::failed_expectations for run and sweep alike.
absl::StatusOr<RunResult> RunScenario(const Scenario& scenario, uint64_t seed, const RunOptions& options = {});

}  // namespace electsim
