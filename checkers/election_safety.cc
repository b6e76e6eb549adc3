// election_safety: at most one node claims leadership of any term (Raft's
// Election Safety property). The same node claiming the same term twice is
// not a violation: it may re-announce after a pause or a duplicated message.
#include <map>

#include "algorithms/vocabulary.h"
#include "checkers/factories.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class ElectionSafetyChecker final : public Checker {
 public:
  explicit ElectionSafetyChecker(const CheckerConfig& config) : node_count_(config.node_count) {}

  std::string_view name() const override { return "election_safety"; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || r.node.value() >= node_count_) return;
    const sim::Observation& o = *r.payload;
    if (!o.Is(vocab::kRoleChange) || o.Get(vocab::kFieldRole) != static_cast<int64_t>(vocab::Role::kLeader)) {
      return;
    }
    const int64_t term = o.Get(vocab::kFieldTerm, -1);
    auto [it, inserted] = first_claimer_by_term_.try_emplace(term, r.node);
    if (inserted || it->second == r.node) return;
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {it->second, r.node},
            .term = term,
            .token = o.Get(vocab::kFieldToken, -1),
            .message = fmt::format("nodes {} and {} both claimed leadership of term {}", it->second.value(),
                                   r.node.value(), term)});
  }

 private:
  uint32_t node_count_;
  // The first node that claimed each term.
  std::map<int64_t, sim::NodeId> first_claimer_by_term_;
};

}  // namespace

std::unique_ptr<Checker> MakeElectionSafetyChecker(const CheckerConfig& config) {
  return std::make_unique<ElectionSafetyChecker>(config);
}

}  // namespace checkers
