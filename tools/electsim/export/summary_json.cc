#include "tools/electsim/export/summary_json.h"

#include "fmt/format.h"
#include "sim/format.h"

namespace electsim {

using nlohmann::json;

namespace {

json OptionalNs(const std::optional<sim::TimeNs>& time) { return time ? json(time->ns()) : json(nullptr); }

json ElectionJson(const checkers::Election& e) {
  auto since_start = [&e](const std::optional<sim::TimeNs>& time) {
    return time ? json((*time - e.started).ns()) : json(nullptr);
  };
  return json{
      {"cause", e.cause},
      {"started_ns", e.started.ns()},
      {"detected_ns", OptionalNs(e.detected)},
      {"elected_ns", OptionalNs(e.elected)},
      {"known_ns", OptionalNs(e.known)},
      {"detection_latency_ns", since_start(e.detected)},
      {"election_latency_ns", since_start(e.elected)},
      {"known_latency_ns", since_start(e.known)},
      {"leader", e.leader == sim::kNoNode ? json(nullptr) : json(e.leader.value())},
      {"term", e.term},
      {"election_messages", e.election_messages},
      {"election_bytes", e.election_bytes},
  };
}

json FailoverJson(const FailoverEpisode& e) {
  auto since = [](const std::optional<sim::TimeNs>& time, std::optional<sim::TimeNs> from) {
    return time && from ? json((*time - *from).ns()) : json(nullptr);
  };
  return json{
      {"step", e.step},
      {"fault", e.HitName()},
      {"started_ns", e.started.ns()},
      {"old_leader", e.old_leader},
      {"new_leader", e.new_leader >= 0 ? json(e.new_leader) : json(nullptr)},
      {"detection_ns", since(e.detected, e.started)},
      {"election_ns", since(e.elected, e.started)},
      {"known_ns", since(e.known, e.started)},
      {"old_leader_acting_ns", e.old_leader_acting ? json(e.old_leader_acting->ns()) : json(nullptr)},
      {"undone_ns", OptionalNs(e.undone)},
      {"settled_ns", since(e.settled, e.undone)},
      {"old_leader_back", e.old_leader_back},
      {"election_messages", e.election_messages},
      {"election_bytes", e.election_bytes},
  };
}

// What a run of many owners over one store did to the keys (shards).
json KeysJson(const checkers::ShardMetrics& s) {
  return json{{"keys", s.keys},
              {"owned_at_end", s.owned_at_end},
              {"unowned_at_end", s.unowned_at_end},
              {"ownership_gaps", s.ownership_gaps},
              {"gap_p50_ns", s.gap_p50.ns()},
              {"gap_p99_ns", s.gap_p99.ns()},
              {"gap_max_ns", s.gap_max.ns()},
              {"keys_moved", s.keys_moved},
              {"min_per_replica", s.min_per_replica},
              {"max_per_replica", s.max_per_replica},
              {"peak_store_requests_per_s", s.peak_store_requests_per_s},
              {"removals", s.removals},
              {"removal_wakeups", s.removal_wakeups}};
}

}  // namespace

json SummaryJson(const Scenario& scenario, const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  json elections = json::array();
  for (const checkers::Election& e : m.elections) elections.push_back(ElectionJson(e));
  json failovers = json::array();
  for (const FailoverEpisode& e : result.failovers) failovers.push_back(FailoverJson(e));
  json violations = json::array();
  for (const checkers::Violation& v : result.violations) {
    json nodes = json::array();
    for (sim::NodeId node : v.nodes) nodes.push_back(node.value());
    violations.push_back(json{{"checker", v.checker},
                              {"time_ns", v.time.ns()},
                              {"trace_index", v.trace_index},
                              {"nodes", nodes},
                              {"term", v.term},
                              {"token", v.token},
                              {"message", v.message}});
  }
  json leaders_by_term = json::object();
  for (const auto& [term, nodes] : m.leaders_by_term) {
    json ids = json::array();
    for (sim::NodeId node : nodes) ids.push_back(node.value());
    leaders_by_term[std::to_string(term)] = ids;
  }
  json by_type = json::object();
  for (const auto& [type, count] : m.messages_by_type) by_type[type] = count;
  json summary{
      {"scenario", scenario.name},
      {"source", scenario.source},
      {"algorithm", scenario.algorithm->name()},
      {"nodes", scenario.nodes},
      {"seed", result.seed},
      {"end_ns", result.end.ns()},
      {"trace_hash", sim::FormatTraceHash(result.trace_hash)},
      {"trace_records", result.trace_records},
      {"expectations_met", result.met_expectations()},
      {"failed_expectations", result.failed_expectations},
      {"violations", violations},
      {"notes", result.notes},
      {"elections", elections},
      {"failovers", failovers},
      {"leaders_by_term", leaders_by_term},
      {"max_term", m.max_term},
      {"no_leader_ns", m.no_leader_time.ns()},
      {"multi_leader_ns", m.multi_leader_time.ns()},
      {"messages", json{{"sent", result.stats.messages_sent},
                        {"delivered", result.stats.messages_delivered},
                        {"dropped", result.stats.messages_dropped},
                        {"duplicated", result.stats.messages_duplicated},
                        {"election", m.messages_election},
                        {"steady_state", m.messages_steady_state},
                        {"application", m.messages_application},
                        {"election_bytes", m.bytes_election},
                        {"steady_state_bytes", m.bytes_steady_state},
                        {"by_type", by_type}}},
      {"writes", json{{"sent", m.writes_sent}, {"accepted", m.writes_accepted}, {"rejected", m.writes_rejected}}},
  };
  if (result.shards) summary["keys"] = KeysJson(*result.shards);
  return summary;
}

}  // namespace electsim
