#include "algorithms/epoch_election.h"

#include "electsim/sim/check.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms {

void EpochElectionNode::OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) {
  if (work_.OnTimer(ctx, timer, [this] { return role_ == Role::kLeader; })) return;
  if (heartbeat_timer_.Fired(timer)) {
    Broadcast(ctx, Heartbeat());
    heartbeat_timer_.Arm(ctx, base_config_.heartbeat_interval_ns);
    return;
  }
  OnElectionTimer(ctx, timer);
}

void EpochElectionNode::DeclareAtBoot(sim::Context& ctx, int64_t rank, RankPromise promise) {
  ctx.Observe(promise == RankPromise::kAnytime ? vocab::RankAnytime(rank) : vocab::Rank(rank));
  ctx.Observe(vocab::Hearing(base_config_.heartbeat_timeout_ns, base_config_.heartbeat_timeout_ns));
}

void EpochElectionNode::ObserveEpoch(sim::Context& ctx, uint64_t epoch) {
  if (epoch <= epoch_.max()) return;
  RaiseEpoch(ctx, epoch);
  if (role_ == Role::kLeader) BecomeFollower(ctx, sim::kNoNode, epoch);
}

void EpochElectionNode::RaiseEpoch(sim::Context& ctx, uint64_t epoch) {
  epoch_.Raise(ctx, epoch);
  OnNewEpoch();
}

void EpochElectionNode::BecomeFollower(sim::Context& ctx, sim::NodeId leader, uint64_t epoch) {
  OnBecomeFollower(ctx);
  if (role_ == Role::kLeader) {
    work_.End(ctx);
    heartbeat_timer_.Cancel(ctx);
  }
  SetRole(ctx, Role::kFollower);
  Believe(ctx, leader, epoch);
  silence_timer_.Arm(ctx, base_config_.heartbeat_timeout_ns);
}

void EpochElectionNode::ClaimLeadership(sim::Context& ctx, uint64_t epoch) {
  SIM_CHECK(epoch == epoch_.max(), "a node leads the highest epoch it has seen");
  silence_timer_.Cancel(ctx);
  role_ = Role::kLeader;
  report_.Leader(ctx, sim::Term(epoch), sim::FencingToken(epoch));
}

void EpochElectionNode::StartLeading(sim::Context& ctx, uint64_t epoch) {
  heartbeat_timer_.Arm(ctx, base_config_.heartbeat_interval_ns);
  work_.Begin(ctx, sim::FencingToken(epoch));
}

void EpochElectionNode::SetRole(sim::Context& ctx, Role role) {
  SIM_CHECK(role != Role::kLeader, "the leader role is taken by ClaimLeadership");
  role_ = role;
  report_.Role(ctx, role == Role::kCandidate ? vocab::Role::kCandidate : vocab::Role::kFollower,
               sim::Term(epoch_.max()));
}

void EpochElectionNode::Broadcast(sim::Context& ctx, const sim::Message& message) {
  for (uint32_t node = 0; node < base_config_.node_count; ++node) {
    if (node != self_.value()) ctx.Send(sim::NodeId(node), message);
  }
}

}  // namespace algorithms
