// ClusterView keeps counts as records come so that "who leads, and does
// everyone know" costs the same for any cluster size. These tests hold the
// counts to the plain definitions (the vectors RoleHolders, LiveLeaders and
// LiveNonBelievers) over long random record sequences.
#include "checkers/cluster_view.h"

#include <vector>

#include "checkers/tests/trace_builder.h"
#include "electsim/sim/rng.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

using trace_testing::Ms;

constexpr sim::RecordType kTestAppend{"test.append", {"term"}};

TEST(ClusterView_Counts, AgreeWithThePlainDefinitionsOverRandomRecords) {
  constexpr uint32_t kNodes = 5;
  sim::Rng rng(42);
  // A leader-only message puts its sender in the leader role unreported.
  const vocab::MessageRoles roles = {.leader_only = {{kTestAppend, "term"}}};
  ClusterView view(kNodes, &roles);
  trace_testing::TraceBuilder t;
  uint64_t known = 0;
  uint64_t unreported = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t node = static_cast<uint32_t>(rng.Below(kNodes));
    const sim::TimeNs at = Ms(step);
    uint64_t index = 0;
    switch (rng.Below(9)) {
      case 7: index = t.Observe(at, node, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(step))); break;
      case 8: index = t.Send(at, node, (node + 1) % kNodes, sim::Message(kTestAppend).Set("term", step)); break;
      case 0: index = t.Event(at, sim::TraceKind::kCrash, node); break;
      case 1: index = t.Event(at, sim::TraceKind::kRestart, node); break;
      case 2:
        index = t.Event(at,
                        rng.Chance(sim::Probability::FromParts(sim::Probability::kOne / 2)) ? sim::TraceKind::kPause
                                                                                            : sim::TraceKind::kResume,
                        node);
        break;
      case 3: index = t.Lead(at, node, step); break;
      case 4: index = t.Follow(at, node, step); break;
      default: {  // beliefs, some of them in nobody
        const uint32_t leader = static_cast<uint32_t>(rng.Below(kNodes + 1));
        index = t.Believe(at, node, leader == kNodes ? sim::kNoNode.value() : leader, step);
        break;
      }
    }
    view.Apply(t.records()[index]);
    unreported += view.node(node).leads_unreported ? 1 : 0;

    const std::vector<sim::NodeId> leaders = view.LiveLeaders();
    ASSERT_EQ(view.role_holder_count(), view.RoleHolders().size()) << "step " << step;
    ASSERT_EQ(view.live_leader_count(), leaders.size()) << "step " << step;
    const bool plain_known = leaders.size() == 1 && view.LiveNonBelievers(leaders[0].value()).empty();
    ASSERT_EQ(view.LeaderKnownToAll(), plain_known) << "step " << step;
    ASSERT_EQ(view.SoleLiveLeader(), leaders.size() == 1 ? leaders[0] : sim::kNoNode) << "step " << step;
    for (uint32_t leader = 0; leader < kNodes; ++leader) {
      ASSERT_EQ(view.AllLiveBelieve(leader), view.LiveNonBelievers(leader).empty()) << "step " << step;
    }
    known += plain_known ? 1 : 0;
  }
  // The sequence reaches both answers often enough to test them.
  EXPECT_GT(known, 100u);
  EXPECT_LT(known, 19900u);
  EXPECT_GT(unreported, 100u);
}

TEST(ClusterView_LatestLeader, IsTheHolderThatClaimedLast) {
  ClusterView view(3);
  trace_testing::TraceBuilder t;
  view.Apply(t.records()[t.Lead(Ms(1), 2, 1)]);
  view.Apply(t.records()[t.Lead(Ms(2), 0, 2)]);
  EXPECT_EQ(view.LatestLeader(), sim::NodeId(0));
  view.Apply(t.records()[t.Event(Ms(3), sim::TraceKind::kPause, 0)]);
  EXPECT_EQ(view.LatestLeader(), sim::NodeId(0));  // a paused leader still holds the role
  view.Apply(t.records()[t.Event(Ms(4), sim::TraceKind::kCrash, 0)]);
  EXPECT_EQ(view.LatestLeader(), sim::NodeId(2));
  view.Apply(t.records()[t.Follow(Ms(5), 2, 3)]);
  EXPECT_EQ(view.LatestLeader(), sim::kNoNode);
}

// What "elected" asks: a reported claim, not one inferred from a send, nor
// a keyed claim in a view of the whole cluster; and once made, it stays made.
TEST(ClusterView_LeaderRoleReported, OnlyByARoleObservationOfTheLeaderRole) {
  trace_testing::TraceBuilder t;
  ClusterView inferring(3, &trace_testing::kTestRoles);
  inferring.Apply(t.records()[t.Follow(Ms(1), 0, 1)]);
  inferring.Apply(t.records()[t.Send(Ms(2), 0, 1, trace_testing::Heartbeat(1))]);
  EXPECT_EQ(inferring.role_holder_count(), 1u);  // it leads, unreported
  EXPECT_FALSE(inferring.leader_role_reported());

  ClusterView keyless(3);
  keyless.IgnoreKeyedObservations();
  keyless.Apply(
      t.records()[t.Observe(Ms(3), 1, vocab::WithKey(vocab::BecameLeader(sim::Term(1), sim::FencingToken(1)), 7))]);
  EXPECT_FALSE(keyless.leader_role_reported());

  ClusterView view(3);
  view.Apply(t.records()[t.Observe(Ms(4), 2, vocab::RoleChange(vocab::Role::kCandidate, sim::Term(1)))]);
  EXPECT_FALSE(view.leader_role_reported());
  view.Apply(t.records()[t.Lead(Ms(4), 2, 1)]);
  EXPECT_TRUE(view.leader_role_reported());
  view.Apply(t.records()[t.Event(Ms(5), sim::TraceKind::kCrash, 2)]);
  EXPECT_TRUE(view.leader_role_reported());
}

// Told once per later instant, before the view takes in its first record.
TEST(ClusterView_Shared, ListenersHearOfEachLaterInstantBeforeItsFirstRecord) {
  struct Recorder final : ClusterView::InstantListener {
    explicit Recorder(const ClusterView& view) : view(view) {}
    void OnInstantEnding() override { holders_seen.push_back(view.role_holder_count()); }
    const ClusterView& view;
    std::vector<uint32_t> holders_seen;
  };
  ClusterView view(3);
  Recorder recorder(view);
  view.AddInstantListener(&recorder);
  trace_testing::TraceBuilder t;
  view.Apply(t.records()[t.Lead(Ms(1), 0, 1)]);
  view.Apply(t.records()[t.Lead(Ms(1), 1, 1)]);
  view.Apply(t.records()[t.Event(Ms(2), sim::TraceKind::kCrash, 0)]);
  view.Apply(t.records()[t.Event(Ms(2), sim::TraceKind::kCrash, 1)]);
  EXPECT_EQ(recorder.holders_seen, (std::vector<uint32_t>{0, 2}));
  view.RemoveInstantListener(&recorder);
  view.Apply(t.records()[t.Lead(Ms(3), 2, 2)]);
  EXPECT_EQ(recorder.holders_seen.size(), 2u);
}

}  // namespace
}  // namespace checkers
