#include "tools/electsim/engine/bench_scenarios.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/duration.h"
#include "tools/electsim/language/json_document.h"

namespace electsim {
namespace {

using json = nlohmann::json;

// Loss rate of the "lossy" fault: the network drops this share of messages
// from the start, and the leader crashes as in crash-leader.
constexpr double kLossyDropRatio = 0.1;

std::string Join(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

std::string Nanos(int64_t ns) { return fmt::format("{}ns", ns); }

// A duration as a person writes it, exact.
std::string DurationLabel(int64_t ns) {
  if (ns != 0 && ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return Nanos(ns);
}

absl::Status BadFlag(const std::string& text) { return InputError(text); }

// Parses a configuration's document, naming the --set flags when they, not
// the bench, made it bad.
absl::StatusOr<Scenario> ParseConfig(const json& document, const std::vector<Override>& overrides,
                                     const std::string& source) {
  json changed = document;
  if (auto status = ApplyOverrides(changed, overrides); !status.ok()) return status;
  auto scenario = ParseScenarioJson(changed, source);
  if (scenario.ok()) {
    // --run-seed's summary names them, as run's does.
    for (const Override& o : overrides) scenario->sets.push_back(o.flag);
    return scenario;
  }
  if (overrides.empty() || !ParseScenarioJson(document, source).ok()) return scenario;
  std::string flags;
  for (const Override& o : overrides) flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
  return absl::Status(scenario.status().code(),
                      fmt::format("{}: {}", EscapeForTerminal(flags), std::string(scenario.status().message())));
}

}  // namespace

std::vector<std::string> BenchFaults() {
  return {"crash-leader", "isolate-leader", "pause-leader", "lossy", "replica-crash", "replica-cut", "store-slowdown"};
}

bool IsKeyFault(const std::string& fault) {
  return fault == "replica-crash" || fault == "replica-cut" || fault == "store-slowdown";
}

int64_t KeyFaultAtNs(int64_t detection_ns) { return 3 * detection_ns; }
int64_t KeyFaultForNs(int64_t detection_ns) { return 2 * detection_ns; }

namespace {

// Keys settle, the fault strikes replica 0 (or the store), and five TTLs
// after it ends the run does: room for a cascade to run its course. Replica
// 0 is a fixed choice, so trial i faults the same replica for every
// configuration; how many keys it held shows in the gaps counted.
json KeyFaultDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes, json options,
                      int64_t period_ns, int64_t detection_ns, int64_t keys) {
  const int64_t at_ns = KeyFaultAtNs(detection_ns);
  const int64_t for_ns = KeyFaultForNs(detection_ns);
  json faults = json::array();
  if (fault == "replica-crash") faults.push_back({{"at", Nanos(at_ns)}, {"crash", 0}});
  if (fault == "replica-cut") faults.push_back({{"at", Nanos(at_ns)}, {"isolate", 0}, {"for", Nanos(for_ns)}});
  if (fault == "store-slowdown") {
    options["store_slowdown_at"] = Nanos(at_ns);
    if (!options.contains("store_slowdown_for")) options["store_slowdown_for"] = Nanos(for_ns);
    if (!options.contains("store_slowdown_service_time")) {
      options["store_slowdown_service_time"] = Nanos(std::max<int64_t>(1, 2 * period_ns / std::max<int64_t>(1, keys)));
    }
  }
  return {{"description", fmt::format("bench: {} under {}", algorithm, fault)},
          {"nodes", nodes},
          {"duration", Nanos(at_ns + for_ns + 5 * detection_ns)},
          {"algorithm", {{"name", algorithm}, {"options", options}}},
          {"network", {{"latency", {{"uniform", {"1ms", "10ms"}}}}}},
          {"faults", faults}};
}

}  // namespace

json BenchScenarioDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes, const json& options,
                           int64_t period_ns, int64_t detection_ns, int64_t keys) {
  if (IsKeyFault(fault)) return KeyFaultDocument(algorithm, fault, nodes, options, period_ns, detection_ns, keys);
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
    // Any other algorithm: the period and detection options its bench
    // timing names (the lease's renew_interval and lease_ttl, Bully's and
    // Ring's heartbeat_interval and heartbeat_timeout, ...).
    const algorithms::Algorithm* found = algorithms::FindAlgorithm(algorithm);
    const auto timing = found != nullptr ? found->bench_timing() : std::nullopt;
    if (!timing) return {{"heartbeat_interval", period}, {"heartbeat_timeout", detection}};
    return {{std::string(timing->period_option), period}, {std::string(timing->detection_option), detection}};
  };
  // The lease's extras apply to every algorithm made of TTL leases over the store.
  const bool leases = algorithm == "lease" || algorithm == "shards";
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
    if (leases) options["renew_interval"] = "333ms";
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
    if (leases) {
      options["retry_interval"] = "2s";
      options["safety_margin"] = 0.666666;
    }
    if (algorithm == "lease") options["renew"] = "cas";
    return options;
  }
  if (preset == "zookeeper") {
    // tickTime 2s; session timeouts from 2 to 20 ticks, the smallest (4s)
    // taken; a client pings at a third of its session timeout. An ephemeral
    // node vanishes when its session expires, which is the lease's TTL.
    json options = timed("1333ms", "4s");
    if (leases) options["retry_interval"] = "2s";
    return options;
  }
  return absl::InvalidArgumentError(fmt::format("--preset: unknown preset \"{}\"; expected one of {}",
                                                EscapeForTerminal(preset), Join(PresetNames())));
}

namespace {

enum class SweepType { kInteger, kDecimal, kDuration };

constexpr std::string_view kSweepExpected =
    "expected PARAM=FROM..TO[:POINTS] or PARAM=VALUE, e.g. election_timeout_max=150ms..300ms:6, nodes=3..9, "
    "drop=0..0.2:5 or drop=0.1";

// The parameter's type, and where a --set would put it.
absl::StatusOr<std::pair<SweepType, std::string>> SweepTypeOf(const std::string& parameter,
                                                              const std::vector<std::string>& algorithms) {
  if (parameter == "nodes") return std::pair{SweepType::kInteger, std::string("nodes")};
  if (parameter == "drop") return std::pair{SweepType::kDecimal, std::string("network.drop")};
  // Copies, not pointers: options() returns by value, so a pointer into it dangles.
  std::optional<algorithms::OptionType> found;
  std::string lacking;  // an algorithm run that has no such option
  for (const std::string& name : algorithms) {
    const algorithms::Algorithm* algorithm = algorithms::FindAlgorithm(name);
    std::optional<algorithms::OptionType> type;
    if (algorithm != nullptr) {
      for (const auto& option : algorithm->options()) {
        if (option.name == parameter) type = option.type;
      }
    }
    if (!type.has_value() && lacking.empty()) lacking = name;
    if (!found.has_value()) found = type;
  }
  if (found.has_value() && !lacking.empty()) {
    return BadFlag(
        fmt::format("--sweep {}: {} has no such option; expected an option of every algorithm run "
                    "(electsim list)",
                    EscapeForTerminal(parameter), EscapeForTerminal(lacking)));
  }
  if (!found.has_value()) {
    return BadFlag(
        fmt::format("--sweep: unknown parameter \"{}\"; expected nodes, drop or an option of {} (electsim "
                    "list)",
                    EscapeForTerminal(parameter), Join(algorithms)));
  }
  const std::string path = "algorithm.options." + parameter;
  switch (*found) {
    case algorithms::OptionType::kDuration: return std::pair{SweepType::kDuration, path};
    case algorithms::OptionType::kInt: return std::pair{SweepType::kInteger, path};
    case algorithms::OptionType::kRatio: return std::pair{SweepType::kDecimal, path};
    default:
      return BadFlag(
          fmt::format("--sweep {}: a {} option has no range to sweep; expected a duration, integer or "
                      "ratio option",
                      EscapeForTerminal(parameter), algorithms::OptionTypeName(*found)));
  }
}

std::optional<int64_t> Integer(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || text.front() == '+') {
    return std::nullopt;
  }
  return value;
}

std::optional<double> Decimal(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// k points from a to b, both included; integers land on whole numbers and
// are not repeated.
absl::Status FillPoints(SweepSpec& spec, SweepType type, const std::string& from, const std::string& to,
                        std::optional<int64_t> points) {
  const bool one_value = !points && from == to;
  const std::string what = type == SweepType::kInteger   ? (one_value ? "an integer" : "two integers")
                           : type == SweepType::kDecimal ? (one_value ? "a number" : "two numbers")
                                                         : (one_value ? "a duration" : "two durations");
  auto bad = [&] {
    return BadFlag(fmt::format("--sweep {}: expected {} for {}; {}",
                               EscapeForTerminal(spec.parameter + "=" + (one_value ? from : from + ".." + to)), what,
                               EscapeForTerminal(spec.parameter), kSweepExpected));
  };
  if (type == SweepType::kInteger) {
    const auto a = Integer(from), b = Integer(to);
    if (!a || !b || std::abs(*b - *a) >= 10000) return bad();
    const int64_t k = points.value_or(std::abs(*b - *a) + 1);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t v = k == 1 ? *a : *a + (*b - *a) * i / (k - 1);
      if (!spec.points.empty() && spec.points.back().value == v) continue;
      spec.points.push_back({std::to_string(v), v});
    }
  } else if (type == SweepType::kDecimal) {
    const auto a = Decimal(from), b = Decimal(to);
    if (!a || !b) return bad();
    const int64_t k = points.value_or(*a == *b ? 1 : 2);
    for (int64_t i = 0; i < k; ++i) {
      const double v = k == 1 ? *a : *a + (*b - *a) * static_cast<double>(i) / static_cast<double>(k - 1);
      const std::string label = fmt::format("{:.6g}", v);
      spec.points.push_back({label, *Decimal(label)});
    }
  } else {
    auto a = ParseDuration(from), b = ParseDuration(to);
    if (!a.ok() || !b.ok()) return bad();
    const int64_t k = points.value_or(a->ns() == b->ns() ? 1 : 2);
    for (int64_t i = 0; i < k; ++i) {
      // Integer nanoseconds, so the points are exact and the same everywhere.
      const int64_t ns = k == 1 ? a->ns() : a->ns() + (b->ns() - a->ns()) * i / (k - 1);
      spec.points.push_back({DurationLabel(ns), DurationLabel(ns)});
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepSpec> ParseSweep(const std::string& text, const std::vector<std::string>& algorithms) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return BadFlag(fmt::format("--sweep {}: {}", EscapeForTerminal(text), kSweepExpected));
  }
  // PARAM=VALUE is the one point VALUE..VALUE: a row alone, as a reproduce
  // line runs it.
  const size_t dots = text.find("..", equals);
  SweepSpec spec;
  spec.parameter = text.substr(0, equals);
  const std::string from = text.substr(equals + 1, dots == std::string::npos ? std::string::npos : dots - equals - 1);
  std::string to = dots == std::string::npos ? from : text.substr(dots + 2);
  std::optional<int64_t> points;
  if (const size_t colon = to.find(':'); colon != std::string::npos) {
    const std::string count = to.substr(colon + 1);
    to = to.substr(0, colon);
    const auto k = Integer(count);
    if (!k || *k < 2 || *k > 9999) {
      return BadFlag(fmt::format("--sweep {}: expected a number of points from 2 to 9999 after ':', got \"{}\"",
                                 EscapeForTerminal(text), EscapeForTerminal(count)));
    }
    points = *k;
  }
  auto type = SweepTypeOf(spec.parameter, algorithms);
  if (!type.ok()) return type.status();
  spec.set_path = type->second;
  if (auto status = FillPoints(spec, type->first, from, to, points); !status.ok()) return status;
  return spec;
}

namespace {

// A --set of what a bench flag decides, or of an object holding it, would
// make the labels lie.
absl::Status CheckOverrides(const BenchPlan& plan) {
  std::vector<std::pair<std::string, std::string>> owned = {
      {"/algorithm", "--algorithms"}, {"/algorithm/name", "--algorithms"}, {"/seed", "--seed"},  // each trial's seed
  };
  owned.emplace_back("/nodes", plan.sweep && plan.sweep->parameter == "nodes" ? "--sweep" : "--nodes");
  if (plan.sweep)
    owned.emplace_back(absl::StrCat("/", absl::StrReplaceAll(plan.sweep->set_path, {{".", "/"}})), "--sweep");
  // The loss the lossy fault is, and the slowdown's time.
  if (plan.fault == "lossy") owned.emplace_back("/network/drop", "--fault");
  if (plan.fault == "store-slowdown") owned.emplace_back("/algorithm/options/store_slowdown_at", "--fault");
  for (const auto& [pointer, flag] : owned) {
    if (auto status = RefuseOverrideOf(plan.overrides, pointer, "bench", flag); !status.ok()) {
      return status;
    }
  }
  // Within the fault step too; and a trial's verdict is bench's own: it
  // expects no violation, as its --run-seed judges it.
  if (auto status = RefuseOverrideWithin(plan.overrides, "/faults", "bench", "--fault"); !status.ok()) return status;
  if (auto status = RefuseOverrideWithin(plan.overrides, "/expect", "bench", "its own verdict (no violation)");
      !status.ok()) {
    return status;
  }
  for (const Override& o : plan.overrides) {
    // A leader fault's trial runs until the new leader is known: no duration.
    if (!IsKeyFault(plan.fault) && o.json_pointer == "/duration") {
      return BadFlag(
          fmt::format("--set {}: bench ends a {} trial once every node knows the new leader, at most "
                      "at its stop.max; expected --set stop.max=... to bound it instead",
                      EscapeForTerminal(o.flag), plan.fault));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchConfig> BuildConfig(const BenchPlan& plan, const std::string& algorithm, const SweepPoint* point) {
  auto options = PresetOptions(plan.preset, algorithm);
  if (!options.ok()) return options.status();
  // The preset's values are what its label promises.
  const std::string preset_flag = fmt::format("--preset {} for {}", plan.preset, algorithm);
  for (const auto& [name, value] : options->items()) {
    if (auto status = RefuseOverrideOf(plan.overrides, "/algorithm/options/" + name, "bench", preset_flag);
        !status.ok()) {
      return status;
    }
  }
  uint32_t nodes = plan.nodes;
  const std::string parameter = plan.sweep ? plan.sweep->parameter : "";
  if (parameter == "nodes") nodes = static_cast<uint32_t>(std::clamp<int64_t>(point->value.get<int64_t>(), 0, 1 << 30));
  if (point != nullptr && parameter != "nodes" && parameter != "drop") (*options)[parameter] = point->value;
  // --run-seed's summary names the source: the preset too, as the table's header does.
  const std::string source = fmt::format("bench {} {}{}{}", algorithm, plan.fault,
                                         plan.preset.empty() ? "" : absl::StrCat(" preset=", plan.preset),
                                         point == nullptr ? "" : fmt::format(" {}={}", parameter, point->label));
  // First with the fault at once, to learn the algorithm's timing with the
  // preset and the overrides applied.
  json document = BenchScenarioDocument(algorithm, plan.fault, nodes, *options, 0, 1);
  if (parameter == "drop") document["network"]["drop"] = point->value;
  auto draft = ParseConfig(document, plan.overrides, source);
  if (!draft.ok()) return draft.status();
  const std::optional<algorithms::Algorithm::BenchTiming> timing = draft->algorithm->bench_timing();
  if (!timing) {
    return BadFlag(fmt::format("--algorithms: algorithm \"{}\" declares no bench timing (Algorithm::bench_timing)",
                               EscapeForTerminal(algorithm)));
  }
  const int64_t period_ns = draft->options.Duration(timing->period_option).ns();
  const int64_t detection_ns = draft->options.Duration(timing->detection_option).ns();
  const std::vector<algorithms::OptionSpec> specs = draft->algorithm->options();
  const bool has_keys = std::any_of(specs.begin(), specs.end(), [](const auto& o) { return o.name == "keys"; });
  document = BenchScenarioDocument(algorithm, plan.fault, nodes, *options, period_ns, detection_ns,
                                   has_keys ? draft->options.Int("keys") : 1);
  if (parameter == "drop") document["network"]["drop"] = point->value;
  auto scenario = ParseConfig(document, plan.overrides, source);
  if (!scenario.ok()) return scenario.status();
  const sim::TimeNs key_fault_at(IsKeyFault(plan.fault) ? KeyFaultAtNs(detection_ns) : 0);
  return BenchConfig{algorithm, point == nullptr ? "" : point->label, std::move(*scenario), key_fault_at};
}

}  // namespace

absl::StatusOr<std::vector<BenchConfig>> BuildBenchConfigs(const BenchPlan& plan) {
  if (auto status = CheckOverrides(plan); !status.ok()) return status;
  std::vector<const SweepPoint*> points = {nullptr};
  if (plan.sweep) {
    points.clear();
    for (const SweepPoint& point : plan.sweep->points) points.push_back(&point);
  }
  std::vector<BenchConfig> configs;
  for (const SweepPoint* point : points) {
    for (const std::string& algorithm : plan.algorithms) {
      auto config = BuildConfig(plan, algorithm, point);
      if (!config.ok()) return config.status();
      configs.push_back(std::move(*config));
    }
  }
  return configs;
}

}  // namespace electsim
