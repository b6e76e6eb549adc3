// single_vote: within one term a node grants its vote to one candidate only.
// Granting it again to the same candidate is fine (a duplicated or retried
// request vote); granting it to a second candidate is how two leaders of one
// term become possible.
#include <map>
#include <utility>

#include "algorithms/vocabulary.h"
#include "checkers/factories.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class SingleVoteChecker final : public Checker {
 public:
  explicit SingleVoteChecker(const CheckerConfig& config) : node_count_(config.node_count) {}

  std::string_view name() const override { return "single_vote"; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || r.node.value() >= node_count_) return;
    const sim::Observation& o = *r.payload;
    if (!o.Is(vocab::kVote)) return;
    const int64_t term = o.Get(vocab::kFieldTerm);
    const int64_t candidate = o.Get(vocab::kFieldCandidate);
    auto [it, inserted] = vote_by_voter_term_.try_emplace({r.node.value(), term}, candidate);
    if (inserted || it->second == candidate) return;
    const sim::NodeId first(static_cast<uint32_t>(it->second));
    const sim::NodeId second(static_cast<uint32_t>(candidate));
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {r.node, first, second},
            .term = term,
            .message = fmt::format("node {} voted for both node {} and node {} in term {}", r.node.value(),
                                   first.value(), second.value(), term)});
  }

 private:
  uint32_t node_count_;
  // (voter, term) -> the candidate it voted for first.
  std::map<std::pair<uint32_t, int64_t>, int64_t> vote_by_voter_term_;
};

}  // namespace

std::unique_ptr<Checker> MakeSingleVoteChecker(const CheckerConfig& config) {
  return std::make_unique<SingleVoteChecker>(config);
}

}  // namespace checkers
