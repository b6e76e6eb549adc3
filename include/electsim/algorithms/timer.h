// One armed timer per purpose: re-arming cancels the previous one, so a timer
// that fires is always the live one and stale firings are recognised.
#pragma once

#include <cstdint>

#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms {

class OneShotTimer {
 public:
  void Arm(sim::Context& ctx, sim::TimeNs delay, uint64_t tag) {
    Cancel(ctx);
    id_ = ctx.SetTimer(delay, tag);
    armed_ = true;
  }
  void Cancel(sim::Context& ctx) {
    if (armed_) ctx.CancelTimer(id_);
    armed_ = false;
  }
  // True (and disarmed) when `fired` is this timer.
  bool Fired(sim::TimerId fired) {
    if (!armed_ || fired != id_) return false;
    armed_ = false;
    return true;
  }
  bool armed() const { return armed_; }

 private:
  sim::TimerId id_;
  bool armed_ = false;
};

}  // namespace algorithms
