// How the runner applies fault steps.
#include "tools/electsim/runner.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/scenario.h"

namespace electsim {
namespace {

// Counts deliveries from one node to another after a given time, and notes
// where the boots and the first pause fall in the trace.
class Watcher final : public sim::TraceSink {
 public:
  Watcher(uint32_t from, uint32_t to, sim::TimeNs after) : from_(from), to_(to), after_(after) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kDeliver && r.peer == sim::NodeId(from_) && r.node == sim::NodeId(to_) &&
        r.time >= after_) {
      ++deliveries;
    }
    if (r.kind == sim::TraceKind::kStart) last_start_index = r.index;
    if (r.kind == sim::TraceKind::kPause && !pause_index) pause_index = r.index;
  }
  int deliveries = 0;
  uint64_t last_start_index = 0;
  std::optional<uint64_t> pause_index;

 private:
  uint32_t from_, to_;
  sim::TimeNs after_;
};

RunResult RunText(const std::string& text, sim::TraceSink* sink) {
  auto scenario = ParseScenario(text, "runner-test.json");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  RunOptions options;
  options.extra_sinks.push_back(sink);
  auto result = RunScenario(*scenario, 1, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RunResult{};
}

TEST(Runner_Faults, AStepsForUndoesOnlyItsOwnCuts) {
  // A lasting one-way cut 0->1, and an unrelated partition that ends at 3s.
  const std::string text = R"({
    "nodes": 3, "duration": "6s", "algorithm": "raft",
    "faults": [
      {"at": "1s", "cut": {"from": 0, "to": 1}},
      {"at": "2s", "partition": [[2]], "for": "1s"}
    ]})";
  Watcher watcher(0, 1, sim::TimeNs::Millis(1100));
  RunText(text, &watcher);
  EXPECT_EQ(watcher.deliveries, 0);  // the lasting cut survived the partition's end
  Watcher other_way(1, 0, sim::TimeNs::Seconds(4));
  RunText(text, &other_way);
  EXPECT_GT(other_way.deliveries, 0);
}

TEST(Runner_Faults, AFaultAtTimeZeroLandsAfterEveryNodeBooted) {
  const std::string text = R"({
    "nodes": 3, "duration": "1s", "algorithm": "raft",
    "faults": [{"at": "0s", "pause": 0, "for": "500ms"}]})";
  Watcher watcher(0, 1, sim::TimeNs(0));
  RunText(text, &watcher);
  // Every node boots (no restarts here), then the pause applies.
  ASSERT_TRUE(watcher.pause_index.has_value());
  EXPECT_LT(watcher.last_start_index, *watcher.pause_index);
}

}  // namespace
}  // namespace electsim
