// electsim: the command-line front end. All file and terminal I/O lives here
// and in tools/electsim/*; the simulation below it never touches either.
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "CLI/CLI.hpp"
#include "algorithms/algorithm.h"
#include "checkers/checker.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/trace.h"
#include "tools/electsim/duration.h"
#include "tools/electsim/report.h"
#include "tools/electsim/runner.h"
#include "tools/electsim/scenario.h"

namespace electsim {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;   // a violation the scenario did not expect, or an expectation not met
constexpr int kExitBadInput = 2;
constexpr int kExitInterrupted = 130;  // the shell's convention for SIGINT

int ReportError(const absl::Status& status) {
  std::cerr << "electsim: " << status.message() << "\n";
  return status.code() == absl::StatusCode::kInternal ? kExitFailed : kExitBadInput;
}

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted.store(true); }

// Runs one scenario, optionally streaming its trace, and returns the result.
absl::StatusOr<RunResult> RunWithTrace(const Scenario& scenario, uint64_t seed, const std::string& trace_path) {
  RunOptions options;
  std::unique_ptr<sim::JsonlTraceWriter> writer;
  if (!trace_path.empty()) {
    auto opened = sim::JsonlTraceWriter::Open(trace_path);
    if (!opened.ok()) return opened.status();
    writer = std::move(*opened);
    options.extra_sinks.push_back(writer.get());
  }
  auto result = RunScenario(scenario, seed, options);
  if (!result.ok()) return result.status();  // the writer's destructor removes its temp file
  if (writer) {
    if (auto s = writer->Commit(); !s.ok()) return s;
  }
  return result;
}

int Run(const std::string& path, std::optional<uint64_t> seed, const std::string& trace_path,
        const std::string& repro_dir, bool quiet) {
  auto scenario = LoadScenarioFile(path);
  if (!scenario.ok()) return ReportError(scenario.status());
  const uint64_t run_seed = seed.value_or(scenario->seed);
  auto result = RunWithTrace(*scenario, run_seed, trace_path);
  if (!result.ok()) return ReportError(result.status());
  if (!quiet) std::cout << FormatSummary(*scenario, *result);
  if (!result->violations.empty() && !repro_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(repro_dir, ec);
    const std::string repro_path =
        (std::filesystem::path(repro_dir) / fmt::format("{}-seed{}.repro.json", scenario->name, run_seed)).string();
    const std::string text = MakeRepro(*scenario, *result, repro_path).dump(2) + "\n";
    if (auto s = sim::WriteFileAtomically(repro_path, text); !s.ok()) return ReportError(s);
    std::cout << fmt::format("repro: {} (replay: build/electsim replay {})\n", repro_path, repro_path);
  }
  if (!result->met_expectations()) {
    std::cout << fmt::format("reproduce: build/electsim run {} --seed {}\n", path, run_seed);
  }
  return result->met_expectations() ? kExitOk : kExitFailed;
}

int Replay(const std::string& repro_path, const std::string& trace_path) {
  auto text = ReadFile(repro_path);
  if (!text.ok()) return ReportError(text.status());
  nlohmann::json repro;
  try {
    repro = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& error) {  // parse errors, numbers out of range
    return ReportError(absl::InvalidArgumentError(fmt::format("{}: invalid JSON: {}", repro_path, error.what())));
  }
  auto bad = [&](const std::string& where, const std::string& expected) {
    return ReportError(absl::InvalidArgumentError(fmt::format("{}: at {}: expected {}", repro_path, where, expected)));
  };
  if (!repro.is_object()) return bad("/", "a repro object");
  if (!repro.contains("seed") || !repro["seed"].is_number_unsigned()) return bad("/seed", "a non-negative integer");
  if (!repro.contains("trace_hash") || !repro["trace_hash"].is_string()) return bad("/trace_hash", "a string \"0x...\"");
  if (!repro.contains("scenario") || !repro["scenario"].is_object()) return bad("/scenario", "the scenario object");
  auto scenario = ParseScenarioJson(repro["scenario"], repro_path + "#/scenario");
  if (!scenario.ok()) return ReportError(scenario.status());
  if (repro.contains("scenario_file") && repro["scenario_file"].is_string()) {
    scenario->name = std::filesystem::path(repro["scenario_file"].get<std::string>()).stem().string();
  }
  const uint64_t seed = repro["seed"].get<uint64_t>();
  auto result = RunWithTrace(*scenario, seed, trace_path);
  if (!result.ok()) return ReportError(result.status());
  std::cout << FormatSummary(*scenario, *result);
  const std::string expected_hash = repro["trace_hash"].get<std::string>();
  const std::string actual_hash = sim::FormatTraceHash(result->trace_hash);
  std::vector<std::string> expected_violations;
  if (repro.contains("violations") && repro["violations"].is_array()) {
    for (const auto& v : repro["violations"]) {
      if (v.is_object() && v.contains("checker") && v["checker"].is_string()) {
        expected_violations.push_back(v["checker"].get<std::string>());
      }
    }
  }
  std::sort(expected_violations.begin(), expected_violations.end());
  bool ok = true;
  if (actual_hash == expected_hash) {
    std::cout << fmt::format("replay: trace hash matches the repro ({})\n", actual_hash);
  } else {
    std::cout << fmt::format("replay: trace hash DIFFERS: repro has {}, this run gave {}\n", expected_hash, actual_hash);
    ok = false;
  }
  if (result->violated_checkers() != expected_violations) {
    std::cout << "replay: the violations differ from the repro's\n";
    ok = false;
  } else if (!expected_violations.empty()) {
    std::cout << "replay: the same violation reproduced\n";
  }
  return ok ? kExitOk : kExitFailed;
}

int List() {
  std::cout << "algorithms:\n";
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    std::cout << fmt::format("  {}{}: {}\n", algorithm->name(), algorithm->uses_store() ? " (uses a store)" : "",
                             algorithm->summary());
    for (const algorithms::OptionSpec& option : algorithm->options()) {
      const std::string range = option.RangeText();
      std::cout << fmt::format("    {:<22} {:<12} default {:<10}{} {}\n", option.name,
                               algorithms::OptionTypeName(option.type), option.DefaultText(),
                               range.empty() ? "" : fmt::format(" [{}]", range), option.help);
    }
  }
  std::cout << "checkers:\n";
  for (const auto& checker : checkers::AllCheckers()) {
    std::cout << fmt::format("  {:<16} {:<4} {}\n", checker.name, checker.on_by_default ? "on" : "off",
                             checker.summary);
  }
  std::cout << "  (\"on\" checkers run when a scenario lists none; liveness runs when a scenario has a liveness block)\n";
  return kExitOk;
}

// Runs seeds [first, first + count) of each scenario on `jobs` threads. Each
// simulation is single-threaded and independent; only this loop is parallel.
int Sweep(const std::vector<std::string>& paths, uint64_t first_seed, uint64_t count, unsigned jobs) {
  std::vector<Scenario> scenarios;
  for (const std::string& path : paths) {
    auto scenario = LoadScenarioFile(path);
    if (!scenario.ok()) return ReportError(scenario.status());
    scenarios.push_back(std::move(*scenario));
  }
  std::signal(SIGINT, OnInterrupt);
  const bool terminal = isatty(STDERR_FILENO);
  bool any_failed = false;
  for (size_t s = 0; s < scenarios.size() && !g_interrupted.load(); ++s) {
    const Scenario& scenario = scenarios[s];
    std::vector<std::optional<RunResult>> results(count);
    std::vector<std::string> errors(count);
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> done{0};
    std::mutex progress_mutex;
    auto worker = [&] {
      while (!g_interrupted.load()) {
        const uint64_t i = next.fetch_add(1);
        if (i >= count) return;
        auto result = RunScenario(scenario, first_seed + i);
        if (result.ok()) {
          results[i] = std::move(*result);
        } else {
          errors[i] = std::string(result.status().message());
        }
        const uint64_t finished = done.fetch_add(1) + 1;
        if (terminal && (finished % 16 == 0 || finished == count)) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          std::cerr << fmt::format("\r{}: {}/{} seeds", scenario.name, finished, count) << std::flush;
        }
      }
    };
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < std::max(1u, jobs); ++j) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (terminal) std::cerr << "\r\033[K";

    uint64_t ran = 0, met = 0;
    std::map<std::string, uint64_t> violation_seeds;
    std::optional<uint64_t> first_failure;
    std::string first_failure_reason;
    for (uint64_t i = 0; i < count; ++i) {
      if (!errors[i].empty()) {
        std::cerr << fmt::format("electsim: {} seed {}: {}\n", scenario.source, first_seed + i, errors[i]);
        any_failed = true;
        continue;
      }
      if (!results[i]) continue;  // interrupted before this seed ran
      ++ran;
      for (const std::string& name : results[i]->violated_checkers()) ++violation_seeds[name];
      // A sweep fails on violations the scenario does not expect; an expected
      // violation that some seed does not show is reported but not a failure.
      bool unexpected = false;
      for (const std::string& failure : results[i]->failed_expectations) {
        if (failure.rfind("unexpected ", 0) == 0) unexpected = true;
      }
      if (results[i]->met_expectations()) ++met;
      if (unexpected && !first_failure) {
        first_failure = first_seed + i;
        first_failure_reason = results[i]->failed_expectations.front();
      }
    }
    std::string violations;
    for (const auto& name : scenario.checkers) {
      violations += fmt::format("{}{} {}", violations.empty() ? "" : ", ", name, violation_seeds[name]);
    }
    std::cout << fmt::format("{}: {} seeds ({}..{}){}, expectations met in {}/{}; seeds with a violation: {}\n",
                             scenario.name, ran, first_seed, first_seed + count - 1,
                             ran < count ? " INTERRUPTED" : "", met, ran, violations);
    if (first_failure) {
      any_failed = true;
      std::cout << fmt::format("  FAILED: {} at seed {}; reproduce: build/electsim run {} --seed {}\n",
                               first_failure_reason, *first_failure, scenario.source, *first_failure);
    }
    // A demonstration scenario must demonstrate: its expected violation has to
    // show up under at least one of the seeds.
    for (const std::string& name : scenario.expect.violations) {
      if (ran > 0 && violation_seeds[name] == 0) {
        any_failed = true;
        std::cout << fmt::format("  FAILED: the scenario expects a {} violation and no seed showed one\n", name);
      }
    }
  }
  if (g_interrupted.load()) {
    std::cout << "interrupted: results above cover the seeds that finished\n";
    return kExitInterrupted;
  }
  return any_failed ? kExitFailed : kExitOk;
}

}  // namespace
}  // namespace electsim

// CLI11 2.1 turns "-3" into 2^64-3 and "18446744073709551616" into 2^64-1
// without a word, so a seed is checked as text before it is converted.
const CLI::Validator kSeedText(
    [](const std::string& text) -> std::string {
      uint64_t value = 0;
      const char* end = text.data() + text.size();
      const auto [stop, error] = std::from_chars(text.data(), end, value);
      if (text.empty() || error != std::errc() || stop != end) {
        return fmt::format("expected a seed: an integer in [0, {}], got \"{}\"", std::numeric_limits<uint64_t>::max(),
                           text);
      }
      return "";
    },
    "SEED");

int main(int argc, char** argv) {
  CLI::App app{"electsim: deterministic simulation testbed for leader-election algorithms"};
  app.require_subcommand(1);

  std::string scenario_path, trace_path, repro_dir = ".", repro_path;
  std::optional<uint64_t> seed;
  bool quiet = false;
  auto* run = app.add_subcommand("run", "run a scenario under a seed and check its invariants");
  run->add_option("scenario", scenario_path, "scenario file (JSON)")->required();
  run->add_option("--seed", seed, "seed (default: the scenario's)")->check(kSeedText);
  run->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE");
  run->add_option("--repro-dir", repro_dir, "where a violating run writes its repro file")->capture_default_str();
  run->add_flag("--quiet", quiet, "print nothing but repro and reproduce lines");

  auto* replay = app.add_subcommand("replay", "re-run a repro file and check its trace hash");
  replay->add_option("repro", repro_path, "repro file written by run")->required();
  replay->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE");

  app.add_subcommand("list", "show algorithms with their options, and checkers");

  std::vector<std::string> sweep_paths;
  uint64_t first_seed = 1, seeds = 100;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* sweep = app.add_subcommand("sweep", "run many seeds of scenarios; fail on any unexpected violation");
  sweep->add_option("scenarios", sweep_paths, "scenario files")->required();
  sweep->add_option("--seeds", seeds, "how many seeds")->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))->capture_default_str();
  sweep->add_option("--first-seed", first_seed, "first seed")->check(kSeedText)->capture_default_str();
  sweep->add_option("--jobs", jobs, "parallel simulations")->check(CLI::Range(1u, 256u))->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "electsim: " << error.what() << "\n" << "run 'electsim --help' for usage\n";
    return 2;
  }
  if (run->parsed()) return electsim::Run(scenario_path, seed, trace_path, repro_dir, quiet);
  if (replay->parsed()) return electsim::Replay(repro_path, trace_path);
  if (sweep->parsed()) {
    if (first_seed > std::numeric_limits<uint64_t>::max() - (seeds - 1)) {
      std::cerr << fmt::format("electsim: --first-seed {} with --seeds {} runs past the largest seed {}\n", first_seed,
                               seeds, std::numeric_limits<uint64_t>::max());
      return 2;
    }
    return electsim::Sweep(sweep_paths, first_seed, seeds, jobs);
  }
  return electsim::List();
}
