#include "tools/electsim/report.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "sim/trace.h"
#include "sim/format.h"
#include "tools/electsim/duration.h"

namespace electsim {

std::string FormatSummary(const Scenario& scenario, const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  std::string out;
  auto line = [&out](const std::string& text) {
    out += text;
    out += '\n';
  };
  line(fmt::format("scenario: {} ({})", scenario.name, scenario.source));
  if (!scenario.description.empty()) line(fmt::format("  {}", scenario.description));
  line(fmt::format("algorithm: {}, {} nodes, seed {}, simulated {}", scenario.algorithm->name(), scenario.nodes,
                   result.seed, sim::FormatDuration(result.end)));
  if (m.leaders_by_term.empty()) {
    line("leaders by term: none elected");
  } else {
    line("leaders by term:");
    for (const auto& [term, nodes] : m.leaders_by_term) {
      std::string names;
      for (sim::NodeId node : nodes) names += fmt::format("{}node {}", names.empty() ? "" : ", ", node.value());
      line(fmt::format("  term {}: {}{}", term, names, nodes.size() > 1 ? "   <-- more than one leader" : ""));
    }
  }
  // Terms begun without a leader are the cost of split votes and disruptions.
  line(fmt::format("terms: highest {}, {} of them with a leader", m.max_term, m.leaders_by_term.size()));
  if (!m.elections.empty()) line("elections:");
  for (size_t i = 0; i < m.elections.size(); ++i) {
    const checkers::Election& e = m.elections[i];
    std::string outcome;
    if (!e.elected) {
      outcome = "no leader elected before the run ended";
    } else {
      outcome = fmt::format("node {} (term {}) elected after {}", e.leader.value(), e.term,
                            sim::FormatMillis(*e.elected - e.started));
      outcome += e.known ? fmt::format(", known to all live nodes after {}", sim::FormatMillis(*e.known - e.started))
                         : ", never known to every live node";
    }
    line(fmt::format("  #{} {} at {}: {}", i + 1, e.cause, sim::FormatSeconds(e.started), outcome));
  }
  line(fmt::format("time with no leader: {}; with more than one leader: {}", sim::FormatMillis(m.no_leader_time),
                   sim::FormatMillis(m.multi_leader_time)));
  std::string by_type;
  for (const auto& [type, count] : m.messages_by_type) {
    by_type += fmt::format("{}{} {}", by_type.empty() ? "" : ", ", type, count);
  }
  line(fmt::format("messages: {} sent, {} delivered, {} dropped, {} duplicated{}", result.stats.messages_sent,
                   result.stats.messages_delivered, result.stats.messages_dropped, result.stats.messages_duplicated,
                   by_type.empty() ? "" : fmt::format(" ({})", by_type)));
  line(fmt::format("resource writes: {} sent, {} accepted, {} rejected as stale (fencing {}{})", m.writes_sent,
                   m.writes_accepted, m.writes_rejected, scenario.fencing ? "on" : "off",
                   scenario.exclusive_token ? ", exclusive tokens: a token's second writer is rejected too" : ""));
  for (const std::string& note : result.notes) line(fmt::format("note: {}", note));
  if (result.violations.empty()) {
    line("violations: none");
  } else {
    line("violations:");
    for (const auto& v : result.violations) line(fmt::format("  {}", checkers::DescribeViolation(v)));
  }
  if (result.met_expectations()) {
    line("expectations: met");
  } else {
    line("expectations: NOT met");
    for (const std::string& failure : result.failed_expectations) line(fmt::format("  {}", failure));
  }
  line(fmt::format("trace-hash: {}", sim::FormatTraceHash(result.trace_hash)));
  return out;
}

nlohmann::json MakeRepro(const Scenario& scenario, const RunResult& result, const std::string& repro_path) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : result.violations) {
    violations.push_back({{"checker", v.checker},
                          {"time_ns", v.time.ns()},
                          {"trace_index", v.trace_index},
                          {"message", checkers::DescribeViolation(v)}});
  }
  return {
      {"electsim_repro", 1},
      {"scenario_file", scenario.source},
      {"seed", result.seed},
      {"trace_hash", sim::FormatTraceHash(result.trace_hash)},
      {"trace_records", result.trace_records},
      {"violations", violations},
      {"replay", fmt::format("build/electsim replay {}", repro_path)},
      {"scenario", scenario.document},
  };
}

absl::StatusOr<Repro> ParseRepro(std::string_view text, const std::string& path) {
  auto document = ParseJsonText(text, path);
  if (!document.ok()) return document.status();
  const nlohmann::json& doc = *document;
  auto bad = [&](const std::string& where, const std::string& expected) {
    return absl::InvalidArgumentError(fmt::format("{}: at {}: expected {}", path, where, expected));
  };
  if (!doc.is_object()) return bad("/", "a repro object written by electsim run");
  if (!doc.contains("electsim_repro")) {
    return bad("/electsim_repro", "1 (this file is not a repro written by electsim run)");
  }
  if (doc["electsim_repro"] != 1) return bad("/electsim_repro", "1, the only repro format there is");
  static const std::set<std::string> kKeys = {"electsim_repro", "scenario_file", "seed", "trace_hash",
                                              "trace_records", "violations", "replay", "scenario"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!kKeys.count(it.key())) return bad("/" + it.key(), fmt::format("no key \"{}\" in a repro", it.key()));
  }
  for (const char* key : {"scenario_file", "seed", "trace_hash", "trace_records", "violations", "scenario"}) {
    if (!doc.contains(key)) return bad(fmt::format("/{}", key), "this key (every repro has it)");
  }
  Repro repro;
  if (!doc["seed"].is_number_unsigned()) return bad("/seed", "a non-negative integer");
  repro.seed = doc["seed"].get<uint64_t>();
  if (!doc["trace_records"].is_number_unsigned()) return bad("/trace_records", "a non-negative integer");
  repro.trace_records = doc["trace_records"].get<uint64_t>();
  const auto hash = doc["trace_hash"].is_string() ? sim::ParseTraceHash(doc["trace_hash"].get<std::string>())
                                                   : std::nullopt;
  if (!hash) return bad("/trace_hash", "\"0x\" and 16 lowercase hex digits, as run prints it");
  repro.trace_hash = *hash;
  if (!doc["scenario_file"].is_string()) return bad("/scenario_file", "the scenario's file path, a string");
  if (doc.contains("replay") && !doc["replay"].is_string()) return bad("/replay", "a command, a string");
  const nlohmann::json& violations = doc["violations"];
  if (!violations.is_array()) return bad("/violations", "an array of violations");
  for (size_t i = 0; i < violations.size(); ++i) {
    const nlohmann::json& v = violations[i];
    const std::string where = fmt::format("/violations/{}", i);
    if (!v.is_object() || !v.contains("checker") || !v["checker"].is_string()) {
      return bad(where, "an object with \"checker\", the name of the checker that fired");
    }
    repro.violations.push_back(v["checker"].get<std::string>());
  }
  std::sort(repro.violations.begin(), repro.violations.end());
  if (!doc["scenario"].is_object()) return bad("/scenario", "the scenario object");
  auto scenario = ParseScenarioJson(doc["scenario"], path, "/scenario");
  if (!scenario.ok()) return scenario.status();
  repro.scenario = std::move(*scenario);
  // Named as when it ran, so the summary reads the same.
  if (!doc["scenario"].contains("name")) {
    repro.scenario.name = ScenarioNameFromPath(doc["scenario_file"].get<std::string>());
  }
  return repro;
}

}  // namespace electsim
