// The one way an algorithm tells the checkers what it is: the role it has
// and the leader it believes in (the vocabulary's "role" and "believe"
// observations), each reported once per change. The checkers take a process
// that has just booted for a follower that believes in nobody, so reporting
// starts from there; an algorithm that wants that state in the trace anyway
// reports it with Boot.
#pragma once

#include "electsim/sim/process.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms {

class LeadershipReport {
 public:
  // Reports the follower or candidate role in `term` when the role differs
  // from the last one reported, and a candidate again for each new term it
  // campaigns in. The leader role is claimed with Leader.
  void Role(sim::Context& ctx, vocab::Role role, sim::Term term);
  // Claims the leader role in `term`, writing under `token`: always reported.
  // The node believes in itself from then on.
  void Leader(sim::Context& ctx, sim::Term term, sim::FencingToken token);
  // Reports whom the node believes leads in `term` (kNoNode: nobody) when
  // the leader or the term differs from the last belief reported.
  void Belief(sim::Context& ctx, sim::NodeId leader, sim::Term term);
  // Reports the state of a fresh process outright: a follower in `term` that
  // believes in nobody.
  void Boot(sim::Context& ctx, sim::Term term);

  vocab::Role role() const { return role_; }
  sim::Term role_term() const { return role_term_; }
  sim::NodeId believed_leader() const { return believed_leader_; }
  sim::Term belief_term() const { return belief_term_; }

 private:
  void ReportBelief(sim::Context& ctx, sim::NodeId leader, sim::Term term);

  vocab::Role role_ = vocab::Role::kFollower;
  sim::Term role_term_;
  sim::NodeId believed_leader_ = sim::kNoNode;
  sim::Term belief_term_;
};

}  // namespace algorithms
