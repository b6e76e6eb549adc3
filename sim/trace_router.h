// The simulator's trace fan-out: which sinks see which records. Each sink
// declares the record kinds it reads (TraceSink::kinds), the observation
// and message types among them (TraceSink::observation_types, message_types)
// and whether it wants to be told where instants start; the router keeps,
// per kind and per type, the sinks to offer a record to, in the order they
// were added. Speed matters here (every record of a run passes through), so the
// routing is inline and allocates nothing per run.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "sim/trace.h"

namespace sim {

// Sinks of one record kind whose records carry a type (observations, and
// sends by message type), each reading the types it names: a record goes to
// a subset, a bit set over the sinks in the order added, so that they still
// see it in that order: the sinks that read every type, and those that name
// the record's type. Past 64 such sinks, every one is offered every record.
class TypedSinks {
 public:
  // `started`: records may have been routed already (the cache is then
  // cleared, since the routes change).
  void Add(TraceSink* sink, const ObservationTypes& types, bool started);
  void OfferEveryType() { offer_every_type_ = true; }
  bool empty() const { return sinks_.empty(); }

  // A record of `type` (null: untyped), to the sinks that read it.
  void Route(const TraceRecord& record, const RecordType* type) const {
    if (offer_every_type_) [[unlikely]] {
      for (TraceSink* sink : sinks_) sink->OnRecord(record);
      return;
    }
    for (uint64_t sinks = SinkSet(type); sinks != 0; sinks &= sinks - 1) {
      sinks_[static_cast<size_t>(std::countr_zero(sinks))]->OnRecord(record);
    }
  }
  // Whether some sink reads records of `type`.
  bool Reads(const RecordType* type) const { return offer_every_type_ || (!sinks_.empty() && SinkSet(type) != 0); }

 private:
  // Which of sinks_ read records of `type`, as a bit set.
  uint64_t SinkSet(const RecordType* type) const;
  // A cache miss of SinkSet: finds the answer and keeps it in the pair of
  // slots from `pair`.
  [[gnu::noinline]] uint64_t CacheSinkSet(const RecordType* type, size_t pair) const;
  // The position of `type`'s route in routes_, or its size.
  size_t RouteIndex(const RecordType& type) const;

  // Inline: a run adds about ten sinks, and a vector would cost allocations per run.
  absl::InlinedVector<TraceSink*, 12> sinks_;
  uint64_t every_type_sinks_ = 0;
  struct TypeRoute {
    uint64_t type_id;  // type->id(), here so that the scan reads one array
    const RecordType* type;
    uint64_t sinks;  // every_type_sinks_ included
  };
  // The types some sink names, searched in order: a run's dozen types cost
  // less to scan than to hash. Inline: no allocation per run.
  absl::InlinedVector<TypeRoute, 16> routes_;
  // SinkSet's answers by type object, in pairs of slots (two-way): an
  // algorithm observes and sends the same few constants over and over, and a
  // hit costs a pointer compare or two where the scan compares every route.
  // Direct-mapped, two of Raft's frequent types (role and log append) shared
  // a slot in the release build and evicted each other, ten misses a trial:
  // where a type lands is the linker's choice. Speed only: a miss scans, and
  // the answer is the same.
  struct SinkSetCacheEntry {
    const RecordType* type = nullptr;
    uint64_t sinks = 0;
  };
  static constexpr size_t kSinkSetCacheSize = 32;
  mutable std::array<SinkSetCacheEntry, kSinkSetCacheSize> sink_set_cache_{};
  bool offer_every_type_ = false;
};

class TraceRouter {
 public:
  // The sink sees the records it reads from now on, after the sinks added
  // before it. `started`: records may have been routed already.
  void Add(TraceSink* sink, bool started);
  // Every sink that reads observations is offered every one, and every sink
  // that reads sends or deliveries every one of those, whatever types it
  // declares: for the tests of those declarations.
  void OfferEveryObservation() {
    observations_.OfferEveryType();
    sends_.OfferEveryType();
    deliveries_.OfferEveryType();
  }
  // Before any sink is added: every sink is offered every record, whatever
  // kinds and types it declares, and none is told where instants start.
  void OfferEveryRecord() {
    OfferEveryObservation();
    offer_every_record_ = true;
  }

  // Whether some sink reads records of `kind`.
  bool HasReaders(TraceKind kind) const {
    if (kind == TraceKind::kObserve) return !observations_.empty();
    if (kind == TraceKind::kSend) return !sends_.empty();
    if (kind == TraceKind::kDeliver) return !deliveries_.empty();
    return !sinks_by_kind_[static_cast<size_t>(kind)].empty();
  }
  // A record that is not an observation, a send or a delivery, to the sinks that read its kind.
  void Route(const TraceRecord& record) const {
    for (TraceSink* sink : sinks_by_kind_[static_cast<size_t>(record.kind)]) sink->OnRecord(record);
  }
  // An observation of `type`, to the sinks that read it.
  void RouteObservation(const TraceRecord& record, const RecordType* type) const { observations_.Route(record, type); }
  // A send of a message of `type`, to the sinks that read it.
  void RouteSend(const TraceRecord& record, const RecordType* type) const { sends_.Route(record, type); }
  // A delivery of a message of `type`, to the sinks that read it.
  void RouteDelivery(const TraceRecord& record, const RecordType* type) const { deliveries_.Route(record, type); }
  // Whether some sink reads deliveries of messages of `type`.
  bool ReadsDelivery(const RecordType* type) const { return deliveries_.Reads(type); }
  bool ReadsInstantStarts() const { return !instant_sinks_.empty(); }
  // `first` begins a later instant.
  [[gnu::noinline]] void TellInstantStart(const TraceRecord& first) const;

 private:
  // Per record kind, the sinks that read it, in the order they were added.
  // Inline: a run adds about ten sinks, and a vector per kind would cost
  // dozens of allocations per run. Except kObserve, kSend and kDeliver
  // (Observe, SendFrom and DeliverMessage alone make those records): see
  // observations_, sends_ and deliveries_.
  std::array<absl::InlinedVector<TraceSink*, 12>, kTraceKindCount> sinks_by_kind_;
  TypedSinks observations_;  // by observation type
  TypedSinks sends_;         // by message type
  TypedSinks deliveries_;    // by message type
  bool offer_every_record_ = false;
  // The sinks told where instants start.
  absl::InlinedVector<TraceSink*, 2> instant_sinks_;
};

// Inline: observations and sends are frequent, and most hit the cache.
inline uint64_t TypedSinks::SinkSet(const RecordType* type) const {
  if (type == nullptr) return every_type_sinks_;
  // The type's address, spread over the pairs by a Fibonacci multiply
  // (constants sit a fixed stride apart, which a plain mask would fold).
  const size_t pair = ((reinterpret_cast<uintptr_t>(type) * 0x9e3779b97f4a7c15ULL) >> 60) * 2;
  static_assert(kSinkSetCacheSize == 32, "the shift above takes the top 4 bits: 16 pairs");
  const SinkSetCacheEntry* cached = &sink_set_cache_[pair];
  if (cached[0].type == type) return cached[0].sinks;
  if (cached[1].type == type) return cached[1].sinks;
  return CacheSinkSet(type, pair);
}

}  // namespace sim
