// The checker registry and the one-line rendering of a violation.
#include <algorithm>

#include "absl/status/status.h"
#include "checkers/checker.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

using Factory = CheckerFactory;

struct Entry {
  CheckerInfo info;
  Factory factory;
};

// Sorted by name; AllCheckers() promises that order.
const std::vector<Entry>& Registry() {
  static const std::vector<Entry> entries = {
      {{"committed_agreement", "two different log entries are reported committed at the same index", true},
       &MakeCommittedAgreementChecker},
      {{"declared_winner",
        "once the cluster is stable, the leader is not the live node the algorithm promises (the highest declared "
        "rank)",
        false},
       &MakeDeclaredWinnerChecker},
      {{"disruption", "a node's term rises while a majority hears its leader (as the nodes declare hearing)", false},
       &MakeDisruptionChecker},
      {{"election_safety",
        "two distinct nodes lead the same term (by their observations or their leader-only messages)", true},
       &MakeElectionSafetyChecker},
      {{"leader_completeness", "a leader lacks an entry reported committed in an earlier term (at the same index)",
        true},
       &MakeLeaderCompletenessChecker},
      {{"lease_validity",
        "a lease holder claims leadership or decides a write outside the lease the store granted it, shortened by "
        "its declared margin",
        false},
       &MakeLeaseValidityChecker},
      {{"liveness", "a single leader known to every live node exists within the allowed time after faults heal", false},
       &MakeLivenessChecker},
      {{"owner_displaced",
        "a node's request deletes or overwrites a store key another node holds (an old owner's unconditional unlock)",
        true},
       &MakeOwnerDisplacedChecker},
      {{"single_leader", "two or more nodes hold the leader role at the same instant (split brain)", false},
       &MakeSingleLeaderChecker},
      {{"single_vote", "a node votes for two different candidates in the same term (observed or on the wire)", true},
       &MakeSingleVoteChecker},
      {{"stale_token", "the resource accepts a write with a token lower than one it already accepted", true},
       &MakeStaleTokenChecker},
      {{"term_monotonic", "a node's term goes down (terms are persisted across restarts)", true},
       &MakeTermMonotonicChecker},
      {{"unique_token", "the resource accepts writes from two different nodes under the same fencing token", true},
       &MakeUniqueTokenChecker},
  };
  return entries;
}

}  // namespace

const std::vector<CheckerInfo>& AllCheckers() {
  static const std::vector<CheckerInfo> infos = [] {
    std::vector<CheckerInfo> out;
    for (const Entry& entry : Registry()) out.push_back(entry.info);
    return out;
  }();
  return infos;
}

absl::StatusOr<std::unique_ptr<Checker>> MakeChecker(std::string_view name, const CheckerConfig& config) {
  for (const Entry& entry : Registry()) {
    if (entry.info.name != name) continue;
    if (config.per_key) return MakePerKeyChecker(entry.factory, config);
    return entry.factory(config);
  }
  std::string known;
  for (const Entry& entry : Registry()) {
    if (!known.empty()) known += ", ";
    known += entry.info.name;
  }
  return absl::NotFoundError(fmt::format("unknown checker \"{}\" (known: {})", name, known));
}

std::string DescribeViolation(const Violation& violation) {
  return fmt::format("{} at {} (trace #{}): {}", violation.checker, sim::FormatSeconds(violation.time),
                     violation.trace_index, violation.message);
}

}  // namespace checkers
