#include "algorithms/ring/ring.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "algorithms/ring/ring_mutants.h"
#include "algorithms/ring/ring_node.h"
#include "algorithms/testing/cluster_harness.h"
#include "algorithms/testing/mutant_checks.h"
#include "gtest/gtest.h"
#include "sim/trace.h"

namespace algorithms {
namespace {

using sim::NodeId;
using sim::TimeNs;
using testing::ClusterHarness;

constexpr int64_t kStartLowest = 1;  // index of "lowest" in start_election

TEST(RingTest, Registry_FindsRingByName) {
  EXPECT_EQ(FindAlgorithm("ring"), &RingAlgorithm());
  EXPECT_EQ(RingAlgorithm().name(), "ring");
}

TEST(RingTest, HealthyNetwork_LargestIdLeadsAndEveryNodeBelievesIt) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
  EXPECT_GT(h.tracker().writes_accepted, 0u);
  EXPECT_EQ(h.tracker().writes_rejected, 0u);
}

TEST(RingTest, HealthyNetwork_ElectionIdsNotNodeIndexDecide) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), [](OptionValues& o) {
    o.SetList("ids", {3, 9, 1, 7, 5});
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{1});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

TEST(RingTest, LeaderCrash_NewLeaderElectedAndRestartedNodeFollows) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});

  ASSERT_TRUE(h.sim().Crash(NodeId(4)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  EXPECT_EQ(h.tracker().leader_claims.back().term, 2);

  // Chang-Roberts has no take-over: the recovered node hears the leader's
  // heartbeats and follows it.
  ASSERT_TRUE(h.sim().Restart(NodeId(4)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  EXPECT_EQ(h.tracker().term[4], 2);
}

// Node 0 starts alone at t=0 (1 ms per hop). E(0) reaches 1 at 1 ms; 1 sends
// E(1) towards 2, due at 2 ms; 2 crashes at 1.5 ms with it in flight. Node 1
// re-sends E(1) to 2 at 26 and 51 ms (ack_timeout 25 ms, ack_retries 2), then
// at 76 ms skips 2 and the same round goes on:
// 1->3 E(1), 3->4 E(3), 4->0 E(4), 0->1 E(4), 1->3 E(4) (2 still skipped),
// 3->4 E(4): node 4 is elected in epoch 1 at 82 ms, with no second round.
TEST(RingTest, SuccessorCrashedMidElection_SameRoundStillElects) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("start_election", kStartLowest); });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Micros(1500), [&h] { (void)h.sim().Crash(NodeId(2)); }).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Millis(100)).ok());
  ASSERT_FALSE(h.sim().IsUp(NodeId(2)));
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
  EXPECT_EQ(h.tracker().leader_claims[0].time, TimeNs::Millis(82));
  // 0->1, the lost 1->2 and its two re-sends, then the six hops listed above.
  EXPECT_EQ(h.tracker().Sent(kRingElection), 10u);
  // ELECTED goes round the four live nodes, skipping 2: 4->0->1->3->4.
  EXPECT_EQ(h.tracker().Sent(kRingElected), 4u);
}

// Node 0 starts alone (1 ms per hop): E(0), E(1), E(2) reach 1, 2, 3 at 1, 2,
// 3 ms; 3 sends E(3) to 4 at 3 ms over a link cut from 0 to 27 ms, longer
// than ack_timeout (25 ms). Node 3 re-sends it at 28 ms, 4 gets it at 29 ms,
// and E(4) goes round 0, 1, 2, 3 back to 4: elected at 34 ms, nobody skipped.
TEST(RingTest, LostHop_ResentAndLargestIdStillWins) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("start_election", kStartLowest); });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().CutOneWay(NodeId(3), NodeId(4)).ok());
  ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Millis(27), [&h] { h.sim().HealNetwork(); }).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
  EXPECT_EQ(h.tracker().leader_claims[0].time, TimeNs::Millis(34));
  // Four hops to 4 (one lost), its re-send, five hops of E(4).
  EXPECT_EQ(h.tracker().Sent(kRingElection), 10u);
  // ELECTED visits every node: 4 was never skipped.
  EXPECT_EQ(h.tracker().Sent(kRingElected), 5u);
}

// The same lost hop with ack_retries 0, the behaviour before re-sends: node 3
// skips the live node 4 at 28 ms, E(3) comes home through 0, 1, 2 at 32 ms,
// and 3 leads although a larger id is alive; 4 just follows its heartbeats.
TEST(RingTest, LostHopWithoutRetries_LiveSuccessorSkippedAndSmallerIdWins) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), [](OptionValues& o) {
    o.Set("start_election", kStartLowest);
    o.Set("ack_retries", 0);
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().CutOneWay(NodeId(3), NodeId(4)).ok());
  ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Millis(27), [&h] { h.sim().HealNetwork(); }).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].time, TimeNs::Millis(32));
  // 0->1, 1->2, 2->3, the lost 3->4, then 3->0, 0->1, 1->2, 2->3: no re-send.
  EXPECT_EQ(h.tracker().Sent(kRingElection), 8u);
}

// The ack is lost instead of the hop, so the receiver sees the hop twice.
// With ack_timeout 3 ms (every ack is due after 2 ms) and the link 1->0 cut
// for the first 2 ms: 1 gets E(0) at 1 ms, its ack is lost, it sends E(1) on.
// Node 0 re-sends E(0) at 3 ms; node 1, already a participant, acks it again
// and forwards nothing. E(4) comes home at 9 ms as without the loss.
TEST(RingTest, LostAck_DuplicateHopAckedAgainButForwardedOnce) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), [](OptionValues& o) {
    o.Set("start_election", kStartLowest);
    o.Set("ack_timeout", TimeNs::Millis(3).ns());
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().CutOneWay(NodeId(1), NodeId(0)).ok());
  ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Millis(2), [&h] { h.sim().HealNetwork(); }).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].time, TimeNs::Millis(9));
  // Nine hops (0->1 ... 3->4, then E(4) round) plus the one re-send.
  EXPECT_EQ(h.tracker().Sent(kRingElection), 10u);
  EXPECT_EQ(h.tracker().Sent(kRingElected), 5u);
  // Every delivered hop is acked, the duplicate included: 10 + 5.
  EXPECT_EQ(h.tracker().Sent(kRingAck), 15u);
}

// Both handlers that pass a larger id on see a duplicate: with ack_timeout
// 3 ms, node 0's acks to 4 are cut while E(4) (received at 5 ms) and ELECTED
// (received at 10 ms) are acked. Node 4 re-sends each; node 0 acks the copies
// but has already forwarded that id and that ELECTED, so passes neither on.
TEST(RingTest, LostAcks_DuplicateElectionAndElectedNotPassedOnAgain) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), [](OptionValues& o) {
    o.Set("start_election", kStartLowest);
    o.Set("ack_timeout", TimeNs::Millis(3).ns());
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  for (const int64_t from_us : {4500, 9500}) {
    const auto cut_acks_to_4 = [&h] { (void)h.sim().CutOneWay(NodeId(0), NodeId(4)); };
    ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Micros(from_us), cut_acks_to_4).ok());
    ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Micros(from_us + 2000), [&h] { h.sim().HealNetwork(); }).ok());
  }
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].time, TimeNs::Millis(9));
  // The nine hops of a loss-free round plus one re-send of each kind.
  EXPECT_EQ(h.tracker().Sent(kRingElection), 10u);
  EXPECT_EQ(h.tracker().Sent(kRingElected), 6u);
  EXPECT_EQ(h.tracker().Sent(kRingAck), 16u);
}

// The would-be winner dies with the election message on its way to it: node 3
// sends E(3) to 4 at 3 ms, 4 crashes at 3.5 ms. Node 3 skips 4 after
// ack_timeout, E(3) goes round 0, 1, 2 (all smaller, all participants that
// forward larger ids) and comes home: 3 wins the same round.
TEST(RingTest, LargestIdCrashedMidElection_NextLargestWinsSameRound) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("start_election", kStartLowest); });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().ScheduleAt(TimeNs::Micros(3500), [&h] { (void)h.sim().Crash(NodeId(4)); }).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
}

TEST(RingTest, PartitionFromStart_EachSideElectsItsOwnLeader) {
  ClusterHarness h(RingAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().Partition({{NodeId(0), NodeId(1)}, {NodeId(2), NodeId(3), NodeId(4)}}).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  // No quorum: each side's sub-ring (dead successors skipped) elects its largest id.
  EXPECT_EQ(h.tracker().Leaders(), (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(h.tracker().believed_leader, (std::vector<int64_t>{1, 1, 4, 4, 4}));
  // Both in the first round: node 1 skips 2, 3 and 4 at three tries of 25 ms
  // each, 225 ms in all, longer than heartbeat_timeout (200 ms) but within
  // the round's (ack_retries + 1) heartbeat timeouts.
  ASSERT_EQ(h.tracker().leader_claims.size(), 2u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
  EXPECT_EQ(h.tracker().leader_claims[1].term, 1);

  // Once healed, the larger id of the shared epoch wins everywhere.
  h.sim().HealNetwork();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// Message counts with a fixed 1 ms latency and no loss. "Every node starts at
// once" means every node initiates at t=0, before any message can arrive
// (the first arrivals are at 1 ms), so every node is already a participant
// when the first id reaches it: exactly the textbook setting. ACKs, the
// ELECTED round and heartbeats are separate message types.
class RingCountTest : public ::testing::TestWithParam<uint32_t> {};

// Ids decreasing along the direction of travel (position i has id n-i):
// every id is forwarded until it reaches node 0, the largest. Node 0's id
// makes n hops; the id of node j >= 1 makes n-j hops (j -> ... -> n-1 -> 0).
// n + sum_{j=1}^{n-1} (n-j) = n + n(n-1)/2 = n(n+1)/2 ELECTION messages.
TEST_P(RingCountTest, AllStartIdsDecreasing_ElectionMessagesAreNTimesNPlusOneOverTwo) {
  const uint32_t n = GetParam();
  std::vector<int64_t> ids;
  for (uint32_t i = 0; i < n; ++i) ids.push_back(n - i);
  ClusterHarness h(RingAlgorithm(), n, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [&ids](OptionValues& o) { o.SetList("ids", ids); });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Sent(kRingElection), uint64_t{n} * (n + 1) / 2);
  EXPECT_EQ(h.tracker().Sent(kRingElected), uint64_t{n});
  // One ack per ring hop, nothing retransmitted.
  EXPECT_EQ(h.tracker().Sent(kRingAck), uint64_t{n} * (n + 1) / 2 + n);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{0});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// Ids increasing along the direction of travel (the default: id = index):
// each node's own id dies at its successor (a larger participant) except the
// largest, which goes all the way round. n initial messages + n-1 forwards of
// the largest id = 2n-1 ELECTION messages.
TEST_P(RingCountTest, AllStartIdsIncreasing_ElectionMessagesAreTwoNMinusOne) {
  const uint32_t n = GetParam();
  ClusterHarness h(RingAlgorithm(), n, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Sent(kRingElection), 2 * uint64_t{n} - 1);
  EXPECT_EQ(h.tracker().Sent(kRingElected), uint64_t{n});
  EXPECT_EQ(h.tracker().Sent(kRingAck), 3 * uint64_t{n} - 1);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{n - 1});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

INSTANTIATE_TEST_SUITE_P(NodeCounts, RingCountTest, ::testing::Range(3u, 9u));

absl::Status ValidateWith(const std::function<void(OptionValues&)>& configure) {
  OptionValues options = OptionValues::Defaults(RingAlgorithm().options());
  configure(options);
  Cluster cluster;
  cluster.node_count = 5;
  return RingAlgorithm().Validate(options, cluster);
}

TEST(RingTest, Validate_AcceptsDefaultsAndDistinctIds) {
  EXPECT_TRUE(ValidateWith([](OptionValues&) {}).ok());
  EXPECT_TRUE(ValidateWith([](OptionValues& o) { o.SetList("ids", {-4, 0, 12, 7, 3}); }).ok());
}

TEST(RingTest, Validate_RejectsDuplicateIdsNamingBothPositions) {
  const absl::Status status = ValidateWith([](OptionValues& o) { o.SetList("ids", {2, 7, 5, 7, 9}); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "option ids: id 7 appears twice (positions 1 and 3)");
}

TEST(RingTest, Validate_RejectsWrongIdCount) {
  const absl::Status status = ValidateWith([](OptionValues& o) { o.SetList("ids", {1, 2, 3, 4}); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "option ids: expected 5 entries (one per node), got 4");
}

TEST(RingTest, Validate_RejectsHeartbeatIntervalNotBelowTimeout) {
  const absl::Status status =
      ValidateWith([](OptionValues& o) { o.Set("heartbeat_interval", TimeNs::Seconds(1).ns()); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "option heartbeat_interval (1s) must be shorter than heartbeat_timeout (200ms): followers would "
            "suspect a healthy leader");
}

TEST(RingTest, Validate_RejectsAckTimeoutNotBelowHeartbeatTimeout) {
  const absl::Status status = ValidateWith([](OptionValues& o) { o.Set("ack_timeout", TimeNs::Millis(250).ns()); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "option ack_timeout (250ms) must be shorter than heartbeat_timeout (200ms): skipping one dead successor "
            "would outlast the election");
}

TEST(RingTest, Validate_RejectsAckRetriesOutlastingHeartbeatTimeout) {
  // 3 tries x 70ms = 210ms >= 200ms.
  const absl::Status status = ValidateWith([](OptionValues& o) { o.Set("ack_timeout", TimeNs::Millis(70).ns()); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "option ack_timeout (70ms) times (ack_retries + 1) (3) = 210ms must be shorter than heartbeat_timeout "
            "(200ms): skipping one dead successor would take longer than noticing a silent leader");
  // Exactly heartbeat_timeout is already too long.
  EXPECT_FALSE(ValidateWith([](OptionValues& o) {
                 o.Set("ack_timeout", TimeNs::Millis(50).ns());
                 o.Set("ack_retries", 3);
               }).ok());
  // Fewer retries make the same ack_timeout fit.
  EXPECT_TRUE(ValidateWith([](OptionValues& o) {
                o.Set("ack_timeout", TimeNs::Millis(70).ns());
                o.Set("ack_retries", 1);
              }).ok());
  EXPECT_TRUE(ValidateWith([](OptionValues& o) {
                o.Set("ack_timeout", TimeNs::Millis(199).ns());
                o.Set("ack_retries", 0);
              }).ok());
}

TEST(RingTest, Options_AckRetriesDefaultsToTwoWithinZeroToTen) {
  const std::vector<OptionSpec>& specs = RingAlgorithm().options();
  const auto it = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& s) { return s.name == "ack_retries"; });
  ASSERT_NE(it, specs.end());
  EXPECT_EQ(it->type, OptionType::kInt);
  EXPECT_EQ(it->default_value, 2);
  EXPECT_EQ(it->min, 0);
  EXPECT_EQ(it->max, 10);
}

TEST(RingTest, Mutants_EachIsSelectableByTheBugOptionAndBuildsItsOwnNode) {
  ASSERT_EQ(&RingAlgorithm().mutants(), &ring::Mutants());
  testing::ExpectEveryMutantSelectable<ring::RingNode>(RingAlgorithm());
}

uint64_t RunHash(uint64_t seed) {
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(10));
  link.drop = sim::Probability::FromParts(sim::Probability::kOne / 20);
  return testing::CrashRestartTraceHash(RingAlgorithm(), seed, link, NodeId(2));
}

TEST(RingTest, Determinism_SameSeedSameTraceHash) {
  const uint64_t first = RunHash(7);
  EXPECT_EQ(first, RunHash(7));
  EXPECT_NE(first, RunHash(8));
}

}  // namespace
}  // namespace algorithms
