#include "tools/electsim/engine/repro.h"

#include <algorithm>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "sim/trace.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/schema.h"

namespace electsim {

std::vector<std::string> UnexpectedViolations(const Scenario& scenario, std::vector<std::string> violated) {
  const auto& expected = scenario.expect.violations;
  std::erase_if(violated, [&](const std::string& name) {
    return std::find(expected.begin(), expected.end(), name) != expected.end();
  });
  return violated;
}

nlohmann::json MakeRepro(const Scenario& scenario, const RunResult& result, const std::string& repro_path,
                         const std::vector<std::string>& failed_by) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : result.violations) {
    violations.push_back({{"checker", v.checker},
                          {"time_ns", v.time.ns()},
                          {"trace_index", v.trace_index},
                          {"message", checkers::DescribeViolation(v)}});
  }
  nlohmann::json hashes = nlohmann::json::array();
  for (const uint64_t hash : result.checkpoints.hashes) hashes.push_back(sim::FormatTraceHash(hash));
  nlohmann::json repro = {
      {"electsim_repro", 1},
      {"trace_checkpoints", {{"every", result.checkpoints.every}, {"hashes", hashes}}},
      {"scenario_file", scenario.source},
      {"seed", result.seed},
      {"trace_hash", sim::FormatTraceHash(result.trace_hash)},
      {"trace_records", result.trace_records},
      {"violations", violations},
      {"replay", CommandLine().Add("replay").AddPath(repro_path).Text()},
      {"scenario", scenario.document},
  };
  if (!failed_by.empty()) repro["failed_by"] = failed_by;
  if (!scenario.sets.empty()) repro["set"] = scenario.sets;
  return repro;
}

absl::StatusOr<Repro> ParseRepro(std::string_view text, const std::string& path) {
  auto parsed = ParseJsonText(text, path);
  if (!parsed.ok()) return parsed.status();
  nlohmann::json doc = std::move(*parsed);
  // A scenario given to replay by mistake: say so, rather than list the
  // repro keys it lacks.
  if (doc.is_object() && !doc.contains("electsim_repro")) {
    return JsonInputError(path, "/electsim_repro", "1 (this file is not a repro written by electsim run)");
  }
  if (auto status = CheckAgainstSchema(SchemaKind::kRepro, doc, path); !status.ok()) return status;

  // The schema has checked every type below.
  Repro repro;
  repro.seed = AsNonNegativeInteger(doc["seed"]).value_or(0);
  repro.trace_records = AsNonNegativeInteger(doc["trace_records"]).value_or(0);
  const auto hash = sim::ParseTraceHash(doc["trace_hash"].get<std::string>());
  if (!hash) return JsonInputError(path, "/trace_hash", "\"0x\" and 16 lowercase hex digits, as run prints it");
  repro.trace_hash = *hash;
  if (doc.contains("trace_checkpoints")) {
    TraceCheckpoints checkpoints;
    checkpoints.every = AsNonNegativeInteger(doc["trace_checkpoints"]["every"]).value_or(1);
    for (const nlohmann::json& text : doc["trace_checkpoints"]["hashes"]) {
      checkpoints.hashes.push_back(sim::ParseTraceHash(text.get<std::string>()).value_or(0));
    }
    repro.checkpoints = std::move(checkpoints);
  }
  // A name no checker has could only make replay report differing
  // violations: it is a malformed repro.
  const auto& known = checkers::AllCheckers();
  for (size_t i = 0; i < doc["violations"].size(); ++i) {
    std::string checker = doc["violations"][i]["checker"].get<std::string>();
    if (std::none_of(known.begin(), known.end(), [&](const auto& c) { return c.name == checker; })) {
      std::vector<std::string_view> names;
      names.reserve(known.size());
      for (const auto& c : known) names.push_back(c.name);
      return JsonInputError(path, fmt::format("/violations/{}/checker", i),
                            fmt::format("a checker's name, one of {}", fmt::join(names, ", ")));
    }
    repro.violations.push_back(std::move(checker));
  }
  std::sort(repro.violations.begin(), repro.violations.end());
  if (doc.contains("failed_by")) {
    for (size_t i = 0; i < doc["failed_by"].size(); ++i) {
      std::string checker = doc["failed_by"][i].get<std::string>();
      if (!std::binary_search(repro.violations.begin(), repro.violations.end(), checker)) {
        return JsonInputError(path, fmt::format("/failed_by/{}", i), "the name of a checker under /violations");
      }
      repro.failed_by.push_back(std::move(checker));
    }
  }

  // Named as when it ran, so the summary reads the same.
  const bool named = doc["scenario"].contains("name");
  const std::string scenario_file = doc["scenario_file"].get<std::string>();
  auto scenario = ParseScenarioJson(std::move(doc["scenario"]), path, "/scenario");
  if (!scenario.ok()) return scenario.status();
  repro.scenario = std::move(*scenario);
  if (!named) repro.scenario.name = ScenarioNameFromPath(scenario_file);
  repro.scenario_file = scenario_file;
  if (doc.contains("set")) repro.scenario.sets = doc["set"].get<std::vector<std::string>>();
  return repro;
}

}  // namespace electsim
