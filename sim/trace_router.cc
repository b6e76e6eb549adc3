#include "sim/trace_router.h"

namespace sim {

// Inline: the routes are scanned for every type a sink names and every cache miss.
[[gnu::always_inline]] inline size_t TraceRouter::RouteIndex(const RecordType& type) const {
  const uint64_t id = type.id();
  size_t i = 0;
  while (i < observation_routes_.size() &&
         !(observation_routes_[i].type_id == id && *observation_routes_[i].type == type)) {
    ++i;
  }
  return i;
}

void TraceRouter::Add(TraceSink* sink, bool started) {
  // The routes change. Only observations fill the cache, and none come before Start.
  if (started) sink_set_cache_ = {};
  const TraceKinds kinds = offer_every_record_ ? TraceKinds::All() : sink->kinds();
  if (!offer_every_record_ && sink->reads_instant_starts()) instant_sinks_.push_back(sink);
  const uint32_t other_kinds = kinds.mask() & ~TraceKinds{TraceKind::kObserve}.mask();
  for (uint32_t bits = other_kinds; bits != 0; bits &= bits - 1) sinks_by_kind_[std::countr_zero(bits)].push_back(sink);
  if (!kinds.Has(TraceKind::kObserve)) return;
  const size_t index = observation_sinks_.size();
  observation_sinks_.push_back(sink);
  if (index >= 64) {
    offer_every_observation_ = true;  // beyond the bit sets; correct, only slower
    return;
  }
  const uint64_t bit = uint64_t{1} << index;
  const ObservationTypes types = sink->observation_types();
  if (types.all()) {
    every_type_sinks_ |= bit;
    for (ObservationRoute& route : observation_routes_) route.sinks |= bit;
    return;
  }
  for (const RecordType* type : types.types()) {
    const size_t route = RouteIndex(*type);
    if (route == observation_routes_.size()) observation_routes_.push_back({type->id(), type, every_type_sinks_});
    observation_routes_[route].sinks |= bit;
  }
}

void TraceRouter::TellInstantStart(const TraceRecord& first) const {
  for (TraceSink* sink : instant_sinks_) sink->OnInstantStart(first);
}

uint64_t TraceRouter::CacheSinkSet(const RecordType* type, size_t slot) const {
  const size_t route = RouteIndex(*type);
  SinkSetCacheEntry& cached = sink_set_cache_[slot];
  cached = {type, route == observation_routes_.size() ? every_type_sinks_ : observation_routes_[route].sinks};
  return cached.sinks;
}

}  // namespace sim
