// Runs a scenario's fault schedule against a running simulator: each step
// at its time (drawn per seed when the scenario gives a range) or after the
// event it waits for, its selectors ("the leader") resolved from a cluster
// view when it runs, and its undo after its "for". The view is kept by
// ClusterWatch, a trace sink that only tracks the cluster (the one leader
// tracker, checkers::ClusterView) and tells the driver what happened; the
// driver decides what to schedule.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "checkers/cluster_view.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/vocab/vocabulary.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tools/electsim/engine/failover.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// Feeds every record to a ClusterView and reports the events fault steps
// and stop conditions wait on. It never acts on the run itself.
class ClusterWatch final : public sim::TraceSink {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // An election node claimed the leader role.
    virtual void OnLeaderClaimed() = 0;
    // After a record that changed the view, one live node leads and every
    // other live node believes it.
    virtual void OnLeaderKnown() = 0;
    // Election node `node` reached `moment` (began a write, granted a vote,
    // took a term, sent a lease request, committed an entry, began an
    // election).
    virtual void OnMoment(uint32_t node, FaultStep::Moment moment) = 0;
  };

  // `view` (without message roles) may be shared with other sinks (see
  // ClusterView::Apply); it must outlive the watch. `moments`: those the
  // scenario's steps wait for ("during"), the only ones reported; the watch
  // reads no other record for them.
  ClusterWatch(checkers::ClusterView& view, Listener* listener, const std::vector<FaultStep::Moment>& moments);
  void OnRecord(const sim::TraceRecord& record) override;
  // What can change the view, and the observations of the moments waited for.
  sim::TraceKinds kinds() const override { return view_.kinds(); }
  sim::ObservationTypes observation_types() const override { return observation_types_; }
  sim::ObservationTypes message_types() const override { return view_.message_types(); }
  const checkers::ClusterView& view() const { return view_; }

 private:
  bool Wants(FaultStep::Moment moment) const { return (moments_ & (1u << static_cast<unsigned>(moment))) != 0; }

  checkers::ClusterView& view_;
  Listener* listener_;
  uint32_t moments_ = 0;  // bit per FaultStep::Moment
  sim::ObservationTypes observation_types_;
};

class FaultDriver final : public ClusterWatch::Listener {
 public:
  // The steps' random times are drawn from `seed`'s "scenario-times" stream.
  // `view` is the cluster view the watch keeps up to date; it must outlive the driver.
  FaultDriver(const Scenario& scenario, uint64_t seed, sim::Simulator& sim, checkers::ClusterView& view);

  // The sink that must see every record (before anything that reads the view).
  sim::TraceSink* watch() { return &watch_; }
  const checkers::ClusterView& view() const { return watch_.view(); }

  // When every step is over, if that is known before the run (no step waits
  // for an event); nullopt otherwise.
  std::optional<sim::TimeNs> FaultsEndAt() const;
  // Schedules the steps; call after Simulator::Start. `all_done` runs once,
  // at the instant the last step is over (at once when there are none).
  absl::Status Start(std::function<void()> all_done);
  // Runs `action` once the leader is known to every live node (at once if it is now).
  void WhenLeaderKnown(std::function<void()> action);

  // Tells `tracker` (which must outlive the driver) of every step that hits
  // the leader, and of every cut restored.
  void TrackFailovers(FailoverTracker* tracker) { failovers_ = tracker; }

  // Steps that could not apply, as notes ("skipped /faults/2 at 1.5s: ...").
  std::vector<std::string> TakeNotes() { return std::move(notes_); }
  // Keep, from now on, which step made which records (off by default: a
  // campaign's seeds have no reader for it).
  void LogApplications() { log_applications_ = true; }
  std::vector<FaultApplication> TakeApplications() { return std::move(applications_); }

  void OnLeaderClaimed() override;
  void OnLeaderKnown() override;
  void OnMoment(uint32_t node, FaultStep::Moment moment) override;

 private:
  static void RunAll(std::vector<std::function<void()>>& actions);
  // Step i happens now.
  void Fire(size_t i);
  // Waits for step i's event, then runs it after its delay.
  void Arm(size_t i);
  void StepDone(size_t i);
  void Apply(const FaultStep& step);  // ApplyNow, logged when asked
  void ApplyNow(const FaultStep& step);
  // One per kind of step that needs more than a line.
  void ApplyToNode(const FaultStep& step, const std::function<absl::Status(sim::NodeId)>& fault);
  void ApplyCrash(const FaultStep& step);
  void ApplyPause(const FaultStep& step);
  void ApplyClock(const FaultStep& step);
  // Runs `fault` on `node` now, or, for a step with "during", right after the
  // handler in which the node next reaches that moment returns.
  void WhenDue(const FaultStep& step, sim::NodeId node, std::function<void(sim::NodeId)> fault);
  // Runs `fault` on the node `selector` names (a step's actor), once it is
  // due: {"next_leader": N} waits for the Nth election from now, then, as
  // any step, for its moment if the step has "during". "leader" with
  // "during" while no node leads waits for the next election.
  void OnActor(const FaultStep& step, const NodeSelector& selector, std::function<void(sim::NodeId)> fault);
  // Runs `then` with the node that takes the leader role in the
  // `elections`th election from now, unless `waiting` was cleared first.
  void AfterElections(uint32_t elections, std::shared_ptr<bool> waiting, std::function<void(sim::NodeId)> then);
  void ApplyPartition(const FaultStep& step);
  // Cuts `groups` apart (`bystanders` stay reachable from every side) and
  // restores them after the step's "for".
  void Partition(const FaultStep& step, const std::vector<std::vector<sim::NodeId>>& groups,
                 const std::vector<sim::NodeId>& bystanders);
  void ApplyCut(const FaultStep& step);
  bool IsLeader(sim::NodeId node) const;
  // Tells the failover tracker that `step` hit `node`, if it was the leader;
  // `side`: the election nodes expected to elect anew (empty: all others).
  void LeaderHit(const FaultStep& step, FailoverEpisode::Hit hit, sim::NodeId node, bool was_leader,
                 std::vector<uint32_t> side = {});
  // For a partition: the election nodes of the largest group, when the
  // leader is in another one; empty otherwise.
  std::vector<uint32_t> MajoritySideWithoutLeader(const std::vector<std::vector<sim::NodeId>>& groups,
                                                  sim::NodeId leader) const;
  // kNoNode (with a note) when the selector names nobody right now.
  sim::NodeId Resolve(const NodeSelector& selector, const FaultStep& step);
  void Skip(const FaultStep& step, const std::string& why);
  // A cut or link whose ends resolved to one node: skipped with a note.
  bool SkippedAsSelfLink(const FaultStep& step, sim::NodeId from, sim::NodeId to);
  void Check(const FaultStep& step, const absl::Status& status);
  // Runs `undo` after the step's "for", if it has one. Call it only once the
  // step's fault is in force: a skipped step has nothing to undo.
  void UndoLater(const FaultStep& step, std::function<void()> undo);
  // Crash, restart, pause or resume through the simulator; counts the fault
  // when it applied and notes the step as skipped when it did not.
  bool ApplyProcessFault(const FaultStep& step, sim::NodeId node, const absl::Status& status);
  // Undoes a process fault made by `step` unless a later step replaced it.
  void UndoProcessFaultLater(const FaultStep& step, sim::NodeId node, std::string_view what,
                             std::function<absl::Status()> undo);
  // Undoes a step's cuts unless a heal has removed every cut since (a later
  // step's cuts are not this step's to remove).
  void RestoreCutsLater(const FaultStep& step, sim::CutSet cut);

  const Scenario& scenario_;
  const algorithms::Cluster cluster_;
  sim::Simulator& sim_;
  ClusterWatch watch_;
  // This run's fault steps, with their times drawn (see DrawStepTimes).
  std::vector<FaultStep> steps_;
  // File index of a step -> steps (indexes into steps_) waiting for it to be over.
  std::map<size_t, std::vector<size_t>> waiting_for_;
  size_t steps_done_ = 0;
  // Whether anything waits for steps to be over (a trigger, the stop condition).
  bool tracks_steps_ = false;
  std::function<void()> all_done_;
  std::vector<std::function<void()>> on_claimed_;
  std::vector<std::function<void()>> on_known_;
  struct AtMoment {
    uint32_t node;
    FaultStep::Moment moment;
    uint64_t id;
    std::function<void()> action;
  };
  std::vector<AtMoment> at_moment_;
  uint64_t moment_triggers_ = 0;
  std::vector<std::string> notes_;
  bool log_applications_ = false;
  std::vector<FaultApplication> applications_;
  // Crashes, restarts, pauses and resumes applied so far, per node: an undo
  // applies only while the fault it undoes is still the one in force.
  std::vector<uint64_t> process_faults_;
  // Heal steps applied so far.
  uint64_t heals_ = 0;
  // Told when a step hits the leader and when a cut is restored; may be null.
  FailoverTracker* failovers_ = nullptr;
};

}  // namespace electsim
