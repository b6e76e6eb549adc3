// ShardMetricsCollector: ownership gaps, keys moved, balance, the store's
// peak and the herd, from synthetic traces.
#include "checkers/shard_metrics.h"

#include "checkers/tests/trace_builder.h"
#include "electsim/algorithms/store.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

using trace_testing::Ms;
using trace_testing::TraceBuilder;

constexpr uint32_t kReplicas = 3;
const sim::NodeId kStoreNode(kReplicas + 1);

sim::Observation Own(int64_t key, int64_t token) {
  return vocab::WithKey(vocab::BecameLeader(sim::Term(token), sim::FencingToken(token)), key);
}
sim::Observation Drop(int64_t key, int64_t token) {
  return vocab::WithKey(vocab::RoleChange(vocab::Role::kFollower, sim::Term(token)), key);
}

ShardMetrics Collect(const TraceBuilder& t, int64_t keys, sim::TimeNs end) {
  ShardMetricsCollector collector(kReplicas, keys, kStoreNode);
  for (const sim::TraceRecord& r : t.records()) {
    if (collector.kinds().Has(r.kind)) collector.OnRecord(r);
  }
  return collector.Finish(end);
}

TEST(ShardMetrics_Gaps, FromLossToTheNextOwnerPerKeyAndCrashesEndOwnerships) {
  TraceBuilder t;
  t.Boot(kReplicas);
  t.Observe(Ms(10), 0, Own(0, 1));
  t.Observe(Ms(10), 0, Own(1, 2));
  t.Observe(Ms(10), 1, Own(2, 3));
  t.Event(Ms(100), sim::TraceKind::kCrash, 0);  // keys 0 and 1 lose their owner
  t.Observe(Ms(300), 1, Own(0, 4));             // 200ms later
  t.Observe(Ms(1100), 2, Own(1, 5));            // 1000ms later
  t.Observe(Ms(1200), 1, Drop(2, 3));           // released, never owned again
  const ShardMetrics m = Collect(t, 3, Ms(2000));
  EXPECT_EQ(m.ownership_gaps, 2);
  EXPECT_EQ(m.gap_p50, Ms(200));
  EXPECT_EQ(m.gap_max, Ms(1000));
  EXPECT_EQ(m.gap_p99, Ms(1000));
  EXPECT_EQ(m.keys_moved, 2);
  EXPECT_EQ(m.owned_at_end, 2);
  EXPECT_EQ(m.unowned_at_end, 1);
  // Live replicas 1 and 2 hold one key each; crashed replica 0 is left out.
  EXPECT_EQ(m.min_per_replica, 1);
  EXPECT_EQ(m.max_per_replica, 1);
}

TEST(ShardMetrics_Gaps, NoneWhileOwnersHoldAndKeysBeyondTheShardsAreLeftOut) {
  TraceBuilder t;
  t.Boot(kReplicas);
  t.Observe(Ms(10), 0, Own(0, 1));
  t.Observe(Ms(10), 1, Own(1, 2));
  t.Observe(Ms(20), 2, Own(7, 3));  // a member key, beyond the 2 shards
  t.Observe(Ms(30), 2, Drop(7, 3));
  const ShardMetrics m = Collect(t, 2, Ms(100));
  EXPECT_EQ(m.ownership_gaps, 0);
  EXPECT_EQ(m.keys_moved, 0);
  EXPECT_EQ(m.owned_at_end, 2);
  EXPECT_EQ(m.min_per_replica, 0);  // replica 2 holds no shard
  EXPECT_EQ(m.max_per_replica, 1);
}

TEST(ShardMetrics_Store, PeakRequestsAndWatchersWokenPerRemoval) {
  TraceBuilder t;
  t.Boot(kReplicas);
  const sim::Message keep_alive = algorithms::store::KeepAliveRequest{.req = 1, .key = 0};
  for (int i = 0; i < 3; ++i) t.Deliver(Ms(10), kStoreNode.value(), 0, keep_alive);   // window 0: 3
  for (int i = 0; i < 5; ++i) t.Deliver(Ms(150), kStoreNode.value(), 1, keep_alive);  // window 1: 5
  t.Deliver(Ms(250), kStoreNode.value(), 2, keep_alive);
  const auto event = [](int64_t key, int64_t kind, int64_t rev) {
    return sim::Message(algorithms::store::Event{.key = key, .kind = kind, .holder = -1, .rev = rev});
  };
  // One expiry told to 3 watchers, one deletion to 2, a put to 3 (not a removal).
  for (uint32_t w = 0; w < 3; ++w) t.Send(Ms(300), kStoreNode.value(), w, event(0, 3, 10));
  for (uint32_t w = 0; w < 2; ++w) t.Send(Ms(310), kStoreNode.value(), w, event(1, 2, 11));
  for (uint32_t w = 0; w < 3; ++w) t.Send(Ms(320), kStoreNode.value(), w, event(1, 1, 12));
  const ShardMetrics m = Collect(t, 2, Ms(400));
  EXPECT_EQ(m.peak_store_requests_per_s, 5 * 10);
  EXPECT_EQ(m.removals, 2);
  EXPECT_EQ(m.removal_wakeups, 5);
}

TEST(ShardMetrics_Store, ADeletedChildInAWaitersLineIsARemovalAndEachNoticeAWakeup) {
  TraceBuilder t;
  t.Boot(kReplicas);
  const auto deleted = [](int64_t dir, int64_t seq, int64_t rev) {
    return sim::Message(algorithms::store::ChildDeleted{.dir = dir, .seq = seq, .holder = 0, .rev = rev});
  };
  // Two children of key 0's line go, each telling one waiter; one of key 1's tells two.
  t.Send(Ms(100), kStoreNode.value(), 1, deleted(0, 1, 5));
  t.Send(Ms(100), kStoreNode.value(), 2, deleted(0, 2, 6));
  for (uint32_t w = 1; w < 3; ++w) t.Send(Ms(110), kStoreNode.value(), w, deleted(1, 1, 7));
  // A store.event that is not a removal counts for nothing.
  t.Send(Ms(120), kStoreNode.value(), 1, sim::Message(algorithms::store::Event{.key = 0, .kind = 1, .rev = 8}));
  const ShardMetrics m = Collect(t, 2, Ms(400));
  EXPECT_EQ(m.removals, 3);
  EXPECT_EQ(m.removal_wakeups, 4);
}

TEST(ShardMetrics_From, OnlyWhatHappensFromTheGivenTimeCountsButTheBalanceAtTheEndIsWhole) {
  TraceBuilder t;
  t.Boot(kReplicas);
  const sim::Message keep_alive = algorithms::store::KeepAliveRequest{.req = 1, .key = 0};
  for (int i = 0; i < 9; ++i) t.Deliver(Ms(10), kStoreNode.value(), 0, keep_alive);  // before: a startup burst
  t.Observe(Ms(10), 0, Own(0, 1));
  t.Observe(Ms(10), 1, Own(1, 2));
  t.Observe(Ms(100), 0, Drop(0, 1));  // lost before
  t.Observe(Ms(600), 1, Own(0, 3));   // regained after: the gap began before, so it is not counted
  t.Event(Ms(700), sim::TraceKind::kCrash, 1);
  for (int i = 0; i < 2; ++i) t.Deliver(Ms(750), kStoreNode.value(), 2, keep_alive);
  t.Observe(Ms(900), 2, Own(0, 4));  // 200ms after the crash
  t.Observe(Ms(950), 2, Own(1, 5));  // 250ms after
  ShardMetricsCollector collector(kReplicas, 2, kStoreNode, Ms(500));
  for (const sim::TraceRecord& r : t.records()) {
    if (collector.kinds().Has(r.kind)) collector.OnRecord(r);
  }
  const ShardMetrics m = collector.Finish(Ms(1000));
  EXPECT_EQ(m.ownership_gaps, 2);
  EXPECT_EQ(m.gap_p50, Ms(200));
  EXPECT_EQ(m.gap_max, Ms(250));
  EXPECT_EQ(m.keys_moved, 3);  // key 0 to 1 at 600ms, to 2 at 900ms; key 1 to 2
  EXPECT_EQ(m.peak_store_requests_per_s, 2 * 10);
  EXPECT_EQ(m.max_per_replica, 2);
}

}  // namespace
}  // namespace checkers
