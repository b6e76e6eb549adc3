// single_vote: within one term a node grants its vote to one candidate only.
// Granting it again to the same candidate is fine (a duplicated or retried
// request vote); granting it to a second candidate is how two leaders of one
// term become possible. Votes count from vote observations and from
// vote-grant messages on the wire (see vocab::MessageRoles), so a node that
// grants without reporting it is still caught.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class SingleVoteChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit SingleVoteChecker(const CheckerConfig& config)
      : node_count_(config.node_count), roles_(RolesOf(config)), latest_(config.node_count) {}

  std::string_view name() const override { return "single_vote"; }
  // Vote observations and vote grants on the wire.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve, sim::TraceKind::kSend}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kVote}; }
  sim::ObservationTypes message_types() const override { return RoleMessageTypes(roles_, false, true); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.payload == nullptr || r.node.value() >= node_count_) return;
    if (r.kind == sim::TraceKind::kObserve) {
      const sim::Observation& o = *r.payload;
      if (const auto vote = o.As<vocab::VoteGranted>()) Vote(r, vote->term, vote->candidate);
    } else if (r.kind == sim::TraceKind::kSend) {
      if (const auto term = roles_.GrantTerm(*r.payload)) Vote(r, *term, r.peer.value());
    }
  }

 private:
  void Vote(const sim::TraceRecord& r, int64_t term, int64_t candidate) {
    const int64_t first_candidate = FirstVote(r.node.value(), term, candidate);
    if (first_candidate == candidate) return;
    const sim::NodeId first(static_cast<uint32_t>(first_candidate));
    const sim::NodeId second(static_cast<uint32_t>(candidate));
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {r.node, first, second},
            .term = term,
            .message = fmt::format("node {} voted for both node {} and node {} in term {}{}", r.node.value(),
                                   first.value(), second.value(), term,
                                   r.kind == sim::TraceKind::kSend
                                       ? fmt::format(" (the second vote seen on the wire: {})", r.payload->type_name())
                                       : "")});
  }

  // The candidate `voter` voted for first in `term`, recording `candidate`
  // as that if it is the first.
  int64_t FirstVote(uint32_t voter, int64_t term, int64_t candidate) {
    TermVote& latest = latest_[voter];
    if (latest.term == term) return latest.candidate;
    if (latest.term < term) {
      if (latest.term != kNoTerm) earlier_.emplace(std::pair{voter, latest.term}, latest.candidate);
      latest = {term, candidate};
      return candidate;
    }
    return earlier_.try_emplace({voter, term}, candidate).first->second;
  }

  static constexpr int64_t kNoTerm = INT64_MIN;
  struct TermVote {
    int64_t term = kNoTerm;
    int64_t candidate = 0;
  };

  uint32_t node_count_;
  const vocab::MessageRoles& roles_;
  // Each voter's vote in the highest term it has voted in. Terms rise, and
  // every vote is seen twice (reported and on the wire), so nearly every
  // vote is settled here without a lookup.
  std::vector<TermVote> latest_;
  // (voter, term) -> the candidate it voted for first, for its other terms.
  // A B-tree: a run's votes fill a node or two, where std::map allocates one
  // node per vote.
  absl::btree_map<std::pair<uint32_t, int64_t>, int64_t> earlier_;
};

}  // namespace

std::unique_ptr<Checker> MakeSingleVoteChecker(const CheckerConfig& config) {
  return std::make_unique<SingleVoteChecker>(config);
}

}  // namespace checkers
