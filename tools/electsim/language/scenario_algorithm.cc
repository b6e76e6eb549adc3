// "algorithm": which election algorithm runs, with which options. The schema
// has checked the name and each option's type and declared range; here the
// values are converted to what the algorithm holds, and the checks only code
// can make are made: a duration's range, a ratio that rounds into range, and
// the algorithm's own relations between options (Algorithm::Validate).
#include <algorithm>
#include <cmath>

#include "fmt/format.h"
#include "tools/electsim/language/scenario_reader.h"

namespace electsim::scenario_reader {
namespace {

using nlohmann::json;

void ReadOptions(const Reader& reader, const json& options, const std::string& path, Scenario& s) {
  const auto& specs = s.algorithm->options();
  for (auto it = options.begin(); it != options.end(); ++it) {
    const std::string option_path = Reader::Child(path, it.key());
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const auto& o) { return o.name == it.key(); });
    if (spec == specs.end())
      reader.Fail(option_path, fmt::format("an option of algorithm \"{}\"", s.algorithm->name()));
    const json& v = it.value();
    const std::string range = spec->RangeText();
    const std::string in_range = range.empty() ? "" : fmt::format(" ({})", range);
    int64_t held = 0;
    switch (spec->type) {
      case algorithms::OptionType::kDuration:
        held = reader.Duration(v, option_path).ns();
        if (held < spec->min || held > spec->max) reader.Fail(option_path, fmt::format("a duration{}", in_range), &v);
        break;
      case algorithms::OptionType::kInt: held = reader.Integer(v, option_path, spec->min, spec->max); break;
      case algorithms::OptionType::kBool: held = reader.Bool(v, option_path) ? 1 : 0; break;
      case algorithms::OptionType::kRatio: {
        if (!v.is_number()) reader.Fail(option_path, fmt::format("a number {}", range), &v);
        // The range is checked on the number as written, before rounding to
        // ppm: 1.0000001 is outside (0, 1] even though it rounds to 1.
        // (0.000001 * 1e6 is 0.99999..., so values that land within a hair
        // of a whole ppm count as it.)
        double ppm = v.get<double>() * 1e6;
        if (std::abs(ppm - std::round(ppm)) < 1e-6) ppm = std::round(ppm);
        if (!(ppm >= static_cast<double>(spec->min) && ppm <= static_cast<double>(spec->max))) {
          // Below one part per million is "in (0, 1]" to the eye but not held.
          const bool below_a_millionth = ppm > 0 && ppm < 1;
          reader.Fail(option_path,
                      fmt::format("a number {}{}", range,
                                  below_a_millionth ? ", at least 0.000001 (ratios are held in millionths)" : ""),
                      &v);
        }
        held = std::clamp(static_cast<int64_t>(ppm + 0.5), spec->min, spec->max);
        break;
      }
      case algorithms::OptionType::kChoice: {
        const std::string& choice = reader.String(v, option_path);
        auto found = std::find(spec->choices.begin(), spec->choices.end(), choice);
        if (found == spec->choices.end()) reader.Fail(option_path, range, &v);
        held = found - spec->choices.begin();
        break;
      }
      case algorithms::OptionType::kIntList: {
        if (!v.is_array()) reader.Fail(option_path, "an array of integers", &v);
        std::vector<int64_t> list;
        for (size_t i = 0; i < v.size(); ++i) {
          list.push_back(reader.Integer(v[i], Reader::Child(option_path, i), spec->min, spec->max));
        }
        s.options.SetList(spec->name, std::move(list));
        continue;
      }
    }
    s.options.Set(spec->name, held);
  }
}

}  // namespace

void ReadAlgorithm(const Reader& reader, const json& algorithm, Scenario& s) {
  const bool by_name = algorithm.is_string();
  const std::string name_path = by_name ? "/algorithm" : "/algorithm/name";
  const json& name = by_name ? algorithm : algorithm.at("name");
  s.algorithm = algorithms::FindAlgorithm(reader.String(name, name_path));
  if (s.algorithm == nullptr) reader.Fail(name_path, "the name of an algorithm (see electsim list)", &name);
  s.options = algorithms::OptionValues::Defaults(s.algorithm->options());
  const json* options = by_name ? nullptr : Reader::Find(algorithm, "options");
  if (options != nullptr) ReadOptions(reader, *options, "/algorithm/options", s);
  if (auto status = s.algorithm->Validate(s.options, s.cluster()); !status.ok()) {
    reader.Fail(options != nullptr ? "/algorithm/options" : "/algorithm",
                fmt::format("valid options: {}", std::string(status.message())));
  }
}

}  // namespace electsim::scenario_reader
