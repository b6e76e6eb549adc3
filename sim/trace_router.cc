#include "sim/trace_router.h"

namespace sim {

// Inline: the routes are scanned for every type a sink names and every cache miss.
[[gnu::always_inline]] inline size_t TypedSinks::RouteIndex(const RecordType& type) const {
  const uint64_t id = type.id();
  size_t i = 0;
  while (i < routes_.size() && !(routes_[i].type_id == id && *routes_[i].type == type)) ++i;
  return i;
}

void TypedSinks::Add(TraceSink* sink, const ObservationTypes& types, bool started) {
  // The routes change.
  if (started) sink_set_cache_ = {};
  const size_t index = sinks_.size();
  sinks_.push_back(sink);
  if (index >= 64) {
    offer_every_type_ = true;  // beyond the bit sets; correct, only slower
    return;
  }
  const uint64_t bit = uint64_t{1} << index;
  if (types.all()) {
    every_type_sinks_ |= bit;
    for (TypeRoute& route : routes_) route.sinks |= bit;
    return;
  }
  for (const RecordType* type : types.types()) {
    const size_t route = RouteIndex(*type);
    if (route == routes_.size()) routes_.push_back({type->id(), type, every_type_sinks_});
    routes_[route].sinks |= bit;
  }
}

uint64_t TypedSinks::CacheSinkSet(const RecordType* type, size_t pair) const {
  const size_t route = RouteIndex(*type);
  // The first slot of the pair while it is free; then the second, which a
  // third type of the pair takes over (the first keeps the earlier one).
  SinkSetCacheEntry& cached = sink_set_cache_[pair].type == nullptr ? sink_set_cache_[pair] : sink_set_cache_[pair + 1];
  cached = {type, route == routes_.size() ? every_type_sinks_ : routes_[route].sinks};
  return cached.sinks;
}

void TraceRouter::Add(TraceSink* sink, bool started) {
  const TraceKinds kinds = offer_every_record_ ? TraceKinds::All() : sink->kinds();
  if (!offer_every_record_ && sink->reads_instant_starts()) instant_sinks_.push_back(sink);
  const uint32_t other_kinds =
      kinds.mask() & ~TraceKinds{TraceKind::kObserve, TraceKind::kSend, TraceKind::kDeliver}.mask();
  for (uint32_t bits = other_kinds; bits != 0; bits &= bits - 1) sinks_by_kind_[std::countr_zero(bits)].push_back(sink);
  if (kinds.Has(TraceKind::kObserve)) observations_.Add(sink, sink->observation_types(), started);
  if (kinds.Has(TraceKind::kSend)) sends_.Add(sink, sink->message_types(), started);
  if (kinds.Has(TraceKind::kDeliver)) deliveries_.Add(sink, sink->message_types(), started);
}

void TraceRouter::TellInstantStart(const TraceRecord& first) const {
  for (TraceSink* sink : instant_sinks_) {
    if (first.time >= sink->instant_wake_at()) sink->OnInstantStart(first);
  }
}

}  // namespace sim
