#include "tools/electsim/engine/fuzz_config.h"

#include <algorithm>
#include <optional>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/json_document.h"

namespace electsim {
namespace {

using nlohmann::json;

// What a fuzz flag decides, and so a --set must not: the flag to use instead.
constexpr std::pair<std::string_view, std::string_view> kOwnedByFlags[] = {
    {"/algorithm", "--algorithm"},      {"/algorithm/name", "--algorithm"}, {"/nodes", "--nodes"},
    {"/duration", "--duration"},        {"/seed", "--seed or --seeds"},     {"/resource", "--fencing"},
    {"/resource/fencing", "--fencing"},
};

// What the generator and the judge decide whole: a --set within them would
// run faults, an end or a verdict that the labels and identity do not name.
constexpr std::pair<std::string_view, std::string_view> kDecidedWhole[] = {
    {"/faults", "--faults (the fault kinds it draws from)"},
    {"/stop", "--duration"},
    {"/expect", "the declared guarantees (--guarantees-of)"},
};

absl::Status CheckNotOwned(const std::vector<Override>& overrides, const json& given_options) {
  for (const auto& [pointer, flag] : kOwnedByFlags) {
    if (auto status = RefuseOverrideOf(overrides, pointer, "fuzz", flag); !status.ok()) return status;
  }
  for (const auto& [pointer, decided_by] : kDecidedWhole) {
    if (auto status = RefuseOverrideWithin(overrides, pointer, "fuzz", decided_by); !status.ok()) return status;
  }
  for (const auto& [name, value] : given_options.items()) {
    if (auto status = RefuseOverrideOf(overrides, "/algorithm/options/" + name, "fuzz", "--option " + name);
        !status.ok()) {
      return status;
    }
  }
  // The options object whole would replace what the swarm draws, while the
  // description and the judge still went by the draw.
  for (const Override& o : overrides) {
    if (o.json_pointer != "/algorithm/options") continue;
    return InputError(
        fmt::format("--set {}: replaces every option, which fuzz draws where not given; expected one option per flag "
                    "(--option NAME=VALUE or --set algorithm.options.NAME=VALUE)",
                    EscapeForTerminal(o.flag)));
  }
  return absl::OkStatus();
}

absl::StatusOr<const algorithms::Algorithm*> FindNamed(const std::string& name) {
  std::string names;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", algorithm->name());
    if (algorithm->name() == name) return algorithm;
  }
  return InputError(fmt::format("--algorithm: expected one of {}; got \"{}\"", names, EscapeForTerminal(name)));
}

// true, 3, 0.5 as JSON; 150ms, vote_twice as strings.
absl::StatusOr<json> OptionsJson(const std::vector<std::string>& pairs) {
  json options = json::object();
  for (const std::string& pair : pairs) {
    const size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) {
      return InputError(fmt::format("--option: expected NAME=VALUE; got \"{}\"", EscapeForTerminal(pair)));
    }
    json value = json::parse(pair.substr(equals + 1), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = pair.substr(equals + 1);
    options[pair.substr(0, equals)] = value;
  }
  return options;
}

json OptionValuesJson(const algorithms::OptionValues& values) {
  json out = json::object();
  for (const auto& [name, value] : values.Describe()) out[name] = value;
  return out;
}

}  // namespace

absl::StatusOr<FuzzConfig> FuzzConfig::Make(const FuzzSettings& settings, uint64_t first_seed) {
  FuzzConfig config;
  config.settings_ = settings;
  auto algorithm = FindNamed(settings.algorithm);
  if (!algorithm.ok()) return algorithm.status();
  config.algorithm_ = *algorithm;
  auto options = OptionsJson(settings.options);
  if (!options.ok()) return options.status();
  config.options_ = *options;
  // The options are checked as any scenario's are, by the loader.
  const json probe = {{"nodes", settings.generator.nodes_min},
                      {"duration", "1s"},
                      {"algorithm", {{"name", config.algorithm_->name()}, {"options", config.options_}}}};
  auto scenario = ParseScenarioJson(probe, "--option");
  if (!scenario.ok()) return scenario.status();
  config.values_ = scenario->options;
  auto overrides = ParseOverrides(settings.sets);
  if (!overrides.ok()) return overrides.status();
  if (auto status = CheckNotOwned(*overrides, config.options_); !status.ok()) return status;
  config.overrides_ = std::move(*overrides);
  config.fixed_options_ = config.options_;
  constexpr std::string_view kOptionsPointer = "/algorithm/options/";
  for (const Override& o : config.overrides_) {
    if (o.json_pointer.starts_with(kOptionsPointer)) {
      config.fixed_options_[o.json_pointer.substr(kOptionsPointer.size())] = o.value;
    }
  }
  // --set is checked against the first seed's document before any run (a
  // later seed whose document lacks a --set path stops with the same message).
  auto first = config.ScenarioFor(first_seed);
  if (!first.ok()) return first.status();
  if (!config.overrides_.empty()) config.network_once_over_ = NetworkFaultsOnceOver(*first);
  config.first_seed_ = first_seed;
  auto unswarmed = config.DocumentFor(first_seed, /*option_swarm=*/false);
  if (!unswarmed.ok()) return unswarmed.status();
  auto effective = ParseScenarioJson(std::move(*unswarmed), "fuzz");
  if (!effective.ok()) return effective.status();
  config.effective_values_ = effective->options;
  return config;
}

absl::StatusOr<OptionDraw> FuzzConfig::Draw(uint64_t seed) const {
  return DrawOptions(*algorithm_, fixed_options_, seed, settings_.generator.nodes_min);
}

std::string FuzzConfig::Name() const { return fmt::format("fuzz-{}", algorithm_->name()); }

absl::StatusOr<json> FuzzConfig::DocumentFor(uint64_t seed, bool option_swarm) const {
  json document;
  if (option_swarm) {
    auto draw = Draw(seed);
    if (!draw.ok()) return draw.status();
    // The --option values stay where they were given; the drawn ones join them.
    json options = options_;
    for (const auto& [name, value] : draw->options.items()) {
      if (!fixed_options_.contains(name)) options[name] = value;
    }
    document = GenerateScenario(*algorithm_, options, draw->values, seed, settings_.generator);
    if (!draw->drawn.empty()) {
      document["description"] = fmt::format("{} Options drawn: {}.", document["description"].get<std::string>(),
                                            fmt::join(draw->drawn, ", "));
    }
  } else {
    document = GenerateScenario(*algorithm_, options_, values_, seed, settings_.generator);
  }
  if (overrides_.empty()) return document;
  if (auto status = ApplyOverrides(document, overrides_); !status.ok()) {
    return InputError(fmt::format("fuzz {} seed {}: {}", algorithm_->name(), seed, std::string(status.message())));
  }
  return document;
}

absl::StatusOr<Scenario> FuzzConfig::ScenarioFor(uint64_t seed) const {
  auto document = DocumentFor(seed);
  if (!document.ok()) return document.status();
  // The document is the generator's own unless --set changed it.
  const std::string source = fmt::format("fuzz {} seed {}", algorithm_->name(), seed);
  auto scenario = overrides_.empty() ? ParseGeneratedScenarioJson(std::move(*document), source)
                                     : ParseScenarioJson(std::move(*document), source);
  if (!scenario.ok() && !overrides_.empty()) {
    std::string flags;
    for (const Override& o : overrides_) flags += fmt::format("{}--set {}", flags.empty() ? "" : " ", o.flag);
    return InputError(fmt::format("{}: {}", EscapeForTerminal(flags), std::string(scenario.status().message())));
  }
  if (scenario.ok()) {
    for (const Override& o : overrides_) scenario->sets.push_back(o.flag);
  }
  return scenario;
}

// Whether the liveness window is at least two of the algorithm's detection
// timeouts: a failover takes one to notice, and a split vote another. A
// short --duration leaves less (1s: 250 ms against Raft's 300 ms), and a
// reference that needs its timeout would be judged broken for it.
namespace {
bool LivenessWindowFits(const Scenario& scenario) {
  const std::optional<algorithms::Algorithm::BenchTiming> timing = scenario.algorithm->bench_timing();
  if (!timing) return true;
  return scenario.liveness_within.ns() >= 2 * scenario.options.Duration(timing->detection_option).ns();
}
}  // namespace

FuzzVerdict FuzzConfig::Judge(const Scenario& scenario, const RunResult& result) const {
  std::optional<OptionDraw> draw;
  if (settings_.option_swarm) {
    if (auto drawn = Draw(scenario.seed); drawn.ok()) draw = std::move(*drawn);
  }
  // Judged by the defaults: by the defaults with the swarm's draws on them.
  const bool defaults = settings_.guarantees_of == GuaranteesOf::kDefaults;
  // Liveness only where the timings, drawn or given, keep the defaults'
  // proportions, and the window leaves room for a failover.
  const bool timing_kept = (!draw || draw->timing_kept) && KeepsTimingProportions(*algorithm_, scenario.options);
  // And only in a network the faults leave calm: liveness is promised once
  // they are over, not under weather that lasts (a --set can make it so).
  const bool calm_after = NetworkFaultsOnceOver(scenario) == algorithms::FaultKinds();
  const bool window_fits = LivenessWindowFits(scenario);
  const algorithms::OptionValues* defaults_given = draw && defaults ? &draw->defaults_with_drawn : nullptr;
  std::vector<std::string> judged =
      JudgedInvariants(scenario, settings_.guarantees_of, settings_.liveness_guaranteed, defaults_given);
  FuzzVerdict verdict;
  // Each left unjudged is counted with its reason, so that a campaign that
  // judged liveness in none of its seeds says so.
  auto leave = [&](const std::string& invariant, const char* why) {
    if (std::erase(judged, invariant) > 0) verdict.unjudged.push_back(fmt::format("{} ({})", invariant, why));
  };
  if (!timing_kept) {
    leave("liveness", "timings");
  } else if (!calm_after) {
    leave("liveness", "network");
  } else if (!window_fits) {
    leave("liveness", "window");
  }
  // Disruption rests on timing as liveness does: a heartbeat nearly as long
  // as the election timeout lets the base latency's jitter alone time a
  // follower out while the leader is heard.
  if (!timing_kept) leave("disruption", "timings");
  if (draw) verdict.drawn = draw->counted;
  for (const std::string& fired : result.violated_checkers()) {
    (std::binary_search(judged.begin(), judged.end(), fired) ? verdict.broken : verdict.findings).push_back(fired);
  }
  return verdict;
}

std::optional<std::string> FuzzConfig::TimingNote() const {
  if (KeepsTimingProportions(*algorithm_, effective_values_)) return std::nullopt;
  return fmt::format(
      "note: the timings given ({}) leave the proportions between the defaults, which the guarantees of "
      "liveness and disruption assume: in a seed whose timings leave them, those count as findings, not as "
      "broken guarantees",
      EscapeForTerminal(fmt::format("{}", fmt::join(TimingOptionsChanged(*algorithm_, effective_values_), ", "))));
}

std::optional<std::string> FuzzConfig::NetworkNote() const {
  if (network_once_over_ == algorithms::FaultKinds()) return std::nullopt;
  return fmt::format(
      "note: the --set given leaves the network inflicting {} once the faults are over (on seed {}'s "
      "scenario); liveness is promised once they are over in a calm network, so in a seed whose network "
      "stays so, a run with no stable leader counts as a finding, not as a broken guarantee",
      FaultKindList(network_once_over_), first_seed_);
}

std::optional<std::string> FuzzConfig::FencingNote() const {
  if (settings_.guarantees_of != GuaranteesOf::kDefaults || settings_.generator.fencing) return std::nullopt;
  return std::string(
      "note: --guarantees-of defaults judges by the defaults' guarantees against a fencing resource, and this "
      "campaign's resource does not fence (no --fencing): a stale write it accepts breaks stale_token whatever "
      "the algorithm does; add --fencing to judge the algorithm alone");
}

std::vector<std::string> FuzzConfig::Flags() const {
  std::vector<std::string> flags = {"--algorithm", std::string(algorithm_->name())};
  for (const std::string& pair : settings_.options) flags.insert(flags.end(), {"--option", pair});
  const GeneratorSettings defaults;
  const GeneratorSettings& g = settings_.generator;
  if (g.fencing) flags.push_back("--fencing");
  if (g.nodes_min != defaults.nodes_min || g.nodes_max != defaults.nodes_max) {
    flags.insert(flags.end(), {"--nodes", fmt::format("{}..{}", g.nodes_min, g.nodes_max)});
  }
  if (g.duration_min != defaults.duration_min || g.duration_max != defaults.duration_max) {
    flags.insert(flags.end(), {"--duration", fmt::format("{}..{}", sim::FormatDuration(g.duration_min),
                                                         sim::FormatDuration(g.duration_max))});
  }
  if (g.fault_kinds != defaults.fault_kinds) flags.insert(flags.end(), {"--faults", FaultKindList(g.fault_kinds)});
  for (const std::string& set : settings_.sets) flags.insert(flags.end(), {"--set", set});
  if (settings_.guarantees_of != GuaranteesOf::kOptions) {
    flags.insert(flags.end(), {"--guarantees-of", std::string(GuaranteesOfName(settings_.guarantees_of))});
  }
  if (!settings_.liveness_guaranteed) flags.insert(flags.end(), {"--liveness", "finding"});
  if (!settings_.option_swarm) flags.push_back("--no-option-swarm");
  return flags;
}

json FuzzConfig::Identity() const {
  const GeneratorSettings& g = settings_.generator;
  return {{"command", "fuzz"},
          {"algorithm", algorithm_->name()},
          {"options", options_},
          {"effective_options", OptionValuesJson(effective_values_)},
          {"set", settings_.sets},
          {"guarantees_of", GuaranteesOfName(settings_.guarantees_of)},
          {"fencing", g.fencing},
          {"liveness", settings_.liveness_guaranteed ? "guarantee" : "finding"},
          {"nodes", {g.nodes_min, g.nodes_max}},
          {"duration", {sim::FormatDuration(g.duration_min), sim::FormatDuration(g.duration_max)}},
          {"faults", FaultKindList(g.fault_kinds)},
          {"option_swarm", settings_.option_swarm ? json(SwarmedOptions(*algorithm_, fixed_options_)) : json(false)},
          {"generator_version", kGeneratorVersion}};
}

}  // namespace electsim
