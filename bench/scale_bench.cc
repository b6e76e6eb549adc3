// Whole scenario runs of Raft and Bully from 5 to 10,000 nodes, as a user
// gets them (RunScenario with the default checkers): set-up time, peak heap,
// and events per second of wall time once the cluster has a leader. Run with
//   build/bench/electsim_scale_bench
// results/scale.md is its output made into a table by bench/scale/table.py.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "bench/alloc_counter.h"
#include "benchmark/benchmark.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace {

enum class Algorithm { kRaft, kBully };

// The only time-0 events are the start events: every latency is 1 ms or
// more, so a run that ends at 1 ns has booted every node and done nothing
// else (the schema wants a duration > 0).
constexpr int64_t kSetupOnlyDurationNs = 1;

// Long enough for either algorithm to have elected before the measured
// window starts (Raft with the timeouts below by about 330 ms at every size
// here); BM_SteadyRun checks that a leader is known by then and reports any
// election inside the window.
constexpr int64_t kWarmupDurationMs = 1000;

// The measured window covers the same simulated work at every size
// (node-seconds), so an iteration takes a similar wall time at 5 nodes and at
// 10,000; at least 40 heartbeat rounds of 50 ms, and at most 20 s because
// Raft's log (a leader write every 100 ms) grows with simulated time and
// would make the small clusters' memory a measure of run length.
constexpr int64_t kSteadyNodeSeconds = 20000;
constexpr int64_t kMinSteadyDurationMs = 2000;
constexpr int64_t kMaxSteadyDurationMs = 20000;

// Raft's default election timeouts (150-300 ms) elect nobody at 500 nodes
// and more: within one vote round trip (up to 20 ms) dozens of nodes time
// out and split the vote, term after term (results/scale.md). A maximum of
// 2 ms per node elects within 2 terms up to 10,000 nodes and keeps the
// defaults up to 150; once a leader's heartbeats (every 50 ms) keep everyone
// a follower, which is what the steady run measures, the timeout only says
// how long each cancelled timer stays queued.
constexpr int64_t kDefaultElectionTimeoutMaxMs = 300;
constexpr int64_t kElectionTimeoutMaxPerNodeMs = 2;

constexpr uint64_t kSeed = 1;

int64_t SteadyDurationMs(uint32_t nodes) {
  return std::clamp<int64_t>(kSteadyNodeSeconds * 1000 / nodes, kMinSteadyDurationMs, kMaxSteadyDurationMs);
}

int64_t SteadyRunElectionTimeoutMaxMs(uint32_t nodes) {
  return std::max<int64_t>(kDefaultElectionTimeoutMaxMs, kElectionTimeoutMaxPerNodeMs * nodes);
}

// `raft_options`: a JSON object of Raft options, empty for the defaults.
std::string ScenarioText(Algorithm algorithm, uint32_t nodes, const std::string& duration,
                         const std::string& raft_options = "") {
  // Bully's default starts an election at every node at once: N^2/2 messages
  // at 0s. With "highest" one node announces itself, as after a clean boot.
  const std::string algorithm_json =
      algorithm == Algorithm::kRaft
          ? (raft_options.empty() ? R"({"name": "raft"})" : R"({"name": "raft", "options": )" + raft_options + "}")
          : R"({"name": "bully", "options": {"start_election": "highest"}})";
  return R"({"nodes": )" + std::to_string(nodes) + R"(, "duration": ")" + duration + R"(", "algorithm": )" +
         algorithm_json + R"(, "network": {"latency": {"uniform": ["1ms", "10ms"]}}})";
}

// Null (and the benchmark skipped with the reason) when the text does not load.
std::optional<electsim::Scenario> LoadScenario(benchmark::State& state, Algorithm algorithm, uint32_t nodes,
                                               const std::string& duration, const std::string& raft_options = "") {
  auto scenario = electsim::ParseScenario(ScenarioText(algorithm, nodes, duration, raft_options), "<scale_bench>");
  if (!scenario.ok()) {
    state.SkipWithError(scenario.status().ToString().c_str());
    return std::nullopt;
  }
  return *std::move(scenario);
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Building the run and booting every node: RunScenario up to and including
// the start events at 0s. Parsing the (constant-size) scenario text is left
// out. Time per iteration is the set-up time; peak_setup_bytes is the most
// heap live at once during it, beyond what was live before.
void BM_Setup(benchmark::State& state, Algorithm algorithm) {
  const auto nodes = static_cast<uint32_t>(state.range(0));
  const auto scenario = LoadScenario(state, algorithm, nodes, std::to_string(kSetupOnlyDurationNs) + "ns");
  if (!scenario) return;
  int64_t peak_setup_bytes = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    bench::ResetPeakLiveBytes();
    const int64_t live_before_bytes = bench::CurrentAllocStats().live_bytes;
    auto result = electsim::RunScenario(*scenario, kSeed);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    peak_setup_bytes = std::max(peak_setup_bytes, bench::CurrentAllocStats().peak_live_bytes - live_before_bytes);
    events = result->stats.events;
    benchmark::DoNotOptimize(result->trace_hash);
  }
  state.counters["peak_setup_bytes"] = static_cast<double>(peak_setup_bytes);
  state.counters["bytes_per_node"] = static_cast<double>(peak_setup_bytes) / nodes;
  state.counters["events"] = static_cast<double>(events);  // the start events: one per process
}

// Events per second of wall time in steady state: one run to the end of
// warm-up plus the measured window, timed from the moment it reaches the end
// of warm-up (set-up and the first election are left out). Runs are
// deterministic, so the window's events are the run's less those of a run
// that stops at the end of warm-up. peak_run_bytes: the run's peak heap,
// set-up included.
void BM_SteadyRun(benchmark::State& state, Algorithm algorithm) {
  const auto nodes = static_cast<uint32_t>(state.range(0));
  const int64_t steady_duration_ms = SteadyDurationMs(nodes);
  const std::string raft_options =
      R"({"election_timeout_max": ")" + std::to_string(SteadyRunElectionTimeoutMaxMs(nodes)) + R"(ms"})";
  const auto warmup = LoadScenario(state, algorithm, nodes, std::to_string(kWarmupDurationMs) + "ms", raft_options);
  const auto whole = LoadScenario(state, algorithm, nodes,
                                  std::to_string(kWarmupDurationMs + steady_duration_ms) + "ms", raft_options);
  if (!warmup || !whole) return;
  const auto warmup_result = electsim::RunScenario(*warmup, kSeed);
  if (!warmup_result.ok()) {
    state.SkipWithError(warmup_result.status().ToString().c_str());
    return;
  }
  if (warmup_result->metrics.leaders_by_term.empty()) {
    state.SkipWithError("no leader by the end of the warm-up: the measured window would not be steady");
    return;
  }
  // RunScenario asks should_stop before each kStopCheckInterval of simulated
  // time; the ask with this index (from 0) comes at the end of warm-up.
  const int64_t stop_check_interval_ms = electsim::kStopCheckInterval.ns() / 1000000;
  if (kWarmupDurationMs % stop_check_interval_ms != 0) {
    state.SkipWithError("the warm-up must be a whole number of stop-check intervals");
    return;
  }
  const int64_t warmup_end_check = kWarmupDurationMs / stop_check_interval_ms;
  int64_t peak_run_bytes = 0;
  uint64_t steady_events = 0;
  uint64_t steady_elections = 0;
  uint64_t whole_run_events = 0;
  double whole_run_s = 0;
  for (auto _ : state) {
    int64_t stop_checks = 0;
    std::optional<std::chrono::steady_clock::time_point> window_start;
    electsim::RunOptions options;
    options.should_stop = [&] {
      if (stop_checks++ == warmup_end_check) window_start = std::chrono::steady_clock::now();
      return false;
    };
    bench::ResetPeakLiveBytes();
    const int64_t live_before_bytes = bench::CurrentAllocStats().live_bytes;
    const auto run_start = std::chrono::steady_clock::now();
    auto result = electsim::RunScenario(*whole, kSeed, options);
    const auto run_end = std::chrono::steady_clock::now();
    if (!result.ok() || !window_start) {
      state.SkipWithError(result.ok() ? "the run never reached the end of warm-up"
                                      : result.status().ToString().c_str());
      return;
    }
    state.SetIterationTime(Seconds(run_end - *window_start));
    peak_run_bytes = std::max(peak_run_bytes, bench::CurrentAllocStats().peak_live_bytes - live_before_bytes);
    steady_events += result->stats.events - warmup_result->stats.events;
    steady_elections = result->metrics.elections.size() - warmup_result->metrics.elections.size();
    whole_run_events += result->stats.events;
    whole_run_s += Seconds(run_end - run_start);
    benchmark::DoNotOptimize(result->trace_hash);
  }
  state.SetItemsProcessed(static_cast<int64_t>(steady_events));
  state.counters["peak_run_bytes"] = static_cast<double>(peak_run_bytes);
  // Not 0 would mean the window is not steady: an election happened in it.
  state.counters["steady_elections"] = static_cast<double>(steady_elections);
  state.counters["steady_sim_s"] = static_cast<double>(steady_duration_ms) / 1000;
  state.counters["events_per_node_sim_s"] = static_cast<double>(steady_events) /
                                            static_cast<double>(state.iterations()) / nodes /
                                            (static_cast<double>(steady_duration_ms) / 1000);
  // Whole run, set-up and election included: what a user's wall clock shows.
  state.counters["whole_run_events_per_s"] = static_cast<double>(whole_run_events) / whole_run_s;
}

void ClusterSizes(benchmark::internal::Benchmark* b) {
  for (int64_t nodes : {5, 50, 500, 2000, 5000, 10000}) b->Arg(nodes);
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Setup, raft, Algorithm::kRaft)->Apply(ClusterSizes);
BENCHMARK_CAPTURE(BM_Setup, bully, Algorithm::kBully)->Apply(ClusterSizes);
BENCHMARK_CAPTURE(BM_SteadyRun, raft, Algorithm::kRaft)->Apply(ClusterSizes)->UseManualTime();
BENCHMARK_CAPTURE(BM_SteadyRun, bully, Algorithm::kBully)->Apply(ClusterSizes)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
