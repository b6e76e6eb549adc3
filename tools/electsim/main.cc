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
#include "tools/electsim/guarantee_table.h"
#include "tools/electsim/output_file.h"
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

// Opens the trace file a command was asked for (none when `path` is empty),
// refusing paths that would replace one of `inputs`, a folder or a device.
absl::StatusOr<std::unique_ptr<JsonlTraceWriter>> OpenTrace(const std::string& path,
                                                            const std::vector<std::string>& inputs) {
  if (path.empty()) return nullptr;
  return JsonlTraceWriter::Open(path, inputs);
}

// Commits the trace last, once every other output is written: a command that
// fails leaves no file behind.
int CommitTrace(JsonlTraceWriter* trace, int exit_status) {
  if (trace == nullptr) return exit_status;
  if (auto status = trace->Commit(); !status.ok()) return ReportError(status);
  return exit_status;
}

int Run(const std::string& path, std::optional<uint64_t> seed, const std::string& trace_path,
        const std::string& repro_dir, bool quiet) {
  auto scenario = LoadScenarioFile(path);
  if (!scenario.ok()) return ReportError(scenario.status());
  // Outputs are checked before the run, not found unwritable after it.
  if (!repro_dir.empty()) {
    if (auto status = CheckOutputDir(repro_dir); !status.ok()) return ReportError(status);
  }
  auto trace = OpenTrace(trace_path, {path});
  if (!trace.ok()) return ReportError(trace.status());
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  const uint64_t run_seed = seed.value_or(scenario->seed);
  auto result = RunScenario(*scenario, run_seed, options);
  if (!result.ok()) return ReportError(result.status());
  if (!quiet) std::cout << FormatSummary(*scenario, *result);
  if (!result->violations.empty() && !repro_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(repro_dir, ec);
    if (ec) return ReportError(absl::InvalidArgumentError(fmt::format("{}: cannot create: {}", repro_dir, ec.message())));
    const std::string repro_path =
        (std::filesystem::path(repro_dir) / fmt::format("{}-seed{}.repro.json", scenario->name, run_seed)).string();
    const std::string text = MakeRepro(*scenario, *result, repro_path).dump(2) + "\n";
    if (auto s = WriteFileAtomically(repro_path, text); !s.ok()) return ReportError(s);
    std::cout << fmt::format("repro: {} (replay: build/electsim replay {})\n", repro_path, repro_path);
  }
  if (!result->met_expectations()) {
    std::cout << fmt::format("reproduce: build/electsim run {} --seed {}\n", path, run_seed);
  }
  return CommitTrace(trace->get(), result->met_expectations() ? kExitOk : kExitFailed);
}

int Replay(const std::string& repro_path, const std::string& trace_path) {
  auto text = ReadFile(repro_path);
  if (!text.ok()) return ReportError(text.status());
  auto repro = ParseRepro(*text, repro_path);
  if (!repro.ok()) return ReportError(repro.status());
  auto trace = OpenTrace(trace_path, {repro_path});
  if (!trace.ok()) return ReportError(trace.status());
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  auto result = RunScenario(repro->scenario, repro->seed, options);
  if (!result.ok()) return ReportError(result.status());
  std::cout << FormatSummary(repro->scenario, *result);
  bool same = true;
  if (result->trace_hash == repro->trace_hash && result->trace_records == repro->trace_records) {
    std::cout << fmt::format("replay: trace hash matches the repro ({})\n", sim::FormatTraceHash(result->trace_hash));
  } else {
    std::cout << fmt::format("replay: trace DIFFERS: repro has {} over {} records, this run gave {} over {}\n",
                             sim::FormatTraceHash(repro->trace_hash), repro->trace_records,
                             sim::FormatTraceHash(result->trace_hash), result->trace_records);
    same = false;
  }
  if (result->violated_checkers() != repro->violations) {
    std::cout << "replay: the violations differ from the repro's\n";
    same = false;
  } else if (!repro->violations.empty()) {
    std::cout << "replay: the same violation reproduced\n";
  }
  return CommitTrace(trace->get(), same ? kExitOk : kExitFailed);
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
    std::cout << "    guarantees with these defaults, against a resource that checks no token (\"yes\": kept under any "
                 "mix of the fault kinds marked yes):\n"
              << FormatGuarantees(*algorithm, algorithms::OptionValues::Defaults(algorithm->options()), 4)
              << FormatGuaranteeChanges(*algorithm, 4);
  }
  std::cout << "checkers:\n";
  for (const auto& checker : checkers::AllCheckers()) {
    std::cout << fmt::format("  {:<16} {:<4} {}\n", checker.name, checker.on_by_default ? "on" : "off",
                             checker.summary);
  }
  std::cout << "  (\"on\" checkers run when a scenario lists none; liveness runs when a scenario has a liveness block)\n";
  return kExitOk;
}

// What a sweep found for one scenario so far.
struct SweepTally {
  uint64_t ran = 0;
  uint64_t met = 0;
  std::map<std::string, uint64_t> violation_seeds;  // checker -> seeds where it fired
  std::optional<uint64_t> first_failure;            // first seed with an unexpected violation
  std::string first_failure_reason;
  bool errors = false;
};

// Runs seeds [first, first + count) of `scenario` on `jobs` threads and adds
// them to `tally`. Each simulation is single-threaded and independent; only
// this loop is parallel.
void SweepBatch(const Scenario& scenario, uint64_t first, uint64_t count, unsigned jobs, uint64_t done_before,
                uint64_t total, SweepTally& tally) {
  std::vector<std::optional<RunResult>> results(count);
  std::vector<std::string> errors(count);
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> done{0};
  std::mutex progress_mutex;
  const bool terminal = isatty(STDERR_FILENO);
  auto worker = [&] {
    while (!g_interrupted.load()) {
      const uint64_t i = next.fetch_add(1);
      if (i >= count) return;
      auto result = RunScenario(scenario, first + i);
      if (result.ok()) {
        results[i] = std::move(*result);
      } else {
        errors[i] = std::string(result.status().message());
      }
      const uint64_t finished = done_before + done.fetch_add(1) + 1;
      if (terminal && (finished % 16 == 0 || finished == total)) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        std::cerr << fmt::format("\r{}: {}/{} seeds", scenario.name, finished, total) << std::flush;
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < std::max(1u, jobs); ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  for (uint64_t i = 0; i < count; ++i) {
    if (!errors[i].empty()) {
      std::cerr << fmt::format("electsim: {} seed {}: {}\n", scenario.source, first + i, errors[i]);
      tally.errors = true;
      continue;
    }
    if (!results[i]) continue;  // interrupted before this seed ran
    ++tally.ran;
    for (const std::string& name : results[i]->violated_checkers()) ++tally.violation_seeds[name];
    // A sweep fails on violations the scenario does not expect; an expected
    // violation that some seed does not show is reported but not a failure.
    bool unexpected = false;
    for (const std::string& failure : results[i]->failed_expectations) {
      if (failure.rfind("unexpected ", 0) == 0) unexpected = true;
    }
    if (results[i]->met_expectations()) ++tally.met;
    if (unexpected && !tally.first_failure) {
      tally.first_failure = first + i;
      tally.first_failure_reason = results[i]->failed_expectations.front();
    }
  }
}

// Runs seeds [first_seed, first_seed + count) of each scenario. Results are
// folded into a tally batch by batch, so memory does not grow with the count.
int Sweep(const std::vector<std::string>& paths, uint64_t first_seed, uint64_t count, unsigned jobs) {
  std::vector<Scenario> scenarios;
  for (const std::string& path : paths) {
    auto scenario = LoadScenarioFile(path);
    if (!scenario.ok()) return ReportError(scenario.status());
    scenarios.push_back(std::move(*scenario));
  }
  std::signal(SIGINT, OnInterrupt);
  const uint64_t batch = uint64_t{256} * std::max(1u, jobs);
  bool any_failed = false;
  for (size_t s = 0; s < scenarios.size() && !g_interrupted.load(); ++s) {
    const Scenario& scenario = scenarios[s];
    SweepTally tally;
    for (uint64_t done = 0; done < count && !g_interrupted.load(); done += batch) {
      SweepBatch(scenario, first_seed + done, std::min(batch, count - done), jobs, done, count, tally);
    }
    if (isatty(STDERR_FILENO)) std::cerr << "\r\033[K";
    any_failed |= tally.errors;

    std::string violations;
    for (const auto& name : scenario.checkers) {
      violations += fmt::format("{}{} {}", violations.empty() ? "" : ", ", name, tally.violation_seeds[name]);
    }
    std::cout << fmt::format("{}: {} seeds ({}..{}){}, expectations met in {}/{}; seeds with a violation: {}\n",
                             scenario.name, tally.ran, first_seed, first_seed + count - 1,
                             tally.ran < count ? " INTERRUPTED" : "", tally.met, tally.ran, violations);
    if (tally.first_failure) {
      any_failed = true;
      std::cout << fmt::format("  FAILED: {} at seed {}; reproduce: build/electsim run {} --seed {}\n",
                               tally.first_failure_reason, *tally.first_failure, scenario.source,
                               *tally.first_failure);
    }
    // A demonstration scenario must demonstrate: its expected violation has to
    // show up under at least one of the seeds.
    for (const std::string& name : scenario.expect.violations) {
      if (tally.ran > 0 && tally.violation_seeds[name] == 0) {
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
// without a word, and reads " 3" as 3, so counts and seeds are checked as text
// (decimal digits only, within range) before they are converted.
CLI::Validator UnsignedText(std::string what, uint64_t min, uint64_t max) {
  return CLI::Validator(
      [what, min, max](const std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit);
        if (!digits_only || error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("expected {}: an integer in [{}, {}], got \"{}\"", what, min, max, text);
        }
        return "";
      },
      "UINT");
}

int main(int argc, char** argv) {
  CLI::App app{"electsim: deterministic simulation testbed for leader-election algorithms"};
  app.require_subcommand(1);

  std::string scenario_path, trace_path, repro_dir = ".", repro_path;
  std::optional<uint64_t> seed;
  bool quiet = false;
  auto* run = app.add_subcommand("run", "run a scenario under a seed and check its invariants");
  run->add_option("scenario", scenario_path, "scenario file (JSON)")->required();
  run->add_option("--seed", seed, "seed (default: the scenario's)")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max()));
  run->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE");
  run->add_option("--repro-dir", repro_dir, "where a violating run writes its repro file (\"\": none)")
      ->capture_default_str();
  run->add_flag("--quiet", quiet, "print nothing but repro and reproduce lines");

  auto* replay = app.add_subcommand("replay", "re-run a repro file and check its trace hash");
  replay->add_option("repro", repro_path, "repro file written by run")->required();
  replay->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE");

  app.add_subcommand("list", "show algorithms with their options and guarantees, and checkers");

  std::vector<std::string> sweep_paths;
  uint64_t first_seed = 1, seeds = 100;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* sweep = app.add_subcommand("sweep", "run many seeds of scenarios; fail on any unexpected violation");
  sweep->add_option("scenarios", sweep_paths, "scenario files")->required();
  sweep->add_option("--seeds", seeds, "how many seeds")
      ->check(UnsignedText("a number of seeds", 1, 100000000))
      ->capture_default_str();
  sweep->add_option("--first-seed", first_seed, "first seed")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  sweep->add_option("--jobs", jobs, "parallel simulations")
      ->check(UnsignedText("a number of jobs", 1, 256))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "electsim: " << error.what() << "\n" << "run 'electsim --help' for usage\n";
    return 2;
  }
  if (run->parsed() || replay->parsed()) electsim::RemoveTemporaryFilesOnInterrupt();
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
