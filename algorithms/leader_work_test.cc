// The shared resource on its own: scripted writers send writes with chosen
// tokens, and the test reads what the resource accepted.
#include "electsim/algorithms/leader_work.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace algorithms {
namespace {

constexpr sim::NodeId kResource(2);

// One write of a script: when, under which token, and to which key's part
// (none: the resource's one unkeyed part).
struct ScriptedWrite {
  sim::TimeNs at;
  int64_t token = 0;
  std::optional<int64_t> key;
};

// Sends one write per entry of its script.
class ScriptedWriter final : public sim::Process {
 public:
  explicit ScriptedWriter(std::vector<ScriptedWrite> script) : script_(std::move(script)) {}
  void OnStart(sim::Context& ctx) override {
    for (size_t i = 0; i < script_.size(); ++i) ctx.SetTimer(script_[i].at, i);
  }
  void OnMessage(sim::Context&, sim::NodeId, const sim::Message&) override {}
  void OnTimer(sim::Context& ctx, sim::TimerId, uint64_t tag) override {
    sim::Message write = ResourceWrite{.token = script_[tag].token, .seq = 1};
    if (script_[tag].key) write.Set("key", *script_[tag].key);
    ctx.Send(kResource, write);
  }

 private:
  std::vector<ScriptedWrite> script_;
};

// Whether each write (in arrival order) was accepted, and the records that said so.
class Verdicts final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    const bool accept = r.payload->Is(vocab::kResourceAccept);
    if (!accept && !r.payload->Is(vocab::kResourceReject)) return;
    accepted.push_back(accept);
    decisions.push_back(*r.payload);
  }
  std::vector<bool> accepted;
  std::vector<sim::Observation> decisions;
};

sim::TimeNs Ms(int64_t ms) { return sim::TimeNs::Millis(ms); }

// Nodes 0 and 1 run their scripts against the fencing resource, which
// restarts at `restart_at`; returns what it decided.
Verdicts RunScripts(const std::vector<ScriptedWrite>& node0, const std::vector<ScriptedWrite>& node1,
                    bool exclusive_token, sim::TimeNs restart_at) {
  sim::Simulator sim(1, 3, sim::LinkConfig::Fixed(Ms(1)));
  Verdicts verdicts;
  sim.AddTraceSink(&verdicts);
  EXPECT_TRUE(
      sim.SetProcess(sim::NodeId(0), [&](sim::NodeId) { return std::make_unique<ScriptedWriter>(node0); }).ok());
  EXPECT_TRUE(
      sim.SetProcess(sim::NodeId(1), [&](sim::NodeId) { return std::make_unique<ScriptedWriter>(node1); }).ok());
  EXPECT_TRUE(
      sim.SetProcess(kResource,
                     [exclusive_token](sim::NodeId) { return MakeSharedResource(/*fencing=*/true, exclusive_token); })
          .ok());
  EXPECT_TRUE(sim.Start().ok());
  EXPECT_TRUE(sim.ScheduleAt(restart_at,
                             [&] {
                               EXPECT_TRUE(sim.Crash(kResource).ok());
                               EXPECT_TRUE(sim.Restart(kResource).ok());
                             })
                  .ok());
  EXPECT_TRUE(sim.RunUntil(Ms(100)).ok());
  return verdicts;
}

// Node 0 writes token 1 at 10ms and 40ms, node 1 token 1 at 20ms and token 2
// at 50ms, node 0 token 2 at 60ms; the resource restarts at 30ms.
std::vector<bool> VerdictsOfTheScript(bool exclusive_token) {
  return RunScripts({{Ms(10), 1}, {Ms(40), 1}, {Ms(60), 2}}, {{Ms(20), 1}, {Ms(50), 2}}, exclusive_token, Ms(30))
      .accepted;
}

TEST(SharedResource_Fencing, AcceptsAnEqualTokenFromAnyWriter) {
  EXPECT_EQ(VerdictsOfTheScript(false), (std::vector<bool>{true, true, true, true, true}));
}

TEST(SharedResource_ExclusiveToken, KeepsTheHighestTokenToItsFirstWriterAcrossARestart) {
  // Node 1's token 1 is refused; node 0 keeps it after the restart; token 2
  // goes to node 1, which wrote it first, so node 0's token 2 is refused.
  EXPECT_EQ(VerdictsOfTheScript(true), (std::vector<bool>{true, false, true, true, false}));
}

// One writer's script over keys 1 and 2 and the unkeyed part, the resource
// restarting at 65ms (its highest tokens, each part's, are stable state).
TEST(SharedResource_Keys, EachKeyIsFencedOnItsOwnAndTheUnkeyedPartAsBefore) {
  const std::vector<ScriptedWrite> script = {
      {Ms(10), 5, 1},             // accepted: key 1's first
      {Ms(20), 3, 2},             // accepted: below key 1's 5, but key 2's first
      {Ms(30), 2, 2},             // rejected: below key 2's own 3
      {Ms(40), 1, std::nullopt},  // accepted: the keys' tokens do not fence the unkeyed part
      {Ms(50), 2, std::nullopt},  // accepted
      {Ms(60), 1, std::nullopt},  // rejected: below the unkeyed 2
      {Ms(70), 4, 1},             // rejected: below key 1's 5, across the restart
      {Ms(80), 3, 2},             // accepted: equal to key 2's highest
      {Ms(90), 1, std::nullopt},  // rejected: below the unkeyed 2, across the restart
  };
  const Verdicts verdicts = RunScripts(script, {}, /*exclusive_token=*/false, Ms(65));
  EXPECT_EQ(verdicts.accepted, (std::vector<bool>{true, true, false, true, true, false, false, true, false}));
  // Each record names the write's key (none for the unkeyed part), and the
  // highest token its part had accepted before it.
  const std::vector<int64_t> highest = {0, 0, 3, 0, 1, 2, 5, 3, 2};
  ASSERT_EQ(verdicts.decisions.size(), script.size());
  for (size_t i = 0; i < script.size(); ++i) {
    SCOPED_TRACE(i);
    const sim::Observation& decision = verdicts.decisions[i];
    EXPECT_EQ(vocab::KeyOf(decision), script[i].key);
    EXPECT_EQ(decision.Get(vocab::kFieldToken), script[i].token);
    EXPECT_EQ(decision.Get(vocab::kFieldHighest), highest[i]);
    EXPECT_EQ(decision.Get(vocab::kFieldWriter), 0);
  }
}

}  // namespace
}  // namespace algorithms
