// term_monotonic: an election node's term never goes down. Two kinds of
// evidence count: TermChange observations (every algorithm reports its
// current term there, while a RoleChange's term may describe a role that a
// fresh process holds before it has caught up), and the terms of the node's
// leader-only and vote-grant messages on the wire (see vocab::MessageRoles):
// a node acts in its current term, so acting in a term lower than one it has
// reported or acted in shows its term went down, reported or not. A crash
// and restart keep the previous value: terms belong in stable storage, so a
// node that comes back with a lower term has forgotten a promise (a vote, a
// lease epoch) and that is a finding.
#include <optional>
#include <string>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class TermMonotonicChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit TermMonotonicChecker(const CheckerConfig& config) : highest_(config.node_count), roles_(RolesOf(config)) {}

  std::string_view name() const override { return "term_monotonic"; }
  // Term observations and the terms of leader-only messages.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve, sim::TraceKind::kSend}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kTermChange}; }
  sim::ObservationTypes message_types() const override { return RoleMessageTypes(roles_, true, true); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.payload == nullptr || r.node.value() >= highest_.size()) return;
    if (r.kind == sim::TraceKind::kObserve) {
      if (const auto term = r.payload->As<vocab::TermChanged>()) See(r, term->term, nullptr);
    } else if (r.kind == sim::TraceKind::kSend) {
      std::optional<int64_t> term = roles_.LeaderTerm(*r.payload);
      if (!term) term = roles_.GrantTerm(*r.payload);
      if (term) See(r, *term, r.payload->type());
    }
  }

 private:
  // How a node showed a term: by reporting it (`sent` null) or by sending a
  // message of type `sent` (a static constant: the pointer outlives the run).
  struct Seen {
    int64_t term;
    const sim::RecordType* sent;
  };

  static std::string How(const sim::RecordType* sent) {
    return sent == nullptr ? "reported term" : fmt::format("sent {} of term", sent->name());
  }

  void See(const sim::TraceRecord& r, int64_t term, const sim::RecordType* sent) {
    std::optional<Seen>& highest = highest_[r.node.value()];
    if (highest && term < highest->term) {
      Report(
          {.time = r.time,
           .trace_index = r.index,
           .nodes = {r.node},
           .term = term,
           .message = highest->sent == nullptr && sent == nullptr
                          ? fmt::format("node {}'s term went down from {} to {}", r.node.value(), highest->term, term)
                          : fmt::format("node {}'s term went down: it {} {} after it {} {}", r.node.value(), How(sent),
                                        term, How(highest->sent), highest->term)});
    }
    if (!highest || term >= highest->term) highest = Seen{term, sent};
  }

  // Highest term each election node reported or acted in; untouched by
  // crashes and restarts.
  std::vector<std::optional<Seen>> highest_;
  const vocab::MessageRoles& roles_;
};

}  // namespace

std::unique_ptr<Checker> MakeTermMonotonicChecker(const CheckerConfig& config) {
  return std::make_unique<TermMonotonicChecker>(config);
}

}  // namespace checkers
