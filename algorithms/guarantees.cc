#include "electsim/algorithms/guarantees.h"

namespace algorithms {

std::string_view FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLoss: return "loss";
    case FaultKind::kDuplication: return "duplication";
    case FaultKind::kLatency: return "latency";
    case FaultKind::kPartition: return "partition";
    case FaultKind::kOneWayCut: return "one_way_cut";
    case FaultKind::kCrash: return "crash";
    case FaultKind::kPowerLoss: return "power_loss";
    case FaultKind::kPause: return "pause";
    case FaultKind::kClockDrift: return "clock_drift";
    case FaultKind::kClockStep: return "clock_step";
  }
  return "unknown";
}

const std::vector<FaultKind>& AllFaultKinds() {
  static const std::vector<FaultKind> all = [] {
    std::vector<FaultKind> kinds;
    for (int i = 0; i < kFaultKindCount; ++i) kinds.push_back(static_cast<FaultKind>(i));
    return kinds;
  }();
  return all;
}

}  // namespace algorithms
