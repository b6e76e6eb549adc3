// The declared guarantees as data: what a fuzzer will read must name real
// invariants and claim nothing the sweeps cannot check.
#include <algorithm>
#include <set>
#include <string>

#include "checkers/checker.h"
#include "electsim/algorithms/algorithm.h"
#include "gtest/gtest.h"
#include "sim/format.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/export/guarantee_table.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

TEST(Guarantees_Declarations, NameSafetyCheckersOnce) {
  std::set<std::string> safety;
  for (const std::string& name : SafetyCheckers()) safety.insert(name);
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    const algorithms::Guarantees guarantees =
        algorithm->guarantees(algorithms::OptionValues::Defaults(algorithm->options()));
    EXPECT_FALSE(guarantees.empty()) << algorithm->name() << " promises nothing";
    std::set<std::string> seen;
    for (const algorithms::Guarantee& g : guarantees) {
      EXPECT_TRUE(safety.count(std::string(g.invariant))) << algorithm->name() << ": " << g.invariant;
      EXPECT_TRUE(seen.insert(std::string(g.invariant)).second) << algorithm->name() << ": " << g.invariant;
    }
  }
}

// Only Raft buffers writes, and it syncs them before they matter: for every
// algorithm a power loss may break nothing a plain crash does not.
TEST(Guarantees_Declarations, PowerLossNeverKeepsMoreThanACrash) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (const algorithms::Guarantee& g :
         algorithm->guarantees(algorithms::OptionValues::Defaults(algorithm->options()))) {
      EXPECT_EQ(g.kept_under.Has(FaultKind::kPowerLoss), g.kept_under.Has(FaultKind::kCrash))
          << algorithm->name() << ": " << g.invariant;
    }
  }
}

// Raft keeps every safety invariant of its log and its votes under any fault.
TEST(Guarantees_Declarations, RaftKeepsItsLogAndVoteInvariantsUnderEveryFault) {
  const algorithms::Algorithm* raft = algorithms::FindAlgorithm("raft");
  ASSERT_NE(raft, nullptr);
  const algorithms::Guarantees guarantees = raft->guarantees(algorithms::OptionValues::Defaults(raft->options()));
  for (const char* invariant : {"election_safety", "single_vote", "term_monotonic", "unique_token",
                                "leader_completeness", "committed_agreement"}) {
    auto it = std::find_if(guarantees.begin(), guarantees.end(),
                           [&](const algorithms::Guarantee& g) { return g.invariant == invariant; });
    ASSERT_NE(it, guarantees.end()) << invariant;
    EXPECT_EQ(it->kept_under, FaultKinds::All()) << invariant;
  }
}

// Without a quorum, one leader per epoch, one writer per token, one leader
// at a time and an epoch that stays put under a heard leader all go with
// the first lost message or partition.
TEST(Guarantees_Declarations, BullyAndRingKeepNoLeadershipPromiseUnderLossOrPartitions) {
  for (const char* name : {"bully", "ring"}) {
    const algorithms::Algorithm* algorithm = algorithms::FindAlgorithm(name);
    ASSERT_NE(algorithm, nullptr);
    for (const algorithms::Guarantee& g :
         algorithm->guarantees(algorithms::OptionValues::Defaults(algorithm->options()))) {
      if (g.invariant != "election_safety" && g.invariant != "unique_token" && g.invariant != "single_leader" &&
          g.invariant != "stale_token" && g.invariant != "disruption") {
        continue;
      }
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kLoss)) << name << ": " << g.invariant;
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kPartition)) << name << ": " << g.invariant;
    }
  }
}

// Every safety checker has a row in every table: an invariant an algorithm
// gives nothing to judge (Bully's votes, the lease's log) is kept, not left
// out, so that every "-" in a table is a promise not made.
TEST(Guarantees_Declarations, EveryAlgorithmStatesEverySafetyInvariant) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (const GuaranteeVariant& variant : GuaranteeVariants(*algorithm)) {
      const algorithms::Guarantees guarantees = algorithm->guarantees(variant.values);
      if (guarantees.empty()) continue;  // a deliberate bug
      EXPECT_EQ(guarantees.size(), SafetyCheckers().size()) << algorithm->name() << ", " << variant.label;
    }
  }
}

// Pre-vote with check-quorum keeps a heard leader in office under loss,
// partitions and cuts, where neither option alone does.
TEST(Guarantees_Declarations, RaftKeepsAHeardLeaderOnlyWithPreVoteAndCheckQuorum) {
  const algorithms::Algorithm* raft = algorithms::FindAlgorithm("raft");
  ASSERT_NE(raft, nullptr);
  for (const GuaranteeVariant& variant : GuaranteeVariants(*raft)) {
    for (const algorithms::Guarantee& g : raft->guarantees(variant.values)) {
      if (g.invariant != "disruption") continue;
      EXPECT_EQ(g.kept_under.Has(FaultKind::kPartition), variant.slug == "pre_vote.check_quorum") << variant.label;
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kLatency)) << variant.label;
    }
  }
}

TEST(Guarantees_FaultKinds, SetsCoverTheirSubsets) {
  const FaultKinds crash_and_loss = {FaultKind::kCrash, FaultKind::kLoss};
  EXPECT_TRUE(crash_and_loss.Covers(FaultKinds{FaultKind::kCrash}));
  EXPECT_TRUE(crash_and_loss.Covers(FaultKinds()));
  EXPECT_FALSE(crash_and_loss.Covers(FaultKinds{FaultKind::kCrash, FaultKind::kPause}));
  EXPECT_EQ(FaultKinds::All().Without(crash_and_loss).With(crash_and_loss), FaultKinds::All());
  EXPECT_FALSE(FaultKinds::All().Without(crash_and_loss).Has(FaultKind::kLoss));
  EXPECT_TRUE(FaultKinds::All().Has(FaultKind::kPowerLoss));
}

TEST(Guarantees_Templates, EachKindInflictsOnlyItsOwnFaults) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (FaultKind kind : algorithms::AllFaultKinds()) {
      const nlohmann::json scenario = GuaranteeScenario(*algorithm, nlohmann::json::object(), FaultKinds{kind}, "t");
      const auto parsed = ParseScenarioJson(scenario, "t.json");
      ASSERT_TRUE(parsed.ok()) << algorithms::FaultKindName(kind) << ": " << parsed.status();
      // Crash steps are power losses exactly in the power-loss template.
      for (const FaultStep& step : parsed->faults) {
        EXPECT_EQ(step.lose_unsynced, kind == FaultKind::kPowerLoss) << algorithms::FaultKindName(kind);
        if (step.action == FaultStep::Action::kCrash) {
          EXPECT_TRUE(kind == FaultKind::kCrash || kind == FaultKind::kPowerLoss) << algorithms::FaultKindName(kind);
        }
      }
    }
  }
}

// Both crash kinds together: no power loss may find its node already down
// because a plain crash took it at the same instant.
TEST(Guarantees_Templates, PowerLossesAndCrashesDoNotCollide) {
  const algorithms::Algorithm* lease = algorithms::FindAlgorithm("lease");  // it has a store
  ASSERT_NE(lease, nullptr);
  const nlohmann::json scenario =
      GuaranteeScenario(*lease, nlohmann::json::object(), FaultKinds{FaultKind::kCrash, FaultKind::kPowerLoss}, "t");
  const auto parsed = ParseScenarioJson(scenario, "t.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::set<sim::TimeNs> crashes;
  int power_losses = 0;
  for (const FaultStep& step : parsed->faults) {
    if (step.lose_unsynced) ++power_losses;
    if (!step.lose_unsynced) crashes.insert(step.at);
  }
  for (const FaultStep& step : parsed->faults) {
    EXPECT_FALSE(step.lose_unsynced && crashes.count(step.at)) << sim::FormatDuration(step.at);
  }
  EXPECT_GE(power_losses, 9);
}

TEST(Guarantees_Table, VariantsThatDifferGetATableOfTheirOwn) {
  const algorithms::Algorithm* raft = algorithms::FindAlgorithm("raft");
  ASSERT_NE(raft, nullptr);
  const std::string changes = FormatGuaranteeChanges(*raft, 4);
  EXPECT_NE(changes.find("    with pre_vote true, check_quorum true (disruption also under loss, partition, "
                         "one_way_cut; single_leader also under crash, power_loss):\n"),
            std::string::npos)
      << changes;
  EXPECT_NE(
      changes.find("\n      disruption          yes  yes  yes         -       yes       yes         yes   yes        "
                   "-     -           yes\n"),
      std::string::npos)
      << changes;
  // Pre-vote alone promises what the defaults do: no table.
  EXPECT_EQ(changes.find("with pre_vote true:"), std::string::npos) << changes;
  EXPECT_NE(changes.find("    with any other \"bug\" (a mutant: electsim list --mutants): nothing is guaranteed\n"),
            std::string::npos)
      << changes;
}

TEST(Guarantees_Table, RowsPerSafetyCheckerColumnsPerFaultKind) {
  const algorithms::Algorithm* raft = algorithms::FindAlgorithm("raft");
  ASSERT_NE(raft, nullptr);
  const std::string table = FormatGuarantees(*raft, algorithms::OptionValues::Defaults(raft->options()), 2);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "                      none loss duplication latency partition one_way_cut crash power_loss pause "
            "clock_drift clock_step");
  EXPECT_NE(table.find("\n  leader_completeness yes  yes  yes         yes     yes       yes         yes   yes        "
                       "yes   yes         yes\n"),
            std::string::npos)
      << table;
  // Not under crashes: a node whose log is ahead refuses the winner its
  // vote, times out before the winner's first heartbeat and wins the next
  // term (results/counterexamples/raft-single_leader-crash.repro.json).
  EXPECT_NE(table.find("\n  single_leader       yes  -    yes         -       -         -           -     -          "
                       "-     -           yes\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace electsim
