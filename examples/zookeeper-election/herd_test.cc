// No herd effect: when the leader goes, exactly one waiting node is told
// (its successor), however many wait. Runs zk-leader-crash (five nodes: one
// leader, four waiting) under many seeds through electsim's public API and
// counts the store's deletion notices.
#include <iostream>
#include <string>

#include "electsim/electsim.h"
#include "zookeeper_election.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: herd_test SCENARIO_DIR\n";
    return 2;
  }
  if (!algorithms::RegisterAlgorithm(zookeeper::ZooKeeperElection()).ok()) return 2;
  const std::string scenario = std::string(argv[1]) + "/zk-leader-crash.json";
  const std::string notice(algorithms::store::ChildDeleted::kType.name());
  int failures = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto verdict = electsim::RunScenarioFile(scenario, seed);
    if (!verdict.ok()) {
      std::cerr << verdict.status().message() << "\n";
      return 2;
    }
    const auto it = verdict->messages_by_type.find(notice);
    const uint64_t notified = it == verdict->messages_by_type.end() ? 0 : it->second;
    if (notified != 1 || !verdict->met_expectations()) {
      std::cerr << "seed " << seed << ": " << notified << " " << notice << " sent (expected 1: the successor only)";
      for (const std::string& failed : verdict->failed_expectations) std::cerr << "; " << failed;
      std::cerr << "\n";
      ++failures;
    }
  }
  std::cout << "herd_test: 50 seeds of " << scenario << ", " << failures
            << " with a notice to other than the successor\n";
  return failures == 0 ? 0 : 1;
}
