// The electsim binary end to end: exit statuses, files written whole or not
// at all, repro and replay.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"

namespace {

namespace fs = std::filesystem;

using electsim_test::Outcome;
Outcome Electsim(const std::string& args) { return electsim_test::RunCombined(args); }

std::string Scenario(const std::string& name) { return electsim_test::ShippedScenario(name); }

class CliTest : public electsim_test::TempDirTest {};

TEST_F(CliTest, RunPrintsSummaryAndHashAndExitsZero) {
  const Outcome out = Electsim("run " + Scenario("raft-healthy.json") + " --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("leaders by term:"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("terms: highest 1, 1 of them with a leader"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("trace-hash: 0x"), std::string::npos) << out.output;
}

// A --set of what a command's own flag decides would silently win or lose,
// and the labels would name what did not run: refused, nothing run.
TEST_F(CliTest, SetOfWhatAFlagDecidesIsRefused) {
  const std::string scenario = Scenario("raft-leader-crash.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run " + scenario + " --seed 3 --set seed=7", "run sets seed with --seed"},
      {"sweep " + scenario + " --seeds 2 --set seed=7", "sweep sets seed with --seeds"},
      {"bench --algorithms raft --trials 2 --jobs 1 --set seed=7", "bench sets seed with --seed"},
      {"bench --algorithms raft --preset etcd --trials 2 --jobs 1 --set algorithm.options.pre_vote=false",
       "bench sets algorithm.options.pre_vote with --preset etcd for raft"},
      // An object set whole replaces what the flag put inside it, while the
      // labels and reproduce lines would still name the flag's value.
      {"bench --algorithms raft --preset etcd --trials 2 --jobs 1 --set 'algorithm.options={}'",
       "replaces algorithm.options."},
      {"bench --algorithms raft --fault lossy --trials 2 --jobs 1 --set 'network={\"latency\": \"1ms\"}'",
       "replaces network.drop, which bench sets with --fault"},
      {"bench --algorithms raft --sweep election_timeout_min=100ms..200ms:2 --trials 2 --jobs 1 "
       "--set 'algorithm.options={}'",
       "replaces algorithm.options.election_timeout_min, which bench sets with --sweep"},
      {"fuzz --algorithm raft --option bug=vote_twice --seeds 1..2 --set 'algorithm.options={}'",
       "replaces algorithm.options.bug, which fuzz sets with --option bug"},
      {"fuzz --algorithm raft --seeds 1..2 --set 'algorithm.options={}'",
       "replaces every option, which fuzz draws where not given"},
  };
  for (const auto& [command, message] : cases) {
    const Outcome out = Electsim(command);
    EXPECT_EQ(out.exit_status, 2) << command << ": " << out.output;
    EXPECT_NE(out.output.find(message), std::string::npos) << command << ": " << out.output;
  }
  // Without --seed, run takes the scenario's seed, which --set may change.
  const Outcome seeded = Electsim("run " + scenario + " --set seed=7 --repro-dir " + dir_.string());
  EXPECT_EQ(seeded.exit_status, 0) << seeded.output;
  EXPECT_NE(seeded.output.find("seed 7,"), std::string::npos) << seeded.output;
}

// An empty value is bad input, not "not given": fuzz --seed "" ran the whole
// campaign and shrink --out "" wrote hidden files. --repro-dir "" means none.
TEST_F(CliTest, EmptyValuesAreRefusedButAnEmptyReproDir) {
  const std::string scenario = Scenario("raft-healthy.json");
  for (const std::string& command :
       {std::string("fuzz --algorithm raft --seed ''"), std::string("fuzz --algorithm raft --seeds ''"),
        std::string("fuzz --algorithm raft --faults '' --seeds 1..2"), std::string("check-guarantees --algorithms ''"),
        "run " + scenario + " --seed ''", "sweep " + scenario + " --seeds ''",
        std::string("bench --algorithms raft --trials 2 --preset ''")}) {
    const Outcome out = Electsim(command);
    EXPECT_EQ(out.exit_status, 2) << command << ": " << out.output;
    EXPECT_NE(out.output.find("electsim: --"), std::string::npos) << command << out.output;  // names the flag
    EXPECT_EQ(out.output.find("seeds/s"), std::string::npos) << "ran anyway: " << command << out.output;
  }
  EXPECT_EQ(Electsim("run " + scenario + " --repro-dir ''").exit_status, 0);
}

TEST_F(CliTest, SetChangesTheScenarioAndIsCheckedLikeTheFile) {
  const std::string scenario = Scenario("raft-leader-crash.json");
  Outcome out = Electsim("run " + scenario + " --set nodes=7 --set algorithm.options.election_timeout_max=300ms" +
                         " --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("algorithm: raft, 7 nodes"), std::string::npos) << out.output;
  out = Electsim("sweep " + scenario + " --seeds 3 --set nodes=3 --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;
  // Each --set takes one value: the scenario may come between two of them.
  out = Electsim("run --set nodes=6 " + scenario + " --set duration=12s --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("algorithm: raft, 6 nodes, seed 1, simulated 12s"), std::string::npos) << out.output;
  out = Electsim("sweep --set nodes=3 " + scenario + " --set duration=12s --seeds 2 --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("2 of 2 seeds"), std::string::npos) << out.output;
  // A bad value names the flag, the file and the JSON path, exit 2.
  out = Electsim("run " + scenario + " --set nodes=0");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--set nodes=0: " + scenario +
                            ": at /nodes: expected an integer in [1, 100000], got the "
                            "integer 0"),
            std::string::npos)
      << out.output;
  out = Electsim("sweep " + scenario + " --set algorithm.options.quorum=2");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--set algorithm.options.quorum=2: " + scenario +
                            ": at /algorithm/options/quorum: expected no key \"quorum\" in the options of algorithm "
                            "\"raft\""),
            std::string::npos)
      << out.output;
  out = Electsim("run " + scenario + " --set nodes");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--set nodes: expected PATH=VALUE"), std::string::npos) << out.output;
  out = Electsim("run " + scenario + " --set faults.9.at=1s");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--set faults.9.at=1s: expected an index below 1 into the array at /faults, not \"9\" "
                            "(in " +
                            scenario + ")"),
            std::string::npos)
      << out.output;
  // No faults to index: said so, not "an object where an array goes".
  out = Electsim("run " + Scenario("raft-healthy.json") + " --set faults.0.at=2s");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--set faults.0.at=2s: expected an array at /faults to index with \"0\"; the scenario "
                            "has none there"),
            std::string::npos)
      << out.output;
  // A value that opens an object is JSON: its fault is named, not "got the string".
  out = Electsim("run " + scenario + R"( --set 'network={"drop":0.1,"drop":0.2}')");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("expected a JSON value after '=' (--set: at /drop: expected each key once"),
            std::string::npos)
      << out.output;
  out = Electsim("run " + scenario + R"( --set 'description="{quoted}"' --quiet)");
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "a refused run wrote something";
}

// A run changed by --set says so under the file's description, and its
// repro keeps the --set list, so that replay says it too.
TEST_F(CliTest, RunAndReplayOfARunChangedBySetNameTheChanges) {
  const Outcome run = Electsim("run " + Scenario("raft-bug-vote-twice.json") +
                               " --set 'network.latency=\"2ms\"' --repro-on violation --repro-dir " + dir_.string());
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const std::string line = "\n  changed by --set network.latency=\"2ms\" (the description above is from before them)\n";
  EXPECT_NE(run.output.find(line), std::string::npos) << run.output;
  const std::string repro = (dir_ / "raft-bug-vote-twice-seed1.repro.json").string();
  const nlohmann::json document = nlohmann::json::parse(electsim_test::ReadWholeFile(repro));
  EXPECT_EQ(document["set"], nlohmann::json::array({"network.latency=\"2ms\""})) << document.dump();
  const Outcome replay = Electsim("replay " + repro);
  EXPECT_EQ(replay.exit_status, 0) << replay.output;
  EXPECT_NE(replay.output.find(line), std::string::npos) << replay.output;
  // Without --set, no such line.
  const Outcome plain = Electsim("run " + Scenario("raft-bug-vote-twice.json") + " --repro-dir ''");
  EXPECT_EQ(plain.output.find("changed by --set"), std::string::npos) << plain.output;
  // bench's one trial, printed as run prints a run, names them too.
  const Outcome trial = Electsim("bench --algorithms raft --set 'network.latency=\"2ms\"' --run-seed 1");
  EXPECT_EQ(trial.exit_status, 0) << trial.output;
  EXPECT_NE(trial.output.find(line), std::string::npos) << trial.output;
}

TEST_F(CliTest, SweepMetricsWritesOneRowPerSeedInSeedOrder) {
  const std::string csv = (dir_ / "metrics.csv").string();
  const Outcome out = Electsim("sweep " + Scenario("raft-leader-crash.json") + " --seeds 5 --jobs 2 --metrics " + csv +
                               " --repro-dir ''");
  ASSERT_EQ(out.exit_status, 0) << out.output;
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].rfind("scenario,seed,verdict,violations,elections,cause,detection_ns,election_ns,known_ns,", 0),
            0u)
      << lines[0];
  for (int seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(lines[seed].rfind("raft-leader-crash," + std::to_string(seed) + ",met,,2,leader crashed,", 0), 0u)
        << lines[seed];
    // Campaigns track failovers only for these rows: each names the crash.
    const std::vector<std::string> cells = absl::StrSplit(lines[seed], ',');
    ASSERT_EQ(cells.size(), 26u) << lines[seed];
    EXPECT_EQ(cells[18], "/faults/0") << lines[seed];
    EXPECT_EQ(cells[19], "leader crashed") << lines[seed];
    EXPECT_FALSE(cells[22].empty()) << "no failover_known_ns: " << lines[seed];
  }
  // A bad path is refused before anything runs.
  const Outcome bad = Electsim("sweep " + Scenario("raft-leader-crash.json") + " --seeds 5 --metrics " +
                               (dir_ / "no" / "such" / "dir.csv").string());
  EXPECT_EQ(bad.exit_status, 2) << bad.output;
}

// Two files of one name in one sweep ran different scenarios: each summary
// line and metrics row names its file, so that none can be taken for the other.
TEST_F(CliTest, SweepOfTwoFilesOfOneNameLabelsEachWithItsFile) {
  fs::create_directories(dir_ / "a,1");
  fs::create_directories(dir_ / "b");
  const fs::path first = dir_ / "a,1" / "x.json";
  const fs::path second = dir_ / "b" / "x.json";
  fs::copy_file(Scenario("raft-healthy.json"), first);
  fs::copy_file(Scenario("raft-leader-crash.json"), second);
  const std::string csv = (dir_ / "metrics.csv").string();
  const Outcome out = Electsim(
      fmt::format("sweep '{}' '{}' --seeds 2 --metrics '{}' --repro-dir ''", first.string(), second.string(), csv));
  ASSERT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("x (" + first.string() + "): 2 of 2 seeds"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("x (" + second.string() + "): 2 of 2 seeds"), std::string::npos) << out.output;
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  const auto rows = electsim_test::ParseCsv(text.str());
  ASSERT_EQ(rows.size(), 5u) << text.str();
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 26u) << text.str();
    EXPECT_EQ(rows[i][0], "x (" + (i <= 2 ? first : second).string() + ")") << text.str();
  }
  // One file alone keeps its plain name.
  const Outcome alone = Electsim(fmt::format("sweep '{}' --seeds 1 --repro-dir ''", first.string()));
  EXPECT_NE(alone.output.find("x: 1 of 1 seeds"), std::string::npos) << alone.output;
}

TEST_F(CliTest, SweepJsonIsOneObjectOnStandardOutput) {
  const std::string command = std::string(ELECTSIM_BINARY) + " sweep " + Scenario("raft-leader-crash.json") + " " +
                              Scenario("raft-bug-vote-twice.json") + " --seeds 4 --json --repro-dir '' --set " +
                              "expect.violations=[] 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;  // the bug scenario, expecting nothing, fails every seed
  const nlohmann::json summary = nlohmann::json::parse(output);
  EXPECT_EQ(summary["command"], "sweep");
  EXPECT_EQ(summary["complete"], true);
  ASSERT_EQ(summary["campaigns"].size(), 2u);
  EXPECT_EQ(summary["campaigns"][0]["seeds_run"], 4);
  EXPECT_EQ(summary["campaigns"][0]["seeds_failed"], 0);
  EXPECT_EQ(summary["campaigns"][1]["seeds_failed"], 4);
  std::vector<uint64_t> failing;
  for (const auto& entry : summary["campaigns"][1]["failing_seeds"]) failing.push_back(entry["seed"]);
  EXPECT_EQ(failing, (std::vector<uint64_t>{1, 2, 3, 4}));
  // Its identity names what ran, --set included.
  EXPECT_EQ(summary["campaigns"][1]["identity"]["set"], (nlohmann::json{"expect.violations=[]"}));
}

TEST_F(CliTest, SameSeedSameHashDifferentSeedDifferentHash) {
  auto hash = [&](int seed) {
    const Outcome out = Electsim("run " + Scenario("raft-leader-crash.json") + " --seed " + std::to_string(seed));
    const size_t at = out.output.find("trace-hash: ");
    return at == std::string::npos ? std::string() : out.output.substr(at, 30);
  };
  const std::string first = hash(5);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, hash(5));
  EXPECT_NE(first, hash(6));
}

TEST_F(CliTest, MalformedScenarioExitsTwoNamingFileAndPathAndWritesNothing) {
  const std::string path = Write("bad.json", R"({"nodes": 5, "duration": "-1s", "algorithm": "raft"})");
  const std::string trace = (dir_ / "trace.jsonl").string();
  const Outcome out = Electsim("run " + path + " --trace " + trace + " --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find(path + ": at /duration: expected a duration"), std::string::npos) << out.output;
  EXPECT_FALSE(fs::exists(trace));
  EXPECT_FALSE(fs::exists(trace + ".tmp"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);  // only bad.json
}

TEST_F(CliTest, UnknownOptionAndMissingFileExitTwo) {
  EXPECT_EQ(Electsim("run " + Scenario("raft-healthy.json") + " --sede 3").exit_status, 2);
  EXPECT_EQ(Electsim("run /nonexistent/scenario.json").exit_status, 2);
  EXPECT_EQ(Electsim("frobnicate").exit_status, 2);
  EXPECT_EQ(Electsim("sweep " + Scenario("raft-healthy.json") + " --seeds 0").exit_status, 2);
}

TEST_F(CliTest, NegativeOrOverflowingSeedsExitTwo) {
  const Outcome negative = Electsim("run " + Scenario("raft-healthy.json") + " --seed -3");
  EXPECT_EQ(negative.exit_status, 2) << negative.output;
  EXPECT_EQ(negative.output.find("trace-hash"), std::string::npos) << negative.output;  // nothing ran
  EXPECT_EQ(Electsim("run " + Scenario("raft-healthy.json") + " --seed 18446744073709551616").exit_status, 2);
  EXPECT_EQ(Electsim("sweep " + Scenario("raft-healthy.json") + " --first-seed -1").exit_status, 2);
  const Outcome past_end =
      Electsim("sweep " + Scenario("raft-healthy.json") + " --first-seed 18446744073709551615 --seeds 2");
  EXPECT_EQ(past_end.exit_status, 2) << past_end.output;
  EXPECT_NE(past_end.output.find("runs past the largest seed"), std::string::npos) << past_end.output;
}

TEST_F(CliTest, BadAlgorithmOptionsExitTwoWithAPreciseMessage) {
  struct Case {
    std::string algorithm;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"name": "lease", "options": {"lease_ttl": "300ms", "renew_interval": "400ms"}})",
       "renew_interval (400ms) must be shorter than lease_ttl (300ms)"},
      {R"({"name": "lease", "options": {"safety_margin": 0}})",
       "at /algorithm/options/safety_margin: expected a number"},
      {R"({"name": "lease", "options": {"safety_margin": 1.5}})",
       "at /algorithm/options/safety_margin: expected a number"},
      // In (0, 1] to the eye, below what a ratio holds: the message says so.
      {R"({"name": "lease", "options": {"safety_margin": 1e-7}})",
       "expected a number in (0, 1], at least 0.000001 (ratios are held in millionths), got the number 1e-07"},
      {R"({"name": "ring", "options": {"ids": [3, 7, 5, 7, 1]}})",
       "option ids: id 7 appears twice (positions 1 and 3)"},
      {R"({"name": "ring", "options": {"ids": [1, 2]}})", "ids"},
      {R"({"name": "raft", "options": {"heartbeat_interval": "500ms"}})", "heartbeat_interval"},
      {R"({"name": "bully", "options": {"start_election": "random"}})", "one of \"all\", \"lowest\""},
      {R"({"name": "raft", "options": {"pre_vote": "yes"}})", "at /algorithm/options/pre_vote: expected true or false"},
  };
  for (const Case& c : cases) {
    const std::string path =
        Write("options.json", R"({"nodes": 5, "duration": "1s", "algorithm": )" + c.algorithm + "}");
    const Outcome out = Electsim("run " + path);
    EXPECT_EQ(out.exit_status, 2) << c.algorithm << "\n" << out.output;
    EXPECT_NE(out.output.find(path + ": at /algorithm"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find(c.message), std::string::npos) << c.message << "\n" << out.output;
  }
}

TEST_F(CliTest, TraceFileIsCompleteJsonLines) {
  const std::string trace = (dir_ / "trace.jsonl").string();
  const Outcome out = Electsim("run " + Scenario("raft-healthy.json") + " --trace " + trace);
  ASSERT_EQ(out.exit_status, 0) << out.output;
  std::ifstream in(trace);
  std::string line;
  uint64_t lines = 0;
  while (std::getline(in, line)) {
    ASSERT_TRUE(nlohmann::json::accept(line)) << line;
    ++lines;
  }
  EXPECT_GT(lines, 100u);
}

TEST_F(CliTest, ViolationWritesReproAndReplayReproducesTheHash) {
  // A demonstration that shows its expected violation writes a repro only when asked.
  const Outcome quiet = Electsim("run " + Scenario("raft-bug-vote-twice.json") + " --repro-dir " + dir_.string());
  EXPECT_EQ(quiet.exit_status, 0) << quiet.output;
  EXPECT_TRUE(fs::is_empty(dir_)) << quiet.output;
  const Outcome out =
      Electsim("run " + Scenario("raft-bug-vote-twice.json") + " --repro-on violation --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 0) << out.output;  // the scenario expects its violation
  std::string repro;
  for (const auto& entry : fs::directory_iterator(dir_)) repro = entry.path().string();
  ASSERT_FALSE(repro.empty()) << out.output;
  const Outcome replay = Electsim("replay " + repro);
  EXPECT_EQ(replay.exit_status, 0) << replay.output;
  EXPECT_NE(replay.output.find("trace hash matches"), std::string::npos) << replay.output;
  EXPECT_NE(replay.output.find("election_safety"), std::string::npos) << replay.output;

  // A tampered hash must be caught.
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(repro));
  doc["trace_hash"] = "0x0000000000000001";
  const std::string tampered = Write("tampered.json", doc.dump());
  EXPECT_EQ(Electsim("replay " + tampered).exit_status, 1);
}

// A run that fails by missing a violation it expects is a failure too: it
// writes a repro, as sweep does for the same seed, and the repro replays.
TEST_F(CliTest, ADemonstrationThatDoesNotDemonstrateWritesAReproAsSweepDoes) {
  const std::string scenario = Scenario("bully-partition-split-brain.json");
  const fs::path run_dir = dir_ / "run", sweep_dir = dir_ / "sweep";
  const Outcome run = Electsim("run " + scenario + " --set 'faults=[]' --repro-dir " + run_dir.string());
  EXPECT_EQ(run.exit_status, 1) << run.output;
  const Outcome sweep =
      Electsim("sweep " + scenario + " --set 'faults=[]' --seeds 1 --repro-dir " + sweep_dir.string());
  EXPECT_EQ(sweep.exit_status, 1) << sweep.output;
  const std::string name = "bully-partition-split-brain-seed1.repro.json";
  ASSERT_TRUE(fs::exists(run_dir / name)) << run.output;
  ASSERT_TRUE(fs::exists(sweep_dir / name)) << sweep.output;
  const Outcome replay = Electsim("replay " + (run_dir / name).string());
  EXPECT_EQ(replay.exit_status, 0) << replay.output;
  EXPECT_NE(replay.output.find("trace hash matches"), std::string::npos) << replay.output;
}

TEST_F(CliTest, ReplayOfAMalformedReproExitsTwo) {
  EXPECT_EQ(Electsim("replay " + Write("overflow.json", R"({"seed": 1e400})")).exit_status, 2);
  EXPECT_EQ(Electsim("replay " + Write("shape.json", R"({"seed": 1, "trace_hash": "0x1"})")).exit_status, 2);
  EXPECT_EQ(Electsim("replay " + Write("broken.json", "{")).exit_status, 2);
}

TEST_F(CliTest, SweepFailsWhenADemonstrationNeverDemonstrates) {
  // The fencing story with fencing switched back on: the expected stale write never happens.
  std::ifstream in(Scenario("lease-paused-holder-unfenced.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["resource"]["fencing"] = true;
  const std::string path = Write("fenced.json", doc.dump());
  const Outcome out = Electsim("sweep " + path + " --seeds 5 --jobs 1 --repro-dir \"\"");
  EXPECT_EQ(out.exit_status, 1) << out.output;
  // Every seed fails, as run fails each one, and each is named.
  for (int seed = 1; seed <= 5; ++seed) {
    EXPECT_NE(out.output.find(fmt::format("seed {} FAILED: expected a stale_token violation, none was found", seed)),
              std::string::npos)
        << out.output;
  }
  EXPECT_EQ(Electsim("sweep " + Scenario("lease-paused-holder-unfenced.json") + " --seeds 5 --jobs 1").exit_status, 0);
}

TEST_F(CliTest, UnexpectedViolationExitsOne) {
  std::ifstream in(Scenario("raft-bug-vote-twice.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc.erase("expect");
  const std::string path = Write("unexpected.json", doc.dump());
  const Outcome out = Electsim("run " + path + " --repro-dir " + dir_.string());
  EXPECT_EQ(out.exit_status, 1) << out.output;
  // The line names the binary as it was started, so it can be pasted back.
  EXPECT_NE(out.output.find("reproduce: " + std::string(ELECTSIM_BINARY) + " run"), std::string::npos) << out.output;
}

TEST_F(CliTest, UnusableOutputPathsExitTwoBeforeAnythingRuns) {
  const std::string scenario = Write("s.json", R"({"nodes": 3, "duration": "1s", "algorithm": "raft"})");
  const std::string scenario_text = R"({"nodes": 3, "duration": "1s", "algorithm": "raft"})";
  struct Case {
    std::string args;
    std::string message;
  };
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  std::ofstream(dir_ / "afile") << "x";
  const std::vector<Case> cases = {
      {"--trace " + dir_.string(), "is a folder"},
      {"--trace " + scenario, "is the input file"},
      {"--trace " + (dir_ / "fifo").string(), "is a device, pipe or socket"},
      {"--trace " + (dir_ / "missing" / "t.jsonl").string(), "does not exist"},
      {"--repro-dir " + (dir_ / "afile").string(), "is not a folder"},
      {"--repro-dir " + (dir_ / "afile" / "sub").string(), "is not a folder"},
  };
  for (const Case& c : cases) {
    const Outcome out = Electsim("run " + scenario + " " + c.args);
    EXPECT_EQ(out.exit_status, 2) << c.args << "\n" << out.output;
    EXPECT_NE(out.output.find(c.message), std::string::npos) << c.args << "\n" << out.output;
    EXPECT_EQ(out.output.find("trace-hash"), std::string::npos) << "ran anyway: " << out.output;
  }
  std::stringstream left;
  left << std::ifstream(scenario).rdbuf();
  EXPECT_EQ(left.str(), scenario_text);  // the scenario was not overwritten
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);  // s.json, fifo, afile
}

TEST_F(CliTest, TraceThroughASymlinkWritesItsTargetAndLeavesOtherFilesAlone) {
  std::ofstream(dir_ / "real.jsonl") << "old\n";
  fs::create_symlink("real.jsonl", dir_ / "link.jsonl");
  std::ofstream(dir_ / "link.jsonl.tmp") << "mine\n";  // a name the writer must not take over
  const Outcome out = Electsim("run " + Scenario("raft-healthy.json") + " --trace " + (dir_ / "link.jsonl").string());
  ASSERT_EQ(out.exit_status, 0) << out.output;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.jsonl"));
  std::ifstream in(dir_ / "real.jsonl");
  std::string first;
  std::getline(in, first);
  EXPECT_TRUE(nlohmann::json::accept(first)) << first;
  std::ifstream tmp(dir_ / "link.jsonl.tmp");
  std::string mine;
  std::getline(tmp, mine);
  EXPECT_EQ(mine, "mine");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);  // no temp file left
}

// One seed of a guarantee case is judged by what the case declares, and its
// scenario named by what generates it: no file holds it.
TEST_F(CliTest, CheckGuaranteesOneSeedSaysOneVerdictAndNamesNoFile) {
  const Outcome out = Electsim("check-guarantees --case guarantee-raft-defaults-partition --seed 3");
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("scenario: guarantee-raft-defaults-partition (check-guarantees --case "
                            "guarantee-raft-defaults-partition)\n"),
            std::string::npos)
      << out.output;
  // Undeclared violations fire, and the verdict is still that of the case.
  EXPECT_NE(out.output.find("\nviolations:\n  disruption at "), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("every declared guarantee kept"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("expectations:"), std::string::npos) << out.output;
}

// The table names each row's case, so that a row can be run alone; a case
// outside --algorithms, an unknown one and --seeds beside --seed are told
// apart, each with exit 2.
TEST_F(CliTest, CheckGuaranteesCaseNamesComeFromTheTable) {
  const Outcome table = Electsim("check-guarantees --algorithms ring --seeds 1");
  ASSERT_EQ(table.exit_status, 0) << table.output;
  std::smatch row;
  const std::string output = table.output;
  ASSERT_TRUE(std::regex_search(output, row, std::regex(R"(\n(loss\+duplication[^\n]*) (guarantee-ring-\S+)\n)")))
      << output;
  const std::string name = row[2].str();
  EXPECT_EQ(name.find('+'), std::string::npos) << name;
  const Outcome one = Electsim("check-guarantees --case " + name + " --seed 1");
  EXPECT_EQ(one.exit_status, 0) << one.output;
  EXPECT_NE(one.output.find("scenario: " + name), std::string::npos) << one.output;

  const Outcome outside = Electsim("check-guarantees --algorithms raft --case " + name + " --seed 1");
  EXPECT_EQ(outside.exit_status, 2) << outside.output;
  EXPECT_NE(outside.output.find("a case of ring, which --algorithms raft leaves out"), std::string::npos)
      << outside.output;
  const Outcome unknown = Electsim("check-guarantees --case guarantee-ring-defaults-nope --seed 1");
  EXPECT_EQ(unknown.exit_status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no case named \"guarantee-ring-defaults-nope\"; expected a name from the table's"),
            std::string::npos)
      << unknown.output;
  const Outcome both = Electsim("check-guarantees --case " + name + " --seed 1 --seeds 5");
  EXPECT_EQ(both.exit_status, 2) << both.output;
  EXPECT_NE(both.output.find("--seeds: --seed runs one seed of the case"), std::string::npos) << both.output;
  EXPECT_EQ(both.output.find("scenario:"), std::string::npos) << both.output;
}

// `run x.json >> x.json` would write the report into the scenario it reads:
// refused before anything is printed, as an output file naming it would be.
TEST_F(CliTest, StandardOutputIntoAnInputIsRefused) {
  const std::string original = electsim_test::ReadWholeFile(Scenario("raft-healthy.json"));
  const std::string scenario = Write("s.json", original);
  const std::string repro =
      Write("r.repro.json", electsim_test::ReadWholeFile(std::string(ELECTSIM_SOURCE_DIR) +
                                                         "/results/repros/raft-bug-vote-twice-seed1.repro.json"));
  const std::string kept_repro = electsim_test::ReadWholeFile(repro);
  const std::string errors = (dir_ / "errors.txt").string();
  for (const auto& [command, input] : {std::pair{"run " + scenario + " --repro-dir " + dir_.string(), scenario},
                                       {"sweep " + scenario + " --seeds 2", scenario},
                                       {"explain " + repro, repro},
                                       {"replay " + repro, repro}}) {
    const std::string line = std::string(ELECTSIM_BINARY) + " " + command + " >> " + input + " 2> " + errors;
    const int status = std::system(line.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << line;
    EXPECT_EQ(WEXITSTATUS(status), 2) << line;
    EXPECT_NE(
        electsim_test::ReadWholeFile(errors).find("standard output goes to " + input + ", which this command reads"),
        std::string::npos)
        << line << "\n"
        << electsim_test::ReadWholeFile(errors);
  }
  EXPECT_EQ(electsim_test::ReadWholeFile(scenario), original);
  EXPECT_EQ(electsim_test::ReadWholeFile(repro), kept_repro);
  // Standard output into another file is as before.
  const std::string report = (dir_ / "report.txt").string();
  const std::string fine = std::string(ELECTSIM_BINARY) + " run " + scenario + " --repro-dir " + dir_.string() + " > " +
                           report + " 2> " + errors;
  EXPECT_EQ(std::system(fine.c_str()), 0) << fine;
  EXPECT_NE(electsim_test::ReadWholeFile(report).find("trace-hash: 0x"), std::string::npos);
}

TEST_F(CliTest, TamperedReprosExitTwoNamingThePath) {
  const std::string original =
      std::string(ELECTSIM_SOURCE_DIR) + "/results/repros/raft-bug-vote-twice-seed1.repro.json";
  nlohmann::json repro = nlohmann::json::parse(std::ifstream(original));
  std::string text = repro.dump();
  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  auto with = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json copy = repro;
    copy[key] = value;
    return copy.dump();
  };
  auto without = [&](const std::string& key) {
    nlohmann::json copy = repro;
    copy.erase(key);
    return copy.dump();
  };
  nlohmann::json bad_scenario = repro;
  bad_scenario["scenario"]["nodes"] = 0;
  const std::vector<Case> cases = {
      {"dup.json", "{\"seed\": 2, " + text.substr(1), "at /seed: expected each key once"},
      {"banana.json", with("trace_hash", "banana"), "at /trace_hash: expected \"0x\" and 16 lowercase hex digits"},
      {"upper.json", with("trace_hash", "0XA141845F09A5689B"), "at /trace_hash"},
      {"violations.json", with("violations", "election_safety"), "at /violations: expected an array"},
      {"violation.json", with("violations", nlohmann::json::array({5})), "at /violations/0: expected an object"},
      {"checker.json", with("violations", nlohmann::json::array({{{"checker", "nope"}, {"message", "x"}}})),
       "at /violations/0/checker: expected a checker's name, one of committed_agreement, "},
      {"unknown.json", with("bogus", 1), "at /bogus: expected no key \"bogus\" in a repro"},
      {"records.json", with("trace_records", "many"), "at /trace_records: expected a non-negative integer"},
      {"missing.json", without("violations"), "at /violations: expected an array of violations (this key is required)"},
      {"format.json", with("electsim_repro", 99), "at /electsim_repro: expected 1"},
      {"nodes.json", bad_scenario.dump(), "at /scenario/nodes: expected an integer in [1, 100000]"},
  };
  for (const Case& c : cases) {
    const std::string path = Write(c.name, c.text);
    const Outcome out = Electsim("replay " + path);
    EXPECT_EQ(out.exit_status, 2) << c.name << "\n" << out.output;
    EXPECT_NE(out.output.find(path + ": " + c.message), std::string::npos) << c.name << "\n" << out.output;
  }
  const Outcome scenario = Electsim("replay " + Scenario("raft-healthy.json"));
  EXPECT_EQ(scenario.exit_status, 2);
  EXPECT_NE(scenario.output.find("this file is not a repro written by electsim run"), std::string::npos)
      << scenario.output;
}

TEST_F(CliTest, AMessageStormIsBadInputNotAnEndlessRun) {
  // Valid one by one, but a heartbeat every nanosecond over 1ms links piles
  // up messages until the simulator's pending-event cap stops the run (a
  // small budget stops it sooner, as surely).
  const std::string path = Write("storm.json", R"({"nodes": 3, "duration": "2s", "pending_events_memory_mib": 10,
      "algorithm": {"name": "bully",
      "options": {"heartbeat_interval": "1ns", "heartbeat_timeout": "2ns", "answer_timeout": "1ns",
                  "coordinator_timeout": "2ns"}}})");
  const Outcome out = Electsim("run " + path);
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find(path + ": the simulation stopped: "), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("a message or timer storm is the likely cause"), std::string::npos) << out.output;
}

TEST_F(CliTest, ListShowsAlgorithmsOptionsAndCheckers) {
  const Outcome out = Electsim("list");
  EXPECT_EQ(out.exit_status, 0);
  for (const char* expected :
       {"raft", "election_timeout_min", "election_safety", "stale_token", "liveness", "leader_completeness",
        "committed_agreement", "commit_previous_term", "skip_sync", "unique_token", "guarantees with these defaults"}) {
    EXPECT_NE(out.output.find(expected), std::string::npos) << expected;
  }
  // Which pre-vote rule Raft follows, and where it comes from.
  EXPECT_NE(out.output.find("as in etcd (raft.go, Step), a node that heard its leader within election_timeout_min "
                            "ignores vote and pre-vote requests of higher terms"),
            std::string::npos)
      << out.output;
  // Each algorithm's table, and what options change in it.
  EXPECT_NE(out.output.find("    single_leader       yes  -    yes         -       -         -           yes   yes"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("with deadline_clock \"wall\" (lease_validity not under clock_step; single_leader not "
                            "under clock_step; stale_token not under clock_step):"),
            std::string::npos);
  EXPECT_NE(out.output.find("with any other \"bug\" (a mutant: electsim list --mutants): nothing is guaranteed"),
            std::string::npos);
}

}  // namespace
