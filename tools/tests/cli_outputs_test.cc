// The electsim binary under hostile conditions: outputs that would replace
// inputs or each other, the trace streamed to stdout, long file names,
// terminating signals, full disks, memory running out; and sweep judging
// every seed as run does.
#include <signal.h>
#include <sys/wait.h>

#include <climits>
#include <cstring>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_process.h"
#include "tools/tests/sanitizer.h"

namespace electsim_test {
namespace {

// The vote-twice bug in a small cluster over a wide latency range: the first
// leader's heartbeats sometimes stop every other candidate in time, so the
// expected double leadership shows on some seeds and not on others.
constexpr const char* kSometimesFailing = R"({
  "name": "racy",
  "nodes": 3,
  "duration": "1s",
  "algorithm": { "name": "raft", "options": { "bug": "vote_twice", "election_timeout_min": "150ms",
                                              "election_timeout_max": "150ms" } },
  "network": { "latency": { "uniform": ["1ms", "30ms"] } },
  "checkers": ["election_safety", "single_leader", "single_vote"],
  "expect": { "violations": ["election_safety", "single_leader", "single_vote"] }
})";
constexpr uint64_t kFirstSeed = 9;
constexpr uint64_t kSeeds = 8;

// Runs until a signal stops it.
constexpr const char* kEndless = R"({"nodes": 5, "duration": "1000000s", "algorithm": "raft"})";

const char* kHealthy = "raft-healthy.json";

class CliOutputsTest : public TempDirTest {};

// The seeds of kSometimesFailing that `run` fails, decided by run itself.
std::set<uint64_t> SeedsRunFails(const std::string& scenario) {
  std::set<uint64_t> failing;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kSeeds; ++seed) {
    const Finished run = RunElectsim({"run", scenario, "--seed", std::to_string(seed), "--repro-dir", ""});
    EXPECT_TRUE(run.exit_status == 0 || run.exit_status == 1) << run.err;
    if (run.exit_status == 1) failing.insert(seed);
  }
  return failing;
}

std::set<uint64_t> SeedsSweepNames(const std::string& out) {
  std::set<uint64_t> named;
  const std::regex failed(R"(racy: seed (\d+) FAILED: )");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), failed); it != std::sregex_iterator(); ++it) {
    named.insert(std::stoull((*it)[1].str()));
  }
  return named;
}

TEST_F(CliOutputsTest, RunAndSweep_AgreeOnEverySeed) {
  const std::string scenario = Write("racy.json", kSometimesFailing);
  const std::set<uint64_t> failing = SeedsRunFails(scenario);
  // The test means something only if the range holds both kinds of seed.
  ASSERT_GE(failing.size(), 2u) << "pick a range where run fails some seeds";
  ASSERT_LT(failing.size(), kSeeds) << "pick a range where run passes some seeds";
  for (const std::string jobs : {"1", "2"}) {
    const Finished sweep = RunElectsim({"sweep", scenario, "--first-seed", std::to_string(kFirstSeed), "--seeds",
                                        std::to_string(kSeeds), "--jobs", jobs, "--repro-dir", ""});
    EXPECT_EQ(sweep.exit_status, 1) << sweep.out << sweep.err;
    EXPECT_EQ(SeedsSweepNames(sweep.out), failing) << sweep.out;
    EXPECT_NE(sweep.out.find(fmt::format("expectations met in {}/{}", kSeeds - failing.size(), kSeeds)),
              std::string::npos)
        << sweep.out;
  }
  // One verdict, one wording: checker names take "an" before a vowel.
  const Finished run = RunElectsim({"run", scenario, "--seed", std::to_string(*failing.begin()), "--repro-dir", ""});
  EXPECT_NE(run.out.find("expected an election_safety violation, none was found"), std::string::npos) << run.out;
}

TEST_F(CliOutputsTest, SeedsFlag_TakesANumberOrARangeAndRefusesARangeWithAFirstSeed) {
  const std::string scenario = Write("racy.json", kSometimesFailing);
  const std::set<uint64_t> failing = SeedsRunFails(scenario);
  ASSERT_FALSE(failing.empty());
  const std::string range = fmt::format("{}..{}", kFirstSeed, kFirstSeed + kSeeds - 1);
  const Finished ranged = RunElectsim({"sweep", scenario, "--seeds", range, "--repro-dir", ""});
  EXPECT_EQ(ranged.exit_status, 1) << ranged.out << ranged.err;
  EXPECT_EQ(SeedsSweepNames(ranged.out), failing) << ranged.out;
  EXPECT_NE(ranged.out.find(fmt::format("{} of {} seeds ({})", kSeeds, kSeeds, range)), std::string::npos)
      << ranged.out;
  // Two first seeds would have to agree: refused before anything runs.
  const fs::path summary = OutDir() / "summary.json";
  const Finished both = RunElectsim({"sweep", scenario, "--seeds", range, "--first-seed", std::to_string(kFirstSeed),
                                     "--summary", summary.string(), "--repro-dir", ""});
  EXPECT_EQ(both.exit_status, 2) << both.out << both.err;
  EXPECT_NE(both.err.find("--first-seed: --seeds " + range + " names its own first seed"), std::string::npos)
      << both.err;
  EXPECT_FALSE(fs::exists(summary));
  // fuzz counts from seed 1, as its default range does.
  const Finished counted = RunElectsim({"fuzz", "--algorithm", "raft", "--seeds", "3", "--repro-dir", ""});
  EXPECT_NE(counted.out.find("3 of 3 seeds (1..3)"), std::string::npos) << counted.out << counted.err;
  const Finished bad = RunElectsim({"fuzz", "--algorithm", "raft", "--seeds", "3s"});
  EXPECT_EQ(bad.exit_status, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--seeds: expected a number of seeds (counted from seed 1) or a range A..B"),
            std::string::npos)
      << bad.err;
}

TEST_F(CliOutputsTest, Sweep_NamesEveryFailingSeedAndWritesCappedReplayableRepros) {
  const std::string scenario = Write("racy.json", kSometimesFailing);
  const fs::path out = OutDir();
  const Finished sweep = RunElectsim({"sweep", scenario, "--first-seed", std::to_string(kFirstSeed), "--seeds",
                                      std::to_string(kSeeds), "--repro-dir", out.string(), "--max-repros", "1"});
  EXPECT_EQ(sweep.exit_status, 1) << sweep.out << sweep.err;
  const std::set<uint64_t> named = SeedsSweepNames(sweep.out);
  ASSERT_GE(named.size(), 2u) << sweep.out;
  // One repro, for the first failing seed; the cap is reported.
  const std::string repro = fmt::format("racy-seed{}.repro.json", *named.begin());
  EXPECT_EQ(Names(out), std::vector<std::string>{repro});
  EXPECT_NE(sweep.out.find(fmt::format("repro files written for the first 1 of {} failing seeds", named.size())),
            std::string::npos)
      << sweep.out;
  // Written by a sweep, replayed by replay: the same trace, byte for byte.
  const Finished replay = RunElectsim({"replay", (out / repro).string()});
  EXPECT_EQ(replay.exit_status, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("trace hash matches the repro"), std::string::npos) << replay.out;
}

TEST_F(CliOutputsTest, SweepOfBadInput_ExitsTwoNamingTheFile) {
  // Valid key by key, but the storm fills the simulator's event cap (a
  // small one, soon filled).
  const std::string storm = Write("storm.json", R"({"nodes": 3, "duration": "2s", "pending_events_memory_mib": 10,
      "algorithm": {"name": "bully",
      "options": {"heartbeat_interval": "1ns", "heartbeat_timeout": "2ns", "answer_timeout": "1ns",
                  "coordinator_timeout": "2ns"}}})");
  const Finished sweep = RunElectsim({"sweep", storm, "--seeds", "3", "--jobs", "2", "--repro-dir", OutDir()});
  EXPECT_EQ(sweep.exit_status, 2) << sweep.out << sweep.err;
  EXPECT_NE(sweep.err.find(storm + " seed 1: the simulation stopped: "), std::string::npos) << sweep.err;
  EXPECT_EQ(sweep.out.find("INTERRUPTED"), std::string::npos) << sweep.out;
  EXPECT_TRUE(Names(OutDir()).empty());
}

// The cap on pending events comes from a memory budget a scenario can
// raise, and the message that stops a storm says so.
TEST_F(CliOutputsTest, Storm_StopsAtItsMemoryBudgetWhichTheScenarioCanRaise) {
  auto storm = [&](int mib) {
    return Write(fmt::format("storm{}.json", mib),
                 fmt::format(R"({{"nodes": 3, "duration": "2s", "pending_events_memory_mib": {},
                     "algorithm": {{"name": "bully", "options": {{"heartbeat_interval": "1ns",
                     "heartbeat_timeout": "2ns", "answer_timeout": "1ns", "coordinator_timeout": "2ns"}}}}}})",
                             mib));
  };
  const Finished small = RunElectsim({"run", storm(10), "--repro-dir", ""});
  EXPECT_EQ(small.exit_status, 2) << small.err;
  EXPECT_NE(small.err.find("the limit is 65536)"), std::string::npos) << small.err;  // 10 MiB at 160 bytes an event
  EXPECT_NE(small.err.find("\"pending_events_memory_mib\" (10 MiB now, at 160 bytes an event) raises the limit"),
            std::string::npos)
      << small.err;
  const Finished larger = RunElectsim({"run", storm(20), "--repro-dir", ""});
  EXPECT_NE(larger.err.find("the limit is 131072)"), std::string::npos) << larger.err;
  const Finished refused = RunElectsim({"run", storm(0), "--repro-dir", ""});
  EXPECT_EQ(refused.exit_status, 2);
  EXPECT_NE(refused.err.find("at /pending_events_memory_mib"), std::string::npos) << refused.err;
}

TEST_F(CliOutputsTest, OutputCollisions_AreRefusedBeforeAnythingRuns) {
  // A scenario whose repro, for seed 7, would be the scenario file itself.
  nlohmann::json self = nlohmann::json::parse(kSometimesFailing);
  self["name"] = "demo";
  const std::string scenario = Write("demo-seed7.repro.json", self.dump());
  const std::string scenario_text = ReadWholeFile(scenario);
  const std::string healthy = ShippedScenario(kHealthy);
  const std::string repro_of_seed1 = (dir_ / "racy-seed1.repro.json").string();
  const std::string racy = Write("racy.json", kSometimesFailing);
  const std::string out_file = (dir_ / "out.txt").string();
  const std::string err_file = (dir_ / "err.txt").string();
  struct Case {
    std::vector<std::string> args;
    SpawnOptions spawn;
    std::string message;  // on standard error, wherever that goes
  };
  const std::vector<Case> cases = {
      {{"run", scenario, "--seed", "7", "--repro-dir", dir_.string()}, {}, "writes for seed 7 of demo would replace"},
      {{"sweep", scenario, "--first-seed", "5", "--seeds", "5", "--repro-dir", dir_.string()},
       {},
       "writes for seed 7 of demo would replace"},
      {{"run", racy, "--seed", "1", "--repro-dir", dir_.string(), "--trace", repro_of_seed1},
       {},
       "is where --repro-dir would write a file for seed 1 of racy"},
      {{"run", healthy, "--trace", "/dev/stdout"}, {.stdout_file = out_file}, "is the file standard output goes to"},
      {{"run", healthy, "--trace", "/dev/stderr"}, {.stderr_file = err_file}, "is the file standard error goes to"},
      {{"sweep", racy, racy, "--seeds", "1", "--repro-dir", dir_.string()}, {}, "two runs named racy"},
      {{"run", healthy, "--trace", ""}, {}, "--trace: expected a file path, or - for standard output"},
  };
  for (const Case& c : cases) {
    const std::vector<std::string> before = Names(dir_);
    const Finished finished = RunElectsim(c.args, c.spawn);
    const std::string shown = c.spawn.stderr_file ? ReadWholeFile(*c.spawn.stderr_file) : finished.err;
    const std::string context = fmt::format("{}\n{}{}", fmt::join(c.args, " "), finished.out, finished.err);
    EXPECT_EQ(finished.exit_status, 2) << context;
    EXPECT_NE(shown.find(c.message), std::string::npos) << context;
    EXPECT_EQ(finished.out.find("trace-hash"), std::string::npos) << "ran anyway: " << context;
    // Nothing written: no new file but the one a redirection made, still
    // the file it was (empty, or holding just the message).
    std::vector<std::string> after = Names(dir_);
    if (c.spawn.stdout_file) {
      EXPECT_EQ(ReadWholeFile(*c.spawn.stdout_file), "") << context;
    }
    for (const std::optional<std::string>& redirected : {c.spawn.stdout_file, c.spawn.stderr_file}) {
      if (!redirected) continue;
      std::erase(after, fs::path(*redirected).filename().string());
      fs::remove(*redirected);
    }
    EXPECT_EQ(after, before) << context;
  }
  EXPECT_EQ(ReadWholeFile(scenario), scenario_text);
}

TEST_F(CliOutputsTest, TraceDash_StreamsExactlyTheTraceToStdoutAndTheSummaryToStderr) {
  const std::string trace = (OutDir() / "t.jsonl").string();
  const Finished to_file = RunElectsim({"run", ShippedScenario(kHealthy), "--trace", trace});
  ASSERT_EQ(to_file.exit_status, 0) << to_file.err;
  const Finished streamed = RunElectsim({"run", ShippedScenario(kHealthy), "--trace", "-"});
  EXPECT_EQ(streamed.exit_status, 0) << streamed.err;
  EXPECT_EQ(streamed.out, ReadWholeFile(trace));
  EXPECT_GT(streamed.out.size(), 10000u);
  EXPECT_NE(streamed.err.find("trace-hash: 0x"), std::string::npos) << streamed.err;
  EXPECT_NE(streamed.err.find("expectations: met"), std::string::npos) << streamed.err;

  const std::string repro = electsim_test::CommittedRepro("raft-bug-vote-twice-seed1.repro.json");
  const Finished replay = RunElectsim({"replay", repro, "--trace", "-"});
  EXPECT_EQ(replay.exit_status, 0) << replay.err;
  EXPECT_EQ(replay.out.find("replay:"), std::string::npos);
  EXPECT_NE(replay.err.find("replay: trace hash matches the repro"), std::string::npos) << replay.err;
  EXPECT_TRUE(nlohmann::json::accept(replay.out.substr(0, replay.out.find('\n'))));
}

TEST_F(CliOutputsTest, TraceNamedUpToNameMax_IsWritten) {
  const std::string longest = std::string(NAME_MAX - 6, 't') + ".jsonl";
  const Finished finished = RunElectsim({"run", ShippedScenario(kHealthy), "--trace", (OutDir() / longest).string()});
  EXPECT_EQ(finished.exit_status, 0) << finished.err;
  EXPECT_EQ(Names(OutDir()), std::vector<std::string>{longest});
  EXPECT_GT(fs::file_size(OutDir() / longest), 10000u);

  const Finished too_long =
      RunElectsim({"run", ShippedScenario(kHealthy), "--trace", (OutDir() / ("x" + longest)).string()});
  EXPECT_EQ(too_long.exit_status, 2) << too_long.err;
  EXPECT_NE(too_long.err.find("the file name is longer than"), std::string::npos) << too_long.err;
}

// Whether a hidden temporary file (".NAME.XXXXXX.tmp") with content is in `dir`.
bool TemporaryFileWritten(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::error_code ec;
    if (entry.path().filename().string().front() == '.' && fs::file_size(entry.path(), ec) > 0) return true;
  }
  return false;
}

constexpr int kTerminatingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

TEST_F(CliOutputsTest, TerminatingSignals_LeaveNothingBehindInRunAndReplay) {
  const std::string endless = Write("endless.json", kEndless);
  nlohmann::json repro = {{"electsim_repro", 1},
                          {"scenario_file", endless},
                          {"seed", 1},
                          {"trace_hash", "0x0000000000000000"},
                          {"trace_records", 0},
                          {"violations", nlohmann::json::array()},
                          {"scenario", nlohmann::json::parse(kEndless)}};
  const std::string endless_repro = Write("endless.repro.json", repro.dump());
  const fs::path out = OutDir();
  const std::string trace = (out / "t.jsonl").string();
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"run", endless, "--trace", trace, "--repro-dir", out.string()},
        std::vector<std::string>{"replay", endless_repro, "--trace", trace}}) {
    for (int signal_number : kTerminatingSignals) {
      const std::string context = fmt::format("{} {}", command[0], strsignal(signal_number));
      ElectsimProcess process(command);
      // Synchronised on the trace being written, not on a clock.
      while (!TemporaryFileWritten(out)) {
        ASSERT_FALSE(process.Exited()) << context << ": ended before it wrote any trace: " << process.err();
        std::this_thread::yield();
      }
      ASSERT_EQ(kill(process.pid(), signal_number), 0);
      EXPECT_EQ(process.Wait(), 128 + signal_number) << context << process.err();
      EXPECT_TRUE(Names(out).empty()) << context << ": left " << fmt::format("{}", fmt::join(Names(out), ", "));
    }
  }
}

TEST_F(CliOutputsTest, TerminatingSignals_StopSweepKeepingWhatFinishedAndLeavingNothingHalfWritten) {
  const std::string racy = Write("racy.json", kSometimesFailing);
  const std::string endless = Write("endless.json", kEndless);
  const fs::path out = OutDir();
  for (int signal_number : kTerminatingSignals) {
    const std::string context = strsignal(signal_number);
    fs::remove_all(out);
    fs::create_directories(out);
    ElectsimProcess process({"sweep", racy, endless, "--first-seed", std::to_string(kFirstSeed), "--seeds",
                             std::to_string(kSeeds), "--jobs", "2", "--repro-dir", out.string()});
    // racy's summary line: its repros are written and endless is running.
    ASSERT_TRUE(process.WaitForOutput(fmt::format("racy: {0} of {0} seeds", kSeeds))) << context << process.err();
    ASSERT_EQ(kill(process.pid(), signal_number), 0);
    EXPECT_EQ(process.Wait(), 128 + signal_number) << context << process.err();
    EXPECT_NE(process.out().find("the results cover the seeds that finished"), std::string::npos)
        << context << process.out();
    // What finished is kept, whole: one repro per failing seed of racy, and nothing else.
    const std::set<uint64_t> failing = SeedsSweepNames(process.out());
    ASSERT_FALSE(failing.empty()) << process.out();
    std::vector<std::string> expected;
    for (uint64_t seed : failing) expected.push_back(fmt::format("racy-seed{}.repro.json", seed));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(Names(out), expected) << context;
    for (const std::string& name : Names(out)) {
      EXPECT_TRUE(nlohmann::json::accept(ReadWholeFile(out / name))) << context << " " << name;
    }
  }
}

// check-guarantees stopped by Ctrl-C says so, and a case it cut short says
// how many of its seeds the line counts, under a header naming them all.
TEST_F(CliOutputsTest, TerminatingSignals_StopCheckGuaranteesSayingWhatRan) {
  ElectsimProcess process({"check-guarantees", "--algorithms", "raft", "--seeds", "20", "--jobs", "1"});
  // The first lines come once a batch of cases is done; later cases are running.
  ASSERT_TRUE(process.WaitForOutput("raft, defaults (20 seeds each")) << process.err();
  ASSERT_EQ(kill(process.pid(), SIGINT), 0);
  EXPECT_EQ(process.Wait(), 128 + SIGINT) << process.err();
  EXPECT_NE(process.out().find("interrupted by SIGINT: "), std::string::npos) << process.out();
  EXPECT_NE(process.out().find(" cases ran; the table stops there\n"), std::string::npos) << process.out();
}

// A folder that takes no new file is bad usage before any run, whoever the
// user is: permission bits do not stop root, /proc stops everyone.
TEST_F(CliOutputsTest, UnwritableFolder_IsRefusedBeforeAnyRunAndNothingIsWritten) {
  const fs::path out = OutDir();
  const Finished refused =
      RunElectsim({"sweep", ShippedScenario(kHealthy), "--seeds", "2", "--jobs", "1", "--summary",
                   "/proc/electsim-summary.json", "--junit", (out / "j.xml").string(), "--repro-dir", out.string()});
  EXPECT_EQ(refused.exit_status, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--summary /proc/electsim-summary.json: folder /proc is not writable"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out.find("seeds/s"), std::string::npos) << "ran anyway: " << refused.out;
  EXPECT_TRUE(Names(out).empty());
}

TEST_F(CliOutputsTest, WriteFailure_StillReportsTheVerdictAndExitsAsDocumented) {
  // A file size limit makes writes fail with EFBIG, as a full disk makes them fail with ENOSPC.
  const SpawnOptions small_disk{.file_size_limit_bytes = 256};
  const fs::path out = OutDir();
  const std::string trace = (out / "t.jsonl").string();

  // The run passed, an output could not be written: 3.
  const Finished passed = RunElectsim({"run", ShippedScenario(kHealthy), "--trace", trace}, small_disk);
  EXPECT_EQ(passed.exit_status, 3) << passed.out << passed.err;
  EXPECT_NE(passed.out.find("expectations: met"), std::string::npos) << passed.out;
  EXPECT_NE(passed.err.find(trace + ": write failed: "), std::string::npos) << passed.err;
  EXPECT_TRUE(Names(out).empty());

  // The run failed too: 1 wins, and the violation is still reported.
  nlohmann::json unexpected = nlohmann::json::parse(kSometimesFailing);
  unexpected.erase("expect");
  const std::string failing = Write("unexpected.json", unexpected.dump());
  const Finished failed = RunElectsim({"run", failing, "--trace", trace, "--repro-dir", out.string()}, small_disk);
  EXPECT_EQ(failed.exit_status, 1) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("unexpected single_vote violation"), std::string::npos) << failed.out;
  EXPECT_NE(failed.err.find("racy-seed1.repro.json: write failed: "), std::string::npos) << failed.err;
  EXPECT_TRUE(Names(out).empty());

  // The same in a sweep: every failing seed named, no repro half-written.
  const Finished sweep =
      RunElectsim({"sweep", Write("racy.json", kSometimesFailing), "--first-seed", std::to_string(kFirstSeed),
                   "--seeds", std::to_string(kSeeds), "--repro-dir", out.string()},
                  small_disk);
  EXPECT_EQ(sweep.exit_status, 1) << sweep.out << sweep.err;
  EXPECT_GE(SeedsSweepNames(sweep.out).size(), 2u) << sweep.out;
  EXPECT_NE(sweep.err.find(": write failed: "), std::string::npos) << sweep.err;
  EXPECT_TRUE(Names(out).empty());

  // The last line counts the repro files written, not those tried.
  const Finished fuzz =
      RunElectsim({"fuzz", "--algorithm", "raft", "--option", "bug=vote_twice", "--guarantees-of", "reference",
                   "--seeds", "1..30", "--shrink-runs", "0", "--max-repros", "2", "--repro-dir", out.string()},
                  small_disk);
  EXPECT_EQ(fuzz.exit_status, 1) << fuzz.out << fuzz.err;
  EXPECT_NE(fuzz.out.find("repro files written for 0 of the first 2 of "), std::string::npos) << fuzz.out;
  EXPECT_EQ(fuzz.out.find("repro files written for the first"), std::string::npos) << fuzz.out;
  EXPECT_TRUE(Names(out).empty());

  // A merge as well: its summary could not be written (it once died of
  // SIGXFSZ, leaving its temporary file).
  std::vector<std::string> merge = {"merge"};
  for (const char* shard : {"1/2", "2/2"}) {
    const std::string summary = (dir_ / (std::string("shard") + shard[0] + ".json")).string();
    const Finished ran = RunElectsim({"sweep", ShippedScenario(kHealthy), "--seeds", "4", "--shard", shard,
                                      "--repro-dir", "", "--summary", summary});
    ASSERT_EQ(ran.exit_status, 0) << ran.out << ran.err;
    merge.push_back(summary);
  }
  merge.insert(merge.end(), {"--summary", (out / "merged.json").string()});
  const Finished merged = RunElectsim(merge, small_disk);
  EXPECT_EQ(merged.exit_status, 3) << merged.out << merged.err;
  EXPECT_NE(merged.err.find("merged.json: write failed: "), std::string::npos) << merged.err;
  EXPECT_TRUE(Names(out).empty());
}

TEST_F(CliOutputsTest, OutOfMemory_IsAMessageAndExitThreeLeavingNoTemporaryFile) {
#if defined(ELECTSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than any limit this test could set";
#else
  // A message storm grows the event queue until the address-space limit
  // makes an allocation fail in the middle of the run.
  const std::string storm = Write("storm.json", R"({"nodes": 3, "duration": "2s", "algorithm": {"name": "bully",
      "options": {"heartbeat_interval": "1ns", "heartbeat_timeout": "2ns", "answer_timeout": "1ns",
                  "coordinator_timeout": "2ns"}}})");
  const fs::path out = OutDir();
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"run", storm, "--trace", (out / "t.jsonl").string()},
        std::vector<std::string>{"sweep", storm, "--seeds", "2", "--jobs", "1", "--repro-dir", out.string()}}) {
    const Finished finished = RunElectsim(command, {.address_space_limit_bytes = rlim_t{100} << 20});
    EXPECT_EQ(finished.exit_status, 3) << command[0] << finished.out << finished.err;
    EXPECT_NE(finished.err.find("out of memory"), std::string::npos) << finished.err;
    EXPECT_TRUE(Names(out).empty()) << command[0];
  }
#endif
}

TEST_F(CliOutputsTest, Version_NamesTheVersionAndTheSourceRevision) {
  const Finished version = RunElectsim({"--version"});
  EXPECT_EQ(version.exit_status, 0) << version.err;
  EXPECT_TRUE(std::regex_match(version.out, std::regex(R"(electsim \d+\.\d+\.\d+ \(revision [^\n]+\)\n)")))
      << version.out;
}

TEST_F(CliOutputsTest, UnknownOrMissingCommand_ListsTheCommands) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frobnicate"}, std::vector<std::string>{}}) {
    const Finished finished = RunElectsim(args);
    EXPECT_EQ(finished.exit_status, 2) << finished.err;
    EXPECT_NE(finished.err.find(args.empty() ? "no command given" : "unknown command \"frobnicate\""),
              std::string::npos)
        << finished.err;
    for (const char* command : {"run", "replay", "list", "sweep"}) {
      EXPECT_NE(finished.err.find(fmt::format("\n  {} ", command)), std::string::npos) << command << finished.err;
    }
  }
}

}  // namespace
}  // namespace electsim_test
