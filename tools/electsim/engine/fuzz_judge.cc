#include "tools/electsim/engine/fuzz_judge.h"

#include <algorithm>

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

// Drift an algorithm declares it absorbs is that algorithm's kClockDrift;
// drift past the bound, a pause (Algorithm::clock_drift_bound).
FaultKinds DriftFaults(const Scenario& scenario, const FaultStep& step) {
  const auto bound = scenario.algorithm->clock_drift_bound(scenario.options);
  if (!bound) return {FaultKind::kClockDrift};
  const bool election_node = step.node.kind == NodeSelector::Kind::kId ||
                             step.node.kind == NodeSelector::Kind::kLeader ||
                             step.node.kind == NodeSelector::Kind::kNextLeader;
  const bool within = election_node ? step.drift_ppm >= bound->slowest_ppm : step.drift_ppm == 0;
  return {within ? FaultKind::kClockDrift : FaultKind::kPause};
}

}  // namespace

FaultKinds FaultKindsInPlay(const Scenario& scenario) {
  FaultKinds kinds = LinkFaultKinds(scenario.network);
  for (const FaultStep& step : scenario.faults) {
    const bool drift = step.action == FaultStep::Action::kClockDrift;
    kinds = kinds.With(drift ? DriftFaults(scenario, step) : step.Kinds());
  }
  return kinds;
}

FaultKinds NetworkFaultsOnceOver(const Scenario& scenario) {
  // Steps are in time order, those with "after" last: the last change wins
  // (a network or link step has no "for": it lasts until the next).
  FaultKinds all_links = LinkFaultKinds(scenario.network);
  FaultKinds one_link;
  for (const FaultStep& step : scenario.faults) {
    if (step.action == FaultStep::Action::kNetwork) {
      all_links = LinkFaultKinds(step.link);
      one_link = {};  // every link set anew
    } else if (step.action == FaultStep::Action::kLink) {
      one_link = one_link.With(LinkFaultKinds(step.link));
    }
  }
  return all_links.With(one_link);
}

std::string_view GuaranteesOfName(GuaranteesOf of) {
  switch (of) {
    case GuaranteesOf::kOptions: return "options";
    case GuaranteesOf::kDefaults: return "defaults";
    case GuaranteesOf::kReference: return "reference";
  }
  return "options";
}

std::optional<GuaranteesOf> ParseGuaranteesOf(std::string_view name) {
  for (const GuaranteesOf of : {GuaranteesOf::kOptions, GuaranteesOf::kDefaults, GuaranteesOf::kReference}) {
    if (GuaranteesOfName(of) == name) return of;
  }
  return std::nullopt;
}

std::vector<std::string> JudgedInvariants(const Scenario& scenario, GuaranteesOf of, bool liveness,
                                          const algorithms::OptionValues* defaults_given) {
  const algorithms::Algorithm& algorithm = *scenario.algorithm;
  const bool defaults = of == GuaranteesOf::kDefaults;
  const algorithms::OptionValues default_values =
      defaults_given != nullptr ? *defaults_given : algorithms::OptionValues::Defaults(algorithm.options());
  algorithms::OptionValues values = defaults ? default_values : scenario.options;
  if (of == GuaranteesOf::kReference && !algorithm.mutants().empty()) values.Set(algorithms::kBugOption, 0);
  const algorithms::Guarantees declared = algorithm.guarantees(values);
  const FaultKinds in_play = FaultKindsInPlay(scenario);
  std::vector<std::string> judged;
  for (const algorithms::Guarantee& g : declared) {
    if (g.kept_under.Covers(in_play)) judged.emplace_back(g.invariant);
  }
  // A fencing resource keeps stale_token whatever the algorithm does.
  if (defaults || scenario.fencing) judged.emplace_back("stale_token");
  if (!defaults && scenario.fencing && scenario.exclusive_token) judged.emplace_back("unique_token");
  if (liveness && scenario.liveness && algorithm.promises_liveness(values, scenario.nodes)) {
    judged.emplace_back("liveness");
  }
  std::sort(judged.begin(), judged.end());
  judged.erase(std::unique(judged.begin(), judged.end()), judged.end());
  return judged;
}

}  // namespace electsim
