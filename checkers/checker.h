// Checkers are observers: they read the trace stream (observations plus the
// simulator's own records such as crashes) and never drive the run. Each one
// reports the first violation of its invariant with enough context to find
// it again in the trace.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"
#include "sim/trace.h"

namespace checkers {

struct Violation {
  std::string checker;
  sim::TimeNs time;
  uint64_t trace_index = 0;        // the record that exposed it
  std::vector<sim::NodeId> nodes;  // the nodes involved
  int64_t term = -1;               // term/epoch involved, -1 if none
  int64_t token = -1;              // fencing token involved, -1 if none
  std::string message;             // one readable sentence
  // The key it was judged for, when each key is judged on its own
  // (CheckerConfig::per_key); its message then starts "key K: ".
  std::optional<int64_t> key;
};

class ClusterView;

struct CheckerConfig {
  uint32_t node_count = 0;  // election nodes are 0..node_count-1
  // The algorithm's leader-only and vote-grant messages: the checkers read
  // them off the send records as evidence the observations cannot hide.
  // Null for none. Must outlive the checkers, which refer to it rather than
  // copy it: an algorithm's roles are static, and a run makes several checkers.
  const vocab::MessageRoles* message_roles = nullptr;
  // Liveness: once every fault has healed at `liveness_after`, a single
  // leader known to every live election node must exist by
  // `liveness_after + liveness_within`, and then stay that, the same leader,
  // for `liveness_stable_for` (unset: until the end of the run).
  sim::TimeNs liveness_after;
  sim::TimeNs liveness_within = sim::TimeNs::Seconds(5);
  std::optional<sim::TimeNs> liveness_stable_for;
  // Set when the faults end at a time known only as the run goes (a step
  // triggered by an event): the runner then calls OnFaultsOver, and
  // `liveness_after` is ignored.
  bool liveness_after_from_run = false;
  // A view (without message roles) to share with the run's other sinks
  // instead of keeping one more (see ClusterView::Apply); every sink sharing
  // it must read all of ClusterView's kinds and observation types. Null: a
  // checker keeps its own.
  ClusterView* cluster_view = nullptr;
  // The nodes report about many keys at once (vocab::KeyOf): the checker
  // judges each key on its own, as if each were a cluster with one leader
  // (checkers/per_key.cc).
  bool per_key = false;
};

// `config`'s message roles, or an empty set when it names none.
inline const vocab::MessageRoles& RolesOf(const CheckerConfig& config) {
  static const vocab::MessageRoles kNone;
  return config.message_roles == nullptr ? kNone : *config.message_roles;
}

class Checker : public sim::TraceSink {
 public:
  virtual std::string_view name() const = 0;
  // With CheckerConfig::liveness_after_from_run: the last fault step is over
  // at `at` (now). Called at most once, before Finish.
  virtual void OnFaultsOver(sim::TimeNs at) { (void)at; }
  // Called once after the last record, before Finish, with the number of
  // records in the trace: for a checker that reads only some of them and
  // names the last record of the run in a finding.
  virtual void OnTraceEnd(uint64_t record_count) { (void)record_count; }
  // Called once after the last record, with the run's end time.
  virtual void Finish(sim::TimeNs end) { (void)end; }
  const std::optional<Violation>& violation() const { return violation_; }
  // Makes this checker anew, as MakeChecker would with `config`, at the same
  // address: a simulator that routes records to it (Simulator::Reset) can
  // then run another seed without registering it again. `config` must be
  // the one it was made with but for liveness_after, which is all a
  // scenario's seeds change; its kinds and types then come out the same.
  virtual void Renew(const CheckerConfig& config) = 0;

 protected:
  // Keeps the first violation only.
  void Report(Violation violation) {
    if (!violation_) {
      violation.checker = std::string(name());
      violation_ = std::move(violation);
    }
  }

 private:
  std::optional<Violation> violation_;
};

// Checker::Renew for a checker made from its config alone: destroyed and
// made again in place, so that nothing of the run before survives.
template <typename Self>
void RenewInPlace(Self* self, const CheckerConfig& config) {
  std::destroy_at(self);
  std::construct_at(self, config);
}

struct CheckerInfo {
  std::string name;
  std::string summary;
  bool on_by_default;  // run when a scenario does not list its checkers
};

// Every checker, sorted by name.
const std::vector<CheckerInfo>& AllCheckers();
// NotFound for an unknown name.
absl::StatusOr<std::unique_ptr<Checker>> MakeChecker(std::string_view name, const CheckerConfig& config);

// One line: "election_safety at 1.234567s (trace #812): nodes 1 and 3 both
// claimed leadership of term 4".
std::string DescribeViolation(const Violation& violation);

}  // namespace checkers
