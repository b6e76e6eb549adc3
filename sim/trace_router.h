// The simulator's trace fan-out: which sinks see which records. Each sink
// declares the record kinds it reads (TraceSink::kinds), the observation
// types among them (TraceSink::observation_types) and whether it wants to
// be told where instants start; the router keeps, per kind and per
// observation type, the sinks to offer a record to, in the order they were
// added. Speed matters here (every record of a run passes through), so the
// routing is inline and allocates nothing per run.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "sim/trace.h"

namespace sim {

class TraceRouter {
 public:
  // The sink sees the records it reads from now on, after the sinks added
  // before it. `started`: records may have been routed already (the
  // observation cache is then cleared, since the routes change).
  void Add(TraceSink* sink, bool started);
  // Every sink that reads observations is offered every one, whatever types
  // it declares: for the tests of those declarations.
  void OfferEveryObservation() { offer_every_observation_ = true; }
  // Before any sink is added: every sink is offered every record, whatever
  // kinds and types it declares, and none is told where instants start.
  void OfferEveryRecord() {
    offer_every_observation_ = true;
    offer_every_record_ = true;
  }

  // Whether some sink reads records of `kind` (observations aside).
  bool HasReaders(TraceKind kind) const { return !sinks_by_kind_[static_cast<size_t>(kind)].empty(); }
  // A record that is not an observation, to the sinks that read its kind.
  void Route(const TraceRecord& record) const {
    for (TraceSink* sink : sinks_by_kind_[static_cast<size_t>(record.kind)]) sink->OnRecord(record);
  }
  // An observation of `type`, to the sinks that read it.
  void RouteObservation(const TraceRecord& record, const RecordType* type) const {
    if (offer_every_observation_) [[unlikely]] {
      for (TraceSink* sink : observation_sinks_) sink->OnRecord(record);
      return;
    }
    for (uint64_t sinks = ObservationSinkSet(type); sinks != 0; sinks &= sinks - 1) {
      observation_sinks_[static_cast<size_t>(std::countr_zero(sinks))]->OnRecord(record);
    }
  }
  bool ReadsInstantStarts() const { return !instant_sinks_.empty(); }
  // `first` begins a later instant.
  [[gnu::noinline]] void TellInstantStart(const TraceRecord& first) const;

 private:
  // Which of observation_sinks_ read observations of `type`, as a bit set.
  uint64_t ObservationSinkSet(const RecordType* type) const;
  // A cache miss of ObservationSinkSet: finds the answer and keeps it in `slot`.
  [[gnu::noinline]] uint64_t CacheSinkSet(const RecordType* type, size_t slot) const;
  // The position of `type`'s route in observation_routes_, or its size.
  size_t RouteIndex(const RecordType& type) const;

  // Per record kind, the sinks that read it, in the order they were added.
  // Inline: a run adds about ten sinks, and a vector per kind would cost
  // dozens of allocations per run.
  // Except kObserve (Observe alone makes those records): see observation_sinks_.
  std::array<absl::InlinedVector<TraceSink*, 12>, kTraceKindCount> sinks_by_kind_;
  // The sinks that read observations, in the order added. Each observation
  // goes to a subset, a bit set over this list (bit i: sink i), so that
  // they still see it in that order: the sinks that read every type, and
  // those that name the observation's type (observation_routes_). Past 64
  // such sinks, every one is offered every observation.
  absl::InlinedVector<TraceSink*, 12> observation_sinks_;
  uint64_t every_type_sinks_ = 0;
  struct ObservationRoute {
    uint64_t type_id;  // type->id(), here so that the scan reads one array
    const RecordType* type;
    uint64_t sinks;  // every_type_sinks_ included
  };
  // The types some sink names, searched in order: a run's dozen types cost
  // less to scan than to hash. Inline: no allocation per run.
  absl::InlinedVector<ObservationRoute, 16> observation_routes_;
  // ObservationSinkSet's answers by type object, direct-mapped: an
  // algorithm observes the same few constants over and over, and a hit costs
  // a pointer compare where the scan compares every route. Cleared when a
  // sink is added once the run has started (nothing fills it before). Speed
  // only: a miss scans, and the answer is the same.
  struct SinkSetCacheEntry {
    const RecordType* type = nullptr;
    uint64_t sinks = 0;
  };
  static constexpr size_t kSinkSetCacheSize = 16;
  mutable std::array<SinkSetCacheEntry, kSinkSetCacheSize> sink_set_cache_{};
  bool offer_every_observation_ = false;
  bool offer_every_record_ = false;
  // The sinks told where instants start.
  absl::InlinedVector<TraceSink*, 2> instant_sinks_;
};

// Inline: observations are frequent, and most hit the cache.
inline uint64_t TraceRouter::ObservationSinkSet(const RecordType* type) const {
  if (type == nullptr) return every_type_sinks_;
  // The type's address, spread over the slots by a Fibonacci multiply
  // (constants sit a fixed stride apart, which a plain mask would fold).
  const size_t slot = (reinterpret_cast<uintptr_t>(type) * 0x9e3779b97f4a7c15ULL) >> 60;
  static_assert(kSinkSetCacheSize == 16, "the shift above takes the top 4 bits");
  const SinkSetCacheEntry& cached = sink_set_cache_[slot];
  if (cached.type == type) return cached.sinks;
  return CacheSinkSet(type, slot);
}

}  // namespace sim
