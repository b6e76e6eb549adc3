#include "checkers/metrics.h"

#include <cstdint>

#include "checkers/tests/trace_builder.h"
#include "electsim/sim/message.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

// Made-up message types of the tests below.
constexpr sim::RecordType kVoteReply{"raft.vote_reply", {}};
constexpr sim::RecordType kVoteRequest{"raft.vote_request", {}};
constexpr sim::RecordType kResourceAckType{"resource.ack", {}};
constexpr sim::RecordType kResourceWriteType{"resource.write", {}};
constexpr sim::RecordType kTestHeartbeat{"test.heartbeat", {"index"}};
constexpr sim::RecordType kTestRequestVote{"test.request_vote", {"term", "candidate"}};
constexpr sim::RecordType kTestVote{"test.vote", {"term", "candidate"}};
constexpr sim::RecordType kTestX{"test.x", {"min"}};
constexpr sim::RecordType kTestToken{"test.token", {"token"}};

using sim::NodeId;
using sim::TraceKind;
using trace_testing::Ms;
using trace_testing::TraceBuilder;

RunMetrics Collect(uint32_t node_count, const TraceBuilder& trace, sim::TimeNs end) {
  MetricsCollector collector(node_count);
  trace.FeedTo(collector);
  collector.Finish(end);
  return collector.metrics();
}

// The runner moves the metrics out instead of copying them: the same figures.
TEST(Metrics_Take, GivesWhatMetricsGives) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(150), 0, 1);
  t.Send(Ms(150), 0, 1, sim::Message(kTestHeartbeat).Set("index", 1));
  t.Send(Ms(151), 0, 2, sim::Message(kTestHeartbeat).Set("index", 1));
  t.Send(Ms(152), 1, 0, sim::Message(kTestVote).Set("term", 1).Set("candidate", 0));
  t.Believe(Ms(160), 1, 0, 1);
  t.Event(Ms(2000), TraceKind::kCrash, 0);
  t.Lead(Ms(2300), 1, 2);
  MetricsCollector collector(3);
  t.FeedTo(collector);
  collector.Finish(Ms(3000));
  const RunMetrics copied = collector.metrics();
  const RunMetrics taken = collector.TakeMetrics();
  ASSERT_EQ(taken.elections.size(), 2u);
  EXPECT_EQ(taken.elections.size(), copied.elections.size());
  for (size_t i = 0; i < taken.elections.size(); ++i) {
    EXPECT_EQ(taken.elections[i].cause, copied.elections[i].cause);
    EXPECT_EQ(taken.elections[i].leader, copied.elections[i].leader);
    EXPECT_EQ(taken.elections[i].known, copied.elections[i].known);
  }
  EXPECT_EQ(taken.elections[1].cause, "leader crashed");
  EXPECT_EQ(taken.leaders_by_term, copied.leaders_by_term);
  EXPECT_EQ(taken.messages_by_type, copied.messages_by_type);
  EXPECT_EQ(taken.messages_by_type.at("test.heartbeat"), 2u);
  EXPECT_EQ(taken.messages_sent, 3u);
  EXPECT_EQ(taken.no_leader_time, copied.no_leader_time);
}

TEST(Metrics_Elections, LatencyAfterLeaderCrashIsExact) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(150), 0, vocab::TermChange(sim::Term(1)));
  t.Lead(Ms(150), 0, 1);
  t.Believe(Ms(160), 1, 0, 1);
  t.Believe(Ms(170), 2, 0, 1);
  t.Event(Ms(2000), TraceKind::kCrash, 0);
  t.Observe(Ms(2300), 1, vocab::TermChange(sim::Term(2)));
  t.Lead(Ms(2300), 1, 2);
  t.Believe(Ms(2305), 2, 1, 2);  // node 0 is down: node 2 is the last that must learn
  t.Event(Ms(3000), TraceKind::kRestart, 0);
  t.Event(Ms(3000), TraceKind::kStart, 0);
  t.Believe(Ms(3010), 0, 1, 2);
  const RunMetrics m = Collect(3, t, Ms(4000));

  ASSERT_EQ(m.elections.size(), 2u);
  const Election& first = m.elections[0];
  EXPECT_EQ(first.cause, "start");
  EXPECT_EQ(first.started, Ms(0));
  EXPECT_EQ(first.elected, Ms(150));
  EXPECT_EQ(first.known, Ms(170));
  EXPECT_EQ(first.leader, NodeId(0));
  EXPECT_EQ(first.term, 1);

  const Election& second = m.elections[1];
  EXPECT_EQ(second.cause, "leader crashed");
  EXPECT_EQ(second.started, Ms(2000));
  ASSERT_TRUE(second.elected && second.known);
  EXPECT_EQ(*second.elected - second.started, Ms(300));
  EXPECT_EQ(*second.known - second.started, Ms(305));
  EXPECT_EQ(second.leader, NodeId(1));
  EXPECT_EQ(second.term, 2);

  EXPECT_EQ(m.no_leader_time, Ms(150 + 300));
  EXPECT_EQ(m.multi_leader_time, Ms(0));
  EXPECT_EQ(m.max_term, 2);
  EXPECT_EQ(m.leaders_by_term, (std::map<int64_t, std::vector<NodeId>>{{1, {NodeId(0)}}, {2, {NodeId(1)}}}));
}

TEST(Metrics_Terms, MaxTermCountsTermReportsWithoutARole) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Observe(Ms(200), 2, vocab::TermChange(sim::Term(5)));  // a follower that heard of term 5
  EXPECT_EQ(Collect(3, t, Ms(300)).max_term, 5);
}

TEST(Metrics_LeaderTime, PausedLeaderOverlapIsExact) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Event(Ms(1000), TraceKind::kPause, 0);
  t.Lead(Ms(1500), 1, 2);  // node 0 still believes it leads: two role holders
  t.Event(Ms(2000), TraceKind::kResume, 0);
  t.Follow(Ms(2010), 0, 2);
  const RunMetrics m = Collect(3, t, Ms(3000));

  EXPECT_EQ(m.no_leader_time, Ms(100));
  EXPECT_EQ(m.multi_leader_time, Ms(510));
  ASSERT_EQ(m.elections.size(), 2u);
  EXPECT_EQ(m.elections[1].cause, "leader paused");
  EXPECT_EQ(m.elections[1].started, Ms(1000));
  EXPECT_EQ(m.elections[1].elected, Ms(1500));
  EXPECT_EQ(m.elections[1].leader, NodeId(1));
  EXPECT_FALSE(m.elections[1].known);  // node 2 never said whom it follows
}

TEST(Metrics_Elections, HandoverStepDownAndResumedLeader) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Lead(Ms(200), 1, 2);    // claims while node 0 still leads: "leader changed"
  t.Follow(Ms(300), 0, 2);  // the old leader stepping down is not the current one leaving
  t.Follow(Ms(400), 1, 2);  // the current leader steps down
  t.Lead(Ms(600), 2, 3);
  t.Event(Ms(700), TraceKind::kPause, 2);
  t.Event(Ms(800), TraceKind::kResume, 2);  // nobody took over: it leads again
  const RunMetrics m = Collect(3, t, Ms(1000));

  ASSERT_EQ(m.elections.size(), 4u);
  EXPECT_EQ(m.elections[1].cause, "leader changed");
  EXPECT_EQ(m.elections[1].started, Ms(200));
  EXPECT_EQ(m.elections[1].elected, Ms(200));
  EXPECT_EQ(m.elections[1].leader, NodeId(1));
  EXPECT_EQ(m.elections[2].cause, "leader stepped down");
  EXPECT_EQ(m.elections[2].started, Ms(400));
  EXPECT_EQ(m.elections[2].elected, Ms(600));
  EXPECT_EQ(m.elections[2].leader, NodeId(2));
  EXPECT_EQ(m.elections[3].cause, "leader paused");
  EXPECT_EQ(m.elections[3].started, Ms(700));
  EXPECT_EQ(m.elections[3].elected, Ms(800));
  EXPECT_EQ(m.elections[3].leader, NodeId(2));
  EXPECT_EQ(m.elections[3].term, 3);

  EXPECT_EQ(m.multi_leader_time, Ms(100));
  EXPECT_EQ(m.no_leader_time, Ms(100 + 200));
}

TEST(Metrics_Elections, SplitBrainResolvingOpensNoEpisode) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Lead(Ms(200), 1, 1);    // a second leader (no quorum): "leader changed"
  t.Follow(Ms(300), 1, 2);  // the newer one steps down; node 0 still leads
  t.Follow(Ms(500), 0, 2);  // now nobody leads
  const RunMetrics m = Collect(3, t, Ms(1000));

  ASSERT_EQ(m.elections.size(), 3u);
  EXPECT_EQ(m.elections[1].cause, "leader changed");
  EXPECT_EQ(m.elections[2].cause, "leader stepped down");
  EXPECT_EQ(m.elections[2].started, Ms(500));  // not 300: node 0 led throughout
  EXPECT_FALSE(m.elections[2].elected);
}

TEST(Metrics_Elections, KnownIsCreditedOnlyToTheEpisodesOwnLeader) {
  TraceBuilder t;
  t.Boot(3);
  t.Lead(Ms(100), 0, 1);
  t.Lead(Ms(200), 1, 1);    // "leader changed": node 1's episode
  t.Follow(Ms(300), 1, 1);  // node 1 steps down; node 0 still leads
  t.Believe(Ms(400), 1, 0, 1);
  t.Believe(Ms(400), 2, 0, 1);  // everyone follows node 0, not node 1
  const RunMetrics m = Collect(3, t, Ms(1000));

  ASSERT_EQ(m.elections.size(), 2u);
  EXPECT_EQ(m.elections[1].leader, NodeId(1));
  EXPECT_FALSE(m.elections[1].known) << "credited to node 1 at " << m.elections[1].known->ns();
}

TEST(Metrics_Counts, MessagesByTypeAndWrites) {
  TraceBuilder t;
  t.Boot(3);
  t.Send(Ms(1), 0, 1, sim::Message(kVoteRequest));
  t.Send(Ms(1), 0, 2, sim::Message(kVoteRequest));
  t.Send(Ms(2), 1, 0, sim::Message(kVoteReply));
  t.Send(Ms(3), 0, 3, sim::Message(kResourceWriteType));
  t.Send(Ms(4), 3, 0, sim::Message(kResourceAckType));  // services' sends count too
  t.Observe(Ms(3), 0, vocab::WriteSent{.token = 1, .seq = 1});
  t.Observe(Ms(3), 0, vocab::WriteSent{.token = 1, .seq = 2});
  t.Accept(Ms(4), 3, 1, 0, 0);
  t.Observe(Ms(5), 3, sim::Observation(vocab::kResourceReject, {0}));
  const RunMetrics m = Collect(3, t, Ms(10));

  EXPECT_EQ(m.messages_sent, 5u);
  EXPECT_EQ(m.messages_by_type,
            (std::map<std::string, uint64_t>{
                {"raft.vote_request", 2}, {"raft.vote_reply", 1}, {"resource.write", 1}, {"resource.ack", 1}}));
  EXPECT_EQ(m.writes_sent, 2u);
  EXPECT_EQ(m.writes_accepted, 1u);
  EXPECT_EQ(m.writes_rejected, 1u);
  EXPECT_EQ(m.no_leader_time, Ms(10));
  ASSERT_EQ(m.elections.size(), 1u);
  EXPECT_FALSE(m.elections[0].elected);
}

// The collector keeps its counts by type address; a type constant at another
// address (a separately built algorithm's copy) with the same name is still
// the same type in what it reports: counted under the one name, and
// steady-state traffic when the roles name the other copy.
TEST(Metrics_Counts, ATypeAtAnotherAddressIsTheSameType) {
  static constexpr sim::RecordType kHeartbeatCopy{"test.heartbeat", {"index"}};
  ASSERT_NE(&kHeartbeatCopy, &kTestHeartbeat);
  const vocab::MessageRoles roles = {.steady_state = {&kTestHeartbeat}};
  TraceBuilder t;
  t.Boot(2);
  t.Send(Ms(1), 0, 1, sim::Message(kHeartbeatCopy));
  t.Send(Ms(2), 0, 1, sim::Message(kTestHeartbeat));
  t.Send(Ms(3), 0, 1, sim::Message(kHeartbeatCopy));
  t.Send(Ms(4), 1, 0, sim::Message(kVoteReply));
  MetricsCollector collector(2, &roles);
  t.FeedTo(collector);
  collector.Finish(Ms(10));
  const RunMetrics& m = collector.metrics();
  EXPECT_EQ(m.messages_by_type, (std::map<std::string, uint64_t>{{"test.heartbeat", 3}, {"raft.vote_reply", 1}}));
  EXPECT_EQ(m.messages_steady_state, 3u);
  EXPECT_EQ(m.messages_election, 1u);
}

}  // namespace
}  // namespace checkers

namespace checkers {
namespace {

// A crash-and-elect sequence with the latency-study metrics checked one by
// one: node 0 leads; it crashes at 2s; node 2 times out first at 2.2s (the
// detection), node 1 wins at 2.3s (the election) and node 2 learns it at
// 2.31s (known to all). Messages: heartbeats (steady state), a write to the
// resource (application), and the election's own vote traffic.
TEST(Metrics_LatencyStudy, DetectionElectionKnownAndMessagesByRole) {
  using trace_testing::Ms;
  const vocab::MessageRoles roles = {.steady_state = {&kTestHeartbeat}};
  trace_testing::TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(100), 0, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(1)));
  t.Send(Ms(100), 0, 1, sim::Message(kTestRequestVote));
  t.Lead(Ms(110), 0, 1);
  t.Believe(Ms(120), 1, 0, 1);
  t.Believe(Ms(120), 2, 0, 1);
  t.Send(Ms(500), 0, 1, sim::Message(kTestHeartbeat));
  t.Send(Ms(500), 0, 2, sim::Message(kTestHeartbeat));
  t.Send(Ms(600), 0, 3, sim::Message(kResourceWriteType));  // node 3: the resource
  t.Send(Ms(601), 3, 0, sim::Message(kResourceAckType));
  t.Event(Ms(2000), sim::TraceKind::kCrash, 0);
  t.Observe(Ms(2200), 2, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(2)));
  t.Send(Ms(2200), 2, 1, sim::Message(kTestRequestVote));
  t.Observe(Ms(2250), 1, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(3)));
  t.Send(Ms(2250), 1, 2, sim::Message(kTestRequestVote));
  t.Send(Ms(2260), 2, 1, sim::Message(kTestVote));
  t.Lead(Ms(2300), 1, 3);
  t.Send(Ms(2300), 1, 2, sim::Message(kTestHeartbeat));
  t.Believe(Ms(2310), 2, 1, 3);
  t.Send(Ms(2400), 1, 2, sim::Message(kTestRequestVote));  // after known: not this election's
  MetricsCollector collector(3, &roles);
  t.FeedTo(collector);
  collector.Finish(Ms(3000));
  const RunMetrics& m = collector.metrics();

  ASSERT_EQ(m.elections.size(), 2u);
  EXPECT_EQ(m.elections[0].detected, Ms(100));
  EXPECT_EQ(m.elections[0].election_messages, 1u);
  const Election& e = m.elections[1];
  EXPECT_EQ(e.started, Ms(2000));
  ASSERT_TRUE(e.detected && e.elected && e.known);
  EXPECT_EQ(*e.detected - e.started, Ms(200));
  EXPECT_EQ(*e.elected - e.started, Ms(300));
  EXPECT_EQ(*e.known - e.started, Ms(310));
  EXPECT_EQ(e.term, 3);
  EXPECT_EQ(e.election_messages, 3u);
  EXPECT_EQ(m.max_term, 3);
  EXPECT_EQ(m.messages_sent, 10u);
  EXPECT_EQ(m.messages_steady_state, 3u);
  EXPECT_EQ(m.messages_application, 2u);
  EXPECT_EQ(m.messages_election, 5u);
}

// Sizes by hand: a 16-byte header, then per field a tag byte and a zig-zag
// varint (term 5 -> 10: 1 byte; candidate -1 -> 1: 1 byte; index 300 -> 600:
// 2 bytes; 2^40 -> 2^41: 6 bytes).
TEST(Metrics_Bytes, ElectionAndSteadyStateBytesFromHeaderAndFieldVarints) {
  using trace_testing::Ms;
  EXPECT_EQ(sim::EstimatedEncodedBytes(sim::Message(kTestVote)), 16);
  EXPECT_EQ(sim::EstimatedEncodedBytes(sim::Message(kTestVote).Set("term", 5).Set("candidate", -1)), 16 + 2 + 2);
  EXPECT_EQ(sim::EstimatedEncodedBytes(sim::Message(kTestHeartbeat).Set("index", 300)), 16 + 3);
  EXPECT_EQ(sim::EstimatedEncodedBytes(sim::Message(kTestToken).Set("token", int64_t{1} << 40)), 16 + 7);
  EXPECT_EQ(sim::EstimatedEncodedBytes(sim::Message(kTestX).Set("min", INT64_MIN)), 16 + 1 + 10);

  const vocab::MessageRoles roles = {.steady_state = {&kTestHeartbeat}};
  trace_testing::TraceBuilder t;
  t.Boot(2);
  t.Observe(Ms(100), 0, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(1)));
  t.Send(Ms(100), 0, 1, sim::Message(kTestRequestVote).Set("term", 5).Set("candidate", -1));  // 20 bytes
  t.Send(Ms(105), 1, 0, sim::Message(kTestVote));                                             // 16 bytes
  t.Lead(Ms(110), 0, 1);
  t.Believe(Ms(120), 1, 0, 1);
  t.Send(Ms(150), 0, 1, sim::Message(kTestHeartbeat).Set("index", 300));  // 19 bytes
  t.Send(Ms(200), 0, 1, sim::Message(kTestHeartbeat));                    // 16 bytes
  t.Send(Ms(300), 1, 0, sim::Message(kTestRequestVote));                  // after known: the run's, not the election's
  MetricsCollector collector(2, &roles);
  t.FeedTo(collector);
  collector.Finish(Ms(1000));
  const RunMetrics& m = collector.metrics();
  ASSERT_EQ(m.elections.size(), 1u);
  EXPECT_EQ(m.elections[0].election_messages, 2u);
  EXPECT_EQ(m.elections[0].election_bytes, 36u);
  EXPECT_EQ(m.bytes_election, 52u);
  EXPECT_EQ(m.bytes_steady_state, 35u);
}

TEST(Metrics_LatencyStudy, WithoutRolesNothingIsSteadyStateAndAnUnfinishedElectionIsUndetected) {
  using trace_testing::Ms;
  trace_testing::TraceBuilder t;
  t.Boot(2);
  t.Send(Ms(50), 0, 1, sim::Message(kTestHeartbeat));
  MetricsCollector collector(2);
  t.FeedTo(collector);
  collector.Finish(Ms(1000));
  const RunMetrics& m = collector.metrics();
  EXPECT_EQ(m.messages_steady_state, 0u);
  EXPECT_EQ(m.messages_election, 1u);
  ASSERT_EQ(m.elections.size(), 1u);
  EXPECT_FALSE(m.elections[0].detected);
  EXPECT_EQ(m.elections[0].election_messages, 1u);
}

}  // namespace
}  // namespace checkers
