// electsim's public API, in one include: what it takes to write an election
// algorithm and to run it.
//
// Writing one (README, "Write your own algorithm"): a node is a
// sim::Process, a pure state machine over a sim::Context (electsim/sim/
// process.h) whose messages are typed records (electsim/sim/message.h); it
// reports its role and its leader through algorithms::LeadershipReport and
// keeps its timers as algorithms::Timer objects; its leader writes to the
// shared resource with algorithms::LeaderWork under a fencing token. An
// algorithms::Algorithm (electsim/algorithms/algorithm.h) names it, declares
// its options, its guarantees and its message roles, and builds its nodes.
//
// Running it: register the algorithm, then hand the command line to
// electsim::Main, which is the whole electsim CLI (run, sweep, replay,
// explain, bench, fuzz, shrink, list), or run one scenario file with
// electsim::RunScenarioFile.
//
//   int main(int argc, char** argv) {
//     if (!algorithms::RegisterAlgorithm(MyAlgorithm()).ok()) return 2;
//     return electsim::Main(argc, argv);
//   }
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/guarantees.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/leadership.h"
#include "electsim/algorithms/options.h"
#include "electsim/algorithms/store.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/check.h"
#include "electsim/sim/message.h"
#include "electsim/sim/process.h"
#include "electsim/sim/rng.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"

namespace electsim {

// The electsim command line with every algorithm registered so far: the
// commands, their flags, their outputs and their exit statuses as README
// documents them. Returns the exit status; never throws.
int Main(int argc, char** argv);

// One run's verdict, as `electsim run` judges it.
struct Verdict {
  uint64_t seed = 0;
  uint64_t trace_hash = 0;                           // the run's fingerprint ("trace-hash: 0x..." in the summary)
  std::vector<std::string> violations;               // one line per checker that fired
  std::vector<std::string> failed_expectations;      // empty when the run met its scenario's expect block
  std::map<std::string, uint64_t> messages_by_type;  // sends per message type, services included
  bool met_expectations() const { return failed_expectations.empty(); }
};

// Loads the scenario file at `path` (checked as `electsim run` checks it)
// and runs it under `seed` (nullopt: the scenario's own). InvalidArgument
// names the file, the JSON path and what was expected.
absl::StatusOr<Verdict> RunScenarioFile(const std::string& path, std::optional<uint64_t> seed = std::nullopt);

}  // namespace electsim
