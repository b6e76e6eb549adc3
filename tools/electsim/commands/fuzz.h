// `electsim fuzz`: scenarios generated from seeds (scenario_generator.h),
// run on every core, judged against the guarantees the algorithm declares
// for the faults in play (fuzz_judge.h), sharded across processes or
// machines, with a JSON summary that merges, a JUnit report, repros and
// shrunk repros of what broke.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "electsim/sim/types.h"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/engine/scenario_generator.h"

namespace electsim {

struct FuzzOptions {
  std::string algorithm;
  std::vector<std::string> options;  // "name=value": a JSON value, or else a string
  std::vector<std::string> sets;     // --set PATH=VALUE, applied to every generated scenario
  GuaranteesOf guarantees_of = GuaranteesOf::kOptions;
  // Whether a run that finds no stable leader once the faults are over
  // fails the fuzz (algorithms declare safety only; Raft and the lease are
  // live once the network heals, Bully and Ring not always).
  bool liveness_guaranteed = true;
  GeneratorSettings generator;
  uint64_t first_seed = 1;
  uint64_t last_seed = 1000;
  std::optional<sim::TimeNs> time_budget;  // stop starting seeds after this long (wall clock)
  unsigned jobs = 1;
  uint64_t shard_index = 1;  // this process runs the seeds of shard shard_index of shard_count
  uint64_t shard_count = 1;
  bool stop_at_first_failure = false;
  std::string summary_path;  // "": none
  std::string junit_path;    // "": none
  std::string repro_dir = ".";
  uint64_t max_repros = 10;
  uint64_t shrink_runs = 3000;  // per repro; 0: no shrinking
};

// Exit status: 0 when no seed broke a guarantee, 1 when one did, 2 for bad
// input, 3 when an output could not be written, 128 + N after signal N (the
// summary of the seeds that finished is still written).
int Fuzz(const FuzzOptions& options);

// Prints the scenario of one seed, as `run` reads it.
int EmitFuzzScenario(const FuzzOptions& options, uint64_t seed);

// Combines the summaries of shards of one fuzz run into `summary_path` (and
// a JUnit report); the shards of one range merged equal the run unsharded.
int MergeFuzzSummaries(const std::vector<std::string>& paths, const std::string& summary_path,
                       const std::string& junit_path);

}  // namespace electsim
