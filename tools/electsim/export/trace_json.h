// The documented JSON Lines trace (docs/trace.md, scenarios/schema/
// trace.schema.json): a header line naming the format version and the
// cluster, then one line per trace record, with record kinds, roles and
// fault details as names. The JSON text is not what the trace hash covers
// (sim/trace.cc hashes the canonical fields), so its layout can grow
// without changing any hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/trace.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// Bumped when a field changes meaning or goes away; new optional fields keep it.
inline constexpr int kTraceVersion = 1;

// "node 3", "resource", "store": how exports label a simulated process.
std::string NodeLabel(const Scenario& scenario, uint32_t node);

// The first line: {"trace_version":1,"scenario":…,"seed":…,"nodes":[…]}.
std::string TraceHeaderJson(const Scenario& scenario, uint64_t seed);

// One record as a single JSON object (no trailing newline).
std::string TraceRecordToNamedJson(const sim::TraceRecord& record);

}  // namespace electsim
