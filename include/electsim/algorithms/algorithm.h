// The one interface every election algorithm implements, so that Raft, Bully,
// Ring and lease-over-CAS are interchangeable in scenarios, the fuzzer and the
// latency comparison. An algorithm is a factory of sim::Process nodes plus a
// schema of its options.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "electsim/algorithms/guarantees.h"
#include "electsim/algorithms/mutants.h"
#include "electsim/algorithms/options.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms {

// How a leader exercises its leadership: every `write_interval` it checks it
// may still act, spends `write_duration` preparing the write (the window where
// a GC-like pause makes a write stale) and then sends it to the resource.
struct LeaderWorkConfig {
  sim::TimeNs write_interval = sim::TimeNs::Millis(100);
  sim::TimeNs write_duration = sim::TimeNs::Millis(5);
};

// Where everything is. Election nodes are 0..node_count-1; the shared
// resource and (for algorithms that use one) the store come after them.
struct Cluster {
  uint32_t node_count = 0;
  sim::NodeId resource = sim::kNoNode;
  sim::NodeId store = sim::kNoNode;
  LeaderWorkConfig leader_work;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  // Must return the same static vector every time (OptionValues points into it).
  virtual const std::vector<OptionSpec>& options() const = 0;

  // Checks relations between options (e.g. a TTL shorter than its renewal
  // interval) and against the cluster. Single values are already in range.
  // The message names the offending option(s).
  virtual absl::Status Validate(const OptionValues& options, const Cluster& cluster) const {
    (void)options;
    (void)cluster;
    return absl::OkStatus();
  }

  // Which messages only a leader sends and which grant votes (see
  // vocab::MessageRoles); the checkers verify observations against them.
  // Must return the same object every time.
  virtual const vocab::MessageRoles& message_roles() const {
    static const vocab::MessageRoles none;
    return none;
  }

  // The safety invariants this algorithm keeps with these options, and under
  // which fault kinds (see guarantees.h). The default promises nothing.
  virtual Guarantees guarantees(const OptionValues& options) const {
    (void)options;
    return {};
  }

  // The clock drift this algorithm's timing is built to absorb, when it
  // declares one: every election node's clocks running no slower than
  // `slowest_ppm` (and as fast as they like), every other node's (the
  // store's, the resource's) true. Guarantees under kClockDrift then hold
  // for drift within it; drift past it counts as kPause. A lease holder that
  // acts for safety_margin x TTL on its own clock, against a store that
  // times the TTL on a true clock, absorbs a clock slow by 1 - safety_margin.
  struct ClockDriftBound {
    int64_t slowest_ppm = 0;
  };
  virtual std::optional<ClockDriftBound> clock_drift_bound(const OptionValues& options) const {
    (void)options;
    return std::nullopt;
  }

  // For `electsim bench`, which strikes the leader at a random point of one
  // heartbeat period and waits out the detection: the option that holds the
  // leader's heartbeat (or renewal) period, and the one that holds how long
  // the others wait for it before they act. Without them the algorithm
  // cannot be benched.
  struct BenchTiming {
    std::string_view period_option;
    std::string_view detection_option;
  };
  virtual std::optional<BenchTiming> bench_timing() const { return std::nullopt; }

  // Realistic bugs kept out of the reference code, which the "bug" option
  // runs (see mutants.h). Must return the same object every time.
  virtual const std::vector<Mutant>& mutants() const {
    static const std::vector<Mutant> none;
    return none;
  }

  // Whether the cluster needs a store process (lease-over-CAS does).
  virtual bool uses_store() const { return false; }

  // Whether, once faults heal, a leader known to every live node must come
  // (the liveness checker, which fuzz judges when a scenario asks for it),
  // with these options on `nodes` election nodes. Shards capped below the
  // number of keys leave some keys without an owner by design.
  virtual bool promises_liveness(const OptionValues& options, uint32_t nodes) const {
    (void)options;
    (void)nodes;
    return true;
  }

  // Whether the nodes lead many things at once and name each in their
  // observations (vocab::KeyOf): the checkers then judge each key on its
  // own (checkers::CheckerConfig::per_key).
  virtual bool observes_keys() const { return false; }

  // Whether the nodes replicate a log and report its commits (log.commit),
  // the moment a fault "during": "commit" waits for.
  virtual bool replicates_log() const { return false; }

  virtual std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                                   const OptionValues& options) const = 0;
  // Makes the election nodes of a scenario's runs (every node of each run,
  // and each again at its restarts; a campaign makes one factory for all
  // its seeds): CreateNode's, unless the algorithm reads its options once
  // here instead of once per node. `options` outlives the factory.
  virtual sim::ProcessFactory NodeFactory(const Cluster& cluster, const OptionValues& options) const {
    return [this, cluster, &options](sim::NodeId self) { return CreateNode(self, cluster, options); };
  }
  // Files the algorithm reads to run (an external one's manifest and
  // program): every command refuses an output path that would replace one.
  virtual std::vector<std::string> input_files() const { return {}; }

  // The store process; only called when uses_store().
  virtual std::unique_ptr<sim::Process> CreateStore(const Cluster& cluster, const OptionValues& options) const {
    (void)cluster;
    (void)options;
    return nullptr;
  }
};

// Adds `algorithm` to the registry, next to Raft, Bully, Ring and the lease:
// scenarios name it, `electsim list` shows it, every command runs it. It
// must outlive every use (a function-local static, as the built-in ones are).
// Call it before anything reads the registry (before electsim::Main, a
// scenario load or a run); later, and for a taken or malformed name (1 to 64
// of a-z, 0-9, _ and -), it returns an error and registers nothing.
absl::Status RegisterAlgorithm(const Algorithm& algorithm);
// Every algorithm, built-in or registered, sorted by name.
const std::vector<const Algorithm*>& AllAlgorithms();
// nullptr when there is no algorithm of that name.
const Algorithm* FindAlgorithm(std::string_view name);

}  // namespace algorithms
