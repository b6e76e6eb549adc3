#include "tools/electsim/export/metrics_csv.h"

#include "fmt/format.h"

namespace electsim {
namespace {

std::string Since(const std::optional<sim::TimeNs>& time, std::optional<sim::TimeNs> from) {
  return time && from ? std::to_string((*time - *from).ns()) : std::string();
}

// The first failover a fault step set off (engine/failover.h), or empty cells.
std::string FailoverCells(const RunResult& result) {
  if (result.failovers.empty()) return ",,,,,,,";
  const FailoverEpisode& f = result.failovers.front();
  return fmt::format("{},{},{},{},{},{},{},{}", f.step, f.HitName(), Since(f.detected, f.started),
                     Since(f.elected, f.started), Since(f.known, f.started),
                     f.old_leader_acting ? std::to_string(f.old_leader_acting->ns()) : "", Since(f.settled, f.undone),
                     f.undone ? (f.old_leader_back ? "1" : "0") : "");
}

}  // namespace

std::string CsvQuoted(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string MetricsCsvHeader() {
  return "scenario,seed,verdict,violations,elections,cause,detection_ns,election_ns,known_ns,max_term,"
         "messages_sent,run_election_messages,run_steady_state_messages,run_application_messages,"
         "episode_election_messages,episode_election_bytes,run_election_bytes,run_steady_state_bytes,"
         "failover_step,failover_fault,failover_detection_ns,failover_election_ns,failover_known_ns,"
         "old_leader_acting_ns,settled_ns,old_leader_back\n";
}

// The election measured is the last episode (the first, if no leader was
// ever lost); the failover columns are those of the first fault step that
// hit the leader, timed from the fault.
std::string MetricsCsvRow(std::string_view label, const Scenario&, const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  const checkers::Election* measured = m.elections.empty() ? nullptr : &m.elections.back();
  auto since = [&](const std::optional<sim::TimeNs>& time) {
    return measured != nullptr ? Since(time, measured->started) : std::string();
  };
  std::string violations;
  for (const std::string& name : result.violated_checkers()) violations += (violations.empty() ? "" : ";") + name;
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", CsvQuoted(label), result.seed,
      result.met_expectations() ? "met" : "failed", violations, m.elections.size(),
      measured != nullptr ? measured->cause : "", since(measured ? measured->detected : std::nullopt),
      since(measured ? measured->elected : std::nullopt), since(measured ? measured->known : std::nullopt), m.max_term,
      m.messages_sent, m.messages_election, m.messages_steady_state, m.messages_application,
      measured != nullptr ? measured->election_messages : 0, measured != nullptr ? measured->election_bytes : 0,
      m.bytes_election, m.bytes_steady_state, FailoverCells(result));
}

}  // namespace electsim
