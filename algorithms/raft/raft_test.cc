#include "algorithms/raft/raft.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/raft/raft_mutants.h"
#include "algorithms/testing/cluster_harness.h"
#include "algorithms/testing/mutant_checks.h"
#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/trace.h"

namespace algorithms {
namespace {

using ::algorithms::testing::ClusterHarness;
using sim::NodeId;
using sim::TimeNs;

sim::LinkConfig JitteryLink() {
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(5));
  return link;
}

void SetBug(OptionValues& options, const std::string& bug) {
  for (const OptionSpec& spec : RaftAlgorithm().options()) {
    if (spec.name != "bug") continue;
    for (size_t i = 0; i < spec.choices.size(); ++i) {
      if (spec.choices[i] == bug) {
        options.Set("bug", static_cast<int64_t>(i));
        return;
      }
    }
  }
  FAIL() << "no bug named " << bug;
}

std::function<void(OptionValues&)> Timeouts(TimeNs min, TimeNs max, const std::string& bug = "none") {
  return [=](OptionValues& o) {
    o.Set("election_timeout_min", min.ns());
    o.Set("election_timeout_max", max.ns());
    SetBug(o, bug);
  };
}

// Runs in small steps until every live node follows one leader; returns when.
std::optional<TimeNs> RunUntilAgreement(ClusterHarness& h, TimeNs deadline) {
  for (TimeNs t = h.sim().now(); t <= deadline; t += TimeNs::Millis(5)) {
    EXPECT_TRUE(h.sim().RunUntil(t).ok());
    if (h.tracker().AgreeOnSingleLeader(h.LiveNodes())) return h.sim().now();
  }
  return std::nullopt;
}

uint32_t OnlyLeader(ClusterHarness& h) {
  const auto leaders = h.tracker().Leaders();
  EXPECT_EQ(leaders.size(), 1u);
  return leaders.empty() ? 0 : leaders[0];
}

// True when two different nodes claimed leadership of the same term.
bool TwoLeadersInOneTerm(const testing::ObservationTracker& tracker) {
  std::map<int64_t, std::set<uint32_t>> claimers_by_term;
  for (const auto& claim : tracker.leader_claims) claimers_by_term[claim.term].insert(claim.node.value());
  for (const auto& [term, claimers] : claimers_by_term) {
    if (claimers.size() > 1) return true;
  }
  return false;
}

TEST(Raft_Registry, FindsRaftByName) {
  EXPECT_EQ(FindAlgorithm("raft"), &RaftAlgorithm());
  std::set<std::string> names;
  for (const OptionSpec& spec : RaftAlgorithm().options()) names.insert(spec.name);
  EXPECT_EQ(names, (std::set<std::string>{"bug", "check_quorum", "election_timeout_max", "election_timeout_min",
                                          "heartbeat_interval", "pre_vote", "step_down_on_lost_vote"}));
}

TEST(Raft_Mutants, EachIsSelectableByTheBugOptionAndBuildsItsOwnNode) {
  ASSERT_EQ(&RaftAlgorithm().mutants(), &raft::Mutants());
  testing::ExpectEveryMutantSelectable<raft::RaftNode>(RaftAlgorithm());
}

TEST(Raft_Healthy, FiveNodesElectOneLeaderThatEveryoneBelieves) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink());
    ASSERT_TRUE(h.validation().ok()) << h.validation();
    // First timeouts fire in [150ms, 300ms]; a round trip is at most 10ms.
    const auto agreed = RunUntilAgreement(h, TimeNs::Millis(1000));
    ASSERT_TRUE(agreed.has_value()) << "seed " << seed;
    const uint32_t leader = OnlyLeader(h);
    ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
    // Heartbeats keep the same leader in place on a healthy network.
    EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes())) << "seed " << seed;
    EXPECT_EQ(OnlyLeader(h), leader) << "seed " << seed;
    EXPECT_EQ(h.tracker().leader_claims.size(), 1u) << "seed " << seed;
    for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(h.tracker().term[i], h.tracker().term[leader]);
    // The leader works with its term as fencing token; the resource accepts it.
    EXPECT_GT(h.tracker().writes_accepted, 10u);
    EXPECT_EQ(h.tracker().writes_rejected, 0u);
  }
}

TEST(Raft_Healthy, SingleNodeElectsItself) {
  ClusterHarness h(RaftAlgorithm(), 1, 7, JitteryLink());
  ASSERT_TRUE(h.validation().ok());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Millis(400)).ok());
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{0});
  EXPECT_EQ(h.tracker().term[0], 1);
}

TEST(Raft_LeaderCrash, NewLeaderWithHigherTermAndOldLeaderRejoinsAsFollower) {
  ClusterHarness h(RaftAlgorithm(), 5, 11, JitteryLink());
  ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  const uint32_t old_leader = OnlyLeader(h);
  const int64_t old_term = h.tracker().term[old_leader];

  ASSERT_TRUE(h.sim().Crash(NodeId(old_leader)).ok());
  ASSERT_TRUE(RunUntilAgreement(h, h.sim().now() + TimeNs::Seconds(1)).has_value());
  const uint32_t new_leader = OnlyLeader(h);
  EXPECT_NE(new_leader, old_leader);
  const int64_t new_term = h.tracker().term[new_leader];
  EXPECT_GT(new_term, old_term);

  ASSERT_TRUE(h.sim().Restart(NodeId(old_leader)).ok());
  // The term it led survived the crash in stable storage.
  const auto& storage = h.sim().StableStorageOf(NodeId(old_leader));
  ASSERT_TRUE(storage.count("term"));
  EXPECT_EQ(storage.find("term")->second, old_term);

  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(500)).ok());
  EXPECT_EQ(h.tracker().role[old_leader], vocab::Role::kFollower);
  EXPECT_EQ(h.tracker().believed_leader[old_leader], static_cast<int64_t>(new_leader));
  EXPECT_EQ(h.tracker().term[old_leader], new_term);
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  EXPECT_EQ(OnlyLeader(h), new_leader);
}

TEST(Raft_Partition, IsolatedLeaderKeepsItsOldTermUntilHealThenStepsDown) {
  ClusterHarness h(RaftAlgorithm(), 5, 3, JitteryLink());
  ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  const uint32_t old_leader = OnlyLeader(h);
  const int64_t old_term = h.tracker().term[old_leader];

  ASSERT_TRUE(h.sim().Partition({{NodeId(old_leader)}}).ok());
  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
  // Without check_quorum nothing tells the isolated leader to stop.
  EXPECT_EQ(h.tracker().role[old_leader], vocab::Role::kLeader);
  EXPECT_EQ(h.tracker().term[old_leader], old_term);
  const auto leaders = h.tracker().Leaders();
  ASSERT_EQ(leaders.size(), 2u);
  const uint32_t new_leader = leaders[0] == old_leader ? leaders[1] : leaders[0];
  const int64_t new_term = h.tracker().term[new_leader];
  EXPECT_GT(new_term, old_term);

  h.sim().HealNetwork();
  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(300)).ok());
  EXPECT_EQ(h.tracker().role[old_leader], vocab::Role::kFollower);
  EXPECT_EQ(h.tracker().term[old_leader], new_term);
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  EXPECT_EQ(OnlyLeader(h), new_leader);
}

// Returns how long after isolation the isolated leader left the leader role
// (nullopt if it still leads after 1s).
std::optional<TimeNs> IsolatedLeaderStepDownDelay(bool check_quorum, uint64_t seed) {
  ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink(),
                   [&](OptionValues& o) { o.Set("check_quorum", check_quorum ? 1 : 0); });
  EXPECT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  // Let a check-quorum period pass while healthy so the test also covers a
  // leader that has already renewed its quorum once.
  EXPECT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(237)).ok());
  const uint32_t leader = OnlyLeader(h);
  EXPECT_TRUE(h.sim().Partition({{NodeId(leader)}}).ok());
  const TimeNs isolated_at = h.sim().now();
  for (TimeNs t = isolated_at; t <= isolated_at + TimeNs::Seconds(1); t += TimeNs::Millis(1)) {
    EXPECT_TRUE(h.sim().RunUntil(t).ok());
    if (h.tracker().role[leader] != vocab::Role::kLeader) return t - isolated_at;
  }
  return std::nullopt;
}

TEST(Raft_CheckQuorum, IsolatedLeaderStepsDownWithinAboutOneElectionTimeout) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto delay = IsolatedLeaderStepDownDelay(/*check_quorum=*/true, seed);
    ASSERT_TRUE(delay.has_value()) << "seed " << seed;
    // The quorum is checked every election_timeout_min (150ms); the check
    // right after isolation may still count replies from before it.
    EXPECT_LE(*delay, TimeNs::Millis(300)) << "seed " << seed;
    // Without the option the same leader never notices.
    EXPECT_FALSE(IsolatedLeaderStepDownDelay(/*check_quorum=*/false, seed).has_value()) << "seed " << seed;
  }
}

struct PreVoteOutcome {
  int64_t term_before = 0;
  int64_t isolated_term_while_cut = 0;
  int64_t isolated_term_after_heal = 0;
  int64_t cluster_term_after_heal = 0;
  bool same_leader_after_heal = false;
};

PreVoteOutcome IsolateFollowerAndHeal(bool pre_vote, uint64_t seed) {
  ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink(),
                   [&](OptionValues& o) { o.Set("pre_vote", pre_vote ? 1 : 0); });
  PreVoteOutcome out;
  EXPECT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  const uint32_t leader = OnlyLeader(h);
  const uint32_t follower = (leader + 1) % 5;
  out.term_before = h.tracker().term[leader];
  EXPECT_TRUE(h.sim().Partition({{NodeId(follower)}}).ok());
  EXPECT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(2)).ok());
  out.isolated_term_while_cut = h.tracker().term[follower];
  h.sim().HealNetwork();
  EXPECT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  const uint32_t leader_after = OnlyLeader(h);
  out.isolated_term_after_heal = h.tracker().term[follower];
  out.cluster_term_after_heal = h.tracker().term[leader_after];
  out.same_leader_after_heal = leader_after == leader && out.cluster_term_after_heal == out.term_before;
  return out;
}

TEST(Raft_PreVote, IsolatedFollowerDoesNotInflateItsTerm) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const PreVoteOutcome with = IsolateFollowerAndHeal(/*pre_vote=*/true, seed);
    EXPECT_EQ(with.isolated_term_while_cut, with.term_before) << "seed " << seed;
    EXPECT_EQ(with.isolated_term_after_heal, with.cluster_term_after_heal) << "seed " << seed;
    EXPECT_TRUE(with.same_leader_after_heal) << "seed " << seed;

    // Without pre-vote the cut-off follower campaigns alone, term after term,
    // and deposes the leader when it comes back.
    const PreVoteOutcome without = IsolateFollowerAndHeal(/*pre_vote=*/false, seed);
    EXPECT_GT(without.isolated_term_while_cut, without.term_before + 3) << "seed " << seed;
    EXPECT_FALSE(without.same_leader_after_heal) << "seed " << seed;
    EXPECT_GE(without.cluster_term_after_heal, without.isolated_term_while_cut) << "seed " << seed;
  }
}

TEST(Raft_SplitVote, WithoutRandomizationCandidatesSplitTheVoteAgainAndAgain) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    // Same seed, same network, only the timeout range differs.
    ClusterHarness fixed(RaftAlgorithm(), 5, seed, JitteryLink(), Timeouts(TimeNs::Millis(150), TimeNs::Millis(150)));
    ClusterHarness randomized(RaftAlgorithm(), 5, seed, JitteryLink(),
                              Timeouts(TimeNs::Millis(150), TimeNs::Millis(300)));
    ASSERT_TRUE(fixed.sim().RunUntil(TimeNs::Seconds(3)).ok());
    ASSERT_TRUE(randomized.sim().RunUntil(TimeNs::Seconds(3)).ok());

    // Every node times out at the same instant, votes for itself and rejects
    // the others: a new term every 150ms and never a winner.
    EXPECT_TRUE(fixed.tracker().leader_claims.empty()) << "seed " << seed;
    for (uint32_t i = 0; i < 5; ++i) EXPECT_GE(fixed.tracker().term[i], 15) << "seed " << seed;

    // Randomized timeouts let one node ask first and win almost at once.
    ASSERT_EQ(randomized.tracker().leader_claims.size(), 1u) << "seed " << seed;
    EXPECT_LE(randomized.tracker().leader_claims[0].term, 2) << "seed " << seed;
    EXPECT_TRUE(randomized.tracker().AgreeOnSingleLeader(randomized.LiveNodes())) << "seed " << seed;
  }
}

// How many seeds of 1..200 show two leaders of one term on three nodes.
int SeedsWithTwoLeadersInOneTerm(TimeNs min, TimeNs max, const std::string& bug, int* seeds_with_leader) {
  int bad = 0;
  *seeds_with_leader = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    ClusterHarness h(RaftAlgorithm(), 3, seed, JitteryLink(), Timeouts(min, max, bug));
    EXPECT_TRUE(h.validation().ok());
    EXPECT_TRUE(h.sim().RunUntil(TimeNs::Seconds(1)).ok());
    if (!h.tracker().leader_claims.empty()) ++*seeds_with_leader;
    if (TwoLeadersInOneTerm(h.tracker())) ++bad;
  }
  return bad;
}

TEST(Raft_Bug, VoteTwiceElectsTwoLeadersInOneTermAndTheCorrectVersionNever) {
  int with_leader = 0;
  const TimeNs ms150 = TimeNs::Millis(150);
  EXPECT_GT(SeedsWithTwoLeadersInOneTerm(ms150, ms150, "vote_twice", &with_leader), 0);
  EXPECT_EQ(SeedsWithTwoLeadersInOneTerm(ms150, ms150, "none", &with_leader), 0);
  // Timeouts spread over only 3ms: elections overlap often, yet the correct
  // version still elects leaders and never two in one term.
  const TimeNs ms153 = TimeNs::Millis(153);
  EXPECT_GT(SeedsWithTwoLeadersInOneTerm(ms150, ms153, "vote_twice", &with_leader), 0);
  EXPECT_EQ(SeedsWithTwoLeadersInOneTerm(ms150, ms153, "none", &with_leader), 0);
  EXPECT_GT(with_leader, 150);
}

TEST(Raft_Bug, IgnoreHigherTermLeavesTwoLeadersAfterAPartitionHeals) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    for (const std::string bug : {"ignore_higher_term", "none"}) {
      ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink(),
                       Timeouts(TimeNs::Millis(150), TimeNs::Millis(300), bug));
      ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
      const uint32_t old_leader = OnlyLeader(h);
      ASSERT_TRUE(h.sim().Partition({{NodeId(old_leader)}}).ok());
      ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
      h.sim().HealNetwork();
      ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
      if (bug == "none") {
        EXPECT_EQ(h.tracker().Leaders().size(), 1u) << "seed " << seed;
        EXPECT_EQ(h.tracker().writes_rejected, 0u) << "seed " << seed;
      } else {
        EXPECT_EQ(h.tracker().Leaders().size(), 2u) << "seed " << seed;
        EXPECT_EQ(h.tracker().role[old_leader], vocab::Role::kLeader) << "seed " << seed;
        // Its writes carry the old term and the fencing resource refuses them.
        EXPECT_GT(h.tracker().writes_rejected, 0u) << "seed " << seed;
      }
    }
  }
}

absl::Status ValidateWith(const std::function<void(OptionValues&)>& configure) {
  OptionValues options = OptionValues::Defaults(RaftAlgorithm().options());
  configure(options);
  Cluster cluster;
  cluster.node_count = 3;
  return RaftAlgorithm().Validate(options, cluster);
}

TEST(Raft_Validate, AcceptsDefaultsAndRejectsBadCombinationsNamingTheOptions) {
  EXPECT_TRUE(ValidateWith([](OptionValues&) {}).ok());
  EXPECT_TRUE(ValidateWith(Timeouts(TimeNs::Millis(150), TimeNs::Millis(150))).ok());

  const absl::Status inverted = ValidateWith(Timeouts(TimeNs::Millis(300), TimeNs::Millis(150)));
  EXPECT_EQ(inverted.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(inverted.message().find("election_timeout_max"), std::string::npos) << inverted;
  EXPECT_NE(inverted.message().find("election_timeout_min"), std::string::npos) << inverted;

  const absl::Status slow_heartbeat =
      ValidateWith([](OptionValues& o) { o.Set("heartbeat_interval", TimeNs::Millis(150).ns()); });
  EXPECT_EQ(slow_heartbeat.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(slow_heartbeat.message().find("heartbeat_interval"), std::string::npos) << slow_heartbeat;
  EXPECT_NE(slow_heartbeat.message().find("election_timeout_min"), std::string::npos) << slow_heartbeat;

  // A zero duration is outside the declared range (>= 1ns): refused as it is
  // set, so Validate never sees one.
  for (const std::string name : {"election_timeout_min", "election_timeout_max", "heartbeat_interval"}) {
    OptionValues options = OptionValues::Defaults(RaftAlgorithm().options());
    try {
      options.Set(name, 0);
      ADD_FAILURE() << name << " = 0 was accepted";
    } catch (const std::out_of_range& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(">= 1ns"), std::string::npos) << e.what();
    }
  }
}

// Follows every node's durable storage through the trace (persist, write,
// sync, power loss) and checks, for each Raft message as it leaves, that
// what it promises is on disk: a granted vote and its term, a candidate's
// own vote, entries a follower acknowledges or a leader sends.
class DurableBeforeSendSink final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    const uint32_t node = r.node.value();
    switch (r.kind) {
      case sim::TraceKind::kPersist: durable_[{node, std::string(r.detail)}] = r.value; return;
      case sim::TraceKind::kWrite: unsynced_[node][std::string(r.detail)] = r.value; return;
      case sim::TraceKind::kSync:
        for (const auto& [key, value] : unsynced_[node]) durable_[{node, key}] = value;
        unsynced_[node].clear();
        return;
      case sim::TraceKind::kCrash:
        if (r.detail == "power-loss") unsynced_[node].clear();
        return;
      case sim::TraceKind::kSend: break;
      default: return;
    }
    if (r.payload == nullptr) return;
    const sim::Message& m = *r.payload;
    const int64_t term = m.Get("term");
    if (m.Is(raft::kVote) && m.Get("granted") != 0) {
      Expect(Durable(node, "voted_for") == static_cast<int64_t>(r.peer.value()) && Durable(node, "term") == term);
    } else if (m.Is(raft::kRequestVote)) {
      Expect(Durable(node, "voted_for") == static_cast<int64_t>(node) && Durable(node, "term") == term);
    } else if (m.Is(raft::kAppendReply) && m.Get("success") != 0) {
      Expect(Durable(node, "log.length") >= m.Get("index"));
    } else if (m.Is(raft::kAppend) && m.Has("entry_term")) {
      const int64_t index = m.Get("prev_index") + 1;
      Expect(Durable(node, "log.length") >= index &&
             Durable(node, "log." + std::to_string(index) + ".id") == m.Get("entry"));
    }
  }
  int checked = 0;
  int not_durable = 0;

 private:
  int64_t Durable(uint32_t node, const std::string& key) const {
    auto it = durable_.find({node, key});
    return it == durable_.end() ? -2 : it->second;
  }
  void Expect(bool ok) {
    ++checked;
    if (!ok) ++not_durable;
  }
  std::map<std::pair<uint32_t, std::string>, int64_t> durable_;
  std::map<uint32_t, std::map<std::string, int64_t>> unsynced_;
};

int MessagesSentBeforeTheirStateWasDurable(const std::string& bug, int* checked) {
  ClusterHarness h(RaftAlgorithm(), 5, 5, JitteryLink(), Timeouts(TimeNs::Millis(150), TimeNs::Millis(300), bug));
  DurableBeforeSendSink sink;
  h.sim().AddTraceSink(&sink);
  EXPECT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  EXPECT_TRUE(h.sim().Crash(NodeId(OnlyLeader(h))).ok());
  EXPECT_TRUE(RunUntilAgreement(h, h.sim().now() + TimeNs::Seconds(1)).has_value());
  EXPECT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
  *checked = sink.checked;
  return sink.not_durable;
}

TEST(Raft_Persistence, TermVoteAndLogAreSyncedBeforeAnyMessageThatDependsOnThem) {
  int checked = 0;
  EXPECT_EQ(MessagesSentBeforeTheirStateWasDurable("none", &checked), 0);
  EXPECT_GT(checked, 150);  // votes, vote requests, entries sent and acknowledged
  // Without syncing, every one of them leaves with its state only in the page cache.
  EXPECT_EQ(MessagesSentBeforeTheirStateWasDurable("skip_sync", &checked), checked);
}

TEST(Raft_Persistence, RestartedNodeKeepsItsVoteOfTheTerm) {
  ClusterHarness h(RaftAlgorithm(), 3, 9, JitteryLink());
  ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  const uint32_t leader = OnlyLeader(h);
  const uint32_t voter = (leader + 1) % 3;
  const auto& storage = h.sim().StableStorageOf(NodeId(voter));
  const int64_t term = storage.find("term")->second;
  EXPECT_EQ(storage.find("voted_for")->second, static_cast<int64_t>(leader));  // persisted when it voted
  ASSERT_TRUE(h.sim().Crash(NodeId(voter)).ok());
  EXPECT_EQ(h.tracker().term[voter], 0);
  ASSERT_TRUE(h.sim().Restart(NodeId(voter)).ok());
  // The new process reports, at boot, the term it read back from stable storage.
  EXPECT_EQ(h.tracker().term[voter], term);
  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(300)).ok());
  EXPECT_EQ(h.tracker().role[voter], vocab::Role::kFollower);
  EXPECT_EQ(h.tracker().believed_leader[voter], static_cast<int64_t>(leader));
  EXPECT_EQ(h.tracker().term[voter], term);
}

TEST(Raft_Options, EveryCombinationRecoversASingleLeaderAfterFaults) {
  for (int pre_vote = 0; pre_vote <= 1; ++pre_vote) {
    for (int check_quorum = 0; check_quorum <= 1; ++check_quorum) {
      for (uint64_t seed = 1; seed <= 10; ++seed) {
        ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink(), [&](OptionValues& o) {
          o.Set("pre_vote", pre_vote);
          o.Set("check_quorum", check_quorum);
        });
        const std::string where = "pre_vote=" + std::to_string(pre_vote) +
                                  " check_quorum=" + std::to_string(check_quorum) + " seed=" + std::to_string(seed);
        ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value()) << where;
        const uint32_t first = OnlyLeader(h);
        ASSERT_TRUE(h.sim().Crash(NodeId(first)).ok());
        ASSERT_TRUE(RunUntilAgreement(h, h.sim().now() + TimeNs::Seconds(2)).has_value()) << where;
        const uint32_t second = OnlyLeader(h);
        EXPECT_NE(second, first) << where;
        // Cut the second leader off with one follower: a minority.
        const uint32_t buddy = (second + 1) % 5 == first ? (second + 2) % 5 : (second + 1) % 5;
        ASSERT_TRUE(h.sim().Partition({{NodeId(second), NodeId(buddy)}}).ok());
        ASSERT_TRUE(h.sim().Restart(NodeId(first)).ok());
        ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
        h.sim().HealNetwork();
        ASSERT_TRUE(RunUntilAgreement(h, h.sim().now() + TimeNs::Seconds(2)).has_value()) << where;
        EXPECT_FALSE(TwoLeadersInOneTerm(h.tracker())) << where;
        const int64_t term = h.tracker().term[OnlyLeader(h)];
        for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(h.tracker().term[i], term) << where;
      }
    }
  }
}

// ---- the replicated log ----

using LogEntry = testing::ObservationTracker::LogEntry;

// True when `prefix` is a prefix of `log`.
bool IsPrefix(const std::vector<LogEntry>& prefix, const std::vector<LogEntry>& log) {
  return prefix.size() <= log.size() && std::equal(prefix.begin(), prefix.end(), log.begin());
}

TEST(Raft_Log, FollowersHoldTheLeadersLogAndItsWritesCommit) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink());
    ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
    ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(3)).ok());
    const uint32_t leader = OnlyLeader(h);
    const auto& log = h.tracker().log[leader];
    // A no-op of its term, then one entry per write it sent.
    EXPECT_EQ(log.size(), 1 + h.tracker().Sent(kResourceWrite)) << "seed " << seed;
    for (uint32_t i = 0; i < 5; ++i) {
      EXPECT_TRUE(IsPrefix(h.tracker().log[i], log)) << "seed " << seed << " node " << i;
      EXPECT_GE(h.tracker().log[i].size() + 1, log.size()) << "seed " << seed << " node " << i;
    }
    // Everything but what the last heartbeat has not yet acknowledged is committed, as the leader has it.
    EXPECT_GE(h.tracker().committed.size() + 1, log.size()) << "seed " << seed;
    for (const auto& [index, entry] : h.tracker().committed) {
      EXPECT_EQ(entry, log[static_cast<size_t>(index - 1)]) << "seed " << seed;
    }
    EXPECT_EQ(h.tracker().conflicting_commits, 0u);
  }
}

TEST(Raft_Log, ADeposedLeadersUncommittedEntriesAreReplaced) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ClusterHarness h(RaftAlgorithm(), 5, seed, JitteryLink());
    ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
    const uint32_t old_leader = OnlyLeader(h);
    const size_t committed_before = h.tracker().committed.size();
    ASSERT_TRUE(h.sim().Partition({{NodeId(old_leader)}}).ok());
    ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
    // Alone, it went on appending its writes; none of them could commit.
    const std::vector<LogEntry> stranded = h.tracker().log[old_leader];
    EXPECT_GT(stranded.size(), committed_before + 5) << "seed " << seed;
    h.sim().HealNetwork();
    ASSERT_TRUE(RunUntilAgreement(h, h.sim().now() + TimeNs::Seconds(1)).has_value());
    ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(500)).ok());
    const uint32_t leader = OnlyLeader(h);
    ASSERT_NE(leader, old_leader);
    EXPECT_TRUE(IsPrefix(h.tracker().log[old_leader], h.tracker().log[leader])) << "seed " << seed;
    EXPECT_GE(h.tracker().log[old_leader].size() + 1, h.tracker().log[leader].size()) << "seed " << seed;
    // Its stranded entries are gone from every log and were never committed.
    const LogEntry& last_stranded = stranded.back();
    for (uint32_t i = 0; i < 5; ++i) {
      for (const LogEntry& e : h.tracker().log[i]) EXPECT_FALSE(e == last_stranded) << "seed " << seed;
    }
    for (const auto& [index, entry] : h.tracker().committed) EXPECT_FALSE(entry == last_stranded);
    EXPECT_EQ(h.tracker().conflicting_commits, 0u);
  }
}

TEST(Raft_Log, ARestartedFollowerRecoversItsLogAndCatchesUp) {
  ClusterHarness h(RaftAlgorithm(), 3, 4, JitteryLink());
  ASSERT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  ASSERT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  const uint32_t leader = OnlyLeader(h);
  const uint32_t follower = (leader + 1) % 3;
  const std::vector<LogEntry> before = h.tracker().log[follower];
  ASSERT_GT(before.size(), 10u);
  ASSERT_TRUE(h.sim().Crash(NodeId(follower)).ok());
  EXPECT_TRUE(h.tracker().log[follower].empty());
  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Seconds(1)).ok());
  ASSERT_TRUE(h.sim().Restart(NodeId(follower)).ok());
  EXPECT_EQ(h.tracker().log[follower], before);  // read back from stable storage at boot
  // Each entry's fields sit under "log.<index>.term" and "log.<index>.id".
  const auto& storage = h.sim().StableStorageOf(NodeId(follower));
  for (const size_t index : {size_t{1}, size_t{10}, before.size()}) {
    const std::string prefix = "log." + std::to_string(index) + ".";
    ASSERT_TRUE(storage.count(prefix + "term")) << prefix;
    EXPECT_EQ(storage.find(prefix + "term")->second, before[index - 1].term) << prefix;
    ASSERT_TRUE(storage.count(prefix + "id")) << prefix;
    EXPECT_EQ(storage.find(prefix + "id")->second, before[index - 1].entry) << prefix;
  }
  ASSERT_TRUE(h.sim().RunUntil(h.sim().now() + TimeNs::Millis(500)).ok());
  EXPECT_GE(h.tracker().log[follower].size() + 1, h.tracker().log[leader].size());
  EXPECT_TRUE(IsPrefix(h.tracker().log[follower], h.tracker().log[leader]));
}

// Crashes a follower in the given way; returns its term and log before the
// crash and what it recovered.
struct Recovery {
  int64_t term_before = 0, term_after = 0;
  std::vector<LogEntry> log_before, log_after;
};
Recovery CrashFollower(sim::CrashKind kind, const std::string& bug) {
  ClusterHarness h(RaftAlgorithm(), 3, 6, JitteryLink(), Timeouts(TimeNs::Millis(150), TimeNs::Millis(300), bug));
  EXPECT_TRUE(RunUntilAgreement(h, TimeNs::Seconds(1)).has_value());
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Seconds(2)).ok());
  const uint32_t follower = (OnlyLeader(h) + 1) % 3;
  Recovery out;
  out.term_before = h.tracker().term[follower];
  out.log_before = h.tracker().log[follower];
  EXPECT_TRUE(h.sim().Crash(NodeId(follower), kind).ok());
  EXPECT_TRUE(h.sim().Restart(NodeId(follower)).ok());
  out.term_after = h.tracker().term[follower];
  out.log_after = h.tracker().log[follower];
  return out;
}

TEST(Raft_PowerLoss, SyncedTermAndLogSurviveIt) {
  const Recovery r = CrashFollower(sim::CrashKind::kPowerLoss, "none");
  EXPECT_GT(r.log_before.size(), 10u);
  EXPECT_EQ(r.log_after, r.log_before);
  EXPECT_EQ(r.term_after, r.term_before);
}

TEST(Raft_PowerLoss, WithoutSyncAProcessCrashLosesNothingButAPowerLossLosesEverything) {
  const Recovery process_crash = CrashFollower(sim::CrashKind::kProcess, "skip_sync");
  EXPECT_EQ(process_crash.log_after, process_crash.log_before);
  EXPECT_EQ(process_crash.term_after, process_crash.term_before);
  const Recovery power_loss = CrashFollower(sim::CrashKind::kPowerLoss, "skip_sync");
  EXPECT_GT(power_loss.log_before.size(), 10u);
  EXPECT_TRUE(power_loss.log_after.empty());
  EXPECT_EQ(power_loss.term_after, 0);
}

uint64_t TraceHashOfFaultyRun(uint64_t seed, const std::function<void(OptionValues&)>& configure = nullptr,
                              testing::NodeSource nodes = testing::NodeSource::kNodeFactory) {
  ClusterHarness h(
      RaftAlgorithm(), 5, seed, JitteryLink(),
      [&](OptionValues& o) {
        o.Set("pre_vote", 1);
        o.Set("check_quorum", 1);
        if (configure) configure(o);
      },
      true, nodes);
  sim::TraceHasher hasher;
  h.sim().AddTraceSink(&hasher);
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Millis(600)).ok());
  EXPECT_TRUE(h.sim().Partition({{NodeId(0), NodeId(1)}}).ok());
  EXPECT_TRUE(h.sim().Crash(NodeId(2)).ok());
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Millis(1500)).ok());
  h.sim().HealNetwork();
  EXPECT_TRUE(h.sim().Restart(NodeId(2)).ok());
  EXPECT_TRUE(h.sim().RunUntil(TimeNs::Millis(3000)).ok());
  EXPECT_GT(hasher.records(), 1000u);
  return hasher.hash();
}

TEST(Raft_Determinism, SameSeedGivesTheSameTraceHash) {
  EXPECT_EQ(TraceHashOfFaultyRun(42), TraceHashOfFaultyRun(42));
  EXPECT_NE(TraceHashOfFaultyRun(42), TraceHashOfFaultyRun(43));
}

// The factory reads the options once a run; its nodes, restarts included,
// are CreateNode's, whichever options are set.
TEST(Raft_NodeFactory, MakesTheNodesCreateNodeMakes) {
  const std::vector<std::function<void(OptionValues&)>> settings = {
      nullptr,
      [](OptionValues& o) { o.Set("pre_vote", 0); },
      [](OptionValues& o) { o.Set("check_quorum", 0); },
      [](OptionValues& o) {
        o.Set("pre_vote", 0);
        o.Set("step_down_on_lost_vote", 1);
      },
      [](OptionValues& o) {
        o.Set("election_timeout_min", TimeNs::Millis(200).ns());
        o.Set("election_timeout_max", TimeNs::Millis(260).ns());
        o.Set("heartbeat_interval", TimeNs::Millis(20).ns());
      },
      [](OptionValues& o) { o.Set("bug", 1); },
  };
  std::set<uint64_t> hashes;
  for (const auto& configure : settings) {
    const uint64_t made = TraceHashOfFaultyRun(7, configure, testing::NodeSource::kNodeFactory);
    EXPECT_EQ(made, TraceHashOfFaultyRun(7, configure, testing::NodeSource::kCreateNode));
    hashes.insert(made);
  }
  EXPECT_EQ(hashes.size(), settings.size());  // each setting changes the run
}

}  // namespace
}  // namespace algorithms
