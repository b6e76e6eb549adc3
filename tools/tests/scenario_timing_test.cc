// Random times, event triggers ("after") and stop conditions: how the loader
// reads them and what a run does with them.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/language/scenario.h"
#include "tools/tests/scenario_error.h"

namespace electsim {
namespace {

// A five-node Raft cluster with `faults` (a JSON array) and `extra` top-level keys.
std::string WithFaults(const std::string& faults, const std::string& extra = R"("duration": "10s")") {
  return R"({"nodes": 5, "algorithm": "raft", )" + extra + R"(, "faults": )" + faults + "}";
}

// Times of the crash and restart records of election nodes, in trace order.
class ProcessFaultTimes final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kCrash) crashes.push_back(r.time);
    if (r.kind == sim::TraceKind::kRestart) restarts.push_back(r.time);
    last = r.time;
  }
  std::vector<sim::TimeNs> crashes;
  std::vector<sim::TimeNs> restarts;
  sim::TimeNs last;
};

RunResult RunSeed(const std::string& text, uint64_t seed, ProcessFaultTimes* sink = nullptr) {
  auto scenario = ParseScenario(text, "timing-test.json");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  if (!scenario.ok()) return {};
  RunOptions options;
  if (sink != nullptr) options.extra_sinks.push_back(sink);
  auto result = RunScenario(*scenario, seed, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RunResult{};
}

TEST(ScenarioTiming_Errors, BadRandomTimesAndTriggersNameTheirPath) {
  std::string error = ErrorOf(WithFaults(R"([{"at": {"uniform": ["2s", "1s"]}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/at/uniform/1: expected a duration of at least LOW (2s), got the string \"1s\""),
            std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"at": {"uniform": ["2s", "11s"]}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/at: expected a time within the run's duration (10s)"), std::string::npos) << error;
  error = ErrorOf(WithFaults(R"([{"at": {"uniform": ["2s"]}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/at"), std::string::npos) << error;
  error = ErrorOf(WithFaults(R"([{"at": "1s", "after": {"event": "leader_known"}, "crash": 1}])"));
  EXPECT_NE(error.find("exactly one of \"at\" and \"after\""), std::string::npos) << error;
  error = ErrorOf(WithFaults(R"([{"crash": 1}])"));
  EXPECT_NE(error.find("exactly one of \"at\" and \"after\""), std::string::npos) << error;
  error = ErrorOf(WithFaults(R"([{"after": {"event": "leader_won"}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/after/event: expected \"leader_elected\""), std::string::npos) << error;
  error = ErrorOf(WithFaults(R"([{"after": {"event": "step_done"}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/after: expected a \"step\" with \"event\": \"step_done\""), std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"after": {"event": "step_done", "step": 3}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/after/step: expected the index of a step in \"faults\", in [0, 0]"),
            std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"after": {"event": "step_done", "step": "nope"}, "crash": 1}])"));
  EXPECT_NE(error.find("at /faults/0/after/step: expected the \"name\" of a step in \"faults\" (no step is named "
                       "\"nope\")"),
            std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"name": "a", "after": {"event": "step_done", "step": "b"}, "crash": 1},
                                 {"name": "b", "after": {"event": "step_done", "step": 0}, "restart": 1}])"));
  EXPECT_NE(error.find("at /faults/0/after/step: expected a step that does not wait, directly or through others, for "
                       "this one"),
            std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"name": "a", "at": "1s", "crash": 1}, {"name": "a", "at": "2s", "restart": 1}])"));
  EXPECT_NE(error.find("at /faults/1/name: expected a name no other step has (/faults/0 has it)"), std::string::npos)
      << error;
  error = ErrorOf(WithFaults(R"([{"at": "1s", "crash": 1, "for": {"uniform": ["0s", "1s"]}}])"));
  EXPECT_NE(error.find("at /faults/0/for/uniform/0: expected a duration > 0"), std::string::npos) << error;
}

TEST(ScenarioTiming_Errors, AStopBoundsTheRunWithMaxOrDuration) {
  EXPECT_TRUE(
      ParseScenario(WithFaults("[]", R"("stop": {"when": "leader_known_after_last_fault", "max": "5s"})"), "x.json")
          .ok());
  std::string error =
      ErrorOf(WithFaults("[]", R"("duration": "5s", "stop": {"when": "leader_known_after_last_fault", "max": "5s"})"));
  EXPECT_NE(error.find("at /stop/max: expected no \"max\" when the scenario has a \"duration\""), std::string::npos)
      << error;
  error = ErrorOf(WithFaults("[]", R"("stop": {"when": "leader_known_after_last_fault"})"));
  EXPECT_NE(error.find("at /duration: expected a duration: how long to simulate (this key is required unless \"stop\" "
                       "has a \"max\")"),
            std::string::npos)
      << error;
  error = ErrorOf(WithFaults("[]", R"("duration": "5s", "stop": {"when": "leader_elected"})"));
  EXPECT_NE(error.find("at /stop/when: expected \"leader_known_after_last_fault\""), std::string::npos) << error;
  error = ErrorOf(WithFaults("[]", R"("duration": "5s", "stop": {"when": "leader_known_after_last_fault"},
                                      "liveness": {"within": "1s", "stable_for": "1s"})"));
  EXPECT_NE(error.find("at /liveness/stable_for: expected no \"stable_for\" with \"stop\""), std::string::npos)
      << error;
}

TEST(ScenarioTiming_Run, ARandomTimeIsDrawnPerSeedWithinItsRange) {
  const std::string text = WithFaults(R"([{"at": {"uniform": ["2s", "2.05s"]}, "crash": "leader"}])");
  std::set<int64_t> times;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    ProcessFaultTimes faults;
    RunSeed(text, seed, &faults);
    ASSERT_EQ(faults.crashes.size(), 1u);
    EXPECT_GE(faults.crashes[0], sim::TimeNs::Millis(2000));
    EXPECT_LE(faults.crashes[0], sim::TimeNs::Millis(2050));
    times.insert(faults.crashes[0].ns());
    ProcessFaultTimes again;
    RunSeed(text, seed, &again);
    EXPECT_EQ(again.crashes, faults.crashes) << "seed " << seed;
  }
  EXPECT_GT(times.size(), 15u);
}

TEST(ScenarioTiming_Run, ARandomTimeLeavesTheNetworkRandomnessAlone) {
  // The same fault at a fixed and at a random time: up to the earlier of the
  // two, both runs see the same messages (the draw took nothing from the network).
  const std::string lossy = R"("duration": "3s", "network": {"latency": {"uniform": ["1ms", "9ms"]}, "drop": 0.1})";
  auto first_election = [&](const std::string& at) {
    const RunResult result = RunSeed(WithFaults(R"([{"at": )" + at + R"(, "crash": "leader"}])", lossy), 7);
    return result.metrics.elections.at(0);
  };
  const checkers::Election fixed = first_election(R"("2s")");
  const checkers::Election random = first_election(R"({"uniform": ["2s", "2.5s"]})");
  EXPECT_EQ(fixed.elected, random.elected);
  EXPECT_EQ(fixed.known, random.known);
  EXPECT_EQ(fixed.leader, random.leader);
}

TEST(ScenarioTiming_Run, AStepAfterLeaderKnownHappensItsDelayLater) {
  ProcessFaultTimes faults;
  const RunResult result =
      RunSeed(WithFaults(R"([{"after": {"event": "leader_known", "delay": "30ms"}, "crash": "leader"}])"), 3, &faults);
  ASSERT_EQ(faults.crashes.size(), 1u);
  ASSERT_TRUE(result.metrics.elections.at(0).known);
  EXPECT_EQ(faults.crashes[0], *result.metrics.elections[0].known + sim::TimeNs::Millis(30));
}

TEST(ScenarioTiming_Run, TriggersChainOnStepsAndOnElectionsAfterThem) {
  // Crash the leader once it is known; once a new leader is elected after
  // that crash, restart the old one; 100ms after that restart, crash node 0.
  ProcessFaultTimes faults;
  const RunResult result = RunSeed(WithFaults(R"([
      {"name": "crash", "after": {"event": "leader_known"}, "crash": "leader"},
      {"name": "back", "after": {"event": "leader_elected", "step": "crash", "delay": "1ms"}, "restart": "leader"},
      {"after": {"event": "step_done", "step": "back", "delay": "100ms"}, "crash": 0}])"),
                                   5, &faults);
  ASSERT_GE(result.metrics.elections.size(), 2u);
  ASSERT_TRUE(result.metrics.elections[1].elected);
  ASSERT_EQ(faults.crashes.size(), 2u);
  EXPECT_EQ(faults.crashes[0], *result.metrics.elections[0].known);
  // "restart": "leader" names the new leader, which is up: that step is skipped, with a note.
  ASSERT_EQ(result.notes.size(), 1u) << result.notes[0];
  EXPECT_NE(result.notes[0].find("skipped /faults/1"), std::string::npos) << result.notes[0];
  EXPECT_EQ(faults.crashes[1], *result.metrics.elections[1].elected + sim::TimeNs::Millis(101));
}

TEST(ScenarioTiming_Run, AStopEndsTheRunWhenTheNewLeaderIsKnown) {
  const std::string text = WithFaults(R"([{"after": {"event": "leader_known", "delay": {"uniform": ["0ms", "100ms"]}},
                                           "crash": "leader", "for": "50ms"}])",
                                      R"("stop": {"when": "leader_known_after_last_fault", "max": "30s"},
                                         "liveness": {"within": "5s"})");
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    ProcessFaultTimes faults;
    const RunResult result = RunSeed(text, seed, &faults);
    ASSERT_EQ(faults.crashes.size(), 1u);
    ASSERT_EQ(faults.restarts.size(), 1u);
    const checkers::Election& last = result.metrics.elections.back();
    ASSERT_TRUE(last.known) << "seed " << seed;
    // Known after the restart (the last step is over then), and nothing after that instant.
    EXPECT_EQ(result.end, std::max(*last.known, faults.restarts[0])) << "seed " << seed;
    EXPECT_EQ(faults.last, result.end);
    EXPECT_LT(result.end, sim::TimeNs::Seconds(30));
    EXPECT_TRUE(result.violations.empty()) << result.violations[0].message;
    EXPECT_TRUE(result.met_expectations());
  }
}

TEST(ScenarioTiming_Run, TheSummarySaysARunStoppedEarly) {
  auto scenario = ParseScenario(WithFaults(R"([{"after": {"event": "leader_known"}, "crash": "leader"}])",
                                           R"("stop": {"when": "leader_known_after_last_fault", "max": "30s"})"),
                                "stop.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  auto result = RunScenario(*scenario, 1);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string summary = FormatSummary(*scenario, *result);
  EXPECT_NE(summary.find("s (stopped: the leader was known after the last fault)"), std::string::npos) << summary;
}

TEST(ScenarioTiming_Run, LivenessAfterATriggeredStepCountsFromWhenItIsOver) {
  // The leader is isolated 10ms after it is known, for 300ms: liveness is
  // judged from the end of that isolation, whenever that falls.
  const std::string text = WithFaults(R"([{"after": {"event": "leader_known", "delay": "10ms"}, "isolate": "leader",
                                           "for": "300ms"}])",
                                      R"("duration": "4s", "liveness": {"within": "2s"})");
  EXPECT_TRUE(RunSeed(text, 1).violations.empty());
  // A deadline too short to re-elect in fires.
  const RunResult tight =
      RunSeed(WithFaults(R"([{"after": {"event": "leader_known", "delay": "10ms"}, "crash": "leader"}])",
                         R"("duration": "4s", "liveness": {"within": "1ms"})"),
              1);
  ASSERT_EQ(tight.violations.size(), 1u);
  EXPECT_EQ(tight.violations[0].checker, "liveness");
}

}  // namespace
}  // namespace electsim
