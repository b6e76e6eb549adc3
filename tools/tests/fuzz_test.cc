// electsim fuzz and shrink: the generator's scenarios load and reproduce,
// the judge holds runs to what is declared for the faults in play, and
// summaries do not depend on --jobs, on sharding or on the engine that runs
// the shards.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/engine/option_swarm.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/engine/scenario_generator.h"
#include "tools/electsim/language/scenario.h"
#include "tools/electsim/language/schema.h"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"

namespace electsim {
namespace {

namespace fs = std::filesystem;
using electsim_test::RunCombined;
using nlohmann::json;

const algorithms::Algorithm& Named(const std::string& name) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    if (algorithm->name() == name) return *algorithm;
  }
  ADD_FAILURE() << "no algorithm " << name;
  return *algorithms::AllAlgorithms().front();
}

json Generate(const std::string& algorithm_name, uint64_t seed, const json& options = json::object()) {
  const algorithms::Algorithm& algorithm = Named(algorithm_name);
  auto probe = ParseScenarioJson(
      {{"nodes", 3}, {"duration", "1s"}, {"algorithm", {{"name", algorithm_name}, {"options", options}}}}, "probe");
  EXPECT_TRUE(probe.ok()) << probe.status();
  return GenerateScenario(algorithm, options, probe->options, seed, GeneratorSettings{});
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("electsim-fuzz-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

Scenario Load(const json& document);

// Fuzz reads its own documents without the schema check
// (ParseGeneratedScenarioJson): every algorithm's, with the swarm's drawn
// options, must satisfy the schema all the same, and read the same either way.
TEST(ScenarioGenerator_Schema, EveryAlgorithmsDocumentsWithDrawnOptionsSatisfyIt) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    SCOPED_TRACE(std::string(algorithm->name()));
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      auto draw = DrawOptions(*algorithm, json::object(), seed, 3);
      ASSERT_TRUE(draw.ok()) << draw.status();
      const json document = GenerateScenario(*algorithm, draw->options, draw->values, seed, GeneratorSettings{});
      const absl::Status schema = CheckAgainstSchema(SchemaKind::kScenario, document, "generated");
      EXPECT_TRUE(schema.ok()) << "seed " << seed << ": " << schema << "\n" << document.dump(2);
      auto checked = ParseScenarioJson(document, "generated");
      auto unchecked = ParseGeneratedScenarioJson(document, "generated");
      ASSERT_TRUE(checked.ok() && unchecked.ok()) << "seed " << seed;
      EXPECT_EQ(checked->options.Describe(), unchecked->options.Describe()) << "seed " << seed;
      EXPECT_EQ(checked->document, unchecked->document) << "seed " << seed;
    }
  }
}

TEST(ScenarioGenerator_Seeds, SameSeedSameScenarioOtherSeedAnother) {
  EXPECT_EQ(Generate("raft", 7), Generate("raft", 7));
  EXPECT_NE(Generate("raft", 7), Generate("raft", 8));
}

TEST(ScenarioGenerator_Seeds, EveryScenarioLoadsAndSwarmsOverEveryKind) {
  for (const std::string name : {"raft", "lease", "bully", "ring"}) {
    std::map<std::string, int> kinds_seen;
    int every_kind = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      const json document = Generate(name, seed);
      auto scenario = ParseScenarioJson(document, "generated");
      ASSERT_TRUE(scenario.ok()) << name << " seed " << seed << ": " << scenario.status() << "\n" << document.dump(2);
      EXPECT_GE(scenario->nodes, 3u);
      EXPECT_LE(scenario->nodes, 7u);
      const algorithms::FaultKinds in_play = FaultKindsInPlay(*scenario);
      for (algorithms::FaultKind kind : algorithms::AllFaultKinds()) {
        if (in_play.Has(kind)) ++kinds_seen[std::string(algorithms::FaultKindName(kind))];
      }
      if (in_play == algorithms::FaultKinds::All()) ++every_kind;
    }
    // Each kind is on about half the time: every kind at once is rare (1 in 1,024).
    EXPECT_LE(every_kind, 2) << name << ": no swarm";
    // Every kind turns up, and none in every seed.
    EXPECT_EQ(kinds_seen.size(), static_cast<size_t>(algorithms::kFaultKindCount)) << name;
    for (const auto& [kind, seeds] : kinds_seen) EXPECT_LT(seeds, 200) << name << " " << kind;
  }
}

TEST(ScenarioGenerator_Kinds, FaultsSettingDrawsOnlyFromTheKindsGiven) {
  using algorithms::FaultKind;
  const algorithms::FaultKinds allowed{FaultKind::kLoss, FaultKind::kCrash};
  GeneratorSettings settings;
  settings.fault_kinds = allowed;
  auto probe = ParseScenarioJson({{"nodes", 3}, {"duration", "1s"}, {"algorithm", "raft"}}, "probe");
  ASSERT_TRUE(probe.ok()) << probe.status();
  algorithms::FaultKinds seen;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const json document = GenerateScenario(Named("raft"), json::object(), probe->options, seed, settings);
    const algorithms::FaultKinds in_play = FaultKindsInPlay(Load(document));
    EXPECT_TRUE(allowed.Covers(in_play)) << "seed " << seed << ":\n" << document.dump(2);
    seen = seen.With(in_play);
  }
  EXPECT_EQ(seen, allowed);
  EXPECT_EQ(ParseFaultKindList("loss,crash"), allowed);
  EXPECT_EQ(FaultKindList(allowed), "loss,crash");
  for (const char* bad : {"", "loss,", "loss,,crash", "lost"}) EXPECT_EQ(ParseFaultKindList(bad), std::nullopt) << bad;
}

// The mix lease deadlines fear: the holder's clock stepped at the instant a
// one-way cut between it and the store begins; only where there is a store.
int LeaseMixes(const std::string& algorithm) {
  int mixes = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const json document = Generate(algorithm, seed);
    for (const json& cut : document["faults"]) {
      if (!cut.contains("cut")) continue;
      const json& ends = cut["cut"];
      if (ends["from"] != "store" && ends["to"] != "store") continue;
      EXPECT_TRUE(ends["from"] == "leader" || ends["to"] == "leader") << cut;
      bool stepped = false;
      for (const json& step : document["faults"]) {
        stepped |= step.contains("clock") && step["clock"].contains("shift") && step["clock"]["node"] == "leader" &&
                   step["at"] == cut["at"];
      }
      EXPECT_TRUE(stepped) << "seed " << seed << ":\n" << document.dump(2);
      ++mixes;
    }
  }
  return mixes;
}

TEST(ScenarioGenerator_LeaseMix, AClockStepWithACutFromOrToTheStore) {
  EXPECT_GT(LeaseMixes("lease"), 3);
  EXPECT_EQ(LeaseMixes("raft"), 0);
}

// Leader chains: a link for each next leader, each cut off as it takes
// office on seeds that drew cuts or partitions; with a log, the last link
// waits for a commit. And some cuts and isolations wait for a campaign,
// some of them a crashed node's, after its restart.
struct ChainCounts {
  int next_leader_crashes = 0, cut_off_at_write = 0, at_commit = 0, at_campaign = 0, cut_off_at_restart = 0;
};
ChainCounts Chains(const std::string& name, const std::string& kinds) {
  ChainCounts counts;
  GeneratorSettings settings;
  settings.fault_kinds = *ParseFaultKindList(kinds);
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const json document = GenerateScenario(
        Named(name), json::object(),
        ParseScenarioJson({{"nodes", 3}, {"duration", "1s"}, {"algorithm", name}}, "probe")->options, seed, settings);
    const json& faults = document["faults"];
    for (size_t i = 0; i + 1 < faults.size(); ++i) {
      // An isolation at its campaign, then the crash of the same node at once.
      const json &step = faults[i], &next = faults[i + 1];
      if (step.value("during", "") == "campaign" && step.contains("isolate") && next.contains("crash") &&
          next["crash"] == step["isolate"] && next["at"] == step["at"]) {
        ++counts.cut_off_at_restart;
      }
    }
    for (const json& step : faults) {
      const std::string during = step.value("during", "");
      const bool next = step.contains("crash") && step["crash"].is_object();
      if (next) ++counts.next_leader_crashes;
      if (next && during == "commit") ++counts.at_commit;
      const json* actor = step.contains("isolate") ? &step["isolate"]
                          : step.contains("cut")   ? &step["cut"]["from"]
                                                   : nullptr;
      if (actor != nullptr && actor->is_object() && during == "write") ++counts.cut_off_at_write;
      if (actor != nullptr && during == "campaign") ++counts.at_campaign;
    }
  }
  return counts;
}

TEST(ScenarioGenerator_Chains, NextLeadersCutOffAsTheyTakeOfficeAndWithALogACommit) {
  const ChainCounts raft = Chains("raft", "crash,partition,one_way_cut");
  EXPECT_GT(raft.next_leader_crashes, 30);
  EXPECT_GT(raft.cut_off_at_write, 30);
  EXPECT_GT(raft.at_commit, 10);
  EXPECT_GT(raft.at_campaign, 10);
  EXPECT_GT(raft.cut_off_at_restart, 5);
  const ChainCounts bully = Chains("bully", "crash,partition,one_way_cut");
  EXPECT_GT(bully.next_leader_crashes, 30);
  EXPECT_EQ(bully.at_commit, 0);  // no log
  // Without cuts or partitions drawn, a chain cuts nobody off.
  const ChainCounts crashes_only = Chains("raft", "crash");
  EXPECT_GT(crashes_only.next_leader_crashes, 30);
  EXPECT_EQ(crashes_only.cut_off_at_write, 0);
  EXPECT_EQ(crashes_only.at_campaign, 0);
  EXPECT_EQ(crashes_only.cut_off_at_restart, 0);
}

TEST(ScenarioGenerator_Drift, LeaseHolderNeverSlowerThanItsMarginAllows) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const json scenario = Generate("lease", seed, {{"safety_margin", 0.9}});  // outlives the loop over its steps
    for (const json& step : scenario["faults"]) {
      if (step.contains("clock") && step["clock"].contains("drift_ppm")) {
        EXPECT_GE(step["clock"]["drift_ppm"].get<int64_t>(), -100000) << step.dump();
        EXPECT_NE(step["clock"]["node"], "store");
      }
    }
  }
}

Scenario Load(const json& document) {
  auto scenario = ParseScenarioJson(document, "test");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return *scenario;
}

json RaftWith(json faults, json network = {{"latency", "1ms"}}) {
  return {{"nodes", 5},         {"duration", "10s"}, {"algorithm", "raft"},
          {"network", network}, {"faults", faults},  {"resource", {{"fencing", false}}}};
}

TEST(FuzzJudge_Kinds, EachStepAndWeatherIsItsKind) {
  using algorithms::FaultKind;
  using algorithms::FaultKinds;
  EXPECT_EQ(FaultKindsInPlay(Load(RaftWith(json::array()))), FaultKinds());
  EXPECT_EQ(FaultKindsInPlay(Load(RaftWith(json::array(), {{"drop", 0.1}, {"duplicate", 0.1}}))),
            (FaultKinds{FaultKind::kLoss, FaultKind::kDuplication}));
  EXPECT_EQ(
      FaultKindsInPlay(Load(RaftWith({{{"at", "1s"}, {"network", {{"latency", {{"uniform", {"1ms", "90ms"}}}}}}}}))),
      FaultKinds{FaultKind::kLatency});
  EXPECT_EQ(FaultKindsInPlay(Load(RaftWith({{{"at", "1s"}, {"crash", "leader"}, {"lose_unsynced", true}},
                                            {{"at", "2s"}, {"isolate", 1}, {"for", "1s"}},
                                            {{"at", "2s"}, {"clock", {{"node", 2}, {"shift", "-1s"}}}}}))),
            (FaultKinds{FaultKind::kPowerLoss, FaultKind::kPartition, FaultKind::kClockStep}));
}

// What the network still does once every step is over: the weather, or
// the last change to it; liveness is judged only where that is none.
TEST(FuzzJudge_Kinds, TheNetworkOnceTheFaultsAreOverIsTheLastChangeLeftInPlace) {
  using algorithms::FaultKind;
  using algorithms::FaultKinds;
  const json slow = {{"latency", {{"uniform", {"1ms", "400ms"}}}}};
  const json lossy_then_calm = {{{"at", "1s"}, {"network", {{"drop", 0.3}}}},
                                {{"at", "3s"}, {"network", {{"drop", 0.0}}}}};
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith(json::array()))), FaultKinds());
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith(json::array(), slow))), FaultKinds{FaultKind::kLatency});
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith(lossy_then_calm))), FaultKinds());
  // A step's network is the scenario's with the step's keys: calming loss
  // leaves a slow base network slow.
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith(lossy_then_calm, slow))), FaultKinds{FaultKind::kLatency});
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith({{{"at", "1s"}, {"network", {{"drop", 0.3}}}}}))),
            FaultKinds{FaultKind::kLoss});
  const json one_link = {{"at", "1s"}, {"link", {{"from", 0}, {"to", 1}, {"duplicate", 0.5}}}};
  EXPECT_EQ(NetworkFaultsOnceOver(Load(RaftWith(json::array({one_link})))), FaultKinds{FaultKind::kDuplication});
  // Setting every link again replaces the one link's weather.
  EXPECT_EQ(
      NetworkFaultsOnceOver(Load(RaftWith(json::array({one_link, {{"at", "2s"}, {"network", {{"drop", 0.0}}}}})))),
      FaultKinds());
}

// The lease absorbs a holder clock slow by 1 - safety_margin: drift within
// that is its clock_drift, drift past it (or of the store's clock) a pause.
TEST(FuzzJudge_Kinds, DriftPastAnAlgorithmsBoundIsAPause) {
  using algorithms::FaultKind;
  using algorithms::FaultKinds;
  auto drift = [](const std::string& algorithm, const json& node, int64_t ppm) {
    return FaultKindsInPlay(Load({{"nodes", 3},
                                  {"duration", "10s"},
                                  {"algorithm", algorithm},
                                  {"faults", {{{"at", "1s"}, {"clock", {{"node", node}, {"drift_ppm", ppm}}}}}}}));
  };
  EXPECT_EQ(drift("lease", 1, -250000), FaultKinds{FaultKind::kClockDrift});
  EXPECT_EQ(drift("lease", "leader", 300000), FaultKinds{FaultKind::kClockDrift});
  EXPECT_EQ(drift("lease", 1, -250001), FaultKinds{FaultKind::kPause});
  EXPECT_EQ(drift("lease", "store", 1000), FaultKinds{FaultKind::kPause});
  EXPECT_EQ(drift("raft", 1, -450000), FaultKinds{FaultKind::kClockDrift});  // no bound declared: any drift
}

TEST(FuzzJudge_Invariants, OnlyWhatIsDeclaredForTheKindsInPlay) {
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  const Scenario calm = Load(RaftWith(json::array()));
  EXPECT_TRUE(has(JudgedInvariants(calm, GuaranteesOf::kOptions), "single_leader"));
  // Declared against a resource that checks no token; a fencing one keeps stale_token.
  json fenced = RaftWith({{{"at", "1s"}, {"isolate", "leader"}, {"for", "1s"}}});
  fenced["resource"]["fencing"] = true;
  EXPECT_TRUE(has(JudgedInvariants(Load(fenced), GuaranteesOf::kOptions), "stale_token"));
  const Scenario partitioned = Load(RaftWith({{{"at", "1s"}, {"isolate", "leader"}, {"for", "1s"}}}));
  EXPECT_FALSE(has(JudgedInvariants(partitioned, GuaranteesOf::kOptions), "single_leader"));
  EXPECT_TRUE(has(JudgedInvariants(partitioned, GuaranteesOf::kOptions), "election_safety"));
  EXPECT_FALSE(has(JudgedInvariants(partitioned, GuaranteesOf::kOptions), "stale_token"));
  // A deliberate bug declares nothing; judged by the defaults, everything counts.
  json buggy = RaftWith(json::array());
  buggy["algorithm"] = {{"name", "raft"}, {"options", {{"bug", "vote_twice"}}}};
  EXPECT_TRUE(JudgedInvariants(Load(buggy), GuaranteesOf::kOptions).empty());
  EXPECT_TRUE(has(JudgedInvariants(Load(buggy), GuaranteesOf::kDefaults), "election_safety"));
  EXPECT_TRUE(has(JudgedInvariants(Load(buggy), GuaranteesOf::kDefaults), "stale_token"));
  // Judged by the reference, a mutant keeps the options it ran but the reference's table.
  EXPECT_EQ(JudgedInvariants(Load(buggy), GuaranteesOf::kReference), JudgedInvariants(calm, GuaranteesOf::kOptions));
}

// Seed 99822 draws a heartbeat of 83 ms against an election timeout of
// 90 ms, and only faults (duplication, clock steps) under which Raft keeps
// disruption: the base latency's jitter alone times a follower out while
// its leader is heard. Like liveness there, that disruption is a finding.
TEST(FuzzCli_Swarm, DisruptionIsAFindingWhereTheDrawnTimingsLeaveNoRoom) {
  const auto run = RunCombined({"fuzz", "--algorithm", "raft", "--seed", "99822"});
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_NE(run.output.find("fault kinds drawn: duplication, clock_step."), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("heartbeat_interval=83ms"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("disruption"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("every declared guarantee kept"), std::string::npos) << run.output;
}

std::string TraceHash(const std::string& output) {
  std::smatch match;
  return std::regex_search(output, match, std::regex("trace-hash: (0x[0-9a-f]+)")) ? match[1].str() : "";
}

// A 1s run judges liveness over 250 ms, less than Raft's 300 ms timeout:
// seed 55 finds no leader in it, which is a finding, not a broken promise
// (it was judged broken before). Runs of the default 10-30 s still judge it.
TEST(FuzzCli_Liveness, JudgedOnlyWhereTheWindowHoldsTwoDetectionTimeouts) {
  const auto short_run = RunCombined({"fuzz", "--algorithm", "raft", "--duration", "1s", "--seed", "55"});
  EXPECT_EQ(short_run.exit_status, 0) << short_run.output;
  EXPECT_NE(short_run.output.find("liveness at 0.900000s"), std::string::npos) << short_run.output;
  EXPECT_NE(short_run.output.find("every declared guarantee kept"), std::string::npos) << short_run.output;
}

TEST(FuzzCli_EmitScenario, RunAcceptsItAndReproducesTheFuzzedRun) {
  TempDir dir;
  for (uint64_t seed : {3, 11}) {
    const auto emitted = RunCombined({"fuzz", "--algorithm", "raft", "--option", "pre_vote=true", "--no-option-swarm",
                                      "--seed", std::to_string(seed), "--emit-scenario"});
    ASSERT_EQ(emitted.exit_status, 0) << emitted.output;
    const std::string file = dir / ("seed" + std::to_string(seed) + ".json");
    std::ofstream(file) << emitted.output;
    const auto first = RunCombined({"run", file, "--repro-dir", ""});
    const auto second = RunCombined({"run", file, "--repro-dir", ""});
    ASSERT_FALSE(TraceHash(first.output).empty()) << first.output;
    EXPECT_EQ(TraceHash(first.output), TraceHash(second.output));
    // The same run the fuzzer judged: the document it generates in process.
    const Scenario scenario = Load(Generate("raft", seed, {{"pre_vote", true}}));
    auto result = RunScenario(scenario, seed);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(TraceHash(first.output), sim::FormatTraceHash(result->trace_hash));
  }
}

TEST(FuzzCli_Input, BadFlagsAreExit2NamingWhatWasExpected) {
  EXPECT_EQ(RunCombined("fuzz --algorithm nope --seeds 1..2").exit_status, 2);
  const auto bad_option = RunCombined("fuzz --algorithm raft --option bug=nope --seeds 1..2");
  EXPECT_EQ(bad_option.exit_status, 2);
  EXPECT_NE(bad_option.output.find("/algorithm/options/bug"), std::string::npos) << bad_option.output;
  EXPECT_EQ(RunCombined("fuzz --algorithm raft --seeds 5..1").exit_status, 2);
  EXPECT_EQ(RunCombined("fuzz --algorithm raft --shard 3/2").exit_status, 2);
  EXPECT_EQ(RunCombined("fuzz --algorithm raft --time-budget soon").exit_status, 2);
  const auto bad_kind = RunCombined("fuzz --algorithm raft --faults loss,lost --seeds 1..2");
  EXPECT_EQ(bad_kind.exit_status, 2);
  EXPECT_NE(bad_kind.output.find("--faults: expected fault kinds separated by commas, of loss,duplication,"),
            std::string::npos)
      << bad_kind.output;
  // One node passed the check, then stopped at a generated cut between nodes.
  const auto one_node = RunCombined("fuzz --algorithm raft --nodes 1 --seeds 1..20");
  EXPECT_EQ(one_node.exit_status, 2) << one_node.output;
  EXPECT_NE(one_node.output.find("--nodes: expected N or MIN..MAX within [2, "), std::string::npos) << one_node.output;
  // A duration past the longest one says where the bound is (500h is "at least 1s").
  const auto long_run = RunCombined("fuzz --algorithm raft --duration 500h --seeds 1..2");
  EXPECT_EQ(long_run.exit_status, 2) << long_run.output;
  EXPECT_NE(long_run.output.find("--duration: expected D or MIN..MAX, durations from 1s to 1000000s; got \"500h\""),
            std::string::npos)
      << long_run.output;
  const auto long_budget = RunCombined("fuzz --algorithm raft --time-budget 100000h");
  EXPECT_EQ(long_budget.exit_status, 2) << long_budget.output;
  EXPECT_NE(long_budget.output.find("--time-budget: expected a positive duration up to 1000000s"), std::string::npos)
      << long_budget.output;
}

std::string FuzzArgs(const std::string& extra) {
  return "fuzz --algorithm raft --option pre_vote=true --seeds 1..40 --duration 3s..6s --max-repros 0 " + extra;
}

TEST(FuzzCli_Repro, EachReproHasAnHtmlTimelineAndSetChangesEveryScenario) {
  TempDir dir;
  const std::string set = " --set algorithm.options.heartbeat_interval=20ms";
  const auto fuzz = RunCombined(
      "fuzz --algorithm raft --fencing --option bug=vote_twice --guarantees-of defaults "
      "--seeds 2..2 --max-repros 1 --shrink-runs 0 --repro-dir " +
      dir / "" + set);
  ASSERT_EQ(fuzz.exit_status, 1) << fuzz.output;
  const json repro = json::parse(Read(dir / "fuzz-raft-seed2.repro.json"));
  EXPECT_EQ(repro["scenario"]["algorithm"]["options"]["heartbeat_interval"], "20ms") << repro.dump();
  const std::string timeline = Read(dir / "fuzz-raft-seed2.html");
  EXPECT_EQ(timeline.rfind("<!DOCTYPE html>", 0), 0u) << timeline.substr(0, 200);
  EXPECT_NE(fuzz.output.find("fuzz-raft-seed2.html"), std::string::npos) << fuzz.output;
  // The reproduce command carries --set, and a bad --set is bad input.
  EXPECT_NE(fuzz.output.find(set), std::string::npos) << fuzz.output;
  const auto bad = RunCombined("fuzz --algorithm raft --seeds 1..2 --set network.drop=2");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.output.find("--set network.drop=2: fuzz raft seed 1: at /network/drop: expected"), std::string::npos)
      << bad.output;
  // A --set of what a fuzz flag decides would make the labels lie: refused.
  // --fencing decides the resource's fencing, which the summary's identity
  // and the reproduce command name.
  // The faults, the end and the verdict are the generator's and the judge's
  // whole: a --set within them ran what the identity did not name.
  for (const char* owned :
       {"algorithm=bully", "algorithm.name=bully", "nodes=9", "duration=5s", "resource.fencing=false",
        "resource.fencing=true", "'resource={\"fencing\":false}'", "faults=[]", "faults.0.at=1s", "stop.max=5s",
        "'stop={\"when\":\"leader_known_after_last_fault\"}'", "expect.elected=false"}) {
    const auto refused = RunCombined(std::string("fuzz --algorithm raft --seeds 1..2 --set ") + owned);
    EXPECT_EQ(refused.exit_status, 2) << refused.output;
    EXPECT_TRUE(refused.output.find("fuzz sets") != std::string::npos ||
                refused.output.find("fuzz decides") != std::string::npos)
        << refused.output;
    EXPECT_EQ(refused.output.find("seeds/s"), std::string::npos) << "ran anyway: " << refused.output;
  }
  // The resource's other field is no flag's.
  const auto exclusive = RunCombined(
      "fuzz --algorithm raft --fencing --seeds 1..2 --max-repros 0 --set "
      "resource.exclusive_token=true");
  EXPECT_NE(exclusive.exit_status, 2) << exclusive.output;
  EXPECT_NE(exclusive.output.find("seeds/s"), std::string::npos) << exclusive.output;
  // So is a --set of an option --option gives.
  const auto both =
      RunCombined("fuzz --algorithm raft --seeds 1..2 --option bug=vote_twice --set algorithm.options.bug=none");
  EXPECT_EQ(both.exit_status, 2) << both.output;
  EXPECT_NE(both.output.find("fuzz sets algorithm.options.bug with --option bug; expected one or the other"),
            std::string::npos)
      << both.output;
}

// A shrunk scenario says what is left, not what the original was (which it
// keeps, as "shrunk from"), in both files shrink writes.
TEST(ShrinkCli_Description, SaysWhatRemainsAndKeepsTheOriginalAsShrunkFrom) {
  TempDir dir;
  const std::string repro = electsim_test::CommittedRepro("raft-bug-vote-twice-seed1.repro.json");
  const auto shrink = RunCombined("shrink " + repro + " --invariant single_vote --out " + dir / "vt");
  ASSERT_EQ(shrink.exit_status, 0) << shrink.output;
  const json original = json::parse(Read(repro))["scenario"];
  const json shrunk = json::parse(Read(dir / "vt.json"));
  const std::string description = shrunk["description"];
  const size_t steps = shrunk.value("faults", json::array()).size();
  const std::string remains = std::to_string(shrunk["nodes"].get<int>()) + " raft nodes, " +
                              (steps == 0 ? "no fault steps" : std::to_string(steps) + " fault step");
  EXPECT_EQ(description.rfind(remains, 0), 0u) << description;
  EXPECT_NE(description.find(", " + shrunk["duration"].get<std::string>() + " simulated: seed 1 breaks single_vote."),
            std::string::npos)
      << description;
  EXPECT_NE(description.find("Shrunk from: " + original["description"].get<std::string>()), std::string::npos)
      << description;
  EXPECT_EQ(json::parse(Read(dir / "vt.repro.json"))["scenario"]["description"], description);
  EXPECT_NE(shrunk["duration"], original["duration"]) << "the run was not cut: the test shows nothing";
  // An invariant no checker has is unknown, not "not broken".
  const auto bogus = RunCombined("shrink " + repro + " --invariant bogus --out " + dir / "bogus");
  EXPECT_EQ(bogus.exit_status, 2) << bogus.output;
  EXPECT_NE(bogus.output.find("--invariant: expected a checker, one of "), std::string::npos) << bogus.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "bogus.json"));
}

// By default shrink keeps what made the run fail, not the first violation
// in name order, and the shrunk scenario fails for it as the original did:
// an unexpected violation is not taken in as expected, and an expected one
// gone with its faults is no longer expected.
TEST(ShrinkCli_Default, KeepsWhatMadeTheRunFailAndTheShrunkScenarioFailsForIt) {
  TempDir dir;
  const auto run =
      RunCombined("run " + std::string(ELECTSIM_SOURCE_DIR) +
                  "/scenarios/raft-bug-vote-twice.json --set 'expect.violations=[\"committed_agreement\"]' "
                  "--quiet --repro-dir " +
                  dir / "");
  ASSERT_EQ(run.exit_status, 1) << run.output;
  const json repro = json::parse(Read(dir / "raft-bug-vote-twice-seed1.repro.json"));
  ASSERT_TRUE(repro.contains("failed_by")) << repro.dump();
  const std::string first_unexpected = repro["failed_by"][0];
  EXPECT_NE(first_unexpected, "committed_agreement");
  EXPECT_EQ(repro["violations"][0]["checker"], "committed_agreement") << "the test shows nothing";
  const auto shrink =
      RunCombined("shrink " + dir / "raft-bug-vote-twice-seed1.repro.json" + " --max-runs 300 --out " + dir / "s");
  ASSERT_EQ(shrink.exit_status, 0) << shrink.output;
  EXPECT_NE(shrink.output.find("keeping " + first_unexpected + " broken"), std::string::npos) << shrink.output;
  const auto shrunk = RunCombined("run " + dir / "s.json" + " --repro-dir ''");
  EXPECT_EQ(shrunk.exit_status, 1) << shrunk.output;
  EXPECT_NE(shrunk.output.find("unexpected " + first_unexpected + " violation"), std::string::npos) << shrunk.output;
  EXPECT_EQ(shrunk.output.find("expected a committed_agreement violation"), std::string::npos) << shrunk.output;

  // A fuzz repro names the guarantee it broke, not its findings.
  const auto fuzz = RunCombined(
      "fuzz --algorithm raft --option bug=vote_twice --guarantees-of reference --seeds 2..2 --shrink-runs 0 "
      "--repro-dir " +
      dir / "f");
  ASSERT_EQ(fuzz.exit_status, 1) << fuzz.output;
  const json found = json::parse(Read(dir / "f/fuzz-raft-seed2.repro.json"));
  EXPECT_EQ(found["failed_by"], json::array({"single_vote"})) << found.dump();
  EXPECT_NE(found["violations"][0]["checker"], "single_vote") << "the test shows nothing";
  const auto kept =
      RunCombined("shrink " + dir / "f/fuzz-raft-seed2.repro.json" + " --max-runs 50 --out " + dir / "fs");
  EXPECT_NE(kept.output.find("keeping single_vote broken"), std::string::npos) << kept.output;
  // A repro naming as failed_by a checker that did not fire is malformed.
  json bad = found;
  bad["failed_by"] = json::array({"unique_token"});
  std::ofstream(dir / "bad.repro.json") << bad.dump();
  const auto refused = RunCombined("replay " + dir / "bad.repro.json");
  EXPECT_EQ(refused.exit_status, 2) << refused.output;
  EXPECT_NE(refused.output.find("at /failed_by/0: expected the name of a checker under /violations"), std::string::npos)
      << refused.output;
}

// The scenario file a repro came from is an input: --out may not replace it.
TEST(ShrinkCli_Out, NeverReplacesTheScenarioFileTheReproCameFrom) {
  TempDir dir;
  const std::string scenario = dir / "my.json";
  std::filesystem::copy_file(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/raft-bug-vote-twice.json", scenario);
  const std::string before = Read(scenario);
  const auto run = RunCombined("run " + scenario + " --repro-on violation --quiet --repro-dir " + dir / "");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto shrink = RunCombined("shrink " + dir / "my-seed1.repro.json" + " --out " + dir / "my");
  EXPECT_EQ(shrink.exit_status, 2) << shrink.output;
  EXPECT_NE(shrink.output.find("--out (the scenario) " + scenario + ": is the input file"), std::string::npos)
      << shrink.output;
  EXPECT_EQ(Read(scenario), before);
  EXPECT_FALSE(std::filesystem::exists(dir / "my.repro.json"));
}

// Every committed repro shrinks to files the loader takes back (a long
// description once made them refused), shrunk again to no longer a chain of
// descriptions, and a demonstration to one that demonstrates what is left:
// run exits 0, replay reproduces, and both name the same scenario.
TEST(ShrinkCli_Files, EveryCommittedReproShrinksToFilesThatRunAndReplay) {
  TempDir dir;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ELECTSIM_SOURCE_DIR) + "/results/repros")) {
    const std::string stem = entry.path().stem().stem().string();
    const std::string out = dir / stem;
    const auto shrink = RunCombined("shrink " + entry.path().string() + " --max-runs 300 --out " + out);
    ASSERT_EQ(shrink.exit_status, 0) << stem << shrink.output;
    EXPECT_LE(json::parse(Read(out + ".json"))["description"].get<std::string>().size(), 1000u) << stem;
    const auto run = RunCombined("run " + out + ".json --repro-dir ''");
    EXPECT_EQ(run.exit_status, 0) << stem;
    const auto replay = RunCombined("replay " + out + ".repro.json");
    EXPECT_EQ(replay.exit_status, 0) << stem;
    // Both name the shrunk scenario, not the repro it was shrunk from.
    auto label = [](const std::string& output) { return output.substr(0, output.find(" (")); };
    EXPECT_EQ(label(replay.output), label(run.output)) << stem;
    const auto again = RunCombined("shrink " + out + ".repro.json --max-runs 50 --out " + out + "-again");
    ASSERT_EQ(again.exit_status, 0) << stem << again.output;
    const std::string twice = json::parse(Read(out + "-again.json"))["description"];
    EXPECT_EQ(twice.find("Shrunk from: "), twice.rfind("Shrunk from: ")) << twice;
  }
}

TEST(FuzzCli_Summary, SameWithOtherJobsTwiceAndAsMergedShards) {
  TempDir dir;
  ASSERT_EQ(RunCombined(FuzzArgs("--jobs 1 --summary " + dir / "one.json")).exit_status, 0);
  ASSERT_EQ(RunCombined(FuzzArgs("--jobs 2 --summary " + dir / "two.json")).exit_status, 0);
  ASSERT_EQ(RunCombined(FuzzArgs("--jobs 2 --summary " + dir / "again.json")).exit_status, 0);
  for (int k : {1, 2, 3}) {
    const std::string shard = std::to_string(k);
    ASSERT_EQ(RunCombined(FuzzArgs("--jobs 1 --shard " + shard + "/3 --summary " + dir / ("s" + shard + ".json")))
                  .exit_status,
              0);
  }
  const auto merged = RunCombined("fuzz --merge " + dir / "s1.json" + " " + dir / "s3.json" + " " + dir / "s2.json" +
                                  " --summary " + dir / "merged.json");
  ASSERT_EQ(merged.exit_status, 0) << merged.output;
  const std::string one = Read(dir / "one.json");
  EXPECT_NE(one.find("\"seeds_run\": 40"), std::string::npos) << one;
  EXPECT_EQ(one, Read(dir / "two.json"));
  EXPECT_EQ(one, Read(dir / "again.json"));
  EXPECT_EQ(one, Read(dir / "merged.json"));
  EXPECT_NE(Read(dir / "s1.json"), one);
  // A shard given twice is refused.
  EXPECT_EQ(RunCombined("fuzz --merge " + dir / "s1.json" + " " + dir / "s1.json").exit_status, 2);
}

TEST(FuzzCli_Summary, GnuParallelShardsMergeToTheSingleRun) {
  TempDir dir;
  ASSERT_EQ(RunCombined(FuzzArgs("--jobs 2 --summary " + dir / "single.json")).exit_status, 0);
  // GNU parallel is installed by tools/setup: its absence is a failure here.
  const std::string command = "parallel --halt now,fail=1 " + std::string(ELECTSIM_BINARY) + " " +
                              FuzzArgs("--jobs 1 --shard {}/4 --summary " + dir / "shard{}.json") + " ::: 1 2 3 4 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto merged =
      RunCombined("fuzz --merge " + dir / "shard1.json" + " " + dir / "shard2.json" + " " + dir / "shard3.json" + " " +
                  dir / "shard4.json" + " --summary " + dir / "merged.json" + " --junit " + dir / "merged.xml");
  ASSERT_EQ(merged.exit_status, 0) << merged.output;
  EXPECT_EQ(Read(dir / "single.json"), Read(dir / "merged.json"));
  EXPECT_NE(Read(dir / "merged.xml").find("<testsuite "), std::string::npos);
}

TEST(FuzzCli_Interrupt, CtrlCWritesTheSummaryOfTheSeedsFinishedAndJUnitNamesFailingSeeds) {
  TempDir dir;
  // A deliberate bug, so that failing seeds are printed as each batch ends.
  electsim_test::ElectsimProcess fuzz({"fuzz", "--algorithm", "raft", "--fencing", "--option", "bug=vote_twice",
                                       "--guarantees-of", "defaults", "--seeds", "1..100000000", "--jobs", "1",
                                       "--max-repros", "0", "--summary", dir / "s.json", "--junit", dir / "j.xml"});
  ASSERT_TRUE(fuzz.WaitForOutput("BROKE"));
  ASSERT_EQ(kill(fuzz.pid(), SIGINT), 0);
  EXPECT_EQ(fuzz.Wait(), 130);
  const json file = json::parse(Read(dir / "s.json"));
  EXPECT_FALSE(file["complete"].get<bool>());
  const json& summary = file["campaigns"][0];
  EXPECT_EQ(summary["stopped"], "signal");
  EXPECT_GT(summary["seeds_run"].get<uint64_t>(), 0u);
  EXPECT_EQ(summary["failing_seeds"].size(), summary["seeds_failed"].get<uint64_t>());
  const std::string junit = Read(dir / "j.xml");
  const uint64_t first = summary["failing_seeds"][0]["seed"].get<uint64_t>();
  EXPECT_NE(junit.find("name=\"seed " + std::to_string(first) + "\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("--seed " + std::to_string(first)), std::string::npos) << junit;
  // The interrupted campaign is marked incomplete, not passed.
  EXPECT_NE(junit.find("<error message=\"incomplete: "), std::string::npos) << junit;
}

// The one seed a reproduce line runs names what it broke as the campaign's
// line did, word for word, so that a script can compare the two.
TEST(FuzzCli_Seed, NamesTheBrokenGuaranteesAsTheCampaignLineDoes) {
  const std::string flags =
      "fuzz --algorithm raft --fencing --option bug=vote_twice --no-option-swarm --guarantees-of defaults ";
  const auto campaign = RunCombined(flags + "--seeds 7..7 --max-repros 0");
  ASSERT_EQ(campaign.exit_status, 1) << campaign.output;
  const std::string said = "seed 7 BROKE a declared guarantee: ";
  const size_t at = campaign.output.find(said);
  ASSERT_NE(at, std::string::npos) << campaign.output;
  const std::string broken =
      campaign.output.substr(at + said.size(), campaign.output.find('\n', at) - at - said.size());
  ASSERT_NE(broken.find("; "), std::string::npos) << "one guarantee only: the test shows nothing: " << broken;
  const auto one = RunCombined(flags + "--seed 7");
  EXPECT_EQ(one.exit_status, 1) << one.output;
  EXPECT_NE(one.output.find("fuzz verdict: BROKE a declared guarantee: " + broken + "\n"), std::string::npos)
      << broken << "\n"
      << one.output;
}

// --guarantees-of defaults judges against a fencing resource: a campaign
// whose resource does not fence is told that stale_token breaks for that.
TEST(FuzzCli_GuaranteesOf, DefaultsWithoutFencingSaysTheResourceBreaksStaleToken) {
  const auto unfenced = RunCombined("fuzz --algorithm raft --guarantees-of defaults --seeds 1..2 --max-repros 0");
  EXPECT_NE(unfenced.output.find("note: --guarantees-of defaults judges by the defaults' guarantees against a fencing "
                                 "resource, and this campaign's resource does not fence (no --fencing)"),
            std::string::npos)
      << unfenced.output;
  const auto fenced =
      RunCombined("fuzz --algorithm raft --fencing --guarantees-of defaults --seeds 1..2 --max-repros 0");
  EXPECT_EQ(fenced.output.find("does not fence"), std::string::npos) << fenced.output;
  const auto options = RunCombined("fuzz --algorithm raft --seeds 1..2 --max-repros 0");
  EXPECT_EQ(options.output.find("does not fence"), std::string::npos) << options.output;
}

// A signal while the failing seeds' repro files are written stops the runs
// that write them; the last line says so, rather than that they failed.
TEST(FuzzCli_Interrupt, ReprosNotWrittenForASignalAreCountedAsStoppedNotAsFailed) {
  TempDir dir;
  // Long runs, so that the second seed's run again is under way when the
  // signal comes, whatever the machine's speed.
  electsim_test::ElectsimProcess fuzz(
      {"fuzz",       "--algorithm", "raft",          "--fencing", "--option",    "bug=vote_twice", "--guarantees-of",
       "defaults",   "--seeds",     "1..2",          "--jobs",    "1",           "--nodes",        "9",
       "--duration", "1000s",       "--shrink-runs", "0",         "--repro-dir", dir / ""});
  ASSERT_TRUE(fuzz.WaitForOutput("fuzz-raft-seed1.repro.json"));
  ASSERT_EQ(kill(fuzz.pid(), SIGINT), 0);
  EXPECT_EQ(fuzz.Wait(), 130) << fuzz.out() << fuzz.err();
  EXPECT_TRUE(std::filesystem::exists(dir / "fuzz-raft-seed1.repro.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "fuzz-raft-seed2.repro.json"));
  EXPECT_NE(fuzz.out().find("repro files written for 1 of the first 2 of 2 failing seeds (--max-repros 10; 1 not "
                            "written: stopped by a signal first, their reproduce lines are above)"),
            std::string::npos)
      << fuzz.out();
  EXPECT_EQ(fuzz.out().find("could not be written"), std::string::npos) << fuzz.out();
  EXPECT_NE(fuzz.out().find("--seed 2"), std::string::npos) << fuzz.out();
}

}  // namespace
}  // namespace electsim
