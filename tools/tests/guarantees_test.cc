// The declared guarantees as data: what a fuzzer will read must name real
// invariants and claim nothing the sweeps cannot check.
#include <set>
#include <string>

#include "algorithms/algorithm.h"
#include "checkers/checker.h"
#include "gtest/gtest.h"
#include "tools/electsim/guarantee_table.h"
#include "tools/guarantees/fault_templates.h"

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

TEST(Guarantees_Declarations, NameSafetyCheckersOnceAndClaimNothingUnderPowerLoss) {
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
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kPowerLoss)) << algorithm->name() << ": " << g.invariant;
    }
  }
}

TEST(Guarantees_Declarations, BullyAndRingKeepNothingButTheirTermsUnderLossOrPartitions) {
  for (const char* name : {"bully", "ring"}) {
    const algorithms::Algorithm* algorithm = algorithms::FindAlgorithm(name);
    ASSERT_NE(algorithm, nullptr);
    for (const algorithms::Guarantee& g :
         algorithm->guarantees(algorithms::OptionValues::Defaults(algorithm->options()))) {
      if (g.invariant == "term_monotonic") continue;
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kLoss)) << name << ": " << g.invariant;
      EXPECT_FALSE(g.kept_under.Has(FaultKind::kPartition)) << name << ": " << g.invariant;
    }
  }
}

TEST(Guarantees_FaultKinds, SetsCoverTheirSubsets) {
  const FaultKinds crash_and_loss = {FaultKind::kCrash, FaultKind::kLoss};
  EXPECT_TRUE(crash_and_loss.Covers(FaultKinds{FaultKind::kCrash}));
  EXPECT_TRUE(crash_and_loss.Covers(FaultKinds()));
  EXPECT_FALSE(crash_and_loss.Covers(FaultKinds{FaultKind::kCrash, FaultKind::kPause}));
  EXPECT_EQ(FaultKinds::All().Without(crash_and_loss).With(crash_and_loss), FaultKinds::All());
  EXPECT_FALSE(algorithms::kEveryFaultButPowerLoss.Has(FaultKind::kPowerLoss));
  EXPECT_TRUE(algorithms::kEveryFaultButPowerLoss.Has(FaultKind::kClockStep));
}

TEST(Guarantees_Templates, EveryKindButPowerLossHasOneThatParses) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (FaultKind kind : algorithms::AllFaultKinds()) {
      const auto fragment = FaultTemplate(kind, algorithm->uses_store());
      EXPECT_EQ(fragment.has_value(), kind != FaultKind::kPowerLoss) << algorithms::FaultKindName(kind);
    }
  }
}

TEST(Guarantees_Table, RowsPerSafetyCheckerColumnsPerFaultKind) {
  const algorithms::Algorithm* raft = algorithms::FindAlgorithm("raft");
  ASSERT_NE(raft, nullptr);
  const std::string table = FormatGuarantees(*raft, algorithms::OptionValues::Defaults(raft->options()), 2);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "                   none loss duplication latency partition one_way_cut crash power_loss pause "
            "clock_drift clock_step");
  EXPECT_NE(table.find("\n  election_safety  yes  yes  yes         yes     yes       yes         yes   -          yes "
                       "  yes         yes\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n  single_leader    yes  -    yes         -       -         -           yes   -          -  "
                       "   -           yes\n"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace electsim
