// single_leader (off by default): at no instant do two or more election nodes
// hold the leader role. A crashed node holds no role; a paused node still
// believes it leads and so still counts. A node that sends a leader-only
// message (see vocab::MessageRoles) without having reported the leader role
// is taken to hold it until it reports a role again. Stronger than election_safety (the
// two leaders may have different terms): Raft does not promise it while the
// network is partitioned, so scenarios switch it on to demonstrate split brain.
//
// An instant is judged by the state after all of its records: two records at
// the same time (a claim and the step-down it races with) are not an overlap.
#include <optional>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class SingleLeaderChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit SingleLeaderChecker(const CheckerConfig& config)
      : roles_(RolesOf(config)), view_(config.node_count, &roles_) {}

  std::string_view name() const override { return "single_leader"; }

  // The records that can change the view. An instant is judged when the
  // next of these comes (or at the end): the state it ended in is the one
  // after the last of them, and the verdict names the instant's time, not
  // the time it was judged at. Read every record instead, it kept the timer
  // and storage records (most of a fuzz run's) on the simulator's slow path
  // only to see time move.
  sim::TraceKinds kinds() const override { return view_.kinds(); }
  sim::ObservationTypes observation_types() const override { return ClusterView::observation_types(); }
  sim::ObservationTypes message_types() const override { return view_.message_types(); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (violation()) return;
    if (r.time > now_) CloseInstant();
    now_ = r.time;
    if (!view_.Apply(r)) return;
    const bool several = view_.role_holder_count() >= 2;
    if (several && !overlap_since_index_) overlap_since_index_ = r.index;
    if (!several) overlap_since_index_.reset();
  }

  void Finish(sim::TimeNs) override {
    if (!violation()) CloseInstant();
  }

 private:
  void CloseInstant() {
    if (!overlap_since_index_) return;
    const std::vector<sim::NodeId> leaders = view_.RoleHolders();
    int64_t max_term = -1;
    std::string terms;
    std::vector<sim::NodeId> unreported;
    for (const sim::NodeId node : leaders) {
      const int64_t term = view_.node(node.value()).role_term;
      if (term > max_term) max_term = term;
      if (!terms.empty()) terms += ", ";
      terms += fmt::format("{}", term);
      if (view_.node(node.value()).leads_unreported) unreported.push_back(node);
    }
    if (!unreported.empty()) {
      terms += fmt::format("; {} never reported the role, only sent leader-only messages", NodesPhrase(unreported));
    }
    Report({.time = now_,
            .trace_index = *overlap_since_index_,
            .nodes = leaders,
            .term = max_term,
            .message = fmt::format("{} were {} in the leader role at once (terms {})", NodesPhrase(leaders),
                                   leaders.size() == 2 ? "both" : "all", terms)});
  }

  const vocab::MessageRoles& roles_;  // before view_, which points to it
  ClusterView view_;
  sim::TimeNs now_;
  // Record after which two or more nodes have held the role, if they still do.
  std::optional<uint64_t> overlap_since_index_;
};

}  // namespace

std::unique_ptr<Checker> MakeSingleLeaderChecker(const CheckerConfig& config) {
  return std::make_unique<SingleLeaderChecker>(config);
}

}  // namespace checkers
