// Which fault step did what, read back from the trace: each step that
// applied, with the links it cut, the node it crashed or paused and the
// links it slowed; and for every message a fault dropped or held up, the
// step responsible (or the network's own weather). Happened-before follows
// delivered messages only, so this is how `explain` sees what did not
// happen.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/electsim/engine/failover.h"
#include "tools/electsim/export/explain_trace.h"
#include "tools/electsim/language/scenario.h"

namespace electsim::explain {

// "0.000s" for a whole millisecond, "2.005581s" otherwise.
std::string ShortSeconds(sim::TimeNs t);

struct AppliedStep {
  std::string path;                 // "/faults/3", as its note names it
  const FaultStep* step = nullptr;  // the scenario's step of that path
  sim::TimeNs at;                   // when it took effect
  std::string what;                 // "partition", "pause of node 2", "cut from node 0 to node 1", ...
  // The links it cut: between groups (a partition, an isolation) or one way.
  static constexpr int kEveryGroup = -1;
  std::vector<int> group_of;  // by node; empty: no group cut
  std::optional<std::pair<uint32_t, uint32_t>> one_way;
  std::optional<sim::TimeNs> cut_until;  // when its links came back
  bool matched = false;                  // the records it made have been seen

  bool Cuts(uint32_t from, uint32_t to, sim::TimeNs t) const;
  // "/faults/3 (partition at 1.000s)".
  std::string Label() const;
};

// What a fault did to one message.
enum class Effect {
  kCut,           // dropped on a cut link
  kLost,          // dropped by a lossy link
  kReceiverDown,  // dropped: the receiver was crashed
  kHeld,          // delivered late: the receiver was paused
  kSlowed,        // delivered late: a step slowed its link
};

struct MessageEffect {
  Effect effect = Effect::kCut;
  const Event* send = nullptr;
  const Event* outcome = nullptr;     // the drop, or the late delivery
  const AppliedStep* step = nullptr;  // null: the network's weather
};

// A node crashed or paused, from when to when.
struct ProcessFault {
  uint32_t node = 0;
  bool paused = false;
  bool power_loss = false;
  int64_t lost_writes = 0;
  sim::TimeNs from;
  std::optional<sim::TimeNs> until;
  const AppliedStep* step = nullptr;
};

class FaultLedger {
 public:
  // `applications`: which step made which records (RunOptions::
  // log_fault_applications); without it, a record goes to the latest step
  // noted that could have made it.
  FaultLedger(const Scenario& scenario, const Recorder& recorder,
              const std::vector<FaultApplication>& applications = {});

  const std::deque<AppliedStep>& steps() const { return steps_; }
  const std::vector<ProcessFault>& process_faults() const { return process_faults_; }
  // What a fault did to the message, if anything.
  const MessageEffect* EffectOn(uint64_t message_id) const;
  // The crash or pause of `node` in force at `t`.
  const ProcessFault* FaultAt(uint32_t node, sim::TimeNs t) const;
  // The step whose link settings (latency, loss) were in force from `from`
  // to `to` at `t`; null for the scenario's own network.
  const AppliedStep* LinkStepAt(uint32_t from, uint32_t to, sim::TimeNs t) const {
    const LinkSetting* setting = SettingAt(from, to, t);
    return setting != nullptr ? setting->step : nullptr;
  }

 private:
  struct LinkSetting {
    sim::TimeNs at;
    std::optional<std::pair<uint32_t, uint32_t>> link;  // none: every link
    const AppliedStep* step = nullptr;
  };
  void OnNote(const Event& e);
  void OnNetwork(const Event& e);
  void OnProcess(const Event& e);
  AppliedStep* Claim(const Event& e, std::initializer_list<FaultStep::Action> actions);
  void Attribute(const Recorder& recorder);
  std::optional<MessageEffect> DropEffect(const Event& send, const Event& drop) const;
  std::optional<MessageEffect> DeliveryEffect(const Event& send, const Event& delivery) const;
  const LinkSetting* SettingAt(uint32_t from, uint32_t to, sim::TimeNs t) const;

  const Scenario& scenario_;
  std::vector<FaultApplication> applications_;
  std::deque<AppliedStep> steps_;  // stable addresses
  std::vector<ProcessFault> process_faults_;
  std::vector<LinkSetting> link_settings_;
  std::map<uint64_t, MessageEffect> effects_;
};

}  // namespace electsim::explain
