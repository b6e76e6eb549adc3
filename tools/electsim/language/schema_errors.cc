// From valijson's results to one message that says what was expected.
//
// valijson reports each failure as a context (the instance path) and a fixed
// English sentence per keyword; it does not say which subschema failed, and
// it also reports the failures inside oneOf branches that were only tried.
// So the errors are read back against the schema itself: for the instance
// location of each error, the schema nodes that definitely apply there are
// found by following properties, items, $ref, allOf, the dependencies whose
// key is present and the if/then/else branch the instance takes (not the
// oneOf/anyOf alternatives). An error counts
// only if one of those nodes holds the keyword that failed; its message uses
// that node's "description" (or the nearest enclosing one), which the schema
// writes to complete "expected ...".
#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "tools/electsim/language/duration.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/schema_internal.h"

namespace electsim::schema_internal {
namespace {

using nlohmann::json;

// The keywords whose failures are reported, in the order they are preferred
// at one location: the shape of a value before its details.
enum class Keyword {
  kType,
  kRequired,
  kOneOf,  // no alternative matched, or more than one
  kAnyOf,
  kAdditionalProperties,
  kConst,
  kEnum,
  kMinimum,
  kMaximum,
  kMinLength,
  kMaxLength,
  kPattern,
  kMinItems,
  kMaxItems,
  kMinProperties,
  kMaxProperties,
  kUniqueItems,
  kOther,  // a sentence this table does not know: reported with the node's description
};

struct KnownSentence {
  std::string_view prefix;
  std::optional<Keyword> keyword;  // nullopt: a consequence of another error, not reported on its own
};

// valijson 1.0's sentences (validation_visitor.hpp). Unknown ones fall back to kOther.
constexpr KnownSentence kSentences[] = {
    {"Value type not permitted by 'type' constraint.", Keyword::kType},
    {"Missing required property '", Keyword::kRequired},
    {"Failed to validate against any child schemas allowed by oneOf constraint.", Keyword::kOneOf},
    {"Failed to validate against exactly one child schema.", Keyword::kOneOf},
    {"Failed to validate against any schemas allowed by anyOf constraint.", Keyword::kAnyOf},
    {"Object contains a property that could not be validated using 'properties' or 'additionalProperties' "
     "constraints: '",
     Keyword::kAdditionalProperties},
    {"Failed to match expected value set by 'const' constraint.", Keyword::kConst},
    {"Failed to match against any enum values.", Keyword::kEnum},
    {"Expected number greater than", Keyword::kMinimum},
    {"Expected number less than", Keyword::kMaximum},
    {"String should be no fewer than", Keyword::kMinLength},
    {"String should be no more than", Keyword::kMaxLength},
    {"Failed to match regex specified by 'pattern' constraint.", Keyword::kPattern},
    {"Array should contain no fewer than", Keyword::kMinItems},
    {"Array should contain no more than", Keyword::kMaxItems},
    {"Object should have no fewer than", Keyword::kMinProperties},
    {"Object should have no more than", Keyword::kMaxProperties},
    {"Elements at indexes #", Keyword::kUniqueItems},
    {"Failed to validate against schema associated with property name", std::nullopt},
    {"Failed to validate against schema associated with pattern", std::nullopt},
    {"Failed to validate against additional properties schema", std::nullopt},
    {"Failed to validate item #", std::nullopt},
    {"Cannot validate item #", std::nullopt},
    {"Failed to validate against child schema #", std::nullopt},
    {"Failed to validate against a conditional schema", std::nullopt},
    {"Failed to validate against dependent schema", std::nullopt},
};

struct Error {
  std::vector<std::string> location;  // JSON Pointer tokens, unescaped
  Keyword keyword;
  std::string key;  // kRequired: the missing key; kAdditionalProperties: the unknown one
  size_t order;     // valijson's order, the last tie-breaker
};

// The key quoted at the end of "...: 'KEY'." or "... property 'KEY'.".
std::string QuotedKey(const std::string& sentence, std::string_view prefix) {
  std::string key = sentence.substr(prefix.size());
  if (key.size() >= 2 && key.compare(key.size() - 2, 2, "'.") == 0) key.resize(key.size() - 2);
  return key;
}

std::optional<Error> ReadError(const valijson::ValidationResults::Error& raw, size_t order) {
  Error error{{}, Keyword::kOther, "", order};
  // "<root>", then one "[token]" per level: the brackets wrap the key or the
  // index exactly, whatever the key holds.
  for (size_t i = 1; i < raw.context.size(); ++i) {
    const std::string& token = raw.context[i];
    error.location.push_back(token.size() >= 2 ? token.substr(1, token.size() - 2) : token);
  }
  for (const KnownSentence& known : kSentences) {
    if (raw.description.rfind(known.prefix, 0) != 0) continue;
    if (!known.keyword) return std::nullopt;
    error.keyword = *known.keyword;
    if (error.keyword == Keyword::kRequired || error.keyword == Keyword::kAdditionalProperties) {
      error.key = QuotedKey(raw.description, known.prefix);
    }
    return error;
  }
  return error;
}

// A schema node that applies at one instance location. `parent` is the entry
// (at the same location) whose $ref, allOf or if/then led here: the way to
// the nearest enclosing description.
struct Applicable {
  const json* node;
  const json* document;  // for resolving the node's own "$ref"s
  int parent;
  std::string reference;  // the "$ref" that led here, "" otherwise
};

class SchemaWalk {
 public:
  SchemaWalk(const LoadedSchemas& schemas, SchemaKind kind) : schemas_(schemas), root_(&schemas.Document(kind)) {}

  // Every node that applies at `location` in `instance` (`value` receives the
  // instance value there, or nullptr past the end of the instance).
  std::vector<Applicable> At(const std::vector<std::string>& location, const json& instance,
                             const json** value_out) const {
    const json* value = &instance;
    std::vector<Applicable> nodes = Expand({Applicable{root_, root_, -1, ""}}, value);
    for (const std::string& token : location) {
      const json* child = Child(value, token);
      std::vector<Applicable> next;
      for (const Applicable& applicable : nodes) {
        if (const json* node = ChildSchema(*applicable.node, value, token)) {
          next.push_back(Applicable{node, applicable.document, -1, ""});
        }
      }
      value = child;
      nodes = Expand(std::move(next), value);
    }
    if (value_out != nullptr) *value_out = value;
    return nodes;
  }

 private:
  static const json* Child(const json* value, const std::string& token) {
    if (value == nullptr) return nullptr;
    if (value->is_object()) {
      auto it = value->find(token);
      return it == value->end() ? nullptr : &*it;
    }
    if (value->is_array()) {
      size_t index = 0;
      for (char c : token) {
        if (c < '0' || c > '9') return nullptr;
        index = index * 10 + static_cast<size_t>(c - '0');
        if (index > value->size()) return nullptr;
      }
      return index < value->size() ? &(*value)[index] : nullptr;
    }
    return nullptr;
  }

  // The subschema a schema node gives the member `token` of `value`.
  static const json* ChildSchema(const json& node, const json* value, const std::string& token) {
    if (!node.is_object()) return nullptr;
    const bool array = value != nullptr && value->is_array();
    if (!array) {
      if (auto properties = node.find("properties"); properties != node.end() && properties->contains(token)) {
        return &(*properties)[token];
      }
      if (auto extra = node.find("additionalProperties"); extra != node.end() && extra->is_object()) return &*extra;
      return nullptr;
    }
    if (auto items = node.find("items"); items != node.end()) {
      if (items->is_object()) return &*items;
      if (items->is_array()) {
        const size_t index = std::stoul(token);
        if (index < items->size()) return &(*items)[index];
        if (auto extra = node.find("additionalItems"); extra != node.end() && extra->is_object()) return &*extra;
      }
    }
    return nullptr;
  }

  const json* Resolve(const std::string& reference, const json*& document) const {
    std::string file, pointer = reference;
    if (const size_t hash = reference.find('#'); hash != std::string::npos) {
      file = reference.substr(0, hash);
      pointer = reference.substr(hash + 1);
    } else {
      file = reference;
      pointer = "";
    }
    if (!file.empty()) {
      if (file != kScenarioSchemaFile) return nullptr;
      document = &schemas_.scenario;
    }
    try {
      return &document->at(json::json_pointer(pointer));
    } catch (const json::exception&) {
      return nullptr;
    }
  }

  std::vector<Applicable> Expand(std::vector<Applicable> nodes, const json* value) const {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const json& node = *nodes[i].node;
      if (!node.is_object()) continue;
      const int parent = static_cast<int>(i);
      if (auto ref = node.find("$ref"); ref != node.end() && ref->is_string()) {
        const json* document = nodes[i].document;
        if (const json* target = Resolve(ref->get<std::string>(), document)) {
          nodes.push_back(Applicable{target, document, parent, ref->get<std::string>()});
        }
        continue;  // draft 7: every other keyword next to "$ref" is ignored
      }
      if (auto all = node.find("allOf"); all != node.end() && all->is_array()) {
        for (const json& member : *all) nodes.push_back(Applicable{&member, nodes[i].document, parent, ""});
      }
      // A dependency's schema applies when its key is present.
      if (auto dependencies = node.find("dependencies");
          dependencies != node.end() && value != nullptr && value->is_object()) {
        for (auto it = dependencies->begin(); it != dependencies->end(); ++it) {
          if (it.value().is_object() && value->contains(it.key())) {
            nodes.push_back(Applicable{&it.value(), nodes[i].document, parent, ""});
          }
        }
      }
      if (auto condition = node.find("if"); condition != node.end() && value != nullptr) {
        const char* branch = SatisfiesCondition(schemas_, &*condition, *value) ? "then" : "else";
        if (auto taken = node.find(branch); taken != node.end()) {
          nodes.push_back(Applicable{&*taken, nodes[i].document, parent, ""});
        }
      }
    }
    return nodes;
  }

  const LoadedSchemas& schemas_;
  const json* root_;
};

bool Has(const json& node, std::string_view key) { return node.is_object() && node.contains(key); }

// Whether `node` holds the keyword `error` reports as failed.
bool Holds(const json& node, const Error& error) {
  switch (error.keyword) {
    case Keyword::kType: return Has(node, "type");
    case Keyword::kRequired: {
      if (!Has(node, "required")) return false;
      const json& required = node["required"];
      return std::find(required.begin(), required.end(), error.key) != required.end();
    }
    case Keyword::kOneOf: return Has(node, "oneOf");
    case Keyword::kAnyOf: return Has(node, "anyOf");
    case Keyword::kAdditionalProperties:
      return Has(node, "additionalProperties") && node["additionalProperties"] == false &&
             !(Has(node, "properties") && node["properties"].contains(error.key));
    case Keyword::kConst: return Has(node, "const");
    case Keyword::kEnum: return Has(node, "enum");
    case Keyword::kMinimum: return Has(node, "minimum") || Has(node, "exclusiveMinimum");
    case Keyword::kMaximum: return Has(node, "maximum") || Has(node, "exclusiveMaximum");
    case Keyword::kMinLength: return Has(node, "minLength");
    case Keyword::kMaxLength: return Has(node, "maxLength");
    case Keyword::kPattern: return Has(node, "pattern");
    case Keyword::kMinItems: return Has(node, "minItems");
    case Keyword::kMaxItems: return Has(node, "maxItems");
    case Keyword::kMinProperties: return Has(node, "minProperties");
    case Keyword::kMaxProperties: return Has(node, "maxProperties");
    case Keyword::kUniqueItems: return Has(node, "uniqueItems");
    case Keyword::kOther: return true;
  }
  return false;
}

// The index of the first node holding the failed keyword, or -1.
int Holder(const std::vector<Applicable>& nodes, const Error& error) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (Holds(*nodes[i].node, error)) return static_cast<int>(i);
  }
  return -1;
}

// The description of `index` or of the nearest node that led to it.
std::string DescriptionFrom(const std::vector<Applicable>& nodes, int index) {
  for (int i = index; i >= 0; i = nodes[i].parent) {
    const json& node = *nodes[i].node;
    if (Has(node, "description") && node["description"].is_string()) return node["description"].get<std::string>();
  }
  for (const Applicable& applicable : nodes) {
    if (Has(*applicable.node, "description")) return (*applicable.node)["description"].get<std::string>();
  }
  return "a value the schema allows";
}

std::string Quoted(const std::vector<std::string>& keys) {
  std::string list;
  for (const std::string& key : keys) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", key);
  return list;
}

std::string PathText(std::string_view prefix, const std::vector<std::string>& location, const IndexShift& shift) {
  const size_t shifted = shift.array_location.size();
  const bool in_window = shift.offset > 0 && location.size() > shifted &&
                         std::equal(shift.array_location.begin(), shift.array_location.end(), location.begin());
  std::string path(prefix);
  for (size_t i = 0; i < location.size(); ++i) {
    path += '/';
    path += in_window && i == shifted ? std::to_string(std::stoull(location[i]) + shift.offset)
                                      : JsonPointerToken(location[i]);
  }
  return path;
}

// The keys named by a oneOf whose alternatives are all {"required": [KEY]}
// ("exactly one of these keys"), or empty when it is not of that form.
std::vector<std::string> OneOfKeys(const json& node) {
  std::vector<std::string> keys;
  for (const json& alternative : node["oneOf"]) {
    if (!alternative.is_object() || alternative.size() != 1 || !Has(alternative, "required") ||
        alternative["required"].size() != 1) {
      return {};
    }
    keys.push_back(alternative["required"][0].get<std::string>());
  }
  return keys;
}

}  // namespace

namespace {

// The error to report, with where it sits in the schemas and the document.
struct Candidate {
  Error error;
  std::vector<Applicable> nodes;
  const json* value;
  int holder;
};

// Nearest the top first; at one place, the shape before the details. A
// file can fail in a million places, so errors are ranked first and walked
// to only until one proves real.
std::optional<Candidate> FirstRealError(const SchemaWalk& walk, const valijson::ValidationResults& results,
                                        const json& document) {
  std::vector<Error> errors;
  size_t order = 0;
  for (const auto& raw : results) {
    if (std::optional<Error> error = ReadError(raw, order++)) errors.push_back(std::move(*error));
  }
  auto rank = [](const Error& e) { return std::make_tuple(e.location.size(), e.keyword, e.order); };
  std::sort(errors.begin(), errors.end(), [&](const Error& a, const Error& b) { return rank(a) < rank(b); });
  for (Error& error : errors) {
    const json* value = nullptr;
    std::vector<Applicable> nodes = walk.At(error.location, document, &value);
    const int holder = Holder(nodes, error);
    if (holder < 0) continue;  // from an alternative that was only tried
    return Candidate{std::move(error), std::move(nodes), value, holder};
  }
  return std::nullopt;
}

// Where messages point: the file, and how its JSON paths are written.
struct Place {
  std::string_view source;
  std::string_view prefix;
  const IndexShift& shift;
};

absl::Status MissingKey(const SchemaWalk& walk, const Candidate& best, const json& document, const Place& place) {
  std::vector<std::string> member_location = best.error.location;
  member_location.push_back(best.error.key);
  const std::vector<Applicable> member = walk.At(member_location, document, nullptr);
  const std::string expected = member.empty() ? "a value" : DescriptionFrom(member, 0);
  return JsonInputError(place.source, PathText(place.prefix, member_location, place.shift),
                        fmt::format("{} (this key is required)", expected));
}

absl::Status UnknownKey(const Candidate& best, const Place& place) {
  const json& holder = *best.nodes[best.holder].node;
  std::vector<std::string> allowed;
  if (Has(holder, "properties")) {
    for (auto it = holder["properties"].begin(); it != holder["properties"].end(); ++it) allowed.push_back(it.key());
  }
  // A "title" names the object ("a repro", "a \"heal\" step").
  const std::string where =
      Has(holder, "title") ? fmt::format("in {}", holder["title"].get<std::string>()) : std::string("here");
  std::vector<std::string> member_location = best.error.location;
  member_location.push_back(best.error.key);
  return JsonInputError(place.source, PathText(place.prefix, member_location, place.shift),
                        fmt::format("no key \"{}\" {} (allowed: {})", best.error.key, where, Quoted(allowed)));
}

absl::Status NotExactlyOne(const Candidate& best, const std::string& path, const Place& place) {
  const json& holder = *best.nodes[best.holder].node;
  std::string expected = DescriptionFrom(best.nodes, best.holder);
  std::vector<std::string> present;
  if (best.value != nullptr && best.value->is_object()) {
    for (const std::string& key : OneOfKeys(holder)) {
      if (best.value->contains(key)) present.push_back(key);
    }
  }
  if (present.size() > 1) expected += fmt::format(" (this object has {})", Quoted(present));
  return JsonInputError(place.source, path, expected);
}

absl::Status BadText(const Candidate& best, const std::string& path, const std::string& got, const Place& place) {
  // A malformed duration: the duration parser says what is wrong with it.
  for (int i = best.holder; i >= 0; i = best.nodes[i].parent) {
    const std::string& reference = best.nodes[i].reference;
    const bool duration = reference == "#/definitions/duration" || reference == "#/definitions/time";
    const bool signed_duration = reference == "#/definitions/signed_duration";
    if ((duration || signed_duration) && best.value != nullptr && best.value->is_string()) {
      auto parsed = ParseDuration(best.value->get<std::string>(), signed_duration);
      if (!parsed.ok()) return JsonInputError(place.source, path, std::string(parsed.status().message()));
    }
  }
  std::string expected = DescriptionFrom(best.nodes, best.holder);
  if (best.error.keyword == Keyword::kMaxLength) {
    expected += fmt::format(" (at most {} characters)", (*best.nodes[best.holder].node)["maxLength"].dump());
  }
  return JsonInputError(place.source, path, expected + got);
}

}  // namespace

absl::Status ExplainFailure(const LoadedSchemas& schemas, SchemaKind kind, const valijson::ValidationResults& results,
                            const json& document, std::string_view source, std::string_view json_path_prefix,
                            const IndexShift& shift) {
  const SchemaWalk walk(schemas, kind);
  const std::optional<Candidate> best = FirstRealError(walk, results, document);
  if (!best) {
    // Every error came from an alternative; say what the top level expects.
    return JsonInputError(source, json_path_prefix, DescriptionFrom(walk.At({}, document, nullptr), 0));
  }
  const Place place{source, json_path_prefix, shift};
  const std::string path = PathText(json_path_prefix, best->error.location, shift);
  const std::string got = best->value != nullptr ? fmt::format(", got {}", DescribeJsonValue(*best->value)) : "";
  switch (best->error.keyword) {
    case Keyword::kRequired: return MissingKey(walk, *best, document, place);
    case Keyword::kAdditionalProperties: return UnknownKey(*best, place);
    case Keyword::kOneOf: return NotExactlyOne(*best, path, place);
    case Keyword::kPattern:
    case Keyword::kMaxLength: return BadText(*best, path, got, place);
    default: return JsonInputError(source, path, DescriptionFrom(best->nodes, best->holder) + got);
  }
}

}  // namespace electsim::schema_internal
