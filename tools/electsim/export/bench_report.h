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

// What one trial measured, from the election that followed the fault.
struct BenchTrial {
  bool ran = false;
  std::string violations;  // checker names, ';'-separated
  uint64_t elections = 0;
  std::string cause;
  std::optional<int64_t> detection_ns, election_ns, known_ns;
  int64_t max_term = 0;
  uint64_t election_messages = 0;      // of the measured election, until known to all
  uint64_t messages_election = 0;      // the whole run's election traffic
  uint64_t messages_steady_state = 0;  // heartbeats, renewals and their replies
  int64_t end_ns = 0;
  // Estimated encoded sizes (sim::EstimatedEncodedBytes), as the counts above.
  uint64_t election_bytes = 0;
  uint64_t bytes_election = 0;
  uint64_t bytes_steady_state = 0;
};

BenchTrial MeasureTrial(const RunResult& result);

// One bench's results: trials[c][i] is trial i of configs[c].
struct BenchResults {
  std::string fault;
  std::string preset;
  uint64_t first_seed = 1;  // trial i runs under first_seed + i
  uint64_t trials = 0;      // per configuration
  std::string sweep;        // the swept parameter, "" without --sweep
  size_t algorithms = 1;    // configurations per sweep point
  const std::vector<BenchConfig>* configs = nullptr;
  const std::vector<std::vector<BenchTrial>>* results = nullptr;
};

// The CSV: a header and a row per trial that ran, in configuration then trial order.
std::string BenchCsv(const BenchResults& bench);
nlohmann::json BenchJson(const BenchResults& bench);
std::string BenchTable(const BenchResults& bench);

}  // namespace electsim
