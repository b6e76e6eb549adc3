#include "tools/electsim/engine/failover.h"

#include <algorithm>

namespace electsim {

std::string_view FailoverEpisode::HitName() const {
  switch (hit) {
    case Hit::kCrash: return "leader crashed";
    case Hit::kPause: return "leader paused";
    case Hit::kCut: return "leader cut off";
  }
  return "";
}

void FailoverTracker::OnLeaderHit(const std::string& step, FailoverEpisode::Hit hit, uint32_t leader, sim::TimeNs now,
                                  std::vector<uint32_t> side) {
  FailoverEpisode episode;
  episode.step = step;
  episode.hit = hit;
  episode.started = now;
  episode.old_leader = leader;
  episodes_.push_back(std::move(episode));
  Open open{episodes_.size() - 1, std::move(side)};
  // Cut off, it may go on leading its side of one.
  if (hit == FailoverEpisode::Hit::kCut) {
    open.acting = true;
    open.acting_since = now;
  }
  open_.push_back(std::move(open));
}

void FailoverTracker::OnCutRestored(const std::string& step, sim::TimeNs now) {
  for (Open& open : open_) {
    FailoverEpisode& e = episodes_[open.episode];
    if (e.hit == FailoverEpisode::Hit::kCut && e.step == step && !e.undone) Undone(open, now);
  }
}

void FailoverTracker::OnHeal(sim::TimeNs now) {
  for (Open& open : open_) {
    FailoverEpisode& e = episodes_[open.episode];
    if (e.hit == FailoverEpisode::Hit::kCut && !e.undone) Undone(open, now);
  }
}

void FailoverTracker::Undone(Open& open, sim::TimeNs now) {
  FailoverEpisode& e = episodes_[open.episode];
  e.undone = now;
  if (e.hit == FailoverEpisode::Hit::kCut) StopActing(open, now);  // the cut is over: no longer cut off
  // Resumed still in the role: it acts as leader until it steps down.
  if (e.hit == FailoverEpisode::Hit::kPause && view_.HoldsLeaderRole(e.old_leader)) {
    open.acting = true;
    open.acting_since = now;
  }
}

void FailoverTracker::StopActing(Open& open, sim::TimeNs now) {
  if (!open.acting) return;
  open.acting = false;
  FailoverEpisode& e = episodes_[open.episode];
  e.old_leader_acting = e.old_leader_acting.value_or(sim::TimeNs(0)) + (now - open.acting_since);
}

void FailoverTracker::Finish(sim::TimeNs end) {
  for (Open& open : open_) StopActing(open, end);
}

void FailoverTracker::CountSend(const sim::TraceRecord& send) {
  if (messages_.Classify(send) != checkers::MessageClass::kElection) return;
  for (const Open& open : open_) {
    FailoverEpisode& e = episodes_[open.episode];
    if (e.known) continue;
    ++e.election_messages;
    if (send.payload != nullptr) e.election_bytes += static_cast<uint64_t>(sim::EstimatedEncodedBytes(*send.payload));
  }
}

void FailoverTracker::OnRecord(const sim::TraceRecord& record) {
  if (open_.empty()) return;
  if (record.kind == sim::TraceKind::kSend) {
    CountSend(record);
    return;
  }
  if (!view_.Apply(record)) return;
  for (Open& open : open_) Update(open, record);
  std::erase_if(open_, [this](const Open& open) {
    const FailoverEpisode& e = episodes_[open.episode];
    return e.known && e.settled && !open.acting;
  });
}

void FailoverTracker::Update(Open& open, const sim::TraceRecord& record) {
  FailoverEpisode& e = episodes_[open.episode];
  const uint32_t node = record.node.value();
  // The old leader coming back from a crash or a pause undoes the fault.
  if (!e.undone && node == e.old_leader &&
      ((e.hit == FailoverEpisode::Hit::kCrash && record.kind == sim::TraceKind::kRestart) ||
       (e.hit == FailoverEpisode::Hit::kPause && record.kind == sim::TraceKind::kResume))) {
    Undone(open, record.time);
  }
  if (open.acting && !view_.HoldsLeaderRole(e.old_leader)) StopActing(open, record.time);
  const bool in_side = std::binary_search(open.side.begin(), open.side.end(), node);
  if (in_side && node != e.old_leader && node < view_.node_count() && view_.IsLive(node)) {
    const vocab::Role role = view_.node(node).role;
    if (!e.detected && role != vocab::Role::kFollower) e.detected = record.time;
    if (!e.elected && role == vocab::Role::kLeader) {
      e.elected = record.time;
      e.new_leader = node;
    }
  }
  if (!e.known) {
    const int64_t leader = KnownLeader(open.side, e.old_leader);
    if (leader >= 0) {
      e.known = record.time;
      e.new_leader = leader;
    }
  }
  if (e.undone && !e.settled && view_.LeaderKnownToAll()) {
    e.settled = record.time;
    e.old_leader_back = view_.SoleLiveLeader().value() == e.old_leader;
  }
}

int64_t FailoverTracker::KnownLeader(const std::vector<uint32_t>& side, uint32_t old_leader) const {
  int64_t leader = -1;
  for (uint32_t n : side) {
    if (n != old_leader && view_.IsLive(n) && view_.node(n).role == vocab::Role::kLeader) {
      if (leader >= 0) return -1;  // two leaders on the side: not one known
      leader = n;
    }
  }
  if (leader < 0) return -1;
  for (uint32_t n : side) {
    if (n == leader || !view_.IsLive(n)) continue;
    if (view_.node(n).believed_leader != leader) return -1;
  }
  return leader;
}

}  // namespace electsim
