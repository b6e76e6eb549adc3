#include "tools/electsim/language/schema.h"

#include <limits>
#include <optional>
#include <regex>
#include <vector>

#include "fmt/format.h"
#include "tools/electsim/language/schema_internal.h"
#include "tools/electsim/language/schema_registry.h"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/constraint_builder.hpp"
#include "valijson/constraints/concrete_constraints.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validator.hpp"

namespace electsim {

namespace schema_text {
extern const std::string_view kScenario;
extern const std::string_view kRepro;
}  // namespace schema_text

std::string_view SchemaText(SchemaKind kind) {
  return kind == SchemaKind::kScenario ? schema_text::kScenario : schema_text::kRepro;
}

namespace schema_internal {
namespace {

using nlohmann::json;
using valijson::adapters::NlohmannJsonAdapter;

// valijson's own "pattern" runs std::regex in libstdc++'s default mode,
// which matches by recursion, one level per character: a 20000-character
// string overflows the stack (4000 under AddressSanitizer). So every
// "pattern" is checked by this constraint instead: libstdc++'s __polynomial
// mode (a breadth-first automaton, no recursion, linear in the text), and
// strings longer than kMaxPatternSubjectBytes fail without matching, which
// bounds the time. The schema gives every pattern a maxLength well below
// that (a test checks), so the verdicts are the same as "pattern"'s.
constexpr const char* kBoundedPatternKeyword = "electsimBoundedPattern";
#ifdef __GLIBCXX__
constexpr auto kRegexMode = std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
constexpr auto kRegexMode = std::regex::ECMAScript;
#endif

class BoundedPatternConstraint final : public valijson::constraints::PolyConstraint {
 public:
  explicit BoundedPatternConstraint(const std::string& pattern) : regex_(pattern, kRegexMode) {}

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;
    const std::string text = target.asString();
    if (text.size() <= kMaxPatternSubjectBytes && std::regex_search(text, regex_)) return true;
    // The same words as valijson's "pattern", so errors read as one kind.
    if (results != nullptr) results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
    return false;
  }

 private:
  Constraint* cloneInto(void* memory) const override { return new (memory) BoundedPatternConstraint(*this); }
  size_t sizeOf() const override { return sizeof(BoundedPatternConstraint); }

  std::regex regex_;
};

class BoundedPatternBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const valijson::adapters::Adapter& value) const override {
    return new BoundedPatternConstraint(value.asString());
  }
};

// A copy of a schema document for valijson: "pattern" renamed so that the
// bounded constraint above checks it. Schemas here use "pattern" only as a
// keyword, never as a property name.
json WithBoundedPatterns(const json& node) {
  if (node.is_array()) {
    json out = json::array();
    for (const json& item : node) out.push_back(WithBoundedPatterns(item));
    return out;
  }
  if (!node.is_object()) return node;
  json out = json::object();
  for (auto it = node.begin(); it != node.end(); ++it) {
    const bool keyword = it.key() == "pattern" && it.value().is_string();
    out[keyword ? kBoundedPatternKeyword : it.key()] = WithBoundedPatterns(it.value());
  }
  return out;
}

void Compile(const json& document, valijson::Schema& schema, const json* scenario_for_refs) {
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  // The parser takes ownership of the builder (its destructor deletes it).
  parser.addConstraintBuilder(kBoundedPatternKeyword, new BoundedPatternBuilder());
  const json prepared = WithBoundedPatterns(document);
  // A repro's "scenario" refers to the scenario schema file by name.
  auto fetch = [scenario_for_refs](const std::string& uri) -> const json* {
    if (scenario_for_refs == nullptr || uri != kScenarioSchemaFile) return nullptr;
    return new json(WithBoundedPatterns(*scenario_for_refs));
  };
  auto release = [](const json* fetched) { delete fetched; };
  parser.populateSchema(NlohmannJsonAdapter(prepared), schema, fetch, release);
}

using Conditions = std::map<const json*, std::unique_ptr<valijson::Schema>>;

void CompileConditions(const json& node, Conditions& conditions) {
  if (node.is_array()) {
    for (const json& item : node) CompileConditions(item, conditions);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "if") {
      auto condition = std::make_unique<valijson::Schema>();
      Compile(it.value(), *condition, nullptr);
      conditions[&it.value()] = std::move(condition);
    }
    CompileConditions(it.value(), conditions);
  }
}

struct LoadResult {
  std::unique_ptr<LoadedSchemas> schemas;
  std::string error;
};

LoadResult Load() {
  LoadResult result;
  auto schemas = std::make_unique<LoadedSchemas>();
  try {
    // The generated parts (algorithm names and options, checkers) come from
    // the registries as they are now, so that algorithms registered by a
    // user's own main are checked like the built-in ones. For the built-in
    // ones this is the shipped text (a test keeps the two equal).
    schemas->scenario = WithRegistryDefinitions(nlohmann::ordered_json::parse(schema_text::kScenario));
    schemas->repro = json::parse(schema_text::kRepro);
    Compile(schemas->scenario, schemas->compiled_scenario, nullptr);
  } catch (const std::exception& error) {
    result.error = error.what();
    return result;
  }
  result.schemas = std::move(schemas);
  return result;
}

// Loaded once per process, on first use (thread-safe static initialisation).
const LoadResult& Loaded() {
  static const LoadResult loaded = Load();
  return loaded;
}

// The parts compiled on first use, once per process like Loaded().
struct CompiledRepro {
  valijson::Schema schema;
  std::string error;
};

const CompiledRepro& ReproSchema(const LoadedSchemas& schemas) {
  static const std::unique_ptr<CompiledRepro> compiled = [&schemas] {
    auto out = std::make_unique<CompiledRepro>();
    try {
      Compile(schemas.repro, out->schema, &schemas.scenario);
    } catch (const std::exception& error) {
      out->error = error.what();
    }
    return out;
  }();
  return *compiled;
}

// Empty if they do not compile (a build bug that the repro schema's own
// compilation reports): errors are then explained without the branches.
const Conditions& AllConditions(const LoadedSchemas& schemas) {
  static const Conditions conditions = [&schemas] {
    Conditions out;
    try {
      CompileConditions(schemas.scenario, out);
      CompileConditions(schemas.repro, out);
    } catch (const std::exception&) {
      out.clear();
    }
    return out;
  }();
  return conditions;
}

// valijson's nlohmann adapter reads every integer through int64_t, so an
// unsigned value above INT64_MAX (a seed near 2^64) would wrap negative and
// fail "minimum": 0. Such values are checked as INT64_MAX instead: every bound
// in the schemas lies within int64, so the verdict is the same. Messages
// quote the document itself, not this copy.
bool HasUnsignedBeyondInt64(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()};
  if (!value.is_structured()) return false;
  for (const json& child : value) {
    if (HasUnsignedBeyondInt64(child)) return true;
  }
  return false;
}

json WithUnsignedClamped(const json& value) {
  if (value.is_number_unsigned() && HasUnsignedBeyondInt64(value)) return std::numeric_limits<int64_t>::max();
  if (value.is_array()) {
    json out = json::array();
    for (const json& child : value) out.push_back(WithUnsignedClamped(child));
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = WithUnsignedClamped(it.value());
    return out;
  }
  return value;
}

}  // namespace

bool SatisfiesCondition(const LoadedSchemas& schemas, const json* condition, const json& value) {
  const Conditions& conditions = AllConditions(schemas);
  auto it = conditions.find(condition);
  if (it == conditions.end()) return false;
  valijson::Validator validator;
  return validator.validate(*it->second, NlohmannJsonAdapter(value), nullptr);
}

}  // namespace schema_internal

namespace schema_internal {
namespace {

// A copy of `value` in which every array longer than kArrayWindow keeps only
// its first kArrayWindow elements; `cut` receives the location of each array
// cut at the top level of `value`'s tree (nested ones inside kept elements
// are cut too, and not listed).
json CutLongArrays(const json& value, std::vector<std::string>& location, std::vector<std::vector<std::string>>* cut) {
  if (value.is_array()) {
    if (value.size() > kArrayWindow && cut != nullptr) cut->push_back(location);
    json out = json::array();
    const size_t kept = std::min(value.size(), kArrayWindow);
    for (size_t i = 0; i < kept; ++i) {
      location.push_back(std::to_string(i));
      out.push_back(CutLongArrays(value[i], location, value.size() > kArrayWindow ? nullptr : cut));
      location.pop_back();
    }
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      location.push_back(it.key());
      out[it.key()] = CutLongArrays(it.value(), location, cut);
      location.pop_back();
    }
    return out;
  }
  return value;
}

json::json_pointer PointerTo(const std::vector<std::string>& location) {
  json::json_pointer pointer;
  for (const std::string& token : location) pointer /= token;
  return pointer;
}

// valijson without a results object: stops at the first failure.
bool Passes(const valijson::Schema& schema, const json& document) {
  std::optional<json> clamped;
  if (HasUnsignedBeyondInt64(document)) clamped = WithUnsignedClamped(document);
  valijson::Validator validator;
  return validator.validate(schema, NlohmannJsonAdapter(clamped ? *clamped : document), nullptr);
}

// valijson with a results object: every error, not only the first.
valijson::ValidationResults Collect(const valijson::Schema& schema, const json& document) {
  std::optional<json> clamped;
  if (HasUnsignedBeyondInt64(document)) clamped = WithUnsignedClamped(document);
  valijson::ValidationResults results;
  valijson::Validator collecting;
  collecting.validate(schema, NlohmannJsonAdapter(clamped ? *clamped : document), &results);
  return results;
}

}  // namespace
}  // namespace schema_internal

absl::Status CheckAgainstSchema(SchemaKind kind, const nlohmann::json& document, std::string_view source,
                                std::string_view json_path_prefix) {
  using namespace schema_internal;
  const auto& loaded = Loaded();
  // The schemas are part of the binary: failing to load them is a build bug.
  if (loaded.schemas == nullptr)
    return absl::InternalError(fmt::format("the built-in schema is broken: {}", loaded.error));
  const auto& schemas = *loaded.schemas;
  if (kind == SchemaKind::kRepro && !ReproSchema(schemas).error.empty()) {
    return absl::InternalError(fmt::format("the built-in repro schema is broken: {}", ReproSchema(schemas).error));
  }
  const valijson::Schema& schema =
      kind == SchemaKind::kScenario ? schemas.compiled_scenario : ReproSchema(schemas).schema;
  if (Passes(schema, document)) return absl::OkStatus();
  auto explain = [&](const valijson::ValidationResults& results, const nlohmann::json& checked,
                     const IndexShift& shift = {}) {
    return ExplainFailure(schemas, kind, results, checked, source, json_path_prefix, shift);
  };
  // A failed file is checked again, collecting errors to explain. A million
  // bad fault steps would make millions of errors (seconds and gigabytes), so
  // long arrays are collected a window at a time: first every long array cut
  // to its first elements, then each long array window by window, and the
  // first window with an error is explained.
  std::vector<std::string> location;
  std::vector<std::vector<std::string>> long_arrays;
  nlohmann::json reduced = CutLongArrays(document, location, &long_arrays);
  if (long_arrays.empty()) return explain(Collect(schema, document), document);
  if (auto results = Collect(schema, reduced); results.numErrors() > 0) return explain(results, reduced);
  for (const std::vector<std::string>& array_location : long_arrays) {
    const nlohmann::json::json_pointer pointer = PointerTo(array_location);
    const nlohmann::json& whole = document.at(pointer);
    nlohmann::json& slot = reduced.at(pointer);
    const nlohmann::json first = slot;
    for (size_t start = kArrayWindow; start < whole.size(); start += kArrayWindow) {
      // The last window ends with the array, so every window is full length.
      const size_t from = std::min(start, whole.size() - kArrayWindow);
      slot = nlohmann::json::array();
      for (size_t i = from; i < from + kArrayWindow; ++i) {
        location = array_location;
        location.push_back(std::to_string(i));
        slot.push_back(CutLongArrays(whole[i], location, nullptr));
      }
      // Checked fast first; only the window that fails is collected.
      if (!Passes(schema, reduced)) return explain(Collect(schema, reduced), reduced, IndexShift{array_location, from});
    }
    slot = first;
  }
  // What failed depends on whole arrays at once: collect over the document.
  return explain(Collect(schema, document), document);
}

}  // namespace electsim
