#include "tools/electsim/campaign/seed_campaign.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <mutex>

#include "fmt/format.h"
#include "sim/format.h"
#include "sim/trace.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/engine/shrink.h"
#include "tools/electsim/export/html_timeline.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"

namespace electsim::campaign {
namespace {

// What a worker keeps of one seed's run until it is folded: the verdict and
// the checkers that fired; for a failing seed, what its report and repro
// need (without metrics and notes, which can be large).
struct SeedOutcome {
  SeedVerdict verdict;
  std::vector<std::string> violated;
  std::shared_ptr<const Scenario> scenario;  // failing seeds only
  std::optional<RunResult> failure;
  std::string metrics_row;
};

// What a failing seed's repro names as having made it fail: the judge's
// reasons where they are checkers (fuzz's broken guarantees), else the
// violations the scenario did not expect.
std::vector<std::string> FailedBy(const Scenario& scenario, const SeedOutcome& out, const RunResult& result) {
  std::vector<std::string> failed_by;
  for (const std::string& reason : out.verdict.reasons) {
    if (std::find(out.violated.begin(), out.violated.end(), reason) != out.violated.end()) failed_by.push_back(reason);
  }
  return failed_by.empty() ? UnexpectedViolations(scenario, result) : failed_by;
}

// "FILE seed N: ..." for an error of one seed (the runner names the file).
absl::Status WithSeed(const absl::Status& error, const std::string& source, uint64_t seed) {
  if (absl::IsCancelled(error)) return error;
  std::string message(error.message());
  if (const std::string named = source + ": "; message.starts_with(named)) message.erase(0, named.size());
  // A generated scenario's source names its seed already ("fuzz raft seed 7").
  const std::string seeded = fmt::format(" seed {}", seed);
  if (source.ends_with(seeded)) return absl::Status(error.code(), fmt::format("{}: {}", source, message));
  return absl::Status(error.code(), fmt::format("{}{}: {}", source, seeded, message));
}

class CampaignRunner {
 public:
  CampaignRunner(const CampaignSubject& subject, const CampaignSettings& settings, OutputPlan& plan,
                 CommandOutcome& outcome)
      : subject_(subject),
        settings_(settings),
        plan_(plan),
        outcome_(outcome),
        text_(settings.text != nullptr ? *settings.text : std::cout),
        progress_(subject.Label(), "seeds", settings.loop.time_budget_s ? 0 : settings.plan.size()),
        loop_(settings.loop, settings.progress ? &progress_ : nullptr) {}

  CampaignRun Run() {
    CampaignRun run;
    CampaignSummary& s = run.summary;
    s.label = subject_.Label();
    s.identity = subject_.Identity();
    s.range = settings_.plan.range;
    s.shard_count = settings_.plan.shard.count();
    s.shards = {settings_.plan.shard.index()};
    summary_ = &s;
    UnitCalls<SeedOutcome> calls;
    calls.run = [this](uint64_t i) { return RunSeed(settings_.plan.SeedAt(i)); };
    calls.fold = [this](uint64_t i, SeedOutcome& out) { return Fold(settings_.plan.SeedAt(i), out); };
    calls.failed = [](const SeedOutcome& out) { return out.verdict.failed; };
    calls.stop_at_failure = settings_.stop_at_first_failure;
    run.loop = loop_.Run(settings_.plan.size(), calls);
    progress_.Clear();
    if (run.loop.end == LoopEnd::kError) {
      s.errors.push_back({settings_.plan.SeedAt(run.loop.error_unit), std::string(run.loop.error.message())});
    }
    s.stopped = StoppedText(run.loop);
    run.seconds = progress_.ElapsedSeconds();
    text_ << LastLine(run) << std::flush;
    return run;
  }

 private:
  absl::StatusOr<SeedOutcome> RunSeed(uint64_t seed) {
    auto scenario = subject_.ScenarioFor(seed);
    if (!scenario.ok()) return scenario.status();
    std::unique_ptr<ScenarioRunner> runner = TakeRunner(*scenario);
    auto result = runner->Run(seed);
    GiveBack(std::move(runner));
    if (!result.ok()) return WithSeed(result.status(), (*scenario)->source, seed);
    SeedOutcome out;
    out.verdict = subject_.Judge(**scenario, *result);
    out.violated = result->violated_checkers();
    if (settings_.metrics != nullptr) out.metrics_row = settings_.metrics_row(subject_.Label(), **scenario, *result);
    if (out.verdict.failed) {
      result->metrics = {};
      result->notes = {};
      out.failure = std::move(*result);
      out.scenario = std::move(*scenario);
    }
    return out;
  }

  // A runner of `scenario`: an idle one that ran it before (most subjects
  // run one scenario under every seed), or a new one.
  std::unique_ptr<ScenarioRunner> TakeRunner(const std::shared_ptr<const Scenario>& scenario) {
    {
      std::lock_guard<std::mutex> lock(runners_mutex_);
      for (auto it = idle_runners_.begin(); it != idle_runners_.end(); ++it) {
        if ((*it)->scenario() != scenario) continue;
        std::unique_ptr<ScenarioRunner> runner = std::move(*it);
        idle_runners_.erase(it);
        return runner;
      }
    }
    RunOptions options;
    options.should_stop = loop_.StopCheck();
    options.hash_trace = false;                              // a failing seed's repro runs it again, hashed
    options.track_failovers = settings_.metrics != nullptr;  // only --metrics rows show them
    options.collect_metrics = settings_.metrics != nullptr;  // only --metrics rows read them
    return std::make_unique<ScenarioRunner>(scenario, std::move(options));
  }

  // Keeps `runner` for the next seed, up to one per worker; beyond, the
  // oldest goes (a subject with a scenario per seed, such as fuzz's).
  void GiveBack(std::unique_ptr<ScenarioRunner> runner) {
    std::unique_ptr<ScenarioRunner> dropped;
    std::lock_guard<std::mutex> lock(runners_mutex_);
    idle_runners_.push_back(std::move(runner));
    if (idle_runners_.size() > std::max(1u, settings_.loop.jobs)) {
      dropped = std::move(idle_runners_.front());
      idle_runners_.erase(idle_runners_.begin());
    }
  }

  bool Fold(uint64_t seed, SeedOutcome& out) {
    CampaignSummary& s = *summary_;
    ++s.seeds_run;
    if (settings_.metrics != nullptr) settings_.metrics->Write(out.metrics_row);
    for (const std::string& name : out.violated) ++s.violations[name];
    for (const std::string& name : out.verdict.drawn) ++s.options_drawn[name];
    for (const std::string& name : out.verdict.unjudged) ++s.unjudged[name];
    if (!out.verdict.findings.empty()) ++s.seeds_with_findings;
    if (!out.verdict.failed) return true;
    ++s.seeds_failed;
    for (const std::string& reason : out.verdict.reasons) ++s.failed_by[reason];
    outcome_.Failed();
    ReportFailure(seed, out);
    return !settings_.stop_at_first_failure;
  }

  void ReportFailure(uint64_t seed, const SeedOutcome& out) {
    progress_.Clear();
    FailingSeed& f = summary_->failing[seed];
    f.seed = seed;
    f.reasons = out.verdict.reasons;
    f.findings = out.verdict.findings;
    f.reproduce = subject_.Reproduce(seed).Text();
    text_ << fmt::format("{}: seed {} {}: {}\n  reproduce: {}\n", EscapeForTerminal(subject_.Label()), seed,
                         subject_.FailedWords(), EscapeForTerminal(fmt::format("{}", fmt::join(f.reasons, "; "))),
                         EscapeForTerminal(f.reproduce));
    if (!settings_.repro_dir.empty() && repros_ < settings_.max_repros) {
      ++repros_;
      WriteFiles(seed, out, f);
    }
    text_ << std::flush;
  }

  // The repro, and with it the timeline and the shrunk repro when asked.
  void WriteFiles(uint64_t seed, const SeedOutcome& out, FailingSeed& f) {
    RunOptions options;
    options.should_stop = [] { return StopSignal() != 0; };
    auto hashed = RunAgainHashed(*out.scenario, seed, *out.failure, options);
    if (!hashed.ok()) {
      if (absl::IsCancelled(hashed.status())) {
        ++repros_stopped_;
      } else {
        outcome_.CouldNotWrite(hashed.status());
      }
      return;
    }
    f.trace_hash = sim::FormatTraceHash(hashed->trace_hash);
    text_ << fmt::format("  trace-hash: {}\n", f.trace_hash);
    const SeedFileFamily family = Family();
    const std::string repro = family.PathFor(seed, kReproSuffix);
    if (auto status =
            WriteReproFile(repro, *out.scenario, *hashed, FailedBy(*out.scenario, out, *hashed), plan_.inputs());
        !status.ok()) {
      text_ << std::flush;
      outcome_.CouldNotWrite(status);
      return;
    }
    plan_.Written(repro);
    ++repros_written_;
    f.repro = repro;
    text_ << fmt::format("  repro: {} (replay: {})\n", EscapeForTerminal(repro),
                         EscapeForTerminal(CommandLine().Add("replay").AddPath(repro).Text()));
    if (settings_.timelines) WriteTimeline(seed, *out.scenario, family, f);
    if (settings_.shrink_runs > 0) Shrink(seed, out, family, f);
  }

  void WriteTimeline(uint64_t seed, const Scenario& scenario, const SeedFileFamily& family, FailingSeed& f) {
    const std::string path = family.PathFor(seed, kTimelineSuffix);
    if (auto status = WriteHtmlTimeline(scenario, seed, path); !status.ok()) {
      text_ << std::flush;
      outcome_.CouldNotWrite(status);
      return;
    }
    plan_.Written(path);
    f.timeline = path;
    text_ << fmt::format("  timeline: {}\n", EscapeForTerminal(path));
  }

  void Shrink(uint64_t seed, const SeedOutcome& out, const SeedFileFamily& family, FailingSeed& f) {
    const std::optional<nlohmann::json> document = subject_.DocumentFor(seed);
    const std::vector<std::string> failed_by = FailedBy(*out.scenario, out, *out.failure);
    if (!document || failed_by.empty()) return;
    const ShrinkOutputs outputs{family.PathFor(seed, kShrunkReproSuffix), family.PathFor(seed, kShrunkScenarioSuffix)};
    auto shrunk = ShrinkScenario(*document, out.scenario->source, seed, failed_by.front(), settings_.shrink_runs);
    if (!shrunk.ok()) {
      text_ << fmt::format("  shrink: {}\n", EscapeForTerminal(std::string(shrunk.status().message())));
      return;
    }
    if (auto status = WriteShrinkOutputs(outputs, *shrunk, plan_.inputs()); !status.ok()) {
      text_ << std::flush;
      outcome_.CouldNotWrite(status);
      return;
    }
    plan_.Written(outputs.repro);
    plan_.Written(outputs.scenario);
    f.shrunk_repro = outputs.repro;
    f.shrunk_scenario = outputs.scenario;
    f.shrunk = fmt::format("{} runs{}: {} fault steps, {} nodes, {}", shrunk->runs,
                           shrunk->CutShort().empty() ? "" : ", " + shrunk->CutShort(), shrunk->scenario.faults.size(),
                           shrunk->scenario.nodes, sim::FormatDuration(shrunk->scenario.duration));
    text_ << fmt::format("  shrunk ({}): scenario {}, repro {}\n", f.shrunk, EscapeForTerminal(outputs.scenario),
                         EscapeForTerminal(outputs.repro));
  }

  SeedFileFamily Family() const {
    return {"--repro-dir", settings_.repro_dir, subject_.FileStem(), settings_.plan, {}};
  }

  std::string LastLine(const CampaignRun& run) const {
    const CampaignSummary& s = run.summary;
    const SeedPlan& plan = settings_.plan;
    const std::string shard = plan.shard.whole() ? "" : fmt::format(", shard {}", plan.shard.ToString());
    const std::string stopped = s.stopped.empty() ? "" : fmt::format(" STOPPED ({})", s.stopped);
    const double rate = run.seconds > 0 ? static_cast<double>(s.seeds_run) / run.seconds : 0;
    std::string line = fmt::format(
        "{}: {} of {} seeds ({}{}){} in {:.1f}s, {:.1f} seeds/s; {}; seeds with a "
        "violation: {}\n",
        EscapeForTerminal(s.label), s.seeds_run, plan.size(), plan.range.ToString(), shard, stopped, run.seconds, rate,
        subject_.VerdictText(s), CountsText(s.violations));
    if (s.seeds_failed > repros_written_ && !settings_.repro_dir.empty()) {
      // Counted as written, not as tried: a full disk writes none, and a
      // signal stops the runs that would write the rest.
      if (repros_written_ == repros_) {
        line += fmt::format("  repro files written for the first {} of {} failing seeds (--max-repros {})\n", repros_,
                            s.seeds_failed, settings_.max_repros);
      } else {
        const uint64_t could_not = repros_ - repros_written_ - repros_stopped_;
        std::string why = fmt::format("--max-repros {}", settings_.max_repros);
        if (repros_stopped_ > 0) {
          why += fmt::format("; {} not written: stopped by a signal first, their reproduce lines are above",
                             repros_stopped_);
        }
        if (could_not > 0) why += fmt::format("; {} could not be written, as said above", could_not);
        line += fmt::format("  repro files written for {} of the first {} of {} failing seeds ({})\n", repros_written_,
                            repros_, s.seeds_failed, why);
      }
    }
    return line;
  }

  const CampaignSubject& subject_;
  const CampaignSettings& settings_;
  OutputPlan& plan_;
  CommandOutcome& outcome_;
  std::ostream& text_;
  Progress progress_;
  SeedLoop loop_;
  CampaignSummary* summary_ = nullptr;
  uint64_t repros_ = 0;          // repro files tried, up to --max-repros
  uint64_t repros_written_ = 0;  // of those, written
  uint64_t repros_stopped_ = 0;  // of those, not run again: a signal came first
  // Runners between seeds (TakeRunner, GiveBack); after loop_, whose stop check they hold.
  std::mutex runners_mutex_;
  std::vector<std::unique_ptr<ScenarioRunner>> idle_runners_;
};

}  // namespace

std::string CampaignSubject::VerdictText(const CampaignSummary& summary) const {
  return fmt::format("failed: {} ({})", summary.seeds_failed, CountsText(summary.failed_by));
}

void DeclareSeedFiles(const CampaignSubject& subject, const CampaignSettings& settings, OutputPlan& plan) {
  if (settings.repro_dir.empty() || settings.max_repros == 0) return;
  std::vector<std::string_view> suffixes = {kReproSuffix};
  if (settings.timelines) suffixes.push_back(kTimelineSuffix);
  if (settings.shrink_runs > 0) {
    suffixes.push_back(kShrunkReproSuffix);
    suffixes.push_back(kShrunkScenarioSuffix);
  }
  plan.AddFamily({"--repro-dir", settings.repro_dir, subject.FileStem(), settings.plan, suffixes});
}

CampaignRun RunCampaign(const CampaignSubject& subject, const CampaignSettings& settings, OutputPlan& plan,
                        CommandOutcome& outcome) {
  return CampaignRunner(subject, settings, plan, outcome).Run();
}

std::string StoppedText(const LoopResult& loop) {
  switch (loop.end) {
    case LoopEnd::kDone: return "";
    case LoopEnd::kFoldStopped: return "first failure";
    case LoopEnd::kSignal: return "signal";
    case LoopEnd::kTimeBudget: return "time budget";
    case LoopEnd::kError: return "error";
  }
  return "";
}

}  // namespace electsim::campaign
