// The checkers of what an algorithm declares about itself: disruption (how
// its nodes hear a leader), declared_winner (who wins) and lease_validity
// (a holder's margin), each on hand-built traces where it fires and where
// it must not.
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "checkers/tests/trace_builder.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

using sim::NodeId;
using sim::TimeNs;
using sim::TraceKind;
using trace_testing::Ms;
using trace_testing::RunChecker;
using trace_testing::TraceBuilder;

using trace_testing::Heartbeat;
using trace_testing::kTestRoles;

// ---- disruption ----

CheckerConfig HeartbeatNodes(uint32_t node_count) {
  return CheckerConfig{.node_count = node_count, .message_roles = &kTestRoles};
}

// Three nodes that hear a leader within 100ms, for 200ms; node 0 leads
// term 1 from 5ms, and node 1 is in term 1 from 10ms.
TraceBuilder LeaderOfTermOne() {
  TraceBuilder t;
  t.Boot(3);
  for (uint32_t node = 0; node < 3; ++node) t.Observe(Ms(0), node, vocab::Hearing(Ms(100), Ms(200)));
  t.Term(Ms(5), 0, 1);
  t.Lead(Ms(5), 0, 1);
  t.Term(Ms(10), 1, 1);
  return t;
}

// Node 0's heartbeats of term 1 reach `to` every 50ms in [from, until].
void Heartbeats(TraceBuilder& t, const std::vector<uint32_t>& to, TimeNs from, TimeNs until) {
  for (TimeNs at = from; at <= until; at += Ms(50)) {
    for (uint32_t node : to) t.Deliver(at, node, 0, Heartbeat(1));
  }
}

TEST(Disruption_Fires, ATermRisesWhileAMajorityHearsItsLeader) {
  TraceBuilder t = LeaderOfTermOne();
  Heartbeats(t, {1}, Ms(10), Ms(360));  // node 2 hears nothing: cut off
  const uint64_t bad = t.Term(Ms(400), 2, 2);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2), NodeId(0)}));
  EXPECT_EQ(v.term, 2);
  EXPECT_EQ(
      v.message,
      "node 2 raised the cluster's term to 2 while node 0, leader of term 1, was heard by a majority (node 1, and "
      "itself: its leader-only messages arriving as each declares it hears a leader)");
}

TEST(Disruption_Quiet, RisesOnceTheLeaderFellSilentOrToItsOwnTerm) {
  TraceBuilder t = LeaderOfTermOne();
  t.Term(Ms(10), 2, 1);
  Heartbeats(t, {1, 2}, Ms(10), Ms(260));
  t.Term(Ms(350), 2, 1);  // no rise: already there
  t.Term(Ms(360), 2, 2);  // 100ms after the last heartbeat: silent
  t.Term(Ms(361), 1, 2);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(Disruption_Quiet, TheLeaderCrashedThoughItsLastMessagesStillArrive) {
  TraceBuilder t = LeaderOfTermOne();
  t.Term(Ms(10), 2, 1);
  Heartbeats(t, {1, 2}, Ms(10), Ms(360));
  t.Event(Ms(370), TraceKind::kCrash, 0);
  t.Deliver(Ms(372), 1, 0, Heartbeat(1));  // sent before the crash
  t.Term(Ms(400), 2, 2);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

// A supervisor restarts the crashed leader at once: heartbeats it sent
// before the crash still arrive, and the restarted node, a follower that
// knows no leader, times out and raises the term. Nobody hears a leader.
TEST(Disruption_Quiet, TheLeaderRestartedAtOnceAndItsLastMessagesStillArrive) {
  TraceBuilder t = LeaderOfTermOne();
  t.Term(Ms(10), 2, 1);
  Heartbeats(t, {1, 2}, Ms(10), Ms(360));
  t.Event(Ms(370), TraceKind::kCrash, 0);
  t.Event(Ms(371), TraceKind::kStart, 0);
  t.Observe(Ms(371), 0, vocab::Hearing(Ms(100), Ms(200)));
  t.Deliver(Ms(375), 1, 0, Heartbeat(1));  // sent before the crash
  t.Deliver(Ms(375), 2, 0, Heartbeat(1));
  t.Term(Ms(400), 0, 2);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(Disruption_Quiet, CatchingUpWithATermAnotherNodeHas) {
  TraceBuilder t = LeaderOfTermOne();
  t.Term(Ms(10), 2, 3);  // node 2 got term 3 before anyone heard node 0
  Heartbeats(t, {1}, Ms(10), Ms(360));
  t.Term(Ms(400), 1, 3);  // node 1 hears of it: no new term
  t.Term(Ms(400), 0, 3);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(Disruption_Quiet, HeardForLessThanOverOrSinceARestart) {
  TraceBuilder t = LeaderOfTermOne();
  Heartbeats(t, {1}, Ms(10), Ms(110));
  t.Term(Ms(150), 2, 2);  // node 1 has heard node 0 for 140ms only
  Heartbeats(t, {1}, Ms(160), Ms(260));
  t.Event(Ms(300), TraceKind::kCrash, 1);
  t.Event(Ms(310), TraceKind::kStart, 1);
  t.Observe(Ms(310), 1, vocab::Hearing(Ms(100), Ms(200)));
  Heartbeats(t, {1}, Ms(310), Ms(360));
  t.Term(Ms(400), 2, 3);  // node 1 restarted at 310ms: heard for 50ms
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(Disruption_Quiet, NodesThatDeclareNoHearingAreNeverCounted) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(5), 0, 1);
  for (TimeNs at = Ms(10); at <= Ms(1000); at += Ms(50)) t.Deliver(at, 1, 0, Heartbeat(1));
  t.Term(Ms(500), 2, 2);
  auto checker = RunChecker("disruption", HeartbeatNodes(3), t, Ms(1000));
  EXPECT_FALSE(checker->violation());
}

// ---- declared_winner ----

CheckerConfig CalmFrom(uint32_t node_count, TimeNs faults_over) {
  return CheckerConfig{.node_count = node_count, .liveness_after = faults_over};
}

// Three nodes of ranks 10, 20, 30 (node 0, 1, 2), each stated by `rank`;
// `leader` leads term 1 from 100ms and every other node believes it.
TraceBuilder Ranked(uint32_t leader, sim::Observation (*rank)(int64_t) = vocab::Rank) {
  TraceBuilder t;
  t.Boot(3);
  for (uint32_t node = 0; node < 3; ++node) t.Observe(Ms(0), node, rank(10 * (node + 1)));
  t.Lead(Ms(100), leader, 1);
  for (uint32_t node = 0; node < 3; ++node) {
    if (node != leader) t.Believe(Ms(100), node, leader, 1);
  }
  return t;
}

TEST(DeclaredWinner_Fires, ALowerRankLeadsOnceStable) {
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(0)), Ranked(1), Ms(5000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(v.time, Ms(1100));
  EXPECT_EQ(v.message,
            "node 1 led, known to every live node, from 0.100000s to past 1.100000s, but live node 2 states a higher "
            "rank (30 against 20): the algorithm promises the highest");
}

TEST(DeclaredWinner_Fires, AtTheEndOfARunThatSettledOnTheWrongLeader) {
  TraceBuilder t = Ranked(1);
  t.Observe(Ms(2000), 0, vocab::Rank(10));  // a record after the stretch settled
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(3000)), t, Ms(4000));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->time, Ms(4000));
}

TEST(DeclaredWinner_Quiet, TheHighestLiveRankLeads) {
  TraceBuilder t = Ranked(2);
  // Node 2 crashes: node 1 is now the highest live rank.
  t.Event(Ms(3000), TraceKind::kCrash, 2);
  t.Lead(Ms(3200), 1, 2);
  t.Believe(Ms(3200), 0, 1, 2);
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(0)), t, Ms(6000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(DeclaredWinner_Quiet, WrongLeaderBeforeTheFaultsEndOrForLessThanASecond) {
  TraceBuilder t = Ranked(1);
  t.Follow(Ms(2500), 1, 2);  // faults end at 2s: node 1 led wrongly until 2.5s
  t.Lead(Ms(2500), 2, 2);
  t.Believe(Ms(2500), 0, 2, 2);
  t.Believe(Ms(2500), 1, 2, 2);
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(2000)), t, Ms(6000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

// As Ranked, with ranks that hold anytime (Bully's): no node follows a lower one.
TraceBuilder RankedAnytime(uint32_t leader) { return Ranked(leader, vocab::RankAnytime); }

TEST(DeclaredWinner_Fires, AnAnytimeRankIsJudgedWhileTheFaultsLast) {
  // The faults end at 10s; node 2 has followed node 1 for a second by 1.1s.
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(10000)), RankedAnytime(1), Ms(5000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(v.time, Ms(1100));
  EXPECT_EQ(v.message,
            "node 1 led, known to every live node, from 0.100000s to past 1.100000s, but live node 2 states a higher "
            "rank (30 against 20) and never follows a lower one: the algorithm promises the highest");
}

// Told of the instant start it needs, not of every one: the stretch is
// judged at the first record after its second is up, of any kind.
TEST(DeclaredWinner_Fires, JudgedAtTheFirstRecordOnceTheSecondIsUp) {
  // Anytime ranks are judged while the faults last, plain ones a second
  // after they end: at 0, or at 3s.
  struct Case {
    bool anytime;
    TimeNs faults_over;
    TimeNs judged_at;
  };
  for (const Case c :
       {Case{true, Ms(10000), Ms(1100)}, Case{false, Ms(0), Ms(1100)}, Case{false, Ms(3000), Ms(4000)}}) {
    TraceBuilder t = c.anytime ? RankedAnytime(1) : Ranked(1);
    for (const TimeNs before : {Ms(900), c.judged_at - Ms(100)}) t.Event(before, TraceKind::kTimerFire, 0);
    const uint64_t first_after = t.Event(c.judged_at + Ms(50), TraceKind::kTimerFire, 0);
    t.Event(c.judged_at + Ms(200), TraceKind::kTimerFire, 0);
    auto checker = RunChecker("declared_winner", CalmFrom(3, c.faults_over), t, Ms(5000));
    ASSERT_TRUE(checker->violation()) << c.judged_at.ns();
    EXPECT_EQ(checker->violation()->trace_index, first_after) << c.judged_at.ns();
    EXPECT_EQ(checker->violation()->time, c.judged_at) << c.judged_at.ns();
  }
}

TEST(DeclaredWinner_Quiet, AnAnytimeRankFollowsALowerLeaderForLessThanASecond) {
  TraceBuilder t = RankedAnytime(1);
  t.Follow(Ms(900), 1, 2);  // node 2 takes over before the second is up
  t.Lead(Ms(900), 2, 2);
  t.Believe(Ms(900), 0, 2, 2);
  t.Believe(Ms(900), 1, 2, 2);
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(10000)), t, Ms(5000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(DeclaredWinner_Quiet, WhileTheFaultsLastOnlyAnytimeRanksAreJudged) {
  // Node 0 states an anytime rank, nodes 1 and 2 plain ones: node 1 leading
  // over node 2 before the faults end breaks no promise node 2 made.
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(0), 0, vocab::RankAnytime(10));
  t.Observe(Ms(0), 1, vocab::Rank(20));
  t.Observe(Ms(0), 2, vocab::Rank(30));
  t.Lead(Ms(100), 1, 1);
  t.Believe(Ms(100), 0, 1, 1);
  t.Believe(Ms(100), 2, 1, 1);
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(10000)), t, Ms(5000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(DeclaredWinner_Quiet, NoRanksNoJudgement) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Believe(Ms(100), 1, 0, 1);
  t.Believe(Ms(100), 2, 0, 1);
  auto checker = RunChecker("declared_winner", CalmFrom(3, Ms(0)), t, Ms(5000));
  EXPECT_FALSE(checker->violation());
}

// ---- lease_validity ----

constexpr uint32_t kStore = 4;  // nodes 0..2 hold leases, 3 is the resource

// Node 0 (margin 0.75) sends request 7 at 10ms; the store grants it lease 5
// for 1s at 12ms; node 0 claims it at 14ms.
TraceBuilder Granted() {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(0), 0, vocab::LeaseMargin(750000));
  t.Observe(Ms(10), 0, vocab::LeaseRequest(7));
  t.Observe(Ms(12), kStore, vocab::LeaseGrant(5, 0, 7, Ms(1000)));
  t.Lead(Ms(14), 0, 5);
  return t;
}

TEST(LeaseValidity_Fires, ADecisionPastTheMarginOnTheHoldersClock) {
  TraceBuilder t = Granted();
  t.Observe(Ms(700), 0, vocab::WriteBegun{.token = 5});
  const uint64_t bad = t.Observe(Ms(760), 0, vocab::WriteBegun{.token = 5});
  auto checker = RunChecker("lease_validity", CalmFrom(3, Ms(0)), t, Ms(1000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.token, 5);
  EXPECT_EQ(v.message,
            "node 0 decided to write under lease 5, but 750ms on its own clock after sending the last request the "
            "store granted, and its margin allows 750ms");
}

TEST(LeaseValidity_Fires, AClaimTheStoreNeverGranted) {
  TraceBuilder t = Granted();
  t.Lead(Ms(20), 1, 5);  // node 1 declares no margin yet: not judged
  t.Observe(Ms(25), 1, vocab::LeaseMargin(750000));
  t.Lead(Ms(30), 1, 5);
  auto checker = RunChecker("lease_validity", CalmFrom(3, Ms(0)), t, Ms(1000));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->message, "node 1 claimed under lease 5, but the store never granted it lease 5");
}

TEST(LeaseValidity_Fires, ADecisionAfterTheStoreEndedTheLease) {
  TraceBuilder t = Granted();
  t.Observe(Ms(300), kStore, vocab::LeaseEnd(5, 0));
  t.Observe(Ms(310), 0, vocab::WriteBegun{.token = 5});
  auto checker = RunChecker("lease_validity", CalmFrom(3, Ms(0)), t, Ms(1000));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->message,
            "node 0 decided to write under lease 5, but the store ended that lease at "
            "0.300000s");
}

TEST(LeaseValidity_Quiet, RenewedInTimeOnASlowClockAndUndeclaredNodes) {
  TraceBuilder t = Granted();
  t.Observe(Ms(500), 0, vocab::LeaseRequest(8));
  t.Observe(Ms(503), 0, vocab::LeaseRequest(9));  // never granted
  t.Observe(Ms(505), kStore, vocab::LeaseGrant(5, 0, 8, Ms(1000)));
  // Node 0's clock runs 25% slow from 500ms: 1160ms real is 1120ms local,
  // 620ms after request 8 left.
  t.ObserveAt(Ms(1160), Ms(1120), 0, vocab::WriteBegun{.token = 5});
  // A node that declares no margin is not judged.
  t.Lead(Ms(1200), 2, 9);
  auto checker = RunChecker("lease_validity", CalmFrom(3, Ms(0)), t, Ms(2000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

TEST(LeaseValidity_Quiet, ARestartedHolderIsJudgedOnItsNewGrant) {
  TraceBuilder t = Granted();
  t.Event(Ms(100), TraceKind::kCrash, 0);
  t.Event(Ms(200), TraceKind::kStart, 0);
  t.Observe(Ms(200), 0, vocab::LeaseMargin(750000));
  // Request 7 granted again, a duplicate for the old process: no clock to
  // measure it on, so lease 5 is still judged from request 20.
  t.Observe(Ms(205), kStore, vocab::LeaseGrant(5, 0, 7, Ms(1000)));
  t.Observe(Ms(210), 0, vocab::LeaseRequest(20));
  t.Observe(Ms(215), kStore, vocab::LeaseGrant(5, 0, 20, Ms(1000)));
  t.Lead(Ms(216), 0, 5);
  t.Observe(Ms(900), 0, vocab::WriteBegun{.token = 5});
  auto checker = RunChecker("lease_validity", CalmFrom(3, Ms(0)), t, Ms(1000));
  EXPECT_FALSE(checker->violation()) << DescribeViolation(*checker->violation());
}

}  // namespace
}  // namespace checkers
