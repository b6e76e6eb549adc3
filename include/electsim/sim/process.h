// How a simulated process (an algorithm's node, a store, a resource) lives in
// the simulator. A process is a state machine driven by three inputs (start,
// message, timer); everything it may do goes through Context. It never sees
// the global clock, the event queue or the network's internals.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "electsim/sim/message.h"
#include "electsim/sim/rng.h"
#include "electsim/sim/types.h"

namespace sim {

struct TimerIdTag {};
// Names one armed timer; stays unique for the whole run.
using TimerId = StrongInt<TimerIdTag, uint64_t>;

class Context {
 public:
  virtual ~Context() = default;

  virtual NodeId self() const = 0;
  // A node has two clocks, as a real machine does (CLOCK_MONOTONIC and
  // CLOCK_REALTIME). Both run at the node's drifting rate. The monotonic
  // clock never jumps: durations, timeouts and deadlines belong on it, and
  // timers run on it. The wall clock also takes the steps NTP or an operator
  // make; reading it for a deadline is a bug a clock step exposes. Both keep
  // running through a crash (a real CLOCK_MONOTONIC would restart at boot).
  virtual TimeNs MonotonicNow() const = 0;
  virtual TimeNs WallNow() const = 0;

  // Hands a message to the network. An unknown destination is rejected: the
  // send is dropped and the run ends with an InvalidArgument error.
  virtual void Send(NodeId to, const Message& message) = 0;

  // Arms a one-shot timer `delay` from now on the node's monotonic clock; `tag`
  // comes back in Process::OnTimer. A negative delay is rejected like Send.
  virtual TimerId SetTimer(TimeNs delay, uint64_t tag) = 0;
  // Disarms a timer; cancelling a fired or unknown timer does nothing.
  virtual void CancelTimer(TimerId timer) = 0;

  // The node's private random stream (independent of every other stream).
  virtual Rng& rng() = 0;

  // Stable storage survives crash/restart; everything else a process holds
  // is lost on crash. A key's value reaches the disk in one of two ways:
  // Persist writes it durably at once (a write followed by its own fsync);
  // Write only buffers it, as write() into the OS page cache does, until the
  // next Sync. Load sees buffered values. A process crash keeps buffered
  // writes (the page cache outlives the process); a power loss
  // (Simulator::Crash with CrashKind::kPowerLoss) discards them.
  virtual void Persist(std::string_view key, int64_t value) = 0;
  virtual void Write(std::string_view key, int64_t value) = 0;
  // Makes every buffered write of this node durable (fsync).
  virtual void Sync() = 0;
  virtual std::optional<int64_t> Load(std::string_view key) const = 0;

  // Reports an observation for the checkers (roles, leadership, writes).
  virtual void Observe(const Observation& observation) = 0;

  // Ends the run with an error naming this node and `reason`: for a node
  // that cannot go on, as an external process that broke the step protocol
  // (docs/step-protocol.md). The run stops after the current event.
  virtual void Fail(std::string_view reason) = 0;
};

class Process {
 public:
  virtual ~Process() = default;
  // First boot, and again after each restart (on a fresh object).
  virtual void OnStart(Context& ctx) = 0;
  virtual void OnMessage(Context& ctx, NodeId from, const Message& message) = 0;
  virtual void OnTimer(Context& ctx, TimerId timer, uint64_t tag) = 0;
};

// Builds a node's process; called at boot and at every restart.
using ProcessFactory = std::function<std::unique_ptr<Process>(NodeId self)>;

}  // namespace sim
