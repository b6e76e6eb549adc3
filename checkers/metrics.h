// What a run measured, rebuilt from the trace alone: each election's latency,
// leaders per term, message counts, time without a leader and time with more
// than one node believing itself leader.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/types.h"

namespace checkers {

struct Election {
  sim::TimeNs started;                // when the previous leader was lost (0 for the first)
  std::string cause;                  // "start", "leader crashed", "leader paused", "leader stepped down", ...
  std::optional<sim::TimeNs> elected; // first leader claim after `started`
  std::optional<sim::TimeNs> known;   // every live election node believes in that leader
  sim::NodeId leader = sim::kNoNode;
  int64_t term = -1;
};

struct RunMetrics {
  std::vector<Election> elections;
  std::map<int64_t, std::vector<sim::NodeId>> leaders_by_term;  // term -> nodes that claimed it, in order
  int64_t max_term = 0;
  uint64_t messages_sent = 0;                       // all sends, services included
  std::map<std::string, uint64_t> messages_by_type; // sends per message type
  sim::TimeNs no_leader_time;     // no live node in the leader role
  sim::TimeNs multi_leader_time;  // two or more nodes in the leader role at once
  uint64_t writes_sent = 0;
  uint64_t writes_accepted = 0;
  uint64_t writes_rejected = 0;
};

class MetricsCollector final : public sim::TraceSink {
 public:
  explicit MetricsCollector(uint32_t node_count);
  void OnRecord(const sim::TraceRecord& record) override;
  // Closes open intervals at `end`; call once.
  void Finish(sim::TimeNs end);
  const RunMetrics& metrics() const { return metrics_; }

 private:
  // Implementation state lives in metrics.cc's choice of members.
  struct State;
  std::shared_ptr<State> state_;
  RunMetrics metrics_;
};

}  // namespace checkers
