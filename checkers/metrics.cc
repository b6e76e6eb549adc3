#include "checkers/metrics.h"

#include <algorithm>
#include <utility>

#include "electsim/vocab/vocabulary.h"

namespace checkers {
namespace {

uint64_t SentBytes(const sim::TraceRecord& send) {
  return send.payload == nullptr ? 0 : static_cast<uint64_t>(sim::EstimatedEncodedBytes(*send.payload));
}

}  // namespace

MetricsCollector::MetricsCollector(uint32_t node_count, const vocab::MessageRoles* roles)
    : own_view_(std::make_unique<ClusterView>(node_count)), view_(*own_view_), roles_(roles) {
  OpenEpisode(sim::TimeNs(0), "start");
}

MetricsCollector::MetricsCollector(ClusterView& shared_view, const vocab::MessageRoles* roles)
    : view_(shared_view), roles_(roles) {
  OpenEpisode(sim::TimeNs(0), "start");
}

void MetricsCollector::OnRecord(const sim::TraceRecord& r) {
  if (finished_) return;
  AdvanceTo(r.time);
  if (r.kind == sim::TraceKind::kSend) {
    ++metrics_.messages_sent;
    const SentType& sent = CountSend(r.payload == nullptr ? nullptr : r.payload->type());
    switch (ClassOf(r, sent.steady_state)) {
      case MessageClass::kElection: {
        const uint64_t bytes = SentBytes(r);
        ++metrics_.messages_election;
        metrics_.bytes_election += bytes;
        Election& latest = metrics_.elections.back();
        if (!latest.known) {
          ++latest.election_messages;
          latest.election_bytes += bytes;
        }
        break;
      }
      case MessageClass::kSteadyState:
        ++metrics_.messages_steady_state;
        metrics_.bytes_steady_state += SentBytes(r);
        break;
      case MessageClass::kApplication: ++metrics_.messages_application; break;
    }
    return;
  }
  if (r.kind == sim::TraceKind::kObserve && r.payload != nullptr) CountObservation(*r.payload);
  if (!view_.Apply(r)) return;
  role_holders_ = view_.role_holder_count();
  TrackLeadership(r);
}

const MetricsCollector::SentType& MetricsCollector::CountSend(const sim::RecordType* type) {
  for (SentType& sent : sent_by_type_) {
    if (sent.type == type) {
      ++sent.count;
      return sent;
    }
  }
  return AddSentType(type);
}

const MetricsCollector::SentType& MetricsCollector::AddSentType(const sim::RecordType* type) {
  // A type at another address with the same name (a separately built
  // algorithm's copy of the constant) gets an entry of its own; metrics()
  // adds the entries up by name, and the steady-state test compares types.
  const bool steady_state = roles_ != nullptr && type != nullptr && roles_->IsSteadyState(sim::Message(*type));
  return sent_by_type_.emplace_back(SentType{.type = type, .count = 1, .steady_state = steady_state});
}

const RunMetrics& MetricsCollector::metrics() const {
  metrics_.messages_by_type.clear();
  for (const SentType& sent : sent_by_type_) {
    metrics_.messages_by_type[sent.type == nullptr ? std::string() : std::string(sent.type->name())] += sent.count;
  }
  return metrics_;
}

RunMetrics MetricsCollector::TakeMetrics() {
  metrics();
  RunMetrics taken = std::move(metrics_);
  metrics_ = RunMetrics{};
  return taken;
}

MessageClass MetricsCollector::Classify(const sim::TraceRecord& send) const {
  return ClassOf(send, roles_ != nullptr && send.payload != nullptr && roles_->IsSteadyState(*send.payload));
}

MessageClass MetricsCollector::ClassOf(const sim::TraceRecord& send, bool steady_state) const {
  // The shared resource is the node right after the election nodes.
  const sim::NodeId resource(view_.node_count());
  if (send.node == resource || send.peer == resource) return MessageClass::kApplication;
  return steady_state ? MessageClass::kSteadyState : MessageClass::kElection;
}

void MetricsCollector::Finish(sim::TimeNs end) {
  if (finished_) return;
  AdvanceTo(end);
  finished_ = true;
}

void MetricsCollector::AdvanceTo(sim::TimeNs time) {
  if (time <= last_time_) return;
  const sim::TimeNs span = time - last_time_;
  if (role_holders_ == 0) metrics_.no_leader_time += span;
  if (role_holders_ >= 2) metrics_.multi_leader_time += span;
  last_time_ = time;
}

void MetricsCollector::CountObservation(const sim::Observation& o) {
  if (o.Is(vocab::kWrite)) ++metrics_.writes_sent;
  if (o.Is(vocab::kResourceAccept)) ++metrics_.writes_accepted;
  if (o.Is(vocab::kResourceReject)) ++metrics_.writes_rejected;
  if (const auto term = o.As<vocab::TermChanged>()) metrics_.max_term = std::max(metrics_.max_term, term->term);
  if (const auto role = o.As<vocab::RoleChanged>()) metrics_.max_term = std::max(metrics_.max_term, role->term);
}

void MetricsCollector::TrackLeadership(const sim::TraceRecord& r) {
  // 1. Losing the current leader opens the next episode.
  if (current_leader_) {
    const NodeView& leader = view_.node(*current_leader_);
    const char* cause = !leader.up                            ? "leader crashed"
                        : leader.paused                       ? "leader paused"
                        : leader.role != vocab::Role::kLeader ? "leader stepped down"
                                                              : nullptr;
    if (cause != nullptr) {
      current_leader_.reset();
      // Another live node still leads (split brain resolving): no election is
      // needed, it simply becomes the leader the metrics follow.
      const std::vector<sim::NodeId> others = view_.LiveLeaders();
      if (others.empty()) {
        OpenEpisode(r.time, cause);
      } else {
        current_leader_ = others.back().value();
      }
    }
  }

  // 2. A claim ends a waiting episode; so does a paused leader resuming in its
  // role while nobody replaced it (it never stopped leading, it was only absent).
  const uint32_t node = r.node.value();
  const bool claim = r.kind == sim::TraceKind::kObserve && r.payload->Is(vocab::kRoleChange) &&
                     view_.node(node).role == vocab::Role::kLeader;
  const bool resumed_leading = r.kind == sim::TraceKind::kResume && view_.HoldsLeaderRole(node);
  const bool candidacy = r.kind == sim::TraceKind::kObserve && r.payload->Is(vocab::kRoleChange) &&
                         view_.node(node).role == vocab::Role::kCandidate;
  if ((candidacy || claim) && !metrics_.elections.back().detected) metrics_.elections.back().detected = r.time;
  if (claim) {
    std::vector<sim::NodeId>& claimers = metrics_.leaders_by_term[view_.node(node).role_term];
    if (std::find(claimers.begin(), claimers.end(), r.node) == claimers.end()) claimers.push_back(r.node);
  }
  if ((claim || resumed_leading) && !current_leader_) {
    Elect(r.time, r.node, view_.node(node).role_term);
  } else if (claim && *current_leader_ != node) {
    // Handed over without a gap: the newcomer's episode takes no time to elect.
    OpenEpisode(r.time, "leader changed");
    Elect(r.time, r.node, view_.node(node).role_term);
  }

  // 3. The latest episode is known once every live node follows its leader
  // (its own: after a split brain resolves, the leader the metrics follow may
  // be another node, whose following says nothing about this episode).
  Election& latest = metrics_.elections.back();
  if (current_leader_ && latest.elected && !latest.known && latest.leader == sim::NodeId(*current_leader_) &&
      view_.AllLiveBelieve(*current_leader_)) {
    latest.known = r.time;
  }
}

void MetricsCollector::OpenEpisode(sim::TimeNs at, std::string cause) {
  metrics_.elections.push_back(Election{.started = at, .cause = std::move(cause)});
}

void MetricsCollector::Elect(sim::TimeNs at, sim::NodeId leader, int64_t term) {
  Election& latest = metrics_.elections.back();
  latest.elected = at;
  latest.leader = leader;
  latest.term = term;
  current_leader_ = leader.value();
}

}  // namespace checkers
