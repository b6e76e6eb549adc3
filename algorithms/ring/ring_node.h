// The Ring node (ring.h describes the algorithm). The reference node; its
// steps are virtual so that a mutant (ring_mutants.cc) can override one.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "algorithms/epoch_election.h"
#include "algorithms/ring/ring.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/message.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms::ring {

// Which nodes start an election at time 0 (index into the option's choices).
enum class StartElection : int64_t { kAll = 0, kLowest = 1, kNone = 2 };

struct RingConfig {
  EpochElectionConfig base;
  std::vector<int64_t> ids;  // election id of each ring position (resolved: never empty)
  sim::TimeNs ack_timeout_ns;
  int64_t ack_retries = 0;  // re-sends of an unacked hop before its successor is skipped
  // How long a participant waits for its round's result: (ack_retries + 1)
  // heartbeat timeouts. Each dead successor costs (ack_retries + 1) ack
  // timeouts to skip, so the round gets past as many of them (a partitioned
  // side can face several in a row) as it did with one try each.
  sim::TimeNs round_timeout_ns;
  StartElection start_election = StartElection::kAll;
};

// The roles (EpochElectionNode::Role) in Chang-Roberts' terms: a candidate is
// a participant of the current round, left when the round's ELECTED or a
// heartbeat of its epoch arrives or when its own id comes home; the leader
// won round epoch_.max() and is left only for a newer epoch or a larger id
// leading the same one.
class RingNode : public EpochElectionNode {
 public:
  RingNode(sim::NodeId self, RingConfig config)
      : EpochElectionNode(self, "ring", config.base), config_(std::move(config)), own_id_(config_.ids[self.value()]) {}

  void OnStart(sim::Context& ctx) override;
  // etcd's Step: the epoch first, then what every role does with the ring's
  // own bookkeeping (acks), then dispatch by role.
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;

 protected:
  // ---- steps a mutant may override ----

  // The silence timer fired: the leader fell silent, or the round this node
  // takes part in has had no result within round_timeout. Either way a new
  // round begins, with this node as initiator.
  virtual void OnSilence(sim::Context& ctx) { StartElection(ctx); }
  // The epoch of a round this node opens: one above any it has seen.
  virtual uint64_t NextRoundEpoch() const { return epoch_.max() + 1; }
  // A new round begins: the ids forwarded in the last one no longer count.
  virtual void ForgetForwardedIds() { forwarded_ids_.clear(); }
  // The id a node sends on when it joins a round with `incoming`, smaller
  // than its own: its own, the larger (Chang and Roberts).
  virtual int64_t IdSentOnJoining(int64_t incoming) const {
    (void)incoming;
    return own_id_;
  }

  // ---- state a mutant may read ----

  // Chang-Roberts' flag: this node has sent an id in round epoch_.max().
  bool participant() const { return participant_; }
  // Highest epoch whose leader is known.
  uint64_t decided_epoch() const { return decided_epoch_; }

  // ---- transitions ----

  // Opens a new round with this node as initiator.
  void StartElection(sim::Context& ctx);

 private:
  // A ring hop awaiting its ack.
  struct PendingHop {
    sim::Message message;
    sim::NodeId to;
    Timer ack_timer;
    int64_t resends_left = 0;  // before `to` is skipped as dead
  };

  // A follower or a participant: elections go round, a leader's word is taken.
  void StepElecting(sim::Context& ctx, const sim::Message& message, uint64_t epoch);
  // The leader's round is decided, so its elections are over (a newer round
  // would have made it a follower in ObserveEpoch); only another leader of
  // this epoch with a larger id takes over (Outranks).
  void StepLeader(sim::Context& ctx, const sim::Message& message, uint64_t epoch);

  void OnElectionTimer(sim::Context& ctx, sim::TimerId timer) override;
  sim::Message Heartbeat() const override;
  // Every new epoch opens a new round: the participant flag and the
  // forwarded ids belong to one round.
  void OnNewEpoch() override;

  bool StartsAtBoot() const;

  // Joins the current round (round epoch_.max()).
  void BecomeCandidate(sim::Context& ctx);
  void BecomeLeader(sim::Context& ctx, uint64_t epoch);

  // ---- message handlers ----

  // ELECTION(id) of round `epoch` arrived from the predecessor.
  void HandleElection(sim::Context& ctx, int64_t id, uint64_t epoch);
  // ELECTED naming `leader` for `epoch` arrived from the predecessor.
  void HandleElected(sim::Context& ctx, sim::NodeId leader, uint64_t epoch);
  void HandleHeartbeat(sim::Context& ctx, sim::NodeId leader, uint64_t epoch);
  void HandleAck(sim::Context& ctx, sim::NodeId from, int64_t seq);
  void HandleAckTimeout(sim::Context& ctx, int64_t seq);

  // Whether a ring message still matters: its epoch is current and, for an
  // ELECTION, that round's leader is not yet known.
  bool RoundOpen(const sim::Message& message) const;
  // Whether a claim by `leader` for `epoch` (>= epoch_.max()) beats what this
  // node holds. Two leaders of one epoch exist only after a partition; the
  // larger election id keeps it.
  bool Outranks(sim::NodeId leader, uint64_t epoch) const;
  // Sends `message` to the first successor not marked dead, awaiting its ack.
  void SendAround(sim::Context& ctx, sim::Message message);
  // Hops leave without their seq: SendAround numbers each one.
  sim::Message ElectionMessage(int64_t id, uint64_t epoch) const;
  sim::Message ElectedMessage(sim::NodeId leader) const;

  const RingConfig config_;
  const int64_t own_id_;
  // Highest epoch whose leader is known; its election messages are stale.
  uint64_t decided_epoch_ = 0;  // decided_epoch()
  bool participant_ = false;    // participant()
  // Ids larger than ours forwarded in round epoch_.max().
  std::vector<int64_t> forwarded_ids_;
  // The last ELECTED passed on, so a duplicate is not passed on again.
  std::pair<uint64_t, sim::NodeId> forwarded_elected_{0, sim::kNoNode};
  // Per ring position, the monotonic time until which it is skipped as dead.
  // (Only the ones marked: memory does not grow with the cluster.)
  std::map<uint32_t, sim::TimeNs> dead_until_;
  // Hops awaiting an ack, by sequence number. Numbers never repeat across
  // restarts (epoch_.id_base()): an ack sent to an earlier incarnation must
  // not be taken for one of ours.
  std::map<int64_t, PendingHop> pending_;
  int64_t last_seq_ = 0;
};

}  // namespace algorithms::ring
