// liveness (off by default; a scenario's liveness block switches it on):
// once the faults have healed at `liveness_after`, by `liveness_after +
// liveness_within` there is an instant at which exactly one live election
// node holds the leader role and every other live node believes it leads.
//
// Live means up and not paused: a frozen node can neither lead nor learn,
// so it is left out on both sides (single_leader is the checker that cares
// about a paused node still believing it leads). The leader needs no belief
// record of itself; holding the role is its belief. An instant is judged by
// the state after all of its records, and that state holds until the next
// record's time.
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "sim/format.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class LivenessChecker final : public Checker {
 public:
  explicit LivenessChecker(const CheckerConfig& config)
      : view_(config.node_count),
        after_(config.liveness_after),
        deadline_(config.liveness_after + config.liveness_within) {}

  std::string_view name() const override { return "liveness"; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (settled_) return;
    if (r.time > now_) {
      // The state judged at now_ held over [now_, r.time).
      if (satisfied_ && now_ <= deadline_ && r.time > after_) {
        settled_ = true;
        return;
      }
      if (r.time > deadline_) {
        ReportMissedDeadline(r.index);
        return;
      }
    }
    now_ = r.time;
    last_index_ = r.index;
    if (view_.Apply(r)) satisfied_ = Satisfied();
  }

  void Finish(sim::TimeNs end) override {
    if (settled_) return;
    settled_ = true;
    // The last state holds over [now_, end], the end included.
    if (satisfied_ && now_ <= deadline_ && end >= after_ && end >= now_) return;
    if (end >= deadline_) {
      ReportMissedDeadline(last_index_);
      return;
    }
    Report({.time = end,
            .trace_index = last_index_,
            .nodes = Involved(),
            .term = LeaderTerm(),
            .message = fmt::format("the run ended at {}, before the liveness deadline {}, without a single leader "
                                   "known to every live node since {}; at the end {}",
                                   sim::FormatSeconds(end), sim::FormatSeconds(deadline_), sim::FormatSeconds(after_),
                                   DescribeState())});
  }

 private:
  bool Satisfied() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    return leaders.size() == 1 && view_.LiveNonBelievers(leaders[0].value()).empty();
  }

  // Called with the state that held at the deadline.
  void ReportMissedDeadline(uint64_t trace_index) {
    settled_ = true;
    Report({.time = deadline_,
            .trace_index = trace_index,
            .nodes = Involved(),
            .term = LeaderTerm(),
            .message = fmt::format("no single leader was known to every live node between {} and the deadline {}; "
                                   "at the deadline {}",
                                   sim::FormatSeconds(after_), sim::FormatSeconds(deadline_), DescribeState())});
  }

  // The leaders, then the live nodes that did not follow the only leader.
  std::vector<sim::NodeId> Involved() const {
    std::vector<sim::NodeId> nodes = view_.LiveLeaders();
    if (nodes.size() == 1) {
      for (const sim::NodeId node : view_.LiveNonBelievers(nodes[0].value())) nodes.push_back(node);
    }
    return nodes;
  }

  int64_t LeaderTerm() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    return leaders.size() == 1 ? view_.node(leaders[0].value()).role_term : -1;
  }

  std::string DescribeState() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    if (leaders.empty()) return "no live election node was in the leader role";
    if (leaders.size() > 1) {
      return fmt::format("{} were {} in the leader role", NodesPhrase(leaders), leaders.size() == 2 ? "both" : "all");
    }
    const std::vector<sim::NodeId> doubters = view_.LiveNonBelievers(leaders[0].value());
    if (doubters.empty()) return fmt::format("node {} led and every live node believed it", leaders[0].value());
    return fmt::format("{} did not believe node {} led", NodesPhrase(doubters), leaders[0].value());
  }

  ClusterView view_;
  sim::TimeNs after_;
  sim::TimeNs deadline_;
  // Time of the records being applied; the state before the first record holds from 0.
  sim::TimeNs now_;
  uint64_t last_index_ = 0;
  // Whether the current state (after the records so far) has a single known leader.
  bool satisfied_ = false;
  // Decided either way; later records change nothing.
  bool settled_ = false;
};

}  // namespace

std::unique_ptr<Checker> MakeLivenessChecker(const CheckerConfig& config) {
  return std::make_unique<LivenessChecker>(config);
}

}  // namespace checkers
