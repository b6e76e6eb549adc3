#include "tools/electsim/commands/fuzz.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <set>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/engine/shrink.h"
#include "tools/electsim/export/html_timeline.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/overrides.h"

namespace electsim {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// --- configuration --------------------------------------------------------

// What every seed of one fuzz run shares.
struct FuzzConfig {
  const algorithms::Algorithm* algorithm = nullptr;
  json options = json::object();
  algorithms::OptionValues values;
  std::vector<Override> overrides;  // --set, applied to every generated document
  std::string flags;                // the command-line flags that generate the same scenarios
};

std::string SecondsText(sim::TimeNs t) { return sim::FormatDuration(t); }

absl::StatusOr<FuzzConfig> Configure(const FuzzOptions& options) {
  FuzzConfig config;
  std::string names;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", algorithm->name());
    if (algorithm->name() == options.algorithm) config.algorithm = algorithm;
  }
  if (config.algorithm == nullptr) {
    return InputError(
        fmt::format("--algorithm: expected one of {}; got \"{}\"", names, EscapeForTerminal(options.algorithm)));
  }
  config.flags = fmt::format("--algorithm {}", config.algorithm->name());
  for (const std::string& pair : options.options) {
    const size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) {
      return InputError(fmt::format("--option: expected NAME=VALUE; got \"{}\"", EscapeForTerminal(pair)));
    }
    const std::string name = pair.substr(0, equals), text = pair.substr(equals + 1);
    // true, 3, 0.5 as JSON; 150ms, vote_twice as strings.
    json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = text;
    config.options[name] = value;
    config.flags += fmt::format(" --option {}", pair);
  }
  const GeneratorSettings defaults;
  const GeneratorSettings& g = options.generator;
  if (g.fencing) config.flags += " --fencing";
  if (g.nodes_min != defaults.nodes_min || g.nodes_max != defaults.nodes_max) {
    config.flags += fmt::format(" --nodes {}..{}", g.nodes_min, g.nodes_max);
  }
  if (g.duration_min != defaults.duration_min || g.duration_max != defaults.duration_max) {
    config.flags += fmt::format(" --duration {}..{}", SecondsText(g.duration_min), SecondsText(g.duration_max));
  }
  if (g.fault_kinds != defaults.fault_kinds) config.flags += fmt::format(" --faults {}", FaultKindList(g.fault_kinds));
  auto overrides = ParseOverrides(options.sets);
  if (!overrides.ok()) return overrides.status();
  config.overrides = std::move(*overrides);
  for (const Override& o : config.overrides) config.flags += fmt::format(" --set {}", o.flag);
  if (options.guarantees_of == GuaranteesOf::kDefaults) config.flags += " --guarantees-of defaults";
  if (!options.liveness_guaranteed) config.flags += " --liveness finding";
  // The options are checked as any scenario's are, by the loader.
  const json probe = {{"nodes", g.nodes_min},
                      {"duration", "1s"},
                      {"algorithm", {{"name", config.algorithm->name()}, {"options", config.options}}}};
  auto scenario = ParseScenarioJson(probe, "--option");
  if (!scenario.ok()) return scenario.status();
  config.values = scenario->options;
  return config;
}

std::string SourceFor(const FuzzConfig& config, uint64_t seed) {
  return fmt::format("fuzz {} seed {}", config.algorithm->name(), seed);
}

// Every seed's scenario, as a document the loader then reads like a file:
// --set edits apply here, to the document, so they are checked as a file is.
absl::StatusOr<json> GenerateFor(const FuzzConfig& config, const FuzzOptions& options, uint64_t seed) {
  json document = GenerateScenario(*config.algorithm, config.options, config.values, seed, options.generator);
  if (config.overrides.empty()) return document;
  if (auto status = ApplyOverrides(document, config.overrides); !status.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", SourceFor(config, seed), std::string(status.message())));
  }
  return document;
}

// A scenario of every seed must load: --set is checked against the first
// seed's before any run (a later seed whose document lacks a --set path
// stops the fuzz with the same message).
absl::Status CheckOverrides(const FuzzConfig& config, const FuzzOptions& options) {
  if (config.overrides.empty()) return absl::OkStatus();
  auto document = GenerateFor(config, options, options.first_seed);
  if (!document.ok()) return document.status();
  auto scenario = ParseScenarioJson(*document, SourceFor(config, options.first_seed));
  if (!scenario.ok()) {
    std::string flags;
    for (const Override& o : config.overrides) flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
    return absl::InvalidArgumentError(
        fmt::format("{}: {}", EscapeForTerminal(flags), std::string(scenario.status().message())));
  }
  return absl::OkStatus();
}

// The command that rebuilds a seed's scenario and runs it.
std::string ReproduceCommand(const FuzzConfig& config, uint64_t seed) {
  return fmt::format("{2} fuzz {0} --seed {1} --emit-scenario > fuzz-seed{1}.json && {2} run fuzz-seed{1}.json",
                     config.flags, seed, ProgramName());
}

// --- the summary ------------------------------------------------------------

struct Summary {
  json header;  // what was fuzzed: equal in every shard of one run
  uint64_t shard_count = 1;
  std::set<uint64_t> shards;
  uint64_t seeds_run = 0;
  bool complete = true;
  uint64_t seeds_broken = 0;
  uint64_t seeds_with_findings = 0;
  std::map<std::string, uint64_t> broken;    // invariant: seeds
  std::map<std::string, uint64_t> findings;  // invariant: seeds
  std::map<uint64_t, json> failing;          // seed: what broke and how to reproduce it

  json ToJson() const {
    json out = header;
    out["electsim_fuzz_summary"] = 1;
    out["shards"] = {{"count", shard_count}, {"included", shards}};
    out["seeds_run"] = seeds_run;
    out["complete"] = complete;
    out["seeds_with_broken_guarantee"] = seeds_broken;
    out["seeds_with_findings"] = seeds_with_findings;
    out["broken_guarantees"] = broken;
    out["findings"] = findings;
    json list = json::array();
    for (const auto& [seed, entry] : failing) list.push_back(entry);
    out["failing_seeds"] = list;
    return out;
  }

  // When every shard is in, the run is the unsharded one.
  void Normalize() {
    if (shards.size() == shard_count) {
      shard_count = 1;
      shards = {1};
    }
  }
};

absl::StatusOr<Summary> SummaryFromJson(const json& doc, const std::string& path) {
  Summary s;
  try {
    if (!doc.is_object() || doc.value("electsim_fuzz_summary", 0) != 1) {
      return JsonInputError(path, "/electsim_fuzz_summary", "1 (a summary written by electsim fuzz --summary)");
    }
    for (const char* key :
         {"algorithm", "options", "guarantees_of", "fencing", "liveness", "nodes", "duration", "seeds"}) {
      if (!doc.contains(key)) return JsonInputError(path, fmt::format("/{}", key), "a value, as fuzz writes it");
      s.header[key] = doc[key];
    }
    s.header["set"] = doc.value("set", json::array());  // absent in summaries written before --set
    // Absent in summaries written before --faults.
    s.header["faults"] = doc.value("faults", FaultKindList(algorithms::FaultKinds::All()));
    s.shard_count = doc.at("shards").at("count").get<uint64_t>();
    for (const json& k : doc.at("shards").at("included")) s.shards.insert(k.get<uint64_t>());
    s.seeds_run = doc.at("seeds_run").get<uint64_t>();
    s.complete = doc.at("complete").get<bool>();
    s.seeds_broken = doc.at("seeds_with_broken_guarantee").get<uint64_t>();
    s.seeds_with_findings = doc.at("seeds_with_findings").get<uint64_t>();
    s.broken = doc.at("broken_guarantees").get<std::map<std::string, uint64_t>>();
    s.findings = doc.at("findings").get<std::map<std::string, uint64_t>>();
    for (const json& entry : doc.at("failing_seeds")) s.failing[entry.at("seed").get<uint64_t>()] = entry;
  } catch (const json::exception& error) {
    return JsonInputError(path, "", fmt::format("a summary written by electsim fuzz --summary ({})", error.what()));
  }
  return s;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// One test case per seed that broke a guarantee, carrying the commands that
// reproduce it; one passing case when none did.
std::string JUnit(const Summary& summary, const std::map<uint64_t, std::string>& repro_lines, double seconds) {
  const std::string suite = fmt::format("electsim fuzz {}", summary.header["algorithm"].get<std::string>());
  std::string cases;
  for (const auto& [seed, entry] : summary.failing) {
    const std::string broken = fmt::format("{}", fmt::join(entry["broken"].get<std::vector<std::string>>(), ", "));
    std::string body =
        fmt::format("seed {} broke {}\nreproduce: {}\n", seed, broken, entry["reproduce"].get<std::string>());
    if (auto it = repro_lines.find(seed); it != repro_lines.end()) body += it->second;
    cases += fmt::format(
        "    <testcase classname=\"{0}\" name=\"seed {1}\" time=\"0\">\n"
        "      <failure message=\"seed {1} broke {2}\">{3}</failure>\n    </testcase>\n",
        XmlEscape(suite), seed, XmlEscape(broken), XmlEscape(body));
  }
  if (summary.failing.empty()) {
    cases = fmt::format("    <testcase classname=\"{0}\" name=\"{1} seeds, no broken guarantee\" time=\"{2:.3f}\"/>\n",
                        XmlEscape(suite), summary.seeds_run, seconds);
  }
  const size_t tests = std::max<size_t>(1, summary.failing.size());
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n{}  </testsuite>\n"
      "</testsuites>\n",
      XmlEscape(suite), tests, summary.failing.size(), seconds, cases);
}

// --- the run ----------------------------------------------------------------

struct SeedOutcome {
  enum class State : uint8_t { kNotRun, kDone, kError };
  State state = State::kNotRun;
  std::vector<std::string> broken;    // judged invariants violated
  std::vector<std::string> findings;  // other violations
  std::optional<RunResult> failure;   // when broken: for the repro
  absl::Status error;
};

class Fuzzer {
 public:
  Fuzzer(const FuzzOptions& options, FuzzConfig config)
      : options_(options), config_(std::move(config)), terminal_(isatty(STDERR_FILENO)) {
    summary_.header = {
        {"algorithm", config_.algorithm->name()},
        {"options", config_.options},
        {"guarantees_of", options.guarantees_of == GuaranteesOf::kDefaults ? "defaults" : "options"},
        {"fencing", options.generator.fencing},
        {"liveness", options.liveness_guaranteed ? "guarantee" : "finding"},
        {"nodes", {options.generator.nodes_min, options.generator.nodes_max}},
        {"duration", {SecondsText(options.generator.duration_min), SecondsText(options.generator.duration_max)}},
        {"faults", FaultKindList(options.generator.fault_kinds)},
        {"seeds", {{"first", options.first_seed}, {"last", options.last_seed}}},
        {"set", options.sets}};
    summary_.shard_count = options.shard_count;
    summary_.shards = {options.shard_index};
    // This shard's seeds: first + (index - 1) + i * count.
    const uint64_t offset = options.shard_index - 1;
    planned_ = options.last_seed - options.first_seed < offset
                   ? 0
                   : (options.last_seed - options.first_seed - offset) / options.shard_count + 1;
  }

  int Run() {
    started_ = Clock::now();
    const uint64_t batch = uint64_t{64} * options_.jobs;
    for (uint64_t done = 0; done < planned_ && !Stopping(); done += batch) {
      std::vector<SeedOutcome> outcomes(std::min(batch, planned_ - done));
      RunBatch(done, outcomes);
      Report(done, outcomes);
      if (options_.stop_at_first_failure && summary_.seeds_broken > 0) break;
      PlainLog(false);
    }
    ClearProgress();
    summary_.complete = summary_.seeds_run == planned_ || (options_.stop_at_first_failure && summary_.seeds_broken > 0);
    return Finish();
  }

 private:
  uint64_t SeedAt(uint64_t i) const {
    return options_.first_seed + (options_.shard_index - 1) + i * options_.shard_count;
  }
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  bool OutOfTime() const {
    return options_.time_budget && Elapsed() * 1e9 >= static_cast<double>(options_.time_budget->ns());
  }
  bool Stopping() const { return stop_.load(std::memory_order_relaxed) || StopSignal() != 0 || OutOfTime(); }

  void RunBatch(uint64_t first_index, std::vector<SeedOutcome>& outcomes) {
    std::atomic<uint64_t> next{0};
    // With --stop-at-first-failure, seeds after a broken one need not run;
    // every seed before it must.
    std::atomic<uint64_t> first_broken{outcomes.size()};
    auto worker = [&] {
      RunOptions run_options;
      run_options.should_stop = [this] { return stop_.load(std::memory_order_relaxed) || StopSignal() != 0; };
      run_options.hash_trace = false;  // a broken seed's repro runs it again, hashed
      while (!Stopping()) {
        const uint64_t i = next.fetch_add(1);
        if (i >= outcomes.size() || (options_.stop_at_first_failure && i > first_broken.load())) return;
        RunSeed(SeedAt(first_index + i), run_options, outcomes[i]);
        if (!outcomes[i].broken.empty()) {
          uint64_t seen = first_broken.load();
          while (i < seen && !first_broken.compare_exchange_weak(seen, i)) {
          }
        }
        SeedDone(outcomes[i]);
      }
    };
    RunWorkers(options_.jobs, worker, [this] { stop_ = true; });
  }

  void RunSeed(uint64_t seed, const RunOptions& run_options, SeedOutcome& out) {
    try {
      auto document = GenerateFor(config_, options_, seed);
      auto scenario = document.ok() ? ParseScenarioJson(*document, SourceFor(config_, seed))
                                    : absl::StatusOr<Scenario>(document.status());
      absl::StatusOr<RunResult> result =
          scenario.ok() ? RunScenario(*scenario, seed, run_options) : absl::StatusOr<RunResult>(scenario.status());
      if (!result.ok()) {
        if (absl::IsCancelled(result.status())) return;
        out.state = SeedOutcome::State::kError;
        out.error = result.status();
        stop_ = true;
        return;
      }
      const std::vector<std::string> judged =
          JudgedInvariants(*scenario, options_.guarantees_of, options_.liveness_guaranteed);
      for (const std::string& fired : result->violated_checkers()) {
        (std::binary_search(judged.begin(), judged.end(), fired) ? out.broken : out.findings).push_back(fired);
      }
      out.state = SeedOutcome::State::kDone;
      if (!out.broken.empty()) {
        result->metrics = {};
        result->notes = {};
        out.failure = std::move(*result);
      }
    } catch (const std::bad_alloc&) {
      out = SeedOutcome{};
      out.state = SeedOutcome::State::kError;
      out.error = absl::ResourceExhaustedError("out of memory");
      stop_ = true;
    }
  }

  // Live counts for the progress line; the summary is folded in seed order.
  void SeedDone(const SeedOutcome& out) {
    if (out.state != SeedOutcome::State::kDone) return;
    const uint64_t done = done_.fetch_add(1) + 1;
    if (!out.broken.empty()) broken_live_.fetch_add(1);
    if (!out.findings.empty()) findings_live_.fetch_add(1);
    if (!terminal_ || (done % 16 != 0 && done != planned_)) return;
    std::lock_guard<std::mutex> lock(progress_mutex_);
    std::cerr << "\r" << ProgressText(done) << "\033[K" << std::flush;
  }

  std::string ProgressText(uint64_t done) const {
    const double seconds = Elapsed();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    double eta = rate > 0 ? static_cast<double>(planned_ - std::min(done, planned_)) / rate : 0;
    if (options_.time_budget) eta = std::min(eta, static_cast<double>(options_.time_budget->ns()) / 1e9 - seconds);
    return fmt::format("fuzz {}: {} seeds done, {:.1f} seeds/s, {} broken a guarantee, {} with findings, ETA {:.0f}s",
                       config_.algorithm->name(), done, rate, broken_live_.load(), findings_live_.load(),
                       std::max(0.0, eta));
  }

  void ClearProgress() {
    if (terminal_) std::cerr << "\r\033[K" << std::flush;
  }

  // Not on a terminal: a line every 10 seconds, for CI logs.
  void PlainLog(bool final_line) {
    if (terminal_) return;
    const double now = Elapsed();
    if (!final_line && now < last_log_ + 10) return;
    last_log_ = now;
    std::cout << ProgressText(summary_.seeds_run) << "\n" << std::flush;
  }

  void Report(uint64_t first_index, std::vector<SeedOutcome>& outcomes) {
    for (uint64_t i = 0; i < outcomes.size(); ++i) {
      SeedOutcome& out = outcomes[i];
      const uint64_t seed = SeedAt(first_index + i);
      if (out.state == SeedOutcome::State::kNotRun) continue;
      if (out.state == SeedOutcome::State::kError) {
        if (error_.ok()) error_ = out.error;
        continue;
      }
      if (options_.stop_at_first_failure && summary_.seeds_broken > 0) break;
      ++summary_.seeds_run;
      for (const std::string& name : out.broken) ++summary_.broken[name];
      for (const std::string& name : out.findings) ++summary_.findings[name];
      if (!out.findings.empty()) ++summary_.seeds_with_findings;
      if (out.broken.empty()) continue;
      ++summary_.seeds_broken;
      ReportBroken(seed, out);
      out.failure.reset();
    }
  }

  void ReportBroken(uint64_t seed, const SeedOutcome& out) {
    ClearProgress();
    summary_.failing[seed] = {{"seed", seed},
                              {"broken", out.broken},
                              {"findings", out.findings},
                              {"reproduce", ReproduceCommand(config_, seed)}};
    const std::string broken = fmt::format("{}", fmt::join(out.broken, ", "));
    std::cout << fmt::format("fuzz {}: seed {} BROKE a declared guarantee: {}\n  reproduce: {}\n",
                             config_.algorithm->name(), seed, broken,
                             EscapeForTerminal(ReproduceCommand(config_, seed)));
    if (options_.repro_dir.empty() || repros_ >= options_.max_repros) return;
    ++repros_;
    // The scenario again, as the worker ran it: generation is cheap and
    // deterministic, and workers keep only what a report needs.
    auto generated = GenerateFor(config_, options_, seed);
    if (!generated.ok()) {
      outcome_.CouldNotWrite(generated.status());
      return;
    }
    const json& document = *generated;
    auto scenario = ParseScenarioJson(document, SourceFor(config_, seed));
    if (!scenario.ok()) {
      outcome_.CouldNotWrite(scenario.status());
      return;
    }
    RunOptions run_options;
    run_options.should_stop = [] { return StopSignal() != 0; };
    auto hashed = RunAgainHashed(*scenario, seed, *out.failure, run_options);
    if (!hashed.ok()) {
      if (absl::IsCancelled(hashed.status())) return;  // interrupted: no repro for this seed
      if (error_.ok()) error_ = hashed.status();
      stop_ = true;
      return;
    }
    const std::string path = ReproFilePath(options_.repro_dir, document["name"].get<std::string>(), seed);
    std::string lines;
    if (auto status = WriteReproFile(path, *scenario, *hashed, {}); !status.ok()) {
      std::cout << std::flush;
      outcome_.CouldNotWrite(status);
      return;
    }
    lines += fmt::format("repro: {0} (replay: {1} replay {0})\n", EscapeForTerminal(path), ProgramName());
    // A timeline a CI job can attach: one self-contained page next to the repro.
    const std::string timeline_path = path.substr(0, path.size() - std::string_view(".repro.json").size()) + ".html";
    if (auto status = WriteHtmlTimeline(*scenario, seed, timeline_path); status.ok()) {
      lines += fmt::format("timeline: {}\n", EscapeForTerminal(timeline_path));
    } else {
      std::cout << std::flush;
      outcome_.CouldNotWrite(status);
    }
    if (options_.shrink_runs > 0) lines += ShrinkRepro(path, document, seed, out.broken.front());
    std::cout << Indent(lines) << std::flush;
    repro_lines_[seed] = lines;
  }

  static std::string Indent(const std::string& lines) {
    std::string out;
    size_t start = 0;
    while (start < lines.size()) {
      const size_t end = lines.find('\n', start);
      out += "  " + lines.substr(start, end - start + 1);
      start = end == std::string::npos ? lines.size() : end + 1;
    }
    return out;
  }

  std::string ShrinkRepro(const std::string& repro_path, const json& document, uint64_t seed,
                          const std::string& invariant) {
    std::string prefix = repro_path;
    prefix.resize(prefix.size() - std::string_view(".repro.json").size());
    const ShrinkOutputs outputs = ShrinkOutputsFor(prefix + ".shrunk");
    auto shrunk = ShrinkScenario(document, SourceFor(config_, seed), seed, invariant, options_.shrink_runs);
    if (!shrunk.ok()) return fmt::format("shrink: {}\n", EscapeForTerminal(std::string(shrunk.status().message())));
    if (auto status = WriteShrinkOutputs(outputs, *shrunk, {}); !status.ok()) {
      outcome_.CouldNotWrite(status);
      return "";
    }
    return fmt::format("shrunk ({} runs{}): {} fault steps, {} nodes, {}; scenario {}, repro {}\n", shrunk->runs,
                       shrunk->budget_exhausted ? ", budget spent" : "", shrunk->scenario.faults.size(),
                       shrunk->scenario.nodes, sim::FormatDuration(shrunk->scenario.duration),
                       EscapeForTerminal(outputs.scenario), EscapeForTerminal(outputs.repro));
  }

  int Finish() {
    PlainLog(true);
    const double seconds = Elapsed();
    std::string broken, findings;
    for (const auto& [name, n] : summary_.broken) broken += fmt::format("{}{} {}", broken.empty() ? "" : ", ", name, n);
    for (const auto& [name, n] : summary_.findings) {
      findings += fmt::format("{}{} {}", findings.empty() ? "" : ", ", name, n);
    }
    const int signal_number = StopSignal();
    std::cout << fmt::format(
        "fuzz {}: {} of {} seeds (shard {}/{} of {}..{}){} in {:.1f}s, {:.1f} seeds/s; broke a declared guarantee: {} "
        "({}); findings (not declared for the faults in play): {} seeds ({})\n",
        config_.algorithm->name(), summary_.seeds_run, planned_, options_.shard_index, options_.shard_count,
        options_.first_seed, options_.last_seed,
        signal_number != 0 ? " INTERRUPTED" : (summary_.complete ? "" : " STOPPED"), seconds,
        seconds > 0 ? static_cast<double>(summary_.seeds_run) / seconds : 0.0, summary_.seeds_broken,
        broken.empty() ? "none" : broken, summary_.seeds_with_findings, findings.empty() ? "none" : findings);
    if (summary_.seeds_broken > 0) outcome_.Failed();
    if (!options_.summary_path.empty()) {
      if (auto s = WriteFileAtomically(options_.summary_path, summary_.ToJson().dump(2) + "\n"); !s.ok()) {
        outcome_.CouldNotWrite(s);
      }
    }
    if (!options_.junit_path.empty()) {
      if (auto s = WriteFileAtomically(options_.junit_path, JUnit(summary_, repro_lines_, seconds)); !s.ok()) {
        outcome_.CouldNotWrite(s);
      }
    }
    if (signal_number != 0) {
      outcome_.Finish();
      return kExitSignalBase + signal_number;
    }
    if (!error_.ok()) {
      const int status = ReportError(error_);
      const int verdict = outcome_.Finish();
      return status == kExitIncomplete && verdict == kExitFailed ? kExitFailed : status;
    }
    return outcome_.Finish();
  }

  const FuzzOptions& options_;
  const FuzzConfig config_;
  const bool terminal_;
  uint64_t planned_ = 0;
  Clock::time_point started_;
  double last_log_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> done_{0}, broken_live_{0}, findings_live_{0};
  std::mutex progress_mutex_;
  Summary summary_;
  uint64_t repros_ = 0;
  std::map<uint64_t, std::string> repro_lines_;
  CommandOutcome outcome_;
  absl::Status error_;
};

absl::Status CheckOutputs(const FuzzOptions& options) {
  if (!options.summary_path.empty()) {
    if (auto s = CheckOutputPath(options.summary_path, {}); !s.ok()) return s;
  }
  if (!options.junit_path.empty()) {
    if (auto s = CheckOutputPath(options.junit_path, {}); !s.ok()) return s;
    if (SameFile(options.junit_path, options.summary_path)) {
      return InputError(
          fmt::format("--junit {}: is the --summary file too; expected another path", options.junit_path));
    }
  }
  if (!options.repro_dir.empty() && options.max_repros > 0) return CheckOutputDir(options.repro_dir);
  return absl::OkStatus();
}

}  // namespace

int Fuzz(const FuzzOptions& options) {
  auto config = Configure(options);
  if (!config.ok()) return ReportError(config.status());
  if (auto status = CheckOverrides(*config, options); !status.ok()) return ReportError(status);
  if (auto status = CheckOutputs(options); !status.ok()) return ReportError(status);
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  FuzzOptions checked = options;
  checked.jobs = std::max(1u, options.jobs);
  return Fuzzer(checked, std::move(*config)).Run();
}

int EmitFuzzScenario(const FuzzOptions& options, uint64_t seed) {
  auto config = Configure(options);
  if (!config.ok()) return ReportError(config.status());
  auto document = GenerateFor(*config, options, seed);
  if (!document.ok()) return ReportError(document.status());
  // What is printed must load: the generator's own check.
  if (auto scenario = ParseScenarioJson(*document, SourceFor(*config, seed)); !scenario.ok()) {
    return ReportError(scenario.status());
  }
  std::cout << document->dump(2) << "\n";
  return CommandOutcome().Finish();
}

int MergeFuzzSummaries(const std::vector<std::string>& paths, const std::string& summary_path,
                       const std::string& junit_path) {
  std::optional<Summary> merged;
  for (const std::string& path : paths) {
    auto text = ReadFile(path);
    if (!text.ok()) return ReportError(text.status());
    auto doc = ParseJsonText(*text, path);
    if (!doc.ok()) return ReportError(doc.status());
    auto summary = SummaryFromJson(*doc, path);
    if (!summary.ok()) return ReportError(summary.status());
    if (!merged) {
      merged = std::move(*summary);
      continue;
    }
    if (summary->header != merged->header || summary->shard_count != merged->shard_count) {
      return ReportError(JsonInputError(path, "",
                                        fmt::format("a shard of the same fuzz run as {} (algorithm, "
                                                    "options, seeds and shard count equal)",
                                                    paths.front())));
    }
    for (uint64_t shard : summary->shards) {
      if (!merged->shards.insert(shard).second) {
        return ReportError(JsonInputError(path, "/shards/included",
                                          fmt::format("shards not merged already (shard {} is twice)", shard)));
      }
    }
    merged->seeds_run += summary->seeds_run;
    merged->complete = merged->complete && summary->complete;
    merged->seeds_broken += summary->seeds_broken;
    merged->seeds_with_findings += summary->seeds_with_findings;
    for (const auto& [name, n] : summary->broken) merged->broken[name] += n;
    for (const auto& [name, n] : summary->findings) merged->findings[name] += n;
    merged->failing.merge(summary->failing);
  }
  merged->Normalize();
  CommandOutcome outcome;
  std::cout << fmt::format("fuzz merge: {} summaries, shards {} of {}, {} seeds; broke a declared guarantee: {}\n",
                           paths.size(), merged->shards.size(), merged->shard_count, merged->seeds_run,
                           merged->seeds_broken);
  if (merged->seeds_broken > 0) outcome.Failed();
  if (!summary_path.empty()) {
    if (auto s = WriteFileAtomically(summary_path, merged->ToJson().dump(2) + "\n", paths); !s.ok()) {
      outcome.CouldNotWrite(s);
    }
  }
  if (!junit_path.empty()) {
    if (auto s = WriteFileAtomically(junit_path, JUnit(*merged, {}, 0), paths); !s.ok()) outcome.CouldNotWrite(s);
  }
  return outcome.Finish();
}

}  // namespace electsim
