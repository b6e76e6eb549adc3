#include "tools/electsim/export/metrics_csv.h"

#include "fmt/format.h"

namespace electsim {

std::string MetricsCsvHeader() {
  return "scenario,seed,verdict,violations,elections,cause,detection_ns,election_ns,known_ns,max_term,"
         "messages_sent,messages_election,messages_steady_state,messages_application,election_messages,election_bytes,"
         "bytes_election,bytes_steady_state\n";
}

// The election measured is the last episode that followed a fault (the
// first one, if no leader was ever lost): the one a fault study asks about.
std::string MetricsCsvRow(const Scenario& scenario, const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  const checkers::Election* measured = m.elections.empty() ? nullptr : &m.elections.back();
  auto since = [&](const std::optional<sim::TimeNs>& time) {
    return measured != nullptr && time ? std::to_string((*time - measured->started).ns()) : std::string();
  };
  std::string violations;
  for (const std::string& name : result.violated_checkers()) violations += (violations.empty() ? "" : ";") + name;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", scenario.name, result.seed,
                     result.met_expectations() ? "met" : "failed", violations, m.elections.size(),
                     measured != nullptr ? measured->cause : "", since(measured ? measured->detected : std::nullopt),
                     since(measured ? measured->elected : std::nullopt),
                     since(measured ? measured->known : std::nullopt), m.max_term, m.messages_sent, m.messages_election,
                     m.messages_steady_state, m.messages_application,
                     measured != nullptr ? measured->election_messages : 0,
                     measured != nullptr ? measured->election_bytes : 0, m.bytes_election, m.bytes_steady_state);
}

}  // namespace electsim
