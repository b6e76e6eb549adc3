// The shipped demonstration scenarios must depend on what they demonstrate:
// with the checker a scenario relies on switched off, or with fencing taken
// away from a scenario that shows fencing at work, the scenario must go red.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "gtest/gtest.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/summary_json.h"
#include "tools/electsim/language/scenario.h"

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

// Runs every shipped scenario with every checker on, under three seeds, as
// routed and with `offered`, and expects the same summaries; returns the
// routed runs' findings by checker, so that a test can require enough of
// them for the comparison to mean something.
std::map<std::string, int> FindingsOfRoutedRunsSameAs(const RunOptions& offered_options) {
  std::map<std::string, int> findings;
  for (const std::string& file : ScenarioFiles()) {
    auto scenario = LoadScenarioFile(file);
    EXPECT_TRUE(scenario.ok()) << scenario.status();
    if (!scenario.ok()) continue;
    Scenario checked = *scenario;
    checked.checkers.clear();
    for (const checkers::CheckerInfo& checker : checkers::AllCheckers()) checked.checkers.push_back(checker.name);
    for (const uint64_t seed : {scenario->seed, uint64_t{1}, uint64_t{2}}) {
      auto routed = RunScenario(checked, seed);
      auto offered = RunScenario(checked, seed, offered_options);
      EXPECT_TRUE(routed.ok()) << file << ": " << routed.status();
      EXPECT_TRUE(offered.ok()) << file << ": " << offered.status();
      if (!routed.ok() || !offered.ok()) continue;
      EXPECT_EQ(SummaryJson(checked, *routed).dump(1), SummaryJson(checked, *offered).dump(1))
          << file << " seed " << seed;
      for (const std::string& checker : routed->violated_checkers()) ++findings[checker];
      if (!routed->violations.empty()) ++findings[""];  // runs with any finding
    }
  }
  return findings;
}

// Each sink declares the observation and message types it reads and is
// offered no others (sim::TraceSink::observation_types, message_types). A type
// missing from a declaration would change a finding, a metric or, through
// the fault driver's watch, the run itself: every shipped scenario, with
// every checker on, must come out the same as when every sink is offered
// every observation and every send.
TEST(ScenarioFiles, SinksMissNoObservationTheyRead) {
  auto findings = FindingsOfRoutedRunsSameAs({.offer_every_observation = true});
  EXPECT_GE(findings[""], 8) << "too few runs with findings to compare";
  // Those that read the wire for leader-only messages and vote grants (no
  // shipped scenario makes a term_monotonic finding: the checker tests feed
  // it as the simulator routes, by type).
  for (const char* checker : {"election_safety", "single_vote", "single_leader", "disruption"}) {
    EXPECT_GE(findings[checker], 1) << "no run with a " << checker << " finding to compare";
  }
}

// The same for the record kinds each sink declares (sim::TraceSink::kinds),
// and for liveness, declared_winner and single_leader, which read only the
// records that can change who leads (the first two are told where the
// instants they need start): offered every record and no instant starts,
// they see time move in the records, as they did before they declared kinds. Findings name trace indices, so a record
// missed or an instant judged at another point changes the summary.
TEST(ScenarioFiles, SinksMissNoRecordTheyRead) {
  auto findings = FindingsOfRoutedRunsSameAs({.offer_every_record = true});
  EXPECT_GE(findings["liveness"], 4) << "too few runs with a liveness finding to compare";
  EXPECT_GE(findings["single_leader"], 4) << "too few runs with a single_leader finding to compare";
}

// A runner used seed after seed, as a campaign's worker uses one, runs each
// seed as a new run does: the same summary (trace hash, findings, metrics,
// failovers, notes) and trace checkpoints, over every shipped scenario with
// every checker on, whatever ran before it (seed 1 runs again after others),
// with everything collected and with nothing but the verdict (as in sweeps).
TEST(ScenarioFiles, AReusedRunnerRunsEachSeedAsANewRunDoes) {
  const RunOptions verdict_only{.hash_trace = false, .collect_metrics = false, .track_failovers = false};
  int runs_with_findings = 0;
  for (const std::string& file : ScenarioFiles()) {
    auto scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    auto checked = std::make_shared<Scenario>(*scenario);
    checked->checkers.clear();
    for (const checkers::CheckerInfo& checker : checkers::AllCheckers()) checked->checkers.push_back(checker.name);
    for (const RunOptions& options : {RunOptions{}, verdict_only}) {
      ScenarioRunner runner(checked, options);
      for (const uint64_t seed : {scenario->seed, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{1}}) {
        auto reused = runner.Run(seed);
        auto fresh = RunScenario(*checked, seed, options);
        ASSERT_TRUE(reused.ok()) << file << ": " << reused.status();
        ASSERT_TRUE(fresh.ok()) << file << ": " << fresh.status();
        EXPECT_EQ(SummaryJson(*checked, *reused).dump(1), SummaryJson(*checked, *fresh).dump(1))
            << file << " seed " << seed;
        EXPECT_EQ(reused->checkpoints.hashes, fresh->checkpoints.hashes) << file << " seed " << seed;
        if (!fresh->violations.empty()) ++runs_with_findings;
      }
    }
  }
  EXPECT_GE(runs_with_findings, 20) << "too few runs with findings to compare";
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
    auto scenario =
        LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/" + name + "-partition-split-brain.json");
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    ASSERT_EQ(scenario->faults.front().action, FaultStep::Action::kPartition);
    EXPECT_TRUE(shared_token_before_heal(*scenario)) << name;
    Scenario cut_off = *scenario;
    cut_off.faults.front().groups.push_back({NodeSelector{.kind = NodeSelector::Kind::kResource}});
    EXPECT_FALSE(shared_token_before_heal(cut_off)) << name;
  }
}

Scenario LoadShipped(const std::string& name) {
  auto scenario = LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/" + name + ".json");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return scenario.ok() ? *scenario : Scenario{};
}

std::vector<std::string> Violated(const Scenario& scenario, uint64_t seed) {
  auto result = RunScenario(scenario, seed);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->violated_checkers() : std::vector<std::string>{"<error>"};
}

// The checker each deliberate Raft bug must be caught by.
const std::map<std::string, std::string>& CheckerForRaftBug() {
  static const std::map<std::string, std::string> checkers = {
      {"vote_twice", "election_safety"},
      {"ignore_higher_term", "liveness"},
      {"skip_log_check", "leader_completeness"},
      {"forget_vote_on_restart", "single_vote"},
      {"commit_previous_term", "leader_completeness"},
      {"skip_sync", "single_vote"},
  };
  return checkers;
}

// Each bug is shown by a shipped scenario whose expected violations include
// its checker, and the correct Raft runs that same scenario without any.
TEST(ScenarioFiles_RaftBugs, EachIsCaughtAndTheCorrectRaftPassesTheSameScenario) {
  std::map<std::string, std::string> shown;  // bug -> scenario
  for (const std::string& file : ScenarioFiles()) {
    auto scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    if (scenario->algorithm->name() != "raft" || scenario->options.Choice("bug") == "none") continue;
    const std::string bug = scenario->options.Choice("bug");
    ASSERT_TRUE(CheckerForRaftBug().count(bug)) << file << " shows a bug this test does not know: " << bug;
    const std::string& checker = CheckerForRaftBug().at(bug);
    EXPECT_TRUE(std::count(scenario->expect.violations.begin(), scenario->expect.violations.end(), checker))
        << file << " does not expect " << checker;
    Scenario correct = *scenario;
    correct.options.Set("bug", 0);  // the first choice is "none"
    ASSERT_EQ(correct.options.Choice("bug"), "none");
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto result = RunScenario(*scenario, seed);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_TRUE(result->met_expectations())
          << file << " seed " << seed << ": " << result->failed_expectations.front();
      EXPECT_EQ(Violated(correct, seed), std::vector<std::string>{}) << file << " without the bug, seed " << seed;
    }
    shown[bug] = file;
  }
  for (const auto& [bug, checker] : CheckerForRaftBug()) EXPECT_TRUE(shown.count(bug)) << "no scenario shows " << bug;
}

// What makes the Raft without sync forget its vote is the disk fault: the
// same schedule with a plain crash (the page cache survives) is clean.
TEST(ScenarioFiles_PowerLoss, ARaftThatDoesNotSyncForgetsItsVoteOnlyWhenPowerIsLost) {
  const Scenario scenario = LoadShipped("raft-bug-skip-sync-power-loss");
  ASSERT_EQ(scenario.options.Choice("bug"), "skip_sync");
  Scenario plain_crash = scenario;
  int power_losses = 0;
  for (FaultStep& step : plain_crash.faults) {
    power_losses += step.lose_unsynced ? 1 : 0;
    step.lose_unsynced = false;
  }
  ASSERT_EQ(power_losses, 1);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<std::string> violated = Violated(scenario, seed);
    EXPECT_TRUE(std::count(violated.begin(), violated.end(), "single_vote")) << "seed " << seed;
    EXPECT_EQ(Violated(plain_crash, seed), std::vector<std::string>{}) << "seed " << seed;
  }
}

// etcd's rule: the "I still hear a leader" guard on (pre-)votes comes with
// check-quorum. The cut-off node takes over without it, deposing a leader the
// rest still hear (disruption), and is ignored with it.
TEST(ScenarioFiles_PreVote, TheLeaseGuardComesWithCheckQuorumOnly) {
  Scenario scenario = LoadShipped("raft-prevote-without-check-quorum");
  ASSERT_EQ(scenario.options.Int("check_quorum"), 0);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    EXPECT_EQ(Violated(scenario, seed), std::vector<std::string>{"disruption"}) << "seed " << seed;
    Scenario with = scenario;
    with.options.Set("check_quorum", 1);
    EXPECT_EQ(Violated(with, seed), std::vector<std::string>{"liveness"}) << "seed " << seed;
  }
}

}  // namespace
}  // namespace electsim
