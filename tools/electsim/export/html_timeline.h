// `--trace-format html`: one self-contained HTML file (inline script and
// style, no network) showing the run as a timeline: a row per simulated
// process with its role or fault over time, messages as lines from send to
// delivery, faults marked, violations as red markers. The data is written as
// the run goes, as compact arrays; the page draws itself when opened, and
// says so in its title (headless Chromium's --dump-dom shows it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "tools/electsim/export/trace_export.h"

namespace electsim {

std::unique_ptr<TraceExporter> MakeHtmlTimelineExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario,
                                                        uint64_t seed);

// Runs `scenario` under `seed` and writes its HTML timeline to `path`
// (atomically; nothing is left on failure). For tools that want a timeline
// next to a repro file.
absl::Status WriteHtmlTimeline(const Scenario& scenario, uint64_t seed, const std::string& path);

}  // namespace electsim
