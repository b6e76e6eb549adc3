// Scenario and repro files checked against their JSON Schemas
// (scenarios/schema/*.schema.json, built into the binary) with valijson. The
// schema holds the structure: which keys, which types, which ranges, which
// words. What it cannot express (a deadline inside the run, a node id below
// "nodes", relations between options) stays in the code that reads each part.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace electsim {

enum class SchemaKind { kScenario, kRepro };

// The schema file's text as shipped.
std::string_view SchemaText(SchemaKind kind);

// OK when `document` satisfies the schema. Otherwise one InvalidArgument
// error, "SOURCE: at PATH: expected WHAT, got VALUE", for the problem nearest
// the top of the document: the schema's own description of what belongs at
// PATH, or for a missing or unknown key the keys that belong there.
// `json_path_prefix` is where the document sits in its file ("/scenario"
// inside a repro).
absl::Status CheckAgainstSchema(SchemaKind kind, const nlohmann::json& document, std::string_view source,
                                std::string_view json_path_prefix = "");

}  // namespace electsim
