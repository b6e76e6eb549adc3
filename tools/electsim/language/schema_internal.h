// Shared by schema.cc (loading and validating) and schema_errors.cc (turning
// valijson's results into one message). Not for use elsewhere.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/language/schema.h"
#include "valijson/schema.hpp"
#include "valijson/validation_results.hpp"

namespace electsim::schema_internal {

// The file name a repro schema's "$ref" uses for the scenario schema.
inline constexpr std::string_view kScenarioSchemaFile = "scenario.schema.json";

// Longer strings fail a "pattern" without being matched (schema.cc says why).
inline constexpr size_t kMaxPatternSubjectBytes = size_t{64} << 10;

// Arrays longer than this are checked window by window when a file fails
// (see CheckAgainstSchema). Longer than any maxItems in the schemas (a test
// checks), so a window fails wherever the whole array would for its length.
inline constexpr size_t kArrayWindow = 256;

// The schemas as JSON (for reading descriptions) and the scenario schema
// compiled (for checking). The repro schema and the "if" conditions are
// compiled on first use (schema.cc): most commands check one scenario and
// nothing else, and compiling them was most of a short sweep's start-up.
struct LoadedSchemas {
  nlohmann::json scenario;
  nlohmann::json repro;
  valijson::Schema compiled_scenario;

  const nlohmann::json& Document(SchemaKind kind) const { return kind == SchemaKind::kScenario ? scenario : repro; }
};

// Whether `value` satisfies the compiled "if" subschema `condition` (every
// "if" is compiled on its own, so that an error can be traced through the
// same branches valijson took).
bool SatisfiesCondition(const LoadedSchemas& schemas, const nlohmann::json* condition, const nlohmann::json& value);

// When `document` is a window of the file's document: the array at
// `array_location` holds the file's elements from `offset` on, so its indices
// are shown shifted by `offset`.
struct IndexShift {
  std::vector<std::string> array_location;
  size_t offset = 0;
};

// One message for a document that failed validation with `results`.
absl::Status ExplainFailure(const LoadedSchemas& schemas, SchemaKind kind, const valijson::ValidationResults& results,
                            const nlohmann::json& document, std::string_view source, std::string_view json_path_prefix,
                            const IndexShift& shift = {});

}  // namespace electsim::schema_internal
