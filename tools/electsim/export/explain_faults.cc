#include "tools/electsim/export/explain_faults.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim::explain {
namespace {

using Action = FaultStep::Action;
using sim::TraceKind;

// The highest latency the model draws.
sim::TimeNs MaxLatency(const sim::LatencyModel& model) {
  return model.kind == sim::LatencyModel::Kind::kFixed ? model.min_ns : model.max_ns;
}

std::string LatencyText(const sim::LatencyModel& model) {
  if (model.kind == sim::LatencyModel::Kind::kFixed) return sim::FormatDuration(model.min_ns);
  return fmt::format("up to {}", sim::FormatDuration(model.max_ns));
}

// What a step does, in a few words, before the trace resolves its nodes.
std::string WhatOf(const FaultStep& step) {
  const std::string node = step.node.Describe();
  switch (step.action) {
    case Action::kCrash: return fmt::format("{} of {}", step.lose_unsynced ? "power loss" : "crash", node);
    case Action::kRestart: return "restart of " + node;
    case Action::kPause: return "pause of " + node;
    case Action::kResume: return "resume of " + node;
    case Action::kPartition: return "partition";
    case Action::kIsolate: return "isolation of " + node;
    case Action::kCut: return fmt::format("cut from {} to {}", node, step.to.Describe());
    case Action::kHeal: return "heal";
    case Action::kClockDrift: return fmt::format("clock drift of {}", node);
    case Action::kClockShift: return fmt::format("wall-clock step of {}", node);
    case Action::kNetwork: return "network change";
    case Action::kLink:
      return fmt::format("latency {} from {} to {}", LatencyText(step.link.latency), node, step.to.Describe());
  }
  return step.action_key;
}

bool Names(const NodeSelector& selector, uint32_t node) {
  return selector.kind != NodeSelector::Kind::kId || selector.id == node;
}

// "[0,1] [2,3,4]" after "partition": the groups, as node ids.
std::vector<std::vector<uint32_t>> ParseGroups(const std::string& detail) {
  std::vector<std::vector<uint32_t>> groups;
  for (size_t at = detail.find('['); at != std::string::npos; at = detail.find('[', at + 1)) {
    const size_t end = detail.find(']', at);
    if (end == std::string::npos) break;
    groups.emplace_back();
    const std::string inside = detail.substr(at + 1, end - at - 1);
    for (size_t p = 0; p < inside.size();) {
      const size_t comma = inside.find(',', p);
      const std::string item = inside.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
      if (!item.empty()) groups.back().push_back(static_cast<uint32_t>(std::stoul(item)));
      if (comma == std::string::npos) break;
      p = comma + 1;
    }
  }
  return groups;
}

}  // namespace

std::string ShortSeconds(sim::TimeNs t) {
  if (t.ns() % 1000000 == 0) return fmt::format("{}.{:03}s", t.ns() / 1000000000, t.ns() % 1000000000 / 1000000);
  return sim::FormatSeconds(t);
}

bool AppliedStep::Cuts(uint32_t from, uint32_t to, sim::TimeNs t) const {
  if (t < at || (cut_until && t >= *cut_until)) return false;
  if (one_way) return one_way->first == from && one_way->second == to;
  if (group_of.empty() || from >= group_of.size() || to >= group_of.size()) return false;
  return group_of[from] != group_of[to] && group_of[from] != kEveryGroup && group_of[to] != kEveryGroup;
}

std::string AppliedStep::Label() const { return fmt::format("{} ({} at {})", path, what, ShortSeconds(at)); }

FaultLedger::FaultLedger(const Scenario& scenario, const Recorder& recorder,
                         const std::vector<FaultApplication>& applications)
    : scenario_(scenario), applications_(applications) {
  for (const Event& e : recorder.events()) {
    if (e.kind == TraceKind::kNote) OnNote(e);
    if (e.kind == TraceKind::kNetwork) OnNetwork(e);
    if (e.kind == TraceKind::kCrash || e.kind == TraceKind::kRestart || e.kind == TraceKind::kPause ||
        e.kind == TraceKind::kResume || e.kind == TraceKind::kClock) {
      OnProcess(e);
    }
  }
  Attribute(recorder);
}

void FaultLedger::OnNote(const Event& e) {
  if (e.detail.rfind("skipped /faults/", 0) == 0) {
    // A step that could not apply made no records for another to be taken for.
    const std::string path = e.detail.substr(8, e.detail.find(' ', 8) - 8);
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      if (it->path == path && !it->matched) {
        it->matched = true;
        break;
      }
    }
    return;
  }
  if (!IsFaultStep(e)) return;
  const size_t colon = e.detail.find(':');
  AppliedStep step;
  step.path = e.detail.substr(6, colon == std::string::npos ? std::string::npos : colon - 6);
  step.at = e.time;
  for (const FaultStep& candidate : scenario_.faults) {
    if (candidate.json_path == step.path) step.step = &candidate;
  }
  step.what = step.step != nullptr ? WhatOf(*step.step) : e.detail.substr(6);
  steps_.push_back(std::move(step));
}

// The latest step of one of `actions` whose records have not been seen, and
// that names `e`'s node (a selector such as "the leader" names any).
AppliedStep* FaultLedger::Claim(const Event& e, std::initializer_list<FaultStep::Action> actions) {
  // The step that made the record, where the run says.
  const std::string* made_by = nullptr;
  for (const FaultApplication& a : applications_) {
    if (e.index >= a.first_record && e.index < a.end_record) made_by = &a.step_path;
  }
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    if (it->matched || it->step == nullptr) continue;
    if (made_by != nullptr && it->path != *made_by) continue;
    if (std::find(actions.begin(), actions.end(), it->step->action) == actions.end()) continue;
    if (e.node != Event::kNone && !Names(it->step->node, e.node)) continue;
    it->matched = true;
    it->at = e.time;
    return &*it;
  }
  return nullptr;
}

void FaultLedger::OnNetwork(const Event& e) {
  AppliedStep* step = e.detail == "restore links" ? nullptr
                                                  : Claim(e, {Action::kPartition, Action::kIsolate, Action::kCut,
                                                              Action::kLink, Action::kNetwork, Action::kHeal});
  if (step == nullptr || step->step->action == Action::kHeal) {
    // An undo: a step's "for" is over (its cuts come back), or every cut heals.
    for (AppliedStep& s : steps_) {
      const bool heal = e.detail == "heal";
      const bool over = s.step != nullptr && s.step->for_ns && s.at + *s.step->for_ns == e.time;
      if (&s != step && !s.cut_until && (heal || over) && (s.one_way || !s.group_of.empty())) s.cut_until = e.time;
    }
    return;
  }
  const Action action = step->step->action;
  if (action == Action::kCut) {
    step->one_way = {e.node, e.peer};
    step->what = fmt::format("cut from {} to {}", NodeLabel(scenario_, e.node), NodeLabel(scenario_, e.peer));
  } else if (action == Action::kPartition || action == Action::kIsolate) {
    const auto groups = ParseGroups(e.detail);
    const uint32_t total = scenario_.total_nodes();
    // Unlisted nodes share one more group; unlisted services stay reachable
    // from every side, except from an isolated node.
    step->group_of.assign(total, static_cast<int>(groups.size()));
    for (uint32_t n = scenario_.nodes; n < total && action == Action::kPartition; ++n) {
      step->group_of[n] = AppliedStep::kEveryGroup;
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      for (const uint32_t n : groups[g]) {
        if (n < total) step->group_of[n] = static_cast<int>(g);
      }
    }
    if (action == Action::kIsolate && !groups.empty() && !groups[0].empty()) {
      step->what = "isolation of " + NodeLabel(scenario_, groups[0][0]);
    }
  } else if (action == Action::kLink) {
    link_settings_.push_back({e.time, std::make_pair(e.node, e.peer), step});
    step->what = fmt::format("latency {} from {} to {}", LatencyText(step->step->link.latency),
                             NodeLabel(scenario_, e.node), NodeLabel(scenario_, e.peer));
  } else if (action == Action::kNetwork) {
    link_settings_.push_back({e.time, std::nullopt, step});
  }
}

void FaultLedger::OnProcess(const Event& e) {
  if (e.node == Event::kNone) return;
  const std::string node = NodeLabel(scenario_, e.node);
  auto open = [&](bool paused) -> ProcessFault* {
    for (auto it = process_faults_.rbegin(); it != process_faults_.rend(); ++it) {
      if (it->node == e.node && it->paused == paused && !it->until) return &*it;
    }
    return nullptr;
  };
  switch (e.kind) {
    case TraceKind::kCrash: {
      AppliedStep* step = Claim(e, {Action::kCrash});
      const bool power_loss = e.detail == "power-loss";
      if (step != nullptr) step->what = fmt::format("{} of {}", power_loss ? "power loss" : "crash", node);
      if (ProcessFault* paused = open(true)) paused->until = e.time;
      process_faults_.push_back({e.node, false, power_loss, e.value, e.time, std::nullopt, step});
      return;
    }
    case TraceKind::kPause: {
      AppliedStep* step = Claim(e, {Action::kPause});
      if (step != nullptr) step->what = "pause of " + node;
      process_faults_.push_back({e.node, true, false, 0, e.time, std::nullopt, step});
      return;
    }
    case TraceKind::kRestart:
    case TraceKind::kResume: {
      const bool resume = e.kind == TraceKind::kResume;
      if (ProcessFault* fault = open(resume)) fault->until = e.time;
      // Not an undo of an earlier step's "for": a step of its own.
      const ProcessFault* last = nullptr;
      for (const ProcessFault& f : process_faults_) {
        if (f.node == e.node && f.paused == resume) last = &f;
      }
      const bool undo = last != nullptr && last->step != nullptr && last->step->step != nullptr &&
                        last->step->step->for_ns && last->from + *last->step->step->for_ns == e.time;
      if (!undo) {
        if (AppliedStep* step = Claim(e, {resume ? Action::kResume : Action::kRestart})) {
          step->what = (resume ? "resume of " : "restart of ") + node;
        }
      }
      return;
    }
    default:
      if (AppliedStep* step = Claim(e, {Action::kClockDrift, Action::kClockShift})) {
        step->what = (e.detail == "drift" ? "clock drift of " : "wall-clock step of ") + node;
      }
      return;
  }
}

const FaultLedger::LinkSetting* FaultLedger::SettingAt(uint32_t from, uint32_t to, sim::TimeNs t) const {
  // A change of every link replaces the link changes before it.
  for (auto it = link_settings_.rbegin(); it != link_settings_.rend(); ++it) {
    if (it->at > t) continue;
    if (!it->link || (it->link->first == from && it->link->second == to)) return &*it;
  }
  return nullptr;
}

std::optional<MessageEffect> FaultLedger::DropEffect(const Event& send, const Event& drop) const {
  if (drop.detail == "partition") {
    const AppliedStep* cutter = nullptr;
    for (const AppliedStep& s : steps_) {
      if (s.Cuts(drop.node, drop.peer, drop.time)) cutter = &s;
    }
    return MessageEffect{Effect::kCut, &send, &drop, cutter};
  }
  if (drop.detail == "node-down") {
    const ProcessFault* down = FaultAt(drop.peer, drop.time);
    return MessageEffect{Effect::kReceiverDown, &send, &drop, down != nullptr ? down->step : nullptr};
  }
  const LinkSetting* setting = SettingAt(send.node, send.peer, send.time);
  const bool lossy_step = setting != nullptr && setting->step->step->link.drop.parts() > 0;
  return MessageEffect{Effect::kLost, &send, &drop, lossy_step ? setting->step : nullptr};
}

std::optional<MessageEffect> FaultLedger::DeliveryEffect(const Event& send, const Event& delivery) const {
  for (const ProcessFault& f : process_faults_) {
    if (f.node == delivery.node && f.paused && f.until == delivery.time && send.time < *f.until) {
      return MessageEffect{Effect::kHeld, &send, &delivery, f.step};
    }
  }
  const LinkSetting* setting = SettingAt(send.node, send.peer, send.time);
  if (setting != nullptr && delivery.time - send.time > MaxLatency(scenario_.network.latency)) {
    return MessageEffect{Effect::kSlowed, &send, &delivery, setting->step};
  }
  return std::nullopt;
}

void FaultLedger::Attribute(const Recorder& recorder) {
  for (const Event& e : recorder.events()) {
    if (e.kind != TraceKind::kDrop && e.kind != TraceKind::kDeliver) continue;
    const MessageFate* fate = recorder.Fate(e.message_id);
    if (fate == nullptr || fate->send == nullptr || effects_.count(e.message_id)) continue;
    const std::optional<MessageEffect> effect =
        e.kind == TraceKind::kDrop ? DropEffect(*fate->send, e) : DeliveryEffect(*fate->send, e);
    if (effect) effects_[e.message_id] = *effect;
  }
}

const MessageEffect* FaultLedger::EffectOn(uint64_t message_id) const {
  auto it = effects_.find(message_id);
  return it == effects_.end() ? nullptr : &it->second;
}

const ProcessFault* FaultLedger::FaultAt(uint32_t node, sim::TimeNs t) const {
  for (auto it = process_faults_.rbegin(); it != process_faults_.rend(); ++it) {
    if (it->node == node && it->from <= t && (!it->until || t < *it->until)) return &*it;
  }
  return nullptr;
}

}  // namespace electsim::explain
