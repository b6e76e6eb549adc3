// election_safety: at most one node leads any term (Raft's Election Safety
// property). Two kinds of evidence count, so that an algorithm cannot hide a
// second leader by not reporting it: a leader role change observation, and a
// leader-only message on the wire (see vocab::MessageRoles) with its term.
// The same node claiming the same term twice is not a violation: it may
// re-announce after a pause or a duplicated message.
#include <map>
#include <string>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class ElectionSafetyChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit ElectionSafetyChecker(const CheckerConfig& config)
      : node_count_(config.node_count), roles_(RolesOf(config)) {}

  std::string_view name() const override { return "election_safety"; }
  // Leader claims and leader-only messages.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve, sim::TraceKind::kSend}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kRoleChange}; }
  sim::ObservationTypes message_types() const override { return RoleMessageTypes(roles_, true, false); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.payload == nullptr || r.node.value() >= node_count_) return;
    if (r.kind == sim::TraceKind::kObserve) {
      const sim::Observation& o = *r.payload;
      const std::optional<vocab::RoleChanged> role = o.As<vocab::RoleChanged>();
      if (!role || role->role != static_cast<int64_t>(vocab::Role::kLeader)) return;
      Claim(r, role->term, "", o.size() > 2 ? role->token : -1);
    } else if (r.kind == sim::TraceKind::kSend) {
      if (const auto term = roles_.LeaderTerm(*r.payload)) Claim(r, *term, r.payload->type_name(), -1);
    }
  }

 private:
  // How a node claimed a term: `sent` is the leader-only message type, or
  // empty for a role change observation.
  struct Claimer {
    sim::NodeId node;
    std::string_view sent;  // a RecordType's name: static, outlives the run
  };

  static std::string How(const Claimer& claimer) {
    if (claimer.sent.empty()) return fmt::format("node {} claimed leadership", claimer.node.value());
    return fmt::format("node {} sent {}, which only a leader sends,", claimer.node.value(), claimer.sent);
  }

  void Claim(const sim::TraceRecord& r, int64_t term, std::string_view sent, int64_t token) {
    // A leader's every heartbeat claims its term again: the last term that
    // was found claimed by this node needs no lookup.
    if (term == last_term_ && r.node == last_claimer_) return;
    auto [it, inserted] = first_claimer_by_term_.try_emplace(term, Claimer{r.node, sent});
    if (inserted || it->second.node == r.node) {
      last_term_ = term;
      last_claimer_ = r.node;
      return;
    }
    const Claimer second{r.node, sent};
    const std::string message =
        it->second.sent.empty() && sent.empty()
            ? fmt::format("nodes {} and {} both claimed leadership of term {}", it->second.node.value(), r.node.value(),
                          term)
            : fmt::format("{} in term {}, and {} in the same term", How(it->second), term, How(second));
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {it->second.node, r.node},
            .term = term,
            .token = token,
            .message = message});
  }

  uint32_t node_count_;
  const vocab::MessageRoles& roles_;
  // The first node that claimed each term, and how.
  std::map<int64_t, Claimer> first_claimer_by_term_;
  // A term and the node first_claimer_by_term_ holds for it.
  int64_t last_term_ = -1;
  sim::NodeId last_claimer_ = sim::kNoNode;
};

}  // namespace

std::unique_ptr<Checker> MakeElectionSafetyChecker(const CheckerConfig& config) {
  return std::make_unique<ElectionSafetyChecker>(config);
}

}  // namespace checkers
