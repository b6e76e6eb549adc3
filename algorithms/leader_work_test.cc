// The shared resource on its own: scripted writers send writes with chosen
// tokens, and the test reads what the resource accepted.
#include "electsim/algorithms/leader_work.h"

#include <memory>
#include <utility>
#include <vector>

#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace algorithms {
namespace {

constexpr sim::NodeId kResource(2);

// Sends one write per (time, token) in its script.
class ScriptedWriter final : public sim::Process {
 public:
  explicit ScriptedWriter(std::vector<std::pair<sim::TimeNs, int64_t>> script) : script_(std::move(script)) {}
  void OnStart(sim::Context& ctx) override {
    for (size_t i = 0; i < script_.size(); ++i) ctx.SetTimer(script_[i].first, i);
  }
  void OnMessage(sim::Context&, sim::NodeId, const sim::Message&) override {}
  void OnTimer(sim::Context& ctx, sim::TimerId, uint64_t tag) override {
    ctx.Send(kResource, ResourceWrite{.token = script_[tag].second, .seq = 1});
  }

 private:
  std::vector<std::pair<sim::TimeNs, int64_t>> script_;
};

// Whether each write (in arrival order) was accepted.
class Verdicts final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    if (r.payload->Is(vocab::kResourceAccept)) accepted.push_back(true);
    if (r.payload->Is(vocab::kResourceReject)) accepted.push_back(false);
  }
  std::vector<bool> accepted;
};

sim::TimeNs Ms(int64_t ms) { return sim::TimeNs::Millis(ms); }

// Node 0 writes token 1 at 10ms and 40ms, node 1 token 1 at 20ms and token 2
// at 50ms, node 0 token 2 at 60ms; the resource restarts at 30ms.
std::vector<bool> VerdictsOfTheScript(bool exclusive_token) {
  sim::Simulator sim(1, 3, sim::LinkConfig::Fixed(Ms(1)));
  Verdicts verdicts;
  sim.AddTraceSink(&verdicts);
  EXPECT_TRUE(sim.SetProcess(sim::NodeId(0),
                             [](sim::NodeId) {
                               return std::make_unique<ScriptedWriter>(
                                   std::vector<std::pair<sim::TimeNs, int64_t>>{{Ms(10), 1}, {Ms(40), 1}, {Ms(60), 2}});
                             })
                  .ok());
  EXPECT_TRUE(sim.SetProcess(sim::NodeId(1),
                             [](sim::NodeId) {
                               return std::make_unique<ScriptedWriter>(
                                   std::vector<std::pair<sim::TimeNs, int64_t>>{{Ms(20), 1}, {Ms(50), 2}});
                             })
                  .ok());
  EXPECT_TRUE(
      sim.SetProcess(kResource,
                     [exclusive_token](sim::NodeId) { return MakeSharedResource(/*fencing=*/true, exclusive_token); })
          .ok());
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.ScheduleAt(Ms(30),
                             [&] {
                               EXPECT_TRUE(sim.Crash(kResource).ok());
                               EXPECT_TRUE(sim.Restart(kResource).ok());
                             })
                  .ok());
  EXPECT_TRUE(sim.RunUntil(Ms(100)).ok());
  return verdicts.accepted;
}

TEST(SharedResource_Fencing, AcceptsAnEqualTokenFromAnyWriter) {
  EXPECT_EQ(VerdictsOfTheScript(false), (std::vector<bool>{true, true, true, true, true}));
}

TEST(SharedResource_ExclusiveToken, KeepsTheHighestTokenToItsFirstWriterAcrossARestart) {
  // Node 1's token 1 is refused; node 0 keeps it after the restart; token 2
  // goes to node 1, which wrote it first, so node 0's token 2 is refused.
  EXPECT_EQ(VerdictsOfTheScript(true), (std::vector<bool>{true, false, true, true, false}));
}

}  // namespace
}  // namespace algorithms
