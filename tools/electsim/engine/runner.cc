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

}  // namespace

// One scenario's runs, seed after seed. The first run builds the simulator,
// the cluster view, the fault driver, the sinks and the checkers, and
// registers the sinks; each later run makes every one of them anew in place
// (Simulator::Reset, Checker::Renew, optional's emplace), so that the
// simulator's routes to them still hold and each run starts from exactly
// what a new driver would. Teardown and set-up were about a sixth of a short
// Raft trial, registering the sinks alone a twenty-fifth.
class ScenarioDriver {
 public:
  ScenarioDriver(const Scenario& scenario, const RunOptions& options)
      : scenario_(scenario), options_(options), cluster_(scenario.cluster()) {}

  absl::StatusOr<RunResult> Run(uint64_t seed) {
    RunResult result;
    result.seed = seed;
    if (auto s = Prepare(seed, result); !s.ok()) return s;
    running_ = true;
    // Boot first: a fault at 0s then lands after every node has started.
    if (auto s = sim_->Start(); !s.ok()) return s;
    if (auto s = faults_->Start([this] { AllStepsDone(); }); !s.ok()) return s;
    if (auto s = RunToEnd(); !s.ok()) return Stopped(s);
    running_ = false;
    if (metrics_) metrics_->Finish(sim_->now());
    for (auto& checker : checkers_) {
      checker->OnTraceEnd(sim_->trace_records());
      checker->Finish(sim_->now());
      if (checker->violation()) result.violations.push_back(*checker->violation());
    }
    Collect(metrics_ ? &*metrics_ : nullptr, result);
    if (failovers_) {
      failovers_->Finish(sim_->now());
      result.failovers = failovers_->TakeEpisodes();
    }
    if (shard_metrics_) result.shards = shard_metrics_->Finish(sim_->now());
    Judge(result);
    return result;
  }

 private:
  // Everything a run starts from, for `seed`: made at the first run, made
  // anew in place at each later one.
  absl::Status Prepare(uint64_t seed, RunResult& result) {
    const bool first_run = !sim_.has_value();
    if (first_run) {
      sim_.emplace(seed, scenario_.total_nodes(), scenario_.network);
    } else {
      sim_->Reset(seed);
    }
    view_.reset();
    view_.emplace(scenario_.nodes);
    if (scenario_.algorithm->observes_keys()) view_->IgnoreKeyedObservations();
    faults_.reset();
    faults_.emplace(scenario_, seed, *sim_, *view_);
    if (options_.log_fault_applications) faults_->LogApplications();
    sim_->SetMaxPendingEvents(sim::Simulator::MaxPendingEventsFor(scenario_.pending_events_memory_mib << 20));
    // The loader validated the model; the simulator has not started.
    SIM_CHECK(sim_->SetNodeModel(scenario_.node_model).ok(), "the node model is set before Start");
    stop_requested_ = false;
    metrics_.reset();
    if (options_.collect_metrics || options_.track_failovers || ExpectsMetrics()) {
      metrics_.emplace(*view_, &scenario_.algorithm->message_roles());
    }
    if (options_.hash_trace) {
      sim_->EnableTraceHash();
      sim_->KeepTraceHashCheckpoints(result.checkpoints.every, TraceCheckpoints::kMaxCheckpoints);
    }
    failovers_.reset();
    if (options_.track_failovers) {
      failovers_.emplace(*view_, *metrics_);
      faults_->TrackFailovers(&*failovers_);
    }
    shard_metrics_.reset();
    if (const std::optional<int64_t> keys = ShardCount()) {
      shard_metrics_.emplace(scenario_.nodes, *keys, cluster_.store, options_.key_measures_from);
    }
    if (first_run) {
      auto checkers = MakeCheckers();
      if (!checkers.ok()) return checkers.status();
      checkers_ = std::move(*checkers);
      if (options_.offer_every_observation) sim_->OfferEveryObservation();
      if (options_.offer_every_record) sim_->OfferEveryRecord();
      AddSink(faults_->watch());
      if (failovers_) AddSink(&*failovers_);
      if (metrics_) AddSink(&*metrics_);
      if (shard_metrics_) AddSink(&*shard_metrics_);
      for (auto& checker : checkers_) AddSink(checker.get());
      for (sim::TraceSink* sink : options_.extra_sinks) AddSink(sink);
      if (auto s = SetProcesses(); !s.ok()) return s;
    } else {
      const checkers::CheckerConfig config = MakeCheckerConfig();
      for (auto& checker : checkers_) checker->Renew(config);
#ifndef NDEBUG
      // In debug builds (the sanitizer tests) only: reading the sinks'
      // declarations again costs about as much as registering them.
      SIM_CHECK(DeclaredAsAdded(), "a renewed sink reads what it read when the simulator's routes were built");
#endif
    }
    return absl::OkStatus();
  }

  // What a sink declares it reads (sim::TraceSink), as the simulator's routes take it.
  struct Declarations {
    uint32_t kinds = 0;
    std::vector<const sim::RecordType*> observation_types;  // empty and all: every type
    bool all_observation_types = false;
    std::vector<const sim::RecordType*> message_types;
    bool all_message_types = false;
    bool reads_instant_starts = false;
    bool operator==(const Declarations&) const = default;
  };
  static Declarations DeclarationsOf(const sim::TraceSink& sink) {
    const sim::ObservationTypes observations = sink.observation_types();
    const sim::ObservationTypes messages = sink.message_types();
    return {.kinds = sink.kinds().mask(),
            .observation_types = {observations.types().begin(), observations.types().end()},
            .all_observation_types = observations.all(),
            .message_types = {messages.types().begin(), messages.types().end()},
            .all_message_types = messages.all(),
            .reads_instant_starts = sink.reads_instant_starts()};
  }
  void AddSink(sim::TraceSink* sink) {
    sim_->AddTraceSink(sink);
#ifndef NDEBUG
    added_.emplace_back(sink, DeclarationsOf(*sink));
#endif
  }
#ifndef NDEBUG
  // Whether every sink declares what it did when added.
  bool DeclaredAsAdded() const {
    return std::all_of(added_.begin(), added_.end(),
                       [](const auto& added) { return DeclarationsOf(*added.first) == added.second; });
  }
  // Each sink with what it declared when added.
  std::vector<std::pair<const sim::TraceSink*, Declarations>> added_;
#endif

  checkers::CheckerConfig MakeCheckerConfig() {
    checkers::CheckerConfig config;
    config.node_count = scenario_.nodes;
    config.message_roles = &scenario_.algorithm->message_roles();
    config.liveness_within = scenario_.liveness_within;
    const std::optional<sim::TimeNs> liveness_after = LivenessAfter();
    config.liveness_after = liveness_after.value_or(sim::TimeNs(0));
    config.liveness_after_from_run = !liveness_after;
    config.liveness_stable_for = scenario_.liveness_stable_for;
    config.cluster_view = &*view_;
    config.per_key = scenario_.algorithm->observes_keys();
    return config;
  }

  absl::StatusOr<std::vector<std::unique_ptr<checkers::Checker>>> MakeCheckers() {
    const checkers::CheckerConfig config = MakeCheckerConfig();
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
    // One factory for all the runs of the scenario; each node calls it rather than holding a copy.
    node_factory_ = scenario_.algorithm->NodeFactory(cluster_, scenario_.options);
    for (uint32_t i = 0; i < scenario_.nodes; ++i) {
      if (auto s = sim_->SetProcess(sim::NodeId(i), [this](sim::NodeId self) { return node_factory_(self); });
          !s.ok()) {
        return s;
      }
    }
    const bool fencing = scenario_.fencing;
    const bool exclusive_token = scenario_.exclusive_token;
    if (auto s = sim_->SetProcess(cluster_.resource,
                                  [fencing, exclusive_token](sim::NodeId) {
                                    return algorithms::MakeSharedResource(fencing, exclusive_token);
                                  });
        !s.ok()) {
      return s;
    }
    if (cluster_.store == sim::kNoNode) return absl::OkStatus();
    return sim_->SetProcess(
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
  void Collect(checkers::MetricsCollector* metrics, RunResult& result) {
    if (options_.hash_trace) {
      result.trace_hashed = true;
      result.trace_hash = sim_->trace_hasher().hash();
      result.checkpoints.every = sim_->trace_hasher().checkpoint_every();
      result.checkpoints.hashes = sim_->trace_hasher().checkpoints();
    }
    result.trace_records = sim_->trace_records();
    result.end = sim_->now();
    result.stats = sim_->stats();
    if (metrics != nullptr) result.metrics = metrics->TakeMetrics();
    result.notes = faults_->TakeNotes();
    result.fault_applications = faults_->TakeApplications();
  }

  // Runs to the scenario's end, in slices when the caller may ask to stop.
  // Slicing is invisible in the trace: RunUntil runs the same events in the
  // same order whether it is called once or many times.
  // A stop condition ends the run early, at the end of the instant at which
  // it first holds once all of the instant's records are in.
  absl::Status RunToEnd() {
    sim::TimeNs slice_end;
    do {
      if (options_.should_stop && options_.should_stop())
        return absl::CancelledError("stopped before the end of the run");
      slice_end =
          options_.should_stop ? std::min(sim_->now() + kStopCheckInterval, scenario_.duration) : scenario_.duration;
      stop_requested_ = false;
      if (auto s = sim_->RunUntil(slice_end); !s.ok()) return s;
      if (stop_requested_ && faults_->view().LeaderKnownToAll()) return absl::OkStatus();
      if (stop_requested_) {
        // Known at one record of the instant but not after all of them: wait for the next time.
        stop_requested_ = false;
        faults_->WhenLeaderKnown([this] { RequestStop(); });
        slice_end = sim_->now();
        if (sim_->now() >= scenario_.duration) return absl::OkStatus();
      }
    } while (slice_end < scenario_.duration);
    return absl::OkStatus();
  }

  void RequestStop() {
    stop_requested_ = true;
    sim_->StopAtEndOfInstant();
  }

  // The liveness checker's "after", when it is known before the run.
  std::optional<sim::TimeNs> LivenessAfter() const {
    if (scenario_.liveness_after) return *scenario_.liveness_after;
    return faults_->FaultsEndAt();
  }

  void AllStepsDone() {
    if (running_) {
      for (auto& checker : checkers_) checker->OnFaultsOver(sim_->now());
    }
    if (scenario_.stop_when_leader_known) faults_->WhenLeaderKnown([this] { RequestStop(); });
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
    const bool elected = view_->leader_role_reported();
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
  const RunOptions& options_;  // the caller's (RunScenario's, or a ScenarioRunner's), outliving the driver
  algorithms::Cluster cluster_;
  // Makes the election nodes (SetProcesses); outlives the simulator, whose nodes refer to it.
  sim::ProcessFactory node_factory_;
  // Each made at the first run and anew in place at every later one (see the class comment).
  std::optional<sim::Simulator> sim_;
  // The one view of the cluster the watch, the metrics and liveness share.
  std::optional<checkers::ClusterView> view_;
  std::optional<FaultDriver> faults_;
  std::optional<checkers::MetricsCollector> metrics_;
  std::optional<FailoverTracker> failovers_;
  std::optional<checkers::ShardMetricsCollector> shard_metrics_;
  std::vector<std::unique_ptr<checkers::Checker>> checkers_;
  bool stop_requested_ = false;
  // Between the start of the run and its end (for OnFaultsOver).
  bool running_ = false;
};

std::vector<std::string> RunResult::violated_checkers() const {
  std::vector<std::string> names;
  for (const auto& v : violations) names.push_back(v.checker);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<RunResult> RunScenario(const Scenario& scenario, uint64_t seed, const RunOptions& options) {
  ScenarioDriver driver(scenario, options);
  return driver.Run(seed);
}

ScenarioRunner::ScenarioRunner(std::shared_ptr<const Scenario> scenario, RunOptions options)
    : scenario_(std::move(scenario)), options_(std::move(options)) {}

ScenarioRunner::~ScenarioRunner() = default;

absl::StatusOr<RunResult> ScenarioRunner::Run(uint64_t seed) {
  if (driver_ == nullptr) driver_ = std::make_unique<ScenarioDriver>(*scenario_, options_);
  auto result = driver_->Run(seed);
  // A run that stopped part way (an error, a stop request) leaves its
  // objects as they were; the next run starts from a new driver.
  if (!result.ok()) driver_.reset();
  return result;
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
