#include "tools/electsim/language/overrides.h"

#include <algorithm>
#include <charconv>

#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/json_document.h"

namespace electsim {

using nlohmann::json;

namespace {

std::optional<size_t> ArrayIndex(const std::string& key) {
  size_t index = 0;
  const char* end = key.data() + key.size();
  auto [ptr, ec] = std::from_chars(key.data(), end, index);
  if (key.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return index;
}

absl::Status FlagError(const Override& o, std::string_view expected) {
  return InputError(fmt::format("--set {}: expected {}", o.flag, expected));
}

}  // namespace

absl::StatusOr<Override> ParseOverride(std::string_view flag) {
  Override o;
  o.flag = std::string(flag);
  const size_t equals = flag.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return FlagError(o, "PATH=VALUE, such as nodes=7 or algorithm.options.election_timeout_max=300ms");
  }
  const std::string_view path = flag.substr(0, equals);
  const std::string_view value = flag.substr(equals + 1);
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (key.empty()) return FlagError(o, "a PATH of keys separated by single dots");
    o.keys.push_back(key);
    // Appended in two steps: "/" + token trips a GCC 12 -Wrestrict false positive.
    o.json_pointer += '/';
    o.json_pointer += JsonPointerToken(key);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // JSON when it parses as JSON; otherwise the text itself, as a string. A
  // value that opens an object or an array is meant as JSON: why it does
  // not parse (a duplicate key, a missing brace) is the message.
  auto parsed = ParseJsonText(value, "--set");
  const size_t first = value.find_first_not_of(" \t\n\r");
  if (!parsed.ok() && first != std::string_view::npos && (value[first] == '{' || value[first] == '[')) {
    return FlagError(o, fmt::format("a JSON value after '=' ({}; a string that starts with {} is written in quotes)",
                                    std::string(parsed.status().message()), value[first]));
  }
  o.value = parsed.ok() ? *parsed : json(std::string(value));
  return o;
}

bool OverrideReaches(const Override& o, std::string_view json_pointer) {
  if (o.json_pointer == json_pointer) return true;
  // An object set whole replaces what a flag put inside it.
  return json_pointer.size() > o.json_pointer.size() && json_pointer.starts_with(o.json_pointer) &&
         json_pointer[o.json_pointer.size()] == '/';
}

std::string OverridePath(std::string_view json_pointer) {
  std::string path(json_pointer.substr(std::min<size_t>(1, json_pointer.size())));
  std::replace(path.begin(), path.end(), '/', '.');
  return path;
}

absl::Status RefuseOverrideOf(const std::vector<Override>& overrides, std::string_view json_pointer,
                              std::string_view command, std::string_view flag) {
  for (const Override& o : overrides) {
    if (!OverrideReaches(o, json_pointer)) continue;
    if (o.json_pointer == json_pointer) {
      return InputError(fmt::format("--set {}: {} sets {} with {}; expected one or the other",
                                    EscapeForTerminal(o.flag), command, OverridePath(json_pointer), flag));
    }
    return InputError(
        fmt::format("--set {}: replaces {}, which {} sets with {}; expected a --set of the values "
                    "beside it one by one, or no {}",
                    EscapeForTerminal(o.flag), OverridePath(json_pointer), command, flag, flag));
  }
  return absl::OkStatus();
}

absl::Status RefuseOverrideWithin(const std::vector<Override>& overrides, std::string_view json_pointer,
                                  std::string_view command, std::string_view decided_by) {
  for (const Override& o : overrides) {
    const bool within = o.json_pointer.size() > json_pointer.size() && o.json_pointer.starts_with(json_pointer) &&
                        o.json_pointer[json_pointer.size()] == '/';
    if (!within && !OverrideReaches(o, json_pointer)) continue;
    return InputError(fmt::format("--set {}: {} decides {} with {}; expected no --set of it or within it",
                                  EscapeForTerminal(o.flag), command, OverridePath(json_pointer), decided_by));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Override>> ParseOverrides(const std::vector<std::string>& flags) {
  std::vector<Override> overrides;
  for (const std::string& flag : flags) {
    auto o = ParseOverride(flag);
    if (!o.ok()) return o.status();
    overrides.push_back(std::move(*o));
  }
  return overrides;
}

absl::Status ApplyOverrides(json& document, const std::vector<Override>& overrides) {
  for (const Override& o : overrides) {
    json* node = &document;
    std::string walked;
    for (size_t i = 0; i < o.keys.size(); ++i) {
      const std::string& key = o.keys[i];
      if (walked == "/algorithm" && node->is_string()) *node = json{{"name", *node}};
      if (node->is_array()) {
        const std::optional<size_t> index = ArrayIndex(key);
        if (!index || *index >= node->size()) {
          return FlagError(o, fmt::format("an index below {} into the array at {}, not \"{}\"", node->size(),
                                          walked.empty() ? "/" : walked, key));
        }
        node = &(*node)[*index];
      } else {
        // A number past a missing key would make an object of what the
        // scenario may only hold as an array ("faults.0.at" with no faults).
        if (node->is_null() && ArrayIndex(key)) {
          return FlagError(o, fmt::format("an array at {} to index with \"{}\"; the scenario has none there",
                                          walked.empty() ? "/" : walked, key));
        }
        if (node->is_null()) *node = json::object();
        if (!node->is_object()) {
          return FlagError(o, fmt::format("a path through objects and arrays: {} holds {}, which has no \"{}\"",
                                          walked.empty() ? "/" : walked, DescribeJsonValue(*node), key));
        }
        node = &(*node)[key];
      }
      walked += '/';
      walked += JsonPointerToken(key);
    }
    *node = o.value;
  }
  return absl::OkStatus();
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path, const std::vector<Override>& overrides) {
  if (overrides.empty()) return LoadScenarioFile(path);
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  auto document = ParseJsonText(*text, path);
  if (!document.ok()) return document.status();
  json changed = *document;
  if (auto status = ApplyOverrides(changed, overrides); !status.ok()) {
    // A sweep applies the flags to many files: say which.
    return absl::Status(status.code(), fmt::format("{} (in {})", std::string(status.message()), path));
  }
  auto scenario = ParseScenarioJson(std::move(changed), path);
  if (scenario.ok()) {
    for (const Override& o : overrides) scenario->sets.push_back(o.flag);
    return scenario;
  }
  if (!ParseScenarioJson(std::move(*document), path).ok()) return scenario;
  // The file alone is good: the overrides made it bad. Name the ones the
  // message points at (or all of them).
  const std::string message(scenario.status().message());
  std::string flags;
  for (const Override& o : overrides) {
    if (message.find("at " + o.json_pointer) != std::string::npos)
      flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
  }
  if (flags.empty()) {
    for (const Override& o : overrides) flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
  }
  return absl::Status(scenario.status().code(), fmt::format("{}: {}", EscapeForTerminal(flags), message));
}

}  // namespace electsim
