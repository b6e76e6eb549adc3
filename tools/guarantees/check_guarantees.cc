// check-guarantees: runs every algorithm (its defaults, and each variant of
// its boolean and choice options that `electsim list` shows) under each fault
// kind alone, and under every combination of kinds it declares an invariant
// for, over many seeds, with every safety checker on and an unfenced
// resource. Prints, per algorithm and fault set, on how many seeds each
// invariant broke; a count in [brackets] is one the algorithm declares kept
// there, and must be 0. Exit status 1 when one is not. This is the evidence
// behind the declarations in each algorithm's guarantees(), and a check that
// they stay true.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/fuzz_judge.h"
#include "tools/electsim/guarantee_table.h"
#include "tools/electsim/runner.h"
#include "tools/electsim/scenario.h"
#include "tools/guarantees/fault_templates.h"

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

struct Case {
  const algorithms::Algorithm* algorithm;
  std::string variant;  // "defaults", or the options changed: deadline_clock "wall"
  FaultKinds kinds;
  std::string label;  // "none", "loss", "loss+partition"
  Scenario scenario;
  std::vector<std::string> declared;  // invariants declared kept under `kinds`
  std::map<std::string, uint64_t> broken_seeds;
  std::map<std::string, uint64_t> first_broken_seed;
};

std::string Label(FaultKinds kinds) {
  std::string label;
  for (FaultKind kind : algorithms::AllFaultKinds()) {
    if (kinds.Has(kind)) label += fmt::format("{}{}", label.empty() ? "" : "+", algorithms::FaultKindName(kind));
  }
  return label.empty() ? "none" : label;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (const GuaranteeVariant& variant : GuaranteeVariants(*algorithm)) {
      const algorithms::Guarantees declared = algorithm->guarantees(variant.values);
      if (declared.empty()) continue;  // a deliberate bug promises nothing to check
      std::vector<FaultKinds> sets = {FaultKinds()};
      for (FaultKind kind : algorithms::AllFaultKinds()) sets.push_back(FaultKinds{kind});
      // Each declaration also under all its kinds at once.
      for (const algorithms::Guarantee& g : declared) {
        if (std::find(sets.begin(), sets.end(), g.kept_under) == sets.end()) sets.push_back(g.kept_under);
      }
      for (FaultKinds kinds : sets) {
        Case c{.algorithm = algorithm, .variant = variant.label, .kinds = kinds, .label = Label(kinds)};
        const std::string name = fmt::format("guarantee-{}-{}", algorithm->name(), cases.size());
        const nlohmann::json doc = GuaranteeScenario(*algorithm, variant.options, kinds, name, &variant.values);
        auto scenario = ParseScenarioJson(doc, name + ".json");
        if (!scenario.ok()) {
          std::cerr << "check-guarantees: " << scenario.status().message() << "\n";
          std::exit(2);
        }
        c.scenario = std::move(*scenario);
        // What the fuzzer would judge the scenario by (drift past a declared
        // bound is a pause, and so on).
        c.declared = JudgedInvariants(c.scenario, GuaranteesOf::kOptions);
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace
}  // namespace electsim

int main(int argc, char** argv) {
  using namespace electsim;
  CLI::App app{"check-guarantees: sweep every algorithm under every fault kind and check its declared guarantees"};
  uint64_t seeds = 200;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string write_dir;
  app.add_option("--seeds", seeds, "seeds per algorithm and fault set")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--jobs", jobs, "parallel simulations")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--write-scenarios", write_dir, "also write the generated scenarios into DIR (to rerun one)");
  CLI11_PARSE(app, argc, argv);

  std::vector<Case> cases = Cases();
  if (!write_dir.empty()) {
    std::filesystem::create_directories(write_dir);
    for (const Case& c : cases) {
      std::ofstream(std::filesystem::path(write_dir) / (c.scenario.name + ".json"))
          << c.scenario.document.dump(2) << "\n";
    }
  }
  // (case, seed) tasks; each run is independent and single-threaded.
  const uint64_t total = cases.size() * seeds;
  std::vector<std::vector<std::string>> fired(total);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> errors{false};
  auto worker = [&] {
    for (uint64_t task = next.fetch_add(1); task < total; task = next.fetch_add(1)) {
      const Case& c = cases[task / seeds];
      auto result = RunScenario(c.scenario, 1 + task % seeds);
      if (!result.ok()) {
        std::cerr << fmt::format("check-guarantees: {} seed {}: {}\n", c.scenario.name, 1 + task % seeds,
                                 std::string(result.status().message()));
        errors = true;
        continue;
      }
      fired[task] = result->violated_checkers();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  const std::vector<std::string> invariants = SafetyCheckers();
  bool broken = false;
  size_t label_width = 12;
  for (const Case& c : cases) label_width = std::max(label_width, c.label.size());
  std::string header = fmt::format("{:<{}}", "fault kinds", label_width);
  for (const std::string& name : invariants) header += fmt::format(" {:>16}", name);
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    if (i == 0 || cases[i - 1].algorithm != c.algorithm || cases[i - 1].variant != c.variant) {
      std::cout << fmt::format(
          "{}, {} ({} seeds each; seeds that broke each invariant; [n]: declared kept, must be "
          "0)\n{}\n",
          c.algorithm->name(), c.variant, seeds, header);
    }
    for (uint64_t s = 0; s < seeds; ++s) {
      for (const std::string& name : fired[i * seeds + s]) {
        if (c.broken_seeds[name]++ == 0) c.first_broken_seed[name] = 1 + s;
      }
    }
    std::string line = fmt::format("{:<{}}", c.label, label_width);
    for (const std::string& name : invariants) {
      const bool declared = std::find(c.declared.begin(), c.declared.end(), name) != c.declared.end();
      const uint64_t count = c.broken_seeds[name];
      line += fmt::format(" {:>16}", declared ? fmt::format("[{}]", count) : fmt::format("{}", count));
      if (declared && count > 0) broken = true;
    }
    std::cout << line << "\n";
  }
  for (const Case& c : cases) {
    for (const std::string& name : c.declared) {
      auto it = c.first_broken_seed.find(name);
      if (it == c.first_broken_seed.end()) continue;
      std::cout << fmt::format(
          "BROKEN: {} ({}) declares {} under {}, broken first at seed {} (check-guarantees "
          "--write-scenarios DIR, then build/electsim run DIR/{}.json --seed {})\n",
          c.algorithm->name(), c.variant, name, c.label, it->second, c.scenario.name, it->second);
    }
  }
  if (errors) return 2;
  return broken ? 1 : 0;
}
