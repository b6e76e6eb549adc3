// The scenario loader on a generated scenario of one million fault steps
// (about 25 MB, under the 64 MB input cap): parsing must stay linear in the
// input, and a file of that size must load in seconds. Run with
//   build/bench/electsim_loader_bench
// and read bytes_per_second (MB/s) from the output.
#include <string>

#include "benchmark/benchmark.h"
#include "fmt/format.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/scenario.h"
#include "tools/electsim/language/schema.h"

namespace {

constexpr int kFaultSteps = 1000000;

// A valid scenario of `steps` fault steps cycling through the actions, about
// 27 bytes each (27 MB, 25.7 MiB, for a million).
std::string GenerateScenario(int steps) {
  std::string text = R"({"nodes": 5, "duration": "1000000s", "algorithm": "raft", "faults": [)";
  text += '\n';
  for (int i = 0; i < steps; ++i) {
    const int node = i % 5;
    const int at_s = i % 10;
    switch (i % 8) {
      case 0: text += fmt::format(R"({{"at":"{}s","crash":{}}})", at_s, node); break;
      case 1: text += fmt::format(R"({{"at":"{}s","restart":{}}})", at_s, node); break;
      case 2: text += fmt::format(R"({{"at":"{}s","pause":{}}})", at_s, node); break;
      case 3: text += fmt::format(R"({{"at":"{}s","resume":{}}})", at_s, node); break;
      case 4: text += fmt::format(R"({{"at":"{}s","isolate":{},"for":"1s"}})", at_s, node); break;
      case 5: text += fmt::format(R"({{"at":"{}s","heal":true}})", at_s); break;
      case 6: text += fmt::format(R"({{"at":"{}s","cut":{{"from":{},"to":{}}}}})", at_s, node, (node + 1) % 5); break;
      case 7: text += fmt::format(R"({{"at":"{}s","crash":"leader"}})", at_s); break;
    }
    if (i + 1 < steps) text += ',';
    if (i % 8 == 7) text += '\n';
  }
  text += "]}\n";
  return text;
}

const std::string& Scenario() {
  static const std::string text = GenerateScenario(kFaultSteps);
  return text;
}

const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// Times `step` (a function of the scenario text returning a Status or a
// StatusOr) on the generated scenario and reports bytes per second.
template <typename Step>
void MeasureOnScenario(benchmark::State& state, Step step) {
  const std::string& text = Scenario();
  for (auto _ : state) {
    auto result = step(text);
    if (!result.ok()) {
      state.SkipWithError(std::string(StatusOf(result).message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
  state.counters["fault_steps"] = kFaultSteps;
}

// Text to document: the strict parser alone.
void BM_ParseJsonText(benchmark::State& state) {
  MeasureOnScenario(state, [](const std::string& text) { return electsim::ParseJsonText(text, "generated.json"); });
}
BENCHMARK(BM_ParseJsonText)->Unit(benchmark::kMillisecond)->UseRealTime();

// The document against the JSON Schema alone (parsed once, outside the timing).
void BM_SchemaCheck(benchmark::State& state) {
  static const nlohmann::json document = *electsim::ParseJsonText(Scenario(), "generated.json");
  MeasureOnScenario(state, [](const std::string&) {
    return electsim::CheckAgainstSchema(electsim::SchemaKind::kScenario, document, "generated.json");
  });
}
BENCHMARK(BM_SchemaCheck)->Unit(benchmark::kMillisecond)->UseRealTime();

// Text to a checked scenario: parsing, the schema and every fault step read.
void BM_LoadScenario(benchmark::State& state) {
  MeasureOnScenario(state, [](const std::string& text) { return electsim::ParseScenario(text, "generated.json"); });
}
BENCHMARK(BM_LoadScenario)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
