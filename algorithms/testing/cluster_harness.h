// A small cluster for algorithm tests: n election nodes of one algorithm, the
// shared resource and (when the algorithm uses one) the store, plus a sink
// that tracks what every node last reported. Scenario files are the main way
// to run algorithms; this is for unit tests that poke at one behaviour.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace algorithms::testing {

class ObservationTracker final : public sim::TraceSink {
 public:
  explicit ObservationTracker(uint32_t node_count)
      : role(node_count, vocab::Role::kFollower),
        believed_leader(node_count, vocab::kNobody),
        term(node_count, 0),
        log(node_count) {}

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kSend && r.payload != nullptr) ++sent_by_type[std::string(r.payload->type_name())];
    if (r.kind == sim::TraceKind::kCrash && r.node.value() < role.size()) {
      role[r.node.value()] = vocab::Role::kFollower;
      believed_leader[r.node.value()] = vocab::kNobody;
      term[r.node.value()] = 0;  // what a restarted node reports must come from its stable storage
    }
    // A process reports its whole log, from what it recovered at boot on.
    if ((r.kind == sim::TraceKind::kCrash || r.kind == sim::TraceKind::kStart) && r.node.value() < role.size()) {
      log[r.node.value()].clear();
    }
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    const sim::Observation& o = *r.payload;
    if (o.Is(vocab::kResourceAccept)) ++writes_accepted;
    if (o.Is(vocab::kResourceReject)) ++writes_rejected;
    const uint32_t node = r.node.value();
    if (node >= role.size()) return;
    if (o.Is(vocab::kRoleChange)) {
      role[node] = static_cast<vocab::Role>(o.Get(vocab::kFieldRole));
      if (role[node] == vocab::Role::kLeader) {
        leader_claims.push_back({r.time, r.node, o.Get(vocab::kFieldTerm)});
      }
    } else if (o.Is(vocab::kBelief)) {
      believed_leader[node] = o.Get(vocab::kFieldLeader);
    } else if (o.Is(vocab::kTermChange)) {
      term[node] = o.Get(vocab::kFieldTerm);
    } else if (o.Is(vocab::kLogAppend)) {
      log[node].resize(static_cast<size_t>(o.Get(vocab::kFieldIndex) - 1));
      log[node].push_back({o.Get(vocab::kFieldTerm), o.Get(vocab::kFieldEntry)});
    } else if (o.Is(vocab::kLogTruncate)) {
      log[node].resize(static_cast<size_t>(o.Get(vocab::kFieldIndex) - 1));
    } else if (o.Is(vocab::kLogCommit)) {
      const LogEntry entry{o.Get(vocab::kFieldTerm), o.Get(vocab::kFieldEntry)};
      auto [it, inserted] = committed.try_emplace(o.Get(vocab::kFieldIndex), entry);
      if (!inserted && !(it->second == entry)) ++conflicting_commits;
    }
  }

  // Messages of `type` sent so far.
  uint64_t Sent(const sim::RecordType& type) const {
    auto it = sent_by_type.find(std::string(type.name()));
    return it == sent_by_type.end() ? 0 : it->second;
  }

  // Nodes currently in the leader role.
  std::vector<uint32_t> Leaders() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < role.size(); ++i) {
      if (role[i] == vocab::Role::kLeader) out.push_back(i);
    }
    return out;
  }
  // True when exactly one node leads and every node in `live` believes it.
  bool AgreeOnSingleLeader(const std::vector<uint32_t>& live) const {
    const auto leaders = Leaders();
    if (leaders.size() != 1) return false;
    for (uint32_t node : live) {
      if (believed_leader[node] != static_cast<int64_t>(leaders[0])) return false;
    }
    return true;
  }

  struct Claim {
    sim::TimeNs time;
    sim::NodeId node;
    int64_t term;
  };
  struct LogEntry {
    int64_t term;
    int64_t entry;  // id
    friend bool operator==(const LogEntry&, const LogEntry&) = default;
  };
  std::vector<vocab::Role> role;
  std::vector<int64_t> believed_leader;
  std::vector<int64_t> term;
  std::vector<Claim> leader_claims;
  std::map<std::string, uint64_t> sent_by_type;
  // Each node's log as its current process reported it (log[node][index - 1]).
  std::vector<std::vector<LogEntry>> log;
  // Index -> the first entry reported committed there, by any node.
  std::map<int64_t, LogEntry> committed;
  // Commit reports naming another entry than the first one at their index.
  uint64_t conflicting_commits = 0;
  uint64_t writes_accepted = 0;
  uint64_t writes_rejected = 0;
};

// Where the harness's election nodes come from: the algorithm's NodeFactory
// (as in a scenario's run) or CreateNode for each.
enum class NodeSource { kNodeFactory, kCreateNode };

// Builds and starts the cluster. Options default to the algorithm's defaults;
// `configure` may change them before validation.
class ClusterHarness {
 public:
  ClusterHarness(const Algorithm& algorithm, uint32_t node_count, uint64_t seed, sim::LinkConfig link,
                 const std::function<void(OptionValues&)>& configure = nullptr, bool fencing = true,
                 NodeSource nodes = NodeSource::kNodeFactory)
      : algorithm_(algorithm),
        options_(OptionValues::Defaults(algorithm.options())),
        sim_(seed, node_count + 1 + (algorithm.uses_store() ? 1 : 0), link),
        tracker_(node_count) {
    if (configure) configure(options_);
    cluster_.node_count = node_count;
    cluster_.resource = sim::NodeId(node_count);
    if (algorithm.uses_store()) cluster_.store = sim::NodeId(node_count + 1);
    validation_ = algorithm.Validate(options_, cluster_);
    if (!validation_.ok()) return;
    sim_.AddTraceSink(&tracker_);
    const sim::ProcessFactory factory =
        nodes == NodeSource::kNodeFactory ? algorithm.NodeFactory(cluster_, options_) : [this](sim::NodeId self) {
          return algorithm_.CreateNode(self, cluster_, options_);
        };
    for (uint32_t i = 0; i < node_count; ++i) (void)sim_.SetProcess(sim::NodeId(i), factory);
    (void)sim_.SetProcess(cluster_.resource, [fencing](sim::NodeId) { return MakeSharedResource(fencing); });
    if (algorithm.uses_store()) {
      (void)sim_.SetProcess(cluster_.store, [this](sim::NodeId) { return algorithm_.CreateStore(cluster_, options_); });
    }
    validation_ = sim_.Start();
  }

  const absl::Status& validation() const { return validation_; }
  sim::Simulator& sim() { return sim_; }
  ObservationTracker& tracker() { return tracker_; }
  const Cluster& cluster() const { return cluster_; }

  // Every election node, 0..node_count-1.
  std::vector<uint32_t> AllNodes() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < cluster_.node_count; ++i) out.push_back(i);
    return out;
  }

  std::vector<uint32_t> LiveNodes() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < cluster_.node_count; ++i) {
      if (sim_.IsUp(sim::NodeId(i))) out.push_back(i);
    }
    return out;
  }

 private:
  const Algorithm& algorithm_;
  OptionValues options_;
  Cluster cluster_;
  sim::Simulator sim_;
  ObservationTracker tracker_;
  absl::Status validation_;
};

// The trace hash of five nodes of `algorithm` under `seed` on `link`, with
// node `crashed` down from 1s to 2s, run to 3s: for the tests that the same
// seed gives the same trace, and another seed another.
inline uint64_t CrashRestartTraceHash(const Algorithm& algorithm, uint64_t seed, const sim::LinkConfig& link,
                                      sim::NodeId crashed) {
  ClusterHarness h(algorithm, 5, seed, link);
  sim::TraceHasher hasher;
  h.sim().AddTraceSink(&hasher);
  EXPECT_TRUE(h.validation().ok());
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  EXPECT_TRUE(h.sim().Crash(crashed).ok());
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(2)).ok());
  EXPECT_TRUE(h.sim().Restart(crashed).ok());
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
  return hasher.hash();
}

}  // namespace algorithms::testing
