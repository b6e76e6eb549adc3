#include "tools/electsim/engine/option_swarm.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "electsim/sim/rng.h"
#include "fmt/format.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

using algorithms::OptionSpec;
using algorithms::OptionType;
using nlohmann::json;

constexpr int kAttempts = 8;

// The choice indices that still promise something.
std::vector<int64_t> PromisingChoices(const algorithms::Algorithm& algorithm, const OptionSpec& option) {
  std::vector<int64_t> indices;
  algorithms::OptionValues values = algorithms::OptionValues::Defaults(algorithm.options());
  for (size_t i = 0; i < option.choices.size(); ++i) {
    values.Set(option.name, static_cast<int64_t>(i));
    if (!algorithm.guarantees(values).empty()) indices.push_back(static_cast<int64_t>(i));
  }
  return indices;
}

bool Swarmed(const algorithms::Algorithm& algorithm, const OptionSpec& option, const json& fixed) {
  if (fixed.contains(option.name) || !option.swarmed) return false;
  switch (option.type) {
    case OptionType::kBool:
    case OptionType::kInt:
    case OptionType::kDuration:
    case OptionType::kRatio: return true;
    case OptionType::kChoice: return PromisingChoices(algorithm, option).size() > 1;
    default: return false;  // lists: no range to draw from
  }
}

// Between half and twice `value`, within [min, max].
std::pair<int64_t, int64_t> Around(int64_t value, int64_t min, int64_t max) {
  const int64_t low = std::max(min, value / 2);
  const int64_t high = std::min(max, std::max(value * 2, value + 2));
  return {std::min(low, high), high};
}

// One option's value, as a scenario writes it.
json Draw(const algorithms::Algorithm& algorithm, const OptionSpec& option, sim::Rng& rng) {
  switch (option.type) {
    case OptionType::kBool: return rng.Below(2) == 1;
    case OptionType::kChoice: {
      const std::vector<int64_t> indices = PromisingChoices(algorithm, option);
      return option.choices[indices[rng.Below(indices.size())]];
    }
    case OptionType::kInt: {
      const auto [low, high] = Around(option.default_value, option.min, option.max);
      return rng.Between(low, high);
    }
    case OptionType::kDuration: {
      // Whole milliseconds where the default is at least 2ms: readable in repros.
      const int64_t unit = option.step > 0 ? option.step : option.default_value >= 2'000'000 ? 1'000'000 : 1;
      const auto [low, high] = Around(option.default_value / unit, (option.min + unit - 1) / unit, option.max / unit);
      const int64_t drawn = rng.Between(low, high);
      if (option.step > 0) {
        const int64_t ns = drawn * unit;
        return ns % 1'000'000 == 0 ? fmt::format("{}ms", ns / 1'000'000) : fmt::format("{}ns", ns);
      }
      return unit == 1 ? fmt::format("{}ns", drawn) : fmt::format("{}ms", drawn);
    }
    case OptionType::kRatio: {
      // Between half the default and halfway from it to 1, in thousandths.
      const int64_t low = std::max((option.min + 999) / 1000, option.default_value / 2000);
      const int64_t high = std::min(option.max / 1000, (option.default_value / 1000 + 1000) / 2);
      return static_cast<double>(rng.Between(std::min(low, high), high)) / 1000.0;
    }
    default: return nullptr;
  }
}

std::string Written(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// The options read and checked as a scenario's are (Validate included).
absl::StatusOr<algorithms::OptionValues> Read(const algorithms::Algorithm& algorithm, const json& options,
                                              uint32_t nodes) {
  const json probe = {
      {"nodes", nodes}, {"duration", "1s"}, {"algorithm", {{"name", algorithm.name()}, {"options", options}}}};
  auto scenario = ParseGeneratedScenarioJson(probe, "option swarm");
  if (!scenario.ok()) return scenario.status();
  return scenario->options;
}

// OptionDraw::timing_kept, for `values` of which the options `changed` names
// are away from their defaults; with `capped`, none of those durations past
// 1.5 times its default either.
bool TimingKept(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& values, const json& changed,
                bool capped) {
  const std::vector<OptionSpec> specs = algorithm.options();
  for (const OptionSpec& duration : specs) {
    if (capped && duration.type == OptionType::kDuration && changed.contains(duration.name) &&
        values.Int(duration.name) * 2 > duration.default_value * 3) {
      return false;
    }
  }
  for (const OptionSpec& ratio : specs) {
    if (ratio.type == OptionType::kRatio && changed.contains(ratio.name) &&
        values.RatioPpm(ratio.name) < ratio.default_value) {
      return false;
    }
  }
  for (const OptionSpec& a : specs) {
    for (const OptionSpec& b : specs) {
      if (a.type != OptionType::kDuration || b.type != OptionType::kDuration) continue;
      if (a.default_value <= 0 || b.default_value <= a.default_value) continue;
      if (!changed.contains(a.name) && !changed.contains(b.name)) continue;
      const double ratio = static_cast<double>(b.default_value) / static_cast<double>(a.default_value);
      const double wanted = std::max(std::sqrt(ratio), ratio * 2 / 3);
      const double changed_ratio =
          static_cast<double>(values.Int(b.name)) / static_cast<double>(std::max<int64_t>(1, values.Int(a.name)));
      if (changed_ratio < wanted) return false;
    }
  }
  return true;
}

// A duration or ratio option of `values` away from its default.
bool TimingChanged(const OptionSpec& option, const algorithms::OptionValues& values) {
  return (option.type == OptionType::kDuration || option.type == OptionType::kRatio) &&
         values.Int(option.name) != option.default_value;
}

}  // namespace

bool KeepsTimingProportions(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& values) {
  json changed = json::object();
  for (const OptionSpec& option : algorithm.options()) {
    if (TimingChanged(option, values)) changed[option.name] = true;
  }
  return TimingKept(algorithm, values, changed, /*capped=*/false);
}

std::vector<std::string> TimingOptionsChanged(const algorithms::Algorithm& algorithm,
                                              const algorithms::OptionValues& values) {
  const std::map<std::string, std::string> described = values.Describe();
  std::vector<std::string> changed;
  for (const OptionSpec& option : algorithm.options()) {
    if (!TimingChanged(option, values)) continue;
    const auto it = described.find(option.name);
    changed.push_back(fmt::format("{}={}", option.name, it == described.end() ? "?" : it->second));
  }
  return changed;
}

std::vector<std::string> SwarmedOptions(const algorithms::Algorithm& algorithm, const json& fixed) {
  std::vector<std::string> names;
  for (const OptionSpec& option : algorithm.options()) {
    if (Swarmed(algorithm, option, fixed)) names.push_back(option.name);
  }
  return names;
}

absl::StatusOr<OptionDraw> DrawOptions(const algorithms::Algorithm& algorithm, const json& fixed, uint64_t seed,
                                       uint32_t nodes) {
  sim::Rng rng = sim::Rng::ForStream(seed, "fuzz.options");
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    OptionDraw draw;
    draw.options = fixed;
    json drawn_only = json::object();
    for (const OptionSpec& option : algorithm.options()) {
      if (!Swarmed(algorithm, option, fixed) || rng.Below(2) == 0) continue;
      json value = Draw(algorithm, option, rng);
      draw.drawn.push_back(fmt::format("{}={}", option.name, Written(value)));
      const bool numeric = option.type != OptionType::kBool && option.type != OptionType::kChoice;
      draw.counted.push_back(numeric ? option.name : draw.drawn.back());
      drawn_only[option.name] = value;
      draw.options[option.name] = std::move(value);
    }
    auto values = Read(algorithm, draw.options, nodes);
    auto defaults_with_drawn = Read(algorithm, drawn_only, nodes);
    if (!values.ok() || !defaults_with_drawn.ok()) continue;
    draw.values = std::move(*values);
    draw.defaults_with_drawn = std::move(*defaults_with_drawn);
    draw.timing_kept = TimingKept(algorithm, draw.values, drawn_only, /*capped=*/true);
    return draw;
  }
  // Nothing drawn: the fixed options alone, which the campaign checked.
  OptionDraw draw;
  draw.options = fixed;
  auto values = Read(algorithm, fixed, nodes);
  if (!values.ok()) return values.status();
  draw.values = std::move(*values);
  draw.defaults_with_drawn = algorithms::OptionValues::Defaults(algorithm.options());
  return draw;
}

}  // namespace electsim
