// `electsim sweep`: many seeds of scenario files, each seed judged exactly as
// `run` judges it (RunResult::failed_expectations), one campaign per file.
#include <algorithm>
#include <iostream>
#include <memory>

#include "electsim/sim/rng.h"
#include "fmt/format.h"
#include "tools/electsim/campaign/finish.h"
#include "tools/electsim/campaign/seed_campaign.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/commands/flags.h"
#include "tools/electsim/export/metrics_csv.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/overrides.h"

namespace electsim::commands {
namespace {

using campaign::CampaignSubject;
using campaign::SeedVerdict;

struct SweepFlags {
  std::vector<std::string> paths;
  std::string seeds = "100";
  std::string first_seed = "1";
  const CLI::Option* first_seed_option = nullptr;  // whether --first-seed was given
  std::string shard = "1/1";
  unsigned jobs = 1;
  std::string repro_dir = ".";
  uint64_t max_repros = 10;
  std::vector<std::string> sets;
  std::string metrics_path;
  campaign::SummaryOutputs summary;
};

class SweepSubject : public CampaignSubject {
 public:
  SweepSubject(Scenario scenario, std::vector<std::string> sets)
      : scenario_(std::make_shared<const Scenario>(std::move(scenario))),
        sets_(std::move(sets)),
        label_(scenario_->name) {}

  const Scenario& scenario() const { return *scenario_; }
  // Two files of one name in one sweep: each line names its file as well.
  void LabelWithSource() { label_ = fmt::format("{} ({})", scenario_->name, scenario_->source); }
  std::string Label() const override { return label_; }
  nlohmann::json Identity() const override {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [name, value] : scenario_->options.Describe()) options[name] = value;
    return {{"command", "sweep"},
            {"scenario", scenario_->name},
            {"source", scenario_->source},
            {"algorithm", scenario_->algorithm->name()},
            {"effective_options", options},
            {"nodes", scenario_->nodes},
            {"set", sets_},
            // The scenario as run, so that shards of one path whose file
            // changed between them are not one campaign.
            {"scenario_fnv1a", fmt::format("{:016x}", sim::HashName(scenario_->document.dump()))}};
  }
  std::string FileStem() const override { return scenario_->name; }
  absl::StatusOr<std::shared_ptr<const Scenario>> ScenarioFor(uint64_t) const override { return scenario_; }
  SeedVerdict Judge(const Scenario&, const RunResult& result) const override {
    return {.failed = !result.met_expectations(),
            .reasons = result.failed_expectations,
            .findings = result.violated_checkers()};
  }
  CommandLine Reproduce(uint64_t seed) const override {
    return CommandLine().Add("run").AddPath(scenario_->source).Add("--seed", std::to_string(seed)).AddSets(sets_);
  }
  std::string VerdictText(const campaign::CampaignSummary& s) const override {
    return fmt::format("expectations met in {}/{}", s.seeds_run - s.seeds_failed, s.seeds_run);
  }

 private:
  std::shared_ptr<const Scenario> scenario_;
  std::vector<std::string> sets_;
  std::string label_;
};

absl::StatusOr<campaign::SeedPlan> PlanOf(const SweepFlags& flags) {
  auto first = campaign::ParseSeed("--first-seed", flags.first_seed);
  if (!first.ok()) return first.status();
  // A range names its own first seed; a second one could only disagree.
  if (campaign::SeedRange::IsRangeText(flags.seeds) && OptionGiven(flags.first_seed_option)) {
    return InputError(fmt::format(
        "--first-seed: --seeds {} names its own first seed; expected --seeds A..B alone, or --first-seed with a "
        "number of seeds (--seeds N)",
        flags.seeds));
  }
  auto range = campaign::SeedRange::ParseCountOrRange("--seeds", flags.seeds, *first);
  if (!range.ok()) return range.status();
  auto shard = campaign::Shard::Parse("--shard", flags.shard);
  if (!shard.ok()) return shard.status();
  return campaign::SeedPlan::Make(*range, *shard);
}

absl::StatusOr<std::vector<std::unique_ptr<SweepSubject>>> Subjects(const SweepFlags& flags) {
  auto overrides = ParseOverrides(flags.sets);
  if (!overrides.ok()) return overrides.status();
  if (auto status = RefuseOverrideOf(*overrides, "/seed", "sweep", "--seeds"); !status.ok()) return status;
  std::vector<std::unique_ptr<SweepSubject>> subjects;
  for (const std::string& path : flags.paths) {
    auto scenario = LoadScenarioFile(path, *overrides);
    if (!scenario.ok()) return scenario.status();
    subjects.push_back(std::make_unique<SweepSubject>(std::move(*scenario), flags.sets));
  }
  for (auto& subject : subjects) {
    const auto same_name = [&](const auto& other) {
      return other != subject && other->scenario().name == subject->scenario().name &&
             other->scenario().source != subject->scenario().source;
    };
    if (std::any_of(subjects.begin(), subjects.end(), same_name)) subject->LabelWithSource();
  }
  return subjects;
}

// A campaign not reached (after a signal or an error) is in the summary too,
// with no seed run: a summary names every campaign the command was given.
campaign::CampaignSummary NotReached(const SweepSubject& subject, const campaign::SeedPlan& plan,
                                     const std::string& why) {
  campaign::CampaignSummary s;
  s.label = subject.Label();
  s.identity = subject.Identity();
  s.range = plan.range;
  s.shard_count = plan.shard.count();
  s.shards = {plan.shard.index()};
  s.stopped = why;
  return s;
}

int Sweep(const SweepFlags& flags) {
  auto subjects = Subjects(flags);
  if (!subjects.ok()) return ReportError(subjects.status());
  auto plan = PlanOf(flags);
  if (!plan.ok()) return ReportError(plan.status());
  campaign::CampaignSettings settings{.plan = *plan, .loop = {.jobs = flags.jobs, .batch_per_job = 256}};
  settings.repro_dir = flags.max_repros == 0 ? "" : flags.repro_dir;
  settings.max_repros = flags.max_repros;
  settings.text = flags.summary.json_to_stdout ? &std::cerr : &std::cout;
  campaign::OutputPlan outputs(flags.paths);
  outputs.AddFile("--metrics", flags.metrics_path);
  campaign::DeclareSummaryOutputs(flags.summary, outputs);
  for (const auto& subject : *subjects) campaign::DeclareSeedFiles(*subject, settings, outputs);
  if (auto status = outputs.Check(); !status.ok()) return ReportError(status);
  std::unique_ptr<AtomicOutputFile> metrics;
  if (!flags.metrics_path.empty()) {
    auto file = AtomicOutputFile::Open(flags.metrics_path, flags.paths);
    if (!file.ok()) return ReportError(file.status());
    metrics = std::move(*file);
    metrics->Write(MetricsCsvHeader());
    settings.metrics = metrics.get();
    settings.metrics_row = MetricsCsvRow;
  }
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  CommandOutcome outcome;
  campaign::SummaryFile file{.command = "sweep"};
  absl::Status error;
  double seconds = 0;
  for (const auto& subject : *subjects) {
    if (!error.ok() || StopSignal() != 0) {
      file.campaigns.push_back(NotReached(*subject, *plan, error.ok() ? "signal" : "error"));
      continue;
    }
    campaign::CampaignRun run = campaign::RunCampaign(*subject, settings, outputs, outcome);
    if (run.loop.end == campaign::LoopEnd::kError) error = run.loop.error;
    seconds += run.seconds;
    file.campaigns.push_back(std::move(run.summary));
  }
  // The rows of the seeds that finished, even after a signal.
  if (metrics && (error.ok() || ExitStatusFor(error) != kExitBadInput)) {
    if (auto status = metrics->Commit(); status.ok()) {
      outputs.Written(flags.metrics_path);
    } else {
      outcome.CouldNotWrite(status);
    }
  }
  return campaign::FinishCampaigns(file, seconds, error, flags.summary, outputs, outcome);
}

}  // namespace

Command AddSweepCommand(CLI::App& parent) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* app = parent.add_subcommand("sweep", "run many seeds of scenarios; fail on any seed that run would fail");
  app->add_option("scenarios", flags->paths, "scenario files")->required();
  app->add_option("--seeds", flags->seeds, "how many seeds (N: from --first-seed on), or a range of seeds A..B")
      ->capture_default_str();
  flags->first_seed_option =
      app->add_option("--first-seed", flags->first_seed, "first seed of --seeds N")->capture_default_str();
  app->add_option("--shard", flags->shard, "run only shard K of N (K/N): seeds first + K-1, first + K-1 + N, ...")
      ->capture_default_str();
  AddJobsFlag(*app, flags->jobs);
  app->add_option("--repro-dir", flags->repro_dir, "where failing seeds write their repro files (\"\": none)")
      ->capture_default_str();
  app->add_option("--max-repros", flags->max_repros, "repro files per scenario, for its first failing seeds (0: none)")
      ->check(UnsignedText("a number of repro files", 0, UINT64_MAX))
      ->capture_default_str();
  app->add_flag("--json", flags->summary.json_to_stdout,
                "print the summary (as --summary writes it) on standard output; text lines go to standard error");
  app->add_option("--summary", flags->summary.summary_path, "write the summary as JSON (merge shards' with merge)");
  app->add_option("--junit", flags->summary.junit_path, "write a JUnit XML report: a test case per failing seed");
  app->add_option("--metrics", flags->metrics_path,
                  "write one CSV row per seed to FILE: verdict, election latencies, messages by class, terms");
  AddSetFlag(*app, flags->sets, "every scenario");
  return {app, [flags] { return Sweep(*flags); }};
}

}  // namespace electsim::commands
