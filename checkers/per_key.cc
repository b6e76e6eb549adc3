// A checker run once per key (CheckerConfig::per_key). An owner of many
// shards holds many leaderships at once, one per key of the store; what
// each checker promises about "the leader" it must then promise about each
// key's owner. Rather than teach every checker keys, this runs one instance
// of it per key and hands each the records about its key
// (vocab::KeyOf), plus the records about the nodes themselves that every
// key shares: starts, crashes, restarts, pauses, clock and network changes,
// and observations that name no key (a declared lease margin). An instance
// made for a key first seen late is given those shared records first, so
// it knows what every other instance knows.
//
// Sends, deliveries, timers and storage never reach the instances: sent in
// the millions, each would be offered to every key. A checker that reads
// leader-only messages off the wire does not see them per key (an algorithm
// with keys declares none).
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "checkers/factories.h"
#include "fmt/format.h"

namespace checkers {
namespace {

// The kinds of record every key shares: rare, so each goes to every instance.
constexpr sim::TraceKinds kSharedKinds = {sim::TraceKind::kStart,   sim::TraceKind::kCrash,  sim::TraceKind::kRestart,
                                          sim::TraceKind::kPause,   sim::TraceKind::kResume, sim::TraceKind::kClock,
                                          sim::TraceKind::kNetwork, sim::TraceKind::kNote};

class PerKeyChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override {
    const CheckerFactory make = make_;
    std::destroy_at(this);
    std::construct_at(this, make, config);
  }
  PerKeyChecker(CheckerFactory make, const CheckerConfig& config)
      : make_(make), config_(InstanceConfig(config)), prototype_(make(config_)) {}

  std::string_view name() const override { return prototype_->name(); }
  sim::TraceKinds kinds() const override {
    const sim::TraceKinds wanted = prototype_->kinds();
    sim::TraceKinds kinds = {};
    for (int k = 0; k < sim::kTraceKindCount; ++k) {
      const auto kind = static_cast<sim::TraceKind>(k);
      if (wanted.Has(kind) && (kind == sim::TraceKind::kObserve || kSharedKinds.Has(kind))) {
        kinds = kinds.With({kind});
      }
    }
    return kinds;
  }
  sim::ObservationTypes observation_types() const override { return prototype_->observation_types(); }
  bool reads_instant_starts() const override { return prototype_->reads_instant_starts(); }

  void OnInstantStart(const sim::TraceRecord& first) override {
    // An instance that read nothing since the last instant has nothing new
    // to judge: only those that did are told.
    for (Instance* instance : touched_) {
      instance->touched = false;
      instance->checker->OnInstantStart(first);
    }
    touched_.clear();
  }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kObserve && r.payload != nullptr) {
      if (const std::optional<int64_t> key = vocab::KeyOf(*r.payload)) {
        Pass(InstanceOf(*key), r);
        return;
      }
    } else if (!kSharedKinds.Has(r.kind)) {
      return;  // offered every record (a test of the sinks' declarations): not one the instances read
    }
    shared_.push_back(SharedRecord::Of(r));
    for (auto& [key, instance] : instances_) Pass(instance, r);
  }

  void OnFaultsOver(sim::TimeNs at) override {
    faults_over_at_ = at;
    for (auto& [key, instance] : instances_) instance.checker->OnFaultsOver(at);
  }
  void OnTraceEnd(uint64_t record_count) override {
    for (auto& [key, instance] : instances_) instance.checker->OnTraceEnd(record_count);
  }
  // The earliest finding in the trace, of any key, whenever each instance
  // made it: an instance judges an instant when its own next record comes,
  // so the order in which instances find things is not the trace's.
  void Finish(sim::TimeNs end) override {
    std::optional<Violation> first;
    int64_t first_key = 0;
    for (auto& [key, instance] : instances_) {
      instance.checker->Finish(end);
      const std::optional<Violation>& found = instance.checker->violation();
      if (found && (!first || std::tie(found->time, found->trace_index) < std::tie(first->time, first->trace_index))) {
        first = found;
        first_key = key;
      }
    }
    if (first) ReportFor(first_key, *first);
  }

 private:
  // A shared record, kept to replay into instances made later.
  struct SharedRecord {
    sim::TraceRecord record;
    std::optional<sim::Payload> payload;
    std::string detail;

    static std::unique_ptr<SharedRecord> Of(const sim::TraceRecord& r) {
      auto copy = std::make_unique<SharedRecord>();
      copy->record = r;
      copy->detail = std::string(r.detail);
      copy->record.detail = copy->detail;
      if (r.payload != nullptr) {
        copy->payload = *r.payload;
        copy->record.payload = &*copy->payload;
      }
      return copy;
    }
  };

  static CheckerConfig InstanceConfig(CheckerConfig config) {
    config.per_key = false;
    // Each key has its own leader: a view of the whole cluster's one leader
    // cannot be shared.
    config.cluster_view = nullptr;
    return config;
  }

  struct Instance {
    std::unique_ptr<Checker> checker;
    bool touched = false;  // read a record since the last instant start
  };

  Instance& InstanceOf(int64_t key) {
    auto [it, inserted] = instances_.try_emplace(key);
    if (inserted) {
      it->second.checker = make_(config_);
      for (const auto& shared : shared_) it->second.checker->OnRecord(shared->record);
      if (faults_over_at_) it->second.checker->OnFaultsOver(*faults_over_at_);
    }
    return it->second;
  }

  void Pass(Instance& instance, const sim::TraceRecord& r) {
    instance.checker->OnRecord(r);
    if (!instance.touched) {
      instance.touched = true;
      touched_.push_back(&instance);
    }
  }

  void ReportFor(int64_t key, Violation found) {
    found.message = fmt::format("key {}: {}", key, found.message);
    found.key = key;
    Report(std::move(found));
  }

  CheckerFactory make_;
  CheckerConfig config_;
  std::unique_ptr<Checker> prototype_;     // answers what the instances read
  std::map<int64_t, Instance> instances_;  // map nodes stay put: touched_ points into them
  std::vector<std::unique_ptr<SharedRecord>> shared_;
  std::optional<sim::TimeNs> faults_over_at_;
  // Instances that read a record since the last instant start.
  std::vector<Instance*> touched_;
};

}  // namespace

std::unique_ptr<Checker> MakePerKeyChecker(CheckerFactory make, const CheckerConfig& config) {
  return std::make_unique<PerKeyChecker>(make, config);
}

}  // namespace checkers
