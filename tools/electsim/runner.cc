#include "tools/electsim/runner.h"

#include <algorithm>
#include <map>
#include <memory>

#include "electsim/algorithms/leader_work.h"
#include "electsim/vocab/vocabulary.h"
#include "checkers/cluster_view.h"
#include "electsim/sim/rng.h"
#include "fmt/format.h"
#include "electsim/sim/check.h"
#include "sim/format.h"
#include "tools/electsim/duration.h"
#include "tools/electsim/terminal_text.h"

namespace electsim {
namespace {

// Tracks who is in the leader role, to resolve "leader" selectors, and arms
// "pause during write" steps on the target's next write_begin.
class LeaderTracker final : public sim::TraceSink {
 public:
  explicit LeaderTracker(uint32_t node_count) : claimed_at_(node_count) {}

  void OnRecord(const sim::TraceRecord& r) override {
    const uint32_t node = r.node.value();
    if (r.kind == sim::TraceKind::kCrash && node < claimed_at_.size()) claimed_at_[node].reset();
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    if (r.payload->Is(vocab::kWriteBegin)) {
      // Fire pending triggers for this node (a trigger may arm further ones).
      std::vector<std::pair<uint32_t, std::function<void()>>> due;
      for (auto it = write_triggers_.begin(); it != write_triggers_.end();) {
        if (it->first == node) {
          due.push_back(std::move(*it));
          it = write_triggers_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto& [unused, action] : due) action();
    }
    if (node >= claimed_at_.size() || !r.payload->Is(vocab::kRoleChange)) return;
    if (r.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader)) {
      claimed_at_[node] = r.index;
    } else {
      claimed_at_[node].reset();
    }
  }

  // The node that most recently became leader and still is; kNoNode if none.
  sim::NodeId Leader() const {
    sim::NodeId best = sim::kNoNode;
    uint64_t best_index = 0;
    for (uint32_t i = 0; i < claimed_at_.size(); ++i) {
      if (claimed_at_[i] && (best == sim::kNoNode || *claimed_at_[i] > best_index)) {
        best = sim::NodeId(i);
        best_index = *claimed_at_[i];
      }
    }
    return best;
  }

  void OnNextWrite(uint32_t node, std::function<void()> action) { write_triggers_.emplace_back(node, std::move(action)); }

 private:
  std::vector<std::optional<uint64_t>> claimed_at_;  // trace index of the current leadership claim
  std::vector<std::pair<uint32_t, std::function<void()>>> write_triggers_;
};

// Watches the cluster for the events fault steps wait on ("after") and for
// the stop condition: a leader claim, and the state "one live election node
// leads and every other live one believes it".
class ClusterEvents final : public sim::TraceSink {
 public:
  explicit ClusterEvents(uint32_t node_count) : view_(node_count) {}

  void OnRecord(const sim::TraceRecord& r) override {
    if (!view_.Apply(r)) return;
    const bool claim = r.kind == sim::TraceKind::kObserve && r.payload != nullptr &&
                       r.payload->Is(vocab::kRoleChange) && view_.node(r.node.value()).role == vocab::Role::kLeader;
    if (claim) Fire(on_elected_);
    if (LeaderKnown()) Fire(on_known_);
  }

  bool LeaderKnown() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    return leaders.size() == 1 && view_.LiveNonBelievers(leaders[0].value()).empty();
  }

  // `action` runs at the next leader claim / the next record after which the
  // leader is known (at once, for the latter, if it is known now).
  void OnNextElected(std::function<void()> action) { on_elected_.push_back(std::move(action)); }
  void OnKnown(std::function<void()> action) {
    if (LeaderKnown()) {
      action();
      return;
    }
    on_known_.push_back(std::move(action));
  }

 private:
  static void Fire(std::vector<std::function<void()>>& actions) {
    std::vector<std::function<void()>> due;
    due.swap(actions);
    for (auto& action : due) action();
  }

  checkers::ClusterView view_;
  std::vector<std::function<void()>> on_elected_;
  std::vector<std::function<void()>> on_known_;
};

// The scenario's fault steps with this run's times: each random time drawn
// from the seed's "scenario-times" stream, in file order (at or the trigger's
// delay, then for), so that a draw never shifts the network's randomness or
// another step's draws. Sorted as they will run: by time, then file order;
// steps with "after" last.
std::vector<FaultStep> DrawStepTimes(const Scenario& scenario, uint64_t seed) {
  std::vector<FaultStep> steps = scenario.faults;
  std::sort(steps.begin(), steps.end(),
            [](const FaultStep& a, const FaultStep& b) { return a.file_index < b.file_index; });
  sim::Rng rng = sim::Rng::ForStream(seed, "scenario-times");
  auto draw = [&rng](const TimeRange& range) {
    return range.fixed() ? range.min : sim::TimeNs(rng.Between(range.min.ns(), range.max.ns()));
  };
  for (FaultStep& step : steps) {
    if (step.after) {
      step.after->delay.min = step.after->delay.max = draw(step.after->delay);
    } else {
      step.at = draw(step.at_range);
    }
    if (step.for_range) step.for_ns = draw(*step.for_range);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const FaultStep& a, const FaultStep& b) {
    return std::make_pair(a.after.has_value(), a.at) < std::make_pair(b.after.has_value(), b.at);
  });
  return steps;
}

// Reads the run's hasher after every `every` records (the hasher sees each
// record first: it is registered first).
class CheckpointRecorder final : public sim::TraceSink {
 public:
  CheckpointRecorder(const sim::TraceHasher& hasher, TraceCheckpoints& checkpoints)
      : hasher_(hasher), checkpoints_(checkpoints) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if ((r.index + 1) % checkpoints_.every != 0) return;
    if (checkpoints_.hashes.size() == TraceCheckpoints::kMaxCheckpoints) {
      // Keep the checkpoints at multiples of twice the spacing.
      for (size_t i = 0; 2 * i + 1 < checkpoints_.hashes.size(); ++i) checkpoints_.hashes[i] = checkpoints_.hashes[2 * i + 1];
      checkpoints_.hashes.resize(checkpoints_.hashes.size() / 2);
      checkpoints_.every *= 2;
      if ((r.index + 1) % checkpoints_.every != 0) return;
    }
    checkpoints_.hashes.push_back(hasher_.hash());
  }

 private:
  const sim::TraceHasher& hasher_;
  TraceCheckpoints& checkpoints_;
};

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
        leaders_(scenario.nodes),
        events_(scenario.nodes),
        steps_(DrawStepTimes(scenario, seed)),
        tracks_steps_(scenario.stop_when_leader_known),
        process_faults_(scenario.total_nodes(), 0) {
    // The loader validated the model; the simulator has not started.
    SIM_CHECK(sim_.SetNodeModel(scenario.node_model).ok(), "the node model is set before Start");
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (!steps_[i].after) continue;
      tracks_steps_ = true;
      if (steps_[i].after->step) waiting_for_[*steps_[i].after->step].push_back(i);
    }
  }

  absl::StatusOr<RunResult> Run(const RunOptions& options) {
    RunResult result;
    result.seed = sim_.seed();
    sim::TraceHasher hasher;
    checkers::MetricsCollector metrics(scenario_.nodes, &scenario_.algorithm->message_roles());
    std::vector<std::unique_ptr<checkers::Checker>> checkers;
    checkers::CheckerConfig config;
    config.node_count = scenario_.nodes;
    config.message_roles = scenario_.algorithm->message_roles();
    config.liveness_within = scenario_.liveness_within;
    const std::optional<sim::TimeNs> liveness_after = LivenessAfter();
    config.liveness_after = liveness_after.value_or(sim::TimeNs(0));
    config.liveness_after_from_run = !liveness_after;
    config.liveness_stable_for = scenario_.liveness_stable_for;
    for (const std::string& name : scenario_.checkers) {
      auto checker = checkers::MakeChecker(name, config);
      if (!checker.ok()) return checker.status();
      checkers.push_back(std::move(*checker));
    }
    sim_.AddTraceSink(&hasher);
    CheckpointRecorder checkpoints(hasher, result.checkpoints);
    sim_.AddTraceSink(&checkpoints);
    sim_.AddTraceSink(&leaders_);
    sim_.AddTraceSink(&events_);
    sim_.AddTraceSink(&metrics);
    for (auto& checker : checkers) sim_.AddTraceSink(checker.get());
    checkers_ = &checkers;
    for (sim::TraceSink* sink : options.extra_sinks) sim_.AddTraceSink(sink);

    for (uint32_t i = 0; i < scenario_.nodes; ++i) {
      if (auto s = sim_.SetProcess(sim::NodeId(i), [this](sim::NodeId self) {
            return scenario_.algorithm->CreateNode(self, cluster_, scenario_.options);
          }); !s.ok()) {
        return s;
      }
    }
    const bool fencing = scenario_.fencing;
    const bool exclusive_token = scenario_.exclusive_token;
    if (auto s = sim_.SetProcess(cluster_.resource, [fencing, exclusive_token](sim::NodeId) {
          return algorithms::MakeSharedResource(fencing, exclusive_token);
        }); !s.ok()) {
      return s;
    }
    if (cluster_.store != sim::kNoNode) {
      if (auto s = sim_.SetProcess(cluster_.store, [this](sim::NodeId) {
            return scenario_.algorithm->CreateStore(cluster_, scenario_.options);
          }); !s.ok()) {
        return s;
      }
    }
    // Boot first: a fault at 0s then lands after every node has started.
    if (auto s = sim_.Start(); !s.ok()) return s;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const FaultStep& step = steps_[i];
      if (!step.after) {
        if (auto s = sim_.ScheduleAt(step.at, [this, i] { Fire(i); }); !s.ok()) return s;
      } else if (!step.after->step) {
        Arm(i);  // waits for an event from the start
      }
    }
    if (steps_.empty()) AllStepsDone();
    if (auto s = RunToEnd(options); !s.ok()) {
      if (absl::IsCancelled(s)) return s;
      if (absl::IsResourceExhausted(s)) {
        // Settings the simulator cannot carry (a storm of messages or timers): bad input.
        return InputError(fmt::format("{}: the simulation stopped: {}", scenario_.source, std::string(s.message())));
      }
      return absl::InternalError(EscapeForTerminal(
          fmt::format("{}: the simulation stopped: {}", scenario_.source, std::string(s.message()))));
    }
    checkers_ = nullptr;
    metrics.Finish(sim_.now());
    for (auto& checker : checkers) {
      checker->Finish(sim_.now());
      if (checker->violation()) result.violations.push_back(*checker->violation());
    }
    result.trace_hash = hasher.hash();
    result.trace_records = sim_.trace_records();
    result.end = sim_.now();
    result.stats = sim_.stats();
    result.metrics = metrics.metrics();
    result.notes = std::move(notes_);
    Judge(result);
    return result;
  }

 private:
  // Runs to the scenario's end, in slices when the caller may ask to stop.
  // Slicing is invisible in the trace: RunUntil runs the same events in the
  // same order whether it is called once or many times.
  // A stop condition ends the run early, at the end of the instant at which
  // it first holds once all of the instant's records are in.
  absl::Status RunToEnd(const RunOptions& options) {
    sim::TimeNs slice_end;
    do {
      if (options.should_stop && options.should_stop()) return absl::CancelledError("stopped before the end of the run");
      slice_end = options.should_stop ? std::min(sim_.now() + kStopCheckInterval, scenario_.duration)
                                      : scenario_.duration;
      stop_requested_ = false;
      if (auto s = sim_.RunUntil(slice_end); !s.ok()) return s;
      if (stop_requested_ && events_.LeaderKnown()) return absl::OkStatus();
      if (stop_requested_) {
        // Known at one record of the instant but not after all of them: wait for the next time.
        stop_requested_ = false;
        events_.OnKnown([this] { RequestStop(); });
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
    sim::TimeNs last;
    for (const FaultStep& step : steps_) {
      if (step.after) return std::nullopt;
      last = std::max(last, step.EndsAt());
    }
    return last;
  }

  // Step i happens now.
  void Fire(size_t i) {
    FaultStep& step = steps_[i];
    step.at = sim_.now();
    Apply(step);
    // A step is over once its "for" has passed (whether or not it could apply).
    if (!tracks_steps_) return;
    if (!step.for_ns) {
      StepDone(i);
    } else {
      (void)sim_.ScheduleAt(sim_.now() + *step.for_ns, [this, i] { StepDone(i); });
    }
  }

  // Waits for step i's event, then runs it after its delay.
  void Arm(size_t i) {
    const Trigger& trigger = *steps_[i].after;
    auto fire_later = [this, i] { (void)sim_.ScheduleAt(sim_.now() + steps_[i].after->delay.min, [this, i] { Fire(i); }); };
    switch (trigger.event) {
      case Trigger::Event::kLeaderElected: events_.OnNextElected(fire_later); return;
      case Trigger::Event::kLeaderKnown: events_.OnKnown(fire_later); return;
      case Trigger::Event::kStepDone: fire_later(); return;
    }
  }

  void StepDone(size_t i) {
    const size_t file_index = steps_[i].file_index;
    for (const size_t waiting : waiting_for_[file_index]) Arm(waiting);
    if (++steps_done_ == steps_.size()) AllStepsDone();
  }

  void AllStepsDone() {
    if (checkers_ != nullptr) {
      for (auto& checker : *checkers_) checker->OnFaultsOver(sim_.now());
    }
    if (scenario_.stop_when_leader_known) events_.OnKnown([this] { RequestStop(); });
  }

  // kNoNode (with a note) when the selector names nobody right now.
  sim::NodeId Resolve(const NodeSelector& selector, const FaultStep& step) {
    switch (selector.kind) {
      case NodeSelector::Kind::kId: return sim::NodeId(selector.id);
      case NodeSelector::Kind::kResource: return cluster_.resource;
      case NodeSelector::Kind::kStore: return cluster_.store;
      case NodeSelector::Kind::kLeader: {
        const sim::NodeId leader = leaders_.Leader();
        if (leader == sim::kNoNode) Skip(step, "there is no leader");
        return leader;
      }
    }
    return sim::kNoNode;
  }

  void Skip(const FaultStep& step, const std::string& why) {
    const std::string note = fmt::format("skipped {} at {}: {}", step.json_path, sim::FormatDuration(step.at), why);
    sim_.Note(note);
    notes_.push_back(note);
  }

  void Check(const FaultStep& step, const absl::Status& status) {
    if (!status.ok()) Skip(step, std::string(status.message()));
  }

  // Runs `undo` after the step's "for", if it has one. Call it only once the
  // step's fault is in force: a skipped step has nothing to undo.
  void UndoLater(const FaultStep& step, std::function<void()> undo) {
    if (!step.for_ns) return;
    (void)sim_.ScheduleAt(sim_.now() + *step.for_ns, std::move(undo));
  }

  // Process faults are counted per node, so that a step's undo can tell
  // whether the crash or pause it made is still the one in force: another
  // step may have restarted or resumed the node meanwhile, and crashed or
  // paused it again for good.
  // Crash, restart, pause or resume through the simulator; counts the fault
  // when it applied and notes the step as skipped when it did not.
  bool ApplyProcessFault(const FaultStep& step, sim::NodeId node, const absl::Status& status) {
    if (!status.ok()) {
      Skip(step, std::string(status.message()));
      return false;
    }
    ++process_faults_[node.value()];
    return true;
  }

  // Undoes a process fault made by `step` unless a later step replaced it.
  void UndoProcessFaultLater(const FaultStep& step, sim::NodeId node, std::string_view what,
                             std::function<absl::Status()> undo) {
    const uint64_t fault = process_faults_[node.value()];
    UndoLater(step, [this, &step, node, fault, what, undo = std::move(undo)] {
      if (process_faults_[node.value()] != fault) {
        Skip(step, fmt::format("no {}: a later step crashed, restarted, paused or resumed node {} first", what,
                               node.value()));
        return;
      }
      ApplyProcessFault(step, node, undo());
    });
  }

  // Undoes a step's cuts unless a heal has removed every cut since (a later
  // step's cuts are not this step's to remove).
  void RestoreCutsLater(const FaultStep& step, std::vector<sim::Link> cut) {
    UndoLater(step, [this, &step, heals = heals_, cut = std::move(cut)] {
      if (heals != heals_) return;  // healed already
      Check(step, sim_.RestoreLinks(cut));
    });
  }

  void Apply(const FaultStep& step) {
    sim_.Note(fmt::format("fault {}: {}", step.json_path, step.Describe()));
    using Action = FaultStep::Action;
    switch (step.action) {
      case Action::kCrash: {
        const sim::NodeId node = Resolve(step.node, step);
        const sim::CrashKind kind = step.lose_unsynced ? sim::CrashKind::kPowerLoss : sim::CrashKind::kProcess;
        if (node == sim::kNoNode || !ApplyProcessFault(step, node, sim_.Crash(node, kind))) return;
        UndoProcessFaultLater(step, node, "restart", [this, node] { return sim_.Restart(node); });
        return;
      }
      case Action::kRestart: {
        const sim::NodeId node = Resolve(step.node, step);
        if (node != sim::kNoNode) ApplyProcessFault(step, node, sim_.Restart(node));
        return;
      }
      case Action::kPause: {
        const sim::NodeId node = Resolve(step.node, step);
        if (node == sim::kNoNode) return;
        auto pause = [this, node, &step] {
          if (!ApplyProcessFault(step, node, sim_.Pause(node))) return;
          UndoProcessFaultLater(step, node, "resume", [this, node] { return sim_.Resume(node); });
        };
        if (!step.during_write) {
          pause();
          return;
        }
        if (node.value() >= scenario_.nodes) {
          Skip(step, "only election nodes write to the resource");
          return;
        }
        // Pause right after the handler that began the write returns.
        leaders_.OnNextWrite(node.value(), [this, pause] { (void)sim_.ScheduleAt(sim_.now(), pause); });
        return;
      }
      case Action::kResume: {
        const sim::NodeId node = Resolve(step.node, step);
        if (node != sim::kNoNode) ApplyProcessFault(step, node, sim_.Resume(node));
        return;
      }
      case Action::kPartition:
      case Action::kIsolate: {
        std::vector<std::vector<sim::NodeId>> groups;
        // The shared services stay reachable from every side of a partition
        // unless a group names them (a replicated store, a blob store). Isolate
        // pulls the node's cable: it reaches nothing, services included.
        std::vector<sim::NodeId> bystanders;
        if (step.action == Action::kPartition) {
          for (const sim::NodeId service : {cluster_.resource, cluster_.store}) {
            if (service != sim::kNoNode) bystanders.push_back(service);
          }
        }
        if (step.action == Action::kIsolate) {
          const sim::NodeId node = Resolve(step.node, step);
          if (node == sim::kNoNode) return;
          groups.push_back({node});
        } else {
          for (const auto& group : step.groups) {
            groups.emplace_back();
            for (const NodeSelector& selector : group) {
              const sim::NodeId node = Resolve(selector, step);
              if (node == sim::kNoNode) return;
              groups.back().push_back(node);
            }
          }
        }
        auto links = sim_.Partition(groups, bystanders);
        if (!links.ok()) {
          Check(step, links.status());
          return;
        }
        RestoreCutsLater(step, std::move(*links));
        return;
      }
      case Action::kCut: {
        const sim::NodeId from = Resolve(step.node, step);
        const sim::NodeId to = Resolve(step.to, step);
        if (from == sim::kNoNode || to == sim::kNoNode) return;
        if (auto status = sim_.CutOneWay(from, to); !status.ok()) {
          Check(step, status);
          return;
        }
        RestoreCutsLater(step, {sim::Link{from, to}});
        return;
      }
      case Action::kHeal:
        sim_.HealNetwork();
        ++heals_;
        return;
      case Action::kClockDrift: {
        const sim::NodeId node = Resolve(step.node, step);
        if (node != sim::kNoNode) Check(step, sim_.SetClockDrift(node, step.drift_ppm));
        return;
      }
      case Action::kClockShift: {
        const sim::NodeId node = Resolve(step.node, step);
        if (node != sim::kNoNode) Check(step, sim_.StepWallClock(node, step.shift));
        return;
      }
      case Action::kNetwork:
        Check(step, sim_.SetAllLinks(step.link));
        return;
      case Action::kLink: {
        const sim::NodeId from = Resolve(step.node, step);
        const sim::NodeId to = Resolve(step.to, step);
        if (from != sim::kNoNode && to != sim::kNoNode) Check(step, sim_.SetLink(from, to, step.link));
        return;
      }
    }
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
    const bool elected = !m.leaders_by_term.empty();
    if (expect.elected && *expect.elected != elected) {
      result.failed_expectations.push_back(*expect.elected ? "expected a leader to be elected, none was"
                                                           : "expected no leader to be elected, one was");
    }
    if (expect.writes_rejected_min && m.writes_rejected < *expect.writes_rejected_min) {
      result.failed_expectations.push_back(fmt::format("expected at least {} rejected stale writes, saw {}",
                                                       *expect.writes_rejected_min, m.writes_rejected));
    }
    if (expect.writes_accepted_min && m.writes_accepted < *expect.writes_accepted_min) {
      result.failed_expectations.push_back(fmt::format("expected at least {} accepted writes, saw {}",
                                                       *expect.writes_accepted_min, m.writes_accepted));
    }
  }

  const Scenario& scenario_;
  algorithms::Cluster cluster_;
  sim::Simulator sim_;
  LeaderTracker leaders_;
  ClusterEvents events_;
  // This run's fault steps, with their times drawn (see DrawStepTimes).
  std::vector<FaultStep> steps_;
  // File index of a step -> steps (indexes into steps_) waiting for it to be over.
  std::map<size_t, std::vector<size_t>> waiting_for_;
  size_t steps_done_ = 0;
  // Whether anything waits for steps to be over (a trigger, the stop condition).
  bool tracks_steps_ = false;
  bool stop_requested_ = false;
  // The run's checkers while it runs, for OnFaultsOver.
  std::vector<std::unique_ptr<checkers::Checker>>* checkers_ = nullptr;
  std::vector<std::string> notes_;
  // Crashes, restarts, pauses and resumes applied so far, per node.
  std::vector<uint64_t> process_faults_;
  // Heal steps applied so far.
  uint64_t heals_ = 0;
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

}  // namespace electsim
