// `electsim fuzz`: scenarios generated from seeds, judged by the guarantees
// the algorithm declares for the faults in play (engine/fuzz_config.h), as a
// campaign (sharded, summarised, merged), or one seed at a time.
#include <iostream>
#include <memory>
#include <optional>

#include "fmt/format.h"
#include "tools/electsim/campaign/finish.h"
#include "tools/electsim/campaign/seed_campaign.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/engine/fuzz_config.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/duration.h"

namespace electsim::commands {
namespace {

struct FuzzFlags {
  FuzzSettings settings;
  std::string seeds, nodes, duration, faults, shard = "1/1", time_budget, guarantees_of = "options",
                                              liveness = "guarantee", seed;
  unsigned jobs = 1;
  bool stop_at_first_failure = false;
  bool emit_scenario = false;
  std::string repro_dir = ".";
  uint64_t max_repros = 10;
  uint64_t shrink_runs = 3000;
  campaign::SummaryOutputs summary;
  std::vector<std::string> merge;
  // Flags with defaults that only a campaign reads; given with --seed they
  // are refused, as the others are.
  std::vector<CLI::Option*> campaign_options;
};

class FuzzSubject : public campaign::CampaignSubject {
 public:
  explicit FuzzSubject(FuzzConfig config) : config_(std::move(config)) {}
  std::string Label() const override { return fmt::format("fuzz {}", config_.algorithm().name()); }
  nlohmann::json Identity() const override { return config_.Identity(); }
  std::string FileStem() const override { return config_.Name(); }
  absl::StatusOr<std::shared_ptr<const Scenario>> ScenarioFor(uint64_t seed) const override {
    auto scenario = config_.ScenarioFor(seed);
    if (!scenario.ok()) return scenario.status();
    return std::make_shared<const Scenario>(std::move(*scenario));
  }
  campaign::SeedVerdict Judge(const Scenario& scenario, const RunResult& result) const override {
    FuzzVerdict verdict = config_.Judge(scenario, result);
    return {.failed = !verdict.broken.empty(),
            .reasons = verdict.broken,
            .findings = verdict.findings,
            .drawn = std::move(verdict.drawn),
            .unjudged = std::move(verdict.unjudged)};
  }
  CommandLine Reproduce(uint64_t seed) const override {
    return CommandLine().Add("fuzz").AddAll(config_.Flags()).Add("--seed", std::to_string(seed));
  }
  std::string FailedWords() const override { return "BROKE a declared guarantee"; }
  std::string VerdictText(const campaign::CampaignSummary& s) const override {
    const std::string drawn = config_.settings().option_swarm
                                  ? fmt::format("; options drawn (seeds): {}", campaign::CountsText(s.options_drawn))
                                  : "";
    const std::string unjudged =
        s.unjudged.empty() ? "" : fmt::format("; left unjudged (seeds): {}", campaign::CountsText(s.unjudged));
    return fmt::format(
        "broke a declared guarantee: {} ({}); findings (not judged: undeclared for the faults in play, or "
        "timings off the defaults' proportions, or liveness in a network left faulty): {} seeds{}{}",
        s.seeds_failed, campaign::CountsText(s.failed_by), s.seeds_with_findings, unjudged, drawn);
  }
  std::optional<nlohmann::json> DocumentFor(uint64_t seed) const override {
    auto document = config_.DocumentFor(seed);
    return document.ok() ? std::optional<nlohmann::json>(std::move(*document)) : std::nullopt;
  }

 private:
  FuzzConfig config_;
};

absl::Status Bad(std::string_view flag, std::string_view expected, const std::string& got) {
  return InputError(fmt::format("{}: expected {}; got \"{}\"", flag, expected, EscapeForTerminal(got)));
}

// "N" or "MIN..MAX".
std::pair<std::string, std::string> Bounds(const std::string& text) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) return {text, text};
  return {text.substr(0, dots), text.substr(dots + 2)};
}

absl::Status ReadGeneratorFlags(FuzzFlags& flags) {
  GeneratorSettings& g = flags.settings.generator;
  if (!flags.nodes.empty()) {
    const auto [low, high] = Bounds(flags.nodes);
    auto min = campaign::ParseSeed("--nodes", low), max = campaign::ParseSeed("--nodes", high);
    // Two at least: the generator's cuts and partitions are between nodes.
    if (!min.ok() || !max.ok() || *min < 2 || *max > kMaxNodes || *max < *min) {
      return Bad("--nodes", fmt::format("N or MIN..MAX within [2, {}] (faults act between nodes)", kMaxNodes),
                 flags.nodes);
    }
    g.nodes_min = static_cast<uint32_t>(*min);
    g.nodes_max = static_cast<uint32_t>(*max);
  }
  if (!flags.duration.empty()) {
    const auto [low, high] = Bounds(flags.duration);
    auto min = ParseDuration(low), max = ParseDuration(high);
    if (!min.ok() || !max.ok() || *min < sim::TimeNs::Seconds(1) || *max < *min) {
      return Bad("--duration", fmt::format("D or MIN..MAX, durations from 1s to {}s", kMaxDurationSeconds),
                 flags.duration);
    }
    g.duration_min = *min;
    g.duration_max = *max;
  }
  if (!flags.faults.empty()) {
    const auto kinds = ParseFaultKindList(flags.faults);
    if (!kinds) {
      return Bad("--faults",
                 fmt::format("fault kinds separated by commas, of {}", FaultKindList(algorithms::FaultKinds::All())),
                 flags.faults);
    }
    g.fault_kinds = *kinds;
  }
  return absl::OkStatus();
}

absl::Status ReadJudgeFlags(FuzzFlags& flags) {
  const std::optional<GuaranteesOf> of = ParseGuaranteesOf(flags.guarantees_of);
  if (!of) return Bad("--guarantees-of", "options, defaults or reference", flags.guarantees_of);
  flags.settings.guarantees_of = *of;
  if (flags.liveness == "finding") {
    flags.settings.liveness_guaranteed = false;
  } else if (flags.liveness != "guarantee") {
    return Bad("--liveness", "guarantee or finding", flags.liveness);
  }
  if (flags.settings.algorithm.empty()) return InputError("fuzz: expected --algorithm NAME (or --merge)");
  if (flags.emit_scenario && flags.seed.empty()) return InputError("--emit-scenario: expected --seed N too");
  if (!flags.seed.empty()) {
    // One seed is no campaign: what only a campaign writes or decides is refused, not ignored.
    for (const auto& [flag, given] : {std::pair{"--seeds", !flags.seeds.empty()},
                                      {"--summary", !flags.summary.summary_path.empty()},
                                      {"--junit", !flags.summary.junit_path.empty()},
                                      {"--shard", flags.shard != "1/1"},
                                      {"--time-budget", !flags.time_budget.empty()},
                                      {"--stop-at-first-failure", flags.stop_at_first_failure}}) {
      if (given) return InputError(fmt::format("--seed: runs one seed alone; expected no {} with it", flag));
    }
    for (const CLI::Option* option : flags.campaign_options) {
      if (option->count() > 0) {
        return InputError(fmt::format(
            "--seed: runs one seed alone and writes no file (a failing one's repro comes from a campaign of it, "
            "--seeds N..N); expected no {} with it",
            option->get_name()));
      }
    }
  }
  return absl::OkStatus();
}

// The seeds: --seeds A..B or N (1..N), or 1..1000, or every seed a --time-budget reaches.
absl::StatusOr<campaign::SeedPlan> PlanOf(const FuzzFlags& flags, std::optional<double>& budget_s) {
  auto range = campaign::SeedRange::Parse("--seeds", "1..1000");
  if (!flags.seeds.empty()) {
    range = campaign::SeedRange::ParseCountOrRange("--seeds", flags.seeds, 1);
  } else if (!flags.time_budget.empty()) {
    range = campaign::SeedRange::Parse("--seeds", fmt::format("1..{}", UINT64_MAX - 1));
  }
  if (!range.ok()) return range.status();
  if (!flags.time_budget.empty()) {
    auto budget = ParseDuration(flags.time_budget);
    if (!budget.ok() || budget->ns() <= 0)
      return Bad("--time-budget", fmt::format("a positive duration up to {}s, such as 60s", kMaxDurationSeconds),
                 flags.time_budget);
    budget_s = static_cast<double>(budget->ns()) / 1e9;
  }
  auto shard = campaign::Shard::Parse("--shard", flags.shard);
  if (!shard.ok()) return shard.status();
  return campaign::SeedPlan::Make(*range, *shard);
}

// `fuzz --seed N`: the one seed, judged and printed as `run` prints a run.
int OneSeed(const FuzzConfig& config, uint64_t seed) {
  auto scenario = config.ScenarioFor(seed);
  if (!scenario.ok()) return ReportError(scenario.status());
  HandleTerminatingSignals(SignalResponse::kExitNow);
  auto result = RunScenario(*scenario, seed);
  if (!result.ok()) return ReportError(result.status());
  const FuzzVerdict verdict = config.Judge(*scenario, *result);
  CommandOutcome outcome;
  std::cout << FormatSummary(*scenario, *result);
  if (verdict.broken.empty()) {
    std::cout << "fuzz verdict: every declared guarantee kept\n";
  } else {
    std::cout << fmt::format("fuzz verdict: BROKE a declared guarantee: {}\n", fmt::join(verdict.broken, "; "));
    outcome.Failed();
  }
  return outcome.Finish();
}

int EmitScenario(const FuzzConfig& config, uint64_t seed) {
  auto document = config.DocumentFor(seed);
  if (!document.ok()) return ReportError(document.status());
  // What is printed must load: the generator's own check.
  if (auto scenario = config.ScenarioFor(seed); !scenario.ok()) return ReportError(scenario.status());
  std::cout << document->dump(2) << "\n";
  return CommandOutcome().Finish();
}

int Campaign(const FuzzConfig& config, const FuzzFlags& flags, const campaign::SeedPlan& plan,
             std::optional<double> budget_s) {
  const FuzzSubject subject(config);
  campaign::CampaignSettings settings{.plan = plan, .loop = {.jobs = flags.jobs, .time_budget_s = budget_s}};
  settings.stop_at_first_failure = flags.stop_at_first_failure;
  settings.repro_dir = flags.max_repros == 0 ? "" : flags.repro_dir;
  settings.max_repros = flags.max_repros;
  settings.timelines = true;
  settings.shrink_runs = flags.shrink_runs;
  campaign::OutputPlan outputs({});
  campaign::DeclareSummaryOutputs(flags.summary, outputs);
  campaign::DeclareSeedFiles(subject, settings, outputs);
  if (auto status = outputs.Check(); !status.ok()) return ReportError(status);
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  CommandOutcome outcome;
  campaign::CampaignRun run = campaign::RunCampaign(subject, settings, outputs, outcome);
  const absl::Status error = run.loop.end == campaign::LoopEnd::kError ? run.loop.error : absl::OkStatus();
  campaign::SummaryFile file{.command = "fuzz", .campaigns = {std::move(run.summary)}};
  return campaign::FinishCampaigns(file, run.seconds, error, flags.summary, outputs, outcome);
}

int Fuzz(FuzzFlags& flags) {
  if (!flags.merge.empty()) return MergeCommand(flags.merge, flags.summary, /*allow_incomplete=*/false);
  if (auto status = ReadGeneratorFlags(flags); !status.ok()) return ReportError(status);
  if (auto status = ReadJudgeFlags(flags); !status.ok()) return ReportError(status);
  std::optional<double> budget_s;
  std::optional<uint64_t> seed;
  if (!flags.seed.empty()) {
    auto parsed = campaign::ParseSeed("--seed", flags.seed);
    if (!parsed.ok()) return ReportError(parsed.status());
    seed = *parsed;
  }
  auto plan = PlanOf(flags, budget_s);
  if (!plan.ok()) return ReportError(plan.status());
  auto config = FuzzConfig::Make(flags.settings, seed.value_or(plan->SeedAt(0)));
  if (!config.ok()) return ReportError(config.status());
  if (!flags.emit_scenario) {
    for (const auto& note : {config->TimingNote(), config->NetworkNote(), config->FencingNote()}) {
      if (note) std::cerr << *note << "\n";
    }
  }
  if (seed) return flags.emit_scenario ? EmitScenario(*config, *seed) : OneSeed(*config, *seed);
  return Campaign(*config, flags, *plan, budget_s);
}

void AddGeneratorFlags(CLI::App& app, FuzzFlags& flags) {
  app.add_option("--algorithm", flags.settings.algorithm, "algorithm to fuzz");
  app.add_option("--option", flags.settings.options, "algorithm option NAME=VALUE (repeatable)");
  app.add_option(
      "--set", flags.settings.sets,
      "PATH=VALUE: change every generated scenario as run --set does (repeatable; not the values --algorithm, "
      "--option, --nodes, --duration and --fencing set)");
  app.add_flag("--fencing", flags.settings.generator.fencing, "the resource checks fencing tokens");
  app.add_option("--nodes", flags.nodes, "cluster size N or MIN..MAX (default 3..7)");
  app.add_option("--duration", flags.duration, "simulated run length D or MIN..MAX (default 10s..30s)");
  app.add_option("--faults", flags.faults,
                 "fault kinds to draw from, e.g. loss,crash (default: all; each seed turns on a random subset)");
  app.add_flag("--no-option-swarm{false}", flags.settings.option_swarm,
               "every seed runs the options given and the defaults (by default each seed draws some of the options "
               "not given, and is judged by the guarantee table of what it drew)");
  app.add_option("--guarantees-of", flags.guarantees_of,
                 "judge by the guarantees of the options the seed ran (options); of the algorithm's defaults "
                 "(with the options the swarm drew) and a fencing resource (defaults: to show that a deliberate "
                 "bug breaks them); or of the options the seed ran with \"bug\" at none (reference: what a mutant "
                 "must break)")
      ->capture_default_str();
  app.add_option("--liveness", flags.liveness,
                 "a run with no stable leader once its faults are over: a broken guarantee (guarantee) or a "
                 "finding (finding: for Bully and Ring)")
      ->capture_default_str();
}

void AddCampaignFlags(CLI::App& app, FuzzFlags& flags) {
  app.add_option("--seeds", flags.seeds, "seed range A..B, or a number of seeds N (1..N); default 1..1000");
  app.add_option("--time-budget", flags.time_budget, "stop starting seeds after this long, e.g. 60s");
  flags.campaign_options.push_back(AddJobsFlag(app, flags.jobs));
  app.add_option("--shard", flags.shard, "run only shard K of N (K/N), to split a run across processes or machines");
  app.add_flag("--stop-at-first-failure", flags.stop_at_first_failure,
               "stop at the first seed (in seed order) that breaks a guarantee");
  app.add_option("--summary", flags.summary.summary_path, "write a JSON summary (merge shards' with --merge)");
  app.add_option("--junit", flags.summary.junit_path, "write a JUnit XML report: one test case per failing seed");
  flags.campaign_options.push_back(
      app.add_option("--repro-dir", flags.repro_dir, "where failing seeds write repro files (\"\": none)")
          ->capture_default_str());
  flags.campaign_options.push_back(
      app.add_option("--max-repros", flags.max_repros, "repro files for the first failing seeds")
          ->check(UnsignedText("a number of repro files", 0, UINT64_MAX))
          ->capture_default_str());
  flags.campaign_options.push_back(
      app.add_option("--shrink-runs", flags.shrink_runs, "runs spent shrinking each repro (0: do not shrink)")
          ->check(UnsignedText("a number of runs", 0, UINT64_MAX))
          ->capture_default_str());
  app.add_option("--seed", flags.seed, "run this one seed alone, printing its verdict and trace hash");
  app.add_flag("--emit-scenario", flags.emit_scenario, "with --seed: print its scenario instead of running it");
  app.add_option("--merge", flags.merge, "combine these shard summaries (into --summary, --junit), as merge does");
}

}  // namespace

Command AddFuzzCommand(CLI::App& parent) {
  auto flags = std::make_shared<FuzzFlags>();
  CLI::App* app = parent.add_subcommand("fuzz", "run generated scenarios, fail on a broken declared guarantee");
  AddGeneratorFlags(*app, *flags);
  AddCampaignFlags(*app, *flags);
  return {app, [flags, app] {
            // --merge runs nothing: a flag of a run given with it would be ignored.
            for (const CLI::Option* option : app->get_options()) {
              const std::string name = option->get_name();
              if (flags->merge.empty() || option->count() == 0 || name == "--merge" || name == "--summary" ||
                  name == "--junit") {
                continue;
              }
              return ReportError(InputError(
                  fmt::format("{}: --merge combines summaries and runs nothing; expected no {} with it", name, name)));
            }
            return Fuzz(*flags);
          }};
}

}  // namespace electsim::commands
