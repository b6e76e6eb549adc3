// `electsim sweep`: many seeds of scenarios, judged seed by seed exactly as
// `run` judges one, in memory that grows with the number of jobs, not with
// the number of seeds or with what the runs produce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/overrides.h"

namespace electsim {

struct SweepOptions {
  uint64_t first_seed = 1;
  uint64_t seeds = 100;
  unsigned jobs = 1;
  std::string repro_dir = ".";      // "": no repro files
  uint64_t max_repros = 10;         // repro files per scenario, for its first failing seeds
  std::vector<Override> overrides;  // --set, applied to every scenario
  std::string metrics_path;         // --metrics: a CSV row per seed ("": none)
  // --json: standard output holds one JSON object at the end (failing seeds
  // and repro lines go to standard error).
  bool json_summary = false;
};

// The --metrics CSV: its header line, and one seed's row (both end in a newline).
std::string MetricsCsvHeader();
std::string MetricsCsvRow(const Scenario& scenario, const RunResult& result);

// Returns the exit status (DEVELOPERS.md): 0 when every seed met its
// scenario's expectations, 1 when one did not, 2 for bad input, 3 when a
// repro could not be written or memory ran out, 128 + N after signal N.
int Sweep(const std::vector<std::string>& paths, const SweepOptions& options);

}  // namespace electsim
