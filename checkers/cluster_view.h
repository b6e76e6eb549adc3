// What every election node currently is, rebuilt from the trace: up or
// crashed, paused or running, its role and whom it believes leads. The one
// leader tracker: the checkers that reason about instants (single_leader,
// liveness), the metrics and the runner's fault driver ("crash the leader")
// all read it, so that they agree on what "in the leader role" means.
#pragma once

#include <cstdint>
#include <vector>

#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"
#include "sim/trace.h"

namespace checkers {

struct NodeView {
  // False between a crash and the restart.
  bool up = true;
  // Frozen: it takes no steps, but still believes whatever it believed.
  bool paused = false;
  vocab::Role role = vocab::Role::kFollower;
  // Term of the last role change; -1 before the first.
  int64_t role_term = -1;
  // Leader named by the last belief observation; a fresh process knows nobody.
  int64_t believed_leader = vocab::kNobody;
  // In the leader role only because it sent a leader-only message without
  // having reported the role (until its next role change observation).
  bool leads_unreported = false;
  // Trace index of the record by which it took the leader role (while it
  // holds it): orders leaders by how recently they claimed.
  uint64_t claimed_at = 0;
};

// The message types of `roles`' leader-only messages (with `leader_only`)
// and vote grants (with `vote_grants`), for a sink's message_types(); every
// type where they are more than an ObservationTypes holds (correct, only slower).
sim::ObservationTypes RoleMessageTypes(const vocab::MessageRoles& roles, bool leader_only, bool vote_grants);

class ClusterView {
 public:
  // With `roles`, a node that sends one of its leader-only messages while not
  // reported in the leader role is taken to be in it (see NodeView).
  explicit ClusterView(uint32_t node_count, const vocab::MessageRoles* roles = nullptr)
      : nodes_(node_count),
        roles_(roles),
        kinds_(roles == nullptr ? kKindsWithoutSends : sim::kNodeStateKinds),
        believers_(node_count, 0),
        live_count_(node_count) {}

  // The record kinds that can change the view: a sink that only keeps a view
  // reads these. Sends count only when leader-only messages are known.
  sim::TraceKinds kinds() const { return kinds_; }
  // The observation types that can change the view.
  static sim::ObservationTypes observation_types() { return {&vocab::kRoleChange, &vocab::kBelief}; }
  // The message types that can: the leader-only ones, when known.
  sim::ObservationTypes message_types() const {
    return roles_ == nullptr ? sim::ObservationTypes({}) : RoleMessageTypes(*roles_, true, false);
  }

  // Told before the view takes in the first record of a later instant, so
  // that it can judge the state the earlier instant ended in.
  class InstantListener {
   public:
    virtual ~InstantListener() = default;
    virtual void OnInstantEnding() = 0;
  };

  // Applies one record; returns true when some election node's view changed
  // (callers re-evaluate their conditions only then). Several sinks may
  // share one view (the runner's watch, the metrics and liveness: the same
  // view, kept three times, was a twentieth of a Raft trial): each passes it
  // the records it reads, in trace order, and the first to pass a record
  // applies it while the rest get the same answer (work saved, not a
  // correction: applying a record again sets nothing new). Inline, the tests of the
  // index and kind: liveness passes every record, and most (timers,
  // storage, deliveries) cannot change anything.
  bool Apply(const sim::TraceRecord& record) {
    if (record.index == last_index_) return last_changed_;
    if (record.time > time_) [[unlikely]]
      EndInstant(record.time);
    last_index_ = record.index;
    last_changed_ = kinds_.Has(record.kind) && ApplyNodeState(record);
    return last_changed_;
  }
  // Observations that name a key (vocab::KeyOf) are about one of many
  // leaderships a node holds, not the node's role: a view of the whole
  // cluster skips them (per-key checkers keep views of their own key).
  void IgnoreKeyedObservations() { ignores_keys_ = true; }

  // `listener` must outlive the view or be removed first.
  void AddInstantListener(InstantListener* listener) { instant_listeners_.push_back(listener); }
  void RemoveInstantListener(InstantListener* listener) { std::erase(instant_listeners_, listener); }

  uint32_t node_count() const { return static_cast<uint32_t>(nodes_.size()); }
  bool IsElectionNode(sim::NodeId node) const { return node.value() < nodes_.size(); }
  const NodeView& node(uint32_t index) const { return nodes_[index]; }

  // Up (a paused node included: it still believes it leads) and in the leader role.
  bool HoldsLeaderRole(uint32_t index) const { return nodes_[index].up && nodes_[index].role == vocab::Role::kLeader; }
  // Up and not paused: able to take steps and to learn who leads.
  bool IsLive(uint32_t index) const { return nodes_[index].up && !nodes_[index].paused; }

  // Counts kept as records come, so the questions asked after every record
  // cost the same for five nodes as for ten thousand.
  uint32_t role_holder_count() const { return role_holders_; }
  uint32_t live_leader_count() const { return live_leaders_; }
  // The one live leader when there is exactly one; kNoNode otherwise.
  sim::NodeId SoleLiveLeader() const {
    return live_leaders_ == 1 ? sim::NodeId(static_cast<uint32_t>(live_leader_id_sum_)) : sim::kNoNode;
  }

  // Nodes holding the leader role (paused ones included), by id.
  std::vector<sim::NodeId> RoleHolders() const;
  // Live nodes in the leader role, by id.
  std::vector<sim::NodeId> LiveLeaders() const;
  // Live nodes other than `leader` whose belief is not `leader`. The leader
  // itself needs no belief record: holding the role is its belief.
  std::vector<sim::NodeId> LiveNonBelievers(uint32_t leader) const;
  // "The leader" of a scenario's fault steps: of the nodes holding the
  // leader role (a paused one included), the one that claimed it last;
  // kNoNode when none does.
  sim::NodeId LatestLeader() const;
  // Exactly one live node holds the leader role and every other live node
  // believes in it.
  bool LeaderKnownToAll() const;
  // Every live node other than `leader` believes in it (LiveNonBelievers is empty).
  bool AllLiveBelieve(uint32_t leader) const;
  // Some election node has reported taking the leader role (a role
  // observation; a leader-only send alone does not count), at any time so
  // far: what a scenario's "elected" expectation asks, with no metrics kept.
  bool leader_role_reported() const { return leader_role_reported_; }

 private:
  bool ApplyNodeState(const sim::TraceRecord& record);
  // Tells the listeners that the instant at time_ is over; out of line, so
  // that Apply's callers keep a short path for the records of one instant.
  [[gnu::noinline]] void EndInstant(sim::TimeNs next_time);
  // What one node adds to the counts.
  struct Share {
    uint32_t index = 0;
    bool live = false;
    bool holds_role = false;
    bool live_leader = false;
    int64_t believes = -1;  // an election node it believes in while live, or -1
  };
  Share ShareOf(uint32_t index) const;
  // The two changes most records make, each moving only the counts it can.
  void SetRole(uint32_t index, vocab::Role role, int64_t term, bool unreported, uint64_t claimed_at);
  void SetBelief(uint32_t index, int64_t leader);
  void Count(const Share& share, int sign);
  // Changes node `index` by `change`, keeping the counts.
  template <typename Change>
  void Update(uint32_t index, Change change) {
    Count(ShareOf(index), -1);
    change(nodes_[index]);
    Count(ShareOf(index), +1);
  }

  static constexpr sim::TraceKinds kKindsWithoutSends = {sim::TraceKind::kStart,   sim::TraceKind::kCrash,
                                                         sim::TraceKind::kRestart, sim::TraceKind::kPause,
                                                         sim::TraceKind::kResume,  sim::TraceKind::kObserve};

  std::vector<NodeView> nodes_;
  const vocab::MessageRoles* roles_;
  sim::TraceKinds kinds_;
  // Per election node, how many live nodes believe in it (itself included).
  std::vector<uint32_t> believers_;
  uint32_t live_count_ = 0;
  uint32_t role_holders_ = 0;
  uint32_t live_leaders_ = 0;
  uint64_t live_leader_id_sum_ = 0;  // the sole live leader's id, when there is one
  // The record last applied (no record has index ~0) and its answer.
  uint64_t last_index_ = ~uint64_t{0};
  bool last_changed_ = false;
  // Time of the last record applied.
  sim::TimeNs time_;
  std::vector<InstantListener*> instant_listeners_;
  bool ignores_keys_ = false;  // see IgnoreKeyedObservations
  bool leader_role_reported_ = false;
};

}  // namespace checkers
