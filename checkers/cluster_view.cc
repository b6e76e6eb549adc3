#include "checkers/cluster_view.h"

namespace checkers {

bool ClusterView::Apply(const sim::TraceRecord& r) {
  if (!IsElectionNode(r.node)) return false;
  NodeView& n = nodes_[r.node.value()];
  switch (r.kind) {
    case sim::TraceKind::kStart:    // a fresh process: volatile beliefs start empty
    case sim::TraceKind::kCrash:    // a crashed node is in no role at all
    case sim::TraceKind::kRestart:
      n.up = r.kind != sim::TraceKind::kCrash;
      // A process booting while its node is frozen stays frozen.
      if (r.kind != sim::TraceKind::kStart) n.paused = false;
      n.role = vocab::Role::kFollower;
      n.believed_leader = vocab::kNobody;
      n.leads_unreported = false;
      return true;
    case sim::TraceKind::kPause:
      n.paused = true;
      return true;
    case sim::TraceKind::kResume:
      n.paused = false;
      return true;
    case sim::TraceKind::kObserve: {
      if (r.payload == nullptr) return false;
      const sim::Observation& o = *r.payload;
      if (const auto role = o.As<vocab::RoleChanged>()) {
        n.role = static_cast<vocab::Role>(role->role);
        n.role_term = role->term;
        n.leads_unreported = false;
        n.claimed_at = r.index;
        return true;
      }
      if (const auto belief = o.As<vocab::BeliefChanged>()) {
        n.believed_leader = belief->leader;
        return true;
      }
      return false;
    }
    case sim::TraceKind::kSend: {
      if (roles_ == nullptr || r.payload == nullptr || n.role == vocab::Role::kLeader) return false;
      const std::optional<int64_t> term = roles_->LeaderTerm(*r.payload);
      if (!term) return false;
      n.role = vocab::Role::kLeader;
      n.role_term = *term;
      n.leads_unreported = true;
      n.claimed_at = r.index;
      return true;
    }
    default:
      return false;
  }
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
  const std::vector<sim::NodeId> leaders = LiveLeaders();
  return leaders.size() == 1 && LiveNonBelievers(leaders[0].value()).empty();
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
