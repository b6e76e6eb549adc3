// Lease-over-CAS election through the cluster harness: who leads, what
// happens when the holder dies, pauses or keeps a slow clock, and what the
// fencing token buys at the resource.
#include "algorithms/lease/lease.h"

#include <algorithm>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "algorithms/lease/lease_mutants.h"
#include "algorithms/lease/lease_node.h"
#include "algorithms/testing/cluster_harness.h"
#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace algorithms {
namespace {

using testing::ClusterHarness;

sim::TimeNs Ms(int64_t ms) { return sim::TimeNs::Millis(ms); }

sim::LinkConfig FixedLink(sim::TimeNs latency = Ms(1)) { return sim::LinkConfig::Fixed(latency); }

sim::LinkConfig JitteryLink() {
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(Ms(1), Ms(10));
  return link;
}

// The one node in the leader role, or -1.
int64_t SoleLeader(ClusterHarness& h) {
  const auto leaders = h.tracker().Leaders();
  return leaders.size() == 1 ? static_cast<int64_t>(leaders[0]) : -1;
}

// Every write the resource accepted or rejected, as its observation says.
class ResourceLog final : public sim::TraceSink {
 public:
  struct Entry {
    bool accepted;
    int64_t token;
    int64_t highest;  // highest token accepted before this write
  };
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    const bool accept = r.payload->Is(vocab::kResourceAccept);
    if (!accept && !r.payload->Is(vocab::kResourceReject)) return;
    entries.push_back({accept, r.payload->Get(vocab::kFieldToken), r.payload->Get(vocab::kFieldHighest)});
  }
  // Accepted writes whose token was lower than one accepted earlier.
  int StaleAccepted() const {
    return static_cast<int>(std::count_if(entries.begin(), entries.end(),
                                          [](const Entry& e) { return e.accepted && e.token < e.highest; }));
  }
  std::vector<Entry> entries;
};

// Notes whenever two or more election nodes are in the leader role at once.
class OverlapWatch final : public sim::TraceSink {
 public:
  explicit OverlapWatch(const testing::ObservationTracker& tracker) : tracker_(tracker) {}
  void OnRecord(const sim::TraceRecord&) override {
    if (tracker_.Leaders().size() >= 2) overlapped = true;
  }
  bool overlapped = false;

 private:
  const testing::ObservationTracker& tracker_;
};

// Freezes `node` for `pause` right after its next write_begin past `after`:
// the decision to write is taken, the write is not yet sent.
class PauseAtWriteBegin final : public sim::TraceSink {
 public:
  PauseAtWriteBegin(sim::Simulator& sim, sim::NodeId node, sim::TimeNs after, sim::TimeNs pause)
      : sim_(sim), node_(node), after_(after), pause_(pause) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (fired || r.kind != sim::TraceKind::kObserve || r.node != node_ || r.time < after_) return;
    if (r.payload == nullptr || !r.payload->Is(vocab::kWriteBegin)) return;
    fired = true;
    paused_token = r.payload->Get(vocab::kFieldToken);
    EXPECT_TRUE(sim_.ScheduleAt(sim_.now(), [this] { EXPECT_TRUE(sim_.Pause(node_).ok()); }).ok());
    EXPECT_TRUE(sim_.ScheduleAt(sim_.now() + pause_, [this] { EXPECT_TRUE(sim_.Resume(node_).ok()); }).ok());
  }
  bool fired = false;
  int64_t paused_token = 0;

 private:
  sim::Simulator& sim_;
  sim::NodeId node_;
  sim::TimeNs after_;
  sim::TimeNs pause_;
};

// Every TermChange each node reports, across crashes and restarts (what
// term_monotonic reads).
class TermLog final : public sim::TraceSink {
 public:
  explicit TermLog(uint32_t node_count) : reported(node_count) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr || r.node.value() >= reported.size()) return;
    if (r.payload->Is(vocab::kTermChange)) reported[r.node.value()].push_back(r.payload->Get(vocab::kFieldTerm));
  }
  bool NeverWentDown(uint32_t node) const { return std::is_sorted(reported[node].begin(), reported[node].end()); }
  std::vector<std::vector<int64_t>> reported;
};

TEST(Lease_Healthy, OneHolderEveryoneBelievesIt) {
  ClusterHarness h(LeaseAlgorithm(), 5, 1, JitteryLink());
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  const int64_t leader = SoleLeader(h);
  ASSERT_GE(leader, 0);
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
  // Renewals kept the lease: one acquisition in five seconds, never lost.
  ASSERT_EQ(h.tracker().leader_claims.size(), 1u);
  EXPECT_EQ(h.tracker().leader_claims[0].node, sim::NodeId(static_cast<uint32_t>(leader)));
  for (uint32_t node = 0; node < 5; ++node) EXPECT_EQ(h.tracker().term[node], h.tracker().leader_claims[0].term);
  EXPECT_GT(h.tracker().writes_accepted, 10u);
  EXPECT_EQ(h.tracker().writes_rejected, 0u);
}

// Three seconds of renewals every 333ms, by keep-alive or by cas; returns the
// store's revision and the key's create and mod revisions at the end.
struct Revisions {
  int64_t rev;
  int64_t create_rev;
  int64_t mod_rev;
};
Revisions RevisionsAfterRenewing(bool by_cas) {
  ClusterHarness h(LeaseAlgorithm(), 3, 3, FixedLink(), [&](OptionValues& o) { o.Set("renew", by_cas ? 1 : 0); });
  EXPECT_TRUE(h.validation().ok()) << h.validation();
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
  EXPECT_EQ(h.tracker().leader_claims.size(), 1u) << "the first holder keeps its lease";
  const auto& storage = h.sim().StableStorageOf(h.cluster().store);
  return {storage.at("rev"), storage.at("key/leader/create_rev"), storage.at("key/leader/mod_rev")};
}

TEST(Lease_Renew, KeepAliveLeavesEveryRevisionAlone) {
  const Revisions r = RevisionsAfterRenewing(false);
  EXPECT_EQ(r.create_rev, 1);
  EXPECT_EQ(r.mod_rev, 1);
  EXPECT_EQ(r.rev, 1);
}

TEST(Lease_Renew, CasMovesTheVersionButKeepsTheToken) {
  const Revisions r = RevisionsAfterRenewing(true);
  EXPECT_EQ(r.create_rev, 1);
  EXPECT_GE(r.mod_rev, 9);  // one write per renewal
  EXPECT_EQ(r.rev, r.mod_rev);
}

TEST(Lease_Crash, AnotherNodeTakesOverAfterTheTtlWithAHigherToken) {
  ClusterHarness h(LeaseAlgorithm(), 5, 2, FixedLink());
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(2)).ok());
  const int64_t first = SoleLeader(h);
  ASSERT_GE(first, 0);
  const int64_t first_term = h.tracker().leader_claims.back().term;
  const sim::TimeNs crash_at = h.sim().now();
  ASSERT_TRUE(h.sim().Crash(sim::NodeId(static_cast<uint32_t>(first))).ok());

  ASSERT_TRUE(h.sim().RunUntil(crash_at + Ms(500)).ok());
  EXPECT_TRUE(h.tracker().Leaders().empty()) << "nobody may take a lease the store has not expired";

  ASSERT_TRUE(h.sim().RunUntil(crash_at + sim::TimeNs::Seconds(2)).ok());
  const int64_t second = SoleLeader(h);
  ASSERT_GE(second, 0);
  EXPECT_NE(second, first);
  const auto& claim = h.tracker().leader_claims.back();
  EXPECT_GT(claim.term, first_term);
  // The last renewal was at most renew_interval (333ms) before the crash.
  EXPECT_GE(claim.time, crash_at + Ms(1000 - 334));
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
}

// Kleppmann's story: the holder decides to write, freezes past its TTL, the
// store hands the lease on, the new holder writes, the old one wakes and its
// write lands. Returns the resource's log; `fencing` is the resource's mode.
struct FencingOutcome {
  ResourceLog log;
  uint64_t accepted = 0;
  uint64_t rejected = 0;
  int64_t paused_token = 0;
  int64_t later_term = 0;
};
void RunFencingStory(bool fencing, FencingOutcome* out) {
  ClusterHarness h(LeaseAlgorithm(), 5, 3, FixedLink(), nullptr, fencing);
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  h.sim().AddTraceSink(&out->log);
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  const int64_t holder = SoleLeader(h);
  ASSERT_GE(holder, 0);
  PauseAtWriteBegin pauser(h.sim(), sim::NodeId(static_cast<uint32_t>(holder)), h.sim().now(), sim::TimeNs::Seconds(3));
  h.sim().AddTraceSink(&pauser);
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(6)).ok());
  ASSERT_TRUE(pauser.fired);
  out->paused_token = pauser.paused_token;
  out->accepted = h.tracker().writes_accepted;
  out->rejected = h.tracker().writes_rejected;
  out->later_term = h.tracker().leader_claims.back().term;
  // The paused node came back, saw it lost the lease and stepped down.
  EXPECT_NE(SoleLeader(h), holder);
}

TEST(Lease_Fencing, WithoutFencingTheStaleWriteIsAccepted) {
  FencingOutcome out;
  RunFencingStory(false, &out);
  ASSERT_GT(out.later_term, out.paused_token) << "another node must have acquired meanwhile";
  EXPECT_GE(out.log.StaleAccepted(), 1);
  EXPECT_EQ(out.rejected, 0u);
  // The stale write is the paused holder's token, accepted over a higher one.
  bool found = false;
  for (const auto& e : out.log.entries) found |= e.accepted && e.token == out.paused_token && e.highest > e.token;
  EXPECT_TRUE(found);
}

TEST(Lease_Fencing, WithFencingTheStaleWriteIsRejected) {
  FencingOutcome out;
  RunFencingStory(true, &out);
  ASSERT_GT(out.later_term, out.paused_token);
  EXPECT_GE(out.rejected, 1u);
  EXPECT_EQ(out.log.StaleAccepted(), 0);
  for (const auto& e : out.log.entries) {
    if (!e.accepted) {
      EXPECT_EQ(e.token, out.paused_token);
    }
  }
}

// The holder's clock is upset (`upset_clock`) as it is cut off from the store
// (both ways); returns whether two nodes were ever in the leader role at once.
bool HolderCutFromStoreOverlaps(const std::function<void(OptionValues&)>& configure,
                                const std::function<absl::Status(sim::Simulator&, sim::NodeId)>& upset_clock) {
  ClusterHarness h(LeaseAlgorithm(), 3, 4, FixedLink(), configure);
  EXPECT_TRUE(h.validation().ok()) << h.validation();
  OverlapWatch overlap(h.tracker());
  h.sim().AddTraceSink(&overlap);
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  const int64_t holder = SoleLeader(h);
  EXPECT_GE(holder, 0);
  if (holder < 0) return false;
  const sim::NodeId node(static_cast<uint32_t>(holder));
  EXPECT_TRUE(upset_clock(h.sim(), node).ok());
  EXPECT_TRUE(h.sim().CutOneWay(node, h.cluster().store).ok());
  EXPECT_TRUE(h.sim().CutOneWay(h.cluster().store, node).ok());
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  // Whatever happened in between, someone else leads in the end.
  EXPECT_GE(SoleLeader(h), 0);
  EXPECT_NE(SoleLeader(h), holder);
  return overlap.overlapped;
}

// Safety margin 0.9, holder clock drifting by `drift_ppm`.
bool DriftingHolderOverlaps(int64_t drift_ppm) {
  return HolderCutFromStoreOverlaps(
      [](OptionValues& o) { o.Set("safety_margin", 900000); },
      [drift_ppm](sim::Simulator& sim, sim::NodeId node) { return sim.SetClockDrift(node, drift_ppm); });
}

TEST(Lease_ClockDrift, SlowHolderClockGivesTwoLeadersAtOnce) { EXPECT_TRUE(DriftingHolderOverlaps(-400000)); }

TEST(Lease_ClockDrift, TrueClockAndMarginGiveNoOverlap) { EXPECT_FALSE(DriftingHolderOverlaps(0)); }

// The holder's wall clock steps back 2s; its view is on the wall clock or not.
bool WallStepOverlaps(bool deadline_on_wall_clock) {
  return HolderCutFromStoreOverlaps(
      [&](OptionValues& o) { o.Set("deadline_clock", deadline_on_wall_clock ? 1 : 0); },
      [](sim::Simulator& sim, sim::NodeId node) { return sim.StepWallClock(node, sim::TimeNs::Seconds(-2)); });
}

TEST(Lease_DeadlineClock, WallClockDeadlineOutlivesTheTtlAfterAStepBack) { EXPECT_TRUE(WallStepOverlaps(true)); }

TEST(Lease_DeadlineClock, MonotonicDeadlineIgnoresTheStep) { EXPECT_FALSE(WallStepOverlaps(false)); }

TEST(Lease_StoreRestart, LeadershipResumesWithAHigherToken) {
  ClusterHarness h(LeaseAlgorithm(), 3, 5, FixedLink());
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  ASSERT_GE(SoleLeader(h), 0);
  const int64_t first_term = h.tracker().leader_claims.back().term;
  ASSERT_TRUE(h.sim().Crash(h.cluster().store).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
  EXPECT_TRUE(h.tracker().Leaders().empty()) << "no one may act on a lease it cannot renew";
  ASSERT_TRUE(h.sim().Restart(h.cluster().store).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  ASSERT_GE(SoleLeader(h), 0);
  EXPECT_GT(h.tracker().leader_claims.back().term, first_term);
  EXPECT_TRUE(h.tracker().AgreeOnSingleLeader(h.LiveNodes()));
}

// A reply the store sent before node 0 crashed arrives after its restart and
// reports the lease as it was then: a lower term than node 0 had learned.
// The term is stable state: reported again at boot, and an older reply does
// not lower it.
TEST(Lease_Restart, TermNeverGoesDownAcrossARestart) {
  ClusterHarness h(LeaseAlgorithm(), 3, 1, FixedLink());
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  TermLog terms(3);
  h.sim().AddTraceSink(&terms);
  const sim::NodeId node(0);
  const sim::NodeId store = h.cluster().store;
  // Node 0's first requests are lost and the store's replies to it take 1.5s
  // until 500ms; node 1, which wins the first lease, crashes with it.
  ASSERT_TRUE(h.sim().CutOneWay(node, store).ok());
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink(Ms(1500))).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(10)).ok());
  h.sim().HealNetwork();
  ASSERT_TRUE(h.sim().RunUntil(Ms(20)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{1});
  const int64_t first_term = h.tracker().leader_claims.back().term;
  ASSERT_TRUE(h.sim().Crash(sim::NodeId(1)).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(500)).ok());
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink()).ok());

  ASSERT_TRUE(h.sim().RunUntil(Ms(1200)).ok());
  const int64_t term_before_crash = h.tracker().term[0];
  ASSERT_GT(term_before_crash, first_term) << "node 0 must know the lease taken after node 1's expired";
  ASSERT_TRUE(h.sim().Crash(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(1700)).ok());
  ASSERT_TRUE(h.sim().Restart(node).ok());
  EXPECT_EQ(h.tracker().term[0], term_before_crash) << "reported again at boot";
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
  EXPECT_TRUE(terms.NeverWentDown(0)) << ::testing::PrintToString(terms.reported[0]);
  EXPECT_GE(h.tracker().term[0], term_before_crash);
}

// Node 0 wins the lease at boot, but the store's reply takes 300ms; node 0
// crashes at once and restarts just before the reply arrives, then loses the
// store at 400ms. Had the new incarnation taken that reply for its own
// acquire of the same request id, its view would start at the restart, 300ms
// after the store's TTL did, and outlast the lease while another node takes
// over.
TEST(Lease_Restart, ReplyToThePreviousIncarnationIsNotTakenForOurs) {
  ClusterHarness h(LeaseAlgorithm(), 3, 1, FixedLink());
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  OverlapWatch overlap(h.tracker());
  h.sim().AddTraceSink(&overlap);
  const sim::NodeId node(0);
  const sim::NodeId store = h.cluster().store;
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink(Ms(300))).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(2)).ok());
  ASSERT_EQ(h.sim().StableStorageOf(store).at("key/leader/holder"), 0);
  ASSERT_TRUE(h.sim().Crash(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(150)).ok());
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink()).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(300)).ok());
  ASSERT_TRUE(h.sim().Restart(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(400)).ok());
  ASSERT_TRUE(h.sim().CutOneWay(node, store).ok());
  ASSERT_TRUE(h.sim().CutOneWay(store, node).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
  EXPECT_FALSE(overlap.overlapped);
  EXPECT_GE(SoleLeader(h), 1) << "another node leads once node 0's lease has run out";
}

// Replies can overtake each other. Node 0 wins the lease at boot but the
// reply is slow; meanwhile the store's fast clock ends the lease (1s of TTL
// on a clock 40% fast is 714ms), node 1 takes a new one, and node 0 hears of
// it. The late reply to node 0's acquire, still within its request timeout,
// describes a lease node 0 already knows is gone: it must not make node 0
// leader with the superseded token.
TEST(Lease_StaleReply, AcquireReplyOlderThanWhatTheNodeKnowsMakesNoLeader) {
  ClusterHarness h(LeaseAlgorithm(), 3, 1, FixedLink(), [](OptionValues& o) {
    o.Set("request_timeout", Ms(740).ns());  // below the holder's 750ms view
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  OverlapWatch overlap(h.tracker());
  h.sim().AddTraceSink(&overlap);
  const sim::NodeId node(0);
  const sim::NodeId store = h.cluster().store;
  ASSERT_TRUE(h.sim().SetClockDrift(store, 400000).ok());
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink(Ms(730))).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(2)).ok());
  ASSERT_EQ(h.sim().StableStorageOf(store).at("key/leader/holder"), 0);
  const int64_t superseded_token = h.sim().StableStorageOf(store).at("key/leader/create_rev");
  ASSERT_TRUE(h.sim().SetLink(store, node, FixedLink()).ok());
  ASSERT_TRUE(h.sim().RunUntil(Ms(725)).ok());
  ASSERT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{1});
  ASSERT_GT(h.tracker().term[0], superseded_token) << "node 0 must know of node 1's lease";

  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  EXPECT_FALSE(overlap.overlapped);
  for (const auto& claim : h.tracker().leader_claims) EXPECT_GT(claim.term, superseded_token);
  EXPECT_EQ(h.tracker().Leaders(), std::vector<uint32_t>{1});
}

TEST(Lease_Release, SteppingDownHandsTheKeyOverBeforeTheTtl) {
  // The view is 2s of a 10s TTL. The holder pauses for 3s: when it wakes its
  // view has ended, it steps down and deletes the key, and a follower
  // acquires at once instead of waiting out the TTL.
  ClusterHarness h(LeaseAlgorithm(), 3, 6, FixedLink(), [](OptionValues& o) {
    o.Set("release_on_stepdown", 1);
    o.Set("lease_ttl", sim::TimeNs::Seconds(10).ns());
    o.Set("renew_interval", sim::TimeNs::Seconds(1).ns());
    o.Set("safety_margin", 200000);
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  const int64_t holder = SoleLeader(h);
  ASSERT_GE(holder, 0);
  const sim::NodeId node(static_cast<uint32_t>(holder));
  const int64_t first_term = h.tracker().leader_claims.back().term;
  ASSERT_TRUE(h.sim().Pause(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(4)).ok());
  EXPECT_EQ(h.tracker().leader_claims.back().term, first_term) << "the TTL has not run out yet";
  ASSERT_TRUE(h.sim().Resume(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  ASSERT_GE(SoleLeader(h), 0);
  EXPECT_GT(h.tracker().leader_claims.back().term, first_term);
}

TEST(Lease_Release, WithoutReleaseTheHolderReclaimsItsOwnLease) {
  // Same pause without release: the store still names the woken node, which
  // steps down when its view is found expired and then renews its own lease
  // by cas, keeping the same token.
  ClusterHarness h(LeaseAlgorithm(), 3, 6, FixedLink(), [](OptionValues& o) {
    o.Set("lease_ttl", sim::TimeNs::Seconds(10).ns());
    o.Set("renew_interval", sim::TimeNs::Seconds(1).ns());
    o.Set("safety_margin", 200000);
  });
  ASSERT_TRUE(h.validation().ok()) << h.validation();
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  const int64_t holder = SoleLeader(h);
  ASSERT_GE(holder, 0);
  const sim::NodeId node(static_cast<uint32_t>(holder));
  const int64_t first_term = h.tracker().leader_claims.back().term;
  ASSERT_TRUE(h.sim().Pause(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(4)).ok());
  ASSERT_TRUE(h.sim().Resume(node).ok());
  ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  EXPECT_EQ(SoleLeader(h), holder);
  EXPECT_EQ(h.tracker().leader_claims.size(), 2u);
  EXPECT_EQ(h.tracker().leader_claims.back().term, first_term);
}

TEST(Lease_Validate, RejectsRenewalNotShorterThanTtl) {
  const Algorithm& lease = LeaseAlgorithm();
  OptionValues o = OptionValues::Defaults(lease.options());
  EXPECT_TRUE(lease.Validate(o, Cluster{}).ok());
  o.Set("lease_ttl", Ms(300).ns());
  o.Set("renew_interval", Ms(400).ns());
  const absl::Status s = lease.Validate(o, Cluster{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "option renew_interval (400ms) must be shorter than lease_ttl (300ms)");
}

TEST(Lease_Validate, RejectsTimeoutOrRenewalBeyondTheHoldersView) {
  const Algorithm& lease = LeaseAlgorithm();
  OptionValues o = OptionValues::Defaults(lease.options());
  o.Set("request_timeout", sim::TimeNs::Seconds(1).ns());
  EXPECT_NE(lease.Validate(o, Cluster{}).message().find("request_timeout"), std::string::npos);
  o = OptionValues::Defaults(lease.options());
  o.Set("safety_margin", 300000);  // view 300ms, renewals every 333ms
  const absl::Status s = lease.Validate(o, Cluster{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("renew_interval"), std::string::npos);
  EXPECT_NE(s.message().find("safety_margin"), std::string::npos);
}

uint64_t TraceHash(uint64_t seed) {
  ClusterHarness h(LeaseAlgorithm(), 5, seed, JitteryLink());
  sim::TraceHasher hasher;
  h.sim().AddTraceSink(&hasher);
  EXPECT_TRUE(h.sim()
                  .ScheduleAt(sim::TimeNs::Seconds(2),
                              [&h] {
                                const auto leaders = h.tracker().Leaders();
                                if (!leaders.empty()) {
                                  EXPECT_TRUE(h.sim().Crash(sim::NodeId(leaders[0])).ok());
                                }
                              })
                  .ok());
  EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(5)).ok());
  return hasher.hash();
}

TEST(Lease_Determinism, SameSeedSameTraceHash) {
  EXPECT_EQ(TraceHash(11), TraceHash(11));
  EXPECT_NE(TraceHash(11), TraceHash(12));
}

// The "bug" option's value that names `name` ("none" or a mutant).
int64_t BugChoice(const Algorithm& algorithm, const std::string& name) {
  for (const OptionSpec& spec : algorithm.options()) {
    if (spec.name != kBugOption) continue;
    const auto it = std::find(spec.choices.begin(), spec.choices.end(), name);
    return it == spec.choices.end() ? -1 : static_cast<int64_t>(it - spec.choices.begin());
  }
  return -1;
}

Cluster ThreeNodesAndAStore() { return Cluster{.node_count = 3, .resource = sim::NodeId(3), .store = sim::NodeId(4)}; }

TEST(Lease_Mutants, NoneBuildsTheReference) {
  const Algorithm& lease = LeaseAlgorithm();
  OptionValues o = OptionValues::Defaults(lease.options());
  ASSERT_EQ(BugChoice(lease, "none"), 0);
  EXPECT_EQ(o.Choice(kBugOption), "none");
  EXPECT_EQ(ChosenMutant(lease.mutants(), o), nullptr);
  EXPECT_FALSE(lease.guarantees(o).empty());
  const std::unique_ptr<sim::Process> node = lease.CreateNode(sim::NodeId(0), ThreeNodesAndAStore(), o);
  ASSERT_NE(node, nullptr);
  const sim::Process& process = *node;  // typeid of a plain reference: no side effect
  EXPECT_EQ(typeid(process), typeid(lease::LeaseNode));
}

TEST(Lease_Mutants, EachIsSelectableByTheBugOptionAndBuildsANode) {
  const Algorithm& lease = LeaseAlgorithm();
  ASSERT_EQ(&lease.mutants(), &lease::Mutants());
  ASSERT_GE(lease.mutants().size(), 3u);
  for (const Mutant& mutant : lease.mutants()) {
    SCOPED_TRACE(std::string(mutant.name));
    EXPECT_FALSE(mutant.description.empty());
    OptionValues o = OptionValues::Defaults(lease.options());
    const int64_t choice = BugChoice(lease, std::string(mutant.name));
    ASSERT_GT(choice, 0);
    o.Set(kBugOption, choice);
    ASSERT_EQ(ChosenMutant(lease.mutants(), o), &mutant);
    EXPECT_TRUE(lease.guarantees(o).empty());  // a mutant promises nothing
    const std::unique_ptr<sim::Process> node = lease.CreateNode(sim::NodeId(0), ThreeNodesAndAStore(), o);
    ASSERT_NE(node, nullptr);
    EXPECT_NE(dynamic_cast<lease::LeaseNode*>(node.get()), nullptr);
    const sim::Process& process = *node;
    EXPECT_NE(typeid(process), typeid(lease::LeaseNode));
  }
}

// A mutant's bug shows under faults; in a healthy cluster it still elects.
TEST(Lease_Mutants, EachElectsAHolderInAHealthyCluster) {
  const Algorithm& lease = LeaseAlgorithm();
  for (const Mutant& mutant : lease.mutants()) {
    SCOPED_TRACE(std::string(mutant.name));
    const int64_t choice = BugChoice(lease, std::string(mutant.name));
    ClusterHarness h(lease, 3, 1, JitteryLink(), [choice](OptionValues& o) { o.Set(kBugOption, choice); });
    ASSERT_TRUE(h.validation().ok()) << h.validation();
    ASSERT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(3)).ok());
    EXPECT_GE(SoleLeader(h), 0);
  }
}

TEST(Lease_Registry, FoundByName) {
  const Algorithm* found = FindAlgorithm("lease");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found, &LeaseAlgorithm());
  EXPECT_TRUE(found->uses_store());
}

}  // namespace
}  // namespace algorithms
