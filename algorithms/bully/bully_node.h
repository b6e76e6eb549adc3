// The Bully node (bully.h describes the algorithm). The reference node; its
// steps are virtual so that a mutant (bully_mutants.cc) can override one.
#pragma once

#include <cstdint>

#include "algorithms/bully/bully.h"
#include "algorithms/epoch_election.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/message.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms::bully {

// Which nodes start an election at time 0 (index into the option's choices).
enum class StartElection : int64_t { kAll = 0, kLowest = 1, kHighest = 2, kNone = 3 };

struct BullyConfig {
  EpochElectionConfig base;
  sim::TimeNs answer_timeout_ns;
  sim::TimeNs coordinator_timeout_ns;
  StartElection start_election = StartElection::kAll;
};

class BullyNode : public EpochElectionNode {
 public:
  BullyNode(sim::NodeId self, BullyConfig config) : EpochElectionNode(self, "bully", config.base), config_(config) {}

  void OnStart(sim::Context& ctx) override;
  // etcd's Step: the epoch first, then what every role does with a
  // challenge, then dispatch by role.
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;

 protected:
  // ---- steps a mutant may override ----

  // A follower heard a claim (coordinator or heartbeat) of the current epoch
  // from `claimant`, a lower id than ours: we outrank it, so we bully it.
  virtual void OnLowerClaimant(sim::Context& ctx, sim::NodeId claimant, uint64_t epoch);
  // Whether a candidate gives its running election up for `claimant`'s
  // claim of the current epoch: only a higher id beats it.
  virtual bool CandidateYieldsTo(sim::NodeId claimant) const { return claimant > self_; }
  // The epoch a new coordinator announces: one above any this node has seen.
  virtual uint64_t NextEpoch() const { return epoch_.max() + 1; }
  // Of two coordinators of one epoch (a healed partition), whether this one
  // gives the epoch up to `claimant`: the higher id keeps it.
  virtual bool LeaderYieldsTo(sim::NodeId claimant) const { return claimant > self_; }
  // A candidate challenges every id from its own + 1 up to (not including)
  // this one: every higher id in the cluster.
  virtual uint32_t ChallengedIdsEnd() const { return config_.base.node_count; }
  // A higher id answered this candidate but announced nothing in time: it
  // died mid-election, so the candidate runs its election again.
  virtual void OnCoordinatorOverdue(sim::Context& ctx);

  // ---- transitions ----

  // Starts (or restarts) this node's own election.
  void BecomeCandidate(sim::Context& ctx);
  // Announces a new epoch, one above any this node has seen.
  void BecomeLeader(sim::Context& ctx);

 private:
  // Where a candidate's election stands.
  enum class Phase {
    kAwaitingAnswers,      // challenged every higher id; silence means we win
    kAwaitingCoordinator,  // a higher id answered; it must announce in time
  };

  static bool IsClaim(const sim::Message& message) {
    return message.Is(kBullyCoordinator) || message.Is(kBullyHeartbeat);
  }

  void StepFollower(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch);
  void StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch);
  void StepLeader(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch);

  void OnElectionTimer(sim::Context& ctx, sim::TimerId timer) override;
  sim::Message Heartbeat() const override { return bully::Heartbeat{.epoch = Epoch()}; }
  void OnBecomeFollower(sim::Context& ctx) override { election_timer_.Cancel(ctx); }

  bool StartsAtBoot() const;

  const BullyConfig config_;
  Phase phase_ = Phase::kAwaitingAnswers;
  // Monotonic time before which this node may not announce itself (see
  // BecomeCandidate); stays 0 at the cluster's start.
  sim::TimeNs listen_until_ = sim::TimeNs(0);
  // Tells answers to this election from late answers to an earlier one, also
  // to one of an earlier incarnation (numbered from epoch_.id_base()).
  int64_t election_round_ = 0;
  Timer election_timer_;  // candidate: the answer or the announcement is overdue
};

}  // namespace algorithms::bully
