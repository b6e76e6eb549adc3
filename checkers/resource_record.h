// The resource's own record of the writes it accepted: the evidence
// stale_token and unique_token judge, which no algorithm reports (the writer
// is the sender the network delivered the write from).
#pragma once

#include <cstdint>
#include <optional>

#include "algorithms/vocabulary.h"
#include "sim/trace.h"
#include "sim/types.h"

namespace checkers {

struct AcceptedWrite {
  uint32_t resource;  // the resource's node id, in case a scenario ever has several
  int64_t token;
  sim::NodeId writer;
};

inline std::optional<AcceptedWrite> AcceptedWriteOf(const sim::TraceRecord& r) {
  if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || !r.payload->Is(vocab::kResourceAccept)) {
    return std::nullopt;
  }
  return AcceptedWrite{r.node.value(), r.payload->Get(vocab::kFieldToken),
                       sim::NodeId(static_cast<uint32_t>(r.payload->Get(vocab::kFieldWriter)))};
}

}  // namespace checkers
