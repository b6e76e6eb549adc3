// Process faults, clocks, determinism and error handling of the event loop.
#include "sim/simulator.h"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/format.h"
#include "sim/tests/test_processes.h"

namespace sim {
namespace {

using testing::InstallPingPong;
using testing::PingPong;
using testing::RecordCollector;
using testing::Seen;
using testing::TimerProbe;

// One TimerProbe node arming the given delays.
struct ProbeRun {
  explicit ProbeRun(std::vector<TimeNs> delays) : sim(1, 1) {
    EXPECT_TRUE(
        sim.SetProcess(NodeId(0), [this, delays](NodeId) { return std::make_unique<TimerProbe>(&sim, &seen, delays); })
            .ok());
    EXPECT_TRUE(sim.Start().ok());
  }
  Simulator sim;
  Seen seen;
};

TEST(Simulator_Order, SameTimeEventsRunInInsertionOrder) {
  ProbeRun run({TimeNs::Millis(5), TimeNs::Millis(5), TimeNs::Millis(5), TimeNs::Millis(1)});
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.seen.firings.size(), 4u);
  EXPECT_EQ(run.seen.firings[0].tag, 3u);
  EXPECT_EQ(run.seen.firings[1].tag, 0u);
  EXPECT_EQ(run.seen.firings[2].tag, 1u);
  EXPECT_EQ(run.seen.firings[3].tag, 2u);
}

TEST(Simulator_Pause, PausedNodesTimerFiresAfterResume) {
  ProbeRun run({TimeNs::Millis(100)});
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(50), [&] { ASSERT_TRUE(run.sim.Pause(NodeId(0)).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(300), [&] { ASSERT_TRUE(run.sim.Resume(NodeId(0)).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Millis(299)).ok());
  EXPECT_TRUE(run.seen.firings.empty());  // due at 100ms, but the node is frozen
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Millis(300));
  EXPECT_EQ(run.seen.firings[0].local, TimeNs::Millis(300));  // the clock kept running
}

TEST(Simulator_Pause, HeldDeliveriesArriveOnResumeInOrder) {
  Simulator sim(2, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  InstallPingPong(sim, seen, 5, TimeNs::Millis(10));
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(5), [&] { ASSERT_TRUE(sim.Pause(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(100), [&] { ASSERT_TRUE(sim.Resume(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  std::vector<int64_t> order;
  for (const auto& d : seen.deliveries) {
    if (d.to == NodeId(1)) {
      EXPECT_EQ(d.global, TimeNs::Millis(100));
      order.push_back(d.seq);
    }
  }
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(Simulator_Pause, HeldDeliveriesRunBeforeAFifoMessageDueAtTheResumeInstant) {
  LinkConfig link = LinkConfig::Fixed(TimeNs::Millis(1));
  link.fifo = true;
  Simulator sim(2, 2, link);
  Seen seen;
  InstallPingPong(sim, seen, 5, TimeNs::Millis(10));
  ASSERT_TRUE(sim.Start().ok());
  // Pings 0-2 land at 11, 21, 31ms and are held; ping 3, sent at 40ms after
  // the pause began, lands at 41ms, exactly when node 1 resumes. The resume
  // was queued first, so it runs first at 41ms.
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(5), [&] { ASSERT_TRUE(sim.Pause(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(41), [&] { ASSERT_TRUE(sim.Resume(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  std::vector<int64_t> order;
  for (const auto& d : seen.deliveries) {
    if (d.to == NodeId(1)) order.push_back(d.seq);
  }
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));  // the link is FIFO
}

TEST(Simulator_Crash, ForgetsVolatileStateKeepsStableStorage) {
  Simulator sim(3, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  std::vector<PingPong*> node1_incarnations;
  ASSERT_TRUE(
      sim.SetProcess(NodeId(0), [&](NodeId) { return std::make_unique<PingPong>(&sim, &seen, 10, TimeNs::Millis(10)); })
          .ok());
  ASSERT_TRUE(sim.SetProcess(NodeId(1),
                             [&](NodeId) {
                               auto p = std::make_unique<PingPong>(&sim, &seen, 10, TimeNs::Millis(10));
                               node1_incarnations.push_back(p.get());
                               return p;
                             })
                  .ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(35),
                             [&] {
                               EXPECT_EQ(node1_incarnations.back()->volatile_received(), 3);
                               ASSERT_TRUE(sim.Crash(NodeId(1)).ok());
                             })
                  .ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(55), [&] { ASSERT_TRUE(sim.Restart(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Millis(56)).ok());
  ASSERT_EQ(node1_incarnations.size(), 2u);
  EXPECT_EQ(node1_incarnations.back()->volatile_received(), 0);  // volatile state is gone
  EXPECT_EQ(sim.StableStorageOf(NodeId(1)).at("received"), 3);   // stable storage is not
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  // Pings at 40ms and 50ms reached a dead node; the other 8 were received.
  EXPECT_EQ(sim.StableStorageOf(NodeId(1)).at("received"), 8);
  EXPECT_EQ(node1_incarnations.back()->volatile_received(), 5);
}

// ---- which sinks see an observation ----

constexpr RecordType kObservedA{"test.a", {"x"}};
constexpr RecordType kObservedB{"test.b", {"x"}};
constexpr RecordType kObservedC{"test.c", {"x"}};
// Another constant of type "test.a", as a separately built plugin would have.
constexpr RecordType kObservedAElsewhere{"test.a", {"x"}};

class ObservesABC final : public Process {
 public:
  void OnStart(Context& ctx) override {
    for (const RecordType* type : {&kObservedA, &kObservedB, &kObservedC}) ctx.Observe(Observation(*type, {1}));
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context&, TimerId, uint64_t) override {}
};

// Node 0 sends node 1 a message of each type at start.
class SendsABC final : public Process {
 public:
  void OnStart(Context& ctx) override {
    if (ctx.self() != NodeId(0)) return;
    for (const RecordType* type : {&kObservedA, &kObservedB, &kObservedC}) ctx.Send(NodeId(1), Message(*type, {1}));
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context&, TimerId, uint64_t) override {}
};

// Logs "<name>:<type>" for each observation or send it is given, and
// "<name>:got <type>" for each delivery. It reads the observations of the
// types `types` names (every type when nullopt), or with `messages` the
// sends and deliveries of those types, and none of the other.
class NamedSink final : public TraceSink {
 public:
  NamedSink(std::string name, std::vector<std::string>* log, std::optional<ObservationTypes> types,
            bool messages = false, TraceKinds kinds = TraceKinds::All())
      : name_(std::move(name)), log_(log), types_(std::move(types)), messages_(messages), kinds_(kinds) {}
  void OnRecord(const TraceRecord& r) override {
    if (r.kind == TraceKind::kObserve || r.kind == TraceKind::kSend || r.kind == TraceKind::kDeliver) {
      log_->push_back(name_ + (r.kind == TraceKind::kDeliver ? ":got " : ":") + std::string(r.payload->type_name()));
    }
  }
  TraceKinds kinds() const override { return kinds_; }
  ObservationTypes observation_types() const override { return messages_ ? ObservationTypes({}) : Named(); }
  ObservationTypes message_types() const override { return messages_ ? Named() : ObservationTypes({}); }

 private:
  ObservationTypes Named() const { return types_.value_or(ObservationTypes::All()); }

  std::string name_;
  std::vector<std::string>* log_;
  std::optional<ObservationTypes> types_;
  bool messages_;
  TraceKinds kinds_;
};

// What four sinks log of the observations of types a, b and c (ObservesABC)
// or, with `messages`, of the messages (SendsABC): "a" reads type a, "all"
// every type, "ba" types b and a (a by another constant of its name), and
// "none" no observation or no message type.
std::vector<std::string> TypedLog(bool messages, bool offer_every) {
  std::vector<std::string> log;
  NamedSink a("a", &log, ObservationTypes{&kObservedA}, messages);
  NamedSink all("all", &log, std::nullopt, messages);
  NamedSink b_and_a("ba", &log, ObservationTypes{&kObservedB, &kObservedAElsewhere}, messages);
  NamedSink none = messages ? NamedSink("none", &log, ObservationTypes({}), true)
                            : NamedSink("none", &log, std::nullopt, false, {TraceKind::kStart, TraceKind::kSend});
  const uint32_t nodes = messages ? 2 : 1;
  Simulator sim(1, nodes);
  for (TraceSink* sink : std::initializer_list<TraceSink*>{&a, &all, &b_and_a, &none}) sim.AddTraceSink(sink);
  if (offer_every) sim.OfferEveryObservation();
  for (uint32_t node = 0; node < nodes; ++node) {
    EXPECT_TRUE(sim.SetProcess(NodeId(node),
                               [messages](NodeId) -> std::unique_ptr<Process> {
                                 if (messages) return std::make_unique<SendsABC>();
                                 return std::make_unique<ObservesABC>();
                               })
                    .ok());
  }
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  return log;
}
std::vector<std::string> ObservationLog(bool offer_every) { return TypedLog(false, offer_every); }
std::vector<std::string> MessageLog(bool offer_every) { return TypedLog(true, offer_every); }

TEST(Simulator_Sinks, AnObservationReachesTheSinksThatReadItsTypeInTheOrderAdded) {
  EXPECT_EQ(ObservationLog(false), (std::vector<std::string>{"a:test.a", "all:test.a", "ba:test.a",  //
                                                             "all:test.b", "ba:test.b",              //
                                                             "all:test.c"}));
}

TEST(Simulator_Sinks, OfferingEveryObservationReachesEverySinkThatReadsObservations) {
  EXPECT_EQ(ObservationLog(true), (std::vector<std::string>{"a:test.a", "all:test.a", "ba:test.a",  //
                                                            "a:test.b", "all:test.b", "ba:test.b",  //
                                                            "a:test.c", "all:test.c", "ba:test.c"}));
}

TEST(Simulator_Sinks, AMessageReachesTheSinksThatReadItsTypeInTheOrderAdded) {
  EXPECT_EQ(MessageLog(false), (std::vector<std::string>{"a:test.a", "all:test.a", "ba:test.a",              //
                                                         "all:test.b", "ba:test.b",                          //
                                                         "all:test.c",                                       //
                                                         "a:got test.a", "all:got test.a", "ba:got test.a",  //
                                                         "all:got test.b", "ba:got test.b",                  //
                                                         "all:got test.c"}));
}

TEST(Simulator_Sinks, OfferingEveryObservationOffersEveryMessageToo) {
  std::vector<std::string> expected;
  for (const char* how : {":", ":got "}) {
    for (const char* type : {"test.a", "test.b", "test.c"}) {
      for (const char* sink : {"a", "all", "ba", "none"}) expected.push_back(std::string(sink) + how + type);
    }
  }
  EXPECT_EQ(MessageLog(true), expected);
}

TEST(Simulator_Sinks, PastSixtyFourObservationSinksEachStillSeesItsTypes) {
  std::vector<std::string> log;
  std::vector<std::unique_ptr<NamedSink>> sinks;
  Simulator sim(1, 1);
  for (int i = 0; i < 70; ++i) {
    sinks.push_back(std::make_unique<NamedSink>(std::to_string(i), &log, ObservationTypes{&kObservedB}));
    sim.AddTraceSink(sinks.back().get());
  }
  ASSERT_TRUE(sim.SetProcess(NodeId(0), [](NodeId) { return std::make_unique<ObservesABC>(); }).ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  std::vector<std::string> saw_b;
  for (const std::string& entry : log) {
    if (entry.ends_with(":test.b")) saw_b.push_back(entry);
  }
  ASSERT_EQ(saw_b.size(), 70u);
  EXPECT_EQ(saw_b.front(), "0:test.b");
  EXPECT_EQ(saw_b.back(), "69:test.b");
}

// Observes `types` in an order that mixes them all, `count` times in all.
class ObservesMixedTypes final : public Process {
 public:
  ObservesMixedTypes(const std::vector<RecordType>* types, int count) : types_(types), count_(count) {}
  void OnStart(Context& ctx) override {
    uint64_t state = 1;
    for (int i = 0; i < count_; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // a fixed sequence, nothing drawn
      ctx.Observe(Observation((*types_)[(state >> 33) % types_->size()], {i}));
    }
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context&, TimerId, uint64_t) override {}

 private:
  const std::vector<RecordType>* types_;
  int count_;
};

// More types than the router caches answers for, each read by a sink of its
// own, interleaved: whatever the types evict in the cache, every observation
// reaches its own type's sink and no other.
TEST(Simulator_Sinks, ManyTypesInterleavedEachReachOnlyTheirOwnSink) {
  constexpr int kTypes = 48;
  std::vector<std::string> names;
  for (int i = 0; i < kTypes; ++i) names.push_back("type." + std::to_string(i));
  std::vector<RecordType> types;
  types.reserve(kTypes);
  for (const std::string& name : names) types.emplace_back(name, std::initializer_list<std::string_view>{"x"});
  std::vector<std::string> log;
  std::vector<std::unique_ptr<NamedSink>> sinks;
  Simulator sim(1, 1);
  for (int i = 0; i < kTypes; ++i) {
    sinks.push_back(std::make_unique<NamedSink>(names[i], &log, ObservationTypes{&types[i]}));
    sim.AddTraceSink(sinks.back().get());
  }
  ASSERT_TRUE(
      sim.SetProcess(NodeId(0), [&types](NodeId) { return std::make_unique<ObservesMixedTypes>(&types, 3000); }).ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(log.size(), 3000u);
  std::map<std::string, int> seen;
  for (const std::string& entry : log) {
    const size_t colon = entry.find(':');
    EXPECT_EQ(entry.substr(0, colon), entry.substr(colon + 1)) << "a record reached another type's sink";
    ++seen[entry.substr(colon + 1)];
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kTypes));
}

// ---- instant starts ----

// Observes test.a at start; at 10ms observes test.b, then writes; at 20ms
// writes, then observes test.c (each firing's own record comes first).
class InstantsOfMixedRecords final : public Process {
 public:
  void OnStart(Context& ctx) override {
    ctx.Observe(Observation(kObservedA, {1}));
    ctx.SetTimer(TimeNs::Millis(10), 1);
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    if (tag == 1) {
      ctx.Observe(Observation(kObservedB, {1}));
      ctx.Write("k", 1);
      ctx.SetTimer(TimeNs::Millis(10), 2);
    } else {
      ctx.Write("k", 2);
      ctx.Observe(Observation(kObservedC, {1}));
    }
  }
};

// Logs "<type or kind>@<index>" for each record of `kinds` it reads and,
// if it asks to be told where instants start,
// "instant@<index>,<time>,<kind>" (before the records it reads of that
// instant).
class IndexLogSink final : public TraceSink {
 public:
  IndexLogSink(std::vector<std::string>* log, TraceKinds kinds, bool reads_instant_starts)
      : log_(log), kinds_(kinds), reads_instant_starts_(reads_instant_starts) {}
  void OnRecord(const TraceRecord& r) override {
    log_->push_back(std::string(r.kind == TraceKind::kObserve ? r.payload->type_name() : TraceKindName(r.kind)) + "@" +
                    std::to_string(r.index));
  }
  void OnInstantStart(const TraceRecord& first) override {
    log_->push_back("instant@" + std::to_string(first.index) + "," + std::to_string(first.time.ns()) + "," +
                    std::string(TraceKindName(first.kind)));
  }
  TraceKinds kinds() const override { return kinds_; }
  bool reads_instant_starts() const override { return reads_instant_starts_; }

 private:
  std::vector<std::string>* log_;
  TraceKinds kinds_;
  bool reads_instant_starts_;
};

struct MixedRun {
  std::vector<std::string> log;  // the sink's
  uint64_t records = 0;          // in the whole trace
};

struct MixedRunOptions {
  TraceKinds kinds{TraceKind::kObserve};
  bool reads_instant_starts = false;
  bool offer_every_record = false;
  bool hash = false;
};

// A second of InstantsOfMixedRecords with one IndexLogSink.
MixedRun RunMixedRecords(const MixedRunOptions& options) {
  MixedRun out;
  IndexLogSink sink(&out.log, options.kinds, options.reads_instant_starts);
  Simulator sim(1, 1);
  if (options.offer_every_record) sim.OfferEveryRecord();
  if (options.hash) sim.EnableTraceHash();
  sim.AddTraceSink(&sink);
  EXPECT_TRUE(sim.SetProcess(NodeId(0), [](NodeId) { return std::make_unique<InstantsOfMixedRecords>(); }).ok());
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  out.records = sim.trace_records();
  return out;
}

// Observations only, told where instants start.
std::vector<std::string> InstantLog(bool offer_every_record) {
  return RunMixedRecords({.reads_instant_starts = true, .offer_every_record = offer_every_record}).log;
}

TEST(Simulator_Sinks, ASinkToldOfInstantStartsHearsOfEachLaterInstantAtItsFirstRecordOfAnyKind) {
  // Time 0 (start, test.a, timer_set) has no instant start: the trace
  // begins there. At 20ms the write comes before test.c.
  const std::vector<std::string> log = InstantLog(false);
  ASSERT_EQ(log.size(), 5u) << ::testing::PrintToString(log);
  EXPECT_EQ(log[0], "test.a@1");
  EXPECT_EQ(log[1], "instant@3,10000000,timer_fire");
  EXPECT_EQ(log[2], "test.b@4");
  EXPECT_EQ(log[3], "instant@7,20000000,timer_fire");
  EXPECT_EQ(log[4], "test.c@9");
}

// Timer and storage records take a shorter path when nothing hashes the
// trace and no sink reads their kind: they must still take their place in
// the trace. The process sets and fires timers and writes between its
// observations.
TEST(Simulator_Sinks, UnreadRecordsTakeTheirIndexWhetherOrNotAnythingReadsThem) {
  const MixedRun unread = RunMixedRecords({});
  const MixedRun hashed = RunMixedRecords({.hash = true});
  const MixedRun read =
      RunMixedRecords({.kinds = {TraceKind::kObserve, TraceKind::kTimerSet, TraceKind::kTimerFire, TraceKind::kWrite}});
  EXPECT_EQ(unread.log, (std::vector<std::string>{"test.a@1", "test.b@4", "test.c@9"}));
  EXPECT_EQ(hashed.log, unread.log);
  EXPECT_EQ(unread.records, read.records);
  EXPECT_EQ(hashed.records, read.records);
  std::vector<std::string> read_observations;
  for (const std::string& entry : read.log) {
    if (entry.starts_with("test.")) read_observations.push_back(entry);
  }
  EXPECT_EQ(read_observations, unread.log);
  EXPECT_EQ(read.log.size(), 3u + 2u + 2u + 2u);  // three observations, two timers set and fired, two writes
}

// Node 0 sends node 1 a ping at start; node 1 observes test.a when it
// arrives, 1ms later, in an instant that its delivery begins.
class PingThenObserve final : public Process {
 public:
  void OnStart(Context& ctx) override {
    if (ctx.self() == NodeId(0)) ctx.Send(NodeId(1), testing::Ping{.seq = 1});
  }
  void OnMessage(Context& ctx, NodeId, const Message&) override { ctx.Observe(Observation(kObservedA, {1})); }
  void OnTimer(Context&, TimerId, uint64_t) override {}
};

std::vector<std::string> PingThenObserveLog(TraceKinds kinds) {
  std::vector<std::string> log;
  IndexLogSink sink(&log, kinds, /*reads_instant_starts=*/true);
  LinkConfig link;
  link.latency = LatencyModel::Fixed(TimeNs::Millis(1));
  Simulator sim(1, 2, link);
  sim.AddTraceSink(&sink);
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(sim.SetProcess(NodeId(i), [](NodeId) { return std::make_unique<PingThenObserve>(); }).ok());
  }
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  return log;
}

// A delivery no sink reads is not built as a record, unless it begins an
// instant that a sink is told of: that sink hears of the instant at it.
TEST(Simulator_Sinks, AnInstantBegunByAnUnreadDeliveryIsToldOfAtTheDelivery) {
  EXPECT_EQ(PingThenObserveLog({TraceKind::kObserve}),
            (std::vector<std::string>{"instant@3,1000000,deliver", "test.a@4"}));
  EXPECT_EQ(PingThenObserveLog({TraceKind::kObserve, TraceKind::kDeliver}),
            (std::vector<std::string>{"instant@3,1000000,deliver", "deliver@3", "test.a@4"}));
}

TEST(Simulator_Sinks, OfferingEveryRecordTellsNoInstantStartsAndGivesEveryKind) {
  const std::vector<std::string> log = InstantLog(true);
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& e) { return e.starts_with("instant@"); }), 0);
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& e) { return e.starts_with("write@"); }), 2);
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& e) { return e.starts_with("test."); }), 3);
}

// Observes test.a at start and again when its timer fires, 10ms later.
class ObservesATwice final : public Process {
 public:
  void OnStart(Context& ctx) override {
    ctx.Observe(Observation(kObservedA, {1}));
    ctx.SetTimer(TimeNs::Millis(10), 0);
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context& ctx, TimerId, uint64_t) override { ctx.Observe(Observation(kObservedA, {2})); }
};

TEST(Simulator_Sinks, ASinkAddedMidRunSeesTheTypesItReadsFromThen) {
  std::vector<std::string> log;
  NamedSink early("early", &log, ObservationTypes{&kObservedA});
  NamedSink late("late", &log, ObservationTypes{&kObservedA});
  Simulator sim(1, 1);
  sim.AddTraceSink(&early);
  ASSERT_TRUE(sim.SetProcess(NodeId(0), [](NodeId) { return std::make_unique<ObservesATwice>(); }).ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Millis(5)).ok());  // test.a's sinks are known (and remembered) by now
  sim.AddTraceSink(&late);
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"early:test.a", "early:test.a", "late:test.a"}));
}

TEST(Simulator_Crash, MessageArrivingAtTheRestartInstantReachesTheNewProcess) {
  Simulator sim(4, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  InstallPingPong(sim, seen, 1, TimeNs::Millis(10));
  ASSERT_TRUE(sim.Start().ok());
  // The restart is queued before the ping (sent at 10ms, due at 11ms), so it runs first.
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(5), [&] { ASSERT_TRUE(sim.Crash(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(11), [&] { ASSERT_TRUE(sim.Restart(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(seen.deliveries.size(), 2u);  // the ping, then its pong
  EXPECT_EQ(seen.deliveries[0].to, NodeId(1));
  EXPECT_EQ(seen.deliveries[0].global, TimeNs::Millis(11));
}

TEST(Simulator_Crash, MessagesHeldAtAPausedNodeAreDroppedAsNodeDown) {
  Simulator sim(5, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  RecordCollector records;
  sim.AddTraceSink(&records);
  InstallPingPong(sim, seen, 3, TimeNs::Millis(10));
  ASSERT_TRUE(sim.Start().ok());
  // Pings land at 11, 21 and 31ms while node 1 is paused; it crashes at 35ms.
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(5), [&] { ASSERT_TRUE(sim.Pause(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(35), [&] { ASSERT_TRUE(sim.Crash(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_TRUE(seen.deliveries.empty());
  const std::vector<uint64_t> sent = records.MessageIds(TraceKind::kSend);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(records.MessageIds(TraceKind::kDrop, "node-down"), sent);  // each one, in the order held
  EXPECT_EQ(sim.stats().messages_dropped, 3u);
  EXPECT_EQ(sim.stats().messages_sent, sim.stats().messages_delivered + sim.stats().messages_dropped);
}

TEST(Simulator_Crash, CrashedNodesTimersNeverFire) {
  ProbeRun run({TimeNs::Millis(100), TimeNs::Millis(300)});
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(50), [&] { ASSERT_TRUE(run.sim.Crash(NodeId(0)).ok()); }).ok());
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(200), [&] { ASSERT_TRUE(run.sim.Restart(NodeId(0)).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(2)).ok());
  // Only the restarted incarnation's timers fire: at 200+100 and 200+300 ms.
  ASSERT_EQ(run.seen.firings.size(), 2u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Millis(300));
  EXPECT_EQ(run.seen.firings[1].global, TimeNs::Millis(500));
  EXPECT_EQ(run.seen.starts.size(), 2u);
}

// Runs one storage operation per timer, at the given local times, on its
// first incarnation; every incarnation records what it loads at boot.
class StorageScript final : public Process {
 public:
  using Op = std::function<void(Context&)>;
  StorageScript(std::vector<std::pair<TimeNs, Op>> ops, std::vector<std::map<std::string, int64_t>>* boots)
      : ops_(std::move(ops)), boots_(boots) {}
  void OnStart(Context& ctx) override {
    std::map<std::string, int64_t> loaded;
    for (const char* key : {"a", "b", "c"}) {
      if (auto value = ctx.Load(key)) loaded[key] = *value;
    }
    boots_->push_back(loaded);
    if (boots_->size() > 1) return;
    for (size_t i = 0; i < ops_.size(); ++i) ctx.SetTimer(ops_[i].first, i);
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override { ops_[tag].second(ctx); }

 private:
  std::vector<std::pair<TimeNs, StorageScript::Op>> ops_;
  std::vector<std::map<std::string, int64_t>>* boots_;
};

// Writes a=1 and syncs, then buffers a=2 and b=3 and persists c=4; the node
// goes down at 50ms (in the given way) and comes back at 60ms.
std::vector<std::map<std::string, int64_t>> BootsAfterCrash(CrashKind kind, RecordCollector* records = nullptr) {
  Simulator sim(1, 1);
  std::vector<std::map<std::string, int64_t>> boots;
  std::vector<std::pair<TimeNs, StorageScript::Op>> ops = {
      {TimeNs::Millis(10), [](Context& ctx) { ctx.Write("a", 1); }},
      {TimeNs::Millis(20), [](Context& ctx) { ctx.Sync(); }},
      {TimeNs::Millis(30),
       [](Context& ctx) {
         ctx.Write("a", 2);
         ctx.Write("b", 3);
         EXPECT_EQ(ctx.Load("a"), 2);  // a buffered value is what the node reads back
       }},
      {TimeNs::Millis(40), [](Context& ctx) { ctx.Persist("c", 4); }},
  };
  if (records != nullptr) sim.AddTraceSink(records);
  EXPECT_TRUE(sim.SetProcess(NodeId(0), [&](NodeId) { return std::make_unique<StorageScript>(ops, &boots); }).ok());
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(45),
                             [&] {
                               EXPECT_EQ(sim.StableStorageOf(NodeId(0)), (StableStorage{{"a", 1}, {"c", 4}}));
                               EXPECT_EQ(sim.UnsyncedWritesOf(NodeId(0)), (StableStorage{{"a", 2}, {"b", 3}}));
                             })
                  .ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(50), [&] { EXPECT_TRUE(sim.Crash(NodeId(0), kind).ok()); }).ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(60), [&] { EXPECT_TRUE(sim.Restart(NodeId(0)).ok()); }).ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Millis(100)).ok());
  return boots;
}

TEST(Simulator_Storage, AProcessCrashKeepsBufferedWrites) {
  const auto boots = BootsAfterCrash(CrashKind::kProcess);
  ASSERT_EQ(boots.size(), 2u);
  EXPECT_TRUE(boots[0].empty());
  EXPECT_EQ(boots[1], (std::map<std::string, int64_t>{{"a", 2}, {"b", 3}, {"c", 4}}));
}

TEST(Simulator_Storage, APowerLossLosesWhatNoSyncMadeDurable) {
  RecordCollector records;
  const auto boots = BootsAfterCrash(CrashKind::kPowerLoss, &records);
  ASSERT_EQ(boots.size(), 2u);
  // a=2 and b=3 were only buffered; a=1 was synced and c=4 persisted.
  EXPECT_EQ(boots[1], (std::map<std::string, int64_t>{{"a", 1}, {"c", 4}}));
  EXPECT_EQ(records.Count(TraceKind::kWrite), 3);
  EXPECT_EQ(records.Count(TraceKind::kSync), 1);
  EXPECT_EQ(records.Count(TraceKind::kPersist), 1);
  EXPECT_EQ(records.CountDetail(TraceKind::kCrash, "power-loss"), 1);
}

TEST(Simulator_Storage, PersistOverridesABufferedValueOfItsKey) {
  Simulator sim(1, 1);
  std::vector<std::map<std::string, int64_t>> boots;
  std::vector<std::pair<TimeNs, StorageScript::Op>> ops = {
      {TimeNs::Millis(10),
       [](Context& ctx) {
         ctx.Write("a", 1);
         ctx.Write("b", 2);
       }},
      {TimeNs::Millis(20), [](Context& ctx) { ctx.Persist("a", 5); }},
  };
  ASSERT_TRUE(sim.SetProcess(NodeId(0), [&](NodeId) { return std::make_unique<StorageScript>(ops, &boots); }).ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(
      sim.ScheduleAt(TimeNs::Millis(50), [&] { ASSERT_TRUE(sim.Crash(NodeId(0), CrashKind::kPowerLoss).ok()); }).ok());
  ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(60), [&] { ASSERT_TRUE(sim.Restart(NodeId(0)).ok()); }).ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Millis(100)).ok());
  ASSERT_EQ(boots.size(), 2u);
  // The persisted a=5 survives (and the buffered a=1 must not resurface); the buffered b is lost.
  EXPECT_EQ(boots[1], (std::map<std::string, int64_t>{{"a", 5}}));
}

TEST(Simulator_Storage, EachNodeHasItsOwnStorageUnderTheSameKeys) {
  // The simulator numbers keys once for all nodes; the values stay each node's.
  Simulator sim(1, 2);
  std::vector<std::map<std::string, int64_t>> boots0, boots1;
  std::vector<std::pair<TimeNs, StorageScript::Op>> ops0 = {
      {TimeNs::Millis(10),
       [](Context& ctx) {
         ctx.Persist("a", 1);
         ctx.Write("b", 2);
         ctx.Sync();
       }},
  };
  std::vector<std::pair<TimeNs, StorageScript::Op>> ops1 = {
      {TimeNs::Millis(20),
       [](Context& ctx) {
         EXPECT_EQ(ctx.Load("a"), std::nullopt);  // node 0's keys, not node 1's
         ctx.Write("c", 3);
         ctx.Persist("b", 4);
       }},
  };
  ASSERT_TRUE(sim.SetProcess(NodeId(0), [&](NodeId) { return std::make_unique<StorageScript>(ops0, &boots0); }).ok());
  ASSERT_TRUE(sim.SetProcess(NodeId(1), [&](NodeId) { return std::make_unique<StorageScript>(ops1, &boots1); }).ok());
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Millis(100)).ok());
  EXPECT_EQ(sim.StableStorageOf(NodeId(0)), (StableStorage{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(sim.StableStorageOf(NodeId(1)), (StableStorage{{"b", 4}}));
  EXPECT_EQ(sim.UnsyncedWritesOf(NodeId(0)), StableStorage{});
  EXPECT_EQ(sim.UnsyncedWritesOf(NodeId(1)), (StableStorage{{"c", 3}}));
}

TEST(Simulator_Clock, FastClockFiresTimersEarlyByTheDriftRatio) {
  // +100000 ppm: the clock gains 0.1s per second, so a 1.1s local wait takes 1s.
  ProbeRun fast({TimeNs::Millis(1100)});
  ASSERT_TRUE(fast.sim.SetClockDrift(NodeId(0), 100000).ok());
  ASSERT_TRUE(fast.sim.RunUntil(TimeNs::Seconds(5)).ok());
  ASSERT_EQ(fast.seen.firings.size(), 1u);
  EXPECT_EQ(fast.seen.firings[0].global, TimeNs::Seconds(1));
  EXPECT_EQ(fast.seen.firings[0].local, TimeNs::Millis(1100));
}

TEST(Simulator_Clock, SlowClockFiresTimersLate) {
  ProbeRun slow({TimeNs::Millis(900)});
  ASSERT_TRUE(slow.sim.SetClockDrift(NodeId(0), -100000).ok());  // 0.9s local per 1s global
  ASSERT_TRUE(slow.sim.RunUntil(TimeNs::Seconds(5)).ok());
  ASSERT_EQ(slow.seen.firings.size(), 1u);
  EXPECT_EQ(slow.seen.firings[0].global, TimeNs::Seconds(1));
}

TEST(Simulator_Clock, DriftChangeMidTimerReschedulesIt) {
  ProbeRun run({TimeNs::Seconds(2)});
  // 1s at the normal rate, then +250000 ppm: the remaining 1s of local time takes 0.8s.
  ASSERT_TRUE(
      run.sim.ScheduleAt(TimeNs::Seconds(1), [&] { ASSERT_TRUE(run.sim.SetClockDrift(NodeId(0), 250000).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(5)).ok());
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Millis(1800));
  EXPECT_EQ(run.seen.firings[0].local, TimeNs::Seconds(2));
}

TEST(Simulator_Clock, DriftStaysExactPastTheRangeOf64BitProducts) {
  // 10000s * (1e6 + 100000) overflows int64, so the clock falls back to
  // 128-bit arithmetic; the reading must still be exactly 1.1x.
  ProbeRun run({TimeNs::Seconds(11000) + TimeNs::Millis(1100)});
  ASSERT_TRUE(run.sim.SetClockDrift(NodeId(0), 100000).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(10000)).ok());
  EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)), TimeNs::Seconds(11000));
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(10002)).ok());
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Seconds(10001));
  EXPECT_EQ(run.seen.firings[0].local, TimeNs::Seconds(11001) + TimeNs::Millis(100));
}

// Arms delays_[0] at start and, as each timer fires, the next delay.
class ChainedTimers final : public Process {
 public:
  ChainedTimers(const Simulator* sim, Seen* seen, std::vector<TimeNs> delays)
      : sim_(sim), seen_(seen), delays_(std::move(delays)) {}
  void OnStart(Context& ctx) override { ctx.SetTimer(delays_[0], 0); }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    seen_->firings.push_back({sim_->now(), ctx.MonotonicNow(), ctx.self(), tag});
    if (tag + 1 < delays_.size()) ctx.SetTimer(delays_[tag + 1], tag + 1);
  }

 private:
  const Simulator* sim_;
  Seen* seen_;
  std::vector<TimeNs> delays_;
};

// One ChainedTimers node whose clock drifts by `drift_ppm` until
// `drift_ends_at`, then keeps the global rate.
struct DriftThenSteadyRun {
  DriftThenSteadyRun(std::vector<TimeNs> delays, int64_t drift_ppm, TimeNs drift_ends_at) : sim(1, 1) {
    EXPECT_TRUE(sim.SetProcess(NodeId(0),
                               [this, delays](NodeId) { return std::make_unique<ChainedTimers>(&sim, &seen, delays); })
                    .ok());
    EXPECT_TRUE(sim.SetClockDrift(NodeId(0), drift_ppm).ok());
    EXPECT_TRUE(sim.Start().ok());
    EXPECT_TRUE(sim.ScheduleAt(drift_ends_at, [this] { EXPECT_TRUE(sim.SetClockDrift(NodeId(0), 0).ok()); }).ok());
  }
  Simulator sim;
  Seen seen;
};

TEST(Simulator_Clock, TimerArmedOnAClockAheadOfGlobalTimeFiresItsDelayLater) {
  // +400000 ppm for 10ms puts the clock 4ms ahead. The first timer (20ms
  // local) fires at 16ms global; the second, armed then with 7ms, 7ms later
  // on both clocks.
  DriftThenSteadyRun run({TimeNs::Millis(20), TimeNs::Millis(7)}, 400000, TimeNs::Millis(10));
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.seen.firings.size(), 2u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Millis(16));
  EXPECT_EQ(run.seen.firings[0].local, TimeNs::Millis(20));
  EXPECT_EQ(run.seen.firings[1].global, TimeNs::Millis(23));
  EXPECT_EQ(run.seen.firings[1].local, TimeNs::Millis(27));
}

TEST(Simulator_Clock, DelayPastTheEndOfGlobalTimeNeverFiresOnAClockBehindIt) {
  // -400000 ppm for 2s leaves the clock 0.8s behind. A delay that keeps the
  // deadline in range on the node's clock but would pass TimeNs::Max()
  // globally never fires (wrapping would fire it at once).
  const TimeNs delay = TimeNs::Max() - TimeNs::Millis(1500);  // armed at 2s global, 1.2s local
  DriftThenSteadyRun run({TimeNs::Millis(1200), delay}, -400000, TimeNs::Seconds(2));
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1000000)).ok());
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Seconds(2));
  EXPECT_EQ(run.seen.firings[0].local, TimeNs::Millis(1200));
}

TEST(Simulator_Clock, WallStepMovesOnlyTheWallClock) {
  ProbeRun run({TimeNs::Seconds(1)});
  ASSERT_TRUE(run.sim
                  .ScheduleAt(TimeNs::Millis(100),
                              [&] {
                                ASSERT_TRUE(run.sim.StepWallClock(NodeId(0), TimeNs::Seconds(10)).ok());
                                EXPECT_EQ(run.sim.WallTime(NodeId(0)), TimeNs::Millis(10100));
                                EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)), TimeNs::Millis(100));
                              })
                  .ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(5)).ok());
  // The timer runs on the monotonic clock: the +10s step did not pull it in.
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Seconds(1));
  EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)), TimeNs::Seconds(5));
  EXPECT_EQ(run.sim.WallTime(NodeId(0)), TimeNs::Seconds(15));
}

TEST(Simulator_Clock, BackwardWallStepDoesNotDelayTimers) {
  ProbeRun run({TimeNs::Seconds(1)});
  ASSERT_TRUE(run.sim
                  .ScheduleAt(TimeNs::Millis(100),
                              [&] { ASSERT_TRUE(run.sim.StepWallClock(NodeId(0), TimeNs::Seconds(-2)).ok()); })
                  .ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(5)).ok());
  ASSERT_EQ(run.seen.firings.size(), 1u);
  EXPECT_EQ(run.seen.firings[0].global, TimeNs::Seconds(1));
  EXPECT_EQ(run.sim.WallTime(NodeId(0)), TimeNs::Seconds(3));
}

TEST(Simulator_Clock, DriftMovesBothClocksAndTheWallKeepsItsSteps) {
  ProbeRun run({});
  ASSERT_TRUE(run.sim.StepWallClock(NodeId(0), TimeNs::Seconds(100)).ok());
  ASSERT_TRUE(run.sim.SetClockDrift(NodeId(0), -200000).ok());  // 0.8s per second
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(10)).ok());
  EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)), TimeNs::Seconds(8));
  EXPECT_EQ(run.sim.WallTime(NodeId(0)), TimeNs::Seconds(108));
}

TEST(Simulator_Clock, WallStepsThatWouldLeaveTheClockBoundAreRejected) {
  for (const int64_t sign : {1, -1}) {
    ProbeRun run({});
    const TimeNs step = TimeNs::Seconds(1000000) * sign;
    // 4611 steps reach 4.611e18ns; the next would pass 2^62ns = 4.6117e18ns.
    int accepted = 0;
    absl::Status first_refusal;
    for (int i = 0; i < 9300; ++i) {
      const absl::Status status = run.sim.StepWallClock(NodeId(0), step);
      if (status.ok()) {
        ++accepted;
      } else if (first_refusal.ok()) {
        first_refusal = status;
      }
    }
    EXPECT_EQ(accepted, 4611);
    EXPECT_EQ(first_refusal.code(), absl::StatusCode::kInvalidArgument) << first_refusal;
    EXPECT_NE(first_refusal.message().find("node 0"), std::string_view::npos) << first_refusal;
    EXPECT_NE(first_refusal.message().find(std::to_string(step.ns())), std::string_view::npos) << first_refusal;
    EXPECT_EQ(run.sim.WallTime(NodeId(0)).ns(),
              (TimeNs::Seconds(1000000) * 4611 * sign).ns());  // refusals changed nothing
    EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)), TimeNs(0));
  }
}

TEST(Simulator_Clock, ReadingsSaturateAtTheEndOfTime) {
  for (const int64_t drift_ppm : {0, 400000}) {
    ProbeRun run({});
    ASSERT_TRUE(run.sim.SetClockDrift(NodeId(0), drift_ppm).ok());
    ASSERT_TRUE(run.sim.StepWallClock(NodeId(0), kMaxClockReading).ok());
    ASSERT_TRUE(run.sim.RunUntil(TimeNs::Max()).ok());
    EXPECT_EQ(run.sim.WallTime(NodeId(0)).ns(), TimeNs::Max().ns()) << drift_ppm;
    if (drift_ppm > 0) {
      EXPECT_EQ(run.sim.MonotonicTime(NodeId(0)).ns(), TimeNs::Max().ns());
    }
  }
}

TEST(Simulator_Clock, TimerAtTheEndOfTimeNeverFiresWhateverTheWallClockDoes) {
  ProbeRun run({TimeNs::Max()});
  ASSERT_TRUE(run.sim
                  .ScheduleAt(TimeNs::Millis(1),
                              [&] {
                                ASSERT_TRUE(run.sim.StepWallClock(NodeId(0), TimeNs(0) - kMaxClockReading).ok());
                                ASSERT_TRUE(run.sim.SetClockDrift(NodeId(0), 499999).ok());
                              })
                  .ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1000000)).ok());
  EXPECT_TRUE(run.seen.firings.empty());
}

struct Bad {
  static constexpr RecordType kType{"bad", {}};
};

class BadProcess final : public Process {
 public:
  explicit BadProcess(int mode) : mode_(mode) {}
  void OnStart(Context& ctx) override {
    if (mode_ == 0) ctx.Send(NodeId(7), Message(Bad::kType, {}));
    if (mode_ == 1) ctx.SetTimer(TimeNs(-5), 0);
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context&, TimerId, uint64_t) override {}

 private:
  int mode_;
};

TEST(Simulator_BadInput, ProcessErrorsEndTheRunWithAClearError) {
  for (int mode : {0, 1}) {
    Simulator sim(1, 1);
    ASSERT_TRUE(sim.SetProcess(NodeId(0), [mode](NodeId) { return std::make_unique<BadProcess>(mode); }).ok());
    ASSERT_TRUE(sim.Start().ok());
    const absl::Status status = sim.RunUntil(TimeNs::Seconds(1));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find(mode == 0 ? "unknown node 7" : "negative delay"), std::string_view::npos) << status;
  }
}

TEST(Simulator_BadInput, PublicApiRejectsBadArguments) {
  Simulator sim(1, 2);
  EXPECT_FALSE(sim.Crash(NodeId(2)).ok());
  EXPECT_FALSE(sim.Pause(NodeId(5)).ok());
  EXPECT_FALSE(sim.Resume(NodeId(0)).ok());   // not paused
  EXPECT_FALSE(sim.Restart(NodeId(0)).ok());  // not down
  EXPECT_FALSE(sim.SetClockDrift(NodeId(0), 600000).ok());
  EXPECT_FALSE(sim.SetProcess(NodeId(3), [](NodeId) { return std::unique_ptr<Process>(); }).ok());
  EXPECT_EQ(sim.Start().code(), absl::StatusCode::kFailedPrecondition);  // no processes yet
  EXPECT_FALSE(sim.RunUntil(TimeNs(1)).ok());
  EXPECT_FALSE(sim.ScheduleAt(TimeNs(-1), [] {}).ok());
}

TEST(Simulator_BadInput, EventStormStopsTheRunAtThePendingEventCap) {
  // A ping every 1ns over a 1ms link: deliveries pile up a million deep.
  Simulator sim(6, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  InstallPingPong(sim, seen, 1000000000, TimeNs(1));
  sim.SetMaxPendingEvents(100);
  ASSERT_TRUE(sim.Start().ok());
  const absl::Status status = sim.RunUntil(TimeNs::Seconds(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_LT(sim.now(), TimeNs::Micros(1));  // stopped early, not after a second of storm
  EXPECT_NE(status.message().find("101 events pending"), std::string_view::npos) << status;
  EXPECT_NE(status.message().find(FormatDuration(sim.now())), std::string_view::npos) << status;
  EXPECT_NE(status.message().find("storm"), std::string_view::npos) << status;
  EXPECT_EQ(sim.RunUntil(TimeNs::Seconds(2)), status);  // the run stays stopped
}

TEST(Simulator_BadInput, EventsHeldAtAPausedNodeCountAsPending) {
  Simulator sim(7, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  InstallPingPong(sim, seen, 1000000000, TimeNs::Micros(1));
  // The queue holds about 1000 deliveries plus a timer; pings held at the
  // paused node 1 add up on top of those.
  sim.SetMaxPendingEvents(5000);
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.Pause(NodeId(1)).ok());
  const absl::Status status = sim.RunUntil(TimeNs::Seconds(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_LT(sim.now(), TimeNs::Millis(10));
}

// Re-arms a long timeout on every short tick, as a follower re-arms its
// election timeout on every heartbeat: each tick leaves a stale event queued
// until the old deadline.
class RearmOnTick final : public Process {
 public:
  explicit RearmOnTick(int* timeouts) : timeouts_(timeouts) {}
  void OnStart(Context& ctx) override {
    timeout_ = ctx.SetTimer(TimeNs::Seconds(3600), 0);
    ctx.SetTimer(TimeNs::Millis(1), 1);
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    if (tag == 0) {
      ++*timeouts_;
      return;
    }
    ctx.CancelTimer(timeout_);
    timeout_ = ctx.SetTimer(TimeNs::Seconds(3600), 0);
    ctx.SetTimer(TimeNs::Millis(1), 1);
  }

 private:
  int* timeouts_;
  TimerId timeout_;
};

TEST(Simulator_BadInput, CancelledTimersDoNotCountAgainstThePendingEventCap) {
  // 20,000 ticks each cancel an hour-long timeout: without dropping stale
  // events the queue would hold 20,000 of them, far past a cap of 100, with
  // only two live timers at any moment.
  Simulator sim(8, 1);
  int timeouts = 0;
  ASSERT_TRUE(sim.SetProcess(NodeId(0), [&timeouts](NodeId) { return std::make_unique<RearmOnTick>(&timeouts); }).ok());
  sim.SetMaxPendingEvents(100);
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs::Seconds(20)).ok()) << sim.status();
  EXPECT_EQ(sim.stats().timers_fired, 20000u);
  EXPECT_EQ(timeouts, 0);  // none of the cancelled timeouts fired
}

// Keeps three timers going and re-arms them at random, as election timers
// are re-armed at every heartbeat: sooner or later than before, cancelled
// outright, or left to fire; each firing or message may send a message.
class TimerChurn final : public Process {
 public:
  void OnStart(Context& ctx) override {
    for (uint64_t tag = 0; tag < timers_.size(); ++tag) Arm(ctx, tag);
  }
  void OnMessage(Context& ctx, NodeId, const Message&) override { Churn(ctx); }
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    timers_[tag] = TimerId(0);
    if (ctx.rng().Chance(Probability::FromParts(Probability::kOne / 10 * 7))) Arm(ctx, tag);
    Churn(ctx);
  }

 private:
  void Arm(Context& ctx, uint64_t tag) {
    ctx.CancelTimer(timers_[tag]);
    timers_[tag] = ctx.SetTimer(TimeNs::Millis(ctx.rng().Between(0, 20)), tag);
  }
  void Churn(Context& ctx) {
    const auto tag = static_cast<uint64_t>(ctx.rng().Between(0, static_cast<int64_t>(timers_.size()) - 1));
    if (ctx.rng().Chance(Probability::FromParts(Probability::kOne / 10))) {
      ctx.CancelTimer(timers_[tag]);
      timers_[tag] = TimerId(0);
    } else {
      Arm(ctx, tag);
    }
    if (ctx.rng().Chance(Probability::FromParts(Probability::kOne / 2))) {
      ctx.Send(NodeId(static_cast<uint32_t>(ctx.rng().Between(0, 2))), testing::Ping{.seq = 1});
    }
  }
  std::array<TimerId, 3> timers_{};
};

struct ChurnRun {
  uint64_t trace_hash;
  uint64_t records;
  uint64_t events;
};

// Six TimerChurn nodes over 1ms links for 2s (whole milliseconds
// everywhere, so that many events fall due at the same instant and only
// their sequence numbers order them). Every 25ms one node's clock drift
// changes, or it pauses for 20ms, or it crashes for 30ms; and the pending
// events are capped low enough (about twice the live ones) that stale ones
// are compacted away often, carriers of deferred timers among them.
ChurnRun RunTimerChurn(uint64_t seed, bool defer) {
  constexpr uint32_t kNodes = 6;
  Simulator sim(seed, kNodes, LinkConfig::Fixed(TimeNs::Millis(1)));
  sim.SetTimerDeferral(defer);
  sim.EnableTraceHash();
  sim.SetMaxPendingEvents(40);
  for (uint32_t node = 0; node < kNodes; ++node) {
    EXPECT_TRUE(sim.SetProcess(NodeId(node), [](NodeId) { return std::make_unique<TimerChurn>(); }).ok());
  }
  EXPECT_TRUE(sim.Start().ok());
  // Each step schedules the next, so that few actions are pending at once.
  // A fault that does not apply (pausing a crashed node) is refused the
  // same way in both runs.
  std::function<void(int64_t)> step = [&](int64_t k) {
    const NodeId node(static_cast<uint32_t>(k % kNodes));
    const TimeNs now = sim.now();
    switch (k % 3) {
      case 0: sim.SetClockDrift(node, (k % 5 - 2) * 40000).IgnoreError(); break;
      case 1:
        sim.Pause(node).IgnoreError();
        EXPECT_TRUE(sim.ScheduleAt(now + TimeNs::Millis(20), [&sim, node] { sim.Resume(node).IgnoreError(); }).ok());
        break;
      default:
        sim.Crash(node).IgnoreError();
        EXPECT_TRUE(sim.ScheduleAt(now + TimeNs::Millis(30), [&sim, node] { sim.Restart(node).IgnoreError(); }).ok());
    }
    EXPECT_TRUE(sim.ScheduleAt(now + TimeNs::Millis(25), [&step, k] { step(k + 1); }).ok());
  };
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(25), [&step] { step(1); }).ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(2)).ok()) << sim.status();
  return {sim.trace_hasher().hash(), sim.trace_records(), sim.stats().events};
}

TEST(Simulator_Timers, DeferredTimersFireExactlyWhereTheyWouldHaveIfQueuedWhenArmed) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const ChurnRun deferred = RunTimerChurn(seed, true);
    const ChurnRun queued = RunTimerChurn(seed, false);
    EXPECT_EQ(deferred.trace_hash, queued.trace_hash) << seed;
    EXPECT_EQ(deferred.records, queued.records) << seed;
    EXPECT_GT(deferred.records, 5000u) << seed;
    // Re-armed timers queued no event of their own, so fewer stale ones came up.
    EXPECT_LT(deferred.events, queued.events) << seed;
  }
}

// Two-node ping-pong over 1ms links with `model`; returns what the nodes saw.
Seen RunPingPongWithModel(const NodeModel& model, int pings, TimeNs interval,
                          const std::function<void(Simulator&)>& faults = {}) {
  Simulator sim(1, 2, LinkConfig::Fixed(TimeNs::Millis(1)));
  Seen seen;
  EXPECT_TRUE(sim.SetNodeModel(model).ok());
  InstallPingPong(sim, seen, pings, interval);
  EXPECT_TRUE(sim.Start().ok());
  if (faults) faults(sim);
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(1)).ok());
  return seen;
}

std::vector<std::pair<TimeNs, NodeId>> DeliveryTimes(const Seen& seen) {
  std::vector<std::pair<TimeNs, NodeId>> times;
  for (const auto& d : seen.deliveries) times.emplace_back(d.global, d.to);
  return times;
}

TEST(Simulator_NodeModel, ProcessingTimeDelaysEachHandlerByExactlyThatTime) {
  NodeModel model;
  model.processing = LatencyModel::Fixed(TimeNs::Millis(3));
  // The ping lands at 11ms and is handled at 14ms; the pong lands at 15ms and is handled at 18ms.
  EXPECT_EQ(DeliveryTimes(RunPingPongWithModel(model, 1, TimeNs::Millis(10))),
            (std::vector<std::pair<TimeNs, NodeId>>{{TimeNs::Millis(14), NodeId(1)}, {TimeNs::Millis(18), NodeId(0)}}));
}

TEST(Simulator_NodeModel, DeliveriesQueueBehindTheMessageInHand) {
  NodeModel model;
  model.processing = LatencyModel::Fixed(TimeNs::Millis(5));
  // Pings land at node 1 at 2ms and 3ms: one at a time, done at 7ms and 12ms.
  const Seen seen = RunPingPongWithModel(model, 2, TimeNs::Millis(1));
  std::vector<TimeNs> at_node1;
  for (const auto& d : seen.deliveries) {
    if (d.to == NodeId(1)) at_node1.push_back(d.global);
  }
  EXPECT_EQ(at_node1, (std::vector<TimeNs>{TimeNs::Millis(7), TimeNs::Millis(12)}));
}

TEST(Simulator_NodeModel, ASyncHoldsTheHandlersSendsForThePersistLatency) {
  NodeModel model;
  model.persist = LatencyModel::Fixed(TimeNs::Millis(4));
  // Node 1 persists before it answers: the pong leaves at 15ms, not 11ms.
  EXPECT_EQ(DeliveryTimes(RunPingPongWithModel(model, 1, TimeNs::Millis(10))),
            (std::vector<std::pair<TimeNs, NodeId>>{{TimeNs::Millis(11), NodeId(1)}, {TimeNs::Millis(16), NodeId(0)}}));
}

TEST(Simulator_NodeModel, ACrashLosesTheMessageBeingProcessed) {
  NodeModel model;
  model.processing = LatencyModel::Fixed(TimeNs::Millis(3));
  const Seen seen = RunPingPongWithModel(model, 1, TimeNs::Millis(10), [](Simulator& sim) {
    ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(12), [&sim] { ASSERT_TRUE(sim.Crash(NodeId(1)).ok()); }).ok());
  });
  EXPECT_TRUE(seen.deliveries.empty());
  // Back before the processing would be over: the new process never gets it.
  const Seen restarted = RunPingPongWithModel(model, 1, TimeNs::Millis(10), [](Simulator& sim) {
    ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(12), [&sim] { ASSERT_TRUE(sim.Crash(NodeId(1)).ok()); }).ok());
    ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(13), [&sim] { ASSERT_TRUE(sim.Restart(NodeId(1)).ok()); }).ok());
  });
  EXPECT_TRUE(restarted.deliveries.empty());
}

TEST(Simulator_NodeModel, NegativeLatenciesAreRejected) {
  Simulator sim(1, 2);
  NodeModel model;
  model.persist = LatencyModel::Fixed(TimeNs(-1));
  const absl::Status status = sim.SetNodeModel(model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("persist"), std::string_view::npos) << status;
}

uint64_t RunPingPongHash(uint64_t seed, const NodeModel* model = nullptr) {
  LinkConfig link;
  link.latency = LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(20));
  link.drop = *Probability::FromDouble(0.1);
  link.duplicate = *Probability::FromDouble(0.05);
  Simulator sim(seed, 2, link);
  if (model != nullptr) {
    EXPECT_TRUE(sim.SetNodeModel(*model).ok());
  }
  Seen seen;
  TraceHasher hasher;
  sim.AddTraceSink(&hasher);
  InstallPingPong(sim, seen, 200, TimeNs::Millis(5));
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Seconds(2)).ok());
  return hasher.hash();
}

TEST(Simulator_Determinism, SameSeedSameHashDifferentSeedDifferentHash) {
  EXPECT_EQ(RunPingPongHash(11), RunPingPongHash(11));
  EXPECT_NE(RunPingPongHash(11), RunPingPongHash(12));
}

TEST(Simulator_Determinism, AZeroNodeModelKeepsTheTraceAndANonZeroOneChangesIt) {
  const NodeModel zero;
  EXPECT_EQ(RunPingPongHash(11, &zero), RunPingPongHash(11));
  NodeModel busy;
  busy.processing = LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(2));
  EXPECT_EQ(RunPingPongHash(11, &busy), RunPingPongHash(11, &busy));
  EXPECT_NE(RunPingPongHash(11, &busy), RunPingPongHash(11));
}

// Records the first draw of each node's own stream.
class FirstDraw final : public Process {
 public:
  explicit FirstDraw(std::map<uint32_t, uint64_t>* draws) : draws_(draws) {}
  void OnStart(Context& ctx) override {
    if (ctx.self().value() % 9999 == 0) (*draws_)[ctx.self().value()] = ctx.rng().Next();
  }
  void OnMessage(Context&, NodeId, const Message&) override {}
  void OnTimer(Context&, TimerId, uint64_t) override {}

 private:
  std::map<uint32_t, uint64_t>* draws_;
};

TEST(Simulator_Setup, AHundredThousandNodesStartWithTheStreamsNamedAfterThem) {
  constexpr uint32_t kNodes = 100000;
  Simulator sim(21, kNodes);
  std::map<uint32_t, uint64_t> draws;
  for (uint32_t i = 0; i < kNodes; ++i) {
    ASSERT_TRUE(sim.SetProcess(NodeId(i), [&draws](NodeId) { return std::make_unique<FirstDraw>(&draws); }).ok());
  }
  ASSERT_TRUE(sim.Start().ok());
  ASSERT_TRUE(sim.RunUntil(TimeNs(0)).ok());
  EXPECT_EQ(sim.stats().events, kNodes);
  ASSERT_EQ(draws.size(), 11u);  // 0, 9999, ..., 99990
  for (const auto& [node, draw] : draws) {
    EXPECT_EQ(draw, Rng::ForStream(21, absl::StrCat("node/", node)).Next()) << node;
  }
}

// Exercises every source of randomness and every kind of event: each node
// re-arms an election-like timeout on every message (cancelling the old one),
// sends to random peers, persists, and draws from its own stream.
class Chatter final : public Process {
 public:
  explicit Chatter(uint32_t nodes) : nodes_(nodes) {}
  void OnStart(Context& ctx) override {
    Rearm(ctx);
    heartbeat_ = ctx.SetTimer(TimeNs::Millis(1 + static_cast<int64_t>(ctx.rng().Below(5))), 1);
  }
  void OnMessage(Context& ctx, NodeId, const Message& message) override {
    ctx.Persist("seen", message.Get("seq"));
    Rearm(ctx);
    if (ctx.rng().Below(4) == 0) {  // a heartbeat put off
      ctx.CancelTimer(heartbeat_);
      heartbeat_ = ctx.SetTimer(TimeNs::Millis(2 + static_cast<int64_t>(ctx.rng().Below(3))), 1);
    }
  }
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    for (int i = 0; i < 2; ++i) {
      ctx.Send(NodeId(static_cast<uint32_t>(ctx.rng().Below(nodes_))), testing::Ping{.seq = ++sent_});
    }
    if (tag == 1) heartbeat_ = ctx.SetTimer(TimeNs::Millis(2 + static_cast<int64_t>(ctx.rng().Below(3))), 1);
    if (tag == 0) Rearm(ctx);
  }

 private:
  void Rearm(Context& ctx) {
    ctx.CancelTimer(timeout_);
    timeout_ = ctx.SetTimer(TimeNs::Millis(5 + static_cast<int64_t>(ctx.rng().Below(10))), 0);
  }
  uint32_t nodes_;
  TimerId timeout_;
  TimerId heartbeat_;
  int64_t sent_ = 0;
};

LinkConfig ChatterLink() {
  LinkConfig link;
  link.latency = LatencyModel::Uniform(TimeNs::Micros(200), TimeNs::Millis(3));
  link.drop = *Probability::FromDouble(0.05);
  link.duplicate = *Probability::FromDouble(0.02);
  return link;
}

void InstallChatter(Simulator& sim, uint32_t nodes) {
  for (uint32_t i = 0; i < nodes; ++i) {
    EXPECT_TRUE(sim.SetProcess(NodeId(i), [nodes](NodeId) { return std::make_unique<Chatter>(nodes); }).ok());
  }
}

// Sets the node model, starts the chatter and runs it through its faults.
void RunChatter(Simulator& sim, uint32_t nodes) {
  NodeModel model;
  model.processing = LatencyModel::Uniform(TimeNs::Micros(10), TimeNs::Micros(300));
  model.persist = LatencyModel::Uniform(TimeNs::Micros(50), TimeNs::Micros(500));
  EXPECT_TRUE(sim.SetNodeModel(model).ok());
  const NodeId last(nodes - 1);
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(20), [&] { EXPECT_TRUE(sim.Pause(NodeId(1)).ok()); }).ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(30), [&] { EXPECT_TRUE(sim.SetClockDrift(NodeId(1), 200000).ok()); }).ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(45), [&] { EXPECT_TRUE(sim.Resume(NodeId(1)).ok()); }).ok());
  EXPECT_TRUE(
      sim.ScheduleAt(TimeNs::Millis(50), [&] { EXPECT_TRUE(sim.Crash(last, CrashKind::kPowerLoss).ok()); }).ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(60),
                             [&] {
                               EXPECT_TRUE(sim.Partition({{NodeId(0), NodeId(2)}}).ok());
                               EXPECT_TRUE(sim.SetClockDrift(NodeId(2), -100000).ok());
                             })
                  .ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(70), [&] { EXPECT_TRUE(sim.Restart(last).ok()); }).ok());
  EXPECT_TRUE(sim.ScheduleAt(TimeNs::Millis(80), [&] { sim.HealNetwork(); }).ok());
  EXPECT_TRUE(sim.RunUntil(TimeNs::Millis(120)).ok());
  EXPECT_GT(sim.stats().timers_fired, 20u * nodes);  // a busy run, not one that stalled early
}

struct ChatterRun {
  uint64_t hash = 0;
  std::vector<std::string> instants;  // where each instant starts, as a sink that reads them is told
  std::vector<std::string> nodes;     // at the end, each node's clocks and storage (NodeEnds)
};

std::vector<std::string> NodeEnds(const Simulator& sim) {
  std::vector<std::string> ends;
  for (uint32_t i = 0; i < sim.node_count(); ++i) {
    std::string end = "monotonic " + std::to_string(sim.MonotonicTime(NodeId(i)).ns()) + " wall " +
                      std::to_string(sim.WallTime(NodeId(i)).ns()) + " durable";
    for (const auto& [key, value] : sim.StableStorageOf(NodeId(i))) end += " " + key + "=" + std::to_string(value);
    end += " buffered";
    for (const auto& [key, value] : sim.UnsyncedWritesOf(NodeId(i))) end += " " + key + "=" + std::to_string(value);
    ends.push_back(end);
  }
  return ends;
}

// The chatter, leaving behind storage it never writes itself: a durable key and a buffered one.
class StorageLeavingChatter final : public Process {
 public:
  explicit StorageLeavingChatter(uint32_t nodes) : chatter_(nodes) {}
  void OnStart(Context& ctx) override {
    ctx.Persist("left-durable", 1);
    ctx.Write("left-buffered", 2);
    chatter_.OnStart(ctx);
  }
  void OnMessage(Context& ctx, NodeId from, const Message& message) override { chatter_.OnMessage(ctx, from, message); }
  void OnTimer(Context& ctx, TimerId timer, uint64_t tag) override { chatter_.OnTimer(ctx, timer, tag); }

 private:
  Chatter chatter_;
};

ChatterRun RunNewChatter(uint32_t nodes, uint64_t seed) {
  ChatterRun run;
  Simulator sim(seed, nodes, ChatterLink());
  TraceHasher hasher;
  sim.AddTraceSink(&hasher);
  IndexLogSink instants(&run.instants, TraceKinds{}, /*reads_instant_starts=*/true);
  sim.AddTraceSink(&instants);
  InstallChatter(sim, nodes);
  RunChatter(sim, nodes);
  run.hash = hasher.hash();
  run.nodes = NodeEnds(sim);
  return run;
}

uint64_t RunChatterHash(uint32_t nodes, uint64_t seed) { return RunNewChatter(nodes, seed).hash; }

// A simulator reset to a seed runs it as a new one would, with the process
// factories it was given after the reset and then kept, whatever the run
// before left behind: messages in flight and held at a paused node, timers,
// cuts, links set one by one and all at once, clocks drifted and stepped,
// durable and buffered writes, and the error that stopped it.
TEST(Simulator_Reset, RunsTheNextSeedAsANewSimulatorWould) {
  for (const uint32_t nodes : {12u, 40u}) {
    Simulator sim(3, nodes, ChatterLink());
    TraceHasher hasher;
    sim.AddTraceSink(&hasher);
    std::vector<std::string> instants;
    IndexLogSink instant_log(&instants, TraceKinds{}, /*reads_instant_starts=*/true);
    sim.AddTraceSink(&instant_log);
    for (uint32_t i = 0; i < nodes; ++i) {
      ASSERT_TRUE(
          sim.SetProcess(NodeId(i), [nodes](NodeId) { return std::make_unique<StorageLeavingChatter>(nodes); }).ok());
    }
    ASSERT_TRUE(sim.Start().ok());
    ASSERT_TRUE(sim.ScheduleAt(TimeNs::Millis(10),
                               [&] {
                                 LinkConfig slow = ChatterLink();
                                 slow.latency = LatencyModel::Uniform(TimeNs::Millis(5), TimeNs::Millis(9));
                                 EXPECT_TRUE(sim.SetAllLinks(slow).ok());
                                 EXPECT_TRUE(sim.SetLink(NodeId(0), NodeId(1), LinkConfig{}).ok());
                                 EXPECT_TRUE(sim.CutOneWay(NodeId(1), NodeId(2)).ok());
                                 EXPECT_TRUE(sim.Pause(NodeId(1)).ok());  // resumed in the next runs
                                 EXPECT_TRUE(sim.Pause(NodeId(2)).ok());
                                 EXPECT_TRUE(sim.StepWallClock(NodeId(3), TimeNs::Seconds(1)).ok());
                                 EXPECT_TRUE(sim.SetClockDrift(NodeId(0), 300000).ok());
                               })
                    .ok());
    ASSERT_TRUE(sim.RunUntil(TimeNs::Millis(40)).ok());
    sim.SetMaxPendingEvents(1);
    ASSERT_EQ(sim.RunUntil(TimeNs::Millis(60)).code(), absl::StatusCode::kResourceExhausted);
    bool first = true;
    for (const uint64_t seed : {5u, 6u, 5u}) {
      sim.Reset(seed);
      if (first) InstallChatter(sim, nodes);  // later runs keep it
      first = false;
      hasher = TraceHasher();  // the same sinks, as new ones
      instants.clear();
      RunChatter(sim, nodes);
      const ChatterRun fresh = RunNewChatter(nodes, seed);
      EXPECT_EQ(hasher.hash(), fresh.hash) << nodes << " nodes, seed " << seed;
      EXPECT_EQ(instants, fresh.instants) << nodes << " nodes, seed " << seed;
      EXPECT_EQ(NodeEnds(sim), fresh.nodes) << nodes << " nodes, seed " << seed;
      EXPECT_EQ(sim.seed(), seed);
    }
  }
}

TEST(Simulator_Determinism, TraceHashesArePinned) {
  // Pinned: a change to any stream, to the order of events or to timer ids
  // moves these. 12 nodes use the per-link slots of a small cluster, 40 the
  // hashed link tables.
  EXPECT_EQ(FormatTraceHash(RunChatterHash(12, 5)), "0x87780dd4fcb80ada");
  EXPECT_EQ(FormatTraceHash(RunChatterHash(40, 6)), "0x61164c87aef6dbb1");
  const NodeModel zero;
  EXPECT_EQ(FormatTraceHash(RunPingPongHash(11, &zero)), "0x15855a87d67a42d1");
}

}  // namespace
}  // namespace sim
