#include "algorithms/shards/shards.h"

#include <string>
#include <vector>

#include "algorithms/lease/lease.h"
#include "algorithms/shards/shard_replica.h"
#include "algorithms/shards/shards_mutants.h"
#include "electsim/algorithms/store.h"
#include "fmt/format.h"

namespace algorithms {
namespace {

using shards::kPpm;
using shards::Policy;
using shards::ShardsConfig;

constexpr std::string_view kOptionKeys = "keys";
constexpr std::string_view kOptionPolicy = "policy";
constexpr std::string_view kOptionCap = "cap";
constexpr std::string_view kOptionLeaseTtl = "lease_ttl";
constexpr std::string_view kOptionRenewInterval = "renew_interval";
constexpr std::string_view kOptionRenewJitter = "renew_jitter";
constexpr std::string_view kOptionRetryInterval = "retry_interval";
constexpr std::string_view kOptionPollInterval = "poll_interval";
constexpr std::string_view kOptionSafetyMargin = "safety_margin";
constexpr std::string_view kOptionRequestTimeout = "request_timeout";
constexpr std::string_view kOptionReleaseOnStepdown = "release_on_stepdown";
constexpr std::string_view kOptionWrites = "writes";
constexpr std::string_view kOptionWait = "wait";
constexpr int64_t kWaitQueue = 1;

constexpr int64_t kMaxKeys = 1000000;

ShardsConfig ConfigFrom(const Cluster& cluster, const OptionValues& options) {
  ShardsConfig c;
  c.store = cluster.store;
  c.resource = cluster.resource;
  c.replicas = cluster.node_count;
  c.leader_work = cluster.leader_work;
  c.keys = options.Int(kOptionKeys);
  c.policy = static_cast<Policy>(options.Int(kOptionPolicy));
  c.cap = options.Int(kOptionCap);
  c.lease_ttl = options.Duration(kOptionLeaseTtl);
  c.renew_interval = options.Duration(kOptionRenewInterval);
  c.renew_jitter_ppm = options.RatioPpm(kOptionRenewJitter);
  c.retry_interval = options.Duration(kOptionRetryInterval);
  c.poll_interval = options.Duration(kOptionPollInterval);
  c.request_timeout = options.Duration(kOptionRequestTimeout);
  c.safety_margin_ppm = options.RatioPpm(kOptionSafetyMargin);
  c.release_on_stepdown = options.Bool(kOptionReleaseOnStepdown);
  c.writes = options.Bool(kOptionWrites);
  c.queue = options.Int(kOptionWait) == kWaitQueue;
  return c;
}

class ShardsAlgorithmImpl final : public Algorithm {
 public:
  std::string_view name() const override { return "shards"; }
  std::string_view summary() const override {
    return "shard ownership by leases: many keys of one store, each a TTL lease with its own fencing token, and "
           "every node a replica competing for them under a policy";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::Int(std::string(kOptionKeys), 10, 1, kMaxKeys, "how many keys (shards) the replicas own"),
        OptionSpec::Choice(std::string(kOptionPolicy), {"all", "cap", "fair"},
                           "which keys a replica goes for: all (every free key, first come), cap (free keys until "
                           "it holds \"cap\"), fair (its share of the keys among the members it sees, releasing "
                           "keys above it; members are known by a lease each)"),
        OptionSpec::Int(std::string(kOptionCap), 10, 1, kMaxKeys, "the most keys one replica holds under policy cap"),
        OptionSpec::Duration(std::string(kOptionLeaseTtl), sim::TimeNs::Seconds(1),
                             "each key's lease time-to-live, measured on the store's clock", sim::TimeNs(1)),
        OptionSpec::Duration(std::string(kOptionRenewInterval), sim::TimeNs::Millis(333),
                             "how often an owner renews each key it holds", sim::TimeNs(1)),
        OptionSpec::Ratio(std::string(kOptionRenewJitter), 0, 0, kPpm - 1,
                          "each renewal comes early by up to this fraction of renew_interval, drawn per renewal, "
                          "so that keys acquired together stop renewing together"),
        OptionSpec::Duration(std::string(kOptionRetryInterval), sim::TimeNs::Millis(100),
                             "how often a replica retries keys it wants that the store shows free", sim::TimeNs(1)),
        OptionSpec::Duration(std::string(kOptionPollInterval), sim::TimeNs::Seconds(1),
                             "how often a replica watches each key again (the fallback for lost watch events and "
                             "for watches a store restart forgets; in a line (wait queue), it reads the key, to learn "
                             "who holds it, and asks for the replica ahead again); 0s: never"),
        OptionSpec::Ratio(std::string(kOptionSafetyMargin), 750000, 1, kPpm,
                          "fraction of the TTL an owner acts for, counted on its own clock from sending the "
                          "acquire/renew"),
        OptionSpec::Duration(std::string(kOptionRequestTimeout), sim::TimeNs::Millis(200),
                             "a store request unanswered this long counts as failed", sim::TimeNs(1)),
        OptionSpec::Bool(std::string(kOptionReleaseOnStepdown), true,
                         "an owner whose view of a lease runs out deletes the key at the version it wrote, so that "
                         "others need not wait out the TTL"),
        OptionSpec::Bool(std::string(kOptionWrites), true,
                         "owners write each key's part of the resource under its token every leader_work interval"),
        OptionSpec::Choice(
            std::string(kOptionWait), {"watch", "queue"},
            "how replicas wait for keys: watch (each watches every key and races for each one freed, "
            "so every deletion wakes them all), queue (each stands in a line per key under a store "
            "session and watches only the replica ahead of it; the head alone watches the key and "
            "goes for it, as ZooKeeper's lock recipe; the others learn who holds each key by reading it every "
            "poll_interval; policy all only)"),
    };
    // Then the store's capacity, and the bug last, as every algorithm has it.
    static const std::vector<OptionSpec> all = [] {
      std::vector<OptionSpec> all = specs;
      for (OptionSpec& spec : store::StoreOptions()) all.push_back(std::move(spec));
      all.push_back(BugOption(shards::Mutants()));
      return all;
    }();
    return all;
  }

  const std::vector<Mutant>& mutants() const override { return shards::Mutants(); }

  // Each key is the lease algorithm's key again, and each guarantee the
  // lease keeps it keeps per key, for the same reasons (lease.cc): the
  // store hands each create revision out once, and an owner holds a key
  // only while its own clock says the margin has not run out. A release
  // deletes only the version the owner's own write gave the key.
  Guarantees guarantees(const OptionValues& options) const override {
    if (ChosenMutant(mutants(), options) != nullptr) return {};
    return LeaseGuarantees(FaultKinds::All().Without({FaultKind::kPause}));
  }

  std::optional<ClockDriftBound> clock_drift_bound(const OptionValues& options) const override {
    return ClockDriftBound{.slowest_ppm = -(kPpm - options.RatioPpm(kOptionSafetyMargin))};
  }

  std::optional<BenchTiming> bench_timing() const override {
    return BenchTiming{kOptionRenewInterval, kOptionLeaseTtl};
  }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    if (absl::Status timing = ValidateLeaseTiming(options); !timing.ok()) return timing;
    const ShardsConfig c = ConfigFrom(cluster, options);
    if (absl::Status store = store::ValidateStoreOptions(options); !store.ok()) return store;
    if (c.queue && c.policy != Policy::kAll) {
      return absl::InvalidArgumentError(
          "\"wait\": queue needs policy all (a replica in a line wants the key it waits for)");
    }
    const int64_t store_keys = c.keys + (c.policy == Policy::kFair ? c.replicas : 0);
    if (store_keys - 1 > store::kMaxKeyId) {
      return absl::InvalidArgumentError(
          fmt::format("\"keys\" ({}) plus one member key per replica ({}) is more than "
                      "the store's {} keys",
                      c.keys, c.replicas, store::kMaxKeyId + 1));
    }
    return absl::OkStatus();
  }

  // Every key gets an owner that every replica learns, unless the replicas'
  // caps leave too few places, or replicas waiting in lines never read the
  // keys (poll_interval 0s) and so never learn who holds them.
  bool promises_liveness(const OptionValues& options, uint32_t nodes) const override {
    if (options.Int(kOptionWait) == kWaitQueue && options.Duration(kOptionPollInterval).ns() == 0) return false;
    if (static_cast<Policy>(options.Int(kOptionPolicy)) != Policy::kCap) return true;
    return options.Int(kOptionCap) * static_cast<int64_t>(nodes) >= options.Int(kOptionKeys);
  }

  // What a settled cluster keeps sending: renewals, the lines' session
  // pings, and the polls that read keys.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .steady_state = {&store::kStoreKeepAlive, &store::SessionPingRequest::kType, &store::kStoreGet},
    };
    return roles;
  }

  bool uses_store() const override { return true; }
  bool observes_keys() const override { return true; }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override {
    return shards::CreateNode(options.Int(kBugOption), self, ConfigFrom(cluster, options));
  }

  std::unique_ptr<sim::Process> CreateStore(const Cluster& cluster, const OptionValues& options) const override {
    (void)cluster;
    store::StoreConfig config = store::StoreConfigFrom(options);
    config.report_keys = true;
    return store::MakeStore(config);
  }
};

}  // namespace

const Algorithm& ShardsAlgorithm() {
  static const ShardsAlgorithmImpl algorithm;
  return algorithm;
}

}  // namespace algorithms
