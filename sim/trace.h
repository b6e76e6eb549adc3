// Every event of a run becomes a TraceRecord, streamed to sinks as it happens
// (nothing holds the whole trace). The canonical hash of the record stream is
// the run's fingerprint: same scenario + seed => same hash, on any machine.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "electsim/sim/message.h"
#include "electsim/sim/types.h"

namespace sim {

enum class TraceKind : uint8_t {
  kStart,         // process started (first boot or restart); value = incarnation
  kSend,          // node -> peer, message_id, payload
  kDrop,          // message_id lost; detail = loss | partition | node-down
  kDuplicate,     // message_id will arrive twice
  kDeliver,       // message_id handed to peer (node = receiver, peer = sender)
  kTimerSet,      // value = timer id, local_time = local deadline
  kTimerCancel,   // value = timer id
  kTimerFire,     // value = timer id
  kCrash,         // volatile state and timers lost; detail = "power-loss" (value = unsynced keys lost) or empty
  kRestart,       // process rebuilt from stable storage
  kPause,         // deliveries and timers held
  kResume,        // held events released in order
  kClock,         // detail "drift": the clocks' rate changed, value = drift ppm;
                  // detail "wall_step": the wall clock stepped, value = the step in ns
  kNetwork,       // partition / cut / heal / link settings; detail describes it
  kPersist,       // durable stable-storage write; detail = key, value = value
  kObserve,       // process observation; payload
  kNote,          // driver annotation (scenario step); detail = text
  // Appended so that the kinds above keep their numbers (and old traces their hashes).
  kWrite,         // buffered (unsynced) stable-storage write; detail = key, value = value
  kSync,          // buffered writes made durable; value = how many keys
};

inline constexpr int kTraceKindCount = static_cast<int>(TraceKind::kSync) + 1;

std::string_view TraceKindName(TraceKind kind);

// A set of record kinds: what a sink reads.
class TraceKinds {
 public:
  constexpr TraceKinds(std::initializer_list<TraceKind> kinds) {
    for (TraceKind kind : kinds) mask_ |= Bit(kind);
  }
  static constexpr TraceKinds All() { return TraceKinds((uint32_t{1} << kTraceKindCount) - 1); }
  constexpr bool Has(TraceKind kind) const { return (mask_ & Bit(kind)) != 0; }
  constexpr TraceKinds With(TraceKinds other) const { return TraceKinds(mask_ | other.mask_); }

 private:
  constexpr explicit TraceKinds(uint32_t mask) : mask_(mask) {}
  static constexpr uint32_t Bit(TraceKind kind) { return uint32_t{1} << static_cast<int>(kind); }
  uint32_t mask_ = 0;
};

// The kinds that change what a node is (up, paused, its role and beliefs,
// as checkers::ClusterView rebuilds it): lifecycle, observations and sends.
inline constexpr TraceKinds kNodeStateKinds = {TraceKind::kStart,  TraceKind::kCrash,   TraceKind::kRestart,
                                               TraceKind::kPause,  TraceKind::kResume,  TraceKind::kObserve,
                                               TraceKind::kSend};

struct TraceRecord {
  uint64_t index = 0;          // position in the trace, from 0
  TimeNs time;                 // global virtual time
  TraceKind kind = TraceKind::kNote;
  NodeId node = kNoNode;       // the node the event happened at
  NodeId peer = kNoNode;       // the other end of a message, if any
  uint64_t message_id = 0;     // 0 when not about a message
  TimeNs local_time;           // the node's monotonic clock reading (or a timer's deadline on it)
  int64_t value = 0;           // kind-specific integer
  std::string_view detail;     // kind-specific text
  const Payload* payload = nullptr;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void OnRecord(const TraceRecord& record) = 0;
  // The kinds this sink reads; records of other kinds never reach it (most
  // sinks ignore timer and storage records, the most numerous). Asked once,
  // when the sink is added. Records still reach it in trace order.
  virtual TraceKinds kinds() const { return TraceKinds::All(); }
};

// Folds records into a 64-bit hash over their canonical binary fields; the
// function is specified in docs/trace.md ("The trace hash") and pinned by a
// known-answer test.
class TraceHasher final : public TraceSink {
 public:
  void OnRecord(const TraceRecord& record) override;
  uint64_t hash() const { return hash_; }
  uint64_t records() const { return records_; }

 private:
  uint64_t hash_ = 0x6a09e667f3bcc909ULL;
  uint64_t records_ = 0;
};

std::string FormatTraceHash(uint64_t hash);  // "0x" + 16 hex digits
// The inverse of FormatTraceHash; nullopt for any other text.
std::optional<uint64_t> ParseTraceHash(std::string_view text);

// Appends `text` as a JSON string literal.
void AppendJsonString(std::string& out, std::string_view text);

// One record as a single JSON object (no trailing newline).
std::string TraceRecordToJson(const TraceRecord& record);

}  // namespace sim
