// `electsim check-guarantees`: every algorithm (its defaults, and each
// variant of its boolean and choice options that `electsim list` shows) under each fault kind
// alone and under every combination it declares an invariant for, over many
// seeds, with every safety checker on and an unfenced resource. Prints, per
// algorithm and fault set, on how many seeds each invariant broke; a count in
// [brackets] is one the algorithm declares kept there and must be 0 (exit 1
// otherwise). This is the evidence behind each algorithm's guarantees().
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/str_split.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/campaign/seed_campaign.h"
#include "tools/electsim/campaign/seed_loop.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/engine/fuzz_judge.h"
#include "tools/electsim/export/guarantee_table.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"

namespace electsim::commands {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

struct CheckFlags {
  uint64_t seeds = 200;
  unsigned jobs = 1;
  std::string only;                           // one case by name
  std::string seed;                           // with --case: run this seed alone
  std::string algorithms;                     // comma-separated; empty: every registered one
  const CLI::Option* seeds_option = nullptr;  // whether --seeds was given
};

std::string KindsLabel(FaultKinds kinds) {
  std::string label;
  for (FaultKind kind : algorithms::AllFaultKinds()) {
    if (kinds.Has(kind)) label += fmt::format("{}{}", label.empty() ? "" : "+", algorithms::FaultKindName(kind));
  }
  return label.empty() ? "none" : label;
}

// The kinds as a scenario name may hold them: "loss.crash", or "all".
std::string KindsSlug(FaultKinds kinds) {
  if (kinds == FaultKinds::All()) return "all";
  std::string slug = KindsLabel(kinds);
  std::replace(slug.begin(), slug.end(), '+', '.');
  if (slug.size() <= 40) return slug;
  // Too long for a name: the kinds as bits, in declaration order.
  uint32_t bits = 0;
  for (size_t i = 0; i < algorithms::AllFaultKinds().size(); ++i) {
    if (kinds.Has(algorithms::AllFaultKinds()[i])) bits |= uint32_t{1} << i;
  }
  return fmt::format("kinds{:x}", bits);
}

// One algorithm, variant and set of fault kinds, judged by what the variant
// declares kept under those kinds.
class GuaranteeCase : public campaign::CampaignSubject {
 public:
  GuaranteeCase(const algorithms::Algorithm& algorithm, const GuaranteeVariant& variant, FaultKinds kinds)
      : algorithm_(algorithm),
        variant_(variant.label),
        kinds_(KindsLabel(kinds)),
        name_(fmt::format("guarantee-{}-{}-{}", algorithm.name(), variant.slug.empty() ? "defaults" : variant.slug,
                          KindsSlug(kinds))) {
    const nlohmann::json document = GuaranteeScenario(algorithm, variant.options, kinds, name_, &variant.values);
    // Named by what generates it: no file holds it.
    auto scenario = ParseScenarioJson(document, "check-guarantees --case " + name_);
    SIM_CHECK(scenario.ok(), std::string(scenario.status().message()).c_str());
    scenario_ = std::make_shared<const Scenario>(std::move(*scenario));
    // What fuzz would judge the scenario by (drift past a declared bound is a
    // pause, and so on).
    declared_ = JudgedInvariants(*scenario_, GuaranteesOf::kOptions);
  }

  std::string Label() const override { return name_; }
  nlohmann::json Identity() const override {
    return {{"command", "check-guarantees"}, {"case", name_}, {"declared", declared_}};
  }
  std::string FileStem() const override { return name_; }
  absl::StatusOr<std::shared_ptr<const Scenario>> ScenarioFor(uint64_t) const override { return scenario_; }
  campaign::SeedVerdict Judge(const Scenario&, const RunResult& result) const override {
    campaign::SeedVerdict verdict;
    for (const std::string& fired : result.violated_checkers()) {
      const bool kept = std::find(declared_.begin(), declared_.end(), fired) != declared_.end();
      (kept ? verdict.reasons : verdict.findings).push_back(fired);
    }
    verdict.failed = !verdict.reasons.empty();
    return verdict;
  }
  CommandLine Reproduce(uint64_t seed) const override {
    return CommandLine().Add("check-guarantees").Add("--case", name_).Add("--seed", std::to_string(seed));
  }

  const algorithms::Algorithm& algorithm() const { return algorithm_; }
  const std::string& variant() const { return variant_; }
  const std::string& kinds() const { return kinds_; }
  const std::vector<std::string>& declared() const { return declared_; }
  const Scenario& scenario() const { return *scenario_; }

 private:
  const algorithms::Algorithm& algorithm_;
  std::string variant_;
  std::string kinds_;
  std::string name_;
  std::vector<std::string> declared_;
  std::shared_ptr<const Scenario> scenario_;
};

std::vector<FaultKinds> FaultSets(const algorithms::Guarantees& declared) {
  std::vector<FaultKinds> sets = {FaultKinds()};
  for (FaultKind kind : algorithms::AllFaultKinds()) sets.push_back(FaultKinds{kind});
  // Each declaration also under all its kinds at once.
  for (const algorithms::Guarantee& g : declared) {
    if (std::find(sets.begin(), sets.end(), g.kept_under) == sets.end()) sets.push_back(g.kept_under);
  }
  return sets;
}

std::vector<std::unique_ptr<GuaranteeCase>> Cases(const std::vector<const algorithms::Algorithm*>& chosen) {
  std::vector<std::unique_ptr<GuaranteeCase>> cases;
  for (const algorithms::Algorithm* algorithm : chosen) {
    for (const GuaranteeVariant& variant : GuaranteeVariants(*algorithm)) {
      const algorithms::Guarantees declared = algorithm->guarantees(variant.values);
      if (declared.empty()) continue;  // a deliberate bug promises nothing to check
      for (FaultKinds kinds : FaultSets(declared)) {
        cases.push_back(std::make_unique<GuaranteeCase>(*algorithm, variant, kinds));
      }
    }
  }
  return cases;
}

std::string TableLine(const GuaranteeCase& c, const campaign::CampaignSummary& s, size_t label_width) {
  std::string line = fmt::format("{:<{}}", c.kinds(), label_width);
  for (const std::string& name : SafetyCheckers()) {
    const bool declared = std::find(c.declared().begin(), c.declared().end(), name) != c.declared().end();
    const auto it = s.violations.find(name);
    const uint64_t count = it == s.violations.end() ? 0 : it->second;
    line += fmt::format(" {:>16}", declared ? fmt::format("[{}]", count) : fmt::format("{}", count));
  }
  // The name --case takes, which the kinds alone do not give ("all", "kinds3ff").
  return line + "  " + c.Label();
}

std::string TableHeader(const GuaranteeCase& c, uint64_t seeds, size_t label_width) {
  std::string header = fmt::format("{:<{}}", "fault kinds", label_width);
  for (const std::string& name : SafetyCheckers()) header += fmt::format(" {:>16}", name);
  header += "  case (--case NAME --seed N runs one seed)";
  return fmt::format("{}, {} ({} seeds each; seeds that broke each invariant; [n]: declared kept, must be 0)\n{}\n",
                     c.algorithm().name(), c.variant(), seeds, header);
}

int OneSeed(const GuaranteeCase& c, uint64_t seed) {
  auto result = RunScenario(c.scenario(), seed);
  if (!result.ok()) return ReportError(result.status());
  const campaign::SeedVerdict verdict = c.Judge(c.scenario(), *result);
  // Judged by what the case declares, below, not by expectations: a line
  // on them would be a second, contrary verdict.
  std::cout << FormatSummary(c.scenario(), *result, Expectations::kLeftOut)
            << (verdict.failed ? fmt::format("BROKE a declared guarantee: {}\n", fmt::join(verdict.reasons, ", "))
                               : std::string("every declared guarantee kept\n"));
  CommandOutcome outcome;
  if (verdict.failed) outcome.Failed();
  return outcome.Finish();
}

// The algorithms --algorithms names, in registry order; all of them without it.
absl::StatusOr<std::vector<const algorithms::Algorithm*>> ChosenAlgorithms(const std::string& list) {
  if (list.empty()) return algorithms::AllAlgorithms();
  const std::vector<std::string> names = absl::StrSplit(list, ',');
  for (const std::string& name : names) {
    if (algorithms::FindAlgorithm(name) == nullptr) {
      return InputError(
          fmt::format("--algorithms: no algorithm named \"{}\" (electsim list shows them)", EscapeForTerminal(name)));
    }
  }
  std::vector<const algorithms::Algorithm*> chosen;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    if (std::find(names.begin(), names.end(), algorithm->name()) != names.end()) chosen.push_back(algorithm);
  }
  return chosen;
}

// Runs the cases and prints the table. The cases are the units of a
// SeedLoop, side by side, one per job, each over its seeds on one worker: a
// case of a few seeds cannot keep two workers busy (its last seed runs
// alone), and external nodes' cases are mostly of a few seeds. Lines come in
// case order, a batch of a few cases per job at a time.
class CaseTable {
 public:
  CaseTable(const std::vector<std::unique_ptr<GuaranteeCase>>& cases, campaign::SeedRange range)
      : cases_(cases), range_(range) {
    for (const auto& c : cases_) label_width_ = std::max(label_width_, c->kinds().size());
  }

  // The command's exit status.
  int Run(unsigned jobs) {
    // Fewer cases than jobs (--case): the jobs left share each case's seeds.
    const unsigned side_by_side = std::min<unsigned>(std::max(1u, jobs), static_cast<unsigned>(cases_.size()));
    jobs_per_case_ = std::max(1u, jobs / side_by_side);
    campaign::Progress progress("check-guarantees", "cases", cases_.size());
    progress_ = &progress;
    campaign::SeedLoop loop({.jobs = side_by_side, .batch_per_job = 4}, &progress);
    const campaign::LoopResult result =
        loop.Run<CaseRun>(cases_.size(), {.run = [this](uint64_t i) { return RunCase(i); },
                                          .fold = [this](uint64_t i, CaseRun& done) { return PrintLine(i, done); }});
    progress.Clear();
    std::cout << broken_;
    if (const int signal_number = StopSignal(); signal_number != 0) {
      std::cout << fmt::format("interrupted by {}: {} of {} cases ran; the table stops there\n",
                               SignalName(signal_number), result.folded, cases_.size());
      outcome_.Finish();
      return kExitSignalBase + signal_number;
    }
    if (result.end == campaign::LoopEnd::kError) return ReportError(result.error);
    return outcome_.Finish();
  }

 private:
  struct CaseRun {
    campaign::CampaignRun run;
    bool failed = false;
  };

  // On a worker.
  absl::StatusOr<CaseRun> RunCase(uint64_t i) const {
    std::ostringstream quiet;  // each case's own lines: the table says it all
    campaign::CampaignSettings settings{.plan = {range_, {}}, .loop = {.jobs = jobs_per_case_}};
    settings.repro_dir = "";
    settings.text = &quiet;
    settings.progress = false;
    campaign::OutputPlan outputs({});
    CommandOutcome case_outcome;
    CaseRun done{.run = campaign::RunCampaign(*cases_[i], settings, outputs, case_outcome),
                 .failed = case_outcome.failed()};
    if (done.run.loop.end == campaign::LoopEnd::kError) return done.run.loop.error;
    return done;
  }

  // In case order; false stops the table (a signal ended the case early).
  bool PrintLine(uint64_t i, const CaseRun& done) {
    const GuaranteeCase& c = *cases_[i];
    if (done.failed) outcome_.Failed();
    progress_->Clear();
    if (i == 0 || &cases_[i - 1]->algorithm() != &c.algorithm() || cases_[i - 1]->variant() != c.variant()) {
      std::cout << TableHeader(c, range_.size(), label_width_);
    }
    // A case a signal cut short says how many of its seeds its counts cover.
    const uint64_t ran = done.run.summary.seeds_run;
    std::cout << TableLine(c, done.run.summary, label_width_)
              << (ran < range_.size() ? fmt::format("   stopped after {} of {} seeds", ran, range_.size()) : "") << "\n"
              << std::flush;
    if (!done.run.summary.failing.empty()) {
      const auto& [seed, f] = *done.run.summary.failing.begin();
      broken_ +=
          fmt::format("BROKEN: {} ({}) declares {} under {}, broken first at seed {}; reproduce: {}\n",
                      c.algorithm().name(), c.variant(), fmt::join(f.reasons, ", "), c.kinds(), seed, f.reproduce);
    }
    return StopSignal() == 0;
  }

  const std::vector<std::unique_ptr<GuaranteeCase>>& cases_;
  const campaign::SeedRange range_;
  size_t label_width_ = 12;
  unsigned jobs_per_case_ = 1;
  campaign::Progress* progress_ = nullptr;  // while Run runs
  CommandOutcome outcome_;
  std::string broken_;
};

// Why --case NAME matched none of the chosen cases.
absl::Status NoSuchCase(const std::string& name, const std::string& algorithms) {
  for (const auto& c : Cases(algorithms::AllAlgorithms())) {
    if (c->Label() != name) continue;
    return InputError(fmt::format("--case {}: a case of {}, which --algorithms {} leaves out; expected both to agree",
                                  EscapeForTerminal(name), c->algorithm().name(), EscapeForTerminal(algorithms)));
  }
  return InputError(
      fmt::format("--case: no case named \"{}\"; expected a name from the table's case column "
                  "(guarantee-ALGORITHM-VARIANT-KINDS)",
                  EscapeForTerminal(name)));
}

int CheckGuarantees(const CheckFlags& flags) {
  auto chosen = ChosenAlgorithms(flags.algorithms);
  if (!chosen.ok()) return ReportError(chosen.status());
  std::vector<std::unique_ptr<GuaranteeCase>> cases = Cases(*chosen);
  if (!flags.only.empty()) {
    std::erase_if(cases, [&](const auto& c) { return c->Label() != flags.only; });
    if (cases.empty()) return ReportError(NoSuchCase(flags.only, flags.algorithms));
  }
  if (!flags.seed.empty()) {
    auto seed = campaign::ParseSeed("--seed", flags.seed);
    if (!seed.ok()) return ReportError(seed.status());
    if (flags.only.empty()) return ReportError(InputError("--seed: expected --case NAME too"));
    if (OptionGiven(flags.seeds_option)) {
      return ReportError(InputError("--seeds: --seed runs one seed of the case; expected one or the other"));
    }
    return OneSeed(*cases.front(), *seed);
  }
  auto range = campaign::SeedRange::FromCount("--seeds", 1, flags.seeds);
  if (!range.ok()) return ReportError(range.status());
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  return CaseTable(cases, *range).Run(flags.jobs);
}

}  // namespace

Command AddCheckGuaranteesCommand(CLI::App& parent) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* app = parent.add_subcommand(
      "check-guarantees", "sweep every algorithm under every fault kind and check its declared guarantees");
  flags->seeds_option = app->add_option("--seeds", flags->seeds, "seeds per algorithm and fault set")
                            ->check(UnsignedText("a number of seeds", 1, 100000000))
                            ->capture_default_str();
  AddJobsFlag(*app, flags->jobs);
  app->add_option("--algorithms", flags->algorithms,
                  "comma-separated algorithms to check (default: every one, etcd-raft and manifests' too)");
  app->add_option("--case", flags->only, "only the case of this name (guarantee-ALGORITHM-VARIANT-KINDS)");
  app->add_option("--seed", flags->seed, "with --case: run this one seed and print its verdict and trace hash");
  return {app, [flags] { return CheckGuarantees(*flags); }};
}

}  // namespace electsim::commands
