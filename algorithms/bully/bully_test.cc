#include "algorithms/bully/bully.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "algorithms/bully/bully_mutants.h"
#include "algorithms/bully/bully_node.h"
#include "algorithms/testing/cluster_harness.h"
#include "algorithms/testing/mutant_checks.h"
#include "gtest/gtest.h"
#include "sim/trace.h"

namespace algorithms {
namespace {

using sim::NodeId;
using sim::TimeNs;
using testing::ClusterHarness;

TEST(BullyTest, Registry_FindsBullyByName) {
  EXPECT_EQ(FindAlgorithm("bully"), &BullyAlgorithm());
  EXPECT_EQ(BullyAlgorithm().name(), "bully");
}

TEST(BullyTest, HealthyNetwork_HighestIdLeadsAndEveryNodeBelievesIt) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].term, 1);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(h.tracker().term[i], 1) << "node " << i;
  // The leader works: its fenced writes reach the resource and are accepted.
  EXPECT_GT(h.tracker().writes_accepted, 0u);
  EXPECT_EQ(h.tracker().writes_rejected, 0u);
}

TEST(BullyTest, LeaderCrash_NextHighestTakesOverThenRecoveredHighestBulliesBack) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});

  ASSERT_TRUE(h.sim().Crash(NodeId(4)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  EXPECT_EQ(h.tracker().leader_claims.back().term, 2);

  ASSERT_TRUE(h.sim().Restart(NodeId(4)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
  // The recovered node kept epoch 1 in stable storage but heard node 3's
  // epoch 2 while waiting for answers, so it took a fresh epoch: every
  // leadership has its own epoch (and fencing token).
  ASSERT_EQ(h.tracker().leader_claims.size(), 3u);
  EXPECT_EQ(h.tracker().leader_claims.back().node, NodeId(4));
  EXPECT_EQ(h.tracker().leader_claims.back().term, 3);
  EXPECT_EQ(h.tracker().writes_rejected, 0u);
}

// True when no two nodes ever claimed leadership of the same epoch.
bool EveryEpochHasOneLeader(const testing::ObservationTracker& tracker) {
  std::map<int64_t, NodeId> leader_of_epoch;
  for (const auto& claim : tracker.leader_claims) {
    const auto [it, inserted] = leader_of_epoch.emplace(claim.term, claim.node);
    if (!inserted && it->second != claim.node) return false;
  }
  return true;
}

// Runs 1s, crashes the top node (4) and runs another second, by when node 3
// leads; returns node 3's epoch. Fails the test if node 3 does not lead.
int64_t CrashTopNodeUntilNode3Leads(ClusterHarness& h) {
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_TRUE(h.sim().Crash(NodeId(4)).ok());
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  return h.tracker().leader_claims.empty() ? -1 : h.tracker().leader_claims.back().term;
}

// The top node (4) came back and leads alone, in an epoch above `earlier`,
// and no epoch ever had two leaders.
void ExpectTopNodeTookOverAbove(ClusterHarness& h, int64_t earlier) {
  EXPECT_TRUE(EveryEpochHasOneLeader(h.tracker()));
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_EQ(h.tracker().leader_claims.back().node, NodeId(4));
  EXPECT_GT(h.tracker().leader_claims.back().term, earlier);
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// Runs `action` `delay` after `coordinator` sends its first heartbeat past
// `after`, so that the next heartbeat is almost a whole interval away.
class AfterHeartbeat final : public sim::TraceSink {
 public:
  AfterHeartbeat(sim::Simulator& sim, NodeId coordinator, TimeNs after, TimeNs delay, std::function<void()> action)
      : sim_(sim), coordinator_(coordinator), after_(after), delay_(delay), action_(std::move(action)) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (acted_at || r.kind != sim::TraceKind::kSend || r.node != coordinator_ || r.time < after_) return;
    if (r.payload == nullptr || !r.payload->Is(kBullyHeartbeat)) return;
    acted_at = r.time + delay_;
    EXPECT_TRUE(sim_.ScheduleAt(*acted_at, action_).ok());
  }
  std::optional<TimeNs> acted_at;

 private:
  sim::Simulator& sim_;
  NodeId coordinator_;
  TimeNs after_;
  TimeNs delay_;
  std::function<void()> action_;
};

// Heartbeats further apart than answer_timeout: a valid configuration.
void SparseHeartbeats(OptionValues& o) {
  o.Set("heartbeat_interval", TimeNs::Millis(150).ns());
  o.Set("heartbeat_timeout", TimeNs::Millis(400).ns());
  o.Set("answer_timeout", TimeNs::Millis(100).ns());
}

// heartbeat_interval above answer_timeout is a valid configuration. The top
// node restarts just after node 3's heartbeat has arrived everywhere: the next
// one comes 150ms later, after answer_timeout. The restarted node must still
// learn node 3's epoch before it announces, and take a higher one.
TEST(BullyTest, RestartBetweenSparseHeartbeats_RecoveredTopNodeTakesAHigherEpoch) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), SparseHeartbeats);
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  const int64_t interim_epoch = CrashTopNodeUntilNode3Leads(h);

  AfterHeartbeat restart(h.sim(), NodeId(3), h.sim().now(), TimeNs::Millis(2),
                         [&h] { EXPECT_TRUE(h.sim().Restart(NodeId(4)).ok()); });
  h.sim().AddTraceSink(&restart);
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
  ASSERT_TRUE(restart.acted_at.has_value());
  ExpectTopNodeTookOverAbove(h, interim_epoch);
}

// The same for a first boot held back by a pause, with the node cut off
// meanwhile (so no held message tells it of node 3): its stored epoch is 0.
TEST(BullyTest, FirstBootAfterPause_TopNodeTakesAHigherEpoch) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)), SparseHeartbeats);
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().Pause(NodeId(4)).ok());  // before its boot event runs
  ASSERT_TRUE(h.sim().Partition({{NodeId(4)}, {NodeId(0), NodeId(1), NodeId(2), NodeId(3)}}).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{3});
  const int64_t first_epoch = h.tracker().leader_claims.back().term;

  AfterHeartbeat resume(h.sim(), NodeId(3), h.sim().now(), TimeNs::Millis(2), [&h] {
    h.sim().HealNetwork();
    EXPECT_TRUE(h.sim().Resume(NodeId(4)).ok());
  });
  h.sim().AddTraceSink(&resume);
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  ASSERT_TRUE(resume.acted_at.has_value());
  ExpectTopNodeTookOverAbove(h, first_epoch);
}

// Default options; the top node restarts while node 3's heartbeats to it are
// cut for 120ms, longer than answer_timeout but shorter than
// heartbeat_timeout.
TEST(BullyTest, RestartWhileCoordinatorCutOff_RecoveredTopNodeTakesAHigherEpoch) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  const int64_t interim_epoch = CrashTopNodeUntilNode3Leads(h);

  ASSERT_TRUE(h.sim().CutOneWay(NodeId(3), NodeId(4)).ok());
  ASSERT_TRUE(h.sim().Restart(NodeId(4)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2) + TimeNs::Millis(120)).ok());
  h.sim().HealNetwork();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
  ExpectTopNodeTookOverAbove(h, interim_epoch);
}

// Fuzz seed 902's story, the reason Bully promises one leader per epoch
// under no crash: node 0 goes down knowing epoch 1; nodes 1 and 2 lead
// epochs 2 and 3 meanwhile; both are down when node 0 comes back. Nobody
// can tell it of epochs 2 and 3, and as the highest live id it must lead:
// it announces epoch 2, which node 1 led already.
TEST(BullyTest, RestartWhileEveryNodeThatKnewNewerEpochsIsDown_AnEpochIsLedTwice) {
  ClusterHarness h(BullyAlgorithm(), 3, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{2});
  ASSERT_TRUE(h.sim().Crash(NodeId(0)).ok());
  ASSERT_TRUE(h.sim().Crash(NodeId(2)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{1});
  ASSERT_TRUE(h.sim().Restart(NodeId(2)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{2});
  ASSERT_TRUE(h.sim().Crash(NodeId(1)).ok());
  ASSERT_TRUE(h.sim().Crash(NodeId(2)).ok());
  // Later than any message still on its way to it.
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3) + TimeNs::Millis(100)).ok());
  ASSERT_TRUE(h.sim().Restart(NodeId(0)).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(4)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{0});

  std::map<int64_t, std::set<uint32_t>> leaders_by_epoch;
  for (const auto& claim : h.tracker().leader_claims) leaders_by_epoch[claim.term].insert(claim.node.value());
  EXPECT_EQ(leaders_by_epoch[2], (std::set<uint32_t>{0, 1}));
  // Which is why the table does not promise it under crashes.
  for (const Guarantee& g : BullyAlgorithm().guarantees(OptionValues::Defaults(BullyAlgorithm().options()))) {
    if (g.invariant != "election_safety" && g.invariant != "unique_token") continue;
    EXPECT_FALSE(g.kept_under.Has(FaultKind::kCrash)) << g.invariant;
    EXPECT_FALSE(g.kept_under.Has(FaultKind::kPowerLoss)) << g.invariant;
  }
}

TEST(BullyTest, PartitionFromStart_EachSideElectsItsOwnLeader) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().Partition({{NodeId(0), NodeId(1)}, {NodeId(2), NodeId(3), NodeId(4)}}).ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  // No quorum in Bully: both sides have a coordinator at the same time.
  EXPECT_EQ(h.tracker().Leaders(), (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(h.tracker().believed_leader, (std::vector<int64_t>{1, 1, 4, 4, 4}));

  // Once healed, the higher coordinator of the shared epoch wins everywhere.
  h.sim().HealNetwork();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{4});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// Two coordinators of one epoch meet when the partition heals. Whatever the
// order their claims arrive in, no node, either coordinator included, ever
// believes in a lower id than its own: the promise Bully states with
// declare.rank_anytime. `bug` "leader_yields_to_lower" breaks it.
bool SomeNodeBelievesALowerIdAfterTheHeal(const std::string& bug) {
  ClusterHarness h(BullyAlgorithm(), 5, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [&](OptionValues& o) { o.Set(kBugOption, testing::BugIndex(BullyAlgorithm(), bug)); });
  EXPECT_TRUE(h.validation().ok()) << h.validation();
  EXPECT_TRUE(h.sim().Partition({{NodeId(0), NodeId(1)}, {NodeId(2), NodeId(3), NodeId(4)}}).ok());
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Leaders(), (std::vector<uint32_t>{1, 4}));
  h.sim().HealNetwork();
  for (TimeNs at = TimeNs::Seconds(1); at <= TimeNs::Seconds(3); at += TimeNs::Millis(1)) {
    EXPECT_TRUE(h.sim().RunUntil(at).ok());
    for (uint32_t node = 0; node < 5; ++node) {
      if (h.tracker().believed_leader[node] != vocab::kNobody && h.tracker().believed_leader[node] < node) return true;
    }
  }
  return false;
}

TEST(BullyTest, HealedSplit_NoNodeEverBelievesALowerId) {
  EXPECT_FALSE(SomeNodeBelievesALowerIdAfterTheHeal("none"));
  EXPECT_TRUE(SomeNodeBelievesALowerIdAfterTheHeal("leader_yields_to_lower"));
}

// Message counts with a fixed 1 ms latency and no loss (all default timeouts
// are far above the 2 ms round trip, so no timer fires during the election).
class BullyCountTest : public ::testing::TestWithParam<uint32_t> {};

// Node 0 alone starts. It challenges the n-1 higher ids; each of them, on its
// first challenge (all arrive at 1 ms), starts its own election exactly once
// and challenges its own higher ids; later challenges only get an ANSWER.
// Node n-1 has nobody above it. So node i sends n-1-i ELECTION messages for
// i = 0..n-2:  sum_{i=0}^{n-2} (n-1-i) = n(n-1)/2.
TEST_P(BullyCountTest, LowestStarts_ElectionMessagesAreNTimesNMinusOneOverTwo) {
  const uint32_t n = GetParam();
  ClusterHarness h(BullyAlgorithm(), n, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("start_election", 1); });  // "lowest"
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Sent(kBullyElection), uint64_t{n} * (n - 1) / 2);
  // Every node but the top one is challenged by node 0... and node i by all
  // i lower ids, each answered: also n(n-1)/2 answers.
  EXPECT_EQ(h.tracker().Sent(kBullyAnswer), uint64_t{n} * (n - 1) / 2);
  // One announcement to the n-1 others.
  EXPECT_EQ(h.tracker().Sent(kBullyCoordinator), uint64_t{n} - 1);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{n - 1});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// The top id starts: it has nobody to challenge, so 0 ELECTION messages; it
// announces itself after answer_timeout and the others (whose heartbeat
// timeout is longer) simply follow.
TEST_P(BullyCountTest, HighestStarts_NoElectionMessages) {
  const uint32_t n = GetParam();
  ClusterHarness h(BullyAlgorithm(), n, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("start_election", 2); });  // "highest"
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Sent(kBullyElection), 0u);
  EXPECT_EQ(h.tracker().Sent(kBullyAnswer), 0u);
  EXPECT_EQ(h.tracker().Sent(kBullyCoordinator), uint64_t{n} - 1);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{n - 1});
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.AllNodes()));
}

// Everybody starts at time 0: node i challenges its n-1-i higher ids at once,
// and every challenge then finds a node already in an election (no second
// election anywhere): again n(n-1)/2.
TEST_P(BullyCountTest, AllStart_ElectionMessagesAreNTimesNMinusOneOverTwo) {
  const uint32_t n = GetParam();
  ClusterHarness h(BullyAlgorithm(), n, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)));
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(h.tracker().Sent(kBullyElection), uint64_t{n} * (n - 1) / 2);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{n - 1});
}

INSTANTIATE_TEST_SUITE_P(NodeCounts, BullyCountTest, ::testing::Range(3u, 9u));

absl::Status ValidateWith(const std::function<void(OptionValues&)>& configure) {
  OptionValues options = OptionValues::Defaults(BullyAlgorithm().options());
  configure(options);
  Cluster cluster;
  cluster.node_count = 5;
  return BullyAlgorithm().Validate(options, cluster);
}

TEST(BullyTest, Validate_AcceptsDefaults) {
  EXPECT_TRUE(ValidateWith([](OptionValues&) {}).ok());
}

TEST(BullyTest, Validate_RejectsHeartbeatIntervalNotBelowTimeout) {
  const absl::Status status = ValidateWith([](OptionValues& o) {
    o.Set("heartbeat_interval", TimeNs::Millis(200).ns());
    o.Set("heartbeat_timeout", TimeNs::Millis(200).ns());
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "option heartbeat_interval (200ms) must be shorter than heartbeat_timeout (200ms): followers would "
            "suspect a healthy coordinator");
}

TEST(BullyTest, Validate_RejectsAnswerTimeoutNotBelowCoordinatorTimeout) {
  const absl::Status status = ValidateWith([](OptionValues& o) {
    o.Set("answer_timeout", TimeNs::Millis(400).ns());
    o.Set("coordinator_timeout", TimeNs::Micros(300).ns());
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "option answer_timeout (400ms) must be shorter than coordinator_timeout (300us): the node that "
            "answered itself waits answer_timeout before it can announce");
}

TEST(BullyTest, Validate_HarnessRefusesToStartWithBadOptions) {
  ClusterHarness h(BullyAlgorithm(), 3, 1, sim::LinkConfig::Fixed(TimeNs::Millis(1)),
                   [](OptionValues& o) { o.Set("heartbeat_interval", TimeNs::Seconds(1).ns()); });
  EXPECT_FALSE(h.validation().ok());
}

TEST(BullyTest, Mutants_EachIsSelectableByTheBugOptionAndBuildsItsOwnNode) {
  ASSERT_EQ(&BullyAlgorithm().mutants(), &bully::Mutants());
  testing::ExpectEveryMutantSelectable<bully::BullyNode>(BullyAlgorithm());
}

uint64_t RunHash(uint64_t seed) {
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(20));
  link.drop = sim::Probability::FromParts(sim::Probability::kOne / 20);
  return testing::CrashRestartTraceHash(BullyAlgorithm(), seed, link, NodeId(4));
}

TEST(BullyTest, Determinism_SameSeedSameTraceHash) {
  const uint64_t first = RunHash(7);
  EXPECT_EQ(first, RunHash(7));
  // The hash does see the run: another seed draws other latencies and losses.
  EXPECT_NE(first, RunHash(8));
}

}  // namespace
}  // namespace algorithms
