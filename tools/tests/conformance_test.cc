// The conformance suite every election algorithm must pass, run over every
// registered algorithm with its default options: on a healthy network exactly
// one leader is elected and every node learns it; after the leader crashes a
// new one is elected; after a partition heals there is one leader.
#include <string>

#include "electsim/algorithms/algorithm.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

using nlohmann::json;

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  // Runs `faults` on 5 nodes of the algorithm with the safety checkers and a
  // liveness check `within` after the last fault ends.
  RunResult RunWith(const json& faults, const std::string& within, uint64_t seed) {
    json doc = {{"nodes", 5},
                {"duration", "20s"},
                {"algorithm", GetParam()},
                {"network", {{"latency", {{"uniform", {"1ms", "10ms"}}}}}},
                {"faults", faults},
                {"liveness", {{"within", within}}}};
    auto scenario = ParseScenarioJson(doc, "conformance/" + GetParam());
    EXPECT_TRUE(scenario.ok()) << scenario.status();
    if (!scenario.ok()) return {};
    auto result = RunScenario(*scenario, seed);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult{};
  }
};

TEST_P(Conformance, HealthyNetworkElectsExactlyOneLeaderEveryoneKnows) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const RunResult result = RunWith(json::array(), "5s", seed);
    EXPECT_TRUE(result.violations.empty()) << "seed " << seed << ": " << result.violations.front().message;
    ASSERT_FALSE(result.metrics.elections.empty());
    const auto& first = result.metrics.elections.front();
    EXPECT_TRUE(first.elected.has_value()) << "seed " << seed;
    EXPECT_TRUE(first.known.has_value()) << "seed " << seed;
    EXPECT_EQ(result.metrics.multi_leader_time, sim::TimeNs(0)) << "seed " << seed;
  }
}

TEST_P(Conformance, LeaderCrashElectsANewLeader) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const RunResult result = RunWith(json::array({{{"at", "5s"}, {"crash", "leader"}}}), "8s", seed);
    EXPECT_TRUE(result.violations.empty()) << "seed " << seed << ": " << result.violations.front().message;
    EXPECT_TRUE(result.notes.empty()) << "seed " << seed << ": " << result.notes.front();
    // The crashed leader's successor is a different node.
    ASSERT_GE(result.metrics.elections.size(), 2u) << "seed " << seed;
    const auto& after_crash = result.metrics.elections.back();
    EXPECT_EQ(after_crash.cause, "leader crashed");
    ASSERT_TRUE(after_crash.elected.has_value()) << "seed " << seed;
    EXPECT_NE(after_crash.leader, result.metrics.elections.front().leader);
  }
}

TEST_P(Conformance, AfterAPartitionHealsThereIsOneLeader) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const RunResult result =
        RunWith(json::array({{{"at", "3s"}, {"partition", {{0, 1}, {2, 3, 4}}}, {"for", "4s"}}}), "8s", seed);
    // Bully and Ring may elect a leader on each side while partitioned (they
    // have no quorum; their own tests show it), so only liveness is judged.
    for (const auto& violation : result.violations) {
      EXPECT_NE(violation.checker, "liveness") << "seed " << seed << ": " << violation.message;
    }
    ASSERT_FALSE(result.metrics.elections.empty());
  }
}

// The algorithms that elect one leader of the cluster. One that leads many
// keys at once (shards) has no cluster-wide leader to know; its own tests
// check that each key gets one owner and gets one again after a crash.
std::vector<std::string> AlgorithmNames() {
  std::vector<std::string> names;
  for (const auto* algorithm : algorithms::AllAlgorithms()) {
    if (!algorithm->observes_keys()) names.emplace_back(algorithm->name());
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Conformance, ::testing::ValuesIn(AlgorithmNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace electsim
