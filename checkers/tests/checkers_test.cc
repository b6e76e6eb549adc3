#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "checkers/checker.h"
#include "checkers/cluster_view.h"
#include "checkers/tests/trace_builder.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

using sim::NodeId;
using sim::TraceKind;
using trace_testing::Ms;
using trace_testing::RunChecker;
using trace_testing::TraceBuilder;

CheckerConfig Nodes(uint32_t node_count) { return CheckerConfig{.node_count = node_count}; }

using trace_testing::Heartbeat;
using trace_testing::kTestRoles;
using trace_testing::VoteReply;

CheckerConfig NodesWithRoles(uint32_t node_count) {
  CheckerConfig config = Nodes(node_count);
  config.message_roles = &kTestRoles;
  return config;
}

// ---- registry and rendering ----

TEST(Registry_AllCheckers, SortedWithDocumentedDefaults) {
  std::vector<std::string> names;
  for (const CheckerInfo& info : AllCheckers()) {
    names.push_back(info.name);
    const bool expected_on = info.name != "single_leader" && info.name != "liveness" && info.name != "disruption" &&
                             info.name != "declared_winner" && info.name != "lease_validity";
    EXPECT_EQ(info.on_by_default, expected_on) << info.name;
    EXPECT_FALSE(info.summary.empty()) << info.name;
    auto checker = MakeChecker(info.name, Nodes(3));
    ASSERT_TRUE(checker.ok()) << info.name;
    EXPECT_EQ((*checker)->name(), info.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"committed_agreement", "declared_winner", "disruption", "election_safety",
                                             "leader_completeness", "lease_validity", "liveness", "owner_displaced",
                                             "single_leader", "single_vote", "stale_token", "term_monotonic",
                                             "unique_token"}));
}

TEST(Registry_MakeChecker, UnknownNameIsNotFound) {
  auto checker = MakeChecker("no_such_checker", Nodes(3));
  EXPECT_EQ(checker.status().code(), absl::StatusCode::kNotFound);
}

TEST(DescribeViolation_OneLine, FormatsSecondsFromIntegerNanoseconds) {
  Violation v{.checker = "election_safety",
              .time = sim::TimeNs(1234567890),
              .trace_index = 812,
              .message = "nodes 1 and 3 both claimed leadership of term 4"};
  EXPECT_EQ(DescribeViolation(v),
            "election_safety at 1.234567s (trace #812): nodes 1 and 3 both claimed leadership of term 4");
  v.time = sim::TimeNs(0);
  EXPECT_EQ(DescribeViolation(v),
            "election_safety at 0.000000s (trace #812): nodes 1 and 3 both claimed leadership of term 4");
  v.time = sim::TimeNs(999);  // truncated, not rounded
  EXPECT_NE(DescribeViolation(v).find(" at 0.000000s "), std::string::npos);
  v.time = sim::TimeNs(-1500000);
  EXPECT_NE(DescribeViolation(v).find(" at -0.001500s "), std::string::npos);
}

// ---- election_safety ----

TEST(ElectionSafety_Fires, SecondNodeClaimingSameTerm) {
  TraceBuilder t;
  t.Boot(5);
  t.Lead(Ms(10), 1, 4);
  t.Lead(Ms(20), 2, 5);
  const uint64_t bad = t.Lead(Ms(30), 3, 4);
  t.Lead(Ms(40), 4, 4);  // later violations are not reported
  auto checker = RunChecker("election_safety", Nodes(5), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.checker, "election_safety");
  EXPECT_EQ(v.time, Ms(30));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1), NodeId(3)}));
  EXPECT_EQ(v.term, 4);
  EXPECT_EQ(v.token, 4);
  EXPECT_EQ(DescribeViolation(v),
            "election_safety at 0.030000s (trace #7): nodes 1 and 3 both claimed leadership "
            "of term 4");
}

TEST(ElectionSafety_Quiet, SameNodeReclaimingAndDistinctTerms) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 1, 4);
  t.Follow(Ms(15), 1, 4);
  t.Lead(Ms(20), 1, 4);  // the same node re-announcing term 4
  t.Lead(Ms(30), 2, 5);
  t.Observe(Ms(40), 2, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(4)));  // not a claim
  t.Lead(Ms(50), 7, 5);  // node 7 is a service, not an election node
  auto checker = RunChecker("election_safety", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

TEST(ElectionSafety_Fires, TwoNodesSendLeaderOnlyMessagesOfOneTermWithoutClaimingIt) {
  TraceBuilder t;
  t.Boot(3);
  t.Send(Ms(10), 0, 1, Heartbeat(2));
  t.Send(Ms(10), 0, 2, Heartbeat(2));
  const uint64_t bad = t.Send(Ms(20), 2, 1, Heartbeat(2));
  auto checker = RunChecker("election_safety", NodesWithRoles(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(0), NodeId(2)}));
  EXPECT_EQ(v.term, 2);
  EXPECT_EQ(v.message,
            "node 0 sent test.heartbeat, which only a leader sends, in term 2, and node 2 sent test.heartbeat, which "
            "only a leader sends, in the same term");
}

TEST(ElectionSafety_Fires, ClaimedTermAndAnotherNodesLeaderOnlyMessage) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 1, 4);
  const uint64_t bad = t.Send(Ms(20), 0, 2, Heartbeat(4));
  auto checker = RunChecker("election_safety", NodesWithRoles(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->message,
            "node 1 claimed leadership in term 4, and node 0 sent test.heartbeat, which only a leader sends, in the "
            "same term");
}

TEST(ElectionSafety_Quiet, OneLeadersMessagesVotesAndMessagesOfOtherAlgorithms) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 1, 4);
  t.Send(Ms(10), 1, 0, Heartbeat(4));  // the leader's own heartbeats
  t.Send(Ms(10), 1, 2, Heartbeat(4));
  t.Send(Ms(20), 2, 1, VoteReply(4, true));  // not leader-only
  t.Send(Ms(30), 2, 0, Heartbeat(5));        // a later term
  // Without declared roles a heartbeat is just a message.
  TraceBuilder plain;
  plain.Boot(3);
  plain.Send(Ms(10), 0, 1, Heartbeat(2));
  plain.Send(Ms(10), 2, 1, Heartbeat(2));
  EXPECT_FALSE(RunChecker("election_safety", NodesWithRoles(3), t, Ms(100))->violation());
  EXPECT_FALSE(RunChecker("election_safety", Nodes(3), plain, Ms(100))->violation());
}

// ---- unique_token ----

TEST(UniqueToken_Fires, TwoWritersAcceptedUnderOneToken) {
  TraceBuilder t;
  t.Boot(5);
  t.Accept(Ms(10), 5, 1, 1, 0);
  t.Accept(Ms(20), 5, 1, 1, 1);
  const uint64_t bad = t.Accept(Ms(30), 5, 1, 4, 1);
  auto checker = RunChecker("unique_token", Nodes(5), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1), NodeId(4)}));
  EXPECT_EQ(v.token, 1);
  EXPECT_EQ(v.message,
            "the resource accepted writes under token 1 from both node 1 and node 4: a fencing token must identify "
            "one holder");
}

TEST(UniqueToken_Quiet, OneWriterPerTokenAndRejectedWrites) {
  TraceBuilder t;
  t.Boot(5);
  t.Accept(Ms(10), 5, 1, 1, 0);
  t.Accept(Ms(20), 5, 1, 1, 1);
  t.Accept(Ms(30), 5, 2, 4, 1);  // a new token for a new writer
  t.Accept(Ms(40), 5, 1, 1, 2);  // stale (stale_token's business), but still node 1's token
  t.Observe(
      Ms(50), 5,
      vocab::ResourceRejected{
          {.token = 2, .writer = 3, .seq = 1, .highest = 2}});  // refused: the resource kept the token to one writer
  auto checker = RunChecker("unique_token", Nodes(5), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- stale_token ----

TEST(StaleToken_Fires, AcceptedTokenBelowOneAlreadyAccepted) {
  TraceBuilder t;
  t.Boot(3);
  t.Accept(Ms(10), 3, 33, 0, 0);
  t.Accept(Ms(20), 3, 34, 1, 33);
  const uint64_t bad = t.Accept(Ms(30), 3, 33, 0, 34);
  auto checker = RunChecker("stale_token", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(30));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(0), NodeId(1)}));
  EXPECT_EQ(v.token, 33);
  EXPECT_EQ(v.term, -1);
  EXPECT_EQ(v.message, "the resource accepted token 33 from node 0 after already accepting token 34 from node 1");
}

TEST(StaleToken_Quiet, EqualTokenRejectsAndHighestFieldIgnored) {
  TraceBuilder t;
  t.Boot(3);
  t.Accept(Ms(10), 3, 33, 0, 0);
  t.Accept(Ms(20), 3, 34, 1, 33);
  t.Accept(Ms(30), 3, 34, 1, 34);  // equal to the highest: the same leader again
  // A stale write the resource rejected is the fence working, not a violation.
  t.Observe(Ms(40), 3, vocab::ResourceRejected{{.token = 33, .writer = 0, .seq = 1, .highest = 34}});
  // The "highest" field is informational: only accepted tokens count.
  t.Accept(Ms(50), 3, 35, 2, 99);
  auto checker = RunChecker("stale_token", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- term_monotonic ----

TEST(TermMonotonic_Fires, TermLowerAfterRestart) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 2, vocab::TermChange(sim::Term(5)));
  t.Event(Ms(20), TraceKind::kCrash, 2);
  t.Event(Ms(30), TraceKind::kRestart, 2);
  t.Event(Ms(30), TraceKind::kStart, 2);
  const uint64_t bad = t.Observe(Ms(31), 2, vocab::TermChange(sim::Term(3)));
  auto checker = RunChecker("term_monotonic", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(31));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2)}));
  EXPECT_EQ(v.term, 3);
  EXPECT_EQ(v.message, "node 2's term went down from 5 to 3");
}

TEST(TermMonotonic_Quiet, EqualRisingAndPerNodeTerms) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 0, vocab::TermChange(sim::Term(5)));
  t.Observe(Ms(20), 0, vocab::TermChange(sim::Term(5)));  // restated after a restart
  t.Observe(Ms(30), 1, vocab::TermChange(sim::Term(2)));  // another node may lag behind
  t.Observe(Ms(40), 0, vocab::TermChange(sim::Term(6)));
  // Role changes are not term reports.
  t.Observe(Ms(50), 0, vocab::RoleChange(vocab::Role::kFollower, sim::Term(0)));
  auto checker = RunChecker("term_monotonic", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

TEST(TermMonotonic_Fires, NodeActsInATermBelowOneItReported) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 2, vocab::TermChange(sim::Term(5)));
  const uint64_t bad = t.Send(Ms(20), 2, 0, Heartbeat(3));
  auto checker = RunChecker("term_monotonic", NodesWithRoles(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.term, 3);
  EXPECT_EQ(v.message, "node 2's term went down: it sent test.heartbeat of term 3 after it reported term 5");
}

TEST(TermMonotonic_Fires, UnreportedTermOnTheWireThenALowerReport) {
  TraceBuilder t;
  t.Boot(3);
  t.Send(Ms(10), 1, 0, VoteReply(7, true));
  const uint64_t bad = t.Observe(Ms(20), 1, vocab::TermChange(sim::Term(6)));
  auto checker = RunChecker("term_monotonic", NodesWithRoles(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->message,
            "node 1's term went down: it reported term 6 after it sent test.vote of term 7");
}

TEST(TermMonotonic_Quiet, MessagesInTheCurrentTermAndRefusals) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 0, vocab::TermChange(sim::Term(5)));
  t.Send(Ms(20), 0, 1, Heartbeat(5));
  t.Send(Ms(30), 0, 1, VoteReply(2, false));  // a refusal is no vote, whatever term it names
  t.Observe(Ms(40), 0, vocab::TermChange(sim::Term(6)));
  t.Send(Ms(50), 0, 1, VoteReply(6, true));
  auto checker = RunChecker("term_monotonic", NodesWithRoles(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- single_vote ----

TEST(SingleVote_Fires, TwoCandidatesInOneTerm) {
  TraceBuilder t;
  t.Boot(5);
  t.Observe(Ms(10), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  t.Observe(Ms(11), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  const uint64_t bad = t.Observe(Ms(12), 2, vocab::Vote(sim::Term(3), NodeId(4)));
  auto checker = RunChecker("single_vote", Nodes(5), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(12));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2), NodeId(1), NodeId(4)}));
  EXPECT_EQ(v.term, 3);
  EXPECT_EQ(v.message, "node 2 voted for both node 1 and node 4 in term 3");
}

TEST(SingleVote_Quiet, DuplicateVoteAndNewTerms) {
  TraceBuilder t;
  t.Boot(5);
  t.Observe(Ms(10), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  t.Observe(Ms(11), 2, vocab::Vote(sim::Term(3), NodeId(1)));  // duplicated request
  t.Observe(Ms(12), 2, vocab::Vote(sim::Term(4), NodeId(4)));  // a new term frees the vote
  t.Observe(Ms(13), 3, vocab::Vote(sim::Term(3), NodeId(4)));  // another voter
  auto checker = RunChecker("single_vote", Nodes(5), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// A vote in a term older than the voter's latest is held to the first vote
// of that term too.
TEST(SingleVote_Fires, SecondCandidateInAnOlderTermAfterANewerVote) {
  TraceBuilder t;
  t.Boot(5);
  t.Observe(Ms(10), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  t.Observe(Ms(11), 2, vocab::Vote(sim::Term(5), NodeId(4)));
  const uint64_t bad = t.Observe(Ms(12), 2, vocab::Vote(sim::Term(3), NodeId(0)));
  auto checker = RunChecker("single_vote", Nodes(5), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2), NodeId(1), NodeId(0)}));
  EXPECT_EQ(v.term, 3);
}

TEST(SingleVote_Quiet, TheSameVoteAgainInAnOlderTerm) {
  TraceBuilder t;
  t.Boot(5);
  t.Observe(Ms(10), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  t.Observe(Ms(11), 2, vocab::Vote(sim::Term(5), NodeId(4)));
  t.Observe(Ms(12), 2, vocab::Vote(sim::Term(3), NodeId(1)));  // a late duplicate of the first vote
  t.Observe(Ms(13), 2, vocab::Vote(sim::Term(4), NodeId(0)));  // a term it had not voted in
  t.Observe(Ms(14), 2, vocab::Vote(sim::Term(5), NodeId(4)));
  auto checker = RunChecker("single_vote", Nodes(5), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

TEST(SingleVote_Fires, TwoGrantsOnTheWireInOneTerm) {
  TraceBuilder t;
  t.Boot(5);
  t.Send(Ms(10), 2, 1, VoteReply(3, true));
  const uint64_t bad = t.Send(Ms(12), 2, 4, VoteReply(3, true));
  auto checker = RunChecker("single_vote", NodesWithRoles(5), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2), NodeId(1), NodeId(4)}));
  EXPECT_EQ(v.message,
            "node 2 voted for both node 1 and node 4 in term 3 (the second vote seen on the wire: test.vote)");
}

TEST(SingleVote_Quiet, RefusalsAndRepeatedGrantsOnTheWire) {
  TraceBuilder t;
  t.Boot(5);
  t.Observe(Ms(10), 2, vocab::Vote(sim::Term(3), NodeId(1)));
  t.Send(Ms(10), 2, 1, VoteReply(3, true));   // the same vote on the wire
  t.Send(Ms(11), 2, 1, VoteReply(3, true));   // granted again to the same candidate
  t.Send(Ms(12), 2, 4, VoteReply(3, false));  // a refusal
  auto checker = RunChecker("single_vote", NodesWithRoles(5), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- single_leader ----

TEST(SingleLeader_Fires, PausedLeaderStillBelievesItLeads) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 0, 1);
  t.Event(Ms(20), TraceKind::kPause, 0);
  const uint64_t bad = t.Lead(Ms(30), 2, 2);
  t.Event(Ms(40), TraceKind::kResume, 0);
  t.Follow(Ms(40), 0, 2);
  auto checker = RunChecker("single_leader", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(30));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(0), NodeId(2)}));
  EXPECT_EQ(v.term, 2);
  EXPECT_EQ(v.message, "nodes 0 and 2 were both in the leader role at once (terms 1, 2)");
}

TEST(SingleLeader_Fires, OverlapInLastInstantFoundByFinish) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 0, 1);
  const uint64_t bad = t.Lead(Ms(30), 1, 2);
  auto checker = RunChecker("single_leader", Nodes(3), t, Ms(30));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
}

TEST(SingleLeader_Quiet, CrashedLeaderAndSameInstantHandover) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 0, 1);
  t.Event(Ms(20), TraceKind::kCrash, 0);  // a crashed node holds no role
  t.Lead(Ms(30), 2, 2);
  t.Event(Ms(40), TraceKind::kRestart, 0);
  t.Event(Ms(40), TraceKind::kStart, 0);
  // Within one instant the claim comes before the step-down it races with.
  t.Lead(Ms(50), 1, 3);
  t.Follow(Ms(50), 2, 3);
  auto checker = RunChecker("single_leader", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- committed_agreement ----

TEST(CommittedAgreement_Fires, TwoEntriesCommittedAtOneIndex) {
  TraceBuilder t;
  t.Boot(3);
  t.Commit(Ms(10), 0, 1, 1, 0x101, 1);
  t.Commit(Ms(20), 0, 2, 1, 0x102, 3);
  t.Commit(Ms(21), 1, 2, 1, 0x102, 3);
  const uint64_t bad = t.Commit(Ms(30), 2, 2, 4, 0x204, 4);
  auto checker = RunChecker("committed_agreement", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(30));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(0), NodeId(2)}));
  EXPECT_EQ(v.term, 4);
  EXPECT_EQ(v.message,
            "two entries were committed at index 2: 0x102 (term 1, reported by node 0 at 0.020000s) and "
            "0x204 (term 4, reported by node 2)");
}

TEST(CommittedAgreement_Quiet, SameEntryFromEveryNodeAndOverwrittenUncommittedEntries) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(5), 1, 1, 1, 0x101);
  t.Append(Ms(6), 1, 2, 1, 0x999);  // never committed, then overwritten
  t.Commit(Ms(10), 0, 1, 1, 0x101, 1);
  t.Commit(Ms(11), 1, 1, 1, 0x101, 1);
  t.Commit(Ms(12), 1, 1, 1, 0x101, 2);  // reported again after a restart
  t.Truncate(Ms(13), 1, 2);
  t.Append(Ms(13), 1, 2, 2, 0x202);
  t.Commit(Ms(20), 2, 2, 2, 0x202, 2);
  t.Commit(Ms(30), 5, 2, 9, 0x999, 9);  // node 5 is not an election node
  auto checker = RunChecker("committed_agreement", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- leader_completeness ----

TEST(LeaderCompleteness_Fires, LeaderOfALaterTermWithoutACommittedEntry) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(1), 0, 1, 1, 0x101);
  t.Append(Ms(2), 0, 2, 1, 0x102);
  t.Commit(Ms(3), 0, 2, 1, 0x102, 2);  // committed while node 0 was in term 2
  t.Append(Ms(4), 2, 1, 1, 0x101);
  t.Append(Ms(5), 2, 2, 3, 0x203);  // node 2 holds another entry at index 2
  const uint64_t bad = t.Lead(Ms(10), 2, 4);
  auto checker = RunChecker("leader_completeness", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(10));
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(2), NodeId(0)}));
  EXPECT_EQ(v.term, 4);
  EXPECT_EQ(v.message,
            "node 2 leads term 4 without entry 0x102 (term 1) at index 2, which node 0 reported committed "
            "in term 2 at 0.003000s; the leader holds entry 0x203 (term 3) there instead");
}

TEST(LeaderCompleteness_Fires, CommitReportedAfterALaterLeaderWithoutItTookOver) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(1), 1, 1, 1, 0x101);
  t.Lead(Ms(5), 1, 6);  // leads term 6 with a one-entry log
  // A follower still in term 3 reports what it learned committed back then.
  const uint64_t bad = t.Commit(Ms(8), 2, 2, 3, 0x302, 3);
  auto checker = RunChecker("leader_completeness", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->nodes, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_NE(checker->violation()->message.find("the leader has only 1 entries"), std::string::npos);
}

TEST(LeaderCompleteness_Fires, ARestartedNodeRecoversLessThanItHad) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(1), 1, 1, 1, 0x101);
  t.Append(Ms(2), 1, 2, 1, 0x102);
  t.Commit(Ms(3), 0, 2, 1, 0x102, 1);
  t.Event(Ms(10), TraceKind::kCrash, 1);
  t.Event(Ms(20), TraceKind::kRestart, 1);
  t.Event(Ms(20), TraceKind::kStart, 1);
  t.Append(Ms(20), 1, 1, 1, 0x101);  // all the new process recovered (an unsynced entry lost)
  t.Lead(Ms(30), 1, 2);
  auto checker = RunChecker("leader_completeness", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->term, 2);
}

TEST(LeaderCompleteness_Fires, ALeaderWhoseLogWasCutBackLacksTheEntry) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(1), 1, 1, 1, 0x101);
  t.Append(Ms(2), 1, 2, 1, 0x102);
  t.Commit(Ms(3), 0, 2, 1, 0x102, 1);
  t.Truncate(Ms(4), 1, 2);  // node 1 drops index 2 on: it no longer holds the committed entry
  const uint64_t bad = t.Lead(Ms(10), 1, 2);
  auto checker = RunChecker("leader_completeness", Nodes(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_NE(checker->violation()->message.find("the leader has only 1 entries"), std::string::npos);
}

TEST(LeaderCompleteness_Quiet, LaterLeadersHoldItAndEarlierOnesMayNot) {
  TraceBuilder t;
  t.Boot(3);
  t.Append(Ms(1), 0, 1, 1, 0x101);
  t.Append(Ms(2), 0, 2, 2, 0x202);
  t.Commit(Ms(3), 0, 2, 2, 0x202, 2);
  t.Lead(Ms(4), 0, 2);  // the term it was committed in
  // Node 1 wins term 1 late, with votes cast before the commit: a stale
  // leader may lack the entry.
  t.Lead(Ms(5), 1, 1);
  // Node 2 had a conflicting entry, is repaired, restarts with it and leads term 3.
  t.Append(Ms(6), 2, 1, 1, 0x101);
  t.Append(Ms(7), 2, 2, 1, 0x999);
  t.Truncate(Ms(8), 2, 2);
  t.Append(Ms(8), 2, 2, 2, 0x202);
  t.Append(Ms(9), 2, 3, 2, 0x203);
  t.Event(Ms(10), TraceKind::kCrash, 2);
  t.Event(Ms(11), TraceKind::kRestart, 2);
  t.Event(Ms(11), TraceKind::kStart, 2);
  t.Append(Ms(11), 2, 1, 1, 0x101);
  t.Append(Ms(11), 2, 2, 2, 0x202);
  t.Lead(Ms(20), 2, 3);
  t.Commit(Ms(21), 2, 3, 3, 0x303, 3);  // reported in the leader's own term: no earlier leader is bound
  auto checker = RunChecker("leader_completeness", Nodes(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

TEST(SingleLeader_Fires, NodeThatLeadsWithoutSayingSoIsCaughtByItsMessages) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(10), 0, 1);
  const uint64_t bad = t.Send(Ms(20), 2, 1, Heartbeat(2));
  auto checker = RunChecker("single_leader", NodesWithRoles(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.trace_index, bad);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(0), NodeId(2)}));
  EXPECT_EQ(v.message,
            "nodes 0 and 2 were both in the leader role at once (terms 1, 2; node 2 never reported the role, only sent "
            "leader-only messages)");
}

TEST(SingleLeader_Quiet, LeaderOnlyMessagesEndWithTheNextReportedRole) {
  TraceBuilder t;
  t.Boot(3);
  t.Send(Ms(10), 2, 1, Heartbeat(2));  // node 2 leads, unreported
  t.Follow(Ms(20), 2, 3);              // and then reports stepping down
  t.Lead(Ms(30), 0, 3);
  t.Send(Ms(30), 0, 1, Heartbeat(3));
  auto checker = RunChecker("single_leader", NodesWithRoles(3), t, Ms(100));
  EXPECT_FALSE(checker->violation());
}

// ---- liveness ----

CheckerConfig LivenessConfig(uint32_t node_count, int64_t after_ms, int64_t within_ms,
                             std::optional<int64_t> stable_for_ms = std::nullopt) {
  CheckerConfig config{.node_count = node_count, .liveness_after = Ms(after_ms), .liveness_within = Ms(within_ms)};
  if (stable_for_ms) config.liveness_stable_for = Ms(*stable_for_ms);
  return config;
}

TEST(Liveness_Fires, NoLeaderEverAppears) {
  TraceBuilder t;
  t.Boot(3);
  for (int64_t ms = 500; ms <= 2500; ms += 500) {
    t.Observe(Ms(ms), 1, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(ms / 500)));
  }
  const uint64_t past_deadline = t.Observe(Ms(3500), 1, vocab::TermChange(sim::Term(7)));
  t.Observe(Ms(4000), 1, vocab::TermChange(sim::Term(8)));
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000), t, Ms(5000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.checker, "liveness");
  EXPECT_EQ(v.time, Ms(3000));
  EXPECT_EQ(v.trace_index, past_deadline);
  EXPECT_TRUE(v.nodes.empty());
  EXPECT_EQ(v.message,
            "no single leader was known to every live node between 1.000000s and the deadline 3.000000s; "
            "at the deadline no live election node was in the leader role");
}

// Told of the instant start it needs, not of every one: past the deadline,
// the first record of any kind is where the finding points.
TEST(Liveness_Fires, JudgedAtTheFirstRecordPastTheDeadline) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(500), 1, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(1)));
  t.Event(Ms(2000), TraceKind::kTimerFire, 1);
  const uint64_t past_deadline = t.Event(Ms(3200), TraceKind::kTimerFire, 1);
  t.Event(Ms(3300), TraceKind::kTimerFire, 1);
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000), t, Ms(5000));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->time, Ms(3000));
  EXPECT_EQ(checker->violation()->trace_index, past_deadline);
}

TEST(Liveness_Fires, LastBeliefArrivesAfterDeadline) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(2000), 1, 2);
  t.Believe(Ms(2000), 0, 1, 2);
  t.Believe(Ms(3001), 2, 1, 2);
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000), t, Ms(5000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(3000));
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(v.term, 2);
  EXPECT_NE(v.message.find("node 2 did not believe node 1 led"), std::string::npos) << v.message;
}

TEST(Liveness_Fires, RunEndsBeforeDeadlineWithoutLeader) {
  TraceBuilder t;
  t.Boot(3);
  const uint64_t last = t.Lead(Ms(500), 0, 1);
  t.Event(Ms(1500), TraceKind::kCrash, 0);
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 5000), t, Ms(2000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(2000));
  EXPECT_EQ(v.trace_index, last + 1);
  EXPECT_NE(v.message.find("the run ended at 2.000000s, before the liveness deadline 6.000000s"), std::string::npos)
      << v.message;
}

// Node 1 leads, known to all, from 1.5 s until it crashes at 4 s; node 2
// takes over at 4.2 s, and node 0 believes it. `lost` is the crash's index.
TraceBuilder LeaderLostTrace(uint64_t* lost = nullptr) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(1500), 1, 2);
  t.Believe(Ms(1500), 0, 1, 2);
  t.Believe(Ms(1500), 2, 1, 2);
  const uint64_t crash = t.Event(Ms(4000), TraceKind::kCrash, 1);
  if (lost != nullptr) *lost = crash;
  t.Lead(Ms(4200), 2, 3);
  t.Believe(Ms(4200), 0, 2, 3);
  return t;
}

TEST(Liveness_Fires, LeaderLostBeforeTheEndOfTheRun) {
  uint64_t lost = 0;
  const TraceBuilder t = LeaderLostTrace(&lost);
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000), t, Ms(5000));
  ASSERT_TRUE(checker->violation());
  const Violation& v = *checker->violation();
  EXPECT_EQ(v.time, Ms(4000));
  EXPECT_EQ(v.trace_index, lost);
  EXPECT_EQ(v.nodes, (std::vector<NodeId>{NodeId(1)}));
  EXPECT_EQ(v.term, 2);
  EXPECT_EQ(v.message,
            "node 1 was the leader known to every live node from 1.500000s, but at 4.000000s no live election node "
            "was in the leader role: it held 2500.000ms, and a leader must hold until the end of the run");
}

TEST(Liveness_Fires, LeaderLostWithinTheStabilityWindowAndNoOtherByTheDeadline) {
  TraceBuilder t;
  t.Boot(2);
  t.Lead(Ms(1500), 1, 2);
  t.Believe(Ms(1500), 0, 1, 2);
  t.Follow(Ms(2500), 1, 3);
  t.Observe(Ms(3500), 0, vocab::TermChange(sim::Term(4)));
  auto checker = RunChecker("liveness", LivenessConfig(2, 1000, 2000, 2000), t, Ms(5000));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->time, Ms(2500));
  EXPECT_NE(checker->violation()->message.find("it held 1000.000ms, and a leader must hold for 2s"), std::string::npos)
      << checker->violation()->message;
}

TEST(Liveness_Quiet, HeldForTheStabilityWindowThenLost) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(2999), 1, 2);
  t.Believe(Ms(2999), 0, 1, 2);
  t.Believe(Ms(2999), 2, 1, 2);
  t.Event(Ms(3500), TraceKind::kCrash, 1);  // after holding 501ms: the window was 500ms
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000, 500), t, Ms(5000));
  EXPECT_FALSE(checker->violation());
}

// Two nodes: node 1 leads from 1.5 s and crashes at 2 s; node 0 leads from
// 2.5 s, and node 1, back at 2.6 s, believes it at 2.7 s.
TraceBuilder SecondLeaderTrace() {
  TraceBuilder t;
  t.Boot(2);
  t.Lead(Ms(1500), 1, 2);
  t.Believe(Ms(1500), 0, 1, 2);
  t.Event(Ms(2000), TraceKind::kCrash, 1);
  t.Lead(Ms(2500), 0, 3);
  t.Event(Ms(2600), TraceKind::kRestart, 1);
  t.Event(Ms(2600), TraceKind::kStart, 1);
  t.Believe(Ms(2700), 1, 0, 3);
  return t;
}

TEST(Liveness_Quiet, ASecondLeaderByTheDeadlineThatHoldsToTheEnd) {
  const TraceBuilder t = SecondLeaderTrace();
  auto checker = RunChecker("liveness", LivenessConfig(2, 1000, 2000), t, Ms(5000));
  EXPECT_FALSE(checker->violation());
}

TEST(Liveness_Quiet, LeaderFromBeforeHealingAndCrashedNodeIgnored) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Believe(Ms(110), 1, 0, 1);
  t.Event(Ms(200), TraceKind::kCrash, 2);  // down nodes need not believe anything
  auto checker = RunChecker("liveness", LivenessConfig(3, 1000, 2000), t, Ms(1000));
  EXPECT_FALSE(checker->violation());
}

TEST(Liveness_Quiet, StateReachedExactlyAtDeadlineCounts) {
  TraceBuilder t;
  t.Boot(2);
  t.Lead(Ms(3000), 1, 2);
  t.Believe(Ms(3000), 0, 1, 2);
  t.Follow(Ms(3001), 1, 3);
  auto checker = RunChecker("liveness", LivenessConfig(2, 1000, 2000, 1), t, Ms(5000));
  EXPECT_FALSE(checker->violation());
}

// A view shared with other sinks (the runner's watch and metrics) may take
// in a record before liveness sees it. Liveness must still judge each
// instant on the state it ended in: the verdicts match a run with its own view.
std::optional<Violation> LivenessWithSharedViewAppliedFirst(CheckerConfig config, const TraceBuilder& t,
                                                            sim::TimeNs end) {
  ClusterView shared(config.node_count);
  config.cluster_view = &shared;
  auto checker = MakeChecker("liveness", config);
  EXPECT_TRUE(checker.ok()) << checker.status();
  for (const sim::TraceRecord& record : t.records()) {
    shared.Apply(record);  // as another sink reading the view would, first
    (*checker)->OnRecord(record);
  }
  (*checker)->Finish(end);
  return (*checker)->violation();
}

void ExpectSameVerdict(const std::optional<Violation>& shared, const Checker& own) {
  ASSERT_EQ(shared.has_value(), own.violation().has_value());
  if (!shared) return;
  EXPECT_EQ(shared->time, own.violation()->time);
  EXPECT_EQ(shared->trace_index, own.violation()->trace_index);
  EXPECT_EQ(shared->nodes, own.violation()->nodes);
  EXPECT_EQ(shared->message, own.violation()->message);
}

TEST(Liveness_SharedView, JudgesTheInstantALaterRecordEnds) {
  // The leader known from 1.5s crashes at 4s: judged after the crash, the
  // 1.5s instant would show no leader, and the verdict would name none.
  const TraceBuilder t = LeaderLostTrace();
  const CheckerConfig config = LivenessConfig(3, 1000, 2000);
  const auto own = RunChecker("liveness", config, t, Ms(5000));
  ASSERT_TRUE(own->violation());
  EXPECT_EQ(own->violation()->nodes, (std::vector<NodeId>{NodeId(1)}));
  ExpectSameVerdict(LivenessWithSharedViewAppliedFirst(config, t, Ms(5000)), *own);
}

TEST(Liveness_SharedView, QuietWhenItsOwnViewIsQuiet) {
  const TraceBuilder t = SecondLeaderTrace();
  const CheckerConfig config = LivenessConfig(2, 1000, 2000);
  const auto own = RunChecker("liveness", config, t, Ms(5000));
  EXPECT_FALSE(own->violation());
  ExpectSameVerdict(LivenessWithSharedViewAppliedFirst(config, t, Ms(5000)), *own);
}

}  // namespace
}  // namespace checkers
