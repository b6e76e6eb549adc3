// `--set PATH=VALUE`: changes one value of a scenario document before it is
// checked, so that an override is validated exactly as the file is (same
// schema, same readers, same messages) and a repro holds the scenario as run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/language/scenario.h"

namespace electsim {

struct Override {
  std::string flag;          // as given, "algorithm.options.election_timeout_max=300ms"
  std::string json_pointer;  // "/algorithm/options/election_timeout_max"
  std::vector<std::string> keys;
  nlohmann::json value;
};

// PATH is dot-separated keys ("nodes", "algorithm.options.pre_vote",
// "faults.0.at"; a number indexes an array that is there). VALUE is read as
// JSON when it is JSON ("7", "true", "0.2", "[[0,1],[2]]", "\"7\""), and as a
// string otherwise ("300ms", "raft"). Errors name the flag.
absl::StatusOr<Override> ParseOverride(std::string_view flag);
absl::StatusOr<std::vector<Override>> ParseOverrides(const std::vector<std::string>& flags);

// Whether `o` sets `json_pointer` ("/network/drop") or an object holding it
// ("/network"), which replaces it.
bool OverrideReaches(const Override& o, std::string_view json_pointer);

// "/algorithm/options/bug" as --set names it: "algorithm.options.bug".
std::string OverridePath(std::string_view json_pointer);

// An error when an override sets `json_pointer` ("/seed") or replaces an
// object holding it, which `command` decides with `flag`: a --set of it
// would silently win or lose, and the labels name the flag's value.
absl::Status RefuseOverrideOf(const std::vector<Override>& overrides, std::string_view json_pointer,
                              std::string_view command, std::string_view flag);

// The same for a whole part of the document ("/faults"): an override of it,
// within it or of an object holding it is refused.
absl::Status RefuseOverrideWithin(const std::vector<Override>& overrides, std::string_view json_pointer,
                                  std::string_view command, std::string_view decided_by);

// Sets each value in order, creating missing objects on the way. An
// algorithm given by name ("algorithm": "raft") becomes {"name": "raft"} when
// an override reaches inside it.
absl::Status ApplyOverrides(nlohmann::json& document, const std::vector<Override>& overrides);

// LoadScenarioFile with overrides applied before the checks. When the file
// alone is good, a failure is the overrides': its message starts with the
// flags ("--set nodes=0: FILE: at /nodes: expected ...").
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path, const std::vector<Override>& overrides);

}  // namespace electsim
