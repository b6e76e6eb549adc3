// `electsim bench`: election latency of several algorithms under one fault,
// trial by trial, with common random numbers: trial i runs under the same
// seed for every algorithm, so the network's randomness and the draw of the
// fault's moment are shared and paired differences cancel them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/electsim/language/overrides.h"

namespace electsim {

// The most trials one bench keeps (over every algorithm and sweep point).
inline constexpr uint64_t kMaxBenchTrials = 1'000'000;

struct BenchOptions {
  std::vector<std::string> algorithms = {"raft", "bully", "ring", "lease"};
  std::string fault = "crash-leader";
  uint64_t trials = 100;
  uint32_t nodes = 5;
  std::string preset;  // "": each algorithm's defaults
  uint64_t seed = 1;   // trial i runs under seed + i
  unsigned jobs = 1;
  std::vector<Override> overrides;  // --set, applied after the preset and the sweep value
  std::string sweep;                // --sweep PARAM=a..b[:k]; "": none
  std::string csv_path;             // "": none
  std::string json_path;            // "": none
};

// One point of a --sweep: the parameter's value as text, and where it goes.
struct SweepPoint {
  std::string label;     // "150ms", "7", "0.05"
  nlohmann::json value;  // as the scenario document holds it
};

struct SweepSpec {
  std::string parameter;  // "nodes", "drop" or an algorithm option
  std::vector<SweepPoint> points;
};

// Parses "PARAM=a..b[:k]": durations, integers (k defaults to every integer)
// or decimal numbers, k points from a to b both included.
absl::StatusOr<SweepSpec> ParseSweep(const std::string& text);

// The algorithm options a preset sets (an empty object when it sets none),
// or NotFound for an unknown preset.
absl::StatusOr<nlohmann::json> PresetOptions(const std::string& preset, const std::string& algorithm);
std::vector<std::string> PresetNames();

// The scenario document of one configuration: `detection_ns` and
// `period_ns` are the algorithm's failure-detection timeout and heartbeat or
// renewal period (the fault's moment is drawn within one period).
nlohmann::json BenchScenarioDocument(const std::string& algorithm, const std::string& fault, uint32_t nodes,
                                     const nlohmann::json& options, int64_t period_ns, int64_t detection_ns);

// Returns the exit status: 0 when every trial ran, 2 for bad input, 3 when
// an output could not be written, 128 + N after signal N.
int Bench(const BenchOptions& options);

}  // namespace electsim
