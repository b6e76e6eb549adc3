// libFuzzer target for the scenario loader. Any input must either be
// rejected with an InvalidArgument status or load; loaded scenarios are run
// for a short, bounded stretch so the runner's handling of odd but valid
// fault schedules is exercised too. Crashes, hangs and sanitizer reports are
// the findings.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = electsim::ParseScenario(text, "fuzz-input.json");
  if (!scenario.ok()) {
    if (scenario.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    if (scenario.status().message().find("fuzz-input.json") == std::string_view::npos) __builtin_trap();
    return 0;
  }
  // Keep each execution small: few nodes, at most 300ms of simulated time.
  if (scenario->nodes > 7) return 0;
  const sim::TimeNs limit = sim::TimeNs::Millis(300);
  if (scenario->duration > limit) scenario->duration = limit;
  (void)electsim::RunScenario(*scenario, 1);
  return 0;
}
