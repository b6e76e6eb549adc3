#include "zookeeper_election.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zookeeper_mutants.h"
#include "zookeeper_node.h"

namespace zookeeper {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;
using algorithms::OptionSpec;
using algorithms::OptionValues;

class ZooKeeper final : public algorithms::Algorithm {
 public:
  std::string_view name() const override { return "zookeeper"; }
  std::string_view summary() const override {
    return "ZooKeeper's recipe: ephemeral sequential children, the lowest leads, each node watches only its "
           "predecessor; fencing token = sequence number";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::Duration("session_timeout", sim::TimeNs::Seconds(1),
                             "how long the store keeps a silent session (and its child), on its own clock",
                             sim::TimeNs(1)),
        OptionSpec::Duration("ping_interval", sim::TimeNs::Millis(333),
                             "how often a node pings its session (ZooKeeper's clients: a third of the timeout)",
                             sim::TimeNs(1)),
        OptionSpec::Duration("request_timeout", sim::TimeNs::Millis(200),
                             "a store request unanswered this long counts as failed", sim::TimeNs(1)),
        OptionSpec::Ratio("safety_margin", 750000, 1, kPpm,
                          "fraction of session_timeout a leader acts for, on its own clock, after sending the "
                          "last ping the store answered"),
        algorithms::BugOption(Mutants()),
    };
    return specs;
  }

  const std::vector<algorithms::Mutant>& mutants() const override { return Mutants(); }

  absl::Status Validate(const OptionValues& options, const algorithms::Cluster&) const override {
    Config config = ConfigFrom(algorithms::Cluster{}, options);
    if (config.ping_interval >= config.session_view()) {
      return absl::InvalidArgumentError(
          "option ping_interval must be shorter than safety_margin x session_timeout: a leader would lose its "
          "view of the session between two pings");
    }
    if (config.request_timeout >= config.session_view()) {
      return absl::InvalidArgumentError("option request_timeout must be shorter than safety_margin x session_timeout");
    }
    return absl::OkStatus();
  }

  // A sequence number is handed out once, to one node, and only grows: no
  // term has two leaders, no token two writers, no node a falling term,
  // whatever happens. One leader at a time rests on a leader giving up, by
  // its own clock, before the store ends its session: as with the lease, a
  // pause or drift past the margin's bound (clock_drift_bound) breaks that,
  // and a write delayed in the network, or decided at the very end of a
  // view a slow clock stretched to the bound, can land after the next
  // leader's. Once the cluster is stable, the lowest live sequence number
  // leads: a leader's session ends with it, and each node waits on the
  // child below its own. There are no votes, no log, no leader-only
  // messages to followers and no key leases to judge.
  algorithms::Guarantees guarantees(const OptionValues& options) const override {
    if (algorithms::ChosenMutant(mutants(), options) != nullptr) return {};  // a mutant promises nothing
    const FaultKinds one_leader = FaultKinds::All().Without({FaultKind::kPause});
    return {{"election_safety", FaultKinds::All()},
            {"unique_token", FaultKinds::All()},
            {"term_monotonic", FaultKinds::All()},
            {"single_leader", one_leader},
            {"stale_token", one_leader.Without({FaultKind::kLatency, FaultKind::kClockDrift})},
            {"declared_winner", FaultKinds::All()},
            {"single_vote", FaultKinds::All()},
            {"leader_completeness", FaultKinds::All()},
            {"committed_agreement", FaultKinds::All()},
            {"disruption", FaultKinds::All()},
            {"lease_validity", FaultKinds::All()},
            {"owner_displaced", FaultKinds::All()}};
  }

  // A leader acts for safety_margin x session_timeout from sending a ping,
  // on its clock; the store ends the session session_timeout after the ping
  // arrives, on its own: the lease's bound.
  std::optional<ClockDriftBound> clock_drift_bound(const OptionValues& options) const override {
    return ClockDriftBound{.slowest_ppm = -(kPpm - options.RatioPpm("safety_margin"))};
  }

  // The session's pings, and the followers' look at the lowest child, are
  // what a healthy cluster keeps sending.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .steady_state = {&store::SessionPingRequest::kType, &store::SessionReply::kType, &store::LowestRequest::kType},
    };
    return roles;
  }

  std::optional<BenchTiming> bench_timing() const override { return BenchTiming{"ping_interval", "session_timeout"}; }

  bool uses_store() const override { return true; }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const algorithms::Cluster& cluster,
                                           const OptionValues& options) const override {
    return zookeeper::CreateNode(options.Int(algorithms::kBugOption), self, ConfigFrom(cluster, options));
  }
  std::unique_ptr<sim::Process> CreateStore(const algorithms::Cluster&, const OptionValues&) const override {
    return store::MakeStore();
  }

 private:
  static Config ConfigFrom(const algorithms::Cluster& cluster, const OptionValues& options) {
    Config config;
    config.store = cluster.store;
    config.resource = cluster.resource;
    config.leader_work = cluster.leader_work;
    config.session_timeout = options.Duration("session_timeout");
    config.ping_interval = options.Duration("ping_interval");
    config.request_timeout = options.Duration("request_timeout");
    config.safety_margin_ppm = options.RatioPpm("safety_margin");
    return config;
  }
};

}  // namespace

const algorithms::Algorithm& ZooKeeperElection() {
  static const ZooKeeper algorithm;
  return algorithm;
}

}  // namespace zookeeper
