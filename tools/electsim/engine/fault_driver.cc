#include "tools/electsim/engine/fault_driver.h"

#include <algorithm>

#include "electsim/sim/check.h"
#include "electsim/sim/rng.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace electsim {
namespace {

// The scenario's fault steps with this run's times: each random time drawn
// from the seed's "scenario-times" stream, in file order (at or the trigger's
// delay, then for), so that a draw never shifts the network's randomness or
// another step's draws. Sorted as they will run: by time, then file order;
// steps with "after" last.
std::vector<FaultStep> DrawStepTimes(const Scenario& scenario, uint64_t seed) {
  std::vector<FaultStep> steps = scenario.faults;
  const auto by_file_index = [](const FaultStep& a, const FaultStep& b) { return a.file_index < b.file_index; };
  // The sorts only where needed: a stable sort takes a buffer even for one
  // step, and most scenarios list their steps in order.
  if (!std::is_sorted(steps.begin(), steps.end(), by_file_index)) std::sort(steps.begin(), steps.end(), by_file_index);
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
  const auto by_time = [](const FaultStep& a, const FaultStep& b) {
    return std::make_pair(a.after.has_value(), a.at) < std::make_pair(b.after.has_value(), b.at);
  };
  if (!std::is_sorted(steps.begin(), steps.end(), by_time)) std::stable_sort(steps.begin(), steps.end(), by_time);
  return steps;
}

// The moments the scenario's steps wait for ("during").
std::vector<FaultStep::Moment> MomentsWaitedFor(const Scenario& scenario) {
  std::vector<FaultStep::Moment> moments;
  for (const FaultStep& step : scenario.faults) moments.push_back(step.during);
  return moments;
}

}  // namespace

ClusterWatch::ClusterWatch(checkers::ClusterView& view, Listener* listener,
                           const std::vector<FaultStep::Moment>& moments)
    : view_(view), listener_(listener), observation_types_(checkers::ClusterView::observation_types()) {
  using Moment = FaultStep::Moment;
  for (const Moment moment : moments) {
    if (moment != Moment::kNone) moments_ |= 1u << static_cast<unsigned>(moment);
  }
  // Each type once: a set holds only so many.
  const std::pair<Moment, const sim::RecordType*> observed[] = {
      {Moment::kWrite, &vocab::kWriteBegin}, {Moment::kVote, &vocab::kVote},
      {Moment::kTerm, &vocab::kTermChange},  {Moment::kRenewal, &vocab::kLeaseRequest},
      {Moment::kCommit, &vocab::kLogCommit},  // a campaign is a role change, which the view reads anyway
  };
  for (const auto& [moment, type] : observed) {
    if (Wants(moment)) observation_types_ = observation_types_.With({type});
  }
}

void ClusterWatch::OnRecord(const sim::TraceRecord& r) {
  const uint32_t node = r.node.value();
  const bool observation = r.kind == sim::TraceKind::kObserve && r.payload != nullptr;
  if (moments_ != 0 && observation && node < view_.node_count()) {
    using Moment = FaultStep::Moment;
    const Moment moment =
        r.payload->Is(vocab::kWriteBegin)     ? Moment::kWrite
        : r.payload->Is(vocab::kVote)         ? Moment::kVote
        : r.payload->Is(vocab::kTermChange)   ? Moment::kTerm
        : r.payload->Is(vocab::kLeaseRequest) ? Moment::kRenewal
        : r.payload->Is(vocab::kLogCommit)    ? Moment::kCommit
        : r.payload->Is(vocab::kRoleChange) && r.payload->value(0) == static_cast<int64_t>(vocab::Role::kCandidate)
            ? Moment::kCampaign
            : Moment::kNone;
    if (moment != Moment::kNone && Wants(moment)) listener_->OnMoment(node, moment);
  }
  if (!view_.Apply(r)) return;
  if (observation && r.payload->Is(vocab::kRoleChange) && view_.node(node).role == vocab::Role::kLeader) {
    listener_->OnLeaderClaimed();
  }
  if (view_.LeaderKnownToAll()) listener_->OnLeaderKnown();
}

FaultDriver::FaultDriver(const Scenario& scenario, uint64_t seed, sim::Simulator& sim, checkers::ClusterView& view)
    : scenario_(scenario),
      cluster_(scenario.cluster()),
      sim_(sim),
      watch_(view, this, MomentsWaitedFor(scenario)),
      steps_(DrawStepTimes(scenario, seed)),
      tracks_steps_(scenario.stop_when_leader_known),
      process_faults_(scenario.total_nodes(), 0) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].after) continue;
    tracks_steps_ = true;
    if (steps_[i].after->step) waiting_for_[*steps_[i].after->step].push_back(i);
  }
}

std::optional<sim::TimeNs> FaultDriver::FaultsEndAt() const {
  sim::TimeNs last;
  for (const FaultStep& step : steps_) {
    if (step.after) return std::nullopt;
    last = std::max(last, step.EndsAt());
  }
  return last;
}

absl::Status FaultDriver::Start(std::function<void()> all_done) {
  all_done_ = std::move(all_done);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const FaultStep& step = steps_[i];
    if (!step.after) {
      if (auto s = sim_.ScheduleAt(step.at, [this, i] { Fire(i); }); !s.ok()) return s;
    } else if (!step.after->step) {
      Arm(i);  // waits for an event from the start
    }
  }
  if (steps_.empty()) all_done_();
  return absl::OkStatus();
}

void FaultDriver::WhenLeaderKnown(std::function<void()> action) {
  if (watch_.view().LeaderKnownToAll()) {
    action();
    return;
  }
  on_known_.push_back(std::move(action));
}

void FaultDriver::RunAll(std::vector<std::function<void()>>& actions) {
  // An action may register more: those wait for the next event.
  std::vector<std::function<void()>> due;
  due.swap(actions);
  for (auto& action : due) action();
}

void FaultDriver::OnLeaderClaimed() { RunAll(on_claimed_); }
void FaultDriver::OnLeaderKnown() { RunAll(on_known_); }

void FaultDriver::OnMoment(uint32_t node, FaultStep::Moment moment) {
  // Pending triggers for this node and moment run (a trigger may arm further ones).
  std::vector<AtMoment> due;
  for (auto it = at_moment_.begin(); it != at_moment_.end();) {
    if (it->node == node && it->moment == moment) {
      due.push_back(std::move(*it));
      it = at_moment_.erase(it);
    } else {
      ++it;
    }
  }
  for (AtMoment& trigger : due) trigger.action();
}

void FaultDriver::OnActor(const FaultStep& step, const NodeSelector& selector, std::function<void(sim::NodeId)> fault) {
  if (log_applications_) {
    // Its records may come at a moment long after the step's note.
    fault = [this, &step, fault = std::move(fault)](sim::NodeId node) {
      const uint64_t first = sim_.trace_records();
      fault(node);
      applications_.push_back({step.json_path, first, sim_.trace_records()});
    };
  }
  // {"next_leader": N} waits for the Nth election; so does "leader" with a
  // moment to wait for while no node leads: the next leader's moment.
  const bool no_leader_yet = selector.kind == NodeSelector::Kind::kLeader && step.during != FaultStep::Moment::kNone &&
                             watch_.view().LatestLeader() == sim::kNoNode;
  if (selector.kind != NodeSelector::Kind::kNextLeader && !no_leader_yet) {
    const sim::NodeId actor = Resolve(selector, step);
    if (actor != sim::kNoNode) WhenDue(step, actor, std::move(fault));
    return;
  }
  auto waiting = std::make_shared<bool>(true);
  AfterElections(no_leader_yet ? 1 : selector.id, waiting, [this, &step, fault = std::move(fault)](sim::NodeId leader) {
    if (step.during != FaultStep::Moment::kNone) {
      WhenDue(step, leader, fault);
      return;
    }
    // Right after the handler in which it took the role.
    (void)sim_.ScheduleAt(sim_.now(), [fault, leader] { fault(leader); });
  });
  if (!step.within) return;
  (void)sim_.ScheduleAt(step.at + *step.within, [this, &step, waiting, selector, no_leader_yet] {
    if (!*waiting) return;
    *waiting = false;
    const std::string what = no_leader_yet ? "no leader was" : selector.Describe() + " was not";
    Skip(step, fmt::format("{} elected within {}", what, sim::FormatDuration(*step.within)));
  });
}

void FaultDriver::AfterElections(uint32_t elections, std::shared_ptr<bool> waiting,
                                 std::function<void(sim::NodeId)> then) {
  on_claimed_.emplace_back([this, elections, waiting, then = std::move(then)]() mutable {
    if (!*waiting) return;
    if (elections > 1) {
      AfterElections(elections - 1, std::move(waiting), std::move(then));
      return;
    }
    *waiting = false;
    then(watch_.view().LatestLeader());  // the node that just claimed the role
  });
}

void FaultDriver::WhenDue(const FaultStep& step, sim::NodeId node, std::function<void(sim::NodeId)> fault) {
  if (step.during == FaultStep::Moment::kNone) {
    fault(node);
    return;
  }
  if (node.value() >= scenario_.nodes) {
    Skip(step, fmt::format("only election nodes reach a {}", FaultStep::MomentName(step.during)));
    return;
  }
  // Right after the handler that reached the moment returns: a fault lands
  // between handlers, never inside one.
  const uint64_t id = ++moment_triggers_;
  at_moment_.push_back({node.value(), step.during, id, [this, node, fault = std::move(fault)] {
                          (void)sim_.ScheduleAt(sim_.now(), [fault, node] { fault(node); });
                        }});
  if (!step.within) return;
  // From the step's time: a step for a next leader may have waited for its election.
  (void)sim_.ScheduleAt(std::max(sim_.now(), step.at + *step.within), [this, &step, node, id] {
    const auto pending =
        std::find_if(at_moment_.begin(), at_moment_.end(), [id](const AtMoment& t) { return t.id == id; });
    if (pending == at_moment_.end()) return;  // it came
    at_moment_.erase(pending);
    Skip(step, fmt::format("node {} reached no {} within {}", node.value(), FaultStep::MomentName(step.during),
                           sim::FormatDuration(*step.within)));
  });
}

void FaultDriver::Fire(size_t i) {
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

void FaultDriver::Arm(size_t i) {
  const Trigger& trigger = *steps_[i].after;
  auto fire_later = [this, i] {
    (void)sim_.ScheduleAt(sim_.now() + steps_[i].after->delay.min, [this, i] { Fire(i); });
  };
  switch (trigger.event) {
    case Trigger::Event::kLeaderElected: on_claimed_.emplace_back(fire_later); return;
    case Trigger::Event::kLeaderKnown: WhenLeaderKnown(fire_later); return;
    case Trigger::Event::kStepDone: fire_later(); return;
  }
}

void FaultDriver::StepDone(size_t i) {
  const size_t file_index = steps_[i].file_index;
  for (const size_t waiting : waiting_for_[file_index]) Arm(waiting);
  if (++steps_done_ == steps_.size()) all_done_();
}

// kNoNode (with a note) when the selector names nobody right now.
sim::NodeId FaultDriver::Resolve(const NodeSelector& selector, const FaultStep& step) {
  switch (selector.kind) {
    case NodeSelector::Kind::kId: return sim::NodeId(selector.id);
    case NodeSelector::Kind::kResource: return cluster_.resource;
    case NodeSelector::Kind::kStore: return cluster_.store;
    case NodeSelector::Kind::kNextLeader: return sim::kNoNode;  // see OnActor; the loader allows it nowhere else
    case NodeSelector::Kind::kLeader: {
      const sim::NodeId leader = watch_.view().LatestLeader();
      if (leader == sim::kNoNode) Skip(step, "there is no leader");
      return leader;
    }
  }
  return sim::kNoNode;
}

void FaultDriver::Skip(const FaultStep& step, const std::string& why) {
  const std::string note = fmt::format("skipped {} at {}: {}", step.json_path, sim::FormatDuration(step.at), why);
  sim_.Note(note);
  notes_.push_back(note);
}

void FaultDriver::Check(const FaultStep& step, const absl::Status& status) {
  if (!status.ok()) Skip(step, std::string(status.message()));
}

// Runs `undo` after the step's "for", if it has one. Call it only once the
// step's fault is in force: a skipped step has nothing to undo.
void FaultDriver::UndoLater(const FaultStep& step, std::function<void()> undo) {
  if (!step.for_ns) return;
  (void)sim_.ScheduleAt(sim_.now() + *step.for_ns, std::move(undo));
}

// Process faults are counted per node, so that a step's undo can tell
// whether the crash or pause it made is still the one in force: another
// step may have restarted or resumed the node meanwhile, and crashed or
// paused it again for good.
// Crash, restart, pause or resume through the simulator; counts the fault
// when it applied and notes the step as skipped when it did not.
bool FaultDriver::ApplyProcessFault(const FaultStep& step, sim::NodeId node, const absl::Status& status) {
  if (!status.ok()) {
    Skip(step, std::string(status.message()));
    return false;
  }
  ++process_faults_[node.value()];
  return true;
}

// Undoes a process fault made by `step` unless a later step replaced it.
void FaultDriver::UndoProcessFaultLater(const FaultStep& step, sim::NodeId node, std::string_view what,
                                        std::function<absl::Status()> undo) {
  const uint64_t fault = process_faults_[node.value()];
  UndoLater(step, [this, &step, node, fault, what, undo = std::move(undo)] {
    if (process_faults_[node.value()] != fault) {
      Skip(step,
           fmt::format("no {}: a later step crashed, restarted, paused or resumed node {} first", what, node.value()));
      return;
    }
    ApplyProcessFault(step, node, undo());
  });
}

// Undoes a step's cuts unless a heal has removed every cut since (a later
// step's cuts are not this step's to remove).
void FaultDriver::RestoreCutsLater(const FaultStep& step, sim::CutSet cut) {
  UndoLater(step, [this, &step, heals = heals_, cut = std::move(cut)] {
    if (heals != heals_) return;  // healed already
    const absl::Status restored = sim_.RestoreLinks(cut);
    Check(step, restored);
    if (restored.ok() && failovers_ != nullptr) failovers_->OnCutRestored(step.json_path, sim_.now());
  });
}

void FaultDriver::Apply(const FaultStep& step) {
  if (!log_applications_) {
    ApplyNow(step);
    return;
  }
  const uint64_t first = sim_.trace_records();
  ApplyNow(step);
  applications_.push_back({step.json_path, first, sim_.trace_records()});
}

void FaultDriver::ApplyNow(const FaultStep& step) {
  sim_.Note(sim_.RecordIsUsed(sim::TraceKind::kNote) ? fmt::format("fault {}: {}", step.json_path, step.Describe())
                                                     : std::string());
  using Action = FaultStep::Action;
  switch (step.action) {
    case Action::kCrash: ApplyCrash(step); return;
    case Action::kRestart: ApplyToNode(step, [this](sim::NodeId node) { return sim_.Restart(node); }); return;
    case Action::kPause: ApplyPause(step); return;
    case Action::kResume: ApplyToNode(step, [this](sim::NodeId node) { return sim_.Resume(node); }); return;
    case Action::kPartition:
    case Action::kIsolate: ApplyPartition(step); return;
    case Action::kCut: ApplyCut(step); return;
    case Action::kHeal:
      sim_.HealNetwork();
      ++heals_;
      if (failovers_ != nullptr) failovers_->OnHeal(sim_.now());
      return;
    case Action::kClockDrift:
    case Action::kClockShift: ApplyClock(step); return;
    case Action::kNetwork: Check(step, sim_.SetAllLinks(step.link)); return;
    case Action::kLink: {
      const sim::NodeId from = Resolve(step.node, step);
      const sim::NodeId to = Resolve(step.to, step);
      if (from == sim::kNoNode || to == sim::kNoNode || SkippedAsSelfLink(step, from, to)) return;
      Check(step, sim_.SetLink(from, to, step.link));
      return;
    }
  }
}

void FaultDriver::ApplyToNode(const FaultStep& step, const std::function<absl::Status(sim::NodeId)>& fault) {
  const sim::NodeId node = Resolve(step.node, step);
  if (node != sim::kNoNode) ApplyProcessFault(step, node, fault(node));
}

void FaultDriver::ApplyCrash(const FaultStep& step) {
  const sim::CrashKind kind = step.lose_unsynced ? sim::CrashKind::kPowerLoss : sim::CrashKind::kProcess;
  OnActor(step, step.node, [this, &step, kind](sim::NodeId node) {
    const bool was_leader = IsLeader(node);
    if (!ApplyProcessFault(step, node, sim_.Crash(node, kind))) return;
    LeaderHit(step, FailoverEpisode::Hit::kCrash, node, was_leader);
    UndoProcessFaultLater(step, node, "restart", [this, node] { return sim_.Restart(node); });
  });
}

void FaultDriver::ApplyClock(const FaultStep& step) {
  OnActor(step, step.node, [this, &step](sim::NodeId node) {
    Check(step, step.action == FaultStep::Action::kClockDrift ? sim_.SetClockDrift(node, step.drift_ppm)
                                                              : sim_.StepWallClock(node, step.shift));
  });
}

void FaultDriver::ApplyPause(const FaultStep& step) {
  auto pause = [this, &step](sim::NodeId node) {
    const bool was_leader = IsLeader(node);
    if (!ApplyProcessFault(step, node, sim_.Pause(node))) return;
    LeaderHit(step, FailoverEpisode::Hit::kPause, node, was_leader);
    UndoProcessFaultLater(step, node, "resume", [this, node] { return sim_.Resume(node); });
  };
  OnActor(step, step.node, pause);
}

void FaultDriver::ApplyPartition(const FaultStep& step) {
  if (step.action == FaultStep::Action::kIsolate) {
    // Isolate pulls the node's cable: it reaches nothing, services included.
    // With "during", at its moment, with what that handler sent still on
    // the wire (and lost with the cable).
    OnActor(step, step.node, [this, &step](sim::NodeId node) { Partition(step, {{node}}, {}); });
    return;
  }
  // The shared services stay reachable from every side of a partition
  // unless a group names them (a replicated store, a blob store).
  std::vector<sim::NodeId> bystanders;
  for (const sim::NodeId service : {cluster_.resource, cluster_.store}) {
    if (service != sim::kNoNode) bystanders.push_back(service);
  }
  std::vector<std::vector<sim::NodeId>> groups;
  for (const auto& group : step.groups) {
    groups.emplace_back();
    for (const NodeSelector& selector : group) {
      const sim::NodeId node = Resolve(selector, step);
      if (node == sim::kNoNode) return;
      groups.back().push_back(node);
    }
  }
  Partition(step, groups, bystanders);
}

void FaultDriver::Partition(const FaultStep& step, const std::vector<std::vector<sim::NodeId>>& groups,
                            const std::vector<sim::NodeId>& bystanders) {
  const sim::NodeId leader = watch_.view().LatestLeader();
  auto links = sim_.Partition(groups, bystanders);
  if (!links.ok()) {
    Check(step, links.status());
    return;
  }
  if (step.action == FaultStep::Action::kIsolate) {
    LeaderHit(step, FailoverEpisode::Hit::kCut, groups.front().front(), groups.front().front() == leader);
  } else if (std::vector<uint32_t> side = MajoritySideWithoutLeader(groups, leader); !side.empty()) {
    LeaderHit(step, FailoverEpisode::Hit::kCut, leader, true, std::move(side));
  }
  RestoreCutsLater(step, std::move(*links));
}

bool FaultDriver::IsLeader(sim::NodeId node) const {
  return watch_.view().IsElectionNode(node) && watch_.view().HoldsLeaderRole(node.value());
}

void FaultDriver::LeaderHit(const FaultStep& step, FailoverEpisode::Hit hit, sim::NodeId node, bool was_leader,
                            std::vector<uint32_t> side) {
  if (failovers_ == nullptr || !was_leader) return;
  if (side.empty()) {
    for (uint32_t n = 0; n < scenario_.nodes; ++n) {
      if (n != node.value()) side.push_back(n);
    }
  }
  failovers_->OnLeaderHit(step.json_path, hit, node.value(), sim_.now(), std::move(side));
}

std::vector<uint32_t> FaultDriver::MajoritySideWithoutLeader(const std::vector<std::vector<sim::NodeId>>& groups,
                                                             sim::NodeId leader) const {
  if (leader == sim::kNoNode) return {};
  // Each election node's side: its group, or one more side for the nodes in none.
  std::vector<size_t> side_of(scenario_.nodes, groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const sim::NodeId n : groups[g]) {
      if (n.value() < scenario_.nodes) side_of[n.value()] = g;
    }
  }
  std::vector<size_t> sizes(groups.size() + 1, 0);
  for (size_t side : side_of) ++sizes[side];
  const size_t leader_side = side_of[leader.value()];
  size_t largest = leader_side;
  for (size_t side = 0; side < sizes.size(); ++side) {
    if (side != leader_side && sizes[side] > sizes[largest]) largest = side;
  }
  if (largest == leader_side) return {};  // the leader keeps the largest side: no failover to measure
  std::vector<uint32_t> nodes;
  for (uint32_t n = 0; n < scenario_.nodes; ++n) {
    if (side_of[n] == largest) nodes.push_back(n);
  }
  return nodes;
}

bool FaultDriver::SkippedAsSelfLink(const FaultStep& step, sim::NodeId from, sim::NodeId to) {
  // "leader" resolved to the other end: a file may not name one node at
  // both ends, and a node's messages to itself do not cross the network.
  if (from != to) return false;
  Skip(step, fmt::format("node {} is at both ends: its messages to itself do not cross the network", to.value()));
  return true;
}

void FaultDriver::ApplyCut(const FaultStep& step) {
  const sim::NodeId to = Resolve(step.to, step);
  if (to == sim::kNoNode) return;
  OnActor(step, step.node, [this, &step, to](sim::NodeId from) {
    if (SkippedAsSelfLink(step, from, to)) return;
    if (auto status = sim_.CutOneWay(from, to); !status.ok()) {
      Check(step, status);
      return;
    }
    RestoreCutsLater(step, sim::CutSet{.links = {sim::Link{from, to}}});
  });
}

}  // namespace electsim
