// What `electsim explain` keeps of a run's trace: every record an account
// can need (timers being set or cancelled and storage writes aside), each
// with its place in happened-before (vector clocks over send -> deliver
// edges), the moment each fired timer was armed, and every message's fate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "electsim/sim/message.h"
#include "sim/trace.h"

namespace electsim::explain {

struct Event {
  static constexpr uint32_t kNone = UINT32_MAX;

  uint64_t index = 0;
  sim::TimeNs time;
  sim::TimeNs local;  // the node's monotonic clock
  sim::TraceKind kind = sim::TraceKind::kNote;
  uint32_t node = kNone;
  uint32_t peer = kNone;
  uint64_t message_id = 0;
  int64_t value = 0;
  std::string detail;
  std::optional<sim::Payload> payload;
  uint32_t seq = 0;                        // this node's own vector-clock component at the event
  std::optional<sim::TimeNs> timer_armed;  // a timer_fire: when that timer was set

  bool Observes(const sim::RecordType& type) const {
    return kind == sim::TraceKind::kObserve && payload && payload->Is(type);
  }
  bool Carries(const sim::RecordType& type) const { return payload && payload->Is(type); }
};

bool IsFault(sim::TraceKind kind);
// A driver note "fault /faults/N: ..." saying a scenario step applied.
bool IsFaultStep(const Event& e);

// A message from its send to each delivery, or its drop.
struct MessageFate {
  const Event* send = nullptr;
  std::vector<const Event*> deliveries;
  const Event* drop = nullptr;
};

class Recorder final : public sim::TraceSink {
 public:
  explicit Recorder(uint32_t total_nodes);

  void OnRecord(const sim::TraceRecord& r) override;

  const std::vector<Event>& events() const { return events_; }
  // The vector clock at an observation.
  const std::vector<uint32_t>* ClockAt(uint64_t index) const;
  const Event* Find(uint64_t index) const;
  // Every message's fate; built once the run is over (events no longer move).
  void IndexMessages();
  const MessageFate* Fate(uint64_t message_id) const;

 private:
  struct InFlight {
    std::vector<uint32_t> clock;
    int copies = 1;
  };
  void AdvanceClock(const sim::TraceRecord& r, uint32_t node);

  std::vector<std::vector<uint32_t>> clocks_;
  std::map<uint64_t, InFlight> in_flight_;
  std::map<std::pair<uint32_t, int64_t>, sim::TimeNs> armed_;  // (node, timer id) -> when set
  std::vector<Event> events_;
  std::map<uint64_t, std::vector<uint32_t>> clock_at_;
  std::map<uint64_t, MessageFate> fates_;
};

}  // namespace electsim::explain
