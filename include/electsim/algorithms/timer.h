// The one timer idiom of every algorithm: one Timer object per purpose
// (an election timeout, a heartbeat, a request's timeout). Re-arming cancels
// the previous arming, and OnTimer asks each timer whether it fired, so a
// timer that fires is always the live one and a stale firing is recognised
// without bookkeeping of timer ids or tags.
//
//   Timer election_timer_{kElectionTag};
//   election_timer_.Arm(ctx, timeout);
//   void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) override {
//     if (election_timer_.Fired(timer)) StartElection(ctx);
//   }
#pragma once

#include <cstdint>

#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms {

class Timer {
 public:
  // `tag` is passed to Context::SetTimer and comes back in OnTimer; Fired
  // does not need it. It names the timer's purpose for tests that fire
  // timers by hand.
  explicit Timer(uint64_t tag = 0) : tag_(tag) {}

  // Arms the timer `delay` from now on the node's monotonic clock,
  // cancelling it first if it is armed.
  void Arm(sim::Context& ctx, sim::TimeNs delay) {
    Cancel(ctx);
    id_ = ctx.SetTimer(delay, tag_);
    armed_ = true;
  }
  void Cancel(sim::Context& ctx) {
    if (armed_) ctx.CancelTimer(id_);
    armed_ = false;
  }
  // True, and disarmed, when `fired` is this timer's current arming.
  bool Fired(sim::TimerId fired) {
    if (!armed_ || fired != id_) return false;
    armed_ = false;
    return true;
  }
  bool armed() const { return armed_; }

 private:
  uint64_t tag_;
  sim::TimerId id_;
  bool armed_ = false;
};

}  // namespace algorithms
