// Every event of a run becomes a TraceRecord, streamed to sinks as it happens
// (nothing holds the whole trace). The canonical hash of the record stream is
// the run's fingerprint: same scenario + seed => same hash, on any machine.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "electsim/sim/message.h"
#include "electsim/sim/types.h"

namespace sim {

enum class TraceKind : uint8_t {
  kStart,        // process started (first boot or restart); value = incarnation
  kSend,         // node -> peer, message_id, payload
  kDrop,         // message_id lost; detail = loss | partition | node-down
  kDuplicate,    // message_id will arrive twice
  kDeliver,      // message_id handed to peer (node = receiver, peer = sender)
  kTimerSet,     // value = timer id, local_time = local deadline
  kTimerCancel,  // value = timer id
  kTimerFire,    // value = timer id
  kCrash,        // volatile state and timers lost; detail = "power-loss" (value = unsynced keys lost) or empty
  kRestart,      // process rebuilt from stable storage
  kPause,        // deliveries and timers held
  kResume,       // held events released in order
  kClock,        // detail "drift": the clocks' rate changed, value = drift ppm;
                 // detail "wall_step": the wall clock stepped, value = the step in ns
  kNetwork,      // partition / cut / heal / link settings; detail describes it
  kPersist,      // durable stable-storage write; detail = key, value = value
  kObserve,      // process observation; payload
  kNote,         // driver annotation (scenario step); detail = text
  // Appended so that the kinds above keep their numbers (and old traces their hashes).
  kWrite,  // buffered (unsynced) stable-storage write; detail = key, value = value
  kSync,   // buffered writes made durable; value = how many keys
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
  // Bit k set: TraceKind k is in the set.
  constexpr uint32_t mask() const { return mask_; }

 private:
  constexpr explicit TraceKinds(uint32_t mask) : mask_(mask) {}
  static constexpr uint32_t Bit(TraceKind kind) { return uint32_t{1} << static_cast<int>(kind); }
  uint32_t mask_ = 0;
};

// The kinds that change what a node is (up, paused, its role and beliefs,
// as checkers::ClusterView rebuilds it): lifecycle, observations and sends.
inline constexpr TraceKinds kNodeStateKinds = {TraceKind::kStart, TraceKind::kCrash,  TraceKind::kRestart,
                                               TraceKind::kPause, TraceKind::kResume, TraceKind::kObserve,
                                               TraceKind::kSend};

struct TraceRecord {
  uint64_t index = 0;  // position in the trace, from 0
  TimeNs time;         // global virtual time
  TraceKind kind = TraceKind::kNote;
  NodeId node = kNoNode;    // the node the event happened at
  NodeId peer = kNoNode;    // the other end of a message, if any
  uint64_t message_id = 0;  // 0 when not about a message
  TimeNs local_time;        // the node's monotonic clock reading (or a timer's deadline on it)
  int64_t value = 0;        // kind-specific integer
  std::string_view detail;  // kind-specific text
  const Payload* payload = nullptr;
};

// A set of observation or message types, matched as RecordType's ==
// matches: which kObserve, kSend or kDeliver records a sink reads. Held
// inline (every run asks each sink).
class ObservationTypes {
 public:
  static constexpr size_t kMaxTypes = 16;
  // Every type, those no sink names included.
  static ObservationTypes All() { return ObservationTypes(); }
  ObservationTypes(std::initializer_list<const RecordType*> types);

  bool all() const { return all_; }
  // The types named; empty when all().
  std::span<const RecordType* const> types() const { return {types_.data(), count_}; }
  bool Has(const RecordType& type) const;
  ObservationTypes With(const ObservationTypes& other) const;

 private:
  ObservationTypes() = default;
  void Add(const RecordType* type);
  bool all_ = true;
  size_t count_ = 0;
  std::array<const RecordType*, kMaxTypes> types_{};
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void OnRecord(const TraceRecord& record) = 0;
  // The kinds this sink reads; records of other kinds never reach it (most
  // sinks ignore timer and storage records, the most numerous). Asked once,
  // when the sink is added. Records still reach it in trace order.
  virtual TraceKinds kinds() const { return TraceKinds::All(); }
  // Of the observations (when kinds() has kObserve), the types this sink
  // reads; others never reach it. Asked once, when the sink is added. Most
  // sinks read two or three of the dozen types, and an observation offered
  // to every checker cost more than the rest of its handling. A type left
  // out here is a record the sink silently misses: the shipped checkers'
  // lists are tested against runs that offer every sink every observation
  // (Simulator::OfferEveryObservation, Simulator::OfferEveryRecord).
  virtual ObservationTypes observation_types() const { return ObservationTypes::All(); }
  // Of the sends and deliveries (when kinds() has kSend or kDeliver), the
  // message types this sink reads; others never reach it. As
  // observation_types, and tested the same way. Most messages are
  // heartbeats and their replies, which the checkers that read the wire for
  // leader-only messages or vote grants pass over.
  virtual ObservationTypes message_types() const { return ObservationTypes::All(); }
  // Whether the sink is told where each instant starts (OnInstantStart).
  // Asked once, when the sink is added. A sink that judges the state each
  // instant ends in, but whose state only a few kinds of record change, can
  // then read those kinds alone instead of every record to see time move.
  virtual bool reads_instant_starts() const { return false; }
  // `first` is the first record of an instant later than every record before
  // it, passed before any sink reads it (the trace begins at time 0, which
  // has no start). Of a kind this sink may not read: only its index and time
  // are meant.
  virtual void OnInstantStart(const TraceRecord& first) { (void)first; }

  // OnInstantStart is called only for an instant that starts at or after
  // this time. A sink that judges an instant only when it read something in
  // it, or once a time it knows in advance has come, says so with the two
  // calls below, and is spared the call at every other instant (most of a
  // fuzz run's, where that call was 6% of the run). Skipped starts must be
  // ones where OnInstantStart would have done nothing: the tests of kinds()
  // compare against runs without instant starts.
  TimeNs instant_wake_at() const { return instant_wake_at_; }

 protected:
  // The next instant start is wanted, whenever it comes (the default).
  void WakeAtNextInstant() { instant_wake_at_ = TimeNs(0); }
  // No instant start before `at` is wanted, unless WakeAtNextInstant comes first.
  void SleepUntilInstantAt(TimeNs at) { instant_wake_at_ = at; }

 private:
  TimeNs instant_wake_at_;
};

// Folds records into a 64-bit hash over their canonical binary fields; the
// function is specified in docs/trace.md ("The trace hash") and pinned by a
// known-answer test.
class TraceHasher final : public TraceSink {
 public:
  void OnRecord(const TraceRecord& record) override;
  // OnRecord without the virtual call, inlined where the simulator emits
  // (Simulator::EnableTraceHash): constant fields fold at each call site.
  [[gnu::always_inline]] inline void Add(const TraceRecord& record);
  uint64_t hash() const { return hash_; }
  uint64_t records() const { return records_; }

  // Keeps the hash after every `every`-th record (`every` a power of two), at
  // most `max` of them: when full, every other one goes and the spacing
  // doubles, so a run of any length keeps evenly spaced checkpoints. A replay
  // compares them to find the first stretch of records that differs. Kept
  // here rather than by a sink: a check of the record count per record, not
  // a virtual call.
  void KeepCheckpoints(uint64_t every, size_t max);
  uint64_t checkpoint_every() const { return checkpoint_mask_ + 1; }
  // checkpoints()[i] is the hash after record (i + 1) * checkpoint_every() - 1.
  const std::vector<uint64_t>& checkpoints() const { return checkpoints_; }

 private:
  void Checkpoint();

  uint64_t hash_ = 0x6a09e667f3bcc909ULL;
  uint64_t records_ = 0;
  // checkpoint_every() - 1; all ones while no checkpoints are kept, which
  // records_ (at least 1 when tested) never matches.
  uint64_t checkpoint_mask_ = ~uint64_t{0};
  size_t max_checkpoints_ = 0;
  std::vector<uint64_t> checkpoints_;
};

namespace trace_hash_internal {
// wyhash's secrets: odd, with balanced bits.
inline constexpr uint64_t kSecret0 = 0xa0761d6478bd642fULL;
inline constexpr uint64_t kSecret1 = 0xe7037ed1a0b428dbULL;
inline constexpr uint64_t kSecret2 = 0x8ebc6af09c88c6e3ULL;
inline constexpr uint64_t kSecret3 = 0x589965cc75374cc3ULL;

// A 64x64->128-bit product folded back to 64 bits (wyhash's "mum").
inline uint64_t Mum(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

// Word pair `pair` of a record: both words keyed by their position, so that
// reordering words or pairs changes the sum.
inline uint64_t MumPair(uint64_t first, uint64_t second, uint64_t pair) {
  const uint64_t salt = pair * kSecret2;
  return Mum(first ^ (kSecret0 + salt), second ^ (kSecret1 + salt));
}

// Bytes in a fixed (big-endian) order, so the hash does not depend on the
// host's byte order; compilers turn this into one load and a byte swap.
inline uint64_t LoadBigEndian64(const unsigned char* p) {
  return (uint64_t{p[0]} << 56) | (uint64_t{p[1]} << 48) | (uint64_t{p[2]} << 40) | (uint64_t{p[3]} << 32) |
         (uint64_t{p[4]} << 24) | (uint64_t{p[5]} << 16) | (uint64_t{p[6]} << 8) | uint64_t{p[7]};
}

// A text's last word when fewer than eight bytes are left: `n` bytes in the
// same order, in the word's low end.
inline uint64_t LoadBigEndianShort(const unsigned char* p, size_t n) {
  uint64_t word = 0;
  for (size_t i = 0; i < n; ++i) word = (word << 8) | p[i];
  return word;
}

// The words after a record's fixed six, paired in order from pair 3.
class TailDigest {
 public:
  void Add(uint64_t word) {
    if (!has_pending_) {
      pending_ = word;
      has_pending_ = true;
      return;
    }
    sum_ += MumPair(pending_, word, pair_++);
    has_pending_ = false;
  }
  void AddBytes(std::string_view text) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    size_t at = 0;
    for (; at + 8 <= text.size(); at += 8) Add(LoadBigEndian64(bytes + at));
    if (at < text.size()) Add(LoadBigEndianShort(bytes + at, text.size() - at));
  }
  // An odd word out is paired with 0 (the header fixes the word count).
  uint64_t Finish() {
    if (has_pending_) Add(0);
    return sum_;
  }

 private:
  uint64_t sum_ = 0;
  uint64_t pending_ = 0;
  uint64_t pair_ = 3;
  bool has_pending_ = false;
};
}  // namespace trace_hash_internal

[[gnu::always_inline]] inline void TraceHasher::Add(const TraceRecord& r) {
  using namespace trace_hash_internal;
  ++records_;
  // One word says what follows: the kind, whether there is a payload and
  // how many of its fields are present, and the detail's length (so that
  // ("ab", "c") and ("a", "bc") differ).
  const uint64_t fields = r.payload == nullptr ? 0 : static_cast<uint64_t>(r.payload->size());
  const uint64_t header = (static_cast<uint64_t>(r.kind) << 56) | (uint64_t{r.payload != nullptr} << 55) |
                          (fields << 48) | (r.detail.size() & ((uint64_t{1} << 48) - 1));
  // The record's words are multiplied in pairs that do not depend on one
  // another, so they overlap in the pipeline; only one multiply per record
  // chains into the state. (Mixing word by word into the state made every
  // multiply wait for the previous one: a delivery cost 1.6x with hashing.)
  uint64_t sum = MumPair(static_cast<uint64_t>(r.time.ns()), (uint64_t{r.node.value()} << 32) | r.peer.value(), 0) +
                 MumPair(r.message_id, static_cast<uint64_t>(r.local_time.ns()), 1) +
                 MumPair(static_cast<uint64_t>(r.value), header, 2);
  if (r.detail.empty() && r.payload != nullptr) {
    // The common tail, a message or observation without text: its type and
    // fields, paired without TailDigest's bookkeeping.
    const Payload& payload = *r.payload;
    uint64_t words[Payload::kMaxFields + 2];
    int count = 0;
    words[count++] = payload.type() == nullptr ? 0 : payload.type()->id();
    for (int i = 0; i < payload.size(); ++i) words[count++] = static_cast<uint64_t>(payload.value(i));
    words[count] = 0;  // the odd word out's partner
    for (int at = 0; at < count; at += 2) sum += MumPair(words[at], words[at + 1], 3 + static_cast<uint64_t>(at / 2));
  } else if (r.payload == nullptr && !r.detail.empty()) {
    // Text alone (a storage key, a drop's reason): TailDigest's words,
    // paired here without its bookkeeping. Eight bytes per word, big-endian;
    // a last short word holds its bytes in the low end; an odd word out is
    // paired with 0.
    const auto* bytes = reinterpret_cast<const unsigned char*>(r.detail.data());
    const size_t n = r.detail.size();
    uint64_t pair = 3;
    size_t at = 0;
    for (; at + 16 <= n; at += 16) sum += MumPair(LoadBigEndian64(bytes + at), LoadBigEndian64(bytes + at + 8), pair++);
    if (n - at >= 8) {
      sum += MumPair(LoadBigEndian64(bytes + at), LoadBigEndianShort(bytes + at + 8, n - at - 8), pair);
    } else if (at < n) {
      sum += MumPair(LoadBigEndianShort(bytes + at, n - at), 0, pair);
    }
  } else if (r.payload != nullptr) {
    TailDigest tail;
    if (!r.detail.empty()) tail.AddBytes(r.detail);
    // The type by its name's FNV-1a (RecordType::id), the fields by value:
    // the names of a type's fields are fixed by the type.
    tail.Add(r.payload->type() == nullptr ? 0 : r.payload->type()->id());
    for (int i = 0; i < r.payload->size(); ++i) tail.Add(static_cast<uint64_t>(r.payload->value(i)));
    sum += tail.Finish();
  }
  hash_ = Mum(hash_ ^ kSecret0, sum ^ kSecret3);
  if ((records_ & checkpoint_mask_) == 0) [[unlikely]]
    Checkpoint();
}

std::string FormatTraceHash(uint64_t hash);  // "0x" + 16 hex digits
// The inverse of FormatTraceHash; nullopt for any other text.
std::optional<uint64_t> ParseTraceHash(std::string_view text);

// Appends `text` as a JSON string literal.
void AppendJsonString(std::string& out, std::string_view text);

// One record as a single JSON object (no trailing newline).
std::string TraceRecordToJson(const TraceRecord& record);

}  // namespace sim
