#include "algorithms/bully/bully_mutants.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "electsim/sim/check.h"

namespace algorithms::bully {
namespace {

// A follower that hears a lower id's coordinator or heartbeat of the current
// epoch follows it, as it would a higher one's, instead of bullying it.
class FollowLowerCoordinator final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  void OnLowerClaimant(sim::Context& ctx, sim::NodeId claimant, uint64_t epoch) override {
    BecomeFollower(ctx, claimant, epoch);
  }
};

// A candidate gives its election up for any claim of the current epoch,
// whoever makes it (the comparison with its own id left out).
class CandidateYieldsToLower final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  bool CandidateYieldsTo(sim::NodeId) const override { return true; }
};

// A new coordinator numbers its epoch from the leader it last believed in
// (after a restart: none, epoch 0), not from the highest epoch it has seen.
class NextEpochFromBelief final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  uint64_t NextEpoch() const override { return belief_epoch() + 1; }
};

// Of two coordinators of one epoch, the higher gives the epoch up to the
// lower: a comparison the wrong way round, met only after a partition heals.
class LeaderYieldsToLower final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  bool LeaderYieldsTo(sim::NodeId claimant) const override { return claimant < self_; }
};

// The challenge loop stops one short: the highest id is never challenged,
// so the next highest announces itself while the highest is alive.
class SkipTopId final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  uint32_t ChallengedIdsEnd() const override { return BullyNode::ChallengedIdsEnd() - 1; }
};

// A candidate that a higher id answered waits for its announcement for
// good, instead of running its election again when it does not come.
class WaitForeverForCoordinator final : public BullyNode {
 public:
  using BullyNode::BullyNode;

 protected:
  void OnCoordinatorOverdue(sim::Context&) override {}
};

using Table = algorithms::MutantTable<sim::Process, BullyConfig>;

// The one table: each mutant's name, description and fuzz flags, and its node.
const Table& TheTable() {
  static const Table table({
      {{"follow_lower_coordinator",
        "a follower follows a lower id's coordinator or heartbeat instead of challenging it", ""},
       &Table::Make<FollowLowerCoordinator>},
      {{"candidate_yields_to_lower",
        "a candidate abandons its election for any coordinator of the current epoch, a lower id's too", ""},
       &Table::Make<CandidateYieldsToLower>},
      {{"next_epoch_from_belief",
        "a new coordinator announces one above the epoch of the leader it last followed, not above the highest "
        "epoch it has seen",
        ""},
       &Table::Make<NextEpochFromBelief>},
      {{"leader_yields_to_lower", "of two coordinators of one epoch, the higher gives the epoch up to the lower", ""},
       &Table::Make<LeaderYieldsToLower>},
      {{"skip_top_id", "a candidate's challenges stop one short of the highest id, which it never asks", ""},
       &Table::Make<SkipTopId>},
      {{"wait_forever_for_coordinator",
        "a candidate that a higher id answered waits for its announcement for good, never running its election "
        "again",
        ""},
       &Table::Make<WaitForeverForCoordinator>},
  });
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, BullyConfig config) {
  return TheTable().Create<BullyNode>(bug, self, config);
}

}  // namespace algorithms::bully
