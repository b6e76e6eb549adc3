#include "tools/electsim/language/schema_registry.h"

#include <cmath>
#include <limits>

#include "checkers/checker.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace electsim {
namespace {

using nlohmann::ordered_json;

std::string Quoted(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", name);
  return list;
}

// One option as a schema: the description reads after "expected" in a
// message and carries the option's help for editors.
ordered_json OptionSchema(const algorithms::OptionSpec& spec) {
  using algorithms::OptionType;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::string range = spec.RangeText();
  ordered_json node = ordered_json::object();
  switch (spec.type) {
    case OptionType::kDuration:
      node["description"] =
          fmt::format("a duration{}: {}", range.empty() ? "" : fmt::format(" ({})", range), spec.help);
      node["$ref"] = "#/definitions/duration";
      node["default"] = sim::FormatDuration(sim::TimeNs(spec.default_value));
      break;
    case OptionType::kInt:
      node["description"] =
          fmt::format("an integer{}: {}", range.empty() ? "" : fmt::format(" ({})", range), spec.help);
      node["type"] = "integer";
      if (spec.min != kMin) node["minimum"] = spec.min;
      if (spec.max != kMax) node["maximum"] = spec.max;
      node["default"] = spec.default_value;
      break;
    case OptionType::kBool:
      node["description"] = fmt::format("true or false: {}", spec.help);
      node["type"] = "boolean";
      node["default"] = spec.default_value != 0;
      break;
    case OptionType::kRatio:
      // Held in parts per million: a minimum of 1 ppm is "above 0".
      node["description"] = fmt::format("a number {}: {}", range, spec.help);
      node["type"] = "number";
      if (spec.min == 1) {
        node["exclusiveMinimum"] = 0;
      } else {
        node["minimum"] = static_cast<double>(spec.min) / 1e6;
      }
      node["maximum"] = static_cast<double>(spec.max) / 1e6;
      node["default"] = static_cast<double>(spec.default_value) / 1e6;
      break;
    case OptionType::kChoice:
      node["description"] = fmt::format("{}: {}", range, spec.help);
      node["enum"] = spec.choices;
      node["default"] = spec.choices.at(static_cast<size_t>(spec.default_value));
      break;
    case OptionType::kIntList: {
      node["description"] = fmt::format("an array of integers: {}", spec.help);
      node["type"] = "array";
      ordered_json item = {{"description", "an integer"}, {"type", "integer"}};
      if (spec.min != kMin) item["minimum"] = spec.min;
      if (spec.max != kMax) item["maximum"] = spec.max;
      node["items"] = item;
      node["default"] = spec.default_list;
      break;
    }
  }
  return node;
}

}  // namespace

ordered_json RegistrySchemaDefinitions() {
  ordered_json definitions = ordered_json::object();
  std::vector<std::string> algorithm_names;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    algorithm_names.emplace_back(algorithm->name());
  }

  // One if/then per algorithm: editors complete the options of the algorithm
  // named, and an error names the option against that algorithm's list.
  ordered_json per_algorithm = ordered_json::array();
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    const std::string name(algorithm->name());
    per_algorithm.push_back(
        {{"if", {{"required", {"name"}}, {"properties", {{"name", {{"const", name}}}}}}},
         {"then", {{"properties", {{"options", {{"$ref", fmt::format("#/definitions/options_{}", name)}}}}}}}});
  }
  definitions["algorithm"] = {
      {"$comment", kGeneratedSchemaComment},
      {"description", "an algorithm name or {\"name\", \"options\"}"},
      {"type", {"string", "object"}},
      {"if", {{"type", "string"}}},
      {"then", {{"$ref", "#/definitions/algorithm_name"}}},
      {"else",
       {{"required", {"name"}},
        {"additionalProperties", false},
        {"properties",
         {{"name", {{"$ref", "#/definitions/algorithm_name"}}},
          {"options", {{"description", "an object of algorithm options"}, {"type", "object"}}}}},
        {"allOf", per_algorithm}}},
  };
  definitions["algorithm_name"] = {
      {"$comment", kGeneratedSchemaComment},
      {"description", fmt::format("one of the algorithms {}", Quoted(algorithm_names))},
      {"enum", algorithm_names},
  };
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    ordered_json properties = ordered_json::object();
    for (const algorithms::OptionSpec& spec : algorithm->options()) properties[spec.name] = OptionSchema(spec);
    definitions[fmt::format("options_{}", algorithm->name())] = {
        {"$comment", kGeneratedSchemaComment},
        {"title", fmt::format("the options of algorithm \"{}\"", algorithm->name())},
        {"description", fmt::format("an object of options of algorithm \"{}\"", algorithm->name())},
        {"type", "object"},
        {"additionalProperties", false},
        {"properties", properties},
    };
  }

  // "liveness" is switched on by its own block, so a "checkers" list cannot
  // name it; an expected violation can.
  std::vector<std::string> listable, all;
  for (const checkers::CheckerInfo& info : checkers::AllCheckers()) {
    all.push_back(info.name);
    if (info.name != "liveness") listable.push_back(info.name);
  }
  definitions["checker"] = {
      {"$comment", kGeneratedSchemaComment},
      {"description",
       fmt::format("one of the checkers {} (liveness is switched on by a \"liveness\" block)", Quoted(listable))},
      {"enum", listable},
  };
  definitions["violation_checker"] = {
      {"$comment", kGeneratedSchemaComment},
      {"description", fmt::format("one of the checkers {}", Quoted(all))},
      {"enum", all},
  };
  return definitions;
}

ordered_json WithRegistryDefinitions(ordered_json schema) {
  const ordered_json generated = RegistrySchemaDefinitions();
  ordered_json& definitions = schema["definitions"];
  ordered_json kept = ordered_json::object();
  for (auto it = definitions.begin(); it != definitions.end(); ++it) {
    const bool was_generated = it.value().is_object() && it.value().value("$comment", "") == kGeneratedSchemaComment;
    if (generated.contains(it.key())) {
      kept[it.key()] = generated[it.key()];  // in place, so the file keeps its order
    } else if (!was_generated) {
      kept[it.key()] = it.value();
    }
  }
  for (auto it = generated.begin(); it != generated.end(); ++it) {
    if (!kept.contains(it.key())) kept[it.key()] = it.value();
  }
  definitions = std::move(kept);
  return schema;
}

}  // namespace electsim
