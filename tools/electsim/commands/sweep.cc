#include "tools/electsim/commands/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

namespace fs = std::filesystem;

// What a sweep keeps of one seed's run until its batch is reported: the
// verdict, which checkers fired, and for a failing seed what its report and
// repro need. Metrics and notes (50,000 of them in one run, if a scenario
// says so) are dropped as soon as the run ends.
struct SeedOutcome {
  enum class State : uint8_t { kNotRun, kPassed, kFailed, kError };
  State state = State::kNotRun;
  std::vector<uint16_t> fired;       // indices into Scenario::checkers
  std::optional<RunResult> failure;  // kFailed: without metrics and notes
  absl::Status error;                // kError
  std::string metrics_row;           // --metrics: its CSV row
};

// One scenario's sweep so far.
struct Tally {
  uint64_t ran = 0;
  uint64_t met = 0;
  uint64_t failed = 0;
  uint64_t repros = 0;
  std::vector<uint64_t> violation_seeds;  // per Scenario::checkers index
  std::vector<uint64_t> failing_seeds;    // --json: every failing seed
};

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "a signal";
  }
}

// "12/1000 seeds" on one rewritten line of a terminal, never into a file.
class Progress {
 public:
  Progress(const std::string& name, uint64_t total) : name_(name), total_(total), terminal_(isatty(STDERR_FILENO)) {}

  void SeedDone() {
    if (!terminal_) return;
    const uint64_t finished = done_.fetch_add(1) + 1;
    if (finished % 16 != 0 && finished != total_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::cerr << fmt::format("\r{}: {}/{} seeds", name_, finished, total_) << std::flush;
  }
  // Before a line of its own is printed (a failing seed, a summary).
  void Clear() {
    if (terminal_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  const std::string& name_;
  const uint64_t total_;
  const bool terminal_;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
};

class ScenarioSweep {
 public:
  ScenarioSweep(const Scenario& scenario, const SweepOptions& options, const std::vector<std::string>& inputs,
                CommandOutcome& outcome, AtomicOutputFile* metrics, nlohmann::json* json)
      : scenario_(scenario),
        options_(options),
        inputs_(inputs),
        outcome_(outcome),
        metrics_(metrics),
        json_(json),
        progress_(scenario.name, options.seeds) {
    tally_.violation_seeds.assign(scenario.checkers.size(), 0);
  }

  // Runs every seed unless stopped; returns the error that stopped it, if any.
  absl::Status Run() {
    // Batches bound what is held at once; 256 seeds per job keeps every job
    // busy between the reports.
    const uint64_t batch = uint64_t{256} * options_.jobs;
    for (uint64_t done = 0; done < options_.seeds && !Stopping(); done += batch) {
      std::vector<SeedOutcome> outcomes(std::min(batch, options_.seeds - done));
      RunBatch(options_.first_seed + done, outcomes);
      Report(options_.first_seed + done, outcomes);
    }
    progress_.Clear();
    PrintSummary();
    return error_;
  }

 private:
  bool Stopping() const { return stop_.load(std::memory_order_relaxed) || StopSignal() != 0; }

  void RequestStop() { stop_.store(true); }

  // Each simulation is single-threaded and independent; only this loop is
  // parallel. Workers never write files or stdout, so every signal is left to
  // the main thread.
  void RunBatch(uint64_t first, std::vector<SeedOutcome>& outcomes) {
    std::atomic<uint64_t> next{0};
    auto worker = [&] {
      RunOptions run_options;
      run_options.should_stop = [this] { return Stopping(); };
      run_options.hash_trace = false;  // a failing seed's repro runs it again, hashed
      while (!Stopping()) {
        const uint64_t i = next.fetch_add(1);
        if (i >= outcomes.size()) return;
        RunSeed(first + i, run_options, outcomes[i]);
        progress_.SeedDone();
      }
    };
    RunWorkers(options_.jobs, worker, [this] { RequestStop(); });
  }

  void RunSeed(uint64_t seed, const RunOptions& run_options, SeedOutcome& out) {
    try {
      auto result = RunScenario(scenario_, seed, run_options);
      if (!result.ok()) {
        if (absl::IsCancelled(result.status())) return;  // stopped: this seed did not run
        out.state = SeedOutcome::State::kError;
        out.error = result.status();
        RequestStop();
        return;
      }
      for (const checkers::Violation& violation : result->violations) {
        const auto it = std::lower_bound(scenario_.checkers.begin(), scenario_.checkers.end(), violation.checker);
        if (it != scenario_.checkers.end() && *it == violation.checker) {
          out.fired.push_back(static_cast<uint16_t>(it - scenario_.checkers.begin()));
        }
      }
      if (metrics_ != nullptr) out.metrics_row = MetricsCsvRow(scenario_, *result);
      if (result->met_expectations()) {
        out.state = SeedOutcome::State::kPassed;
        return;
      }
      out.state = SeedOutcome::State::kFailed;
      result->metrics = {};
      result->notes = {};
      out.failure = std::move(*result);
    } catch (const std::bad_alloc&) {
      out = SeedOutcome{};
      out.state = SeedOutcome::State::kError;
      out.error = absl::ResourceExhaustedError("out of memory");
      RequestStop();
    }
  }

  // Folds a batch into the tally in seed order, naming each failing seed and
  // writing the first ones' repros.
  void Report(uint64_t first, std::vector<SeedOutcome>& outcomes) {
    for (uint64_t i = 0; i < outcomes.size(); ++i) {
      SeedOutcome& out = outcomes[i];
      const uint64_t seed = first + i;
      switch (out.state) {
        case SeedOutcome::State::kNotRun: continue;
        case SeedOutcome::State::kError:
          if (error_.ok()) {
            progress_.Clear();
            // Runner errors name the scenario file already.
            std::string message(out.error.message());
            if (const std::string named = scenario_.source + ": "; message.rfind(named, 0) == 0) {
              message.erase(0, named.size());
            }
            error_ = absl::Status(out.error.code(), fmt::format("{} seed {}: {}", scenario_.source, seed, message));
          }
          continue;
        case SeedOutcome::State::kPassed:
        case SeedOutcome::State::kFailed: break;
      }
      ++tally_.ran;
      if (metrics_ != nullptr) metrics_->Write(out.metrics_row);
      for (uint16_t index : out.fired) ++tally_.violation_seeds[index];
      if (out.state == SeedOutcome::State::kPassed) {
        ++tally_.met;
        continue;
      }
      ReportFailure(seed, *out.failure);
      out.failure.reset();
    }
  }

  void ReportFailure(uint64_t seed, const RunResult& result) {
    ++tally_.failed;
    outcome_.Failed();
    progress_.Clear();
    std::string reasons;
    for (const std::string& failure : result.failed_expectations) {
      reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", failure);
    }
    if (options_.json_summary) tally_.failing_seeds.push_back(seed);
    Text() << fmt::format("{}: seed {} FAILED: {}; reproduce: {} run {} --seed {}\n", scenario_.name, seed, reasons,
                          ProgramName(), EscapeForTerminal(scenario_.source), seed);
    if (options_.repro_dir.empty() || tally_.repros >= options_.max_repros) return;
    RunOptions run_options;
    run_options.should_stop = [this] { return Stopping(); };
    auto hashed = RunAgainHashed(scenario_, seed, result, run_options);
    if (!hashed.ok()) {
      if (absl::IsCancelled(hashed.status())) return;  // stopped: no repro for this seed
      if (error_.ok()) error_ = hashed.status();
      RequestStop();
      return;
    }
    ++tally_.repros;
    const std::string path = ReproFilePath(options_.repro_dir, scenario_.name, seed);
    if (auto status = WriteReproFile(path, scenario_, *hashed, inputs_); !status.ok()) {
      Text() << std::flush;
      outcome_.CouldNotWrite(status);
      return;
    }
    Text() << fmt::format("  repro: {0} (replay: {1} replay {0})\n", EscapeForTerminal(path), ProgramName());
  }

  // Where the text lines go: standard output, or standard error under --json.
  std::ostream& Text() const { return options_.json_summary ? std::cerr : std::cout; }

  void PrintSummary() {
    if (options_.json_summary) {
      nlohmann::json violation_seeds = nlohmann::json::object();
      for (size_t i = 0; i < scenario_.checkers.size(); ++i)
        violation_seeds[scenario_.checkers[i]] = tally_.violation_seeds[i];
      json_->push_back(nlohmann::json{{"scenario", scenario_.name},
                                      {"source", scenario_.source},
                                      {"first_seed", options_.first_seed},
                                      {"seeds", options_.seeds},
                                      {"ran", tally_.ran},
                                      {"met", tally_.met},
                                      {"failed", tally_.failed},
                                      {"failing_seeds", tally_.failing_seeds},
                                      {"seeds_with_violation", violation_seeds},
                                      {"repros_written", tally_.repros}});
      return;
    }
    std::string violations;
    for (size_t i = 0; i < scenario_.checkers.size(); ++i) {
      violations +=
          fmt::format("{}{} {}", violations.empty() ? "" : ", ", scenario_.checkers[i], tally_.violation_seeds[i]);
    }
    std::string stopped;
    if (tally_.ran < options_.seeds) stopped = StopSignal() != 0 ? " INTERRUPTED" : " STOPPED";
    std::cout << fmt::format("{}: {} seeds ({}..{}){}, expectations met in {}/{}; seeds with a violation: {}\n",
                             scenario_.name, tally_.ran, options_.first_seed,
                             options_.first_seed + (options_.seeds - 1), stopped, tally_.met, tally_.ran, violations);
    if (tally_.failed > tally_.repros && !options_.repro_dir.empty()) {
      std::cout << fmt::format("  repro files written for the first {} of {} failing seeds (--max-repros {})\n",
                               tally_.repros, tally_.failed, options_.max_repros);
    }
    // A line at a time for whoever watches through a pipe.
    std::cout << std::flush;
  }

  const Scenario& scenario_;
  const SweepOptions& options_;
  const std::vector<std::string>& inputs_;
  CommandOutcome& outcome_;
  AtomicOutputFile* metrics_;
  nlohmann::json* json_;  // --json: the array of scenario summaries
  Progress progress_;
  Tally tally_;
  std::atomic<bool> stop_{false};
  absl::Status error_;
};

// The inputs and the files standard output and error go to, which no repro
// may replace.
std::vector<std::string> ProtectedFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> files = inputs;
  for (const char* stream : {"/dev/stdout", "/dev/stderr"}) {
    std::error_code ec;
    if (fs::is_regular_file(stream, ec)) files.emplace_back(stream);
  }
  return files;
}

// Refuses, before anything runs, a sweep whose repro files would replace an
// input, stdout's file or each other.
absl::Status CheckReproOutputs(const std::vector<Scenario>& scenarios, const SweepOptions& options,
                               const std::vector<std::string>& inputs) {
  if (auto status = CheckOutputDir(options.repro_dir); !status.ok()) return status;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (scenarios[i].name == scenarios[j].name) {
        return absl::InvalidArgumentError(fmt::format(
            "{} and {} are both named {}: their repro files would replace each other; expected distinct names "
            "(the file name, or \"name\")",
            scenarios[j].source, scenarios[i].source, scenarios[i].name));
      }
    }
  }
  std::error_code ec;
  if (!fs::is_directory(options.repro_dir, ec)) return absl::OkStatus();  // created later, empty until then
  const std::vector<std::string> protected_files = ProtectedFiles(inputs);
  const uint64_t last_seed = options.first_seed + (options.seeds - 1);
  // Existing names only: a repro replaces nothing but what is there, and a
  // symbolic link there would be written through to the file it names.
  for (const fs::directory_entry& entry : fs::directory_iterator(options.repro_dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const Scenario& scenario : scenarios) {
      const std::optional<uint64_t> seed = SeedOfReproFileName(name, scenario.name);
      if (!seed || *seed < options.first_seed || *seed > last_seed) continue;
      for (const std::string& file : protected_files) {
        if (!fs::equivalent(entry.path(), file, ec)) continue;
        const bool stream = file.rfind("/dev/", 0) == 0;
        return absl::InvalidArgumentError(fmt::format(
            "{}: the repro file of {} seed {} would replace {}; expected another --repro-dir", entry.path().string(),
            scenario.name, *seed, stream ? fmt::format("the file {} goes to", file.substr(5)) : file));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string MetricsCsvHeader() {
  return "scenario,seed,verdict,violations,elections,cause,detection_ns,election_ns,known_ns,max_term,"
         "messages_sent,messages_election,messages_steady_state,messages_application,election_messages,election_bytes,"
         "bytes_election,bytes_steady_state\n";
}

// The election measured is the last episode that followed a fault (the
// first one, if no leader was ever lost): the one a fault study asks about.
std::string MetricsCsvRow(const Scenario& scenario, const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  const checkers::Election* measured = m.elections.empty() ? nullptr : &m.elections.back();
  auto since = [&](const std::optional<sim::TimeNs>& time) {
    return measured != nullptr && time ? std::to_string((*time - measured->started).ns()) : std::string();
  };
  std::string violations;
  for (const std::string& name : result.violated_checkers()) violations += (violations.empty() ? "" : ";") + name;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", scenario.name, result.seed,
                     result.met_expectations() ? "met" : "failed", violations, m.elections.size(),
                     measured != nullptr ? measured->cause : "", since(measured ? measured->detected : std::nullopt),
                     since(measured ? measured->elected : std::nullopt),
                     since(measured ? measured->known : std::nullopt), m.max_term, m.messages_sent, m.messages_election,
                     m.messages_steady_state, m.messages_application,
                     measured != nullptr ? measured->election_messages : 0,
                     measured != nullptr ? measured->election_bytes : 0, m.bytes_election, m.bytes_steady_state);
}

int Sweep(const std::vector<std::string>& paths, const SweepOptions& options) {
  std::vector<Scenario> scenarios;
  for (const std::string& path : paths) {
    auto scenario = LoadScenarioFile(path, options.overrides);
    if (!scenario.ok()) return ReportError(scenario.status());
    scenarios.push_back(std::move(*scenario));
  }
  SweepOptions checked = options;
  checked.jobs = std::max(1u, options.jobs);
  if (checked.max_repros == 0) checked.repro_dir.clear();
  if (!checked.repro_dir.empty()) {
    if (auto status = CheckReproOutputs(scenarios, checked, paths); !status.ok()) return ReportError(status);
  }
  std::unique_ptr<AtomicOutputFile> metrics;
  if (!checked.metrics_path.empty()) {
    auto file = AtomicOutputFile::Open(checked.metrics_path, paths);
    if (!file.ok()) return ReportError(file.status());
    metrics = std::move(*file);
    metrics->Write(MetricsCsvHeader());
  }
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  CommandOutcome outcome;
  absl::Status error;
  nlohmann::json summaries = nlohmann::json::array();
  for (const Scenario& scenario : scenarios) {
    if (StopSignal() != 0) break;
    error = ScenarioSweep(scenario, checked, paths, outcome, metrics.get(), &summaries).Run();
    if (!error.ok()) break;
  }
  // The rows of the seeds that finished, even after a signal.
  if (metrics) {
    if (auto status = metrics->Commit(); !status.ok()) outcome.CouldNotWrite(status);
  }
  if (checked.json_summary) {
    bool all_met = true;
    for (const nlohmann::json& s : summaries) all_met = all_met && s["failed"] == 0 && s["ran"] == s["seeds"];
    std::cout << nlohmann::json{{"scenarios", summaries},
                                {"expectations_met", all_met && error.ok()},
                                {"interrupted", StopSignal() != 0}}
                     .dump()
              << "\n"
              << std::flush;
  }
  if (const int signal_number = StopSignal(); signal_number != 0) {
    (checked.json_summary ? std::cerr : std::cout)
        << fmt::format("interrupted by {}: results above cover the seeds that finished\n", SignalName(signal_number));
    outcome.Finish();
    return kExitSignalBase + signal_number;
  }
  if (!error.ok()) {
    const int status = ReportError(error);
    const int verdict = outcome.Finish();
    return status == kExitIncomplete && verdict == kExitFailed ? kExitFailed : status;  // a failed run wins
  }
  return outcome.Finish();
}

}  // namespace electsim
