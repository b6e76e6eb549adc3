// The shipped demonstration scenarios must depend on what they demonstrate:
// with the checker a scenario relies on switched off, or with fencing taken
// away from a scenario that shows fencing at work, the scenario must go red.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/runner.h"
#include "tools/electsim/scenario.h"

namespace electsim {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ScenarioFiles, EveryShippedScenarioMeetsItsExpectations) {
  const auto files = ScenarioFiles();
  ASSERT_GE(files.size(), 10u);
  for (const std::string& file : files) {
    auto scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    auto result = RunScenario(*scenario, scenario->seed);
    ASSERT_TRUE(result.ok()) << file << ": " << result.status();
    EXPECT_TRUE(result->met_expectations()) << file << ": " << result->failed_expectations.front();
  }
}

TEST(ScenarioFiles, ExpectedViolationsDisappearWithTheirChecker) {
  int demonstrations = 0;
  for (const std::string& file : ScenarioFiles()) {
    auto scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    for (const std::string& checker : scenario->expect.violations) {
      Scenario without = *scenario;
      without.checkers.erase(std::find(without.checkers.begin(), without.checkers.end(), checker));
      auto result = RunScenario(without, without.seed);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_FALSE(result->met_expectations()) << file << " still passes without " << checker;
      ++demonstrations;
    }
  }
  EXPECT_GE(demonstrations, 8);
}

TEST(ScenarioFiles, FencedScenariosGoRedWithoutFencing) {
  int fenced = 0;
  for (const std::string& file : ScenarioFiles()) {
    auto scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    if (!scenario->expect.writes_rejected_min || !scenario->fencing) continue;
    // An exclusive-token resource rejects a second writer of a token; a
    // plain fencing one rejects lower tokens. Taking that away must show.
    Scenario unfenced = *scenario;
    const char* guard = "stale_token";
    if (unfenced.exclusive_token) {
      unfenced.exclusive_token = false;
      guard = "unique_token";
    } else {
      unfenced.fencing = false;
    }
    auto result = RunScenario(unfenced, unfenced.seed);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE(result->met_expectations()) << file << " still passes without its fence";
    const auto fired = result->violated_checkers();
    EXPECT_TRUE(std::count(fired.begin(), fired.end(), guard)) << file << ": no " << guard;
    ++fenced;
  }
  EXPECT_GE(fenced, 4);
}

// The shared services stay reachable from every side of a partition, so both
// sides' leaders write under their shared token while the partition lasts.
// With the resource in a group of its own, as every partition put it before,
// nothing reaches it until the heal: no token is shared during the split.
TEST(ScenarioFiles, SplitBrainSharesATokenDuringThePartitionOnlyIfTheResourceIsReachable) {
  auto shared_token_before_heal = [](const Scenario& scenario) {
    auto result = RunScenario(scenario, scenario.seed);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return false;
    const sim::TimeNs heal = scenario.faults.front().EndsAt();
    for (const auto& violation : result->violations) {
      if (violation.checker == "unique_token" && violation.time < heal) return true;
    }
    return false;
  };
  for (const std::string name : {"bully", "ring"}) {
    auto scenario = LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/" + name +
                                     "-partition-split-brain.json");
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    ASSERT_EQ(scenario->faults.front().action, FaultStep::Action::kPartition);
    EXPECT_TRUE(shared_token_before_heal(*scenario)) << name;
    Scenario cut_off = *scenario;
    cut_off.faults.front().groups.push_back({NodeSelector{.kind = NodeSelector::Kind::kResource}});
    EXPECT_FALSE(shared_token_before_heal(cut_off)) << name;
  }
}

}  // namespace
}  // namespace electsim
