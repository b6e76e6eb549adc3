// What `electsim bench` runs: one scenario per algorithm (and per point of a
// --sweep) under one fault, with timing from a production preset, so that
// trial i of every configuration runs under the same seed (common random
// numbers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/language/overrides.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The most trials one bench keeps (over every algorithm and sweep point).
inline constexpr uint64_t kMaxBenchTrials = 1'000'000;

// crash-leader, isolate-leader, pause-leader, lossy; then the faults of an
// algorithm whose nodes own keys (shards): replica-crash, replica-cut,
// store-slowdown.
std::vector<std::string> BenchFaults();
// Whether `fault` is one of the key faults, which only algorithms that
// observe keys run (and they run no other).
bool IsKeyFault(const std::string& fault);
// When a key fault strikes, and how long a cut or a slowdown lasts, for an
// algorithm whose failure-detection timeout (lease TTL) is `detection_ns`:
// three TTLs in, once the keys have settled, for two TTLs.
int64_t KeyFaultAtNs(int64_t detection_ns);
int64_t KeyFaultForNs(int64_t detection_ns);
std::vector<std::string> PresetNames();

// The algorithm options a preset sets (an empty object when it sets none),
// or InvalidArgument for an unknown preset.
absl::StatusOr<nlohmann::json> PresetOptions(const std::string& preset, const std::string& algorithm);

// The scenario document of one configuration: `detection_ns` and
// `period_ns` are the algorithm's failure-detection timeout and heartbeat or
// renewal period (the fault's moment is drawn within one period). A key
// fault strikes at KeyFaultAtNs and the run lasts five TTLs past its end; a
// store slowdown serves one request per 2 x period / `keys`, half the rate
// the keys' renewals come at.
nlohmann::json BenchScenarioDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes,
                                     const nlohmann::json& options, int64_t period_ns, int64_t detection_ns,
                                     int64_t keys = 1);

// One point of a --sweep: the parameter's value as text, and as the scenario
// document holds it.
struct SweepPoint {
  std::string label;     // "150ms", "7", "0.05"
  nlohmann::json value;  // "150ms", 7, 0.05
};

struct SweepSpec {
  std::string parameter;  // "nodes", "drop" or an algorithm option
  std::string set_path;   // where a --set would put it: "nodes", "network.drop", "algorithm.options.NAME"
  std::vector<SweepPoint> points;
};

// "PARAM=FROM..TO[:POINTS]", or "PARAM=VALUE" for the one point VALUE (a
// row alone: what a reproduce line runs). The endpoints are read as the parameter's type
// (nodes and integer options: integers, every one by default; drop and
// ratios: decimals; durations), whatever they look like: drop=0..1:3 is 0,
// 0.5, 1. FROM above TO runs the points downwards. `algorithms` say which
// options exist.
absl::StatusOr<SweepSpec> ParseSweep(const std::string& text, const std::vector<std::string>& algorithms);

// What a bench runs.
struct BenchPlan {
  std::vector<std::string> algorithms;
  std::string fault = "crash-leader";
  uint32_t nodes = 5;
  std::string preset;               // "": each algorithm's defaults
  std::vector<Override> overrides;  // --set, applied after the preset and the sweep value
  std::optional<SweepSpec> sweep;
};

// One configuration, with its labels read off the scenario that runs.
struct BenchConfig {
  std::string algorithm;
  std::string sweep_label;  // "" without --sweep
  Scenario scenario;
  // A key fault's moment: the per-key measures count from it.
  sim::TimeNs key_fault_at;
};

// Every configuration: sweep points × algorithms, in that order. Refuses a
// --set that contradicts a bench flag (algorithm, nodes, the swept value).
absl::StatusOr<std::vector<BenchConfig>> BuildBenchConfigs(const BenchPlan& plan);

}  // namespace electsim
