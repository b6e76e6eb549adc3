#include "tools/electsim/export/guarantee_table.h"

#include <algorithm>

#include "checkers/checker.h"
#include "fmt/format.h"

namespace electsim {

std::string FormatGuarantees(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& options,
                             int indent) {
  const algorithms::Guarantees guarantees = algorithm.guarantees(options);
  const std::string pad(static_cast<size_t>(indent), ' ');
  size_t row_name = 0;  // the longest safety checker's name
  for (const checkers::CheckerInfo& checker : checkers::AllCheckers()) {
    if (checker.name != "liveness") row_name = std::max(row_name, checker.name.size());
  }
  std::string out = fmt::format("{}{:<{}} none", pad, "", row_name);
  for (algorithms::FaultKind kind : algorithms::AllFaultKinds()) out += fmt::format(" {}", FaultKindName(kind));
  out += "\n";
  for (const checkers::CheckerInfo& checker : checkers::AllCheckers()) {
    if (checker.name == "liveness") continue;  // not a safety invariant
    auto it = std::find_if(guarantees.begin(), guarantees.end(),
                           [&](const algorithms::Guarantee& g) { return g.invariant == checker.name; });
    out += fmt::format("{}{:<{}} {:<4}", pad, checker.name, row_name, it == guarantees.end() ? "-" : "yes");
    for (algorithms::FaultKind kind : algorithms::AllFaultKinds()) {
      const bool kept = it != guarantees.end() && it->kept_under.Has(kind);
      out += fmt::format(" {:<{}}", kept ? "yes" : "-", FaultKindName(kind).size());
    }
    // No trailing blanks.
    out.erase(out.find_last_not_of(' ') + 1);
    out += "\n";
  }
  return out;
}

namespace {

bool SameGuarantees(const algorithms::Guarantees& a, const algorithms::Guarantees& b) {
  auto covers = [](const algorithms::Guarantees& x, const algorithms::Guarantees& y) {
    return std::all_of(x.begin(), x.end(), [&](const algorithms::Guarantee& g) {
      return std::any_of(y.begin(), y.end(), [&](const algorithms::Guarantee& h) {
        return g.invariant == h.invariant && g.kept_under == h.kept_under;
      });
    });
  };
  return covers(a, b) && covers(b, a);
}

// Whether boolean `option` changes a guarantee: flipped alone, or left at its
// default while every other boolean is flipped. One that changes none (Raft's
// step_down_on_lost_vote, a matter of liveness) makes no variant: its
// tables would repeat another's.
bool MovesGuarantees(const algorithms::Algorithm& algorithm, const algorithms::OptionSpec& option,
                     const algorithms::OptionValues& defaults) {
  algorithms::OptionValues alone = defaults;
  alone.Set(option.name, option.default_value == 0);
  if (!SameGuarantees(algorithm.guarantees(alone), algorithm.guarantees(defaults))) return true;
  algorithms::OptionValues all = defaults;
  for (const algorithms::OptionSpec& other : algorithm.options()) {
    if (other.type == algorithms::OptionType::kBool) all.Set(other.name, other.default_value == 0);
  }
  algorithms::OptionValues all_but = all;
  all_but.Set(option.name, option.default_value);
  return !SameGuarantees(algorithm.guarantees(all), algorithm.guarantees(all_but));
}

}  // namespace

std::vector<GuaranteeVariant> GuaranteeVariants(const algorithms::Algorithm& algorithm) {
  const algorithms::OptionValues defaults = algorithms::OptionValues::Defaults(algorithm.options());
  std::vector<GuaranteeVariant> variants = {{"defaults", "", nlohmann::json::object(), defaults}};
  GuaranteeVariant booleans{"", "", nlohmann::json::object(), defaults};
  int boolean_count = 0;
  for (const algorithms::OptionSpec& option : algorithm.options()) {
    // A mutant is no configuration: it promises nothing (one line says so).
    if (option.name == algorithms::kBugOption && !algorithm.mutants().empty()) continue;
    if (option.type == algorithms::OptionType::kBool && !MovesGuarantees(algorithm, option, defaults)) continue;
    std::vector<std::pair<int64_t, nlohmann::json>> values;  // held, as written
    if (option.type == algorithms::OptionType::kBool)
      values.emplace_back(option.default_value == 0, option.default_value == 0);
    if (option.type == algorithms::OptionType::kChoice) {
      for (size_t i = 0; i < option.choices.size(); ++i) {
        if (static_cast<int64_t>(i) != option.default_value) values.emplace_back(i, option.choices[i]);
      }
    }
    for (const auto& [held, written] : values) {
      GuaranteeVariant variant{
          fmt::format("{} {}", option.name, written.dump()),
          written.is_boolean() && written.get<bool>()
              ? option.name
              : fmt::format("{}.{}", option.name, written.is_string() ? written.get<std::string>() : written.dump()),
          {{option.name, written}},
          defaults};
      variant.values.Set(option.name, held);
      if (option.type == algorithms::OptionType::kBool) {
        booleans.label += (booleans.label.empty() ? "" : ", ") + variant.label;
        booleans.slug += (booleans.slug.empty() ? "" : ".") + variant.slug;
        booleans.options[option.name] = written;
        booleans.values.Set(option.name, held);
        ++boolean_count;
      }
      variants.push_back(std::move(variant));
    }
  }
  if (boolean_count >= 2) variants.push_back(std::move(booleans));
  return variants;
}

namespace {

const algorithms::Guarantee* Find(const algorithms::Guarantees& guarantees, std::string_view invariant) {
  for (const algorithms::Guarantee& g : guarantees) {
    if (g.invariant == invariant) return &g;
  }
  return nullptr;
}

// "single_leader not under clock_step; stale_token not kept" ("" when equal).
std::string Difference(const algorithms::Guarantees& from, const algorithms::Guarantees& to) {
  if (to.empty() && !from.empty()) return "nothing is guaranteed";
  std::string out;
  auto add = [&out](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  for (const checkers::CheckerInfo& checker : checkers::AllCheckers()) {
    const algorithms::Guarantee* before = Find(from, checker.name);
    const algorithms::Guarantee* after = Find(to, checker.name);
    if (before == nullptr && after == nullptr) continue;
    if (after == nullptr) {
      add(fmt::format("{} not kept", checker.name));
      continue;
    }
    std::string lost, gained;
    for (algorithms::FaultKind kind : algorithms::AllFaultKinds()) {
      const bool had = before != nullptr && before->kept_under.Has(kind);
      const bool has = after->kept_under.Has(kind);
      if (had && !has) lost += fmt::format("{}{}", lost.empty() ? "" : ", ", FaultKindName(kind));
      if (has && !had) gained += fmt::format("{}{}", gained.empty() ? "" : ", ", FaultKindName(kind));
    }
    if (before == nullptr) add(fmt::format("{} kept", checker.name));
    if (!lost.empty()) add(fmt::format("{} not under {}", checker.name, lost));
    if (!gained.empty()) add(fmt::format("{} also under {}", checker.name, gained));
  }
  return out;
}

}  // namespace

std::string FormatGuaranteeChanges(const algorithms::Algorithm& algorithm, int indent) {
  const algorithms::Guarantees base = algorithm.guarantees(algorithms::OptionValues::Defaults(algorithm.options()));
  std::string out;
  const std::vector<GuaranteeVariant> variants = GuaranteeVariants(algorithm);
  for (auto it = variants.begin() + 1; it != variants.end(); ++it) {
    const algorithms::Guarantees guarantees = algorithm.guarantees(it->values);
    const std::string difference = Difference(base, guarantees);
    if (difference.empty()) continue;
    if (guarantees.empty()) {
      out += fmt::format("{:{}}with {}: {}\n", "", indent, it->label, difference);
    } else {
      out += fmt::format("{:{}}with {} ({}):\n", "", indent, it->label, difference);
      out += FormatGuarantees(algorithm, it->values, indent + 2);
    }
  }
  if (!algorithm.mutants().empty()) {
    out += fmt::format("{:{}}with any other \"bug\" (a mutant: electsim list --mutants): nothing is guaranteed\n", "",
                       indent);
  }
  return out;
}

}  // namespace electsim
