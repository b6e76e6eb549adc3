// The building blocks algorithms are written with: the timer idiom and the
// role and belief reports, driven by hand through a FakeContext.
#include <vector>

#include "algorithms/testing/fake_context.h"
#include "electsim/algorithms/leadership.h"
#include "electsim/algorithms/timer.h"
#include "gtest/gtest.h"

namespace algorithms {
namespace {

using testing::FakeContext;

TEST(Timer_Fired, OnlyTheLiveArmingFiresAndOnlyOnce) {
  FakeContext ctx(sim::NodeId(0));
  Timer timer(7);
  EXPECT_FALSE(timer.armed());
  timer.Arm(ctx, sim::TimeNs::Millis(10));
  const sim::TimerId first = *ctx.LiveTimer(7);
  timer.Arm(ctx, sim::TimeNs::Millis(20));  // re-arming cancels the first
  const sim::TimerId second = *ctx.LiveTimer(7);
  EXPECT_NE(first, second);
  EXPECT_EQ(ctx.cancelled.count(first.value()), 1u);
  EXPECT_FALSE(timer.Fired(first));  // a stale firing is not this timer's
  EXPECT_TRUE(timer.Fired(second));
  EXPECT_FALSE(timer.armed());
  EXPECT_FALSE(timer.Fired(second));  // fired once
  timer.Cancel(ctx);                  // nothing armed: nothing to cancel
  EXPECT_EQ(ctx.cancelled.count(second.value()), 0u);
}

std::vector<std::string> Observed(const FakeContext& ctx) {
  std::vector<std::string> out;
  for (const sim::Observation& o : ctx.observations) {
    std::string line(o.type_name());
    for (const sim::Field field : o.fields()) line += " " + std::string(field.key) + "=" + std::to_string(field.value);
    out.push_back(line);
  }
  return out;
}

TEST(LeadershipReport_Role, ReportsChangesAndEachNewTermOfACandidate) {
  FakeContext ctx(sim::NodeId(1));
  LeadershipReport report;
  report.Role(ctx, vocab::Role::kFollower, sim::Term(1));   // what the checkers assume at boot: nothing to say
  report.Role(ctx, vocab::Role::kCandidate, sim::Term(1));  // a change
  report.Role(ctx, vocab::Role::kCandidate, sim::Term(1));  // no news
  report.Role(ctx, vocab::Role::kCandidate, sim::Term(2));  // campaigns again, in a new term
  report.Leader(ctx, sim::Term(2), sim::FencingToken(2));   // always, with its token, believing itself
  report.Role(ctx, vocab::Role::kFollower, sim::Term(3));
  report.Role(ctx, vocab::Role::kFollower, sim::Term(4));  // a follower's term change is a term observation's job
  EXPECT_EQ(Observed(ctx),
            (std::vector<std::string>{"role role=1 term=1", "role role=1 term=2", "role role=2 term=2 token=2",
                                      "believe leader=1 term=2", "role role=0 term=3"}));
  EXPECT_EQ(report.role(), vocab::Role::kFollower);
}

TEST(LeadershipReport_Belief, ReportsWhenTheLeaderOrTheTermChanges) {
  FakeContext ctx(sim::NodeId(0));
  LeadershipReport report;
  report.Belief(ctx, sim::kNoNode, sim::Term(0));  // as assumed at boot
  report.Belief(ctx, sim::NodeId(2), sim::Term(1));
  report.Belief(ctx, sim::NodeId(2), sim::Term(1));
  report.Belief(ctx, sim::NodeId(2), sim::Term(2));
  report.Belief(ctx, sim::kNoNode, sim::Term(2));
  EXPECT_EQ(Observed(ctx), (std::vector<std::string>{"believe leader=2 term=1", "believe leader=2 term=2",
                                                     "believe leader=-1 term=2"}));
  EXPECT_EQ(report.believed_leader(), sim::kNoNode);
  EXPECT_EQ(report.belief_term(), sim::Term(2));
}

TEST(LeadershipReport_Boot, ReportsAFreshFollowerOutright) {
  FakeContext ctx(sim::NodeId(0));
  LeadershipReport report;
  report.Boot(ctx, sim::Term(5));
  EXPECT_EQ(Observed(ctx), (std::vector<std::string>{"role role=0 term=5", "believe leader=-1 term=5"}));
}

}  // namespace
}  // namespace algorithms
