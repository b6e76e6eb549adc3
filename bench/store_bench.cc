// The simulated store under a shard-ownership load: K live keys, each a TTL
// lease, and a client renewing them one after another with keep-alives. One
// iteration is one keep-alive: its delivery to the store, the store's
// handling, and the reply's delivery. Run with
//   build/bench/electsim_store_bench
// What a request costs must not grow with the number of live keys.
#include <cstdint>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "electsim/algorithms/store.h"
#include "sim/simulator.h"

namespace {

namespace store = algorithms::store;

constexpr sim::NodeId kClientNode(0);
constexpr sim::NodeId kStoreNode(1);
// Far longer than the set-up and any run: no key expires while measured.
constexpr sim::TimeNs kTtl = sim::TimeNs::Seconds(100000);

// Creates keys 0..K-1 one request at a time (request id = key), then renews
// them round robin, one request in flight at a time.
class Renewer final : public sim::Process {
 public:
  Renewer(int64_t keys, uint64_t* replies, uint64_t* refusals)
      : keys_(keys), replies_(replies), refusals_(refusals), create_revs_(keys, 0) {}

  void OnStart(sim::Context& ctx) override { SendNext(ctx); }
  void OnMessage(sim::Context& ctx, sim::NodeId, const sim::Message& m) override {
    const auto reply = m.As<store::Reply>();
    if (!reply) return;
    if (reply->req < keys_) create_revs_[reply->req] = reply->create_rev;
    if (reply->ok == 0) ++*refusals_;
    ++*replies_;
    SendNext(ctx);
  }
  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}

 private:
  void SendNext(sim::Context& ctx) {
    const int64_t req = next_req_++;
    if (req < keys_) {
      ctx.Send(kStoreNode, store::PutIfAbsentRequest{.req = req, .key = req, .holder = 0, .ttl = kTtl.ns()});
      return;
    }
    const int64_t key = (req - keys_) % keys_;
    ctx.Send(kStoreNode, store::KeepAliveRequest{
                             .req = req, .key = key, .create_rev = create_revs_[key], .holder = 0, .ttl = kTtl.ns()});
  }

  int64_t keys_;
  uint64_t* replies_;
  uint64_t* refusals_;
  std::vector<int64_t> create_revs_;
  int64_t next_req_ = 0;
};

// A store holding K keys, kept from one run of the benchmark to the next (the
// library runs a benchmark several times to size its iterations, and
// creating 100,000 keys takes longer than measuring).
struct World {
  explicit World(int64_t keys) : keys(keys), simulator(1, 2, sim::LinkConfig::Fixed(sim::TimeNs::Millis(1))) {
    (void)simulator.SetProcess(
        kClientNode, [this](sim::NodeId) { return std::make_unique<Renewer>(this->keys, &replies, &refusals); });
    (void)simulator.SetProcess(kStoreNode, [](sim::NodeId) { return store::MakeStore(); });
    (void)simulator.Start();
    while (replies < static_cast<uint64_t>(keys)) simulator.Step();
  }
  // Runs until the next reply reaches the client.
  void OneRequest() {
    const uint64_t before = replies;
    while (replies == before) simulator.Step();
  }

  int64_t keys;
  uint64_t replies = 0;
  uint64_t refusals = 0;  // every put and keep-alive should succeed
  sim::Simulator simulator;
};

World& WorldWith(int64_t keys) {
  static std::unique_ptr<World> world;
  if (world == nullptr || world->keys != keys) {
    world.reset();
    world = std::make_unique<World>(keys);
  }
  return *world;
}

void BM_StoreKeepAlive(benchmark::State& state) {
  World& world = WorldWith(state.range(0));
  for (auto _ : state) world.OneRequest();
  if (!world.simulator.status().ok() || world.refusals != 0) state.SkipWithError("a request failed");
  state.SetItemsProcessed(state.iterations());
  state.counters["keys"] = static_cast<double>(world.keys);
}
BENCHMARK(BM_StoreKeepAlive)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
