#include "electsim/algorithms/leadership.h"

#include "electsim/sim/check.h"

namespace algorithms {

void LeadershipReport::Role(sim::Context& ctx, vocab::Role role, sim::Term term) {
  SIM_CHECK(role != vocab::Role::kLeader, "the leader role is claimed with Leader, which names its token");
  const bool campaigns_again = role == vocab::Role::kCandidate && term != role_term_;
  if (role == role_ && !campaigns_again) return;
  role_ = role;
  role_term_ = term;
  ctx.Observe(vocab::RoleChange(role, term));
}

void LeadershipReport::Leader(sim::Context& ctx, sim::Term term, sim::FencingToken token) {
  role_ = vocab::Role::kLeader;
  role_term_ = term;
  ctx.Observe(vocab::BecameLeader(term, token));
  Belief(ctx, ctx.self(), term);
}

void LeadershipReport::Belief(sim::Context& ctx, sim::NodeId leader, sim::Term term) {
  if (leader == believed_leader_ && term == belief_term_) return;
  ReportBelief(ctx, leader, term);
}

void LeadershipReport::Boot(sim::Context& ctx, sim::Term term) {
  role_ = vocab::Role::kFollower;
  role_term_ = term;
  ctx.Observe(vocab::RoleChange(vocab::Role::kFollower, term));
  ReportBelief(ctx, sim::kNoNode, term);
}

void LeadershipReport::ReportBelief(sim::Context& ctx, sim::NodeId leader, sim::Term term) {
  believed_leader_ = leader;
  belief_term_ = term;
  ctx.Observe(vocab::Belief(leader, term));
}

}  // namespace algorithms
