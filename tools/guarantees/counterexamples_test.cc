// Every "-" in the guarantee tables `electsim list` prints has its
// counterexample in results/counterexamples, and each one replays to the
// trace it recorded, breaking its cell's invariant alone under faults of its
// cell's kind (and of kinds the invariant is kept under), and nothing the
// table declares kept there.
#include "tools/guarantees/counterexamples.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/external/external_algorithm.h"
#include "tools/electsim/language/json_document.h"
#include "zookeeper_election.h"

namespace electsim {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(ELECTSIM_SOURCE_DIR) / "results" / "counterexamples";
constexpr std::string_view kSuffix = ".repro.json";

// ZooKeeper's recipe has its tables too: registered before anything reads
// the registry (test discovery included).
const bool kZooKeeperRegistered = algorithms::RegisterAlgorithm(zookeeper::ZooKeeperElection()).ok();

// So has etcd's raft, where the build has it (it needs Go).
#ifdef ELECTSIM_ETCD_RAFT_MANIFEST
absl::Status RegisterEtcdRaft() {
  auto algorithm = external::LoadManifest(ELECTSIM_ETCD_RAFT_MANIFEST);
  return algorithm.ok() ? algorithms::RegisterAlgorithm(**algorithm) : algorithm.status();
}
const absl::Status kEtcdRaftRegistered = RegisterEtcdRaft();
#else
const absl::Status kEtcdRaftRegistered = absl::OkStatus();
#endif

// Whether the file's algorithm is in this build: one without Go has no
// etcd-raft to replay.
bool OfAlgorithmBuilt(const std::string& stem) {
  return !stem.starts_with("etcd-raft-") || algorithms::FindAlgorithm("etcd-raft") != nullptr;
}

// The files of the algorithms this build has.
std::vector<std::string> Stems() {
  std::vector<std::string> stems;
  for (const fs::directory_entry& entry : fs::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(kSuffix)) continue;
    std::string stem = name.substr(0, name.size() - kSuffix.size());
    if (OfAlgorithmBuilt(stem)) stems.push_back(std::move(stem));
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

TEST(Counterexamples_Tables, EveryUndeclaredCellHasOne) {
  ASSERT_TRUE(kZooKeeperRegistered);
  ASSERT_TRUE(kEtcdRaftRegistered.ok()) << kEtcdRaftRegistered;
  const std::vector<std::string> stems = Stems();
  const std::vector<TableCell> cells = UndeclaredCells();
  EXPECT_GT(cells.size(), 100u);
  for (const TableCell& cell : cells) {
    EXPECT_TRUE(std::binary_search(stems.begin(), stems.end(), cell.stem()))
        << "no counterexample for " << cell.stem() << " (build/find-counterexamples --only " << cell.stem() << ")";
  }
  // And no file for a cell that is no longer "-".
  for (const std::string& stem : stems) {
    EXPECT_TRUE(std::any_of(cells.begin(), cells.end(), [&](const TableCell& cell) { return cell.stem() == stem; }))
        << stem << " backs no \"-\" in the tables";
  }
}

// One test over every file (read when it runs, so a new file needs no
// rebuild): each replays to the trace it recorded.
TEST(Counterexamples_Files, EachBreaksItsInvariantAloneUnderItsColumnsKind) {
  ASSERT_TRUE(kZooKeeperRegistered);
  ASSERT_TRUE(kEtcdRaftRegistered.ok()) << kEtcdRaftRegistered;
  for (const std::string& stem : Stems()) {
    SCOPED_TRACE(stem);
    const std::string path = (kDir / (stem + std::string(kSuffix))).string();
    auto text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status();
    auto repro = ParseRepro(*text, path);
    ASSERT_TRUE(repro.ok()) << repro.status();
    auto cell = CellOfCounterexample(stem, *repro);
    ASSERT_TRUE(cell.ok()) << cell.status();
    const absl::Status shape = CheckCounterexampleShape(*cell, *repro);
    EXPECT_TRUE(shape.ok()) << shape;

    auto result = RunScenario(repro->scenario, repro->seed);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->trace_hash, repro->trace_hash) << "the trace differs from the recorded one";
    EXPECT_EQ(result->violated_checkers(), std::vector<std::string>{cell->invariant});

    // With every safety checker on: nothing the table keeps under this kind breaks.
    Scenario every = repro->scenario;
    every.checkers = SafetyCheckers();
    RunOptions unhashed;
    unhashed.hash_trace = false;
    auto all = RunScenario(every, repro->seed, unhashed);
    ASSERT_TRUE(all.ok()) << all.status();
    const std::vector<std::string> fired = all->violated_checkers();
    for (const std::string& kept : JudgedInvariants(every, GuaranteesOf::kOptions)) {
      EXPECT_EQ(std::count(fired.begin(), fired.end(), kept), 0) << "also breaks " << kept << ", declared kept";
    }
  }
}

}  // namespace
}  // namespace electsim
