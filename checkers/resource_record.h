// The resource's own record of the writes it accepted: the evidence
// stale_token and unique_token judge, which no algorithm reports (the writer
// is the sender the network delivered the write from).
#pragma once

#include <cstdint>
#include <optional>

#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"
#include "sim/trace.h"

namespace checkers {

struct AcceptedWrite {
  uint32_t resource;  // the resource's node id, in case a scenario ever has several
  int64_t token;
  sim::NodeId writer;
};

inline std::optional<AcceptedWrite> AcceptedWriteOf(const sim::TraceRecord& r) {
  if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return std::nullopt;
  const std::optional<vocab::ResourceAccepted> accepted = r.payload->As<vocab::ResourceAccepted>();
  if (!accepted) return std::nullopt;
  return AcceptedWrite{r.node.value(), accepted->token, sim::NodeId(static_cast<uint32_t>(accepted->writer))};
}

}  // namespace checkers
