// Microbenchmarks of the event loop and of message delivery. Run with
//   build/bench/electsim_bench
// Targets: the simulator's event loop (BM_EventLoop/16) at >= 0.8x the speed
// of a plain binary heap push/pop loop over events of the same size
// (BM_PlainHeap/16); a delivery with the trace hash (BM_MessageDeliveryHashed)
// at <= 1.3x the time of one without; zero heap allocations per event in
// steady state (the allocs_per_event counter, over every timed iteration).
#include <algorithm>
#include <memory>
#include <vector>

#include "bench/alloc_counter.h"
#include "benchmark/benchmark.h"
#include "sim/event_queue.h"
#include "sim/simulator.h"

namespace {

// Heap allocations per iteration of the timed loop: the steady state, after
// set-up. Reported as a counter so that a regression shows in every run.
class AllocsPerIteration {
 public:
  AllocsPerIteration() : before_(bench::CurrentAllocStats().allocations) {}
  void Report(benchmark::State& state) const {
    const uint64_t allocations = bench::CurrentAllocStats().allocations - before_;
    state.counters["allocs_per_event"] =
        static_cast<double>(allocations) / static_cast<double>(std::max<int64_t>(1, state.iterations()));
  }

 private:
  uint64_t before_;
};

// Same 32-byte layout as sim::Event, ordered by (time, seq).
struct PlainEvent {
  int64_t time_ns;
  uint64_t seq;
  uint32_t kind;
  uint32_t node;
  uint64_t arg;
};
static_assert(sizeof(PlainEvent) == sizeof(sim::Event));

struct Later {
  bool operator()(const PlainEvent& a, const PlainEvent& b) const {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
  }
};

// Baseline: pop the earliest event, push one a little later, with `pending`
// events in the heap: the minimum any event loop must do.
void BM_PlainHeap(benchmark::State& state) {
  const int64_t pending = state.range(0);
  std::vector<PlainEvent> heap;
  uint64_t seq = 0;
  sim::Rng rng(1);
  for (int64_t i = 0; i < pending; ++i) {
    heap.push_back({static_cast<int64_t>(rng.Below(1000000)), seq++, 0, 0, 0});
    std::push_heap(heap.begin(), heap.end(), Later{});
  }
  for (auto _ : state) {
    std::pop_heap(heap.begin(), heap.end(), Later{});
    PlainEvent e = heap.back();
    heap.pop_back();
    benchmark::DoNotOptimize(e);
    heap.push_back({e.time_ns + 1 + static_cast<int64_t>(rng.Below(1000000)), seq++, 0, 0, 0});
    std::push_heap(heap.begin(), heap.end(), Later{});
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlainHeap)->Arg(16)->Arg(1000);

// sim::EventQueue alone, same workload.
void BM_EventQueue(benchmark::State& state) {
  const int64_t pending = state.range(0);
  sim::EventQueue queue;
  sim::Rng rng(1);
  for (int64_t i = 0; i < pending; ++i)
    queue.Push(static_cast<int64_t>(rng.Below(1000000)), sim::EventKind::kTimer, 0, 0);
  for (auto _ : state) {
    const sim::Event e = queue.Pop();
    benchmark::DoNotOptimize(e);
    queue.Push(e.time_ns + 1 + static_cast<int64_t>(rng.Below(1000000)), sim::EventKind::kTimer, 0, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueue)->Arg(16)->Arg(1000);

// A process that keeps `pending` timers armed: every firing re-arms one.
class TimerChurn final : public sim::Process {
 public:
  explicit TimerChurn(int64_t pending) : pending_(pending) {}
  void OnStart(sim::Context& ctx) override {
    for (int64_t i = 0; i < pending_; ++i) ctx.SetTimer(sim::TimeNs(static_cast<int64_t>(ctx.rng().Below(1000000))), 0);
  }
  void OnMessage(sim::Context&, sim::NodeId, const sim::Message&) override {}
  void OnTimer(sim::Context& ctx, sim::TimerId, uint64_t) override {
    ctx.SetTimer(sim::TimeNs(1 + static_cast<int64_t>(ctx.rng().Below(1000000))), 0);
  }

 private:
  int64_t pending_;
};

// The whole simulator loop on timer events: pop, dispatch to the process,
// timer bookkeeping, trace record emission (no sinks), re-arm.
void BM_EventLoop(benchmark::State& state) {
  const int64_t pending = state.range(0);
  sim::Simulator simulator(1, 1);
  (void)simulator.SetProcess(sim::NodeId(0), [pending](sim::NodeId) { return std::make_unique<TimerChurn>(pending); });
  (void)simulator.Start();
  // The start event arms the timers; the first firings size the free list.
  for (int i = 0; i < 1000; ++i) simulator.Step();
  const AllocsPerIteration allocs;
  for (auto _ : state) simulator.Step();
  allocs.Report(state);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventLoop)->Arg(16)->Arg(1000);

// Nodes that answer every message with a message to a random peer: each
// event is a delivery through the network (latency draw, loss check).
constexpr sim::RecordType kGossip{"bench.gossip", {"hops"}};

class Gossip final : public sim::Process {
 public:
  Gossip(uint32_t nodes, int64_t initial) : nodes_(nodes), initial_(initial) {}
  void OnStart(sim::Context& ctx) override {
    for (int64_t i = 0; i < initial_; ++i) Forward(ctx);
  }
  void OnMessage(sim::Context& ctx, sim::NodeId, const sim::Message&) override { Forward(ctx); }
  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}

 private:
  void Forward(sim::Context& ctx) {
    const auto to = sim::NodeId(static_cast<uint32_t>(ctx.rng().Below(nodes_)));
    ctx.Send(to, sim::Message(kGossip, {1}));
  }
  uint32_t nodes_;
  int64_t initial_;
};

void BM_MessageDelivery(benchmark::State& state) {
  const uint32_t nodes = 5;
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(sim::TimeNs::Micros(100), sim::TimeNs::Millis(10));
  sim::Simulator simulator(1, nodes, link);
  for (uint32_t i = 0; i < nodes; ++i) {
    (void)simulator.SetProcess(sim::NodeId(i), [&](sim::NodeId) { return std::make_unique<Gossip>(nodes, 4); });
  }
  (void)simulator.Start();
  for (int i = 0; i < 1000; ++i) simulator.Step();  // past start-up: in-flight slots at their steady number
  const AllocsPerIteration allocs;
  for (auto _ : state) simulator.Step();
  allocs.Report(state);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MessageDelivery);

// Same with the trace hashed, as every real run does.
void BM_MessageDeliveryHashed(benchmark::State& state) {
  const uint32_t nodes = 5;
  sim::LinkConfig link;
  link.latency = sim::LatencyModel::Uniform(sim::TimeNs::Micros(100), sim::TimeNs::Millis(10));
  sim::Simulator simulator(1, nodes, link);
  simulator.EnableTraceHash();
  for (uint32_t i = 0; i < nodes; ++i) {
    (void)simulator.SetProcess(sim::NodeId(i), [&](sim::NodeId) { return std::make_unique<Gossip>(nodes, 4); });
  }
  (void)simulator.Start();
  for (int i = 0; i < 1000; ++i) simulator.Step();
  const AllocsPerIteration allocs;
  for (auto _ : state) simulator.Step();
  allocs.Report(state);
  benchmark::DoNotOptimize(simulator.trace_hasher().hash());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MessageDeliveryHashed);

// A process that does nothing: set-up costs without any algorithm's.
class Idle final : public sim::Process {
 public:
  void OnStart(sim::Context&) override {}
  void OnMessage(sim::Context&, sim::NodeId, const sim::Message&) override {}
  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}
};

// Building a Simulator of N idle nodes and running their start events: the
// cost paid before a large cluster's first real event. Counters: the bytes
// the started simulator holds (bytes_held) and the peak during set-up
// (peak_bytes), as malloc sized them.
void BM_SimulatorSetup(benchmark::State& state) {
  const auto nodes = static_cast<uint32_t>(state.range(0));
  bench::AllocStats held;
  bench::AllocStats peak;
  for (auto _ : state) {
    bench::ResetPeakLiveBytes();
    const bench::AllocStats before = bench::CurrentAllocStats();
    {
      sim::Simulator simulator(1, nodes, sim::LinkConfig::Fixed(sim::TimeNs::Millis(1)));
      for (uint32_t i = 0; i < nodes; ++i) {
        (void)simulator.SetProcess(sim::NodeId(i), [](sim::NodeId) { return std::make_unique<Idle>(); });
      }
      (void)simulator.Start();
      (void)simulator.RunUntil(sim::TimeNs(0));
      held = bench::CurrentAllocStats();
      held.live_bytes -= before.live_bytes;
      held.allocations -= before.allocations;
    }
    peak = bench::CurrentAllocStats();
    peak.peak_live_bytes -= before.live_bytes;
  }
  state.counters["bytes_held"] = static_cast<double>(held.live_bytes);
  state.counters["peak_bytes"] = static_cast<double>(peak.peak_live_bytes);
  state.counters["allocations"] = static_cast<double>(held.allocations);
  state.counters["bytes_per_node"] = static_cast<double>(held.live_bytes) / nodes;
}
BENCHMARK(BM_SimulatorSetup)->Arg(5)->Arg(50)->Arg(500)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
