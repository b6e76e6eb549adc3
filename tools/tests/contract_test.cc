// The contract every command keeps (README, "The contract"), one test per
// way it was once broken: reproduce commands that reproduce, labels that say
// what ran, seed ranges and shards checked, merges that never claim missing
// seeds, outputs that never replace inputs or each other and are whole or
// absent, JUnit that is well-formed and honest, no raw control bytes.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_process.h"
#include "tools/tests/sanitizer.h"

namespace electsim_test {
namespace {

// Settings Bully cannot carry: a storm of messages and timers.
const std::vector<std::string> kStormOptions = {"heartbeat_interval=1ns", "heartbeat_timeout=2ns", "answer_timeout=1ns",
                                                "coordinator_timeout=2ns"};

class ContractTest : public TempDirTest {
 protected:
  // Pasted lines run in the test's folder, as a user's run in theirs: a
  // reproduce line writes its repro file where it runs, and ctest starts the
  // tests in the checkout.
  void SetUp() override {
    TempDirTest::SetUp();
    cwd_before_ = fs::current_path();
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(cwd_before_);
    TempDirTest::TearDown();
  }
  // A --set whose value would run a command if a printed line were not quoted.
  std::string Injection() const { return "description=x; touch " + (dir_ / "injected").string(); }
  bool Injected() const { return fs::exists(dir_ / "injected"); }

 private:
  fs::path cwd_before_;
};

// `line` run by a POSIX shell, as a user pasting it would.
Finished Shell(const std::string& line) {
  FILE* pipe = popen(("exec 2>&1; " + line).c_str(), "r");
  Finished finished{-1, "", ""};
  if (pipe == nullptr) return finished;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) finished.out.append(buffer, n);
  const int status = pclose(pipe);
  finished.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return finished;
}

std::string Capture(const std::string& text, const std::string& pattern) {
  std::smatch match;
  return std::regex_search(text, match, std::regex(pattern)) ? match[1].str() : std::string();
}

std::string ReproduceLine(const std::string& text) { return Capture(text, "reproduce: ([^\n]+)"); }
std::string TraceHash(const std::string& text) { return Capture(text, "trace-hash:? (0x[0-9a-f]{16})"); }

void ExpectReproduces(const std::string& out, int exit_status, const std::string& context) {
  const std::string line = ReproduceLine(out);
  const std::string hash = TraceHash(out);
  ASSERT_FALSE(line.empty()) << context << out;
  ASSERT_FALSE(hash.empty()) << context << out;
  const Finished again = Shell(line);
  EXPECT_EQ(again.exit_status, exit_status) << context << line << "\n" << again.out;
  EXPECT_EQ(TraceHash(again.out), hash) << context << line << "\n" << again.out;
}

TEST_F(ContractTest, Reproduce_RunLineCarriesSetQuotedAndReproduces) {
  const Finished run = RunElectsim({"run", ShippedScenario("raft-bug-vote-twice.json"), "--set", "expect.violations=[]",
                                    "--set", Injection(), "--repro-dir", ""});
  ASSERT_EQ(run.exit_status, 1) << run.out << run.err;
  EXPECT_NE(ReproduceLine(run.out).find("--set 'expect.violations=[]'"), std::string::npos) << run.out;
  ExpectReproduces(run.out + run.err, 1, "run: ");
  EXPECT_FALSE(Injected());
}

// `line` run by bash: a line with a word in $'...' needs a shell that reads
// it, and Debian's /bin/sh (dash) does not.
Finished Bash(const fs::path& dir, const std::string& line) {
  const fs::path script = dir / "pasted.sh";
  std::ofstream(script) << line << "\n";
  return Shell("bash " + script.string());
}

TEST_F(ContractTest, Reproduce_AFileNameWithControlBytesPastesBack) {
  // A newline and an escape sequence in the name: printed raw, the newline
  // would end the line and ESC [2J clear the screen; printed escaped inside
  // single quotes, the pasted name would be a different one.
  const fs::path odd = dir_ / "vote\ntwice\x1b[2J.json";
  fs::copy_file(ShippedScenario("raft-bug-vote-twice.json"), odd);
  const Finished run = RunElectsim({"run", odd.string(), "--set", "expect.violations=[]", "--repro-dir", ""});
  ASSERT_EQ(run.exit_status, 1) << run.out << run.err;
  const std::string line = ReproduceLine(run.out + run.err);
  ASSERT_FALSE(line.empty()) << run.out << run.err;
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  const Finished again = Bash(dir_, line);
  EXPECT_EQ(again.exit_status, 1) << line << "\n" << again.out;
  EXPECT_EQ(TraceHash(again.out), TraceHash(run.out + run.err)) << line << "\n" << again.out;
}

// A file named "-v.json", given after "--": printed as a word of its own it
// would be read as an option (exit 2, "scenario is required"); the line
// names it ./-v.json, and the replay line ./-out/....
TEST_F(ContractTest, Reproduce_AFileNameStartingWithADashPastesBack) {
  fs::copy_file(ShippedScenario("raft-bug-vote-twice.json"), dir_ / "-v.json");
  const std::string in_dir = fmt::format("cd '{}' && ", dir_.string());
  const Finished run =
      Shell(in_dir + ELECTSIM_BINARY + " run --set 'expect.violations=[]' --repro-dir=-out --quiet -- -v.json");
  ASSERT_EQ(run.exit_status, 1) << run.out;
  const std::string line = ReproduceLine(run.out);
  ASSERT_NE(line.find(" ./-v.json "), std::string::npos) << run.out;
  const Finished again = Shell(in_dir + line + " --quiet");
  EXPECT_EQ(again.exit_status, 1) << line << "\n" << again.out;
  EXPECT_EQ(ReproduceLine(again.out), line) << again.out;
  const std::string replay = Capture(run.out, "\\(replay: ([^\n]+)\\)");
  ASSERT_NE(replay.find(" ./-out/"), std::string::npos) << run.out;
  const Finished replayed = Shell(in_dir + replay);
  EXPECT_EQ(replayed.exit_status, 0) << replay << "\n" << replayed.out;
  EXPECT_NE(replayed.out.find("trace hash matches the repro"), std::string::npos) << replayed.out;
}

TEST_F(ContractTest, Reproduce_SweepLineReproducesTheFailingSeed) {
  const Finished sweep = RunElectsim({"sweep", ShippedScenario("raft-bug-vote-twice.json"), "--seeds", "1", "--set",
                                      "expect.violations=[]", "--set", Injection(), "--repro-dir", OutDir().string()});
  ASSERT_EQ(sweep.exit_status, 1) << sweep.out << sweep.err;
  ExpectReproduces(sweep.out, 1, "sweep: ");
  EXPECT_FALSE(Injected());
}

TEST_F(ContractTest, Reproduce_FuzzLineRunsTheOneSeed) {
  const Finished fuzz =
      RunElectsim({"fuzz", "--algorithm", "raft", "--fencing", "--option", "bug=vote_twice", "--no-option-swarm",
                   "--guarantees-of", "defaults", "--seeds", "1..1", "--max-repros", "1", "--shrink-runs", "0", "--set",
                   Injection(), "--repro-dir", OutDir().string()});
  ASSERT_EQ(fuzz.exit_status, 1) << fuzz.out << fuzz.err;
  ExpectReproduces(fuzz.out, 1, "fuzz: ");
  EXPECT_NE(Shell(ReproduceLine(fuzz.out)).out.find("fuzz verdict: BROKE a declared guarantee"), std::string::npos);
  EXPECT_FALSE(Injected());
}

TEST_F(ContractTest, Reproduce_BenchLineRunsTheViolatingTrial) {
  const Finished bench = RunElectsim({"bench", "--algorithms", "raft", "--trials", "8", "--jobs", "1", "--set",
                                      "algorithm.options.bug=vote_twice", "--set", Injection()});
  ASSERT_EQ(bench.exit_status, 1) << bench.out << bench.err;
  ASSERT_NE(bench.out.find("first trial with a violation"), std::string::npos) << bench.out;
  ExpectReproduces(bench.out, 1, "bench: ");
  EXPECT_FALSE(Injected());
}

// A swept row's line names its point as a sweep of one: as a --set, the
// loss that --fault lossy owns (or an option a preset sets) was refused.
TEST_F(ContractTest, Reproduce_BenchSweepLinesRunEachRowsTrial) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "--algorithms", "bully", "--fault", "lossy", "--trials", "10", "--jobs", "1",
                                 "--sweep", "drop=0.1..0.3:3"},
        std::vector<std::string>{"bench", "--algorithms", "bully", "--preset", "equal-detection", "--fault", "lossy",
                                 "--trials", "10", "--jobs", "1", "--sweep", "heartbeat_timeout=150ms..300ms:2"}}) {
    const Finished bench = RunElectsim(args);
    ASSERT_EQ(bench.exit_status, 1) << bench.out << bench.err;  // as each row's reproduce line
    const std::regex row("trace-hash (0x[0-9a-f]{16})\n  reproduce: ([^\n]+)");
    int rows = 0;
    for (std::sregex_iterator it(bench.out.begin(), bench.out.end(), row), end; it != end; ++it, ++rows) {
      const std::string line = (*it)[2].str();
      EXPECT_NE(line.find("--sweep "), std::string::npos) << line;
      const Finished again = Shell(line);
      EXPECT_EQ(again.exit_status, 1) << line << "\n" << again.out;
      EXPECT_EQ(TraceHash(again.out), (*it)[1].str()) << line << "\n" << again.out;
    }
    EXPECT_GE(rows, 2) << bench.out;
  }
}

TEST_F(ContractTest, Labels_ASetThatContradictsAFlagIsRefused) {
  const std::vector<std::vector<std::string>> refused = {
      {"bench", "--trials", "2", "--set", "nodes=9"},
      {"bench", "--trials", "2", "--sweep", "nodes=3..5", "--set", "nodes=9"},
      {"bench", "--trials", "2", "--algorithms", "raft", "--set", "algorithm=bully"},
      {"bench", "--trials", "2", "--algorithms", "raft", "--sweep", "election_timeout_max=300ms..400ms", "--set",
       "algorithm.options.election_timeout_max=500ms"},
      {"fuzz", "--algorithm", "raft", "--seeds", "1..2", "--set", "algorithm=bully"},
      {"bench", "--trials", "2", "--fault", "lossy", "--set", "network.drop=0"},
      {"bench", "--trials", "2", "--set", "faults.0.crash=0"},
  };
  for (const auto& args : refused) {
    const Finished finished = RunElectsim(args);
    EXPECT_EQ(finished.exit_status, 2) << fmt::format("{}", fmt::join(args, " ")) << finished.out << finished.err;
    EXPECT_EQ(finished.out.find("p50"), std::string::npos) << "ran anyway: " << finished.out;
  }
}

TEST_F(ContractTest, Labels_ComeFromTheScenariosThatRan) {
  const std::string csv = (dir_ / "t.csv").string(), json = (dir_ / "t.json").string();
  const Finished seven =
      RunElectsim({"bench", "--algorithms", "raft", "--nodes", "7", "--trials", "2", "--csv", csv, "--json", json});
  ASSERT_EQ(seven.exit_status, 0) << seven.err;
  EXPECT_NE(seven.out.find("fault crash-leader, 7 nodes"), std::string::npos) << seven.out;
  EXPECT_NE(ReadWholeFile(csv).find(",raft,7,crash-leader,"), std::string::npos) << ReadWholeFile(csv);
  EXPECT_EQ(nlohmann::json::parse(ReadWholeFile(json))["nodes"], 7);
  const Finished swept = RunElectsim({"bench", "--algorithms", "raft", "--sweep", "nodes=4..3", "--trials", "2"});
  ASSERT_EQ(swept.exit_status, 0) << swept.err;
  EXPECT_NE(swept.out.find("fault crash-leader, nodes by row"), std::string::npos) << swept.out;
}

TEST_F(ContractTest, Seeds_EmptyNegativeAndOverflowingAreRefused) {
  const std::vector<std::vector<std::string>> refused = {
      {"fuzz", "--algorithm", "raft", "--seeds", "0..18446744073709551615"},
      {"fuzz", "--algorithm", "raft", "--seed", "-1"},
      {"fuzz", "--algorithm", "raft", "--seeds", "9..3"},
      {"fuzz", "--algorithm", "raft", "--seeds", "1..3", "--shard", "5/10"},
      {"sweep", ShippedScenario("raft-healthy.json"), "--shard", "4/3"},
      {"sweep", ShippedScenario("raft-healthy.json"), "--first-seed", "-1"},
      {"bench", "--seed", "18446744073709551615", "--trials", "2"},
      {"bench", "--seeds", "0..18446744073709551615"},
      {"bench", "--seed", "18446744073709551615", "--seeds", "2"},
  };
  for (const auto& args : refused) {
    const Finished finished = RunElectsim(args);
    EXPECT_EQ(finished.exit_status, 2) << fmt::format("{}", fmt::join(args, " ")) << finished.out << finished.err;
    EXPECT_EQ(finished.out.find("seeds/s"), std::string::npos) << "ran anyway: " << finished.out;
  }
}

TEST_F(ContractTest, OneSeedModes_RefuseOutputsTheyWouldNotWrite) {
  const std::string file = (dir_ / "s.json").string();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"fuzz", "--algorithm", "raft", "--seed", "3", "--summary", file},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--junit", file},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--seeds", "1..4"},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--repro-dir", file},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--max-repros", "3"},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--shrink-runs", "5"},
                                             {"fuzz", "--algorithm", "raft", "--seed", "3", "--jobs", "2"},
                                             {"bench", "--algorithms", "raft", "--run-seed", "3", "--csv", file},
                                             {"bench", "--algorithms", "raft,bully", "--run-seed", "3"}}) {
    const Finished finished = RunElectsim(args);
    EXPECT_EQ(finished.exit_status, 2) << fmt::format("{}", fmt::join(args, " ")) << finished.err;
    EXPECT_FALSE(fs::exists(file));
  }
}

// Shards are one campaign only if they ran one scenario: the same path
// whose file changed between two shards is refused, not merged as complete.
TEST_F(ContractTest, MergeRefusesShardsOfAScenarioFileThatChanged) {
  const std::string scenario = (dir_ / "s.json").string();
  fs::copy_file(electsim_test::ShippedScenario("raft-lossy-network.json"), scenario);
  const std::string first = (dir_ / "a1.json").string();
  const std::string second = (dir_ / "a2.json").string();
  const std::string again = (dir_ / "a2-same.json").string();
  ASSERT_EQ(
      RunElectsim({"sweep", scenario, "--seeds", "6", "--shard", "1/2", "--jobs", "1", "--summary", first}).exit_status,
      0);
  ASSERT_EQ(
      RunElectsim({"sweep", scenario, "--seeds", "6", "--shard", "2/2", "--jobs", "1", "--summary", again}).exit_status,
      0);
  auto document = nlohmann::json::parse(ReadWholeFile(scenario));
  document["network"] = {{"latency", "1ms"}};
  document["faults"] = nlohmann::json::array();
  std::ofstream(scenario) << document.dump();
  ASSERT_EQ(RunElectsim({"sweep", scenario, "--seeds", "6", "--shard", "2/2", "--jobs", "1", "--summary", second})
                .exit_status,
            0);
  const Finished changed = RunElectsim({"merge", first, second});
  EXPECT_EQ(changed.exit_status, 2) << changed.out << changed.err;
  EXPECT_NE(changed.err.find("a shard of the same campaign"), std::string::npos) << changed.err;
  EXPECT_EQ(RunElectsim({"merge", first, again}).exit_status, 0);
}

class MergeContractTest : public ContractTest {
 protected:
  void SetUp() override {
    ContractTest::SetUp();
    for (int k = 1; k <= 3; ++k) {
      const Finished shard =
          RunElectsim({"fuzz", "--algorithm", "raft", "--seeds", "1..30", "--duration", "2s", "--jobs", "1",
                       "--max-repros", "0", "--shard", fmt::format("{}/3", k), "--summary", Shard(k)});
      ASSERT_EQ(shard.exit_status, 0) << shard.out << shard.err;
    }
  }
  std::string Shard(int k) const { return (dir_ / fmt::format("s{}.json", k)).string(); }
};

TEST_F(MergeContractTest, TwoOfThreeShardsAreNeverComplete) {
  const std::string merged = (dir_ / "merged.json").string();
  const Finished refused = RunElectsim({"merge", Shard(1), Shard(2), "--summary", merged});
  EXPECT_EQ(refused.exit_status, 2) << refused.err;
  EXPECT_NE(refused.err.find("shard 3 of 3 missing"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(merged));
  const Finished partial = RunElectsim({"merge", Shard(1), Shard(2), "--summary", merged, "--allow-incomplete"});
  EXPECT_EQ(partial.exit_status, 3) << partial.err;
  EXPECT_EQ(nlohmann::json::parse(ReadWholeFile(merged))["complete"], false);
  EXPECT_NE(partial.out.find("merge: 2 summaries of fuzz raft: shards 1,2 of 3, "), std::string::npos) << partial.out;
  const Finished whole = RunElectsim({"fuzz", "--merge", Shard(1), Shard(2), Shard(3), "--summary", merged});
  EXPECT_EQ(whole.exit_status, 0) << whole.err;
  EXPECT_EQ(nlohmann::json::parse(ReadWholeFile(merged))["complete"], true);
  // The shards merged, not the one campaign they make (shard 1 of 1).
  EXPECT_NE(whole.out.find("merge: 3 summaries of fuzz raft: shards 1,2,3 of 3, 30 of 30 seeds"), std::string::npos)
      << whole.out;
  // A run's flag with --merge would be ignored: refused, nothing written.
  fs::remove(merged);
  const Finished mixed =
      RunElectsim({"fuzz", "--merge", Shard(1), Shard(2), Shard(3), "--algorithm", "bully", "--summary", merged});
  EXPECT_EQ(mixed.exit_status, 2) << mixed.err;
  EXPECT_NE(mixed.err.find("--algorithm: --merge combines summaries and runs nothing"), std::string::npos) << mixed.err;
  EXPECT_FALSE(fs::exists(merged));
}

// --json puts the merged summary alone on standard output, as sweep --json does.
TEST_F(MergeContractTest, JsonOnStandardOutputIsTheSummaryAlone) {
  const Finished merged = RunElectsim({"merge", Shard(1), Shard(2), Shard(3), "--json"});
  EXPECT_EQ(merged.exit_status, 0) << merged.err;
  const auto document = nlohmann::json::parse(merged.out, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << merged.out;
  EXPECT_EQ(document["complete"], true);
  EXPECT_NE(merged.err.find("merge: 3 summaries of"), std::string::npos) << merged.err;
}

TEST_F(MergeContractTest, ShardsThatLieAreRefused) {
  nlohmann::json doc = nlohmann::json::parse(ReadWholeFile(Shard(3)));
  nlohmann::json five_of_three = doc;
  five_of_three["campaigns"][0]["shards"]["included"] = {5};
  nlohmann::json too_many = doc;
  too_many["campaigns"][0]["seeds_run"] = 11;  // shard 3 of 3 of 1..30 holds 10
  for (const nlohmann::json& lie : {five_of_three, too_many}) {
    const std::string path = Write("lie.json", lie.dump());
    const Finished merged = RunElectsim({"merge", Shard(1), Shard(2), path});
    EXPECT_EQ(merged.exit_status, 2) << merged.err;
    EXPECT_NE(merged.err.find("lie.json: at /campaigns/0/"), std::string::npos) << merged.err;
  }
  // Where the merge goes is checked before anything is read: not over an input.
  const std::string before = ReadWholeFile(Shard(1));
  EXPECT_EQ(RunElectsim({"merge", Shard(1), Shard(2), Shard(3), "--summary", Shard(1)}).exit_status, 2);
  EXPECT_EQ(ReadWholeFile(Shard(1)), before);
}

// User text read back from a summary (a label, a reproduce line) reaches
// the merged JUnit escaped, and each failure keeps its files.
TEST_F(MergeContractTest, MergedJUnitIsWellFormedAndKeepsEachFailuresFiles) {
  nlohmann::json doc = nlohmann::json::parse(ReadWholeFile(Shard(3)));
  doc["campaigns"][0]["seeds_failed"] = 1;
  doc["campaigns"][0]["failing_seeds"] = {{{"seed", 3},
                                           {"reasons", {"election_safety\x01"}},
                                           {"findings", nlohmann::json::array()},
                                           {"reproduce", "x \x1b[2J ]]> & <b>"},
                                           {"repro", "out/fuzz-raft-seed3.repro.json"},
                                           {"timeline", "out/fuzz-raft-seed3.html"},
                                           {"shrunk_repro", "out/fuzz-raft-seed3.shrunk.repro.json"}}};
  const std::string edited = Write("edited.json", doc.dump());
  const std::string junit = (dir_ / "j.xml").string();
  const Finished merged = RunElectsim({"merge", Shard(1), Shard(2), edited, "--junit", junit});
  EXPECT_EQ(merged.exit_status, 1) << merged.err;
  const std::string xml = ReadWholeFile(junit);
  for (const char* line : {"repro: out/fuzz-raft-seed3.repro.json", "timeline: out/fuzz-raft-seed3.html",
                           "shrunk repro: out/fuzz-raft-seed3.shrunk.repro.json"}) {
    EXPECT_NE(xml.find(line), std::string::npos) << xml;
  }
  const Finished parsed =
      Shell(fmt::format("/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' {}", junit));
  EXPECT_EQ(parsed.exit_status, 0) << parsed.out << xml;
}

TEST_F(ContractTest, Outputs_NeverReplaceAnInputOrAnotherOutput) {
  // A repro and a trace of a good run.
  const fs::path out = OutDir();
  ASSERT_EQ(RunElectsim({"run", ShippedScenario("raft-bug-vote-twice.json"), "--repro-on", "violation", "--repro-dir",
                         out.string()})
                .exit_status,
            0);
  const std::string repro = (out / "raft-bug-vote-twice-seed1.repro.json").string();
  const std::string trace = Write("good.jsonl", "{}\n");
  const Finished replay = RunElectsim({"replay", repro, "--trace", trace, "--expected", trace});
  EXPECT_EQ(replay.exit_status, 2) << replay.err;
  EXPECT_EQ(ReadWholeFile(trace), "{}\n");
  for (const char* flag : {"--summary", "--junit"}) {
    for (const char* name : {"fuzz-raft-seed2.repro.json", "fuzz-raft-seed2.html", "fuzz-raft-seed2.shrunk.json"}) {
      const Finished fuzz = RunElectsim(
          {"fuzz", "--algorithm", "raft", "--seeds", "1..3", "--repro-dir", out.string(), flag, (out / name).string()});
      EXPECT_EQ(fuzz.exit_status, 2) << flag << " " << name << fuzz.out << fuzz.err;
      EXPECT_FALSE(fs::exists(out / name));
    }
  }
}

TEST_F(ContractTest, StrayRepros_ExpectedViolationsWriteNone) {
  const fs::path out = OutDir();
  const Finished sweep =
      RunElectsim({"sweep", ShippedScenario("raft-bug-vote-twice.json"),
                   ShippedScenario("bully-partition-split-brain.json"), "--seeds", "3", "--repro-dir", out.string()});
  EXPECT_EQ(sweep.exit_status, 0) << sweep.out << sweep.err;
  EXPECT_TRUE(Names(out).empty());
}

TEST_F(ContractTest, BadInputFoundMidwayWritesNothing) {
  // The storm shows only once a trial runs: bench still writes no CSV or JSON.
  const std::string csv = (dir_ / "t.csv").string(), json = (dir_ / "t.json").string();
  std::vector<std::string> args = {"bench", "--algorithms", "bully", "--trials", "2", "--jobs",
                                   "2",     "--csv",        csv,     "--json",   json};
  for (const std::string& option : kStormOptions) args.insert(args.end(), {"--set", "algorithm.options." + option});
  args.insert(args.end(), {"--set", "pending_events_memory_mib=10"});  // stops the storm sooner, as surely
  const Finished bench = RunElectsim(args);
  EXPECT_EQ(bench.exit_status, 2) << bench.err;
  EXPECT_NE(bench.err.find("the simulation stopped"), std::string::npos) << bench.err;
  EXPECT_EQ(Names(dir_), std::vector<std::string>{});
}

TEST_F(ContractTest, OutOfMemoryInAWorker_ExitThreeLeavingNoTemporaryFile) {
#if defined(ELECTSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than any limit this test could set";
#else
  const fs::path out = OutDir();
  std::vector<std::string> bench = {"bench", "--algorithms",          "bully", "--trials", "4", "--jobs", "2",
                                    "--csv", (out / "t.csv").string()};
  std::vector<std::string> fuzz = {
      "fuzz",        "--algorithm", "bully", "--seeds", "1..4", "--jobs", "2", "--junit", (out / "j.xml").string(),
      "--repro-dir", out.string()};
  for (const std::string& option : kStormOptions) {
    bench.insert(bench.end(), {"--set", "algorithm.options." + option});
    fuzz.insert(fuzz.end(), {"--option", option});
  }
  for (const auto& command : {bench, fuzz}) {
    const Finished finished = RunElectsim(command, {.address_space_limit_bytes = rlim_t{100} << 20});
    EXPECT_EQ(finished.exit_status, 3) << command[0] << finished.out << finished.err;
    EXPECT_NE(finished.err.find("out of memory"), std::string::npos) << finished.err;
    for (const std::string& name : Names(out)) EXPECT_NE(name.front(), '.') << "a temporary file was left: " << name;
  }
  // What was written is whole, and says the campaign could not be judged.
  if (fs::exists(out / "j.xml")) {
    const std::string junit = ReadWholeFile(out / "j.xml");
    EXPECT_NE(junit.find("<error message=\"seed "), std::string::npos) << junit;
    EXPECT_EQ(junit.find("/>"), std::string::npos) << "a passing case: " << junit;
  }
#endif
}

TEST_F(ContractTest, ControlBytesFromArguments_NeverReachTheTerminalRaw) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", ShippedScenario("raft-healthy.json"), "--\x1b]52;c;aGk=\x07"},
        std::vector<std::string>{"sweep", ShippedScenario("raft-healthy.json"), "--jobs", "\x1b[2J"},
        std::vector<std::string>{"fuzz", "--algorithm", "raft", "--seeds", "1..\x1b[2J"},
        std::vector<std::string>{"\x1b[2J"}}) {
    const Finished finished = RunElectsim(args);
    EXPECT_EQ(finished.exit_status, 2) << finished.err;
    EXPECT_EQ(finished.err.find('\x1b'), std::string::npos) << finished.err;
    EXPECT_EQ(finished.err.find('\x07'), std::string::npos) << finished.err;
  }
}

TEST_F(ContractTest, JUnit_IsWellFormedXml) {
  const std::string junit = (dir_ / "j.xml").string();
  const Finished fuzz =
      RunElectsim({"fuzz", "--algorithm", "raft", "--fencing", "--option", "bug=vote_twice", "--no-option-swarm",
                   "--guarantees-of", "defaults", "--seeds", "1..2", "--max-repros", "0", "--set",
                   "description=<&\"' ]]> </testcase>", "--junit", junit});
  ASSERT_EQ(fuzz.exit_status, 1) << fuzz.err;
  const Finished parsed =
      Shell(fmt::format("/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); "
                        "print(len(d.getElementsByTagName(\"failure\")))' {}",
                        junit));
  EXPECT_EQ(parsed.exit_status, 0) << parsed.out << ReadWholeFile(junit);
  // One <failure> per failing seed the run named.
  const std::regex broke_line("BROKE");
  const size_t broke =
      std::distance(std::sregex_iterator(fuzz.out.begin(), fuzz.out.end(), broke_line), std::sregex_iterator());
  ASSERT_GT(broke, 0u) << fuzz.out;
  EXPECT_EQ(parsed.out, fmt::format("{}\n", broke)) << ReadWholeFile(junit);
}

}  // namespace
}  // namespace electsim_test
