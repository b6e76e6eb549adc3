#include "tools/electsim/language/scenario_reader.h"

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/language/duration.h"
#include "tools/electsim/language/json_document.h"

namespace electsim::scenario_reader {

using nlohmann::json;

void Reader::Fail(const std::string& path, std::string_view expected, const json* got) const {
  std::string message(expected);
  if (got != nullptr) message += fmt::format(", got {}", DescribeJsonValue(*got));
  throw LoadFailure{JsonInputError(source_, path_prefix_ + path, message)};
}

std::string Reader::Child(const std::string& path, std::string_view key) { return path + "/" + JsonPointerToken(key); }

std::string Reader::Child(const std::string& path, size_t index) { return fmt::format("{}/{}", path, index); }

const json* Reader::Find(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

int64_t Reader::Integer(const json& value, const std::string& path, int64_t min, int64_t max) const {
  const std::string expected = fmt::format("an integer in [{}, {}]", min, max);
  if (value.is_number_unsigned()) {
    // nlohmann reads every non-negative literal as unsigned: both bounds
    // are checked here too.
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(max) || (min > 0 && v < static_cast<uint64_t>(min))) Fail(path, expected, &value);
    return static_cast<int64_t>(v);
  }
  if (!value.is_number_integer()) Fail(path, expected, &value);
  const int64_t v = value.get<int64_t>();
  if (v < min || v > max) Fail(path, expected, &value);
  return v;
}

uint64_t Reader::Unsigned(const json& value, const std::string& path) const {
  const std::optional<uint64_t> v = AsNonNegativeInteger(value);
  if (!v) Fail(path, "a non-negative integer", &value);
  return *v;
}

bool Reader::Bool(const json& value, const std::string& path) const {
  if (!value.is_boolean()) Fail(path, "true or false", &value);
  return value.get<bool>();
}

const std::string& Reader::String(const json& value, const std::string& path) const {
  if (!value.is_string()) Fail(path, "a string", &value);
  return value.get_ref<const std::string&>();
}

sim::TimeNs Reader::Duration(const json& value, const std::string& path, bool allow_negative) const {
  auto parsed = ParseDuration(String(value, path), allow_negative);
  if (!parsed.ok()) Fail(path, std::string(parsed.status().message()));
  return *parsed;
}

sim::TimeNs Reader::PositiveDuration(const json& value, const std::string& path) const {
  const sim::TimeNs duration = Duration(value, path);
  if (duration <= sim::TimeNs(0)) Fail(path, "a duration > 0", &value);
  return duration;
}

TimeRange Reader::Time(const json& value, const std::string& path, bool positive) const {
  auto read = [&](const json& v, const std::string& p) { return positive ? PositiveDuration(v, p) : Duration(v, p); };
  if (!value.is_object()) {
    const sim::TimeNs fixed = read(value, path);
    return TimeRange{fixed, fixed};
  }
  const std::string range_path = Child(path, "uniform");
  const json& range = value.at("uniform");  // the schema has checked its shape
  const TimeRange time{read(range.at(0), Child(range_path, 0)), read(range.at(1), Child(range_path, 1))};
  if (time.max < time.min) {
    Fail(Child(range_path, 1), fmt::format("a duration of at least LOW ({})", sim::FormatDuration(time.min)),
         &range.at(1));
  }
  return time;
}

sim::TimeNs Reader::AtLeast(sim::TimeNs value, sim::TimeNs bound, std::string_view bound_name, const std::string& path,
                            const json& got) const {
  if (value < bound) {
    Fail(path, fmt::format("a duration of at least {} ({})", bound_name, sim::FormatDuration(bound)), &got);
  }
  return value;
}

sim::Probability Reader::Probability(const json& value, const std::string& path) const {
  if (!value.is_number()) Fail(path, "a probability: a number in [0, 1]", &value);
  auto p = sim::Probability::FromDouble(value.get<double>());
  if (!p.ok()) Fail(path, "a probability: a number in [0, 1]", &value);
  return *p;
}

}  // namespace electsim::scenario_reader
