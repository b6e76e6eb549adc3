#include "electsim/algorithms/options.h"

#include <cassert>
#include <cstdlib>
#include <stdexcept>

#include "fmt/format.h"
#include "sim/format.h"
#include "sim/same_bytes.h"

namespace algorithms {

std::string_view OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kDuration: return "duration";
    case OptionType::kInt: return "integer";
    case OptionType::kBool: return "boolean";
    case OptionType::kRatio: return "ratio";
    case OptionType::kChoice: return "choice";
    case OptionType::kIntList: return "integer list";
  }
  return "?";
}

OptionSpec OptionSpec::Duration(std::string name, sim::TimeNs default_ns, std::string help, sim::TimeNs min_ns) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kDuration;
  s.help = std::move(help);
  s.default_value = default_ns.ns();
  s.min = min_ns.ns();
  return s;
}

OptionSpec OptionSpec::Int(std::string name, int64_t default_value, int64_t min, int64_t max, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kInt;
  s.help = std::move(help);
  s.default_value = default_value;
  s.min = min;
  s.max = max;
  return s;
}

OptionSpec OptionSpec::Bool(std::string name, bool default_value, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kBool;
  s.help = std::move(help);
  s.default_value = default_value ? 1 : 0;
  s.min = 0;
  s.max = 1;
  return s;
}

OptionSpec OptionSpec::Ratio(std::string name, int64_t default_ppm, int64_t min_ppm, int64_t max_ppm,
                             std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kRatio;
  s.help = std::move(help);
  s.default_value = default_ppm;
  s.min = min_ppm;
  s.max = max_ppm;
  return s;
}

OptionSpec OptionSpec::Choice(std::string name, std::vector<std::string> choices, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kChoice;
  s.help = std::move(help);
  s.choices = std::move(choices);
  s.default_value = 0;
  s.min = 0;
  s.max = static_cast<int64_t>(s.choices.size()) - 1;
  return s;
}

OptionSpec OptionSpec::IntList(std::string name, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::kIntList;
  s.help = std::move(help);
  return s;
}

namespace {
std::string RatioText(int64_t ppm) { return fmt::format("{}", static_cast<double>(ppm) / 1e6); }
}  // namespace

std::string OptionSpec::DefaultText() const {
  switch (type) {
    case OptionType::kDuration: return sim::FormatDuration(sim::TimeNs(default_value));
    case OptionType::kInt: return fmt::format("{}", default_value);
    case OptionType::kBool: return default_value ? "true" : "false";
    case OptionType::kRatio: return RatioText(default_value);
    case OptionType::kChoice: return fmt::format("\"{}\"", choices.at(default_value));
    case OptionType::kIntList: return fmt::format("[{}]", fmt::join(default_list, ", "));
  }
  return "";
}

std::string OptionSpec::RangeText() const {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (type) {
    case OptionType::kDuration:
      if (max == kMax) return fmt::format(">= {}", sim::FormatDuration(sim::TimeNs(min)));
      return fmt::format("{} .. {}", sim::FormatDuration(sim::TimeNs(min)), sim::FormatDuration(sim::TimeNs(max)));
    case OptionType::kInt:
      if (min == kMin && max == kMax) return "";
      if (max == kMax) return fmt::format(">= {}", min);
      return fmt::format("{} .. {}", min, max);
    case OptionType::kRatio:
      // One part per million is the smallest ratio held: show it as open at 0.
      if (min == 1) return fmt::format("in (0, {}]", RatioText(max));
      return fmt::format("in [{}, {}]", RatioText(min), RatioText(max));
    case OptionType::kChoice: return fmt::format("one of \"{}\"", fmt::join(choices, "\", \""));
    case OptionType::kBool:
    case OptionType::kIntList: return "";
  }
  return "";
}

OptionValues OptionValues::Defaults(const std::vector<OptionSpec>& specs) {
  OptionValues values;
  for (const OptionSpec& spec : specs) {
    values.specs_[spec.name] = &spec;
    if (spec.type == OptionType::kIntList) {
      values.lists_[spec.name] = spec.default_list;
    } else {
      values.ints_.push_back({spec.name, spec.default_value});
    }
  }
  return values;
}

const OptionValues::IntValue* OptionValues::FindInt(std::string_view name) const {
  for (const IntValue& held : ints_) {
    if (sim::SameBytes(held.name, name)) return &held;
  }
  return nullptr;
}

int64_t OptionValues::Int(std::string_view name) const {
  const IntValue* held = FindInt(name);
  if (held == nullptr) throw std::logic_error(fmt::format("option '{}' is not declared", name));
  return held->value;
}

const std::string& OptionValues::Choice(std::string_view name) const {
  auto spec = specs_.find(name);
  if (spec == specs_.end()) throw std::logic_error(fmt::format("option '{}' is not declared", name));
  return spec->second->choices.at(Int(name));
}

const std::vector<int64_t>& OptionValues::List(std::string_view name) const {
  auto it = lists_.find(name);
  if (it == lists_.end()) throw std::logic_error(fmt::format("list option '{}' is not declared", name));
  return it->second;
}

void OptionValues::Set(std::string_view name, int64_t value) {
  auto* held = const_cast<IntValue*>(FindInt(name));
  if (held == nullptr) throw std::logic_error(fmt::format("option '{}' is not declared", name));
  // The spec's range is what every algorithm relies on (a zero interval would
  // spin a timer at one instant), so code that sets values keeps it too.
  const OptionSpec& spec = *specs_.find(name)->second;
  if (value < spec.min || value > spec.max) {
    throw std::out_of_range(
        fmt::format("option '{}': held value {} is outside its range ({})", name, value, spec.RangeText()));
  }
  held->value = value;
}

void OptionValues::SetList(std::string_view name, std::vector<int64_t> values) {
  auto it = lists_.find(name);
  if (it == lists_.end()) throw std::logic_error(fmt::format("list option '{}' is not declared", name));
  it->second = std::move(values);
}

std::map<std::string, std::string> OptionValues::Describe() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, spec] : specs_) {
    OptionSpec shown = *spec;
    if (spec->type == OptionType::kIntList) {
      shown.default_list = lists_.find(name)->second;
    } else {
      shown.default_value = FindInt(name)->value;
    }
    out[name] = shown.DefaultText();
  }
  return out;
}

absl::Status RequireShorter(const OptionValues& options, std::string_view shorter, std::string_view longer,
                            std::string_view consequence) {
  return RequireShorterThan(options, shorter, longer, options.Duration(longer), consequence);
}

absl::Status RequireShorterThan(const OptionValues& options, std::string_view shorter, std::string_view bound_name,
                                sim::TimeNs bound, std::string_view consequence) {
  const sim::TimeNs value = options.Duration(shorter);
  if (value < bound) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format("option {} ({}) must be shorter than {} ({}){}{}", shorter,
                                                sim::FormatDuration(value), bound_name, sim::FormatDuration(bound),
                                                consequence.empty() ? "" : ": ", consequence));
}

}  // namespace algorithms
