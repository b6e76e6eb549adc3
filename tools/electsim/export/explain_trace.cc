#include "tools/electsim/export/explain_trace.h"

#include <algorithm>

namespace electsim::explain {

using sim::TraceKind;

bool IsFault(TraceKind kind) {
  return kind == TraceKind::kCrash || kind == TraceKind::kRestart || kind == TraceKind::kPause ||
         kind == TraceKind::kResume || kind == TraceKind::kClock || kind == TraceKind::kNetwork;
}

bool IsFaultStep(const Event& e) { return e.kind == TraceKind::kNote && e.detail.rfind("fault ", 0) == 0; }

Recorder::Recorder(uint32_t total_nodes) : clocks_(total_nodes, std::vector<uint32_t>(total_nodes, 0)) {}

void Recorder::AdvanceClock(const sim::TraceRecord& r, uint32_t node) {
  std::vector<uint32_t>& clock = clocks_[node];
  if (r.kind == TraceKind::kDeliver) {
    if (auto it = in_flight_.find(r.message_id); it != in_flight_.end()) {
      for (size_t i = 0; i < clock.size(); ++i) clock[i] = std::max(clock[i], it->second.clock[i]);
      if (--it->second.copies == 0) in_flight_.erase(it);
    }
  }
  ++clock[node];
  if (r.kind == TraceKind::kSend) in_flight_[r.message_id] = InFlight{clock, 1};
  if (r.kind == TraceKind::kDuplicate) {
    if (auto it = in_flight_.find(r.message_id); it != in_flight_.end()) ++it->second.copies;
  }
  if (r.kind == TraceKind::kDrop) {
    if (auto it = in_flight_.find(r.message_id); it != in_flight_.end() && --it->second.copies == 0) {
      in_flight_.erase(it);
    }
  }
}

void Recorder::OnRecord(const sim::TraceRecord& r) {
  const bool at_node = r.node != sim::kNoNode && r.node.value() < clocks_.size();
  const uint32_t node = at_node ? r.node.value() : Event::kNone;
  if (at_node) AdvanceClock(r, node);
  switch (r.kind) {
    case TraceKind::kTimerSet: armed_[{node, r.value}] = r.time; return;
    case TraceKind::kTimerCancel: armed_.erase({node, r.value}); return;
    case TraceKind::kPersist:
    case TraceKind::kWrite:
    case TraceKind::kSync: return;
    default: break;
  }
  Event e{.index = r.index,
          .time = r.time,
          .local = r.local_time,
          .kind = r.kind,
          .node = node,
          .peer = r.peer == sim::kNoNode ? Event::kNone : r.peer.value(),
          .message_id = r.message_id,
          .value = r.value,
          .detail = std::string(r.detail)};
  if (r.payload != nullptr) e.payload = *r.payload;
  if (at_node) e.seq = clocks_[node][node];
  if (at_node && r.kind == TraceKind::kObserve) clock_at_[r.index] = clocks_[node];
  if (r.kind == TraceKind::kTimerFire) {
    if (auto it = armed_.find({node, r.value}); it != armed_.end()) {
      e.timer_armed = it->second;
      armed_.erase(it);
    }
  }
  events_.push_back(std::move(e));
}

const std::vector<uint32_t>* Recorder::ClockAt(uint64_t index) const {
  auto it = clock_at_.find(index);
  return it == clock_at_.end() ? nullptr : &it->second;
}

const Event* Recorder::Find(uint64_t index) const {
  auto it =
      std::lower_bound(events_.begin(), events_.end(), index, [](const Event& e, uint64_t i) { return e.index < i; });
  return it != events_.end() && it->index == index ? &*it : nullptr;
}

void Recorder::IndexMessages() {
  fates_.clear();
  for (const Event& e : events_) {
    if (e.message_id == 0) continue;
    MessageFate& fate = fates_[e.message_id];
    if (e.kind == TraceKind::kSend) fate.send = &e;
    if (e.kind == TraceKind::kDeliver) fate.deliveries.push_back(&e);
    if (e.kind == TraceKind::kDrop) fate.drop = &e;
  }
}

const MessageFate* Recorder::Fate(uint64_t message_id) const {
  auto it = fates_.find(message_id);
  return it == fates_.end() ? nullptr : &it->second;
}

}  // namespace electsim::explain
