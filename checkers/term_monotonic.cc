// term_monotonic: an election node's term never goes down. Only TermChange
// observations are checked: every algorithm reports its current term there,
// while a RoleChange's term may describe a role that a fresh process holds
// before it has caught up. A crash and restart keep the previous value:
// terms belong in stable storage, so a node that comes back with a lower
// term has forgotten a promise (a vote, a lease epoch) and that is a finding.
#include <optional>
#include <vector>

#include "algorithms/vocabulary.h"
#include "checkers/factories.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class TermMonotonicChecker final : public Checker {
 public:
  explicit TermMonotonicChecker(const CheckerConfig& config) : last_term_(config.node_count) {}

  std::string_view name() const override { return "term_monotonic"; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || r.node.value() >= last_term_.size()) {
      return;
    }
    const sim::Observation& o = *r.payload;
    if (!o.Is(vocab::kTermChange)) return;
    const int64_t term = o.Get(vocab::kFieldTerm);
    std::optional<int64_t>& last = last_term_[r.node.value()];
    if (last && term < *last) {
      Report({.time = r.time,
              .trace_index = r.index,
              .nodes = {r.node},
              .term = term,
              .message = fmt::format("node {}'s term went down from {} to {}", r.node.value(), *last, term)});
    }
    last = term;
  }

 private:
  // Last term each election node reported; untouched by crashes and restarts.
  std::vector<std::optional<int64_t>> last_term_;
};

}  // namespace

std::unique_ptr<Checker> MakeTermMonotonicChecker(const CheckerConfig& config) {
  return std::make_unique<TermMonotonicChecker>(config);
}

}  // namespace checkers
