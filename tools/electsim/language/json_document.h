// Input files as JSON documents: read whole, parsed strictly, and every
// complaint worded the same way. Scenario and repro files both come in here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace electsim {

// Input files larger than this are refused rather than read into memory.
inline constexpr uintmax_t kMaxInputFileBytes = uintmax_t{64} << 20;
// Deeper nesting than any scenario needs is refused: copying or freeing a
// document recurses once per level, so 200000 brackets would end the process.
inline constexpr size_t kMaxJsonDepth = 32;

// Reads a whole regular file (the error names the path).
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Parses the whole of `text` as one JSON document, for every file electsim
// reads. Bad input is an InvalidArgument error naming `source` and, for
// syntax, line:column: a NUL byte anywhere, anything but whitespace after the
// top-level value, a key given twice in one object (with its JSON path),
// nesting deeper than kMaxJsonDepth, a number beyond a double's range. Time
// and memory are linear in the size of the text.
absl::StatusOr<nlohmann::json> ParseJsonText(std::string_view text, const std::string& source);

// The one way loader messages are made: "SOURCE: at PATH: expected WHAT" (an
// empty path reads "/"), escaped for the terminal because any part of it may
// quote the file.
absl::Status JsonInputError(std::string_view source, std::string_view json_path, std::string_view expected);
// Any other message about an input; escaped the same way.
absl::Status InputError(std::string_view message);

// A JSON Pointer token for `key` ("~" and "/" escaped, RFC 6901).
std::string JsonPointerToken(std::string_view key);

// The value of a JSON integer >= 0, up to 2^64 - 1. "-0" is zero: nlohmann
// reads it as a signed 0, and documents built in code hold signed integers.
std::optional<uint64_t> AsNonNegativeInteger(const nlohmann::json& value);

// How a JSON value reads in a message after "got": "the integer 5", "the
// string \"five\"" (long strings cut), "an object".
std::string DescribeJsonValue(const nlohmann::json& value);

}  // namespace electsim
