#include "algorithms/lease/lease.h"

#include <string>
#include <vector>

#include "algorithms/lease/lease_mutants.h"
#include "algorithms/lease/lease_node.h"
#include "electsim/algorithms/store.h"

namespace algorithms {
namespace {

using lease::DeadlineClock;
using lease::kPpm;
using lease::LeaseConfig;
using lease::Renew;

constexpr std::string_view kOptionLeaseTtl = "lease_ttl";
constexpr std::string_view kOptionRenewInterval = "renew_interval";
constexpr std::string_view kOptionRetryInterval = "retry_interval";
constexpr std::string_view kOptionSafetyMargin = "safety_margin";
constexpr std::string_view kOptionRequestTimeout = "request_timeout";
constexpr std::string_view kOptionReleaseOnStepdown = "release_on_stepdown";
constexpr std::string_view kOptionDeadlineClock = "deadline_clock";
constexpr std::string_view kOptionRenew = "renew";

LeaseConfig ConfigFrom(const Cluster& cluster, const OptionValues& options) {
  LeaseConfig c;
  c.store = cluster.store;
  c.resource = cluster.resource;
  c.leader_work = cluster.leader_work;
  c.lease_ttl = options.Duration(kOptionLeaseTtl);
  c.renew_interval = options.Duration(kOptionRenewInterval);
  c.retry_interval = options.Duration(kOptionRetryInterval);
  c.request_timeout = options.Duration(kOptionRequestTimeout);
  c.safety_margin_ppm = options.RatioPpm(kOptionSafetyMargin);
  c.release_on_stepdown = options.Bool(kOptionReleaseOnStepdown);
  c.deadline_clock = static_cast<DeadlineClock>(options.Int(kOptionDeadlineClock));
  c.renew = static_cast<Renew>(options.Int(kOptionRenew));
  return c;
}

class LeaseAlgorithmImpl final : public Algorithm {
 public:
  std::string_view name() const override { return "lease"; }
  std::string_view summary() const override {
    return "lease on a compare-and-swap store: put_if_absent with a TTL, renewed by keep-alive (or cas), "
           "fencing token = create revision";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::Duration(std::string(kOptionLeaseTtl), sim::TimeNs::Seconds(1),
                             "lease time-to-live, measured on the store's clock", sim::TimeNs(1)),
        OptionSpec::Duration(std::string(kOptionRenewInterval), sim::TimeNs::Millis(333),
                             "how often the holder renews (etcd keeps alive at TTL/3)", sim::TimeNs(1)),
        OptionSpec::Duration(std::string(kOptionRetryInterval), sim::TimeNs::Millis(100),
                             "how often a non-holder polls the key (the fallback for lost watches)", sim::TimeNs(1)),
        OptionSpec::Ratio(std::string(kOptionSafetyMargin), 750000, 1, kPpm,
                          "fraction of the TTL the holder acts for, counted on its own clock from "
                          "sending the acquire/renew"),
        OptionSpec::Duration(std::string(kOptionRequestTimeout), sim::TimeNs::Millis(200),
                             "a store request unanswered this long counts as failed", sim::TimeNs(1)),
        OptionSpec::Bool(std::string(kOptionReleaseOnStepdown), false,
                         "delete the key when stepping down instead of letting it expire"),
        OptionSpec::Choice(std::string(kOptionRenew), {"keep_alive", "cas"},
                           "how the holder renews: keep_alive restarts the TTL without writing the key (etcd's "
                           "LeaseKeepAlive; no revision moves); cas rewrites the key on its version with a fresh "
                           "TTL (a Kubernetes Lease update; the version moves, watchers are told)"),
        OptionSpec::Choice(std::string(kOptionDeadlineClock), {"monotonic", "wall"},
                           "clock the holder measures its lease on; \"wall\" is a deliberate bug (a deadline "
                           "from wall time): a wall-clock step back stretches the holder's view past the TTL"),
        BugOption(lease::Mutants()),
    };
    return specs;
  }

  const std::vector<Mutant>& mutants() const override { return lease::Mutants(); }

  // The store hands each lease out once (a create revision is never reused),
  // so no term has two holders and no token two writers, whatever happens.
  // Holding the role alone rests on the holder giving up, by its own clock,
  // before the store's TTL runs out: any loss, latency, cut, partition or
  // crash leaves that intact, and so does drift within the margin's bound
  // (clock_drift_bound); a pause, or drift past the bound, does not (see
  // lease.h), and neither does a wall-clock step when the deadline is on the
  // wall clock. The same holds for every claim and every decision to write
  // falling within the store's lease (lease_validity). A write delayed in
  // the network past the margin lands after the next holder's, so
  // stale_token is not kept under latency either, nor under drift: at the
  // bound the holder's view ends as the store's TTL does, and a write
  // decided just before takes write_duration to leave. The store writes
  // through to its disk (Persist), so a power loss is a crash to it. The
  // lease has no votes, no log, no promised winner and no leader-only
  // messages to its followers: single_vote, leader_completeness,
  // committed_agreement, declared_winner and disruption have nothing to
  // judge. A node deletes (release_on_stepdown) or swaps (renew=cas) the key
  // only at the version its own write gave it, which no other holder's
  // write leaves in place: owner_displaced under every fault.
  Guarantees guarantees(const OptionValues& options) const override {
    if (ChosenMutant(mutants(), options) != nullptr) return {};  // a mutant promises nothing
    FaultKinds one_holder = FaultKinds::All().Without({FaultKind::kPause});
    if (static_cast<DeadlineClock>(options.Int(kOptionDeadlineClock)) == DeadlineClock::kWall) {
      one_holder = one_holder.Without({FaultKind::kClockStep});
    }
    return LeaseGuarantees(one_holder);
  }

  // The holder acts for safety_margin x TTL on its clock, the store expires
  // the lease after TTL on its own: a holder clock slow by 1 - safety_margin
  // against a true store clock is what the margin absorbs (lease.h).
  std::optional<ClockDriftBound> clock_drift_bound(const OptionValues& options) const override {
    return ClockDriftBound{.slowest_ppm = -(kPpm - options.RatioPpm(kOptionSafetyMargin))};
  }

  // Only a holder in the leader role keeps its lease alive; the lease it
  // names (its create revision) is its term. A cas renewal is no evidence:
  // a follower reclaiming the key the store still gives it sends one too.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .leader_only = {{store::kStoreKeepAlive, "create_rev"}},
        .steady_state = {&store::kStoreKeepAlive},
    };
    return roles;
  }

  // Others act on a holder's silence once its lease expires.
  std::optional<BenchTiming> bench_timing() const override {
    return BenchTiming{kOptionRenewInterval, kOptionLeaseTtl};
  }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    (void)cluster;
    return ValidateLeaseTiming(options);
  }

  bool uses_store() const override { return true; }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override {
    return lease::CreateNode(options.Int(kBugOption), self, ConfigFrom(cluster, options));
  }

  std::unique_ptr<sim::Process> CreateStore(const Cluster& cluster, const OptionValues& options) const override {
    (void)cluster;
    (void)options;
    return store::MakeStore();
  }
};

}  // namespace

Guarantees LeaseGuarantees(FaultKinds one_holder) {
  return {{"election_safety", FaultKinds::All()},
          {"unique_token", FaultKinds::All()},
          {"term_monotonic", FaultKinds::All()},
          {"single_leader", one_holder},
          {"stale_token", one_holder.Without({FaultKind::kLatency, FaultKind::kClockDrift})},
          {"lease_validity", one_holder},
          {"single_vote", FaultKinds::All()},
          {"leader_completeness", FaultKinds::All()},
          {"committed_agreement", FaultKinds::All()},
          {"declared_winner", FaultKinds::All()},
          {"disruption", FaultKinds::All()},
          {"owner_displaced", FaultKinds::All()}};
}

absl::Status ValidateLeaseTiming(const OptionValues& options) {
  const sim::TimeNs view(static_cast<int64_t>(static_cast<__int128>(options.Duration(kOptionLeaseTtl).ns()) *
                                              options.RatioPpm(kOptionSafetyMargin) / kPpm));
  constexpr std::string_view kView = "safety_margin * lease_ttl";
  for (const absl::Status& status : {
           RequireShorter(options, kOptionRenewInterval, kOptionLeaseTtl, ""),
           RequireShorter(options, kOptionRequestTimeout, kOptionLeaseTtl, ""),
           RequireShorterThan(options, kOptionRenewInterval, kView, view,
                              "the holder would stop acting between renewals"),
           RequireShorterThan(options, kOptionRequestTimeout, kView, view,
                              "an acquire answered in time could already be past the holder's view"),
       }) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

const Algorithm& LeaseAlgorithm() {
  static const LeaseAlgorithmImpl algorithm;
  return algorithm;
}

}  // namespace algorithms
