// The campaign layer's parts on their own: seed ranges and shards, shell
// quoting, the output plan, summaries and their merge, JUnit.
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/campaign/seed_campaign.h"
#include "tools/electsim/campaign/seeds.h"
#include "tools/electsim/campaign/summary.h"
#include "tools/electsim/engine/bench_scenarios.h"
#include "tools/electsim/export/junit.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/tests/electsim_process.h"

namespace electsim::campaign {
namespace {

namespace fs = std::filesystem;

// The tasks each worker has run, counted on the worker itself: a pool that
// started new threads per task would count one on each.
thread_local int tasks_run_here = 0;

TEST(WorkerPool_Run, EachTaskRunsOnEveryWorkerAndTheSameThreadsRunTheNext) {
  WorkerPool pool(3);
  std::atomic<int> runs{0};
  std::mutex mutex;
  std::vector<int> counts;
  const std::function<void()> task = [&] {
    ++runs;
    const int count = ++tasks_run_here;
    std::lock_guard lock(mutex);
    counts.push_back(count);
  };
  for (int round = 1; round <= 4; ++round) {
    counts.clear();
    pool.Run(task);
    EXPECT_EQ(runs.load(), 3 * round);  // Run returns once every worker has
    EXPECT_EQ(counts, std::vector<int>(3, round));
  }
  EXPECT_EQ(tasks_run_here, 0);  // never on the calling thread
}

TEST(WorkerPool_Run, WorkersLeaveTerminatingSignalsToTheMainThread) {
  WorkerPool pool(2);
  std::atomic<int> blocked{0};
  pool.Run([&] {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    bool all = true;
    for (int signal_number : kTerminatingSignals) all = all && sigismember(&mask, signal_number) == 1;
    if (all) ++blocked;
  });
  EXPECT_EQ(blocked.load(), 2);
  sigset_t mine;
  pthread_sigmask(SIG_BLOCK, nullptr, &mine);
  EXPECT_EQ(sigismember(&mine, SIGINT), 0);  // the caller's mask is as it was
}

TEST(SeedRange_Parse, RefusesEmptyReversedNegativeAndOverflowingRanges) {
  for (const char* bad : {"", "5", "5..", "..5", "5..1", "-1..3", "1..-3", " 1..3", "1..3 ", "+1..3",
                          "0..18446744073709551615", "0..18446744073709551616", "1..2..3"}) {
    EXPECT_FALSE(SeedRange::Parse("--seeds", bad).ok()) << bad;
  }
  auto full = SeedRange::Parse("--seeds", "0..18446744073709551614");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->size(), 18446744073709551615u);
  auto one = SeedRange::Parse("--seeds", "7..7");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

TEST(SeedRange_FromCount, RefusesNoSeedsAndRangesPastTheLargestSeed) {
  EXPECT_FALSE(SeedRange::FromCount("--seeds", 1, 0).ok());
  EXPECT_FALSE(SeedRange::FromCount("--seeds", 18446744073709551615u, 2).ok());
  auto last = SeedRange::FromCount("--seeds", 18446744073709551615u, 1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->last(), 18446744073709551615u);
}

TEST(SeedRange_ParseCountOrRange, ANumberCountsFromTheFirstSeedAndARangeIsTakenAsItIs) {
  auto counted = SeedRange::ParseCountOrRange("--seeds", "3", 10);
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(*counted, SeedRange::Between(10, 12));
  auto ranged = SeedRange::ParseCountOrRange("--seeds", "500..599", 10);
  ASSERT_TRUE(ranged.ok()) << ranged.status();
  EXPECT_EQ(*ranged, SeedRange::Between(500, 599));
  // Each form is checked as its own parser checks it.
  for (const char* bad : {"", "0", "-3", "+3", " 3", "3s", "0x10", "5..1", "5..", "18446744073709551616"}) {
    EXPECT_FALSE(SeedRange::ParseCountOrRange("--seeds", bad, 1).ok()) << bad;
  }
  EXPECT_FALSE(SeedRange::ParseCountOrRange("--seeds", "2", 18446744073709551615u).ok());
  const absl::Status status = SeedRange::ParseCountOrRange("--seeds", "ten", 1).status();
  EXPECT_NE(status.message().find("expected a number of seeds (counted from seed 1) or a range A..B"),
            std::string::npos)
      << status;
}

TEST(ParseSeed_Text, OnlyDecimalDigitsWithinRange) {
  for (const char* bad : {"-1", " 3", "3 ", "+3", "0x10", "18446744073709551616", ""}) {
    EXPECT_FALSE(ParseSeed("--seed", bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseSeed("--seed", "18446744073709551615"), 18446744073709551615u);
}

TEST(Shard_Seeds, ShardsAreDisjointAndTogetherTheWholeRange) {
  const SeedRange range = *SeedRange::Parse("--seeds", "10..26");
  std::vector<int> times(17, 0);
  uint64_t total = 0;
  for (uint64_t k = 1; k <= 5; ++k) {
    const Shard shard = *Shard::Make(k, 5);
    total += shard.SizeIn(range);
    for (uint64_t i = 0; i < shard.SizeIn(range); ++i) {
      const uint64_t seed = shard.SeedAt(range, i);
      ASSERT_TRUE(range.Contains(seed));
      EXPECT_TRUE(shard.Holds(range, seed));
      ++times[seed - 10];
    }
  }
  EXPECT_EQ(total, range.size());
  for (int n : times) EXPECT_EQ(n, 1);
  for (const char* bad : {"0/3", "4/3", "3", "1/0", "-1/3", "1/1000001"})
    EXPECT_FALSE(Shard::Parse("--shard", bad).ok()) << bad;
  // More shards than seeds: a shard with nothing to run is refused.
  EXPECT_FALSE(SeedPlan::Make(*SeedRange::Parse("--seeds", "1..3"), *Shard::Make(5, 10)).ok());
}

TEST(ShellQuote_Words, BareOnlyWhenSafeAndEveryQuoteSurvives) {
  EXPECT_EQ(ShellQuote("nodes=7"), "nodes=7");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("x; touch y"), "'x; touch y'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("$(id)"), "'$(id)'");
}

class ShellQuoteTest : public electsim_test::TempDirTest {
 protected:
  // What bash makes of `word` quoted, as the bytes of the one argument it
  // passes on (bash: the shell a pasted line most often meets that reads $'...').
  std::string ThroughBash(const std::string& word) {
    const std::string script = Write("words.sh", "printf '%s' " + ShellQuote(word) + "\n");
    const std::string out = (dir_ / "out.bin").string();
    if (std::system(("bash " + script + " > " + out).c_str()) != 0) return "(bash failed)";
    return electsim_test::ReadWholeFile(out);
  }
};

TEST_F(ShellQuoteTest, WordsATerminalWouldShowEscapedComeBackByteForByte) {
  std::string every_byte;
  for (int byte = 1; byte < 256; ++byte) every_byte += static_cast<char>(byte);
  const std::vector<std::string> words = {"new\nline.json",
                                          "tab\there",
                                          "\x1b[2Jclear",
                                          "carriage\r",
                                          "del\x7f",
                                          "it's\nquoted \\ $x",
                                          "\xff not utf-8",
                                          "\xe2\x80\xaereversed",
                                          "\xc2\x85"
                                          "c1",
                                          "\n7digits0123",
                                          "caf\xc3\xa9\n",
                                          every_byte};
  for (const std::string& word : words) {
    const std::string quoted = ShellQuote(word);
    EXPECT_EQ(EscapeForTerminal(quoted), quoted) << "printed, it would not paste back: " << quoted;
    EXPECT_EQ(ThroughBash(word), word) << quoted;
  }
  EXPECT_EQ(ShellQuote("a\nb"), "$'a\\012b'");
  EXPECT_EQ(ShellQuote("\x1b'\\"), "$'\\033\\'\\\\'");
  // Printable text keeps the plainer single quotes, non-ASCII letters included.
  EXPECT_EQ(ShellQuote("caf\xc3\xa9 x"), "'caf\xc3\xa9 x'");
  EXPECT_EQ(ThroughBash("it's \"$(id)\" `id`"), "it's \"$(id)\" `id`");
}

TEST(SeedFileFamily_Names, MatchesOnlyItsOwnSeedsAndSuffixes) {
  const SeedFileFamily family{"--repro-dir",
                              "out",
                              "racy",
                              *SeedPlan::Make(*SeedRange::Parse("s", "5..9"), {}),
                              {kReproSuffix, kTimelineSuffix}};
  EXPECT_EQ(family.SeedOf("racy-seed7.repro.json"), 7u);
  EXPECT_EQ(family.SeedOf("racy-seed7.html"), 7u);
  EXPECT_EQ(family.SeedOf("racy-seed4.repro.json"), std::nullopt);  // outside the range
  EXPECT_EQ(family.SeedOf("racy-seed07.repro.json"), std::nullopt);
  EXPECT_EQ(family.SeedOf("racy-seed7.shrunk.json"), std::nullopt);
  EXPECT_EQ(family.SeedOf("other-seed7.repro.json"), std::nullopt);
  EXPECT_EQ(family.PathFor(7, kReproSuffix), "out/racy-seed7.repro.json");
}

class OutputPlanTest : public electsim_test::TempDirTest {};

TEST_F(OutputPlanTest, Check_RefusesOutputsOverInputsEachOtherOrAFamily) {
  const std::string input = Write("in.json", "{}");
  const SeedFileFamily family{"--repro-dir",
                              dir_.string(),
                              "fuzz-raft",
                              *SeedPlan::Make(*SeedRange::Parse("s", "1..10"), {}),
                              {kReproSuffix, kTimelineSuffix}};
  auto check = [&](const std::vector<std::pair<std::string, std::string>>& files) {
    OutputPlan plan({input});
    plan.AddFamily(family);
    for (const auto& [flag, path] : files) plan.AddFile(flag, path);
    return plan.Check();
  };
  EXPECT_TRUE(check({{"--summary", (dir_ / "s.json").string()}, {"--junit", (dir_ / "j.xml").string()}}).ok());
  EXPECT_FALSE(check({{"--summary", input}}).ok());
  EXPECT_FALSE(check({{"--summary", (dir_ / "s.json").string()}, {"--junit", (dir_ / "s.json").string()}}).ok());
  const absl::Status repro = check({{"--summary", (dir_ / "fuzz-raft-seed3.repro.json").string()}});
  EXPECT_NE(repro.message().find("is where --repro-dir would write a file for seed 3"), std::string::npos) << repro;
  EXPECT_FALSE(check({{"--junit", (dir_ / "fuzz-raft-seed10.html").string()}}).ok());
  EXPECT_TRUE(check({{"--junit", (dir_ / "fuzz-raft-seed11.html").string()}}).ok());  // not a seed it runs
}

TEST_F(OutputPlanTest, Discard_RemovesWhatWasWrittenAndNothingElse) {
  const std::string kept = Write("kept.txt", "x");
  const std::string written = Write("written.txt", "y");
  OutputPlan plan({});
  plan.Written(written);
  plan.Discard();
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_FALSE(fs::exists(written));
}

CampaignSummary ShardSummary(uint64_t k, uint64_t n, uint64_t run, std::vector<uint64_t> failing = {}) {
  CampaignSummary s;
  s.label = "fuzz raft";
  s.identity = {{"command", "fuzz"}, {"algorithm", "raft"}};
  s.range = SeedRange::Between(1, 30);
  s.shard_count = n;
  s.shards = {k};
  s.seeds_run = run;
  for (uint64_t seed : failing) {
    s.failing[seed] = FailingSeed{.seed = seed, .reasons = {"election_safety"}, .reproduce = "x", .repro = "r.json"};
    ++s.failed_by["election_safety"];
  }
  s.seeds_failed = s.failing.size();
  return s;
}

SummaryFile File(CampaignSummary c) { return {.command = "fuzz", .campaigns = {std::move(c)}}; }

TEST(Summary_Merge, AllShardsMakeTheWholeCampaign) {
  auto merged =
      MergeSummaries({File(ShardSummary(1, 3, 10, {4})), File(ShardSummary(2, 3, 10)), File(ShardSummary(3, 3, 10))},
                     {"a", "b", "c"}, false);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(merged->Complete());
  EXPECT_EQ(merged->campaigns[0].seeds_run, 30u);
  EXPECT_EQ(merged->campaigns[0].failing.at(4).repro, "r.json");
}

// What the judge left unjudged is counted per reason, adds up across
// shards and survives the JSON.
TEST(Summary_Merge, UnjudgedCountsAddUpAndReadBack) {
  CampaignSummary one = ShardSummary(1, 2, 15), two = ShardSummary(2, 2, 15);
  one.unjudged = {{"liveness (timings)", 3}};
  two.unjudged = {{"liveness (timings)", 2}, {"liveness (network)", 4}};
  auto merged = MergeSummaries({File(one), File(two)}, {"a", "b"}, false);
  ASSERT_TRUE(merged.ok()) << merged.status();
  const std::map<std::string, uint64_t> expected = {{"liveness (timings)", 5}, {"liveness (network)", 4}};
  EXPECT_EQ(merged->campaigns[0].unjudged, expected);
  auto read = SummaryFromJson(ToJson(*merged), "m.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->campaigns[0].unjudged, expected);
  nlohmann::json too_many = ToJson(File(one));
  too_many["campaigns"][0]["unjudged"]["liveness (timings)"] = 16;  // a shard of 15 seeds
  EXPECT_FALSE(SummaryFromJson(too_many, "s.json").ok());
}

TEST(Summary_Merge, MissingShardsAreRefusedOrMergedAsIncomplete) {
  const std::vector<SummaryFile> two = {File(ShardSummary(1, 3, 10)), File(ShardSummary(2, 3, 10))};
  const auto refused = MergeSummaries(two, {"a", "b"}, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("shard 3 of 3 missing"), std::string::npos) << refused.status();
  const auto partial = MergeSummaries(two, {"a", "b"}, true);
  ASSERT_TRUE(partial.ok());
  EXPECT_FALSE(partial->Complete());
  EXPECT_EQ(ToJson(*partial)["complete"], false);
  // A shard stopped early is not a whole shard.
  const auto stopped = MergeSummaries({File(ShardSummary(1, 2, 15)), File(ShardSummary(2, 2, 14))}, {"a", "b"}, false);
  EXPECT_FALSE(stopped.ok());
}

TEST(Summary_Merge, OtherCampaignsAndRepeatedShardsAreRefused) {
  CampaignSummary other = ShardSummary(2, 3, 10);
  other.identity["algorithm"] = "bully";
  // The field that differs is named, with both values.
  const auto refused = MergeSummaries({File(ShardSummary(1, 3, 10)), File(other)}, {"a", "b"}, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("b: at /campaigns/0/identity/algorithm: expected a shard of the same "
                                            "campaign as a ("),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("; it has \"raft\", this file \"bully\")"), std::string::npos)
      << refused.status();
  EXPECT_FALSE(MergeSummaries({File(ShardSummary(1, 3, 10)), File(ShardSummary(1, 3, 10))}, {"a", "b"}, true).ok());
  EXPECT_FALSE(MergeSummaries({File(ShardSummary(1, 3, 10)), File(ShardSummary(2, 4, 10))}, {"a", "b"}, true).ok());
}

// "stopped" holds why a campaign stopped early, as electsim writes it: a
// value it never writes is refused with its JSON path, not echoed back.
TEST(Summary_Json, StoppedIsOneOfTheReasonsACampaignWrites) {
  const nlohmann::json good = ToJson(File(ShardSummary(2, 3, 10)));
  for (const LoopEnd end : {LoopEnd::kFoldStopped, LoopEnd::kSignal, LoopEnd::kTimeBudget, LoopEnd::kError}) {
    nlohmann::json stopped = good;
    stopped["campaigns"][0]["stopped"] = StoppedText(LoopResult{.end = end});
    const auto read = SummaryFromJson(stopped, "s.json");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->campaigns[0].stopped, StoppedText(LoopResult{.end = end}));
  }
  nlohmann::json banana = good;
  banana["campaigns"][0]["stopped"] = "banana";
  const auto refused = SummaryFromJson(banana, "s.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("/campaigns/0/stopped"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("\"time budget\""), std::string::npos) << refused.status();
}

TEST(Summary_Json, ReadBackRefusesShardsOutOfRangeAndSeedsBeyondTheirShard) {
  const nlohmann::json good = ToJson(File(ShardSummary(2, 3, 10, {5})));
  ASSERT_TRUE(SummaryFromJson(good, "s.json").ok()) << SummaryFromJson(good, "s.json").status();
  nlohmann::json shard5of3 = good;
  shard5of3["campaigns"][0]["shards"]["included"] = {5};
  EXPECT_FALSE(SummaryFromJson(shard5of3, "s.json").ok());
  nlohmann::json too_many = good;
  too_many["campaigns"][0]["seeds_run"] = 11;  // shard 2 of 3 of 1..30 holds 10 seeds
  const auto refused = SummaryFromJson(too_many, "s.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("/campaigns/0/seeds_run"), std::string::npos) << refused.status();
  nlohmann::json foreign_seed = good;
  foreign_seed["campaigns"][0]["failing_seeds"][0]["seed"] = 4;  // shard 1's
  EXPECT_FALSE(SummaryFromJson(foreign_seed, "s.json").ok());
}

TEST(JUnit_Xml, UserTextIsEscapedAndErrorsAndIncompleteAreNotPasses) {
  CampaignSummary s = ShardSummary(1, 1, 3, {2});
  s.label = "a<b & \"c\" \x1b[2J";
  s.errors.push_back({3, "out of memory <&>"});
  s.stopped = "error";
  const std::string xml = JUnitXml(ToJUnit(File(s), 1.5));
  EXPECT_EQ(xml.find('\x1b'), std::string::npos) << xml;
  EXPECT_NE(xml.find("a&lt;b &amp; &quot;c&quot; \\u001b[2J"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"seed 3 could not be judged\">out of memory &lt;&amp;&gt;</error>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"incomplete: "), std::string::npos) << xml;
  EXPECT_NE(xml.find("repro: r.json"), std::string::npos) << xml;
  EXPECT_NE(xml.find("failures=\"1\" errors=\"2\""), std::string::npos) << xml;
}

TEST(BenchSweep_Points, EndpointsKeepTheParameterTypeAndReversedRangesRunInFull) {
  auto drop = ParseSweep("drop=0..1:3", {"raft"});
  ASSERT_TRUE(drop.ok()) << drop.status();
  std::vector<std::string> labels;
  for (const auto& p : drop->points) labels.push_back(p.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"0", "0.5", "1"}));
  auto down = ParseSweep("nodes=7..5", {"raft"});
  ASSERT_TRUE(down.ok());
  labels.clear();
  for (const auto& p : down->points) labels.push_back(p.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"7", "6", "5"}));
  EXPECT_FALSE(ParseSweep("nodes=3..4.5", {"raft"}).ok());
  EXPECT_FALSE(ParseSweep("election_timeout_max=150ms..300ms", {"raft", "bully"}).ok());  // bully has none
}

}  // namespace
}  // namespace electsim::campaign
