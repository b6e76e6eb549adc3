// committed_agreement: no two different entries are ever committed at the
// same log index (Raft's State Machine Safety: every node applies the same
// entry at each index). Reports of the same entry, from any node, agree.
#include <map>

#include "checkers/factories.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

class CommittedAgreementChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit CommittedAgreementChecker(const CheckerConfig& config) : node_count_(config.node_count) {}

  std::string_view name() const override { return "committed_agreement"; }
  // Commit observations.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kLogCommit}; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || r.node.value() >= node_count_) return;
    const sim::Observation& o = *r.payload;
    const std::optional<vocab::LogCommitted> committed = o.As<vocab::LogCommitted>();
    if (!committed) return;
    const int64_t index = committed->index;
    const First commit{.term = committed->term, .entry = committed->entry, .node = r.node, .time = r.time};
    auto [it, inserted] = first_by_index_.try_emplace(index, commit);
    if (inserted || it->second.entry == commit.entry) return;
    const First& first = it->second;
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {first.node, r.node},
            .term = commit.term,
            .message = fmt::format("two entries were committed at index {}: {:#x} (term {}, reported by node {} at {}) "
                                   "and {:#x} (term {}, reported by node {})",
                                   index, first.entry, first.term, first.node.value(), sim::FormatSeconds(first.time),
                                   commit.entry, commit.term, r.node.value())});
  }

 private:
  struct First {
    int64_t term;
    int64_t entry;
    sim::NodeId node;
    sim::TimeNs time;
  };
  uint32_t node_count_;
  // Index -> the first entry reported committed there.
  std::map<int64_t, First> first_by_index_;
};

}  // namespace

std::unique_ptr<Checker> MakeCommittedAgreementChecker(const CheckerConfig& config) {
  return std::make_unique<CommittedAgreementChecker>(config);
}

}  // namespace checkers
