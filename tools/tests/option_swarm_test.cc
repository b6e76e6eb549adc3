// The option swarm: what a seed draws, that the draw is the seed's alone,
// that it stays within what the algorithm accepts and promises something,
// that the scenario says what it drew, and that the flag turns it off.
#include "tools/electsim/engine/option_swarm.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/language/duration.h"
#include "tools/tests/electsim_command.h"

namespace electsim {
namespace {

using electsim_test::RunCombined;
using nlohmann::json;

// The algorithm of that name (it must be registered).
const algorithms::Algorithm& AlgorithmNamed(const std::string& name) {
  const algorithms::Algorithm* algorithm = algorithms::FindAlgorithm(name);
  EXPECT_NE(algorithm, nullptr) << name;
  return *algorithm;
}

OptionDraw DrawFor(const std::string& algorithm, uint64_t seed, const json& fixed = json::object()) {
  auto draw = DrawOptions(AlgorithmNamed(algorithm), fixed, seed, 3);
  EXPECT_TRUE(draw.ok()) << draw.status();
  return draw.ok() ? *draw : OptionDraw{};
}

TEST(OptionSwarm_Draws, SameSeedSameDrawAndSeedsDrawDifferentOptions) {
  EXPECT_EQ(DrawFor("raft", 5).options, DrawFor("raft", 5).options);
  std::set<std::string> names;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const OptionDraw draw = DrawFor("raft", seed);
    for (const auto& [name, value] : draw.options.items()) names.insert(name);
  }
  // Every option that can be drawn is, somewhere in 50 seeds; bug never is.
  EXPECT_EQ(names, (std::set<std::string>{"check_quorum", "election_timeout_max", "election_timeout_min",
                                          "heartbeat_interval", "pre_vote", "step_down_on_lost_vote"}));
  EXPECT_EQ(SwarmedOptions(AlgorithmNamed("raft"), json::object()),
            (std::vector<std::string>{"election_timeout_min", "election_timeout_max", "heartbeat_interval", "pre_vote",
                                      "check_quorum", "step_down_on_lost_vote"}));
}

TEST(OptionSwarm_Draws, NumbersStayWithinHalfAndTwiceTheirDefaultAndTheAlgorithmAcceptsThem) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const OptionDraw draw = DrawFor("raft", seed);
    for (const char* name : {"election_timeout_min", "election_timeout_max", "heartbeat_interval"}) {
      if (!draw.options.contains(name)) continue;
      auto drawn = ParseDuration(draw.options[name].get<std::string>());
      ASSERT_TRUE(drawn.ok());
      const int64_t default_ns =
          algorithms::OptionValues::Defaults(AlgorithmNamed("raft").options()).Duration(name).ns();
      EXPECT_GE(drawn->ns(), default_ns / 2) << name << " seed " << seed;
      EXPECT_LE(drawn->ns(), default_ns * 2) << name << " seed " << seed;
    }
    // Read and validated: the heartbeat below the election timeout.
    EXPECT_LT(draw.values.Duration("heartbeat_interval"), draw.values.Duration("election_timeout_min"));
    EXPECT_LE(draw.values.Duration("election_timeout_min"), draw.values.Duration("election_timeout_max"));
  }
}

TEST(OptionSwarm_Draws, GivenOptionsAreKeptAndABugIsNeverDrawn) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const OptionDraw draw = DrawFor("raft", seed, {{"pre_vote", true}});
    EXPECT_EQ(draw.options["pre_vote"], true);
    EXPECT_FALSE(draw.options.contains("bug"));
    for (const std::string& drawn : draw.drawn) EXPECT_EQ(drawn.find("pre_vote"), std::string::npos) << drawn;
    // The defaults with the draws leave the given option out.
    const bool drew_check_quorum = draw.options.contains("check_quorum");
    EXPECT_EQ(draw.defaults_with_drawn.Bool("pre_vote"), false);
    if (!drew_check_quorum) {
      EXPECT_EQ(draw.defaults_with_drawn.Bool("check_quorum"), false);
    }
  }
}

// Liveness is judged only where the drawn timings keep the defaults'
// proportions: not with the heartbeat near the election timeout.
TEST(OptionSwarm_Timing, KeptOnlyWhileTheDefaultsProportionsHold) {
  int kept = 0, not_kept = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const OptionDraw draw = DrawFor("raft", seed);
    const double heartbeat = static_cast<double>(draw.values.Duration("heartbeat_interval").ns());
    const double minimum = static_cast<double>(draw.values.Duration("election_timeout_min").ns());
    const double maximum = static_cast<double>(draw.values.Duration("election_timeout_max").ns());
    const algorithms::OptionValues defaults = algorithms::OptionValues::Defaults(AlgorithmNamed("raft").options());
    bool within = true;
    for (const char* name : {"election_timeout_min", "election_timeout_max", "heartbeat_interval"}) {
      within &= draw.values.Duration(name).ns() * 2 <= defaults.Duration(name).ns() * 3;
    }
    const bool proportions =
        within && minimum / heartbeat >= 2.0 && maximum / minimum >= std::sqrt(2.0) && maximum / heartbeat >= 4.0;
    EXPECT_EQ(draw.timing_kept, proportions) << "seed " << seed;
    (draw.timing_kept ? kept : not_kept)++;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(not_kept, 0);
  // The lease: a safety margin drawn below its default is not kept.
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const OptionDraw draw = DrawFor("lease", seed);
    if (draw.options.contains("safety_margin") && draw.options["safety_margin"].get<double>() < 0.75) {
      EXPECT_FALSE(draw.timing_kept) << "seed " << seed;
    }
  }
}

// A timing given with --option or --set is held to the proportions a drawn
// one is: the same answer as for a draw wherever the cap on a drawn duration
// does not decide it, slower as a whole is kept, and a given heartbeat nearly
// as long as the election timeout is not.
TEST(OptionSwarm_Timing, AGivenTimingIsHeldToTheProportionsADrawnOneIs) {
  const algorithms::Algorithm& raft = AlgorithmNamed("raft");
  const algorithms::OptionValues defaults = algorithms::OptionValues::Defaults(raft.options());
  int capped_only = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const OptionDraw draw = DrawFor("raft", seed);
    // The same rules but the cap on a drawn duration (1.5 times its default).
    bool past_cap = false;
    for (const char* name : {"election_timeout_min", "election_timeout_max", "heartbeat_interval"}) {
      past_cap |= draw.values.Duration(name).ns() * 2 > defaults.Duration(name).ns() * 3;
    }
    if (draw.timing_kept || !past_cap) {
      EXPECT_EQ(KeepsTimingProportions(raft, draw.values), draw.timing_kept) << "seed " << seed;
    } else {
      capped_only += KeepsTimingProportions(raft, draw.values);
    }
  }
  EXPECT_GT(capped_only, 0);
  EXPECT_TRUE(KeepsTimingProportions(raft, defaults));
  EXPECT_TRUE(TimingOptionsChanged(raft, defaults).empty());
  // Slower as a whole, in the defaults' proportions: kept.
  const OptionDraw slower =
      DrawFor("raft", 1,
              {{"election_timeout_min", "600ms"}, {"election_timeout_max", "1200ms"}, {"heartbeat_interval", "200ms"}});
  EXPECT_TRUE(KeepsTimingProportions(raft, slower.values));
  const OptionDraw tight = DrawFor("raft", 1, {{"heartbeat_interval", "149ms"}, {"election_timeout_max", "160ms"}});
  EXPECT_FALSE(KeepsTimingProportions(raft, tight.values));
  const std::vector<std::string> changed = TimingOptionsChanged(raft, tight.values);
  EXPECT_NE(std::find(changed.begin(), changed.end(), "heartbeat_interval=149ms"), changed.end());
  EXPECT_NE(std::find(changed.begin(), changed.end(), "election_timeout_max=160ms"), changed.end());
}

// A fuzz last line's "seeds with a violation: ..." counts ("" when absent).
std::string SeedsWithAViolation(const std::string& output) {
  std::smatch counts;
  return std::regex_search(output, counts, std::regex("seeds with a violation: ([^\n]*)")) ? counts[1].str() : "";
}

// Timings given outside the proportions (a heartbeat of 149 ms against an
// election timeout of 150-160 ms: followers time out between heartbeats by
// design) make a cluster that cannot stay led: fuzz says so once, and counts
// what fires as findings, not as broken guarantees (it once failed seed 158
// for liveness).
TEST(OptionSwarm_Cli, TimingsGivenOutsideTheProportionsAreFindingsWithANote) {
  const std::string tight =
      "fuzz --algorithm raft --option pre_vote=true --option check_quorum=true --option election_timeout_min=150ms "
      "--option election_timeout_max=160ms ";
  const auto given = RunCombined(tight + "--option heartbeat_interval=149ms --seeds 150..160 --max-repros 0");
  EXPECT_EQ(given.exit_status, 0) << given.output;
  EXPECT_NE(given.output.find("broke a declared guarantee: 0 (none)"), std::string::npos) << given.output;
  EXPECT_NE(given.output.find("note: the timings given (election_timeout_max=160ms, heartbeat_interval=149ms) leave"),
            std::string::npos)
      << given.output;
  EXPECT_NE(SeedsWithAViolation(given.output).find("liveness"), std::string::npos) << given.output;
  const auto set = RunCombined(tight + "--set algorithm.options.heartbeat_interval=149ms --seeds 1..2");
  EXPECT_NE(set.output.find("heartbeat_interval=149ms) leave the proportions between the defaults"), std::string::npos)
      << set.output;
  for (const char* kept_options : {"--option heartbeat_interval=40ms",
                                   "--option election_timeout_min=600ms --option election_timeout_max=1200ms "
                                   "--option heartbeat_interval=200ms"}) {
    const auto kept = RunCombined(std::string("fuzz --algorithm raft --seeds 1..2 ") + kept_options);
    EXPECT_EQ(kept.output.find("note:"), std::string::npos) << kept.output;
  }
}

// Liveness is promised once the faults are over, in a calm network: a
// --set that leaves it slow for good makes a stalled run a finding, with a
// note, where a latency within the calm bound is still judged.
TEST(OptionSwarm_Cli, ANetworkLeftSlowBySetMakesLivenessAFindingWithANote) {
  const auto slow = RunCombined("fuzz --algorithm raft --set network.latency=400ms --seeds 1..20 --max-repros 0");
  EXPECT_EQ(slow.exit_status, 0) << slow.output;
  EXPECT_NE(slow.output.find("broke a declared guarantee: 0 (none)"), std::string::npos) << slow.output;
  EXPECT_NE(slow.output.find("note: the --set given leaves the network inflicting latency once the faults are over"),
            std::string::npos)
      << slow.output;
  EXPECT_NE(SeedsWithAViolation(slow.output).find("liveness"), std::string::npos) << slow.output;
  // The last line counts the seeds that left it unjudged, and why.
  std::smatch unjudged;
  ASSERT_TRUE(std::regex_search(slow.output, unjudged, std::regex("left unjudged \\(seeds\\): ([^;]*);")))
      << slow.output;
  EXPECT_NE(unjudged[1].str().find("liveness (network) "), std::string::npos) << slow.output;
  const auto calm = RunCombined("fuzz --algorithm raft --set network.latency=5ms --seeds 1..2");
  EXPECT_EQ(calm.output.find("note:"), std::string::npos) << calm.output;
}

TEST(OptionSwarm_Cli, TheScenarioSaysWhatWasDrawnAndTheFlagTurnsItOff) {
  int with_options = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto swarm = RunCombined("fuzz --algorithm lease --seed " + std::to_string(seed) + " --emit-scenario");
    ASSERT_EQ(swarm.exit_status, 0) << swarm.output;
    const json document = json::parse(swarm.output);
    const json& options = document["algorithm"]["options"];
    if (!options.empty()) {
      ++with_options;
      EXPECT_NE(document["description"].get<std::string>().find("Options drawn: "), std::string::npos);
    }
    const auto plain =
        RunCombined("fuzz --algorithm lease --no-option-swarm --seed " + std::to_string(seed) + " --emit-scenario");
    ASSERT_EQ(plain.exit_status, 0) << plain.output;
    EXPECT_TRUE(json::parse(plain.output)["algorithm"]["options"].empty()) << plain.output;
  }
  EXPECT_GT(with_options, 5);
}

// `fuzz --seed N` and `run` of the scenario it emits are one run.
TEST(OptionSwarm_Cli, TheEmittedScenarioRunsAsTheSeedDid) {
  const auto seed = RunCombined("fuzz --algorithm raft --seed 9");
  std::smatch fuzz_hash, run_hash;
  ASSERT_TRUE(std::regex_search(seed.output, fuzz_hash, std::regex("trace-hash: (0x[0-9a-f]+)"))) << seed.output;
  const std::string file = ::testing::TempDir() + "/electsim-swarm-seed9.json";
  const auto emitted = RunCombined("fuzz --algorithm raft --seed 9 --emit-scenario");
  std::ofstream(file) << emitted.output;
  const auto run = RunCombined("run " + file + " --repro-dir ''");
  ASSERT_TRUE(std::regex_search(run.output, run_hash, std::regex("trace-hash: (0x[0-9a-f]+)"))) << run.output;
  EXPECT_EQ(fuzz_hash[1].str(), run_hash[1].str());
  EXPECT_NE(emitted.output.find("Options drawn"), std::string::npos) << emitted.output;
}

TEST(OptionSwarm_Cli, TheSummaryCountsTheDrawsAndTheReproduceLineKeepsTheFlagOff) {
  const std::string summary = ::testing::TempDir() + "/electsim-swarm-summary.json";
  ASSERT_EQ(RunCombined("fuzz --algorithm raft --seeds 1..40 --repro-dir '' --summary " + summary).exit_status, 0);
  std::ifstream in(summary);
  const json counted = json::parse(in)["campaigns"][0]["options_drawn"];
  EXPECT_GT(counted.value("pre_vote=true", 0) + counted.value("pre_vote=false", 0), 0) << counted;
  EXPECT_GT(counted.value("heartbeat_interval", 0), 0) << counted;
  for (const auto& [name, seeds] : counted.items()) EXPECT_LE(seeds.get<int>(), 40) << name;
  // Off, nothing is drawn, and a failing seed's reproduce line says so.
  const auto off = RunCombined(
      "fuzz --algorithm raft --option bug=vote_twice --guarantees-of defaults --no-option-swarm --seeds 1..3 "
      "--repro-dir ''");
  EXPECT_EQ(off.exit_status, 1) << off.output;
  EXPECT_NE(off.output.find("--no-option-swarm --seed "), std::string::npos) << off.output;
  EXPECT_EQ(off.output.find("options drawn"), std::string::npos) << off.output;
}

}  // namespace
}  // namespace electsim
