// The store on its own: scripted clients send requests at fixed times and the
// test reads what came back, so every expectation is about the store's
// behaviour over the simulated network.
#include "electsim/algorithms/store.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace algorithms::store {
namespace {

constexpr sim::NodeId kStoreNode(2);
constexpr sim::TimeNs kLatency = sim::TimeNs::Millis(1);

struct Received {
  sim::TimeNs global;
  sim::NodeId to;
  sim::Message message;
};

// Sends each scripted message at its (local) time and records what arrives.
class ScriptedClient final : public sim::Process {
 public:
  ScriptedClient(const sim::Simulator* sim, std::vector<std::pair<sim::TimeNs, sim::Message>> script,
                 std::vector<Received>* received)
      : sim_(sim), script_(std::move(script)), received_(received) {}

  void OnStart(sim::Context& ctx) override {
    if (started_once_) return;  // clients never restart in these tests
    started_once_ = true;
    for (size_t i = 0; i < script_.size(); ++i) ctx.SetTimer(script_[i].first, i);
  }
  void OnMessage(sim::Context& ctx, sim::NodeId, const sim::Message& m) override {
    received_->push_back({sim_->now(), ctx.self(), m});
  }
  void OnTimer(sim::Context& ctx, sim::TimerId, uint64_t tag) override { ctx.Send(kStoreNode, script_[tag].second); }

 private:
  const sim::Simulator* sim_;
  std::vector<std::pair<sim::TimeNs, sim::Message>> script_;
  std::vector<Received>* received_;
  bool started_once_ = false;
};

using Script = std::vector<std::pair<sim::TimeNs, sim::Message>>;

// The store's load observations, with their (global) times.
class LoadRecorder final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& record) override {
    if (record.payload == nullptr) return;
    if (const auto load = record.payload->As<LoadReport>()) loads.emplace_back(record.time, *load);
    if (const auto change = record.payload->As<ServiceTimeChange>()) {
      service_times.emplace_back(record.time, change->service_time);
    }
  }
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }

  std::vector<std::pair<sim::TimeNs, LoadReport>> loads;
  std::vector<std::pair<sim::TimeNs, int64_t>> service_times;  // ServiceTimeChange, ns
};

// Two clients (nodes 0 and 1) and the store (node 2) on 1ms links.
struct StoreRun {
  StoreRun(Script client0, Script client1, int64_t store_drift_ppm = 0, const StoreConfig& config = StoreConfig{})
      : sim(7, 3, FixedLink()) {
    sim.AddTraceSink(&load_recorder);
    EXPECT_TRUE(sim.SetProcess(sim::NodeId(0),
                               [this, client0](sim::NodeId) {
                                 return std::make_unique<ScriptedClient>(&sim, client0, &received);
                               })
                    .ok());
    EXPECT_TRUE(sim.SetProcess(sim::NodeId(1),
                               [this, client1](sim::NodeId) {
                                 return std::make_unique<ScriptedClient>(&sim, client1, &received);
                               })
                    .ok());
    EXPECT_TRUE(sim.SetProcess(kStoreNode, [config](sim::NodeId) { return MakeStore(config); }).ok());
    EXPECT_TRUE(sim.Start().ok());
    if (store_drift_ppm != 0) {
      EXPECT_TRUE(sim.SetClockDrift(kStoreNode, store_drift_ppm).ok());
    }
  }
  static sim::LinkConfig FixedLink() { return sim::LinkConfig::Fixed(kLatency); }
  // The reply to request `req` sent by `client`.
  const sim::Message& ReplyTo(uint32_t client, int64_t req) const {
    for (const Received& r : received) {
      if (r.to == sim::NodeId(client) && r.message.Is(kStoreReply) && r.message.Get("req") == req) {
        return r.message;
      }
    }
    ADD_FAILURE() << "no reply to request " << req << " of client " << client;
    static const sim::Message kNone;
    return kNone;
  }
  std::vector<Received> Events() const {
    std::vector<Received> out;
    for (const Received& r : received) {
      if (r.message.Is(kStoreEvent)) out.push_back(r);
    }
    return out;
  }

  LoadRecorder load_recorder;  // before sim: the simulator uses it to the end
  sim::Simulator sim;
  std::vector<Received> received;
};

sim::TimeNs Ms(int64_t ms) { return sim::TimeNs::Millis(ms); }

sim::Message Read(int64_t req, int64_t key) { return GetRequest{.req = req, .key = key}; }
sim::Message PutIfAbsent(int64_t req, int64_t key, int64_t holder, sim::TimeNs ttl) {
  return PutIfAbsentRequest{.req = req, .key = key, .holder = holder, .ttl = ttl.ns()};
}
sim::Message Cas(int64_t req, int64_t key, int64_t version, int64_t holder, sim::TimeNs ttl) {
  return CasRequest{.req = req, .key = key, .version = version, .holder = holder, .ttl = ttl.ns()};
}
sim::Message KeepAlive(int64_t req, int64_t key, int64_t create_rev, int64_t holder, sim::TimeNs ttl) {
  return KeepAliveRequest{.req = req, .key = key, .create_rev = create_rev, .holder = holder, .ttl = ttl.ns()};
}
sim::Message Delete(int64_t req, int64_t key, int64_t version) {
  return DeleteRequest{.req = req, .key = key, .version = version};
}
sim::Message Watch(int64_t req, int64_t key) { return WatchRequest{.req = req, .key = key}; }
sim::Message WatchOnce(int64_t req, int64_t key) { return WatchOnceRequest{.req = req, .key = key}; }

TEST(Store_PutIfAbsent, WinsExactlyOnce) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, sim::TimeNs::Seconds(5))}},
               {{Ms(10), PutIfAbsent(1, kLeaderKey, 1, sim::TimeNs::Seconds(5))}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  const sim::Message& a = run.ReplyTo(0, 1);
  const sim::Message& b = run.ReplyTo(1, 1);
  EXPECT_EQ(a.Get("ok") + b.Get("ok"), 1);
  // Both replies report the winner and its revision, the loser's included.
  const int64_t winner = a.Get("ok") == 1 ? 0 : 1;
  EXPECT_EQ(a.Get("holder"), winner);
  EXPECT_EQ(b.Get("holder"), winner);
  EXPECT_EQ(a.Get("create_rev"), 1);
  EXPECT_EQ(b.Get("create_rev"), 1);
}

TEST(Store_Cas, WrongVersionFailsRightVersionRenews) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, sim::TimeNs::Seconds(5))},
                {Ms(20), Cas(2, kLeaderKey, /*version=*/7, 0, sim::TimeNs::Seconds(5))},
                {Ms(30), Cas(3, kLeaderKey, /*version=*/1, 0, sim::TimeNs::Seconds(5))},
                {Ms(40), Cas(4, kLeaderKey, /*version=*/1, 0, sim::TimeNs::Seconds(5))}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  EXPECT_EQ(run.ReplyTo(0, 1).Get("ok"), 1);
  const sim::Message& wrong = run.ReplyTo(0, 2);
  EXPECT_EQ(wrong.Get("ok"), 0);
  EXPECT_EQ(wrong.Get("mod_rev"), 1);  // a failure still says what the version is
  const sim::Message& right = run.ReplyTo(0, 3);
  EXPECT_EQ(right.Get("ok"), 1);
  EXPECT_EQ(right.Get("create_rev"), 1);  // renewal keeps the fencing token
  EXPECT_EQ(right.Get("mod_rev"), 2);
  EXPECT_EQ(run.ReplyTo(0, 4).Get("ok"), 0);  // version 1 is gone now
}

TEST(Store_KeepAlive, RestartsTheTtlWithoutMovingAnyRevision) {
  // A 100ms lease created at 11ms is kept alive at 81ms and 161ms: it must
  // still exist at 231ms (it would have expired at 111ms), with the revisions
  // it was created with. A watcher hears of the put only.
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, Ms(100))},
                {Ms(80), KeepAlive(2, kLeaderKey, /*create_rev=*/1, 0, Ms(100))},
                {Ms(160), KeepAlive(3, kLeaderKey, /*create_rev=*/1, 0, Ms(100))},
                {Ms(230), Read(4, kLeaderKey)}},
               {{Ms(5), Watch(1, kLeaderKey)}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(250)).ok());
  for (int64_t req : {2, 3}) {
    const sim::Message& reply = run.ReplyTo(0, req);
    EXPECT_EQ(reply.Get("ok"), 1) << req;
    EXPECT_EQ(reply.Get("create_rev"), 1) << req;
    EXPECT_EQ(reply.Get("mod_rev"), 1) << req;
    EXPECT_EQ(reply.Get("rev"), 1) << req;
  }
  EXPECT_EQ(run.ReplyTo(0, 4).Get("holder"), 0);
  EXPECT_EQ(run.Events().size(), 1u);
}

TEST(Store_KeepAlive, RefusedForAnotherLeaseOrHolderOrAGoneKey) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, Ms(50))},
                {Ms(20), KeepAlive(2, kLeaderKey, /*create_rev=*/7, 0, Ms(50))},
                {Ms(30), KeepAlive(3, kLeaderKey, /*create_rev=*/1, 1, Ms(50))},
                {Ms(100), KeepAlive(4, kLeaderKey, /*create_rev=*/1, 0, Ms(50))}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(200)).ok());
  EXPECT_EQ(run.ReplyTo(0, 2).Get("ok"), 0);     // another lease
  EXPECT_EQ(run.ReplyTo(0, 3).Get("ok"), 0);     // another holder
  const sim::Message& gone = run.ReplyTo(0, 4);  // expired at 61ms: keep-alive cannot revive it
  EXPECT_EQ(gone.Get("ok"), 0);
  EXPECT_EQ(gone.Get("create_rev"), 0);
}

TEST(Store_Revision, StrictlyIncreasesOnWritesOnly) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, sim::TimeNs(0))},
                {Ms(20), Cas(2, kLeaderKey, 1, 0, sim::TimeNs(0))},
                {Ms(30), PutIfAbsent(3, kLeaderKey, 0, sim::TimeNs(0))},  // fails
                {Ms(40), PutIfAbsent(4, 5, 0, sim::TimeNs(0))},           // another key
                {Ms(50), Delete(5, kLeaderKey, 2)},
                {Ms(60), PutIfAbsent(6, kLeaderKey, 0, sim::TimeNs(0))}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  int64_t last_rev = 0;
  for (int64_t req : {1, 2, 4, 5, 6}) {
    const sim::Message& reply = run.ReplyTo(0, req);
    ASSERT_EQ(reply.Get("ok"), 1) << "request " << req;
    EXPECT_GT(reply.Get("rev"), last_rev) << "request " << req;
    last_rev = reply.Get("rev");
  }
  EXPECT_EQ(run.ReplyTo(0, 3).Get("ok"), 0);
  EXPECT_EQ(run.ReplyTo(0, 3).Get("rev"), 2);         // a failed write leaves the revision alone
  EXPECT_EQ(run.ReplyTo(0, 6).Get("create_rev"), 5);  // re-created after the delete: a new token
}

// Put with a 500ms TTL arriving at 11ms; reads at 380ms and 450ms.
bool ExistsAt450ms(int64_t store_drift_ppm, bool* exists_at_380ms) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, Ms(500))},
                {Ms(379), Read(2, kLeaderKey)},
                {Ms(449), Read(3, kLeaderKey)}},
               {}, store_drift_ppm);
  EXPECT_TRUE(run.sim.RunUntil(Ms(600)).ok());
  *exists_at_380ms = run.ReplyTo(0, 2).Get("create_rev") != 0;
  return run.ReplyTo(0, 3).Get("create_rev") != 0;
}

TEST(Store_Ttl, ExpiresOnTheStoresOwnClock) {
  bool early = false;
  // True clock: expiry at 511ms, so both reads see the key.
  EXPECT_TRUE(ExistsAt450ms(0, &early));
  EXPECT_TRUE(early);
  // A store clock 25% fast counts 500ms in 400ms: expiry near 411ms.
  EXPECT_FALSE(ExistsAt450ms(250000, &early));
  EXPECT_TRUE(early);
}

TEST(Store_Watch, NotifiesOnExpiryWithoutAnyRequest) {
  StoreRun run({{Ms(5), Watch(1, kLeaderKey)}}, {{Ms(10), PutIfAbsent(1, kLeaderKey, 1, Ms(200))}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  const std::vector<Received> events = run.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].message.Get("kind"), static_cast<int64_t>(EventKind::kPut));
  EXPECT_EQ(events[0].message.Get("holder"), 1);
  EXPECT_EQ(events[1].message.Get("kind"), static_cast<int64_t>(EventKind::kExpire));
  EXPECT_EQ(events[1].message.Get("create_rev"), 0);
  // Put lands at 11ms, expires at 211ms, the event takes 1ms: the timer, not a
  // later request, must have found the expiry.
  EXPECT_EQ(events[1].global, Ms(212));
}

TEST(Store_WatchOnce, TellsOfTheNextChangeOnlyAndAnswersTheStateAtOnce) {
  // Client 0 watches key 4 once, before and after client 1's put; client 1
  // deletes it at its version, then puts it again.
  StoreRun run(
      {{Ms(5), WatchOnce(1, 4)}, {Ms(30), WatchOnce(2, 4)}, {Ms(31), WatchOnce(3, 4)}},
      {{Ms(10), PutIfAbsent(1, 4, 1, Ms(0))}, {Ms(50), Delete(2, 4, 1)}, {Ms(70), PutIfAbsent(3, 4, 1, Ms(0))}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  EXPECT_EQ(run.ReplyTo(0, 1).Get("ok"), 1);
  EXPECT_EQ(run.ReplyTo(0, 1).Get("create_rev"), 0);  // absent when asked
  EXPECT_EQ(run.ReplyTo(0, 2).Get("holder"), 1);      // the state when set
  // One event per watch set: the put (first watch), then the delete (the
  // second and third, one watcher twice, hear of it once); the second put
  // finds no watch.
  const std::vector<Received> events = run.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].to, sim::NodeId(0));
  EXPECT_EQ(events[0].message.Get("kind"), static_cast<int64_t>(EventKind::kPut));
  EXPECT_EQ(events[1].message.Get("kind"), static_cast<int64_t>(EventKind::kDelete));
  EXPECT_EQ(events[1].global, Ms(52));
}

TEST(Store_WatchOnce, ANodeWatchingForGoodAndOnceHearsEachChangeOnce) {
  StoreRun run({{Ms(5), Watch(1, 4)}, {Ms(6), WatchOnce(2, 4)}}, {{Ms(10), PutIfAbsent(1, 4, 1, Ms(20))}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  const std::vector<Received> events = run.Events();
  ASSERT_EQ(events.size(), 2u);  // the put and the expiry, each once
  EXPECT_EQ(events[0].message.Get("kind"), static_cast<int64_t>(EventKind::kPut));
  EXPECT_EQ(events[1].message.Get("kind"), static_cast<int64_t>(EventKind::kExpire));
}

// The events of `key` a watcher received, in order.
std::vector<Received> EventsOf(const StoreRun& run, int64_t key) {
  std::vector<Received> out;
  for (const Received& r : run.Events()) {
    if (r.message.Get("key") == key) out.push_back(r);
  }
  return out;
}

TEST(Store_Ttl, KeysExpireAtTheirOwnTimeAndThoseDueTogetherInKeyOrder) {
  // Arriving 1ms after they leave: key 5 at 11ms with 100ms (expires at
  // 111ms), key 3 at 21ms with 90ms (also 111ms), key 9 at 31ms with 50ms
  // (81ms, the first), key 7 at 41ms without a TTL (never). Revisions 1..4.
  const sim::TimeNs ttl5 = Ms(100);
  const sim::TimeNs ttl3 = Ms(90);
  const sim::TimeNs ttl9 = Ms(50);
  StoreRun run({{Ms(10), PutIfAbsent(1, 5, 0, ttl5)},
                {Ms(20), PutIfAbsent(2, 3, 0, ttl3)},
                {Ms(30), PutIfAbsent(3, 9, 0, ttl9)},
                {Ms(40), PutIfAbsent(4, 7, 0, sim::TimeNs(0))}},
               {{Ms(1), Watch(1, 3)}, {Ms(2), Watch(2, 5)}, {Ms(3), Watch(3, 7)}, {Ms(4), Watch(4, 9)}});
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  const auto expiry_of = [&](int64_t key) {
    const std::vector<Received> events = EventsOf(run, key);
    EXPECT_EQ(events.size(), 2u) << "key " << key;  // its put, and its expiry
    return events.back();
  };
  const Received nine = expiry_of(9);
  const Received three = expiry_of(3);
  const Received five = expiry_of(5);
  for (const Received* e : {&nine, &three, &five}) {
    EXPECT_EQ(e->message.Get("kind"), static_cast<int64_t>(EventKind::kExpire));
  }
  // Each expiry reaches its watcher a link latency after the TTL ran out.
  EXPECT_EQ(nine.global, Ms(30) + kLatency + ttl9 + kLatency);
  EXPECT_EQ(three.global, Ms(20) + kLatency + ttl3 + kLatency);
  EXPECT_EQ(five.global, Ms(10) + kLatency + ttl5 + kLatency);
  // One write each, in time order; keys 3 and 5, due together, in key order.
  EXPECT_EQ(nine.message.Get("rev"), 5);
  EXPECT_EQ(three.message.Get("rev"), 6);
  EXPECT_EQ(five.message.Get("rev"), 7);
  EXPECT_EQ(EventsOf(run, 7).size(), 1u);  // no TTL: still there
}

TEST(Store_Ttl, KeysThatRanOutDuringAPauseExpireInKeyOrderNotInTheOrderTheyRanOut) {
  // Key 9 runs out at 61ms, key 3 at 101ms, both while the store is paused
  // (50ms to 200ms): on resuming it ends both at once, key 3 first.
  StoreRun run({{Ms(10), PutIfAbsent(1, 9, 0, Ms(50))}, {Ms(20), PutIfAbsent(2, 3, 0, Ms(80))}},
               {{Ms(1), Watch(1, 3)}, {Ms(2), Watch(2, 9)}});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Pause(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(200), [&] { ASSERT_TRUE(run.sim.Resume(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  const std::vector<Received> three = EventsOf(run, 3);
  const std::vector<Received> nine = EventsOf(run, 9);
  ASSERT_EQ(three.size(), 2u);
  ASSERT_EQ(nine.size(), 2u);
  EXPECT_EQ(three[1].global, Ms(200) + kLatency);
  EXPECT_EQ(nine[1].global, Ms(200) + kLatency);
  EXPECT_EQ(three[1].message.Get("rev"), 3);
  EXPECT_EQ(nine[1].message.Get("rev"), 4);
}

TEST(Store_Restart, ReloadedKeysExpireOnTimeWithoutAnyRequest) {
  // Key 4: 300ms from 11ms, kept alive at 31ms (until 331ms); key 2: 300ms
  // from 21ms (until 321ms). The store is down from 50ms to 100ms; the
  // watches set at 150ms hear of both expiries from its timer alone.
  const sim::TimeNs ttl = Ms(300);
  StoreRun run({{Ms(10), PutIfAbsent(1, 4, 0, ttl)},
                {Ms(20), PutIfAbsent(2, 2, 0, ttl)},
                {Ms(30), KeepAlive(3, 4, /*create_rev=*/1, 0, ttl)}},
               {{Ms(150), Watch(1, 2)}, {Ms(151), Watch(2, 4)}});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(100), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  ASSERT_EQ(run.ReplyTo(0, 3).Get("ok"), 1);
  const std::vector<Received> events = run.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].message.Get("key"), 2);
  EXPECT_EQ(events[0].global, Ms(20) + kLatency + ttl + kLatency);
  EXPECT_EQ(events[1].message.Get("key"), 4);
  EXPECT_EQ(events[1].global, Ms(30) + kLatency + ttl + kLatency);
}

TEST(Store_Restart, DataSurvivesAndWatchesDoNot) {
  StoreRun run({{Ms(5), Watch(1, kLeaderKey)},
                {Ms(10), PutIfAbsent(2, kLeaderKey, 0, sim::TimeNs::Seconds(10))},
                {Ms(150), Read(3, kLeaderKey)},
                {Ms(160), PutIfAbsent(4, kLeaderKey, 0, sim::TimeNs::Seconds(10))},
                {Ms(170), Cas(5, kLeaderKey, 1, 0, sim::TimeNs::Seconds(10))}},
               {});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(100), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(300)).ok());
  const sim::Message& get = run.ReplyTo(0, 3);
  EXPECT_EQ(get.Get("holder"), 0);
  EXPECT_EQ(get.Get("create_rev"), 1);
  EXPECT_EQ(run.ReplyTo(0, 4).Get("ok"), 0);
  const sim::Message& cas = run.ReplyTo(0, 5);
  EXPECT_EQ(cas.Get("ok"), 1);
  EXPECT_EQ(cas.Get("mod_rev"), 2);  // the revision counter survived too
  // Only the put before the crash was seen by the watch.
  EXPECT_EQ(run.Events().size(), 1u);
}

TEST(Store_Restart, LeaseThatRanOutWhileDownIsGone) {
  StoreRun run({{Ms(10), PutIfAbsent(1, kLeaderKey, 0, Ms(100))},
                {Ms(250), Read(2, kLeaderKey)},
                {Ms(260), PutIfAbsent(3, kLeaderKey, 0, Ms(100))}},
               {});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(200), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(300)).ok());
  EXPECT_EQ(run.ReplyTo(0, 2).Get("create_rev"), 0);
  EXPECT_EQ(run.ReplyTo(0, 2).Get("rev"), 2);  // the expiry was a write
  EXPECT_EQ(run.ReplyTo(0, 3).Get("ok"), 1);
  EXPECT_EQ(run.ReplyTo(0, 3).Get("create_rev"), 3);
}

}  // namespace
}  // namespace algorithms::store

namespace algorithms::store {
namespace {

// ---- sessions and sequential children ----

sim::Message Open(int64_t req, sim::TimeNs timeout) { return SessionOpenRequest{.req = req, .timeout = timeout.ns()}; }
sim::Message Ping(int64_t req, int64_t session) { return SessionPingRequest{.req = req, .session = session}; }
sim::Message Create(int64_t req, int64_t dir, int64_t holder, int64_t session) {
  return CreateRequest{.req = req, .dir = dir, .holder = holder, .session = session};
}
sim::Message Predecessor(int64_t req, int64_t dir, int64_t seq) {
  return PredecessorRequest{.req = req, .dir = dir, .seq = seq};
}
sim::Message Lowest(int64_t req, int64_t dir) { return LowestRequest{.req = req, .dir = dir}; }
sim::Message WatchDelete(int64_t req, int64_t dir, int64_t seq) {
  return WatchDeleteRequest{.req = req, .dir = dir, .seq = seq};
}

// The reply of type T to request `req` of `client`.
template <typename T>
std::optional<T> AnswerTo(const StoreRun& run, uint32_t client, int64_t req) {
  for (const Received& r : run.received) {
    const auto reply = r.message.As<T>();
    if (r.to == sim::NodeId(client) && reply && reply->req == req) return reply;
  }
  ADD_FAILURE() << "no " << T::kType.name() << " to request " << req << " of client " << client;
  return std::nullopt;
}

std::vector<std::pair<uint32_t, ChildDeleted>> Deletions(const StoreRun& run) {
  std::vector<std::pair<uint32_t, ChildDeleted>> out;
  for (const Received& r : run.received) {
    if (const auto deleted = r.message.As<ChildDeleted>()) out.emplace_back(r.to.value(), *deleted);
  }
  return out;
}

// Sessions are numbered from 1 in the order the store opens them; children
// of a directory from 1 in the order it creates them.
TEST(Store_Session, AnExpiredSessionTakesItsChildrenAndTellsOnlyTheirWatchers) {
  // Client 0 opens session 1 (100ms) and never pings; client 1 opens session
  // 2 (10s). Children of dir 4: seq 1 (session 1), seq 2 (session 2), seq 3
  // (session 1). Client 1 watches seq 1; nobody watches seq 3.
  StoreRun run({{Ms(10), Open(1, Ms(100))}, {Ms(30), Create(2, 4, 0, 1)}, {Ms(50), Create(3, 4, 0, 1)}},
               {{Ms(20), Open(1, sim::TimeNs::Seconds(10))},
                {Ms(40), Create(2, 4, 1, 2)},
                {Ms(60), WatchDelete(3, 4, 1)},
                {Ms(300), Predecessor(4, 4, 3)},
                {Ms(310), Ping(5, 1)}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(400)).ok());
  EXPECT_EQ(AnswerTo<SessionReply>(run, 0, 1)->session, 1);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 2)->seq, 1);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 1, 2)->seq, 2);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 3)->seq, 3);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 3)->ok, 1);
  // Session 1 (opened at 11ms) expires at 111ms: seq 1 and 3 go; the one
  // watcher of seq 1 hears of it once, at 112ms.
  const auto deletions = Deletions(run);
  ASSERT_EQ(deletions.size(), 1u);
  EXPECT_EQ(deletions[0].first, 1u);
  EXPECT_EQ(deletions[0].second.seq, 1);
  EXPECT_EQ(deletions[0].second.holder, 0);
  // Below 3 only seq 2 is left; session 1 is gone.
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 4)->seq, 2);
  EXPECT_EQ(AnswerTo<SessionReply>(run, 1, 5)->ok, 0);
}

TEST(Store_Session, PingsKeepItAliveAndACreateOnAGoneSessionFails) {
  StoreRun run({{Ms(10), Open(1, Ms(100))},
                {Ms(80), Ping(2, 1)},
                {Ms(160), Ping(3, 1)},
                {Ms(230), Create(4, 0, 0, 1)},
                {Ms(400), Ping(5, 1)},
                {Ms(410), Create(6, 0, 0, 1)},
                {Ms(420), Create(7, 0, 0, 0)}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  EXPECT_EQ(AnswerTo<SessionReply>(run, 0, 3)->ok, 1);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 4)->ok, 1);   // alive at 231ms thanks to the ping at 161ms
  EXPECT_EQ(AnswerTo<SessionReply>(run, 0, 5)->ok, 0);  // expired at 261ms
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 6)->ok, 0);
  // A persistent child needs no session, and sequence numbers are not reused.
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 7)->ok, 1);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 7)->seq, 2);
}

TEST(Store_Children, ARepeatedCreateFindsTheFirstChildInsteadOfMakingAnother) {
  StoreRun run({{Ms(10), Open(1, sim::TimeNs::Seconds(10))},
                {Ms(20), Create(2, 0, 0, 1)},
                {Ms(30), Create(2, 0, 0, 1)},   // the same request again (a duplicate, a retry)
                {Ms(40), Create(3, 0, 0, 1)}},  // a new request: a new child
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  std::vector<int64_t> seqs;
  for (const Received& r : run.received) {
    if (const auto created = r.message.As<CreateReply>()) seqs.push_back(created->seq);
  }
  EXPECT_EQ(seqs, (std::vector<int64_t>{1, 1, 2}));
}

TEST(Store_Children, PredecessorSkipsDeletedChildrenAndAWatchOnAGoneChildIsRefused) {
  StoreRun run({{Ms(10), Open(1, Ms(50))}, {Ms(20), Create(2, 0, 0, 1)}},
               {{Ms(10), Open(1, sim::TimeNs::Seconds(10))},
                {Ms(30), Create(2, 0, 1, 2)},
                {Ms(40), Create(3, 0, 1, 2)},
                {Ms(50), Predecessor(4, 0, 3)},
                {Ms(51), Predecessor(5, 0, 1)},
                {Ms(52), Lowest(8, 0)},
                {Ms(200), Predecessor(6, 0, 2)},
                {Ms(205), Lowest(9, 0)},
                {Ms(210), WatchDelete(7, 0, 1)}},
               {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(300)).ok());
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 4)->seq, 2);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 4)->holder, 1);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 5)->seq, -1);  // nothing below the first
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 8)->seq, 1);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 8)->holder, 0);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 6)->seq, -1);  // seq 1 expired with its session
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 9)->seq, 2);
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 7)->ok, 0);
  EXPECT_TRUE(Deletions(run).empty());
}

TEST(Store_Restart, SessionsAndChildrenSurviveAndNumbersAreNotReused) {
  StoreRun run({{Ms(10), Open(1, sim::TimeNs::Seconds(10))},
                {Ms(20), Create(2, 0, 0, 1)},
                {Ms(150), Ping(3, 1)},
                {Ms(160), Create(4, 0, 0, 1)},
                {Ms(170), Open(5, sim::TimeNs::Seconds(1))}},
               {{Ms(30), WatchDelete(1, 0, 1)}});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(100), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(300)).ok());
  EXPECT_EQ(AnswerTo<SessionReply>(run, 0, 3)->ok, 1);
  EXPECT_EQ(AnswerTo<CreateReply>(run, 0, 4)->seq, 2);
  EXPECT_EQ(AnswerTo<SessionReply>(run, 0, 5)->session, 2);
}

}  // namespace
}  // namespace algorithms::store

namespace algorithms::store {
namespace {

TEST(Store_Restart, ReloadedSessionsExpireWithTheirChildrenAndARepeatedCreateFindsItsChild) {
  // Session 1 (client 0, 300ms from 11ms) owns child 1 of dir 0 and child 1
  // of dir 5; session 2 (client 1, 10s) owns child 2 of dir 0. The store is
  // down from 50ms to 100ms.
  const sim::TimeNs timeout = Ms(300);
  StoreRun run({{Ms(10), Open(1, timeout)},
                {Ms(20), Create(2, 0, 0, 1)},
                {Ms(25), Create(3, 5, 0, 1)},
                {Ms(150), Create(2, 0, 0, 1)}},  // the first create again, after the restart
               {{Ms(12), Open(1, sim::TimeNs::Seconds(10))},
                {Ms(30), Create(2, 0, 1, 2)},
                {Ms(160), WatchDelete(3, 5, 1)},
                {Ms(161), WatchDelete(4, 0, 1)},
                {Ms(400), Lowest(5, 0)}});
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(50), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(100), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(500)).ok());
  std::vector<int64_t> seqs;
  for (const Received& r : run.received) {
    if (const auto created = r.message.As<CreateReply>(); created && r.to == sim::NodeId(0)) {
      seqs.push_back(created->seq);
    }
  }
  EXPECT_EQ(seqs, (std::vector<int64_t>{1, 1, 1}));  // dir 0, dir 5, and dir 0's first again
  // Session 1 ends on the store's timer; its children go in directory order.
  const auto deletions = Deletions(run);
  ASSERT_EQ(deletions.size(), 2u);
  EXPECT_EQ(deletions[0].second.dir, 0);
  EXPECT_EQ(deletions[1].second.dir, 5);
  EXPECT_EQ(deletions[0].second.rev + 1, deletions[1].second.rev);
  for (const Received& r : run.received) {
    if (r.message.Is(ChildDeleted::kType)) {
      EXPECT_EQ(r.global, Ms(10) + kLatency + timeout + kLatency);
    }
  }
  EXPECT_EQ(AnswerTo<ChildReply>(run, 1, 5)->seq, 2);
}

}  // namespace
}  // namespace algorithms::store

namespace algorithms::store {
namespace {

// ---- capacity and load ----

// What `client` received in answer to its request `req` (any reply type).
const Received* AnswerOf(const StoreRun& run, uint32_t client, int64_t req) {
  for (const Received& r : run.received) {
    if (r.to == sim::NodeId(client) && r.message.Has("req") && r.message.Get("req") == req) return &r;
  }
  return nullptr;
}

// Four requests of both kinds leave client 0 together at 10ms.
Script FourRequestsAtOnce() {
  return {{Ms(10), PutIfAbsent(1, 1, 0, sim::TimeNs(0))},
          {Ms(10), Open(2, sim::TimeNs::Seconds(10))},
          {Ms(10), PutIfAbsent(3, 2, 0, sim::TimeNs(0))},
          {Ms(10), Read(4, 1)}};
}

TEST(Store_Capacity, RequestsArrivingTogetherAreAnsweredOneServiceTimeApartInArrivalOrder) {
  const sim::TimeNs service = Ms(5);
  StoreRun run(FourRequestsAtOnce(), {}, 0, StoreConfig{.service_time = service});
  ASSERT_TRUE(run.sim.RunUntil(Ms(200)).ok());
  for (int64_t req = 1; req <= 4; ++req) {
    const Received* answer = AnswerOf(run, 0, req);
    ASSERT_NE(answer, nullptr) << req;
    // Arrived at 11ms; the req-th in line leaves after req service times.
    EXPECT_EQ(answer->global, Ms(10) + kLatency + service * req + kLatency) << req;
  }
  // Served in arrival order: the second put is the second write.
  EXPECT_EQ(run.ReplyTo(0, 3).Get("create_rev"), 2);
  EXPECT_EQ(run.ReplyTo(0, 4).Get("holder"), 0);
  EXPECT_TRUE(run.load_recorder.loads.empty());  // no metrics interval, no load record
}

TEST(Store_Capacity, TheDefaultAnswersEveryRequestAsItArrives) {
  StoreRun run(FourRequestsAtOnce(), {});
  ASSERT_TRUE(run.sim.RunUntil(Ms(200)).ok());
  for (int64_t req = 1; req <= 4; ++req) {
    const Received* answer = AnswerOf(run, 0, req);
    ASSERT_NE(answer, nullptr) << req;
    EXPECT_EQ(answer->global, Ms(10) + kLatency + kLatency) << req;
  }
}

TEST(Store_Slowdown, RequestsTakeTheSlowServiceTimeOnlyWithinItAndTheQueueDrainsAfter) {
  // From 50ms to 80ms each request takes 20ms; before and after, none.
  const StoreConfig config{.slowdown_at = Ms(50), .slowdown_for = Ms(30), .slowdown_service_time = Ms(20)};
  StoreRun run(
      {{Ms(10), Read(1, 0)}, {Ms(60), Read(2, 0)}, {Ms(60), Read(3, 0)}, {Ms(60), Read(4, 0)}, {Ms(120), Read(5, 0)}},
      {}, 0, config);
  ASSERT_TRUE(run.sim.RunUntil(Ms(200)).ok());
  EXPECT_EQ(AnswerOf(run, 0, 1)->global, Ms(12));                      // before: at once
  EXPECT_EQ(AnswerOf(run, 0, 2)->global, Ms(61) + Ms(20) + kLatency);  // slow: ends at 81ms
  // Begun after the slowdown ended, the two waiting go at once, in order.
  EXPECT_EQ(AnswerOf(run, 0, 3)->global, Ms(82));
  EXPECT_EQ(AnswerOf(run, 0, 4)->global, Ms(82));
  EXPECT_EQ(AnswerOf(run, 0, 5)->global, Ms(122));  // after: at once
  EXPECT_EQ(run.load_recorder.service_times,
            (std::vector<std::pair<sim::TimeNs, int64_t>>{{Ms(50), Ms(20).ns()}, {Ms(80), 0}}));
}

TEST(Store_Slowdown, ASlowdownNamesItsLengthAndServiceTime) {
  const std::vector<OptionSpec> specs = StoreOptions();
  OptionValues values = OptionValues::Defaults(specs);
  EXPECT_TRUE(ValidateStoreOptions(values).ok());
  values.Set(kOptionStoreSlowdownAt, Ms(50).ns());
  const absl::Status missing = ValidateStoreOptions(values);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("store_slowdown_for"), std::string::npos) << missing;
  values.Set(kOptionStoreSlowdownFor, Ms(30).ns());
  values.Set(kOptionStoreSlowdownServiceTime, Ms(20).ns());
  EXPECT_TRUE(ValidateStoreOptions(values).ok());
}

TEST(Store_Capacity, AFullQueueDropsTheRequestUnansweredAndTheMetricsCountIt) {
  // One request in service and two waiting: the fourth of those arriving at
  // 11ms is dropped. The fifth, at 61ms, finds the store idle again.
  const StoreConfig config{.service_time = Ms(10), .queue_limit = 2, .metrics_interval = Ms(100)};
  StoreRun run(
      {{Ms(10), Read(1, 0)}, {Ms(10), Read(2, 0)}, {Ms(10), Read(3, 0)}, {Ms(10), Read(4, 0)}, {Ms(60), Read(5, 0)}},
      {}, 0, config);
  ASSERT_TRUE(run.sim.RunUntil(Ms(150)).ok());
  for (int64_t req : {1, 2, 3}) {
    ASSERT_NE(AnswerOf(run, 0, req), nullptr) << req;
    EXPECT_EQ(AnswerOf(run, 0, req)->global, Ms(10) + kLatency + config.service_time * req + kLatency) << req;
  }
  EXPECT_EQ(AnswerOf(run, 0, 4), nullptr);
  ASSERT_NE(AnswerOf(run, 0, 5), nullptr);
  EXPECT_EQ(AnswerOf(run, 0, 5)->global, Ms(60) + kLatency + config.service_time + kLatency);
  ASSERT_EQ(run.load_recorder.loads.size(), 1u);
  const auto& [at, load] = run.load_recorder.loads[0];
  EXPECT_EQ(at, config.metrics_interval);
  EXPECT_EQ(load.served, 4);
  EXPECT_EQ(load.queued, 0);
  EXPECT_EQ(load.dropped, 1);
  EXPECT_EQ(load.notified, 0);
}

TEST(Store_Capacity, ACrashLosesTheRequestsWaiting) {
  const StoreConfig config{.service_time = Ms(10)};
  StoreRun run({{Ms(10), Read(1, 0)}, {Ms(10), Read(2, 0)}, {Ms(10), Read(3, 0)}, {Ms(40), Read(4, 0)}}, {}, 0, config);
  // Request 1 is answered at 21ms, request 2 would be at 31ms.
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(25), [&] { ASSERT_TRUE(run.sim.Crash(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(Ms(30), [&] { ASSERT_TRUE(run.sim.Restart(kStoreNode).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(Ms(150)).ok());
  EXPECT_NE(AnswerOf(run, 0, 1), nullptr);
  EXPECT_EQ(AnswerOf(run, 0, 2), nullptr);
  EXPECT_EQ(AnswerOf(run, 0, 3), nullptr);
  ASSERT_NE(AnswerOf(run, 0, 4), nullptr);
  EXPECT_EQ(AnswerOf(run, 0, 4)->global, Ms(40) + kLatency + config.service_time + kLatency);
}

TEST(Store_Metrics, EachIntervalCountsServedQueuedDroppedAndNotified) {
  const StoreConfig config{.service_time = Ms(20), .metrics_interval = Ms(100)};
  // Each request takes 20ms. First interval (0-100ms): client 1's watch
  // (arrives 6ms, done 26ms); client 0's five requests arrive at 41ms and
  // end at 61 (put: one event), 81 (cas: one event), 101, 121 and 141ms. At
  // 100ms a read is in service and two wait.
  // Second (100-200ms): the three reads; the key, renewed for 100ms by the
  // cas at 81ms, expires at 181ms: one event.
  // Third (200-300ms): session 1 opens at 226ms (50ms), its child is made at
  // 246ms, client 1 watches the child at 271ms, and the session's expiry at
  // 276ms deletes it: one child_deleted.
  StoreRun run({{Ms(40), PutIfAbsent(1, 0, 0, Ms(100))},
                {Ms(40), Cas(2, 0, /*version=*/1, 0, Ms(100))},
                {Ms(40), Read(3, 0)},
                {Ms(40), Read(4, 0)},
                {Ms(40), Read(5, 0)},
                {Ms(205), Open(6, Ms(50))},
                {Ms(206), Create(7, 0, 0, /*session=*/1)}},
               {{Ms(5), Watch(1, 0)}, {Ms(250), WatchDelete(2, 0, /*seq=*/1)}}, 0, config);
  ASSERT_TRUE(run.sim.RunUntil(Ms(350)).ok());
  ASSERT_EQ(AnswerTo<CreateReply>(run, 0, 7)->ok, 1);
  ASSERT_EQ(AnswerTo<ChildReply>(run, 1, 2)->ok, 1);
  ASSERT_EQ(run.Events().size(), 3u);
  ASSERT_EQ(Deletions(run).size(), 1u);
  struct Expected {
    int64_t served, queued, dropped, notified;
  };
  const std::vector<Expected> expected = {{3, 2, 0, 2}, {3, 0, 0, 1}, {3, 0, 0, 1}};
  ASSERT_EQ(run.load_recorder.loads.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& [at, load] = run.load_recorder.loads[i];
    EXPECT_EQ(at, config.metrics_interval * static_cast<int64_t>(i + 1)) << i;
    EXPECT_EQ(load.served, expected[i].served) << i;
    EXPECT_EQ(load.queued, expected[i].queued) << i;
    EXPECT_EQ(load.dropped, expected[i].dropped) << i;
    EXPECT_EQ(load.notified, expected[i].notified) << i;
  }
}

}  // namespace
}  // namespace algorithms::store

namespace algorithms::store {
namespace {

TEST(Store_Options, TheirDefaultsAreTheDefaultConfigAndTheirValuesMakeTheConfig) {
  const std::vector<OptionSpec> specs = StoreOptions();  // outlives the values, which point into it
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[0].name, kOptionStoreServiceTime);
  EXPECT_EQ(specs[0].type, OptionType::kDuration);
  EXPECT_EQ(specs[1].name, kOptionStoreQueueLimit);
  EXPECT_EQ(specs[1].type, OptionType::kInt);
  EXPECT_EQ(specs[2].name, kOptionStoreMetricsInterval);
  EXPECT_EQ(specs[2].type, OptionType::kDuration);
  EXPECT_EQ(specs[3].name, kOptionStoreSlowdownAt);
  EXPECT_EQ(specs[4].name, kOptionStoreSlowdownFor);
  EXPECT_EQ(specs[5].name, kOptionStoreSlowdownServiceTime);
  for (size_t i = 3; i < 6; ++i) EXPECT_EQ(specs[i].type, OptionType::kDuration) << specs[i].name;
  for (const OptionSpec& spec : specs) EXPECT_FALSE(spec.swarmed) << spec.name;
  OptionValues values = OptionValues::Defaults(specs);
  const StoreConfig defaults = StoreConfigFrom(values);
  EXPECT_EQ(defaults.service_time, StoreConfig{}.service_time);
  EXPECT_EQ(defaults.queue_limit, StoreConfig{}.queue_limit);
  EXPECT_EQ(defaults.metrics_interval, StoreConfig{}.metrics_interval);
  EXPECT_EQ(defaults.slowdown_at, StoreConfig{}.slowdown_at);

  values.Set(kOptionStoreServiceTime, Ms(2).ns());
  values.Set(kOptionStoreQueueLimit, 50);
  values.Set(kOptionStoreMetricsInterval, Ms(1000).ns());
  values.Set(kOptionStoreSlowdownAt, Ms(3000).ns());
  values.Set(kOptionStoreSlowdownFor, Ms(500).ns());
  values.Set(kOptionStoreSlowdownServiceTime, Ms(4).ns());
  const StoreConfig set = StoreConfigFrom(values);
  EXPECT_EQ(set.slowdown_at, Ms(3000));
  EXPECT_EQ(set.slowdown_for, Ms(500));
  EXPECT_EQ(set.slowdown_service_time, Ms(4));
  EXPECT_EQ(set.service_time, Ms(2));
  EXPECT_EQ(set.queue_limit, 50);
  EXPECT_EQ(set.metrics_interval, Ms(1000));
  // None can be negative.
  for (const OptionSpec& spec : specs) EXPECT_THROW(values.Set(spec.name, -1), std::out_of_range) << spec.name;
}

}  // namespace
}  // namespace algorithms::store

namespace algorithms::store {
namespace {

// ---- plain deletes, what the store reports of a key taken, and keyed lease records ----

sim::Message DeleteKey(int64_t req, int64_t key) { return DeleteKeyRequest{.req = req, .key = key}; }

// The store's observations of the lease and key record types, in order.
class StoreRecords final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& record) override {
    if (record.payload == nullptr || record.node != kStoreNode) return;
    if (const auto taken_record = record.payload->As<vocab::KeyTaken>()) taken.push_back(*taken_record);
    if (record.payload->Is(vocab::kLeaseGrant) || record.payload->Is(vocab::kLeaseEnd)) {
      leases.push_back(*record.payload);
    }
  }
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }

  std::vector<vocab::KeyTaken> taken;
  std::vector<sim::Observation> leases;  // lease.grant and lease.end
};

TEST(Store_DeleteKey, DeletesAnyVersionAndReportsTheKeyTakenFromAnotherHolder) {
  // Client 0 holds key 3 and moves its version (cas); client 1 deletes it
  // without a version. Client 1 then deletes its own key 4 the same way,
  // and a key that is not there.
  const sim::TimeNs ttl = sim::TimeNs::Seconds(5);
  StoreRecords records;
  StoreRun run({{Ms(10), PutIfAbsent(1, 3, 0, ttl)}, {Ms(20), Cas(2, 3, /*version=*/1, 0, ttl)}},
               {{Ms(30), DeleteKey(1, 3)},
                {Ms(40), Read(2, 3)},
                {Ms(50), PutIfAbsent(3, 4, 1, ttl)},
                {Ms(60), DeleteKey(4, 4)},
                {Ms(70), Read(5, 4)},
                {Ms(80), DeleteKey(6, 9)}});
  run.sim.AddTraceSink(&records);
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  const sim::Message& put = run.ReplyTo(0, 1);
  const sim::Message& cas = run.ReplyTo(0, 2);
  ASSERT_EQ(cas.Get("ok"), 1);
  ASSERT_NE(cas.Get("mod_rev"), put.Get("mod_rev")) << "the plain delete must meet a version other than the first";
  EXPECT_EQ(run.ReplyTo(1, 1).Get("ok"), 1);
  EXPECT_EQ(run.ReplyTo(1, 2).Get("create_rev"), 0);
  EXPECT_EQ(run.ReplyTo(1, 3).Get("ok"), 1);
  EXPECT_EQ(run.ReplyTo(1, 4).Get("ok"), 1);
  EXPECT_EQ(run.ReplyTo(1, 5).Get("create_rev"), 0);
  EXPECT_EQ(run.ReplyTo(1, 6).Get("ok"), 0);  // nothing to delete
  // Only the delete of client 0's key is reported, not client 1's of its own.
  ASSERT_EQ(records.taken.size(), 1u);
  const vocab::KeyTaken& taken = records.taken[0];
  EXPECT_EQ(taken.key, 3);
  EXPECT_EQ(taken.holder, 0);
  EXPECT_EQ(taken.token, put.Get("create_rev"));
  EXPECT_EQ(taken.by, 1);
  EXPECT_EQ(taken.how, vocab::kKeyTakenByDelete);
}

TEST(Store_Delete, AStaleVersionIsRefusedAndReportsNothing) {
  // Client 0 holds key 3 at version 2 (after a cas). Client 1's delete of
  // version 1 is refused; client 0's own delete of the current version
  // succeeds, and is no key taken either.
  const sim::TimeNs ttl = sim::TimeNs::Seconds(5);
  StoreRecords records;
  StoreRun run({{Ms(10), PutIfAbsent(1, 3, 0, ttl)},
                {Ms(20), Cas(2, 3, /*version=*/1, 0, ttl)},
                {Ms(50), Delete(3, 3, /*version=*/2)}},
               {{Ms(30), Delete(1, 3, /*version=*/1)}, {Ms(40), Read(2, 3)}});
  run.sim.AddTraceSink(&records);
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  ASSERT_EQ(run.ReplyTo(0, 2).Get("mod_rev"), 2);
  const sim::Message& refused = run.ReplyTo(1, 1);
  EXPECT_EQ(refused.Get("ok"), 0);
  EXPECT_EQ(refused.Get("holder"), 0);  // the key as it still is
  EXPECT_EQ(refused.Get("mod_rev"), 2);
  EXPECT_EQ(run.ReplyTo(1, 2).Get("create_rev"), run.ReplyTo(0, 1).Get("create_rev"));
  EXPECT_EQ(run.ReplyTo(0, 3).Get("ok"), 1);
  EXPECT_TRUE(records.taken.empty());
}

TEST(Store_Delete, TheCurrentVersionDeletedByAnotherNodeIsReported) {
  const sim::TimeNs ttl = sim::TimeNs::Seconds(5);
  StoreRecords records;
  StoreRun run({{Ms(10), PutIfAbsent(1, 3, 0, ttl)}}, {{Ms(30), Delete(1, 3, /*version=*/1)}});
  run.sim.AddTraceSink(&records);
  ASSERT_TRUE(run.sim.RunUntil(Ms(100)).ok());
  ASSERT_EQ(run.ReplyTo(0, 1).Get("mod_rev"), 1);
  EXPECT_EQ(run.ReplyTo(1, 1).Get("ok"), 1);
  ASSERT_EQ(records.taken.size(), 1u);
  EXPECT_EQ(records.taken[0].holder, 0);
  EXPECT_EQ(records.taken[0].by, 1);
  EXPECT_EQ(records.taken[0].how, vocab::kKeyTakenByDelete);
}

// Key 5 granted, renewed and left to expire; key 7 granted and deleted.
struct LeaseRun {
  std::vector<sim::Observation> leases;  // the store's lease records
  int64_t token5 = 0;                    // the keys' create revisions, as the grants' replies say
  int64_t token7 = 0;
};
LeaseRun LeaseRecords(bool report_keys) {
  const sim::TimeNs ttl = Ms(50);
  StoreRecords records;
  StoreRun run({{Ms(10), PutIfAbsent(1, 5, 0, ttl)},
                {Ms(30), KeepAlive(2, 5, /*create_rev=*/1, 0, ttl)},
                {Ms(40), PutIfAbsent(3, 7, 0, ttl)},
                {Ms(50), Delete(4, 7, /*version=*/2)}},
               {}, 0, StoreConfig{.report_keys = report_keys});
  run.sim.AddTraceSink(&records);
  EXPECT_TRUE(run.sim.RunUntil(Ms(200)).ok());
  const LeaseRun out{.leases = records.leases,
                     .token5 = run.ReplyTo(0, 1).Get("create_rev"),
                     .token7 = run.ReplyTo(0, 3).Get("create_rev")};
  EXPECT_EQ(out.token5, 1) << "the keep-alive names the first lease";
  EXPECT_EQ(run.ReplyTo(0, 2).Get("ok"), 1);
  EXPECT_EQ(out.token7, 2) << "the delete names key 7's version";
  EXPECT_EQ(run.ReplyTo(0, 4).Get("ok"), 1);
  return out;
}

// The record types, in order: grant (5), grant (5 renewed), grant (7), end
// (7 deleted), end (5 expired).
const std::vector<const sim::RecordType*> kLeaseRecordTypes = {
    &vocab::kLeaseGrant, &vocab::kLeaseGrant, &vocab::kLeaseGrant, &vocab::kLeaseEnd, &vocab::kLeaseEnd};

TEST(Store_ReportKeys, LeaseGrantsAndEndsNameTheirKey) {
  const LeaseRun run = LeaseRecords(true);
  ASSERT_EQ(run.leases.size(), kLeaseRecordTypes.size());
  const std::vector<int64_t> keys = {5, 5, 7, 7, 5};
  const std::vector<int64_t> tokens = {run.token5, run.token5, run.token7, run.token7, run.token5};
  for (size_t i = 0; i < run.leases.size(); ++i) {
    EXPECT_TRUE(run.leases[i].Is(*kLeaseRecordTypes[i])) << i;
    EXPECT_EQ(vocab::KeyOf(run.leases[i]), keys[i]) << i;
    EXPECT_EQ(run.leases[i].Get(vocab::kFieldToken), tokens[i]) << i;
  }
}

TEST(Store_ReportKeys, WithoutItLeaseRecordsNameNoKey) {
  const LeaseRun run = LeaseRecords(false);
  ASSERT_EQ(run.leases.size(), kLeaseRecordTypes.size());
  for (size_t i = 0; i < run.leases.size(); ++i) {
    EXPECT_TRUE(run.leases[i].Is(*kLeaseRecordTypes[i])) << i;
    EXPECT_EQ(vocab::KeyOf(run.leases[i]), std::nullopt) << i;
  }
}

}  // namespace
}  // namespace algorithms::store
