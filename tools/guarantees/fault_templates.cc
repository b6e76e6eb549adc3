#include "tools/guarantees/fault_templates.h"

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
    case FaultKind::kDuplication:
      network["duplicate"] = 0.3;
      break;
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
      for (const char* at : {"3s", "6s", "9s", "12s"}) faults.push_back(Crash(at, "leader", "1s", false));
      faults.push_back(Crash("4500ms", 1, "300ms", false));
      faults.push_back(Crash("7500ms", 3, "2s", false));
      faults.push_back(Crash("15s", "leader", "200ms", false));
      faults.push_back(Crash("15100ms", 2, "500ms", false));
      faults.push_back(Crash("18s", "resource", "1s", false));
      if (has_store) faults.push_back(Crash("22s", "store", "2s", false));
      break;
    case FaultKind::kPowerLoss:
      // The crashes' pattern at other times, so that in a scenario with both
      // kinds no power loss finds its node already down.
      for (const char* at : {"2s", "5s", "8s", "11s"}) faults.push_back(Crash(at, "leader", "1s", true));
      faults.push_back(Crash("5500ms", 1, "300ms", true));
      faults.push_back(Crash("10s", 3, "1s", true));
      faults.push_back(Crash("16s", "leader", "200ms", true));
      faults.push_back(Crash("16100ms", 2, "500ms", true));
      faults.push_back(Crash("20s", "resource", "1s", true));
      if (has_store) faults.push_back(Crash("25s", "store", "2s", true));
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
                       const std::string& name) {
  json network = {{"latency", {{"uniform", {"1ms", "10ms"}}}}};
  json faults = json::array();
  for (FaultKind kind : algorithms::AllFaultKinds()) {
    if (!kinds.Has(kind)) continue;
    const json fragment = FaultTemplate(kind, algorithm.uses_store());
    for (const auto& [key, value] : fragment["network"].items()) network[key] = value;
    for (const json& step : fragment["faults"]) faults.push_back(step);
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
