// Failover episodes (engine/failover.h) on hand-built Bully scenarios with
// fixed latencies and timeouts, where every time is known by arithmetic:
// the leader (node 2, the highest id) announces itself after the answer
// timeout A, heartbeats every H from then, and each message takes L. After
// the fault at t, the followers last heard a heartbeat sent at the latest
// multiple of H (from A) before t; they act T after it arrived; node 1 then
// waits A for an answer from the dead top and announces itself, which the
// others learn L later. A cut also drops the heartbeat still in flight, so
// after one the followers last heard the one that arrived before it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_process.h"

namespace electsim_test {
namespace {

using nlohmann::json;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kLatency = 10 * kMs, kHeartbeat = 100 * kMs, kTimeout = 300 * kMs, kAnswer = 50 * kMs;

// The failover times of a fault on the leader at `fault_ns`.
struct Expected {
  int64_t detection, election, known;
};
Expected Arithmetic(int64_t fault_ns, bool cut = false) {
  const int64_t heard_by = cut ? fault_ns - kLatency : fault_ns;  // sent by then, it reached them
  const int64_t last_heartbeat = kAnswer + (heard_by - kAnswer - 1) / kHeartbeat * kHeartbeat;
  const int64_t detection = last_heartbeat + kLatency + kTimeout - fault_ns;
  return {detection, detection + kAnswer, detection + kAnswer + kLatency};
}

std::string Options() {
  return fmt::format(R"({{"heartbeat_interval": "{}ns", "heartbeat_timeout": "{}ns", "answer_timeout": "{}ns",
                         "coordinator_timeout": "200ms", "start_election": "highest"}})",
                     kHeartbeat, kTimeout, kAnswer);
}

class FailoverTest : public TempDirTest {
 protected:
  // The run's failover episodes, from run --json.
  json Failovers(const std::string& fault) {
    const std::string path = Write("s.json", fmt::format(R"({{"nodes": 3, "duration": "4s",
        "algorithm": {{"name": "bully", "options": {}}},
        "network": {{"latency": {{"uniform": ["10ms", "10ms"]}}}}, "checkers": [], "faults": [{}]}})",
                                                         Options(), fault));
    const Finished run = RunElectsim({"run", path, "--json", "--repro-dir", ""});
    EXPECT_EQ(run.exit_status, 0) << run.out << run.err;
    return json::parse(run.out)["failovers"];
  }
};

void ExpectFailover(const json& f, int64_t fault_ns) {
  const Expected e = Arithmetic(fault_ns);
  EXPECT_EQ(f["started_ns"], fault_ns);
  EXPECT_EQ(f["detection_ns"], e.detection) << f;
  EXPECT_EQ(f["election_ns"], e.election) << f;
  EXPECT_EQ(f["known_ns"], e.known) << f;
  EXPECT_EQ(f["old_leader"], 2);
  EXPECT_EQ(f["new_leader"], 1);
}

TEST_F(FailoverTest, CrashLeader_KnownToEveryLiveNode) {
  const json f = Failovers(R"({"at": "1s", "crash": "leader"})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["fault"], "leader crashed");
  ExpectFailover(f[0], 1000 * kMs);
  EXPECT_TRUE(f[0]["old_leader_acting_ns"].is_null());
}

TEST_F(FailoverTest, IsolateLeader_KnownToTheMajoritySideAndTheOldLeaderActsUntilTheHeal) {
  const json f = Failovers(R"({"at": "1s", "isolate": "leader", "for": "1s"})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["fault"], "leader cut off");
  ExpectFailover(f[0], 1000 * kMs);
  // Bully's coordinator never steps down on its own: cut off, it leads its
  // side of one until the heal.
  EXPECT_EQ(f[0]["old_leader_acting_ns"], 1000 * kMs);
  EXPECT_EQ(f[0]["undone_ns"], 2000 * kMs);
  EXPECT_FALSE(f[0]["settled_ns"].is_null());
}

TEST_F(FailoverTest, PauseLeader_KnownToTheOthers) {
  const json f = Failovers(R"({"at": "1050ms", "pause": "leader", "for": "1s"})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["fault"], "leader paused");
  ExpectFailover(f[0], 1050 * kMs);
  EXPECT_EQ(f[0]["undone_ns"], 2050 * kMs);
  EXPECT_FALSE(f[0]["old_leader_acting_ns"].is_null());
}

TEST_F(FailoverTest, NoLeaderHit_NoFailover) {
  // Node 0 is a follower: crashing it sets off no failover.
  EXPECT_TRUE(Failovers(R"({"at": "1s", "crash": 0})").empty());
}

// bench measures the same episode: with the same fixed timing, every trial's
// figures equal the arithmetic for the moment its fault struck.
TEST_F(FailoverTest, Bench_EqualsTheArithmeticForEveryFault) {
  for (const char* fault : {"crash-leader", "isolate-leader", "pause-leader"}) {
    const std::string csv = (dir_ / fmt::format("{}.csv", fault)).string();
    std::vector<std::string> args = {"bench",
                                     "--algorithms",
                                     "bully",
                                     "--fault",
                                     fault,
                                     "--nodes",
                                     "3",
                                     "--trials",
                                     "20",
                                     "--jobs",
                                     "1",
                                     "--csv",
                                     csv,
                                     "--set",
                                     "network.latency.uniform=[\"10ms\",\"10ms\"]"};
    const json options = json::parse(Options());
    for (const auto& [name, value] : options.items()) {
      args.insert(args.end(), {"--set", fmt::format("algorithm.options.{}={}", name, value.get<std::string>())});
    }
    const Finished bench = RunElectsim(args);
    ASSERT_EQ(bench.exit_status, 0) << bench.err;
    std::vector<std::map<std::string, std::string>> rows;
    const std::vector<std::vector<std::string>> lines = electsim_test::ParseCsv(ReadWholeFile(csv));
    ASSERT_FALSE(lines.empty()) << fault;
    const std::vector<std::string>& header = lines.front();
    for (size_t r = 1; r < lines.size(); ++r) {
      ASSERT_EQ(lines[r].size(), header.size()) << fault << " row " << r;
      std::map<std::string, std::string> row;
      for (size_t i = 0; i < header.size(); ++i) row[header[i]] = lines[r][i];
      rows.push_back(row);
    }
    ASSERT_EQ(rows.size(), 20u) << fault;
    for (const auto& row : rows) {
      const Expected e = Arithmetic(std::stoll(row.at("fault_ns")), std::string(fault) == "isolate-leader");
      EXPECT_NEAR(std::stoll(row.at("detection_ns")), e.detection, kMs) << fault;
      EXPECT_NEAR(std::stoll(row.at("election_ns")), e.election, kMs) << fault;
      EXPECT_NEAR(std::stoll(row.at("known_ns")), e.known, kMs) << fault;
    }
  }
}

}  // namespace
}  // namespace electsim_test
