// What the timeline exports share: each simulated process's state over time
// (its role, or paused, or crashed) as spans, and each message from its send
// to its delivery, followed record by record with memory for the nodes and
// the messages in flight only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace.h"

namespace electsim {

class TimelineTracker {
 public:
  struct Span {
    uint32_t node = 0;
    std::string_view state;  // "follower", "candidate", "leader", "paused", "crashed", "up" (a service)
    int64_t term = -1;       // the term of a role, -1 for none
    sim::TimeNs start;
    sim::TimeNs end;
  };
  struct Flow {
    uint64_t message_id = 0;
    uint32_t from = 0;
    uint32_t to = 0;
    std::string_view type;
    sim::TimeNs sent;
    sim::TimeNs delivered;
  };

  TimelineTracker(uint32_t total_nodes, uint32_t election_nodes, std::function<void(const Span&)> on_span,
                  std::function<void(const Flow&)> on_flow);

  void OnRecord(const sim::TraceRecord& record);
  // Closes every open span at `end`.
  void Finish(sim::TimeNs end);

 private:
  struct NodeState {
    std::string_view role;
    int64_t term = -1;
    bool paused = false;
    bool crashed = false;
    std::string_view shown;  // the state of the open span
    int64_t shown_term = -1;
    sim::TimeNs since;
  };
  struct InFlight {
    uint32_t from = 0;
    std::string_view type;
    sim::TimeNs sent;
    int copies = 1;  // deliveries or drops still to come
  };
  void Show(uint32_t node, sim::TimeNs now);

  std::vector<NodeState> nodes_;
  std::map<uint64_t, InFlight> in_flight_;  // by message id
  std::function<void(const Span&)> on_span_;
  std::function<void(const Flow&)> on_flow_;
};

}  // namespace electsim
