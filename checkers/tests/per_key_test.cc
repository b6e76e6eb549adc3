// Checkers run once per key (CheckerConfig::per_key), and owner_displaced.
#include <memory>
#include <string>

#include "checkers/checker.h"
#include "checkers/tests/trace_builder.h"
#include "gtest/gtest.h"

namespace checkers {
namespace {

using sim::TraceKind;
using trace_testing::Ms;
using trace_testing::RunChecker;
using trace_testing::TraceBuilder;

CheckerConfig PerKey(uint32_t node_count) { return CheckerConfig{.node_count = node_count, .per_key = true}; }

sim::Observation LeadKey(int64_t key, int64_t token) {
  return vocab::WithKey(vocab::BecameLeader(sim::Term(token), sim::FencingToken(token)), key);
}
sim::Observation FollowKey(int64_t key, int64_t term) {
  return vocab::WithKey(vocab::RoleChange(vocab::Role::kFollower, sim::Term(term)), key);
}
sim::Observation AcceptKey(int64_t key, int64_t token, uint32_t writer) {
  return vocab::WithKey(vocab::ResourceAccepted{{.token = token, .writer = writer, .seq = 1, .highest = 0}}, key);
}

TEST(PerKey_Quiet, OwnersOfDifferentKeysAtOnceAreNoSplitBrain) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 0, LeadKey(7, 1));
  t.Observe(Ms(10), 1, LeadKey(8, 2));
  t.Observe(Ms(20), 2, LeadKey(9, 3));
  EXPECT_FALSE(RunChecker("single_leader", PerKey(3), t, Ms(100))->violation());
  // The same trace judged as one cluster: three leaders at once.
  EXPECT_TRUE(RunChecker("single_leader", CheckerConfig{.node_count = 3}, t, Ms(100))->violation());
}

TEST(PerKey_Fires, TwoOwnersOfOneKeyNamesTheKey) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 0, LeadKey(7, 1));
  t.Observe(Ms(10), 1, LeadKey(8, 2));
  const uint64_t bad = t.Observe(Ms(30), 2, LeadKey(7, 3));
  auto checker = RunChecker("single_leader", PerKey(3), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->message.rfind("key 7: nodes 0 and 2 were both in the leader role", 0), 0u)
      << checker->violation()->message;
}

TEST(PerKey_Quiet, ACrashEndsTheOwnerRoleOfEveryKeyItHeld) {
  TraceBuilder t;
  t.Boot(2);
  t.Observe(Ms(10), 0, LeadKey(1, 1));
  t.Observe(Ms(10), 0, LeadKey(2, 2));
  t.Event(Ms(20), TraceKind::kCrash, 0);  // shared: every key's instance hears of it
  t.Observe(Ms(30), 1, LeadKey(1, 3));
  t.Observe(Ms(30), 1, LeadKey(2, 4));
  t.Observe(Ms(40), 1, LeadKey(3, 5));  // a key first seen after the crash
  EXPECT_FALSE(RunChecker("single_leader", PerKey(2), t, Ms(100))->violation());
}

TEST(PerKey_Fires, AKeySeenLateKnowsOfEarlierPauses) {
  TraceBuilder t;
  t.Boot(2);
  t.Observe(Ms(10), 0, LeadKey(1, 1));
  t.Event(Ms(20), TraceKind::kPause, 0);  // paused owners still believe they own
  t.Observe(Ms(30), 0, LeadKey(5, 2));    // first record of key 5 comes later...
  // ...and its instance, made now, must know node 0 is paused yet leads key 5
  // when node 1 takes key 5 too.
  const uint64_t bad = t.Observe(Ms(40), 1, LeadKey(5, 3));
  auto checker = RunChecker("single_leader", PerKey(2), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
}

TEST(PerKey_Quiet, AFollowerRoleOfOneKeyLeavesTheOthersLed) {
  TraceBuilder t;
  t.Boot(2);
  t.Observe(Ms(10), 0, LeadKey(1, 1));
  t.Observe(Ms(10), 0, LeadKey(2, 2));
  t.Observe(Ms(20), 0, FollowKey(1, 1));
  t.Observe(Ms(30), 1, LeadKey(1, 3));
  EXPECT_FALSE(RunChecker("single_leader", PerKey(2), t, Ms(100))->violation());
  t.Observe(Ms(40), 1, LeadKey(2, 4));  // key 2 is still node 0's
  EXPECT_TRUE(RunChecker("single_leader", PerKey(2), t, Ms(100))->violation());
}

TEST(PerKey_Fires, StaleTokenPerKeyButNotAcrossKeys) {
  TraceBuilder t;
  t.Boot(2);
  t.Observe(Ms(10), 3, AcceptKey(1, 10, 0));
  t.Observe(Ms(20), 3, AcceptKey(2, 5, 1));  // below key 1's token: another key, fine
  EXPECT_FALSE(RunChecker("stale_token", PerKey(2), t, Ms(100))->violation());
  const uint64_t bad = t.Observe(Ms(30), 3, AcceptKey(2, 4, 0));  // below key 2's own
  auto checker = RunChecker("stale_token", PerKey(2), t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->message.rfind("key 2: ", 0), 0u) << checker->violation()->message;
}

TEST(PerKey_Quiet, RecordsWithoutAKeyMakeNoInstance) {
  // Judged per key, observations that name no key are shared records: with
  // no key named, no instance exists and nothing is judged. (Runs of
  // single-leader algorithms do not set per_key.)
  TraceBuilder t;
  t.Boot(2);
  t.Lead(Ms(10), 0, 1);
  t.Lead(Ms(10), 1, 2);
  EXPECT_FALSE(RunChecker("single_leader", PerKey(2), t, Ms(100))->violation());
}

// ---- owner_displaced ----

TEST(OwnerDisplaced_Fires, AnotherNodesRequestDeletedAHeldKey) {
  TraceBuilder t;
  t.Boot(3);
  const uint64_t bad = t.Observe(
      Ms(50), 4, vocab::KeyTaken{.key = 12, .holder = 1, .token = 40, .by = 0, .how = vocab::kKeyTakenByDelete});
  auto checker = RunChecker("owner_displaced", CheckerConfig{.node_count = 3}, t, Ms(100));
  ASSERT_TRUE(checker->violation());
  EXPECT_EQ(checker->violation()->trace_index, bad);
  EXPECT_EQ(checker->violation()->token, 40);
  EXPECT_EQ(checker->violation()->message, "a request of node 0 deleted key 12 while node 1 held it under lease 40");
  // Per key too, where the record names its key.
  auto per_key = RunChecker("owner_displaced", PerKey(3), t, Ms(100));
  ASSERT_TRUE(per_key->violation());
  EXPECT_EQ(per_key->violation()->message.rfind("key 12: a request of node 0 deleted", 0), 0u);
}

TEST(OwnerDisplaced_Quiet, ExpiriesReleasesAndGrantsAreNoDisplacement) {
  TraceBuilder t;
  t.Boot(3);
  t.Observe(Ms(10), 4, vocab::LeaseGrant(40, 1, 1, Ms(1000)));
  t.Observe(Ms(20), 4, vocab::LeaseEnd(40, 1));
  t.Observe(Ms(30), 4, vocab::LeaseGrant(41, 0, 2, Ms(1000)));
  EXPECT_FALSE(RunChecker("owner_displaced", CheckerConfig{.node_count = 3}, t, Ms(100))->violation());
}

}  // namespace
}  // namespace checkers
