// disruption (off by default): while a majority hears its leader, the
// cluster's term does not rise (Ongaro's thesis, section 9.6: a server cut
// off and back, or one that merely lost a few heartbeats, must not inflate
// the term and depose a leader the rest still follow; pre-vote and
// check-quorum are there to prevent it).
//
// "Hears" is what the node declares it to mean (vocab::kHearing, reported at
// boot), judged on the wire: node n hears leader L of term T at time t when
// L's leader-only messages (vocab::MessageRoles) of term T have been
// delivered to n less than `within` apart, the last less than `within` ago,
// since at least `over` before t, with no crash of n in between, and n's own
// term is not past T; and L has not crashed since it led T (messages it
// sent before it crashed may still arrive, but nobody hears a crashed
// leader, restarted or not: a restarted node leads only a later term). L itself counts while
// it holds the leader role of term T. A TermChange observation that raises a node's term above every
// term any node has reported, while L and the nodes hearing it make a
// majority of the election nodes, is a violation. A node catching up with a
// term another node already has is none: that term rose earlier, and was
// judged then. Times are real (global) times: a node whose clock drifts
// judges "within" on its own clock, so a checker that trusts the
// declaration can be wrong only under clock drift.
//
// A node that declares nothing is never counted, so an algorithm without a
// declaration (the lease, which has no leader-only messages to followers)
// is never judged.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

class DisruptionChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit DisruptionChecker(const CheckerConfig& config) : roles_(RolesOf(config)), nodes_(config.node_count) {}

  std::string_view name() const override { return "disruption"; }
  // Lifecycle, the leader's messages as they arrive, and the observations
  // of terms, roles and hearing.
  sim::TraceKinds kinds() const override {
    return {sim::TraceKind::kStart, sim::TraceKind::kCrash, sim::TraceKind::kDeliver, sim::TraceKind::kObserve};
  }
  sim::ObservationTypes observation_types() const override {
    return {&vocab::kTermChange, &vocab::kRoleChange, &vocab::kHearing};
  }
  sim::ObservationTypes message_types() const override { return RoleMessageTypes(roles_, true, false); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (violation() || r.node.value() >= nodes_.size()) return;
    Node& node = nodes_[r.node.value()];
    switch (r.kind) {
      case sim::TraceKind::kStart:
      case sim::TraceKind::kCrash:
        // A fresh process knows no leader; a crashed one holds no role.
        node.up = r.kind == sim::TraceKind::kStart;
        node.leads_term = -1;
        node.stretch.reset();
        if (r.kind == sim::TraceKind::kCrash) Crashed(r.node);
        return;
      case sim::TraceKind::kDeliver: Heard(r, node); return;
      case sim::TraceKind::kObserve: Observed(r, node); return;
      default: return;
    }
  }

 private:
  // An unbroken run of deliveries from one leader of one term.
  struct Stretch {
    sim::NodeId leader;
    int64_t term = 0;
    sim::TimeNs first;
    sim::TimeNs last;
  };
  struct Node {
    bool up = true;
    int64_t term = 0;
    int64_t leads_term = -1;  // the term it holds the leader role in, or -1
    // Its leader-only messages of terms up to this one were sent before a
    // crash: they no longer make anyone hear it.
    int64_t silenced_through_term = -1;
    std::optional<sim::TimeNs> within;
    sim::TimeNs over;
    std::optional<Stretch> stretch;
  };

  // Nobody hears `leader` any more as leader of a term up to the one it
  // had reached when it crashed.
  void Crashed(sim::NodeId leader) {
    Node& crashed = nodes_[leader.value()];
    crashed.silenced_through_term = crashed.term;
    for (Node& node : nodes_) {
      if (node.stretch && node.stretch->leader == leader) node.stretch.reset();
    }
  }

  void Heard(const sim::TraceRecord& r, Node& node) {
    if (r.payload == nullptr || !node.within || r.peer.value() >= nodes_.size()) return;
    const std::optional<int64_t> term = roles_.LeaderTerm(*r.payload);
    if (!term || *term <= nodes_[r.peer.value()].silenced_through_term) return;
    std::optional<Stretch>& stretch = node.stretch;
    if (stretch && stretch->leader == r.peer && stretch->term == *term && r.time - stretch->last < *node.within) {
      stretch->last = r.time;
    } else {
      stretch = Stretch{.leader = r.peer, .term = *term, .first = r.time, .last = r.time};
    }
  }

  void Observed(const sim::TraceRecord& r, Node& node) {
    const sim::Observation& o = *r.payload;
    if (const auto hearing = o.As<vocab::HearingDeclared>()) {
      node.within = sim::TimeNs(hearing->within);
      node.over = sim::TimeNs(hearing->over);
    } else if (const auto role = o.As<vocab::RoleChanged>()) {
      node.leads_term = role->role == static_cast<int64_t>(vocab::Role::kLeader) ? role->term : -1;
    } else if (const auto term = o.As<vocab::TermChanged>()) {
      if (term->term > highest_term_) Rose(r, term->term);
      highest_term_ = std::max(highest_term_, term->term);
      node.term = std::max(node.term, term->term);
    }
  }

  // Node `r.node`'s term rises to `term`, above any term reported so far:
  // judged against every leader some node hears.
  void Rose(const sim::TraceRecord& r, int64_t term) {
    std::map<std::pair<uint32_t, int64_t>, std::vector<sim::NodeId>> hearers;  // (leader, its term) -> nodes
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      const Node& node = nodes_[i];
      if (node.up && Hears(node, r.time))
        hearers[{node.stretch->leader.value(), node.stretch->term}].push_back(sim::NodeId(i));
    }
    const size_t majority = nodes_.size() / 2 + 1;
    for (auto& [key, nodes] : hearers) {
      const auto [leader, leader_term] = key;
      if (leader_term >= term) continue;
      const Node& l = nodes_[leader];
      if (!l.up) continue;  // its last messages may still arrive, but nobody hears a crashed leader
      const bool leads = l.leads_term == leader_term && l.term <= leader_term;
      if (nodes.size() + (leads ? 1 : 0) < majority) continue;
      std::vector<sim::NodeId> involved = {r.node};
      if (leads) involved.push_back(sim::NodeId(leader));
      Report({.time = r.time,
              .trace_index = r.index,
              .nodes = std::move(involved),
              .term = term,
              .message = fmt::format("node {} raised the cluster's term to {} while node {}, leader of term {}, was "
                                     "heard by a majority ({}{}: its "
                                     "leader-only messages arriving as each declares it hears a leader)",
                                     r.node.value(), term, leader, leader_term, NodesPhrase(nodes),
                                     leads ? ", and itself" : "")});
      return;
    }
  }

  // Whether `node` hears the leader of its stretch at `now`, as it declares.
  static bool Hears(const Node& node, sim::TimeNs now) {
    if (!node.stretch || !node.within || node.term > node.stretch->term) return false;
    return now - node.stretch->last < *node.within && now - node.stretch->first >= node.over;
  }

  const vocab::MessageRoles& roles_;
  std::vector<Node> nodes_;
  int64_t highest_term_ = 0;  // of any node, ever
};

}  // namespace

std::unique_ptr<Checker> MakeDisruptionChecker(const CheckerConfig& config) {
  return std::make_unique<DisruptionChecker>(config);
}

}  // namespace checkers
