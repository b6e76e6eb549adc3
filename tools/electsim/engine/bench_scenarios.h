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

std::vector<std::string> BenchFaults();  // crash-leader, isolate-leader, pause-leader, lossy
std::vector<std::string> PresetNames();

// The algorithm options a preset sets (an empty object when it sets none),
// or InvalidArgument for an unknown preset.
absl::StatusOr<nlohmann::json> PresetOptions(const std::string& preset, const std::string& algorithm);

// The scenario document of one configuration: `detection_ns` and
// `period_ns` are the algorithm's failure-detection timeout and heartbeat or
// renewal period (the fault's moment is drawn within one period).
nlohmann::json BenchScenarioDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes,
                                     const nlohmann::json& options, int64_t period_ns, int64_t detection_ns);

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

// "PARAM=FROM..TO[:POINTS]". The endpoints are read as the parameter's type
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
};

// Every configuration: sweep points × algorithms, in that order. Refuses a
// --set that contradicts a bench flag (algorithm, nodes, the swept value).
absl::StatusOr<std::vector<BenchConfig>> BuildBenchConfigs(const BenchPlan& plan);

}  // namespace electsim
