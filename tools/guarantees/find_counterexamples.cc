// find-counterexamples: writes, for every "-" in the guarantee tables that
// `electsim list` prints (UndeclaredCells), a small run that breaks that
// invariant under faults of that kind (and of kinds the invariant is kept
// under, TableCell::Backs), to DIR/STEM.repro.json, unless
// the file is there already. Where one comes from, in this order:
//
// 1. DIR/scenarios/STEM.json, a scenario written by hand for the cell, tried
//    under seeds 1..--hand-seeds (some cells need a timing only a scenario
//    built for it reaches: a grant held by a pause, drift against options
//    that leave little room);
// 2. check-guarantees' scenario for the kind, seeds 1..--template-seeds;
// 3. electsim fuzz's generator with that kind alone, then with it and the
//    kinds the invariant is kept under, seeds 1..--seeds each;
//
// then shrunk (electsim shrink's search, --shrink-runs runs) unless it was
// written by hand. The file runs the one checker of its cell and expects it
// to fire. A candidate that also breaks an invariant the table declares
// kept is a false "yes": it is reported and the exit status is 1. Cells left
// without a counterexample are listed (exit status 1 as well).
#include <atomic>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/engine/scenario_generator.h"
#include "tools/electsim/engine/shrink.h"
#include "tools/electsim/external/external_algorithm.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/language/json_document.h"
#include "tools/guarantees/counterexamples.h"
#include "zookeeper_election.h"

namespace electsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Settings {
  std::string dir = "results/counterexamples";
  std::string only;
  uint64_t hand_seeds = 2000;
  uint64_t template_seeds = 200;
  uint64_t seeds = 3000;
  uint64_t shrink_runs = 3000;
  unsigned jobs = 2;
};

// One way of making candidate scenarios for a cell: a document per seed.
struct Source {
  std::string name;
  uint64_t seeds = 0;
  bool shrink = true;
  std::function<json(uint64_t seed)> document;
};

struct Hit {
  json document;
  uint64_t seed = 0;
  std::string source;
};

std::atomic<bool> false_yes{false};

// Whether `document` under `seed` breaks the cell's invariant with faults of
// the cell's kind alone, and no invariant the table keeps there.
bool Breaks(const TableCell& cell, const json& document, uint64_t seed) {
  auto scenario = ParseScenarioJson(document, cell.stem() + ".json");
  if (!scenario.ok()) return false;
  if (!cell.Backs(FaultKindsInPlay(*scenario))) return false;
  RunOptions unhashed;
  unhashed.hash_trace = false;
  auto result = RunScenario(*scenario, seed, unhashed);
  if (!result.ok()) return false;
  const std::vector<std::string> fired = result->violated_checkers();
  for (const std::string& kept : JudgedInvariants(*scenario, GuaranteesOf::kOptions)) {
    if (std::find(fired.begin(), fired.end(), kept) != fired.end()) {
      std::cout << fmt::format("FALSE YES: {} breaks {}, declared kept under {} (seed {}):\n{}\n", cell.stem(), kept,
                               cell.column(), seed, document.dump());
      false_yes = true;
      return false;
    }
  }
  return std::find(fired.begin(), fired.end(), cell.invariant) != fired.end();
}

// The first seed of `source`, in seed order, whose run breaks the cell.
std::optional<Hit> Search(const TableCell& cell, const Source& source, unsigned jobs) {
  constexpr uint64_t kBatch = 64;
  for (uint64_t first = 1; first <= source.seeds; first += kBatch) {
    const uint64_t last = std::min(source.seeds, first + kBatch - 1);
    std::vector<char> broke(last - first + 1, 0);
    std::vector<json> documents(broke.size());
    std::atomic<uint64_t> next{first};
    auto worker = [&] {
      for (uint64_t seed = next++; seed <= last; seed = next++) {
        documents[seed - first] = source.document(seed);
        broke[seed - first] = Breaks(cell, documents[seed - first], seed) ? 1 : 0;
      }
    };
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
    for (uint64_t seed = first; seed <= last; ++seed) {
      if (broke[seed - first]) return Hit{documents[seed - first], seed, source.name};
    }
  }
  return std::nullopt;
}

std::vector<Source> SourcesFor(const TableCell& cell, const Settings& settings) {
  std::vector<Source> sources;
  const fs::path hand = fs::path(settings.dir) / "scenarios" / (cell.stem() + ".json");
  if (fs::exists(hand)) {
    auto text = ReadFile(hand.string());
    auto parsed = text.ok() ? ParseJsonText(*text, hand.string()) : text.status();
    if (!parsed.ok()) {
      std::cerr << "find-counterexamples: " << parsed.status().message() << "\n";
      std::exit(2);
    }
    json document = *parsed;
    document["checkers"] = SafetyCheckers();  // judged as the other sources are
    sources.push_back({hand.string(), settings.hand_seeds, false, [document](uint64_t) { return document; }});
  }
  const algorithms::Algorithm& algorithm = *cell.algorithm;
  const GuaranteeVariant variant = cell.variant;
  sources.push_back({"check-guarantees' scenario", settings.template_seeds, true,
                     [&algorithm, variant, kinds = cell.kinds()](uint64_t) {
                       return GuaranteeScenario(algorithm, variant.options, kinds, "candidate", &variant.values);
                     }});
  if (cell.kind) {
    // The kind alone, then with the kinds the invariant is kept under.
    for (const algorithms::FaultKinds kinds : {cell.kinds(), cell.allowed()}) {
      GeneratorSettings generator;
      generator.fault_kinds = kinds;
      sources.push_back({kinds == cell.kinds() ? "electsim fuzz's generator"
                                               : fmt::format("electsim fuzz's generator with {}", FaultKindList(kinds)),
                         settings.seeds, true, [&algorithm, variant, generator](uint64_t seed) {
                           return GenerateScenario(algorithm, variant.options, variant.values, seed, generator);
                         }});
      if (cell.allowed() == cell.kinds()) break;
    }
  }
  return sources;
}

// The counterexample file's scenario: its one checker, expected to fire.
json Finished(const TableCell& cell, json document, const std::string& origin) {
  document["name"] = cell.stem();
  document["description"] =
      fmt::format("{} does not keep {} under {}{}: {}.", cell.algorithm->name(), cell.invariant, cell.column(),
                  cell.variant.slug.empty() ? "" : fmt::format(" ({})", cell.variant.label), origin);
  document["checkers"] = {cell.invariant};
  document["expect"] = {{"violations", {cell.invariant}}};
  document.erase("liveness");
  document.erase("seed");
  return document;
}

bool Write(const TableCell& cell, const Hit& hit, const Settings& settings) {
  json document = hit.document;
  uint64_t seed = hit.seed;
  std::string origin = fmt::format("{}, seed {}", hit.source, hit.seed);
  if (hit.source.find("scenarios/") == std::string::npos) {
    auto shrunk = ShrinkScenario(document, cell.stem(), seed, cell.invariant, settings.shrink_runs);
    if (shrunk.ok()) {
      document = shrunk->document;
      seed = shrunk->result.seed;
      origin += ", shrunk";
    }
  } else {
    origin = fmt::format("written by hand (scenarios/{}.json), seed {}", cell.stem(), seed);
  }
  auto scenario = ParseScenarioJson(Finished(cell, document, origin), cell.stem() + ".json");
  if (!scenario.ok()) {
    std::cerr << "find-counterexamples: " << cell.stem() << ": " << scenario.status().message() << "\n";
    return false;
  }
  scenario->source =
      hit.source.find("scenarios/") == std::string::npos ? "generated by find-counterexamples" : hit.source;
  auto result = RunScenario(*scenario, seed);
  if (!result.ok() || result->violated_checkers() != std::vector<std::string>{cell.invariant} ||
      !cell.Backs(FaultKindsInPlay(*scenario))) {
    std::cerr << "find-counterexamples: " << cell.stem() << ": the finished scenario does not break it alone\n";
    return false;
  }
  const std::string path = (fs::path(settings.dir) / (cell.stem() + ".repro.json")).string();
  // The replay line names the binary that knows the algorithm.
  SetProgramName(cell.algorithm->name() == "zookeeper" ? "build/zk-electsim" : "build/electsim");
  if (auto status = WriteReproFile(path, *scenario, *result, {}, {}); !status.ok()) {
    std::cerr << "find-counterexamples: " << status.message() << "\n";
    return false;
  }
  std::cout << fmt::format("wrote {} ({})\n", path, origin);
  return true;
}

}  // namespace
}  // namespace electsim

int main(int argc, char** argv) {
  using namespace electsim;
  if (const absl::Status status = algorithms::RegisterAlgorithm(zookeeper::ZooKeeperElection()); !status.ok()) {
    std::cerr << "find-counterexamples: " << status.message() << "\n";
    return 2;
  }
  // Algorithms over the step protocol have tables too (etcd-raft, in
  // build/algorithms.d beside this program, as beside build/electsim).
  if (const absl::Status status = external::RegisterExternalAlgorithms(); !status.ok()) {
    std::cerr << "find-counterexamples: " << status.message() << "\n";
    return 2;
  }
  CLI::App app{"find-counterexamples: a counterexample for every \"-\" in the guarantee tables"};
  Settings settings;
  bool list = false;
  app.add_option("--dir", settings.dir, "where the counterexamples are")->capture_default_str();
  app.add_option("--only", settings.only, "only the cells whose name contains this");
  app.add_option("--hand-seeds", settings.hand_seeds, "seeds of a hand-written scenario")->capture_default_str();
  app.add_option("--template-seeds", settings.template_seeds, "seeds of check-guarantees' scenario")
      ->capture_default_str();
  app.add_option("--seeds", settings.seeds, "seeds of the fuzz generator")->capture_default_str();
  app.add_option("--shrink-runs", settings.shrink_runs, "runs spent shrinking each")->capture_default_str();
  app.add_option("--jobs", settings.jobs, "parallel simulations")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_flag("--list", list, "list the cells and whether each has its file; search nothing");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> missing;
  for (const TableCell& cell : UndeclaredCells()) {
    if (cell.stem().find(settings.only) == std::string::npos) continue;
    const bool have = std::filesystem::exists(std::filesystem::path(settings.dir) / (cell.stem() + ".repro.json"));
    if (list) {
      std::cout << fmt::format("{} {}\n", have ? "have   " : "MISSING", cell.stem());
      continue;
    }
    if (have) continue;
    bool written = false;
    for (const Source& source : SourcesFor(cell, settings)) {
      if (std::optional<Hit> hit = Search(cell, source, settings.jobs)) {
        written = Write(cell, *hit, settings);
        if (written) break;
      }
    }
    if (!written) {
      std::cout << fmt::format("none found for {}\n", cell.stem());
      missing.push_back(cell.stem());
    }
  }
  for (const std::string& stem : missing) std::cout << "MISSING " << stem << "\n";
  return false_yes || !missing.empty() ? 1 : 0;
}
