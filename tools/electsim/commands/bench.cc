#include "tools/electsim/commands/bench.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>

#include "absl/status/status.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/duration.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kFaults = {"crash-leader", "isolate-leader", "pause-leader", "lossy"};

// Loss rate of the "lossy" fault: the network drops this share of messages
// from the start, and the leader crashes as in crash-leader.
constexpr double kLossyDropRatio = 0.1;

// The option holding an algorithm's heartbeat or renewal period, and the one
// holding its failure-detection timeout, as the algorithm declares them.
std::optional<algorithms::Algorithm::BenchTiming> TimingOf(const std::string& algorithm) {
  const algorithms::Algorithm* found = algorithms::FindAlgorithm(algorithm);
  return found == nullptr ? std::nullopt : found->bench_timing();
}

std::string Join(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

std::string Nanos(int64_t ns) { return fmt::format("{}ns", ns); }

// A duration as a person writes it, exact.
std::string DurationLabel(int64_t ns) {
  if (ns != 0 && ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return Nanos(ns);
}

// What one trial measured, from the election that followed the fault.
struct Trial {
  bool ran = false;
  std::string violations;  // checker names, ';'-separated
  uint64_t elections = 0;
  std::string cause;
  std::optional<int64_t> detection_ns, election_ns, known_ns;
  int64_t max_term = 0;
  uint64_t election_messages = 0;      // of the measured election, until known to all
  uint64_t messages_election = 0;      // the whole run's election traffic
  uint64_t messages_steady_state = 0;  // heartbeats, renewals and their replies
  int64_t end_ns = 0;
  // Estimated encoded sizes (sim::EstimatedEncodedBytes), as the counts above.
  uint64_t election_bytes = 0;
  uint64_t bytes_election = 0;
  uint64_t bytes_steady_state = 0;
};

struct Config {
  std::string algorithm;
  std::string sweep_label;  // "" without --sweep
  Scenario scenario;
};

Trial MeasureTrial(const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  Trial t;
  t.ran = true;
  for (const std::string& name : result.violated_checkers()) t.violations += (t.violations.empty() ? "" : ";") + name;
  t.elections = m.elections.size();
  t.max_term = m.max_term;
  t.messages_election = m.messages_election;
  t.messages_steady_state = m.messages_steady_state;
  t.bytes_election = m.bytes_election;
  t.bytes_steady_state = m.bytes_steady_state;
  t.end_ns = result.end.ns();
  if (!m.elections.empty()) {
    // The last episode: the one the fault caused (MetricsCsvRow measures the same).
    const checkers::Election& e = m.elections.back();
    t.cause = e.cause;
    auto since = [&](const std::optional<sim::TimeNs>& time) -> std::optional<int64_t> {
      if (!time) return std::nullopt;
      return (*time - e.started).ns();
    };
    t.detection_ns = since(e.detected);
    t.election_ns = since(e.elected);
    t.known_ns = since(e.known);
    t.election_messages = e.election_messages;
    t.election_bytes = e.election_bytes;
  }
  return t;
}

std::string Optional(const std::optional<int64_t>& value) { return value ? std::to_string(*value) : std::string(); }

std::string CsvHeader() {
  return "sweep,value,algorithm,fault,preset,trial,seed,violations,elections,cause,detection_ns,election_ns,known_ns,"
         "max_term,election_messages,messages_election,messages_steady_state,end_ns,election_bytes,bytes_election,"
         "bytes_steady_state\n";
}

std::string CsvRow(const BenchOptions& o, const std::string& sweep, const Config& c, uint64_t trial, const Trial& t) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", sweep, c.sweep_label,
                     c.algorithm, o.fault, o.preset, trial, o.seed + trial, t.violations, t.elections, t.cause,
                     Optional(t.detection_ns), Optional(t.election_ns), Optional(t.known_ns), t.max_term,
                     t.election_messages, t.messages_election, t.messages_steady_state, t.end_ns, t.election_bytes,
                     t.bytes_election, t.bytes_steady_state);
}

json TrialJson(const std::string& sweep, const Config& c, uint64_t trial, uint64_t seed, const Trial& t) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return json{{"sweep", sweep},
              {"value", c.sweep_label},
              {"algorithm", c.algorithm},
              {"trial", trial},
              {"seed", seed},
              {"violations", t.violations},
              {"elections", t.elections},
              {"cause", t.cause},
              {"detection_ns", opt(t.detection_ns)},
              {"election_ns", opt(t.election_ns)},
              {"known_ns", opt(t.known_ns)},
              {"max_term", t.max_term},
              {"election_messages", t.election_messages},
              {"messages_election", t.messages_election},
              {"messages_steady_state", t.messages_steady_state},
              {"end_ns", t.end_ns},
              {"election_bytes", t.election_bytes},
              {"bytes_election", t.bytes_election},
              {"bytes_steady_state", t.bytes_steady_state}};
}

// Summary statistics, in floating point: they are only printed.
struct Stats {
  size_t n = 0;
  double mean = 0, variance = 0;  // sample variance
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  double ci95 = 0;  // half width, normal approximation
};

Stats Summarize(std::vector<double> values) {
  Stats s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p of the trials at or below it.
  auto rank = [&](double p) {
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::max<size_t>(k, 1) - 1];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = values.back();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.variance = squares / static_cast<double>(s.n - 1);
    s.ci95 = 1.96 * std::sqrt(s.variance / static_cast<double>(s.n));
  }
  return s;
}

std::string Ms(double ns) { return fmt::format("{:.1f}", ns / 1e6); }

using Metric = std::optional<int64_t> Trial::*;
struct MetricColumn {
  const char* name;
  Metric field;
};
const MetricColumn kMetrics[] = {
    {"detection", &Trial::detection_ns}, {"election", &Trial::election_ns}, {"known to all", &Trial::known_ns}};

std::vector<double> Values(const std::vector<Trial>& trials, Metric field) {
  std::vector<double> values;
  for (const Trial& t : trials) {
    if (t.ran && t.*field) values.push_back(static_cast<double>(*(t.*field)));
  }
  return values;
}

// Per configuration: latencies, messages per election, violations; then
// each algorithm against the first on the same trials.
std::string FormatTable(const BenchOptions& o, const std::string& sweep, const std::vector<Config>& configs,
                        const std::vector<std::vector<Trial>>& trials) {
  std::string out = fmt::format("fault {}, {} nodes, preset {}, seeds {}..{}{}\n", o.fault, o.nodes,
                                o.preset.empty() ? "none" : o.preset, o.seed, o.seed + (o.trials - 1),
                                sweep.empty() ? "" : ", sweep over " + sweep);
  const size_t first = sweep.empty() ? 0 : std::max<size_t>(10, sweep.size() + 2);
  out += fmt::format("{:<{}}{:<10}{:<14}{:>7}{:>9}{:>9}{:>9}{:>9}{:>18}\n", sweep, first, "algorithm", "ms", "trials",
                     "p50", "p90", "p99", "max", "mean ± 95% CI");
  for (size_t c = 0; c < configs.size(); ++c) {
    uint64_t ran = 0, violating = 0, messages = 0, bytes = 0, measured = 0;
    for (const Trial& t : trials[c]) {
      if (!t.ran) continue;
      ++ran;
      if (!t.violations.empty()) ++violating;
      if (t.known_ns) {
        messages += t.election_messages;
        bytes += t.election_bytes;
        ++measured;
      }
    }
    for (const MetricColumn& metric : kMetrics) {
      const Stats s = Summarize(Values(trials[c], metric.field));
      if (s.n == 0) {
        out += fmt::format("{:<{}}{:<10}{:<14}{:>7}{:>9}{:>9}{:>9}{:>9}{:>18}\n", configs[c].sweep_label, first,
                           configs[c].algorithm, metric.name, 0, "-", "-", "-", "-", "-");
        continue;
      }
      out += fmt::format("{:<{}}{:<10}{:<14}{:>7}{:>9}{:>9}{:>9}{:>9}{:>18}\n", configs[c].sweep_label, first,
                         configs[c].algorithm, metric.name, s.n, Ms(s.p50), Ms(s.p90), Ms(s.p99), Ms(s.max),
                         fmt::format("{} ± {}", Ms(s.mean), Ms(s.ci95)));
    }
    auto per_election = [measured](uint64_t total) {
      return measured == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(measured);
    };
    out += fmt::format(
        "{:<{}}messages per election {:.1f}, bytes per election {:.0f}; not known to all by the end: {}; with a "
        "violation: {}\n",
        "", first + 10, per_election(messages), per_election(bytes), ran - measured, violating);
  }
  // Paired differences: the same trial (seed) under two algorithms.
  bool header = false;
  for (size_t c = 0; c < configs.size(); ++c) {
    const size_t base = c - c % o.algorithms.size();  // the first algorithm at this sweep point
    if (c == base) continue;
    if (!header) {
      out += fmt::format("paired difference in time known to all vs {} (same seeds), ms:\n", configs[base].algorithm);
      header = true;
    }
    std::vector<double> differences;
    for (size_t i = 0; i < trials[c].size(); ++i) {
      const Trial& a = trials[c][i];
      const Trial& b = trials[base][i];
      if (a.ran && b.ran && a.known_ns && b.known_ns)
        differences.push_back(static_cast<double>(*a.known_ns - *b.known_ns));
    }
    const Stats d = Summarize(differences);
    const Stats a = Summarize(Values(trials[c], &Trial::known_ns));
    const Stats b = Summarize(Values(trials[base], &Trial::known_ns));
    const double unpaired =
        (a.n > 1 && b.n > 1)
            ? 1.96 * std::sqrt(a.variance / static_cast<double>(a.n) + b.variance / static_cast<double>(b.n))
            : 0;
    out += fmt::format("{:<{}}{:<10}{:>5} pairs: {} ± {}; paired/unpaired CI width {}\n", configs[c].sweep_label, first,
                       configs[c].algorithm, d.n, Ms(d.mean), Ms(d.ci95),
                       unpaired > 0 ? fmt::format("{:.2f}", d.ci95 / unpaired) : std::string("n/a"));
  }
  return out;
}

// "16/1000 trials" on one rewritten line of a terminal, every 16 trials;
// elsewhere (a CI log) a line of its own at 16, 32, 64, ... trials and at
// the end: few lines however long the run.
class Progress {
 public:
  explicit Progress(uint64_t total) : total_(total), terminal_(isatty(STDERR_FILENO)) {}
  void TrialDone() {
    const uint64_t finished = done_.fetch_add(1) + 1;
    if (!Due(finished)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::cerr << fmt::format("{}bench: {}/{} trials{}", terminal_ ? "\r" : "", finished, total_, terminal_ ? "" : "\n")
              << std::flush;
  }
  void Clear() {
    if (terminal_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  bool Due(uint64_t finished) const {
    if (finished == total_) return true;
    if (terminal_) return finished % 16 == 0;
    return finished >= 16 && (finished & (finished - 1)) == 0;  // 16, 32, 64, ...
  }

  const uint64_t total_;
  const bool terminal_;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
};

absl::Status BadFlag(const std::string& text) { return absl::InvalidArgumentError(text); }

// Parses a configuration's document, naming the --set flags when they, not
// the bench, made it bad.
absl::StatusOr<Scenario> ParseConfig(const json& document, const std::vector<Override>& overrides,
                                     const std::string& source) {
  json changed = document;
  if (auto status = ApplyOverrides(changed, overrides); !status.ok()) return status;
  auto scenario = ParseScenarioJson(changed, source);
  if (scenario.ok() || overrides.empty() || !ParseScenarioJson(document, source).ok()) return scenario;
  std::string flags;
  for (const Override& o : overrides) flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
  return absl::Status(scenario.status().code(),
                      fmt::format("{}: {}", EscapeForTerminal(flags), std::string(scenario.status().message())));
}

// Builds every configuration: sweep points × algorithms, in that order.
absl::StatusOr<std::vector<Config>> BuildConfigs(const BenchOptions& o, const std::optional<SweepSpec>& sweep) {
  std::vector<SweepPoint> points = sweep ? sweep->points : std::vector<SweepPoint>{SweepPoint{"", nullptr}};
  if (sweep && sweep->parameter != "nodes" && sweep->parameter != "drop") {
    bool known = false;
    for (const std::string& name : o.algorithms) {
      for (const auto& spec : algorithms::FindAlgorithm(name)->options())
        known = known || spec.name == sweep->parameter;
    }
    if (!known) {
      return BadFlag(
          fmt::format("--sweep: unknown parameter \"{}\"; expected nodes, drop or an option of {} (electsim list)",
                      EscapeForTerminal(sweep->parameter), Join(o.algorithms)));
    }
  }
  std::vector<Config> configs;
  for (const SweepPoint& point : points) {
    for (const std::string& algorithm : o.algorithms) {
      auto options = PresetOptions(o.preset, algorithm);
      if (!options.ok()) return options.status();
      uint32_t nodes = o.nodes;
      if (sweep && sweep->parameter == "nodes") nodes = static_cast<uint32_t>(point.value.get<int64_t>());
      const bool option_swept = sweep && sweep->parameter != "nodes" && sweep->parameter != "drop";
      if (option_swept) {
        bool has = false;
        for (const auto& spec : algorithms::FindAlgorithm(algorithm)->options())
          has = has || spec.name == sweep->parameter;
        if (has) (*options)[sweep->parameter] = point.value;
      }
      const std::string source =
          fmt::format("bench {} {}{}", algorithm, o.fault,
                      point.label.empty() ? "" : fmt::format(" {}={}", sweep->parameter, point.label));
      // First with the fault at once, to learn the algorithm's timing with
      // the preset and the overrides applied.
      json document = BenchScenarioDocument(algorithm, o.fault, nodes, *options, 0, 1);
      if (sweep && sweep->parameter == "drop") document["network"]["drop"] = point.value;
      auto draft = ParseConfig(document, o.overrides, source);
      if (!draft.ok()) return draft.status();
      const algorithms::Algorithm::BenchTiming timing = *TimingOf(algorithm);
      const int64_t period_ns = draft->options.Duration(timing.period_option).ns();
      const int64_t detection_ns = draft->options.Duration(timing.detection_option).ns();
      document = BenchScenarioDocument(algorithm, o.fault, nodes, *options, period_ns, detection_ns);
      if (sweep && sweep->parameter == "drop") document["network"]["drop"] = point.value;
      auto scenario = ParseConfig(document, o.overrides, source);
      if (!scenario.ok()) return scenario.status();
      configs.push_back(Config{algorithm, point.label, std::move(*scenario)});
    }
  }
  return configs;
}

absl::Status CheckOptions(const BenchOptions& o) {
  std::vector<std::string> known;
  for (const algorithms::Algorithm* a : algorithms::AllAlgorithms()) known.emplace_back(a->name());
  if (o.algorithms.empty()) return BadFlag("--algorithms: expected at least one of " + Join(known));
  for (const std::string& name : o.algorithms) {
    if (algorithms::FindAlgorithm(name) == nullptr) {
      return BadFlag(fmt::format("--algorithms: unknown algorithm \"{}\"; expected one of {}", EscapeForTerminal(name),
                                 Join(known)));
    }
    if (!TimingOf(name)) {
      return BadFlag(fmt::format("--algorithms: algorithm \"{}\" declares no bench timing (Algorithm::bench_timing)",
                                 EscapeForTerminal(name)));
    }
  }
  if (std::find(kFaults.begin(), kFaults.end(), o.fault) == kFaults.end()) {
    return BadFlag(
        fmt::format("--fault: unknown fault \"{}\"; expected one of {}", EscapeForTerminal(o.fault), Join(kFaults)));
  }
  if (o.trials == 0) return BadFlag("--trials: expected a number of trials above 0, got 0");
  if (!o.preset.empty()) {
    if (auto status = PresetOptions(o.preset, o.algorithms.front()).status(); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

json BenchScenarioDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes, const json& options,
                           int64_t period_ns, int64_t detection_ns) {
  json network = {{"latency", {{"uniform", {"1ms", "10ms"}}}}};
  if (fault == "lossy") network["drop"] = kLossyDropRatio;
  // The fault strikes at a moment drawn uniformly within one heartbeat or
  // renewal period after the cluster agrees on its first leader.
  json step = {{"after", {{"event", "leader_known"}, {"delay", {{"uniform", {"0ns", Nanos(period_ns)}}}}}}};
  if (fault == "crash-leader" || fault == "lossy") {
    step["crash"] = "leader";
  } else {
    // Long enough for the others to notice, then the node is back: the
    // measured election ends when it too knows the new leader.
    step[fault == "isolate-leader" ? "isolate" : "pause"] = "leader";
    step["for"] = Nanos(2 * detection_ns);
  }
  // Room for several election rounds at the slowest presets.
  const int64_t max_ns = std::max<int64_t>(int64_t{30} * 1000000000, 40 * detection_ns);
  json document = {{"description", fmt::format("bench: {} under {}", algorithm, fault)},
                   {"nodes", nodes},
                   {"algorithm", {{"name", algorithm}, {"options", options}}},
                   {"network", network},
                   {"faults", json::array({step})},
                   {"stop", {{"when", "leader_known_after_last_fault"}, {"max", Nanos(max_ns)}}}};
  return document;
}

std::vector<std::string> PresetNames() {
  return {"equal-detection", "etcd", "hashicorp", "kubernetes-lease", "zookeeper"};
}

absl::StatusOr<json> PresetOptions(const std::string& preset, const std::string& algorithm) {
  if (preset.empty()) return json::object();
  // heartbeat or renewal period, failure-detection timeout; Raft's election
  // timeout is drawn in [detection, 2 × detection), as etcd and HashiCorp do.
  auto timed = [&](const std::string& period, const std::string& detection) -> json {
    if (algorithm == "raft") {
      const int64_t detection_ns = ParseDuration(detection)->ns();
      return {{"heartbeat_interval", period},
              {"election_timeout_min", detection},
              {"election_timeout_max", DurationLabel(2 * detection_ns)}};
    }
    if (algorithm == "lease") return {{"renew_interval", period}, {"lease_ttl", detection}};
    return {{"heartbeat_interval", period}, {"heartbeat_timeout", detection}};
  };
  if (preset == "equal-detection") {
    // Every algorithm acts on 300ms of silence; Raft's range starts there.
    return timed("100ms", "300ms");
  }
  if (preset == "etcd") {
    // etcd: --heartbeat-interval 100ms, --election-timeout 1000ms, pre-vote
    // and check-quorum on (3.5+); leases are kept alive at TTL/3.
    json options = timed("100ms", "1000ms");
    if (algorithm == "raft") {
      options["pre_vote"] = true;
      options["check_quorum"] = true;
    }
    if (algorithm == "lease") options["renew_interval"] = "333ms";
    return options;
  }
  if (preset == "hashicorp") {
    // hashicorp/raft DefaultConfig: HeartbeatTimeout 1s, ElectionTimeout 1s
    // (randomized up to 2x), LeaderLeaseTimeout 500ms (the leader steps down
    // without a quorum: check-quorum); the leader heartbeats at
    // HeartbeatTimeout/10.
    json options = timed("100ms", "1000ms");
    if (algorithm == "raft") options["check_quorum"] = true;
    return options;
  }
  if (preset == "kubernetes-lease") {
    // client-go leaderelection: LeaseDuration 15s, RenewDeadline 10s,
    // RetryPeriod 2s; the holder renews by updating the Lease object (a
    // compare-and-swap) and acts only within RenewDeadline of its last renewal.
    json options = timed("2s", "15s");
    if (algorithm == "lease") {
      options["retry_interval"] = "2s";
      options["renew"] = "cas";
      options["safety_margin"] = 0.666666;
    }
    return options;
  }
  if (preset == "zookeeper") {
    // tickTime 2s; session timeouts from 2 to 20 ticks, the smallest (4s)
    // taken; a client pings at a third of its session timeout. An ephemeral
    // node vanishes when its session expires, which is the lease's TTL.
    json options = timed("1333ms", "4s");
    if (algorithm == "lease") options["retry_interval"] = "2s";
    return options;
  }
  return absl::InvalidArgumentError(fmt::format("--preset: unknown preset \"{}\"; expected one of {}",
                                                EscapeForTerminal(preset), Join(PresetNames())));
}

absl::StatusOr<SweepSpec> ParseSweep(const std::string& text) {
  const std::string expected =
      "expected PARAM=FROM..TO[:POINTS], e.g. election_timeout_max=150ms..300ms:6, nodes=3..9 or drop=0..0.2:5";
  const size_t equals = text.find('=');
  const size_t dots = text.find("..", equals == std::string::npos ? 0 : equals);
  if (equals == std::string::npos || equals == 0 || dots == std::string::npos) {
    return BadFlag(fmt::format("--sweep {}: {}", EscapeForTerminal(text), expected));
  }
  SweepSpec spec;
  spec.parameter = text.substr(0, equals);
  const std::string from = text.substr(equals + 1, dots - equals - 1);
  std::string to = text.substr(dots + 2);
  std::optional<int64_t> points;
  if (const size_t colon = to.find(':'); colon != std::string::npos) {
    const std::string count = to.substr(colon + 1);
    to = to.substr(0, colon);
    if (count.empty() || count.size() > 4 || !std::all_of(count.begin(), count.end(), ::isdigit) ||
        std::stoll(count) < 2) {
      return BadFlag(fmt::format("--sweep {}: expected a number of points from 2 to 9999 after ':', got \"{}\"",
                                 EscapeForTerminal(text), EscapeForTerminal(count)));
    }
    points = std::stoll(count);
  }
  auto whole = [](const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), ::isdigit);
  };
  auto decimal = [](const std::string& s, double& value) {
    if (s.empty() || s.size() > 20) return false;
    size_t used = 0;
    if (!std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    try {
      value = std::stod(s, &used);
    } catch (...) {
      return false;
    }
    return used == s.size();
  };
  if (auto a = ParseDuration(from), b = ParseDuration(to); a.ok() && b.ok()) {
    const int64_t k = points.value_or(2);
    for (int64_t i = 0; i < k; ++i) {
      // Integer nanoseconds, so the points are exact and the same everywhere.
      const int64_t ns = a->ns() + (b->ns() - a->ns()) * i / (k - 1);
      spec.points.push_back(SweepPoint{DurationLabel(ns), DurationLabel(ns)});
    }
  } else if (whole(from) && whole(to)) {
    const int64_t lo = std::stoll(from), hi = std::stoll(to);
    const int64_t k = points.value_or(std::max<int64_t>(hi - lo, 1) + 1);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t v = lo + (hi - lo) * i / (k - 1);
      if (!spec.points.empty() && spec.points.back().value == v) continue;
      spec.points.push_back(SweepPoint{std::to_string(v), v});
    }
  } else if (double a = 0, b = 0; decimal(from, a) && decimal(to, b)) {
    const int64_t k = points.value_or(2);
    for (int64_t i = 0; i < k; ++i) {
      const double v = a + (b - a) * static_cast<double>(i) / static_cast<double>(k - 1);
      const std::string label = fmt::format("{:.6g}", v);
      spec.points.push_back(SweepPoint{label, std::stod(label)});
    }
  } else {
    return BadFlag(fmt::format("--sweep {}: expected two durations, two integers or two decimal numbers; {}",
                               EscapeForTerminal(text), expected));
  }
  return spec;
}

int Bench(const BenchOptions& options) {
  if (auto status = CheckOptions(options); !status.ok()) return ReportError(status);
  std::optional<SweepSpec> sweep;
  if (!options.sweep.empty()) {
    auto parsed = ParseSweep(options.sweep);
    if (!parsed.ok()) return ReportError(parsed.status());
    sweep = std::move(*parsed);
  }
  auto built = BuildConfigs(options, sweep);
  if (!built.ok()) return ReportError(built.status());
  const std::vector<Config>& configs = *built;
  // Every trial's figures are kept for the table and the files, about 200
  // bytes each: a bound keeps a typo in --trials from exhausting memory.
  if (configs.size() * options.trials > kMaxBenchTrials) {
    return ReportError(BadFlag(fmt::format(
        "--trials: {} trials for each of {} configurations is more than {} in all, which bench keeps in memory; "
        "expected fewer (split the run with --seed)",
        options.trials, configs.size(), kMaxBenchTrials)));
  }
  const std::string sweep_name = sweep ? sweep->parameter : "";
  std::unique_ptr<AtomicOutputFile> csv, json_file;
  if (!options.csv_path.empty()) {
    auto file = AtomicOutputFile::Open(options.csv_path);
    if (!file.ok()) return ReportError(file.status());
    csv = std::move(*file);
  }
  if (!options.json_path.empty()) {
    if (!options.csv_path.empty() && SameFile(options.json_path, options.csv_path)) {
      return ReportError(BadFlag(fmt::format("--json {}: is also the --csv file; expected another path",
                                             EscapeForTerminal(options.json_path))));
    }
    auto file = AtomicOutputFile::Open(options.json_path);
    if (!file.ok()) return ReportError(file.status());
    json_file = std::move(*file);
  }
  HandleTerminatingSignals(SignalResponse::kStopGracefully);

  // Every trial's result has its slot, so the outputs are in trial order
  // whatever order the jobs finish in.
  std::vector<std::vector<Trial>> trials(configs.size(), std::vector<Trial>(options.trials));
  const uint64_t total = configs.size() * options.trials;
  Progress progress(total);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  absl::Status error;
  auto stopping = [&] { return stop.load(std::memory_order_relaxed) || StopSignal() != 0; };
  auto worker = [&] {
    RunOptions run_options;
    run_options.should_stop = stopping;
    run_options.hash_trace = false;  // a trial is measured, not replayed
    while (!stopping()) {
      const uint64_t k = next.fetch_add(1);
      if (k >= total) return;
      // Trial-major, so that trials stopped by Ctrl-C leave every
      // configuration with the same first trials, still paired.
      const uint64_t i = k / configs.size();
      const size_t c = k % configs.size();
      try {
        auto result = RunScenario(configs[c].scenario, options.seed + i, run_options);
        if (!result.ok()) {
          if (absl::IsCancelled(result.status())) return;
          std::lock_guard<std::mutex> lock(error_mutex);
          if (error.ok()) error = result.status();
          stop.store(true);
          return;
        }
        trials[c][i] = MeasureTrial(*result);
      } catch (const std::bad_alloc&) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error.ok()) error = absl::ResourceExhaustedError("out of memory");
        stop.store(true);
        return;
      }
      progress.TrialDone();
    }
  };
  RunWorkers(options.jobs, worker, [&stop] { stop.store(true); });
  progress.Clear();

  CommandOutcome outcome;
  if (csv) {
    csv->Write(CsvHeader());
    for (size_t c = 0; c < configs.size(); ++c) {
      for (uint64_t i = 0; i < options.trials; ++i) {
        if (trials[c][i].ran) csv->Write(CsvRow(options, sweep_name, configs[c], i, trials[c][i]));
      }
    }
    if (auto status = csv->Commit(); !status.ok()) outcome.CouldNotWrite(status);
  }
  if (json_file) {
    json rows = json::array();
    for (size_t c = 0; c < configs.size(); ++c) {
      for (uint64_t i = 0; i < options.trials; ++i) {
        if (trials[c][i].ran) rows.push_back(TrialJson(sweep_name, configs[c], i, options.seed + i, trials[c][i]));
      }
    }
    const json document = {{"algorithms", options.algorithms},
                           {"fault", options.fault},
                           {"nodes", options.nodes},
                           {"preset", options.preset},
                           {"first_seed", options.seed},
                           {"trials_per_configuration", options.trials},
                           {"sweep", sweep_name},
                           {"results", rows}};
    json_file->Write(document.dump(1) + "\n");
    if (auto status = json_file->Commit(); !status.ok()) outcome.CouldNotWrite(status);
  }
  std::cout << FormatTable(options, sweep_name, configs, trials);
  if (const int signal_number = StopSignal(); signal_number != 0) {
    std::cout << "interrupted: the table and files cover the trials that finished\n";
    outcome.Finish();
    return kExitSignalBase + signal_number;
  }
  if (!error.ok()) {
    outcome.Finish();
    return ReportError(error);
  }
  return outcome.Finish();
}

}  // namespace electsim
