#include "tools/electsim/engine/fault_templates.h"

#include <algorithm>
#include <vector>

#include "checkers/checker.h"

namespace electsim {

using algorithms::FaultKind;
using nlohmann::json;

namespace {

json Step(const std::string& at, const std::string& action, json body, const std::string& for_duration = "") {
  json step = {{"at", at}, {action, std::move(body)}};
  if (!for_duration.empty()) step["for"] = for_duration;
  return step;
}

json Clock(const json& node, const std::string& key, json value) { return {{"node", node}, {key, std::move(value)}}; }

// A crash step; with `lose_unsynced` a power loss.
json Crash(const std::string& at, const json& node, const std::string& for_duration, bool lose_unsynced) {
  json step = Step(at, "crash", node, for_duration);
  if (lose_unsynced) step["lose_unsynced"] = true;
  return step;
}

// Leaders and followers down, one at a time and overlapping, short and
// long, then the resource and the store. Power losses follow the same
// pattern at other instants, so that in a scenario with both kinds no power
// loss finds its node already down.
struct CrashPlan {
  json node;
  const char* crash_at;
  const char* crash_for;
  const char* power_loss_at;
  const char* power_loss_for;
};
const std::vector<CrashPlan>& CrashPlans() {
  static const std::vector<CrashPlan> plans = {
      {"leader", "3s", "1s", "2s", "1s"},         {"leader", "6s", "1s", "5s", "1s"},
      {"leader", "9s", "1s", "8s", "1s"},         {"leader", "12s", "1s", "11s", "1s"},
      {1, "4500ms", "300ms", "5500ms", "300ms"},  {3, "7500ms", "2s", "10s", "1s"},
      {"leader", "15s", "200ms", "16s", "200ms"}, {2, "15100ms", "500ms", "16100ms", "500ms"},
      {"resource", "18s", "1s", "20s", "1s"},     {"store", "22s", "2s", "25s", "2s"},
  };
  return plans;
}

}  // namespace

json FaultTemplate(FaultKind kind, bool has_store) {
  json network = json::object();
  json faults = json::array();
  switch (kind) {
    case FaultKind::kLoss:
      network["drop"] = 0.1;
      faults.push_back(Step("10s", "network", {{"drop", 0.3}}));
      faults.push_back(Step("20s", "network", {{"drop", 0.05}}));
      break;
    case FaultKind::kDuplication: network["duplicate"] = 0.3; break;
    case FaultKind::kLatency:
      // A heavy tail well past every timeout (one message in 30 takes over
      // 150ms, some up to 2s), which also reorders.
      network["latency"] = {{"pareto", {{"scale", "5ms"}, {"alpha", 1.0}, {"max", "2s"}}}};
      break;
    case FaultKind::kPartition:
      faults.push_back(Step("3s", "partition", {{0, 1}, {2, 3, 4}}, "4s"));
      faults.push_back(Step("10s", "partition", {{0, 2, 4}, {1, 3}}, "3s"));
      faults.push_back(Step("16s", "isolate", "leader", "3s"));
      faults.push_back(Step("21s", "partition", {{0}, {1, 2}, {3, 4}}, "2s"));
      if (has_store) faults.push_back(Step("25s", "partition", {{0, 1, "store"}, {2, 3, 4}}, "3s"));
      break;
    case FaultKind::kOneWayCut:
      for (int to : {0, 1, 2}) faults.push_back(Step("3s", "cut", {{"from", "leader"}, {"to", to}}, "3s"));
      for (int from : {0, 1, 2}) faults.push_back(Step("10s", "cut", {{"from", from}, {"to", "leader"}}, "3s"));
      faults.push_back(Step("16s", "cut", {{"from", "leader"}, {"to", "resource"}}, "2s"));
      if (has_store) {
        faults.push_back(Step("20s", "cut", {{"from", "leader"}, {"to", "store"}}, "3s"));
        faults.push_back(Step("25s", "cut", {{"from", "store"}, {"to", "leader"}}, "3s"));
      }
      break;
    case FaultKind::kCrash:
    case FaultKind::kPowerLoss:
      for (const CrashPlan& plan : CrashPlans()) {
        if (plan.node == "store" && !has_store) continue;
        faults.push_back(kind == FaultKind::kCrash ? Crash(plan.crash_at, plan.node, plan.crash_for, false)
                                                   : Crash(plan.power_loss_at, plan.node, plan.power_loss_for, true));
      }
      break;
    case FaultKind::kPause:
      faults.push_back(Step("3s", "pause", "leader", "2s"));
      faults.push_back(Step("8s", "pause", "leader", "1500ms"));
      faults.back()["during"] = "write";  // the fencing-token story
      faults.push_back(Step("12s", "pause", 2, "1s"));
      faults.push_back(Step("15s", "pause", "leader", "300ms"));
      faults.push_back(Step("18s", "pause", "resource", "1s"));
      if (has_store) faults.push_back(Step("22s", "pause", "store", "1500ms"));
      break;
    case FaultKind::kClockDrift:
      faults.push_back(Step("1s", "clock", Clock("leader", "drift_ppm", -400000)));
      faults.push_back(Step("2s", "clock", Clock(0, "drift_ppm", 300000)));
      faults.push_back(Step("2s", "clock", Clock(3, "drift_ppm", -300000)));
      faults.push_back(Step("10s", "clock", Clock("leader", "drift_ppm", 450000)));
      faults.push_back(Step("15s", "clock", Clock(1, "drift_ppm", -450000)));
      if (has_store) faults.push_back(Step("20s", "clock", Clock("store", "drift_ppm", 400000)));
      break;
    case FaultKind::kClockStep:
      faults.push_back(Step("2s", "clock", Clock("leader", "shift", "-5s")));
      faults.push_back(Step("4s", "clock", Clock(1, "shift", "+10s")));
      faults.push_back(Step("6s", "clock", Clock("leader", "shift", "+3s")));
      faults.push_back(Step("8s", "clock", Clock(3, "shift", "-10s")));
      if (has_store) faults.push_back(Step("10s", "clock", Clock("store", "shift", "+5s")));
      break;
  }
  return json{{"network", network}, {"faults", faults}};
}

std::vector<std::string> SafetyCheckers() {
  std::vector<std::string> names;
  for (const checkers::CheckerInfo& info : checkers::AllCheckers()) {
    if (info.name != "liveness") names.push_back(info.name);
  }
  return names;
}

json GuaranteeScenario(const algorithms::Algorithm& algorithm, const json& options, algorithms::FaultKinds kinds,
                       const std::string& name, const algorithms::OptionValues* values) {
  const algorithms::OptionValues defaults = algorithms::OptionValues::Defaults(algorithm.options());
  const auto drift_bound = algorithm.clock_drift_bound(values != nullptr ? *values : defaults);
  json network = {{"latency", {{"uniform", {"1ms", "10ms"}}}}};
  json faults = json::array();
  for (FaultKind kind : algorithms::AllFaultKinds()) {
    if (!kinds.Has(kind)) continue;
    const json fragment = FaultTemplate(kind, algorithm.uses_store());
    for (const auto& [key, value] : fragment["network"].items()) network[key] = value;
    for (json step : fragment["faults"]) {
      if (drift_bound && step.contains("clock") && step["clock"].contains("drift_ppm")) {
        if (step["clock"]["node"] == "store") continue;  // a service's clock stays true within the bound
        step["clock"]["drift_ppm"] = std::max(step["clock"]["drift_ppm"].get<int64_t>(), drift_bound->slowest_ppm);
      }
      faults.push_back(step);
    }
  }
  return {{"name", name},
          {"nodes", 5},
          {"duration", "30s"},
          {"algorithm", {{"name", algorithm.name()}, {"options", options}}},
          {"network", network},
          {"resource", {{"fencing", false}}},
          {"faults", faults},
          {"checkers", SafetyCheckers()},
          {"expect", {{"violations", json::array()}}}};
}

}  // namespace electsim
