// The parts of the scenario schema that come from the registries: the
// algorithm names, each algorithm's options (type, range, default, help) and
// the checker names. Generated rather than written, so that an option added
// to an algorithm reaches the schema by running
//   build/tools/electsim-schema scenarios/schema/scenario.schema.json
// and a test fails while the committed schema disagrees with the registry.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace electsim {

// Marks a generated definition in the schema file (its "$comment").
inline constexpr const char* kGeneratedSchemaComment =
    "generated from the algorithm and checker registries by build/tools/electsim-schema; do not edit by hand";

// Definitions to place under "definitions" in scenario.schema.json, by name:
// "algorithm", "algorithm_name", "options_<algorithm>", "checker",
// "violation_checker".
nlohmann::ordered_json RegistrySchemaDefinitions();

// `schema` with its generated definitions replaced by the current ones (stale
// generated definitions removed, new ones appended).
nlohmann::ordered_json WithRegistryDefinitions(nlohmann::ordered_json schema);

}  // namespace electsim
