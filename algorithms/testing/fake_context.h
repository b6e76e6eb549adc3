// A Context without a simulator, for driving one node by hand in unit tests:
// the test delivers messages and fires timers itself, sets the clocks,
// and reads back what the node sent, wrote, synced and observed.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "electsim/sim/process.h"

namespace algorithms::testing {

class FakeContext final : public sim::Context {
 public:
  struct Sent {
    sim::NodeId to;
    sim::Message message;
    bool all_writes_synced;  // nothing the node had written was still unsynced when it left
  };
  struct Timer {
    sim::TimerId id;
    uint64_t tag;
  };

  explicit FakeContext(sim::NodeId self) : self_(self), rng_(1) {}

  sim::NodeId self() const override { return self_; }
  // One clock that never steps: the wall clock reads what the monotonic one does.
  sim::TimeNs MonotonicNow() const override { return now; }
  sim::TimeNs WallNow() const override { return now; }
  void Send(sim::NodeId to, const sim::Message& message) override {
    sent.push_back({to, message, unsynced.empty()});
    if (!unsynced.empty()) ++sent_with_unsynced_writes;
  }
  sim::TimerId SetTimer(sim::TimeNs, uint64_t tag) override {
    const sim::TimerId id(++next_timer_);
    armed.push_back({id, tag});
    return id;
  }
  void CancelTimer(sim::TimerId timer) override { cancelled.insert(timer.value()); }
  sim::Rng& rng() override { return rng_; }
  void Persist(std::string_view key, int64_t value) override {
    unsynced.erase(std::string(key));
    durable[std::string(key)] = value;
  }
  void Write(std::string_view key, int64_t value) override { unsynced[std::string(key)] = value; }
  void Sync() override {
    ++syncs;
    for (const auto& [key, value] : unsynced) durable[key] = value;
    unsynced.clear();
  }
  std::optional<int64_t> Load(std::string_view key) const override {
    if (auto it = unsynced.find(std::string(key)); it != unsynced.end()) return it->second;
    if (auto it = durable.find(std::string(key)); it != durable.end()) return it->second;
    return std::nullopt;
  }
  void Observe(const sim::Observation& observation) override { observations.push_back(observation); }
  void Fail(std::string_view reason) override { failures.emplace_back(reason); }

  // The most recently armed, not cancelled timer with `tag`.
  std::optional<sim::TimerId> LiveTimer(uint64_t tag) const {
    for (auto it = armed.rbegin(); it != armed.rend(); ++it) {
      if (it->tag == tag && !cancelled.count(it->id.value())) return it->id;
    }
    return std::nullopt;
  }
  // Messages of `type` sent so far, oldest first.
  std::vector<Sent> SentOf(const sim::RecordType& type) const {
    std::vector<Sent> out;
    for (const Sent& s : sent) {
      if (s.message.Is(type)) out.push_back(s);
    }
    return out;
  }
  // Observations of `type` so far, oldest first.
  std::vector<sim::Observation> Observed(const sim::RecordType& type) const {
    std::vector<sim::Observation> out;
    for (const sim::Observation& o : observations) {
      if (o.Is(type)) out.push_back(o);
    }
    return out;
  }
  void ClearOutputs() {
    sent.clear();
    observations.clear();
  }

  sim::TimeNs now;
  std::vector<Sent> sent;
  std::vector<sim::Observation> observations;
  std::vector<std::string> failures;  // reasons given to Fail, in order
  std::vector<Timer> armed;
  std::set<uint64_t> cancelled;
  std::map<std::string, int64_t> durable;
  std::map<std::string, int64_t> unsynced;
  int syncs = 0;
  int sent_with_unsynced_writes = 0;  // over the whole run, whatever was cleared

 private:
  sim::NodeId self_;
  sim::Rng rng_;
  uint64_t next_timer_ = 0;
};

}  // namespace algorithms::testing
