#include "tools/electsim/fuzz_judge.h"

#include <algorithm>

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

FaultKinds LinkFaults(const sim::LinkConfig& link) {
  FaultKinds kinds;
  if (link.drop.parts() > 0) kinds = kinds.With({FaultKind::kLoss});
  if (link.duplicate.parts() > 0) kinds = kinds.With({FaultKind::kDuplication});
  if (std::max(link.latency.min_ns, link.latency.max_ns) > kCalmLatencyMax) kinds = kinds.With({FaultKind::kLatency});
  return kinds;
}

// Drift an algorithm declares it absorbs is that algorithm's kClockDrift;
// drift past the bound, a pause (Algorithm::clock_drift_bound).
FaultKinds DriftFaults(const Scenario& scenario, const FaultStep& step) {
  const auto bound = scenario.algorithm->clock_drift_bound(scenario.options);
  if (!bound) return {FaultKind::kClockDrift};
  const bool election_node = step.node.kind == NodeSelector::Kind::kId || step.node.kind == NodeSelector::Kind::kLeader;
  const bool within = election_node ? step.drift_ppm >= bound->slowest_ppm : step.drift_ppm == 0;
  return {within ? FaultKind::kClockDrift : FaultKind::kPause};
}

FaultKinds StepFaults(const Scenario& scenario, const FaultStep& step) {
  switch (step.action) {
    case FaultStep::Action::kCrash: return {step.lose_unsynced ? FaultKind::kPowerLoss : FaultKind::kCrash};
    case FaultStep::Action::kRestart: return {FaultKind::kCrash};
    case FaultStep::Action::kPause:
    case FaultStep::Action::kResume: return {FaultKind::kPause};
    case FaultStep::Action::kPartition:
    case FaultStep::Action::kIsolate: return {FaultKind::kPartition};
    case FaultStep::Action::kCut: return {FaultKind::kOneWayCut};
    case FaultStep::Action::kHeal: return {};
    case FaultStep::Action::kClockDrift: return DriftFaults(scenario, step);
    case FaultStep::Action::kClockShift: return {FaultKind::kClockStep};
    case FaultStep::Action::kNetwork:
    case FaultStep::Action::kLink: return LinkFaults(step.link);
  }
  return FaultKinds::All();  // unknown: promise nothing
}

}  // namespace

FaultKinds FaultKindsInPlay(const Scenario& scenario) {
  FaultKinds kinds = LinkFaults(scenario.network);
  for (const FaultStep& step : scenario.faults) kinds = kinds.With(StepFaults(scenario, step));
  return kinds;
}

std::vector<std::string> JudgedInvariants(const Scenario& scenario, GuaranteesOf of, bool liveness) {
  const algorithms::Algorithm& algorithm = *scenario.algorithm;
  const bool defaults = of == GuaranteesOf::kDefaults;
  const algorithms::Guarantees declared =
      algorithm.guarantees(defaults ? algorithms::OptionValues::Defaults(algorithm.options()) : scenario.options);
  const FaultKinds in_play = FaultKindsInPlay(scenario);
  std::vector<std::string> judged;
  for (const algorithms::Guarantee& g : declared) {
    if (g.kept_under.Covers(in_play)) judged.emplace_back(g.invariant);
  }
  // A fencing resource keeps stale_token whatever the algorithm does.
  if (defaults || scenario.fencing) judged.emplace_back("stale_token");
  if (!defaults && scenario.fencing && scenario.exclusive_token) judged.emplace_back("unique_token");
  if (liveness && scenario.liveness) judged.emplace_back("liveness");
  std::sort(judged.begin(), judged.end());
  judged.erase(std::unique(judged.begin(), judged.end()), judged.end());
  return judged;
}

}  // namespace electsim
