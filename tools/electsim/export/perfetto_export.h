// `--trace-format perfetto`: the run as Chrome trace-event JSON, which
// Perfetto UI (ui.perfetto.dev) and chrome://tracing open. One track per
// simulated process; its role (follower, candidate, leader) or its fault
// (paused, crashed) as complete slices; each delivered message as a flow
// arrow from its send to its delivery; drops and faults as instant events;
// violations as red global instants. Written as the run goes: memory grows
// with the nodes and the messages in flight, not with the run's length.
#pragma once

#include <cstdint>
#include <memory>

#include "tools/electsim/export/trace_export.h"

namespace electsim {

std::unique_ptr<TraceExporter> MakePerfettoExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario,
                                                    uint64_t seed);

}  // namespace electsim
