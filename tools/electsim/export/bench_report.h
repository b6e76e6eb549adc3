// What `electsim bench` reports: per trial, the election that followed the
// fault (CSV, JSON); per configuration, latency statistics; per algorithm,
// paired differences against the first on the same trials. Every label is
// read off the scenario that ran.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/electsim/engine/bench_scenarios.h"
#include "tools/electsim/engine/runner.h"

namespace electsim {

// What one trial measured. Latencies are those of the failover the fault set
// off (engine/failover.h), from the fault's moment; trials that broke an
// invariant keep their figures here but are left out of the statistics.
struct BenchTrial {
  bool ran = false;
  std::string violations;  // checker names, ';'-separated
  uint64_t elections = 0;  // election episodes of the whole run (checkers/metrics.h)
  int64_t max_term = 0;
  int64_t end_ns = 0;
  // When the fault struck the leader, from the start of the run.
  std::optional<int64_t> fault_ns;
  // The failover: the first node expected to take over acting, the first
  // leader claim among them, a new leader known to them all.
  std::optional<int64_t> detection_ns, election_ns, known_ns;
  // Isolate and pause: how long the old leader acted as leader while it
  // should not have. Isolate: after the heal, one leader known to all, and
  // whether it was the old leader winning back.
  std::optional<int64_t> old_leader_acting_ns, settled_ns;
  bool old_leader_back = false;
  // Terms (or epochs) the failover took: the new leader's less the struck
  // leader's. Above 1, a round ended without a leader (a split vote).
  std::optional<int64_t> failover_terms;
  // Election messages and their estimated bytes (sim::EstimatedEncodedBytes)
  // of the election episodes from the fault until the new leader was known.
  uint64_t failover_messages = 0;
  uint64_t failover_bytes = 0;
  // The whole run's, by message class.
  uint64_t run_election_messages = 0;
  uint64_t run_election_bytes = 0;
  uint64_t run_steady_state_messages = 0;
  uint64_t run_steady_state_bytes = 0;
  // Lossy: the known-to-all latency of every election episode of the run.
  std::vector<int64_t> every_election_known_ns;
  // A key fault: what the keys went through from the fault on (RunResult::shards).
  std::optional<checkers::ShardMetrics> keys;
};

// `every_election`: keep every election's latency (the lossy fault).
BenchTrial MeasureTrial(const RunResult& result, bool every_election);

// One bench's results: trials[c][i] is trial i of configs[c].
struct BenchResults {
  std::string fault;
  std::string preset;
  std::vector<std::string> sets;  // --set PATH=VALUE, as given: every configuration ran with them
  uint64_t first_seed = 1;        // trial i runs under first_seed + i
  uint64_t trials = 0;            // per configuration
  // Asked for (--trials); more than `trials` when Ctrl-C stopped the run.
  uint64_t trials_requested = 0;
  std::string sweep;  // the swept parameter, "" without --sweep
  // What the sweep's values ran in place of ("the preset's value", "the
  // lossy fault's loss"), "" when nothing else sets the swept parameter.
  std::string sweep_replaces;
  size_t algorithms = 1;  // configurations per sweep point
  const std::vector<BenchConfig>* configs = nullptr;
  const std::vector<std::vector<BenchTrial>>* results = nullptr;
};

// The CSV: a header and a row per trial that ran, in configuration then trial order.
std::string BenchCsv(const BenchResults& bench);
nlohmann::json BenchJson(const BenchResults& bench);
enum class BenchFormat { kText, kMarkdown };
std::string BenchTable(const BenchResults& bench, BenchFormat format = BenchFormat::kText);

// The CSV's columns, with what each holds: README and tests read them here.
struct CsvColumn {
  const char* name;
  const char* meaning;
};
const std::vector<CsvColumn>& BenchCsvColumns();

}  // namespace electsim
