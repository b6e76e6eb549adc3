#include "tools/electsim/engine/runner.h"

#include <algorithm>
#include <memory>

#include "electsim/algorithms/leader_work.h"
#include "electsim/sim/check.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/engine/fault_driver.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/duration.h"

namespace electsim {
namespace {

// "an election_safety", "a stale_token": checker names start with either.
std::string WithArticle(std::string_view word) {
  const bool vowel = !word.empty() && std::string_view("aeiou").find(word.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", word);
}

class ScenarioDriver {
 public:
  ScenarioDriver(const Scenario& scenario, uint64_t seed)
      : scenario_(scenario),
        cluster_(scenario.cluster()),
        sim_(seed, scenario.total_nodes(), scenario.network),
        view_(scenario.nodes),
        faults_(scenario, seed, sim_, view_) {
    sim_.SetMaxPendingEvents(sim::Simulator::MaxPendingEventsFor(scenario.pending_events_memory_mib << 20));
    // The loader validated the model; the simulator has not started.
    SIM_CHECK(sim_.SetNodeModel(scenario.node_model).ok(), "the node model is set before Start");
    if (scenario.algorithm->observes_keys()) view_.IgnoreKeyedObservations();
  }

  absl::StatusOr<RunResult> Run(const RunOptions& options) {
    RunResult result;
    result.seed = sim_.seed();
    std::optional<checkers::MetricsCollector> metrics;
    if (options.collect_metrics || options.track_failovers || ExpectsMetrics()) {
      metrics.emplace(view_, &scenario_.algorithm->message_roles());
    }
    auto checkers = MakeCheckers();
    if (!checkers.ok()) return checkers.status();
    if (options.hash_trace) {
      sim_.EnableTraceHash();
      sim_.KeepTraceHashCheckpoints(result.checkpoints.every, TraceCheckpoints::kMaxCheckpoints);
    }
    if (options.offer_every_observation) sim_.OfferEveryObservation();
    if (options.offer_every_record) sim_.OfferEveryRecord();
    sim_.AddTraceSink(faults_.watch());
    std::optional<FailoverTracker> failovers;
    if (options.track_failovers) {
      failovers.emplace(view_, *metrics);
      faults_.TrackFailovers(&*failovers);
      sim_.AddTraceSink(&*failovers);
    }
    if (metrics) sim_.AddTraceSink(&*metrics);
    std::optional<checkers::ShardMetricsCollector> shard_metrics;
    if (const std::optional<int64_t> keys = ShardCount()) {
      shard_metrics.emplace(scenario_.nodes, *keys, cluster_.store, options.key_measures_from);
      sim_.AddTraceSink(&*shard_metrics);
    }
    for (auto& checker : *checkers) sim_.AddTraceSink(checker.get());
    checkers_ = &*checkers;
    for (sim::TraceSink* sink : options.extra_sinks) sim_.AddTraceSink(sink);
    if (auto s = SetProcesses(); !s.ok()) return s;
    // Boot first: a fault at 0s then lands after every node has started.
    if (auto s = sim_.Start(); !s.ok()) return s;
    if (auto s = faults_.Start([this] { AllStepsDone(); }); !s.ok()) return s;
    if (auto s = RunToEnd(options); !s.ok()) return Stopped(s);
    checkers_ = nullptr;
    if (metrics) metrics->Finish(sim_.now());
    for (auto& checker : *checkers) {
      checker->OnTraceEnd(sim_.trace_records());
      checker->Finish(sim_.now());
      if (checker->violation()) result.violations.push_back(*checker->violation());
    }
    Collect(options, metrics ? &*metrics : nullptr, result);
    if (failovers) {
      failovers->Finish(sim_.now());
      result.failovers = failovers->TakeEpisodes();
    }
    if (shard_metrics) result.shards = shard_metrics->Finish(sim_.now());
    Judge(result);
    return result;
  }

 private:
  absl::StatusOr<std::vector<std::unique_ptr<checkers::Checker>>> MakeCheckers() {
    checkers::CheckerConfig config;
    config.node_count = scenario_.nodes;
    config.message_roles = &scenario_.algorithm->message_roles();
    config.liveness_within = scenario_.liveness_within;
    const std::optional<sim::TimeNs> liveness_after = LivenessAfter();
    config.liveness_after = liveness_after.value_or(sim::TimeNs(0));
    config.liveness_after_from_run = !liveness_after;
    config.liveness_stable_for = scenario_.liveness_stable_for;
    config.cluster_view = &view_;
    config.per_key = scenario_.algorithm->observes_keys();
    std::vector<std::unique_ptr<checkers::Checker>> checkers;
    checkers.reserve(scenario_.checkers.size());
    for (const std::string& name : scenario_.checkers) {
      auto checker = checkers::MakeChecker(name, config);
      if (!checker.ok()) return checker.status();
      checkers.push_back(std::move(*checker));
    }
    return checkers;
  }

  // How many keys the nodes share, for an algorithm that observes keys and
  // says how many (its "keys" option).
  std::optional<int64_t> ShardCount() const {
    if (!scenario_.algorithm->observes_keys()) return std::nullopt;
    for (const algorithms::OptionSpec& option : scenario_.algorithm->options()) {
      if (option.name == "keys") return scenario_.options.Int("keys");
    }
    return std::nullopt;
  }

  // The election nodes, the shared resource and the store, if any.
  absl::Status SetProcesses() {
    // One factory made per run; each node calls it rather than holding a copy.
    node_factory_ = scenario_.algorithm->NodeFactory(cluster_, scenario_.options);
    for (uint32_t i = 0; i < scenario_.nodes; ++i) {
      if (auto s = sim_.SetProcess(sim::NodeId(i), [this](sim::NodeId self) { return node_factory_(self); }); !s.ok()) {
        return s;
      }
    }
    const bool fencing = scenario_.fencing;
    const bool exclusive_token = scenario_.exclusive_token;
    if (auto s = sim_.SetProcess(cluster_.resource,
                                 [fencing, exclusive_token](sim::NodeId) {
                                   return algorithms::MakeSharedResource(fencing, exclusive_token);
                                 });
        !s.ok()) {
      return s;
    }
    if (cluster_.store == sim::kNoNode) return absl::OkStatus();
    return sim_.SetProcess(
        cluster_.store, [this](sim::NodeId) { return scenario_.algorithm->CreateStore(cluster_, scenario_.options); });
  }

  // Why the simulation stopped before the scenario's end, as a status.
  absl::Status Stopped(const absl::Status& s) const {
    if (absl::IsCancelled(s)) return s;
    if (absl::IsResourceExhausted(s)) {
      // Settings the simulator cannot carry (a storm of messages or timers): bad input.
      return InputError(fmt::format(
          "{}: the simulation stopped: {}; \"pending_events_memory_mib\" ({} MiB now, at {} "
          "bytes an event) raises the limit",
          scenario_.source, std::string(s.message()), scenario_.pending_events_memory_mib, sim::kBytesPerPendingEvent));
    }
    return absl::InternalError(
        EscapeForTerminal(fmt::format("{}: the simulation stopped: {}", scenario_.source, std::string(s.message()))));
  }

  // Whether the scenario expects something only the metrics tell ("elected"
  // the cluster view tells).
  bool ExpectsMetrics() const {
    const Expectation& expect = scenario_.expect;
    return expect.multi_leader || expect.writes_rejected_min || expect.writes_accepted_min;
  }

  // `metrics`: null where the run collected none.
  void Collect(const RunOptions& options, checkers::MetricsCollector* metrics, RunResult& result) {
    if (options.hash_trace) {
      result.trace_hashed = true;
      result.trace_hash = sim_.trace_hasher().hash();
      result.checkpoints.every = sim_.trace_hasher().checkpoint_every();
      result.checkpoints.hashes = sim_.trace_hasher().checkpoints();
    }
    result.trace_records = sim_.trace_records();
    result.end = sim_.now();
    result.stats = sim_.stats();
    if (metrics != nullptr) result.metrics = metrics->TakeMetrics();
    result.notes = faults_.TakeNotes();
  }

  // Runs to the scenario's end, in slices when the caller may ask to stop.
  // Slicing is invisible in the trace: RunUntil runs the same events in the
  // same order whether it is called once or many times.
  // A stop condition ends the run early, at the end of the instant at which
  // it first holds once all of the instant's records are in.
  absl::Status RunToEnd(const RunOptions& options) {
    sim::TimeNs slice_end;
    do {
      if (options.should_stop && options.should_stop())
        return absl::CancelledError("stopped before the end of the run");
      slice_end =
          options.should_stop ? std::min(sim_.now() + kStopCheckInterval, scenario_.duration) : scenario_.duration;
      stop_requested_ = false;
      if (auto s = sim_.RunUntil(slice_end); !s.ok()) return s;
      if (stop_requested_ && faults_.view().LeaderKnownToAll()) return absl::OkStatus();
      if (stop_requested_) {
        // Known at one record of the instant but not after all of them: wait for the next time.
        stop_requested_ = false;
        faults_.WhenLeaderKnown([this] { RequestStop(); });
        slice_end = sim_.now();
        if (sim_.now() >= scenario_.duration) return absl::OkStatus();
      }
    } while (slice_end < scenario_.duration);
    return absl::OkStatus();
  }

  void RequestStop() {
    stop_requested_ = true;
    sim_.StopAtEndOfInstant();
  }

  // The liveness checker's "after", when it is known before the run.
  std::optional<sim::TimeNs> LivenessAfter() const {
    if (scenario_.liveness_after) return *scenario_.liveness_after;
    return faults_.FaultsEndAt();
  }

  void AllStepsDone() {
    if (checkers_ != nullptr) {
      for (auto& checker : *checkers_) checker->OnFaultsOver(sim_.now());
    }
    if (scenario_.stop_when_leader_known) faults_.WhenLeaderKnown([this] { RequestStop(); });
  }

  void Judge(RunResult& result) const {
    const Expectation& expect = scenario_.expect;
    const std::vector<std::string> fired = result.violated_checkers();
    for (const std::string& name : fired) {
      if (!std::binary_search(expect.violations.begin(), expect.violations.end(), name)) {
        result.failed_expectations.push_back(fmt::format("unexpected {} violation", name));
      }
    }
    for (const std::string& name : expect.violations) {
      if (!std::binary_search(fired.begin(), fired.end(), name)) {
        result.failed_expectations.push_back(fmt::format("expected {} violation, none was found", WithArticle(name)));
      }
    }
    const auto& m = result.metrics;
    if (expect.multi_leader && *expect.multi_leader != (m.multi_leader_time > sim::TimeNs(0))) {
      result.failed_expectations.push_back(*expect.multi_leader
                                               ? "expected two leaders at once at some point, never saw it"
                                               : fmt::format("expected never two leaders at once, saw it for {}",
                                                             sim::FormatDuration(m.multi_leader_time)));
    }
    const bool elected = view_.leader_role_reported();
    if (expect.elected && *expect.elected != elected) {
      result.failed_expectations.push_back(*expect.elected ? "expected a leader to be elected, none was"
                                                           : "expected no leader to be elected, one was");
    }
    if (expect.writes_rejected_min && m.writes_rejected < *expect.writes_rejected_min) {
      result.failed_expectations.push_back(fmt::format("expected at least {} rejected stale writes, saw {}",
                                                       *expect.writes_rejected_min, m.writes_rejected));
    }
    if (expect.writes_accepted_min && m.writes_accepted < *expect.writes_accepted_min) {
      result.failed_expectations.push_back(
          fmt::format("expected at least {} accepted writes, saw {}", *expect.writes_accepted_min, m.writes_accepted));
    }
  }

  const Scenario& scenario_;
  algorithms::Cluster cluster_;
  // Makes the election nodes (SetProcesses); outlives the simulator, whose nodes refer to it.
  sim::ProcessFactory node_factory_;
  sim::Simulator sim_;
  // The one view of the cluster the watch, the metrics and liveness share.
  checkers::ClusterView view_;
  FaultDriver faults_;
  bool stop_requested_ = false;
  // The run's checkers while it runs, for OnFaultsOver.
  std::vector<std::unique_ptr<checkers::Checker>>* checkers_ = nullptr;
};

}  // namespace

std::vector<std::string> RunResult::violated_checkers() const {
  std::vector<std::string> names;
  for (const auto& v : violations) names.push_back(v.checker);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<RunResult> RunScenario(const Scenario& scenario, uint64_t seed, const RunOptions& options) {
  ScenarioDriver driver(scenario, seed);
  return driver.Run(options);
}

namespace {

bool SameViolation(const checkers::Violation& a, const checkers::Violation& b) {
  return a.checker == b.checker && a.time == b.time && a.trace_index == b.trace_index && a.nodes == b.nodes &&
         a.term == b.term && a.token == b.token && a.message == b.message;
}

}  // namespace

absl::StatusOr<RunResult> RunAgainHashed(const Scenario& scenario, uint64_t seed, const RunResult& unhashed,
                                         RunOptions options) {
  options.hash_trace = true;
  auto again = RunScenario(scenario, seed, options);
  if (!again.ok()) return again;
  const bool same = again->trace_records == unhashed.trace_records && again->end == unhashed.end &&
                    again->failed_expectations == unhashed.failed_expectations &&
                    std::equal(again->violations.begin(), again->violations.end(), unhashed.violations.begin(),
                               unhashed.violations.end(), SameViolation);
  if (!same) {
    return absl::InternalError(fmt::format(
        "{} seed {}: run again to hash its trace, it did not repeat ({} records and {} violation(s) the first "
        "time, {} and {} the second): the simulation is not deterministic; please report it with this scenario",
        EscapeForTerminal(scenario.source), seed, unhashed.trace_records, unhashed.violations.size(),
        again->trace_records, again->violations.size()));
  }
  return again;
}

}  // namespace electsim
