#include "tools/electsim/export/timeline_state.h"

#include "electsim/vocab/vocabulary.h"

namespace electsim {

TimelineTracker::TimelineTracker(uint32_t total_nodes, uint32_t election_nodes,
                                 std::function<void(const Span&)> on_span, std::function<void(const Flow&)> on_flow)
    : nodes_(total_nodes), on_span_(std::move(on_span)), on_flow_(std::move(on_flow)) {
  for (uint32_t node = 0; node < total_nodes; ++node) {
    // Until a node says otherwise it is not trying to lead.
    nodes_[node].role = node < election_nodes ? vocab::RoleName(vocab::Role::kFollower) : "up";
    nodes_[node].shown = nodes_[node].role;
  }
}

void TimelineTracker::Show(uint32_t node, sim::TimeNs now) {
  NodeState& n = nodes_[node];
  const std::string_view state = n.crashed ? "crashed" : n.paused ? "paused" : n.role;
  const int64_t term = n.crashed || n.paused ? -1 : n.term;
  if (state == n.shown && term == n.shown_term) return;
  if (now > n.since) on_span_(Span{node, n.shown, n.shown_term, n.since, now});
  n.shown = state;
  n.shown_term = term;
  n.since = now;
}

void TimelineTracker::OnRecord(const sim::TraceRecord& r) {
  using sim::TraceKind;
  const uint32_t node = r.node.value();
  const bool known = r.node != sim::kNoNode && node < nodes_.size();
  switch (r.kind) {
    case TraceKind::kSend:
      in_flight_[r.message_id] = InFlight{node, r.payload != nullptr ? r.payload->type_name() : "", r.time, 1};
      return;
    case TraceKind::kDuplicate:
      if (auto it = in_flight_.find(r.message_id); it != in_flight_.end()) ++it->second.copies;
      return;
    case TraceKind::kDrop:
    case TraceKind::kDeliver: {
      auto it = in_flight_.find(r.message_id);
      if (it == in_flight_.end()) return;
      if (r.kind == TraceKind::kDeliver) {
        on_flow_(Flow{r.message_id, it->second.from, node, it->second.type, it->second.sent, r.time});
      }
      if (--it->second.copies == 0) in_flight_.erase(it);
      return;
    }
    case TraceKind::kCrash:
      if (!known) return;
      nodes_[node].crashed = true;
      nodes_[node].paused = false;
      break;
    case TraceKind::kStart:
    case TraceKind::kRestart:
      if (!known) return;
      nodes_[node].crashed = false;
      // A restarted node has forgotten its role.
      if (nodes_[node].role != "up") nodes_[node].role = vocab::RoleName(vocab::Role::kFollower);
      break;
    case TraceKind::kPause:
      if (known) nodes_[node].paused = true;
      break;
    case TraceKind::kResume:
      if (known) nodes_[node].paused = false;
      break;
    case TraceKind::kObserve:
      if (!known || r.payload == nullptr) return;
      // A term moves on without a role change too: a follower adopting a
      // higher one starts a new span, as its label names the term.
      if (r.payload->Is(vocab::kTermChange)) {
        nodes_[node].term = r.payload->Get(vocab::kFieldTerm, nodes_[node].term);
        break;
      }
      if (!r.payload->Is(vocab::kRoleChange)) return;
      {
        const int64_t role = r.payload->Get(vocab::kFieldRole);
        if (role < 0 || role > 2) return;
        nodes_[node].role = vocab::RoleName(static_cast<vocab::Role>(role));
        nodes_[node].term = r.payload->Get(vocab::kFieldTerm, -1);
      }
      break;
    default: return;
  }
  Show(node, r.time);
}

void TimelineTracker::Finish(sim::TimeNs end) {
  for (uint32_t node = 0; node < nodes_.size(); ++node) {
    NodeState& n = nodes_[node];
    if (end > n.since) on_span_(Span{node, n.shown, n.shown_term, n.since, end});
    n.since = end;
  }
}

}  // namespace electsim
