// What Bully and Ring share, the two quorum-less algorithms: an epoch that
// serves as term and fencing token, kept in stable storage; a leader that
// heartbeats every node and does the leader work; followers that suspect it
// when it falls silent; and the transitions between those roles. Each
// algorithm adds how an election runs (Bully's challenges, Ring's hops) and
// dispatches its messages by role after handling the epoch, as etcd's Step
// handles the term first.
#pragma once

#include <cstdint>
#include <string_view>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/leadership.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms {

struct EpochElectionConfig {
  uint32_t node_count = 0;
  sim::NodeId resource;
  LeaderWorkConfig leader_work;
  sim::TimeNs heartbeat_interval_ns;
  sim::TimeNs heartbeat_timeout_ns;
};

class EpochElectionNode : public sim::Process {
 public:
  // LeaderWork's timers and the heartbeat here; the rest in OnElectionTimer.
  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) final;

 protected:
  enum class Role {
    // Follows the leader it believes in, or waits for one. Left for
    // kCandidate when that leader falls silent or an election reaches it.
    kFollower,
    // Runs or takes part in an election (Bully: its own challenge; Ring: a
    // participant of the round). Left for kLeader when it wins, for kFollower
    // when another node's leadership reaches it.
    kCandidate,
    // Leads epoch_.max(): heartbeats every node and does the leader work.
    // Left only on learning of a newer epoch or of a leader of the same
    // epoch that outranks it (BecomeFollower).
    kLeader,
  };

  // `algorithm` names its stable-storage keys (see DurableEpoch).
  EpochElectionNode(sim::NodeId self, std::string_view algorithm, EpochElectionConfig config)
      : self_(self), base_config_(config), epoch_(algorithm), work_(config.resource, config.leader_work) {}

  // The algorithm's own timers: every timer but the heartbeat and LeaderWork's.
  virtual void OnElectionTimer(sim::Context& ctx, sim::TimerId timer) = 0;
  // The leader's periodic message to every node.
  virtual sim::Message Heartbeat() const = 0;
  // A newer epoch has just been recorded: a new round begins.
  virtual void OnNewEpoch() {}
  // The node is about to become a follower (from any role).
  virtual void OnBecomeFollower(sim::Context& ctx) { (void)ctx; }

  // When the promise of who wins holds (vocabulary.h, declare.rank and
  // declare.rank_anytime).
  enum class RankPromise {
    kOnceStable,  // once the faults are over and the cluster has settled
    kAnytime,     // also whenever every live node believes in one leader
  };
  // States at boot what the checkers judge the algorithm's promises by:
  // this node's `rank` (the highest live rank wins, from when `promise`
  // says) and that it hears its leader while heartbeats arrive within
  // heartbeat_timeout.
  void DeclareAtBoot(sim::Context& ctx, int64_t rank, RankPromise promise);

  // Epoch handling, first for every message: a newer epoch is recorded and
  // a leader that learns of it no longer leads, whatever the message says.
  void ObserveEpoch(sim::Context& ctx, uint64_t epoch);
  // Records `epoch` as the highest seen (persisted before anything carries
  // it, and reported) and begins its round (OnNewEpoch).
  void RaiseEpoch(sim::Context& ctx, uint64_t epoch);

  // Follows `leader` (kNoNode: nobody known yet) at `epoch`, leaving
  // leadership if it had it, and listens for its heartbeats.
  void BecomeFollower(sim::Context& ctx, sim::NodeId leader, uint64_t epoch);
  // Takes the leader role for `epoch` (which must be epoch_.max()): reports
  // the claim and believes itself. StartLeading then begins the leader's duties.
  void ClaimLeadership(sim::Context& ctx, uint64_t epoch);
  // Heartbeats and the leader work, fenced by the epoch.
  void StartLeading(sim::Context& ctx, uint64_t epoch);
  // Follower or candidate; the leader role is taken by ClaimLeadership only.
  void SetRole(sim::Context& ctx, Role role);

  // Believes `leader` (kNoNode: nobody) leads `epoch`.
  void Believe(sim::Context& ctx, sim::NodeId leader, uint64_t epoch) { report_.Belief(ctx, leader, sim::Term(epoch)); }
  sim::NodeId believed_leader() const { return report_.believed_leader(); }
  uint64_t belief_epoch() const { return report_.belief_term().value(); }

  void Broadcast(sim::Context& ctx, const sim::Message& message);
  Role role() const { return role_; }
  // Our highest epoch, as messages carry it: a leader's own epoch equals it,
  // because a leader steps down the moment it sees a higher one.
  int64_t Epoch() const { return static_cast<int64_t>(epoch_.max()); }

  const sim::NodeId self_;
  const EpochElectionConfig base_config_;
  // Highest epoch seen anywhere, and this node's boots.
  DurableEpoch epoch_;
  // Reports the role and whom this node believes leads, in which epoch.
  LeadershipReport report_;
  // Follower: the leader has been silent too long (the algorithm may reuse
  // it for an election that takes too long).
  Timer silence_timer_;

 private:
  Role role_ = Role::kFollower;
  Timer heartbeat_timer_;  // leader: time to heartbeat
  LeaderWork work_;
};

}  // namespace algorithms
