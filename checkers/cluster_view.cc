#include "checkers/cluster_view.h"

namespace checkers {
namespace {

// Whether a belief in `leader` counts toward believers_: a node of the view
// (-1, nobody, and ids out of range count for no one).
bool CountedBelief(int64_t leader, size_t node_count) {
  return leader >= 0 && leader < static_cast<int64_t>(node_count);
}

}  // namespace

sim::ObservationTypes RoleMessageTypes(const vocab::MessageRoles& roles, bool leader_only, bool vote_grants) {
  // Built in place, with no list of its own: each run's checkers ask for these.
  const size_t count = (leader_only ? roles.leader_only.size() : 0) + (vote_grants ? roles.vote_grants.size() : 0);
  if (count > sim::ObservationTypes::kMaxTypes) return sim::ObservationTypes::All();
  sim::ObservationTypes named({});
  if (leader_only) {
    for (const vocab::LeaderOnlyMessage& role : roles.leader_only) named = named.With({role.type});
  }
  if (vote_grants) {
    for (const vocab::VoteGrantMessage& role : roles.vote_grants) named = named.With({role.type});
  }
  return named;
}

void ClusterView::EndInstant(sim::TimeNs next_time) {
  time_ = next_time;
  for (InstantListener* listener : instant_listeners_) listener->OnInstantEnding();
}

bool ClusterView::ApplyNodeState(const sim::TraceRecord& r) {
  if (!IsElectionNode(r.node)) return false;
  const uint32_t index = r.node.value();
  switch (r.kind) {
    case sim::TraceKind::kStart:  // a fresh process: volatile beliefs start empty
    case sim::TraceKind::kCrash:  // a crashed node is in no role at all
    case sim::TraceKind::kRestart:
      Update(index, [&](NodeView& n) {
        n.up = r.kind != sim::TraceKind::kCrash;
        // A process booting while its node is frozen stays frozen.
        if (r.kind != sim::TraceKind::kStart) n.paused = false;
        n.role = vocab::Role::kFollower;
        n.believed_leader = vocab::kNobody;
        n.leads_unreported = false;
      });
      return true;
    case sim::TraceKind::kPause: Update(index, [](NodeView& n) { n.paused = true; }); return true;
    case sim::TraceKind::kResume: Update(index, [](NodeView& n) { n.paused = false; }); return true;
    case sim::TraceKind::kObserve: {
      if (r.payload == nullptr) return false;
      const sim::Observation& o = *r.payload;
      if (ignores_keys_ && vocab::KeyOf(o)) return false;
      if (const auto role = o.As<vocab::RoleChanged>()) {
        if (role->role == static_cast<int64_t>(vocab::Role::kLeader)) leader_role_reported_ = true;
        SetRole(index, static_cast<vocab::Role>(role->role), role->term, /*unreported=*/false, r.index);
        return true;
      }
      if (const auto belief = o.As<vocab::BeliefChanged>()) {
        SetBelief(index, belief->leader);
        return true;
      }
      return false;
    }
    case sim::TraceKind::kSend: {
      if (roles_ == nullptr || r.payload == nullptr || nodes_[index].role == vocab::Role::kLeader) return false;
      const std::optional<int64_t> term = roles_->LeaderTerm(*r.payload);
      if (!term) return false;
      SetRole(index, vocab::Role::kLeader, *term, /*unreported=*/true, r.index);
      return true;
    }
    default: return false;
  }
}

// Role changes and beliefs are most of what a view takes in, and each moves
// only its own counts, where Update takes a node's whole share out and puts
// it back: the same counts (ClusterView_Counts holds both to the plain
// definitions), for about a quarter fewer instructions a record.
void ClusterView::SetRole(uint32_t index, vocab::Role role, int64_t term, bool unreported, uint64_t claimed_at) {
  NodeView& n = nodes_[index];
  const int delta = int{role == vocab::Role::kLeader} - int{n.role == vocab::Role::kLeader};
  if (delta != 0 && n.up) {
    role_holders_ += delta;
    if (!n.paused) {
      live_leaders_ += delta;
      live_leader_id_sum_ += static_cast<uint64_t>(static_cast<int64_t>(delta)) * index;
    }
  }
  n.role = role;
  n.role_term = term;
  n.leads_unreported = unreported;
  n.claimed_at = claimed_at;
}

void ClusterView::SetBelief(uint32_t index, int64_t leader) {
  NodeView& n = nodes_[index];
  if (IsLive(index)) {
    if (CountedBelief(n.believed_leader, nodes_.size())) --believers_[static_cast<size_t>(n.believed_leader)];
    if (CountedBelief(leader, nodes_.size())) ++believers_[static_cast<size_t>(leader)];
  }
  n.believed_leader = leader;
}

ClusterView::Share ClusterView::ShareOf(uint32_t index) const {
  const NodeView& n = nodes_[index];
  Share share;
  share.index = index;
  share.live = IsLive(index);
  share.holds_role = HoldsLeaderRole(index);
  share.live_leader = share.live && n.role == vocab::Role::kLeader;
  if (share.live && CountedBelief(n.believed_leader, nodes_.size())) share.believes = n.believed_leader;
  return share;
}

void ClusterView::Count(const Share& share, int sign) {
  live_count_ += share.live ? sign : 0;
  role_holders_ += share.holds_role ? sign : 0;
  if (share.live_leader) {
    live_leaders_ += sign;
    // Modulo 2^64: adding and taking away ids leaves the sole leader's.
    live_leader_id_sum_ += static_cast<uint64_t>(static_cast<int64_t>(sign)) * share.index;
  }
  if (share.believes >= 0) believers_[static_cast<size_t>(share.believes)] += sign;
}

std::vector<sim::NodeId> ClusterView::RoleHolders() const {
  std::vector<sim::NodeId> out;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (HoldsLeaderRole(i)) out.push_back(sim::NodeId(i));
  }
  return out;
}

std::vector<sim::NodeId> ClusterView::LiveLeaders() const {
  std::vector<sim::NodeId> out;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (IsLive(i) && nodes_[i].role == vocab::Role::kLeader) out.push_back(sim::NodeId(i));
  }
  return out;
}

sim::NodeId ClusterView::LatestLeader() const {
  sim::NodeId latest = sim::kNoNode;
  uint64_t latest_claim = 0;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (HoldsLeaderRole(i) && (latest == sim::kNoNode || nodes_[i].claimed_at > latest_claim)) {
      latest = sim::NodeId(i);
      latest_claim = nodes_[i].claimed_at;
    }
  }
  return latest;
}

bool ClusterView::LeaderKnownToAll() const {
  const sim::NodeId leader = SoleLiveLeader();
  return leader != sim::kNoNode && AllLiveBelieve(leader.value());
}

bool ClusterView::AllLiveBelieve(uint32_t leader) const {
  // The leader's own belief does not count: holding the role is its belief.
  const bool live = IsLive(leader);
  const bool believes_itself = live && nodes_[leader].believed_leader == static_cast<int64_t>(leader);
  return believers_[leader] - (believes_itself ? 1 : 0) == live_count_ - (live ? 1 : 0);
}

std::vector<sim::NodeId> ClusterView::LiveNonBelievers(uint32_t leader) const {
  std::vector<sim::NodeId> out;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    if (i == leader || !IsLive(i)) continue;
    if (nodes_[i].believed_leader != static_cast<int64_t>(leader)) out.push_back(sim::NodeId(i));
  }
  return out;
}

}  // namespace checkers
