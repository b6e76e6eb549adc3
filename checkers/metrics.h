// What a run measured, rebuilt from the trace alone: each election's latency,
// leaders per term, message counts, time without a leader and time with more
// than one node believing itself leader.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkers/cluster_view.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"
#include "sim/trace.h"

namespace checkers {

// One election episode. It starts at time 0 ("start") and again whenever the
// current leader is lost: it crashes ("leader crashed"), is paused ("leader
// paused") or leaves the leader role ("leader stepped down"). When another
// node claims leadership while the current leader still holds the role, that
// claim is an episode of its own ("leader changed") with elected == started;
// the previous episode keeps whatever it reached.
// Latencies for a latency study, each from `started`: detection (the first
// election node acting on the loss: entering the candidate role, or claiming
// leadership outright), election (`elected`) and known-to-all (`known`).
struct Election {
  sim::TimeNs started;                  // when the previous leader was lost (0 for the first)
  std::optional<sim::TimeNs> detected;  // first election node entering the candidate or leader role after `started`
  std::string cause;  // "start", "leader crashed", "leader paused", "leader stepped down", "leader changed"
  std::optional<sim::TimeNs> elected;  // first leader claim after `started` (or the paused leader resuming in its role)
  std::optional<sim::TimeNs> known;    // every live (up, unpaused) election node believes in that leader
  sim::NodeId leader = sim::kNoNode;
  int64_t term = -1;
  // Election messages (neither steady-state nor resource traffic) sent from
  // `started` until `known` (or the end of the run, if never known).
  uint64_t election_messages = 0;
  // Their estimated size (sim::EstimatedEncodedBytes).
  uint64_t election_bytes = 0;
};

// What a sent message is, by the algorithm's declared roles.
enum class MessageClass {
  kElection,     // everything else an algorithm sends: votes, candidacies, announcements, store requests
  kSteadyState,  // MessageRoles::steady_state: heartbeats, renewals and their replies
  kApplication,  // to or from the shared resource (node `node_count`): the leader's writes and their acknowledgements
};

struct RunMetrics {
  std::vector<Election> elections;
  std::map<int64_t, std::vector<sim::NodeId>> leaders_by_term;  // term -> nodes that claimed it, each once, in order
  int64_t max_term = 0;
  uint64_t messages_sent = 0;                        // all sends, services included
  std::map<std::string, uint64_t> messages_by_type;  // sends per message type
  uint64_t messages_election = 0;                    // by MessageClass
  uint64_t messages_steady_state = 0;
  uint64_t messages_application = 0;
  // Estimated bytes sent (sim::EstimatedEncodedBytes), by MessageClass.
  uint64_t bytes_election = 0;
  uint64_t bytes_steady_state = 0;
  // Both count nodes holding the role (a paused node still holds it), so they
  // describe beliefs; elections describe availability.
  sim::TimeNs no_leader_time;     // no up election node in the leader role
  sim::TimeNs multi_leader_time;  // two or more up election nodes in the leader role at once
  uint64_t writes_sent = 0;
  uint64_t writes_accepted = 0;
  uint64_t writes_rejected = 0;
};

class MetricsCollector final : public sim::TraceSink {
 public:
  // Without `roles` no message counts as steady-state.
  explicit MetricsCollector(uint32_t node_count, const vocab::MessageRoles* roles = nullptr);
  // Reads `shared_view` (without message roles; see ClusterView::Apply),
  // which must outlive the collector, instead of keeping its own.
  MetricsCollector(ClusterView& shared_view, const vocab::MessageRoles* roles);
  MetricsCollector(const MetricsCollector&) = delete;
  MetricsCollector& operator=(const MetricsCollector&) = delete;
  MessageClass Classify(const sim::TraceRecord& send) const;
  void OnRecord(const sim::TraceRecord& record) override;
  // What ClusterView reads, sends included. Leaving out the other records
  // leaves every figure as it is: the no/multi leader times integrate a
  // state that changes only on these.
  sim::TraceKinds kinds() const override { return sim::kNodeStateKinds; }
  // The view's, and those CountObservation counts.
  sim::ObservationTypes observation_types() const override {
    return ClusterView::observation_types().With(
        {&vocab::kWrite, &vocab::kResourceAccept, &vocab::kResourceReject, &vocab::kTermChange});
  }
  // Closes open intervals at `end`; call once (later calls do nothing).
  void Finish(sim::TimeNs end);
  const RunMetrics& metrics() const;
  // metrics(), moved out rather than copied (a run copied its maps and
  // vectors once per trial); the collector is left with nothing to report.
  RunMetrics TakeMetrics();

 private:
  // Adds the span since the last record to the no/multi leader times.
  void AdvanceTo(sim::TimeNs time);
  void CountObservation(const sim::Observation& observation);
  // Sends of one message type.
  struct SentType {
    const sim::RecordType* type = nullptr;
    uint64_t count = 0;
    bool steady_state = false;  // roles_->IsSteadyState, which depends on the type alone
  };
  // Classify, given whether the send's type is steady-state traffic (which
  // OnRecord keeps per type rather than asking the roles at every send).
  MessageClass ClassOf(const sim::TraceRecord& send, bool steady_state) const;
  // Counts a send of `type`, found by address; a type's first send adds it, out of line.
  const SentType& CountSend(const sim::RecordType* type);
  [[gnu::noinline]] const SentType& AddSentType(const sim::RecordType* type);
  // Election episodes, after the view has taken the record in.
  void TrackLeadership(const sim::TraceRecord& record);
  void OpenEpisode(sim::TimeNs at, std::string cause);
  void Elect(sim::TimeNs at, sim::NodeId leader, int64_t term);

  std::unique_ptr<ClusterView> own_view_;
  ClusterView& view_;
  const vocab::MessageRoles* roles_;
  mutable RunMetrics metrics_;  // messages_by_type is filled in by metrics()
  // Time of the last record; no/multi leader time is counted up to here.
  sim::TimeNs last_time_;
  // Nodes holding the leader role since the last record.
  size_t role_holders_ = 0;
  // Leader of the latest episode while it still leads; unset while an episode waits for its leader.
  std::optional<uint32_t> current_leader_;
  // Sends per message type constant, in first-sent order (a handful of
  // types: a scan of addresses beats hashing a name per send); named and
  // added up by name in metrics().
  std::vector<SentType> sent_by_type_;
  bool finished_ = false;
};

}  // namespace checkers
