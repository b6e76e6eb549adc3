#include "tools/electsim/export/report.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/format.h"
#include "sim/trace.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {

namespace {

std::string After(const std::optional<sim::TimeNs>& at, sim::TimeNs from) {
  return at ? sim::FormatMillis(*at - from) : std::string("never");
}

// One line per fault step that hit the leader: the failover it set off.
std::string FormatFailovers(const RunResult& result) {
  if (result.failovers.empty()) return "";
  std::string out = "failovers (times from the fault):\n";
  for (const FailoverEpisode& e : result.failovers) {
    const bool cut = e.hit == FailoverEpisode::Hit::kCut;
    std::string line = fmt::format("  {} {} (node {}) at {}: detected after {}, ", e.step, e.HitName(), e.old_leader,
                                   sim::FormatSeconds(e.started), After(e.detected, e.started));
    line += e.known ? fmt::format("node {} known to {} after {}", e.new_leader,
                                  cut ? "the majority side" : "every live node", After(e.known, e.started))
                    : "no new leader known";
    if (e.old_leader_acting)
      line += fmt::format("; the old leader acted for {}", sim::FormatMillis(*e.old_leader_acting));
    if (e.undone) {
      line += fmt::format("; undone at {}, then one leader known to all after {}{}", sim::FormatSeconds(*e.undone),
                          After(e.settled, *e.undone), e.old_leader_back ? " (the old leader back)" : "");
    }
    out += line + "\n";
  }
  return out;
}

// "messages: N sent, ... (type count, ...)".
std::string FormatMessages(const RunResult& result) {
  std::string by_type;
  for (const auto& [type, count] : result.metrics.messages_by_type) {
    by_type += fmt::format("{}{} {}", by_type.empty() ? "" : ", ", type, count);
  }
  return fmt::format("messages: {} sent, {} delivered, {} dropped, {} duplicated{}", result.stats.messages_sent,
                     result.stats.messages_delivered, result.stats.messages_dropped, result.stats.messages_duplicated,
                     by_type.empty() ? "" : fmt::format(" ({})", by_type));
}

// What a run of many owners over one store did to the keys (shards).
std::string FormatKeys(const checkers::ShardMetrics& s) {
  std::string out;
  const auto line = [&](const std::string& text) { out += text + "\n"; };
  line(fmt::format("keys: {} of {} owned at the end ({} left without an owner); live replicas hold {} to {} each",
                   s.owned_at_end, s.keys, s.unowned_at_end, s.min_per_replica, s.max_per_replica));
  line(fmt::format("  ownership gaps: {} (p50 {}, p99 {}, max {}); keys moved: {}", s.ownership_gaps,
                   sim::FormatMillis(s.gap_p50), sim::FormatMillis(s.gap_p99), sim::FormatMillis(s.gap_max),
                   s.keys_moved));
  line(
      fmt::format("  store: peak {} requests/s (busiest 100ms); {} deletions and expiries woke {} watchers ({:.1f} "
                  "each)",
                  s.peak_store_requests_per_s, s.removals, s.removal_wakeups,
                  s.removals == 0 ? 0.0 : static_cast<double>(s.removal_wakeups) / static_cast<double>(s.removals)));
  return out;
}

// What --set changed, under the description (which is from before them,
// the file's or the generator's, unless a --set replaced it).
std::string SetsLine(const std::vector<std::string>& sets) {
  const bool described =
      std::any_of(sets.begin(), sets.end(), [](const std::string& set) { return set.starts_with("description="); });
  return fmt::format("  changed by --set {}{}", EscapeForTerminal(fmt::format("{}", fmt::join(sets, ", --set "))),
                     described ? "" : " (the description above is from before them)");
}

}  // namespace

std::string FormatSummary(const Scenario& scenario, const RunResult& result, Expectations expectations) {
  const checkers::RunMetrics& m = result.metrics;
  std::string out;
  auto line = [&out](const std::string& text) {
    out += text;
    out += '\n';
  };
  // The path and the description come from outside: no raw control characters.
  line(fmt::format("scenario: {} ({})", scenario.name, EscapeForTerminal(scenario.source)));
  if (!scenario.description.empty()) line(fmt::format("  {}", EscapeForTerminal(scenario.description)));
  if (!scenario.sets.empty()) line(SetsLine(scenario.sets));
  // A stop condition ends the run early: say so, rather than print a ragged duration.
  const bool stopped = scenario.stop_when_leader_known && result.end < scenario.duration;
  line(fmt::format(
      "algorithm: {}, {} nodes, seed {}, simulated {}", scenario.algorithm->name(), scenario.nodes, result.seed,
      stopped ? fmt::format("{} (stopped: the leader was known after the last fault)", sim::FormatSeconds(result.end))
              : sim::FormatDuration(result.end)));
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
  out += FormatFailovers(result);
  line(fmt::format("time with no leader: {}; with more than one leader: {}", sim::FormatMillis(m.no_leader_time),
                   sim::FormatMillis(m.multi_leader_time)));
  line(FormatMessages(result));
  line(fmt::format("resource writes: {} sent, {} accepted, {} rejected as stale (fencing {}{})", m.writes_sent,
                   m.writes_accepted, m.writes_rejected, scenario.fencing ? "on" : "off",
                   scenario.exclusive_token ? ", exclusive tokens: a token's second writer is rejected too" : ""));
  if (result.shards) out += FormatKeys(*result.shards);
  for (const std::string& note : result.notes) line(fmt::format("note: {}", note));
  if (result.violations.empty()) {
    line("violations: none");
  } else {
    line("violations:");
    for (const auto& v : result.violations) line(fmt::format("  {}", checkers::DescribeViolation(v)));
  }
  if (expectations == Expectations::kShown && result.met_expectations()) {
    line("expectations: met");
  } else if (expectations == Expectations::kShown) {
    line("expectations: NOT met");
    for (const std::string& failure : result.failed_expectations) line(fmt::format("  {}", failure));
  }
  line(fmt::format("trace-hash: {}", sim::FormatTraceHash(result.trace_hash)));
  return out;
}

}  // namespace electsim
