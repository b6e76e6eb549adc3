// `electsim bench`: election latency of several algorithms under one fault,
// trial by trial, with common random numbers: trial i runs under the same
// seed for every algorithm (engine/bench_scenarios.h, export/bench_report.h).
#include <algorithm>
#include <iostream>
#include <memory>

#include "fmt/format.h"
#include "sim/trace.h"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/campaign/seed_loop.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/export/bench_report.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"

namespace electsim::commands {
namespace {

struct BenchFlags {
  std::string algorithms = "raft,bully,ring,lease";
  std::string fault = "crash-leader";
  uint64_t trials = 100;
  const CLI::Option* trials_option = nullptr;  // whether --trials was given
  uint32_t nodes = 5;
  const CLI::Option* nodes_option = nullptr;  // whether --nodes was given
  std::string preset;
  std::string seed = "1";
  const CLI::Option* seed_option = nullptr;  // whether --seed was given
  std::string seeds;                         // "" unless --seeds was given
  unsigned jobs = 1;
  std::string sweep;
  std::string csv_path;
  std::string json_path;
  std::vector<std::string> sets;
  std::string run_seed;  // one trial alone
  std::string format = "text";
};

absl::Status CheckNames(const BenchPlan& plan) {
  std::vector<std::string> known;
  for (const algorithms::Algorithm* a : algorithms::AllAlgorithms()) known.emplace_back(a->name());
  for (const std::string& name : plan.algorithms) {
    if (algorithms::FindAlgorithm(name) == nullptr) {
      return InputError(fmt::format("--algorithms: unknown algorithm \"{}\"; expected one of {}",
                                    EscapeForTerminal(name), fmt::join(known, ", ")));
    }
  }
  const std::vector<std::string> faults = BenchFaults();
  if (std::find(faults.begin(), faults.end(), plan.fault) == faults.end()) {
    return InputError(fmt::format("--fault: unknown fault \"{}\"; expected one of {}", EscapeForTerminal(plan.fault),
                                  fmt::join(faults, ", ")));
  }
  // A leader fault finds no leader among owners of keys, and a key fault
  // measures nothing of a single leader's election.
  for (const std::string& name : plan.algorithms) {
    const bool keyed = algorithms::FindAlgorithm(name)->observes_keys();
    if (keyed != IsKeyFault(plan.fault)) {
      return InputError(fmt::format("--fault {}: algorithm \"{}\" {}; expected {}", EscapeForTerminal(plan.fault),
                                    EscapeForTerminal(name),
                                    keyed ? "has owners of keys, not one leader" : "elects one leader, it owns no keys",
                                    keyed ? "replica-crash, replica-cut or store-slowdown"
                                          : "crash-leader, isolate-leader, pause-leader or lossy"));
    }
  }
  if (!plan.preset.empty()) return PresetOptions(plan.preset, plan.algorithms.front()).status();
  return absl::OkStatus();
}

absl::StatusOr<BenchPlan> PlanOf(const BenchFlags& flags) {
  if (flags.format != "text" && flags.format != "markdown") {
    return InputError(fmt::format("--format: expected text or markdown; got \"{}\"", EscapeForTerminal(flags.format)));
  }
  BenchPlan plan{
      .algorithms = SplitCommas(flags.algorithms), .fault = flags.fault, .nodes = flags.nodes, .preset = flags.preset};
  if (auto status = CheckNames(plan); !status.ok()) return status;
  auto overrides = ParseOverrides(flags.sets);
  if (!overrides.ok()) return overrides.status();
  plan.overrides = std::move(*overrides);
  if (!flags.sweep.empty()) {
    auto sweep = ParseSweep(flags.sweep, plan.algorithms);
    if (!sweep.ok()) return sweep.status();
    if (sweep->parameter == "nodes" && OptionGiven(flags.nodes_option)) {
      return InputError("--nodes: --sweep nodes=... sets the cluster size of every row; expected one or the other");
    }
    plan.sweep = std::move(*sweep);
  }
  return plan;
}

// The command that runs trial `seed` of `config` alone.
CommandLine ReproduceTrial(const BenchFlags& flags, const BenchPlan& plan, const BenchConfig& config, uint64_t seed) {
  CommandLine line;
  line.Add("bench").Add("--algorithms", config.algorithm).Add("--fault", plan.fault);
  if (!plan.preset.empty()) line.Add("--preset", plan.preset);
  line.Add("--nodes", std::to_string(config.scenario.nodes)).AddSets(flags.sets);
  // The row's point as a sweep of one, built as the row was: a --set of
  // what the fault or the preset owns would be refused.
  if (plan.sweep && plan.sweep->parameter != "nodes") {
    line.Add("--sweep", fmt::format("{}={}", plan.sweep->parameter, config.sweep_label));
  }
  return line.Add("--run-seed", std::to_string(seed));
}

// The first trial of each configuration that showed a violation, with the
// command that runs it alone and its trace hash.
std::string ViolatingTrials(const BenchFlags& flags, const BenchPlan& plan, const std::vector<BenchConfig>& configs,
                            const std::vector<std::vector<BenchTrial>>& trials, uint64_t first_seed) {
  std::string lines;
  for (size_t c = 0; c < configs.size(); ++c) {
    for (uint64_t i = 0; i < trials[c].size(); ++i) {
      if (!trials[c][i].ran || trials[c][i].violations.empty()) continue;
      auto hashed = RunScenario(configs[c].scenario, first_seed + i);
      lines += fmt::format("{}{}: first trial with a violation ({}): seed {}, trace-hash {}\n  reproduce: {}\n",
                           configs[c].sweep_label.empty() ? "" : configs[c].sweep_label + " ", configs[c].algorithm,
                           trials[c][i].violations, first_seed + i,
                           hashed.ok() ? sim::FormatTraceHash(hashed->trace_hash) : "-",
                           EscapeForTerminal(ReproduceTrial(flags, plan, configs[c], first_seed + i).Text()));
      break;
    }
  }
  return lines;
}

// "failed: 3 of 40 trials broke an invariant (bully 3)", or "" for none.
std::string BrokenTrials(const std::vector<BenchConfig>& configs, const std::vector<std::vector<BenchTrial>>& trials) {
  uint64_t broken = 0;
  uint64_t ran = 0;
  std::vector<std::pair<std::string, uint64_t>> by_algorithm;  // in --algorithms order
  for (size_t c = 0; c < configs.size(); ++c) {
    for (const BenchTrial& trial : trials[c]) {
      if (!trial.ran) continue;
      ++ran;
      if (trial.violations.empty()) continue;
      ++broken;
      auto it = std::find_if(by_algorithm.begin(), by_algorithm.end(),
                             [&](const auto& entry) { return entry.first == configs[c].algorithm; });
      if (it == by_algorithm.end()) it = by_algorithm.insert(by_algorithm.end(), {configs[c].algorithm, 0});
      ++it->second;
    }
  }
  if (broken == 0) return "";
  std::vector<std::string> parts;
  parts.reserve(by_algorithm.size());
  for (const auto& [algorithm, count] : by_algorithm) parts.push_back(fmt::format("{} {}", algorithm, count));
  return fmt::format("failed: {} of {} trials broke an invariant ({}), which a bench trial expects none of\n", broken,
                     ran, fmt::join(parts, ", "));
}

// `bench --run-seed S`: one trial, printed as `run` prints a run.
int OneTrial(const BenchPlan& plan, const BenchFlags& flags) {
  const std::string& text = flags.run_seed;
  auto seed = campaign::ParseSeed("--run-seed", text);
  if (!seed.ok()) return ReportError(seed.status());
  if (!flags.seeds.empty()) {
    return ReportError(InputError("--run-seed: runs the one trial of its seed; expected no --seeds"));
  }
  const bool one_point = !plan.sweep || plan.sweep->points.size() == 1;
  if (plan.algorithms.size() != 1 || !one_point || !flags.csv_path.empty() || !flags.json_path.empty()) {
    return ReportError(
        InputError("--run-seed: runs one trial; expected one algorithm in --algorithms, a --sweep of one point "
                   "(PARAM=VALUE) if any, and no --csv or --json"));
  }
  auto configs = BuildBenchConfigs(plan);
  if (!configs.ok()) return ReportError(configs.status());
  HandleTerminatingSignals(SignalResponse::kExitNow);
  RunOptions options;
  options.key_measures_from = configs->front().key_fault_at;
  auto result = RunScenario(configs->front().scenario, *seed, options);
  if (!result.ok()) return ReportError(result.status());
  std::cout << FormatSummary(configs->front().scenario, *result);
  CommandOutcome outcome;
  if (!result->violations.empty()) outcome.Failed();  // a bench scenario expects none
  return outcome.Finish();
}

std::string SweepReplaces(const BenchPlan& plan) {
  if (!plan.sweep) return "";
  if (plan.fault == "lossy" && plan.sweep->parameter == "drop") return "the lossy fault's loss";
  for (const std::string& algorithm : plan.algorithms) {
    auto preset = PresetOptions(plan.preset, algorithm);
    if (preset.ok() && preset->contains(plan.sweep->parameter)) return "the preset's value";
  }
  return "";
}

// Runs every trial, trial-major, so that trials stopped by Ctrl-C leave
// every configuration with the same first trials, still paired.
campaign::LoopResult RunTrials(const std::vector<BenchConfig>& configs, const BenchFlags& flags, uint64_t first_seed,
                               std::vector<std::vector<BenchTrial>>& trials) {
  const uint64_t total = configs.size() * trials.front().size();
  campaign::Progress progress("bench", "trials", total);
  campaign::SeedLoop loop({.jobs = flags.jobs, .batch_per_job = 256}, &progress);
  campaign::UnitCalls<BenchTrial> calls;
  calls.run = [&](uint64_t k) -> absl::StatusOr<BenchTrial> {
    RunOptions options;
    options.should_stop = loop.StopCheck();
    options.hash_trace = false;  // a trial is measured, not replayed
    const BenchConfig& config = configs[k % configs.size()];
    options.key_measures_from = config.key_fault_at;
    auto result = RunScenario(config.scenario, first_seed + k / configs.size(), options);
    if (!result.ok()) return result.status();
    return MeasureTrial(*result, flags.fault == "lossy");
  };
  calls.fold = [&](uint64_t k, BenchTrial& trial) {
    trials[k % configs.size()][k / configs.size()] = std::move(trial);
    return true;
  };
  campaign::LoopResult result = loop.Run(total, calls);
  progress.Clear();
  return result;
}

int WriteResults(const BenchResults& results, const BenchFlags& flags, const campaign::OutputPlan& plan,
                 CommandOutcome& outcome) {
  if (!flags.csv_path.empty()) {
    if (auto s = WriteFileAtomically(flags.csv_path, BenchCsv(results), plan.inputs()); !s.ok())
      outcome.CouldNotWrite(s);
  }
  if (!flags.json_path.empty()) {
    const std::string json = BenchJson(results).dump(1) + "\n";
    if (auto s = WriteFileAtomically(flags.json_path, json, plan.inputs()); !s.ok()) outcome.CouldNotWrite(s);
  }
  std::cout << BenchTable(results, flags.format == "markdown" ? BenchFormat::kMarkdown : BenchFormat::kText);
  return 0;
}

// The trials' seeds: --seeds as sweep and fuzz take it (N from --seed on, or
// A..B), or --trials from --seed.
absl::StatusOr<campaign::SeedRange> TrialSeeds(const BenchFlags& flags) {
  auto first = campaign::ParseSeed("--seed", flags.seed);
  if (!first.ok()) return first.status();
  if (flags.seeds.empty()) return campaign::SeedRange::FromCount("--seed", *first, flags.trials);
  if (OptionGiven(flags.trials_option)) {
    return InputError(fmt::format("--trials: --seeds {} says which trials run; expected one of --seeds and --trials",
                                  EscapeForTerminal(flags.seeds)));
  }
  // A range names its own first seed; a second one could only disagree.
  if (campaign::SeedRange::IsRangeText(flags.seeds) && OptionGiven(flags.seed_option)) {
    return InputError(fmt::format(
        "--seed: --seeds {} names its own first seed; expected --seeds A..B alone, or --seed with a number of "
        "trials (--seeds N)",
        EscapeForTerminal(flags.seeds)));
  }
  return campaign::SeedRange::ParseCountOrRange("--seeds", flags.seeds, *first);
}

// Every trial's figures are kept for the table and the files, about 200
// bytes each: a bound keeps a typo in --trials or --seeds from exhausting memory.
absl::Status FitsInMemory(const BenchFlags& flags, uint64_t trials, size_t configs) {
  if (trials <= kMaxBenchTrials / configs) return absl::OkStatus();
  return InputError(
      fmt::format("{}: {} trials for each of {} configurations is more than {} in all, which bench keeps in memory; "
                  "expected fewer (split the run into ranges of seeds)",
                  flags.seeds.empty() ? "--trials" : "--seeds", trials, configs, kMaxBenchTrials));
}

int Bench(const BenchFlags& flags) {
  auto plan = PlanOf(flags);
  if (!plan.ok()) return ReportError(plan.status());
  if (!flags.run_seed.empty()) return OneTrial(*plan, flags);
  auto seeds = TrialSeeds(flags);
  if (!seeds.ok()) return ReportError(seeds.status());
  const uint64_t trials_requested = seeds->size();
  auto configs = BuildBenchConfigs(*plan);
  if (!configs.ok()) return ReportError(configs.status());
  if (auto status = FitsInMemory(flags, trials_requested, configs->size()); !status.ok()) return ReportError(status);
  campaign::OutputPlan outputs({});
  outputs.AddFile("--csv", flags.csv_path);
  outputs.AddFile("--json", flags.json_path);
  if (auto status = outputs.Check(); !status.ok()) return ReportError(status);
  HandleTerminatingSignals(SignalResponse::kStopGracefully);
  std::vector<std::vector<BenchTrial>> trials(configs->size(), std::vector<BenchTrial>(trials_requested));
  const campaign::LoopResult loop = RunTrials(*configs, flags, seeds->first(), trials);
  // Bad input found at some trial (a storm the simulator cannot carry) writes nothing.
  if (loop.end == campaign::LoopEnd::kError && ExitStatusFor(loop.error) == kExitBadInput) {
    return ReportError(loop.error);
  }
  // Stopped early: every row keeps the trials that ran for all of them, and
  // the header and files count those, not the ones asked for.
  const uint64_t trials_run = loop.end == campaign::LoopEnd::kDone ? trials_requested : loop.folded / configs->size();
  for (std::vector<BenchTrial>& row : trials) row.resize(trials_run);
  if (trials_run == 0 && StopSignal() != 0) {
    // Nothing to keep: a table and files of no trials would say nothing.
    std::cout << "interrupted before every configuration had finished a trial: no table, no files written\n";
    return kExitSignalBase + StopSignal();
  }
  CommandOutcome outcome;
  const BenchResults results{.fault = plan->fault,
                             .preset = plan->preset,
                             .sets = flags.sets,
                             .first_seed = seeds->first(),
                             .trials = trials_run,
                             .trials_requested = trials_requested,
                             .sweep = plan->sweep ? plan->sweep->parameter : "",
                             .sweep_replaces = SweepReplaces(*plan),
                             .algorithms = plan->algorithms.size(),
                             .configs = &*configs,
                             .results = &trials};
  WriteResults(results, flags, outputs, outcome);
  std::cout << ViolatingTrials(flags, *plan, *configs, trials, seeds->first());
  // A bench scenario expects no violation, as `--run-seed` of the trial
  // judges it: the figures leave such trials out, and the exit says so.
  if (const std::string broken = BrokenTrials(*configs, trials); !broken.empty()) {
    std::cout << broken;
    outcome.Failed();
  }
  if (const int signal_number = StopSignal(); signal_number != 0) {
    std::cout << "interrupted: the table and files cover the trials that finished\n";
    outcome.Finish();
    return kExitSignalBase + signal_number;
  }
  if (loop.end == campaign::LoopEnd::kError) {
    outcome.Finish();
    return ReportError(loop.error);
  }
  return outcome.Finish();
}

}  // namespace

Command AddBenchCommand(CLI::App& parent) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* app =
      parent.add_subcommand("bench", "compare election latency across algorithms, trial by trial under the same seeds");
  app->add_option("--algorithms", flags->algorithms,
                  "comma-separated algorithms; paired differences are against the first")
      ->capture_default_str();
  app->add_option("--fault", flags->fault,
                  "crash-leader, isolate-leader, pause-leader or lossy; for owners of keys (shards): replica-crash, "
                  "replica-cut or store-slowdown")
      ->capture_default_str();
  flags->trials_option = app->add_option("--trials", flags->trials, "trials per algorithm (and per sweep point)")
                             ->check(UnsignedText("a number of trials above 0", 1, kMaxBenchTrials))
                             ->capture_default_str();
  flags->nodes_option = app->add_option("--nodes", flags->nodes, "cluster size")
                            ->check(UnsignedText("a number of nodes", 1, kMaxNodes))
                            ->capture_default_str();
  app->add_option("--preset", flags->preset,
                  "timing from production defaults: equal-detection, etcd, hashicorp, kubernetes-lease, zookeeper");
  flags->seed_option =
      app->add_option("--seed", flags->seed, "trial i runs under seed + i, for every algorithm")->capture_default_str();
  app->add_option("--seeds", flags->seeds,
                  "the trials' seeds, as sweep and fuzz take them: a number N (from --seed on) or a range A..B; "
                  "instead of --trials");
  AddJobsFlag(*app, flags->jobs);
  app->add_option("--sweep", flags->sweep,
                  "one parameter over a range: PARAM=FROM..TO[:POINTS], e.g. election_timeout_max=150ms..300ms:6, "
                  "nodes=3..9, drop=0..0.2:5");
  app->add_option("--csv", flags->csv_path, "write every trial as a CSV row to FILE, in trial order");
  app->add_option("--json", flags->json_path, "write every trial to FILE as JSON, in trial order");
  AddSetFlag(*app, flags->sets, "every configuration (not nodes or the algorithm: --nodes, --algorithms)",
             "network.latency=5ms or leader_work.interval=50ms");
  app->add_option("--format", flags->format, "the table as aligned text, or as Markdown for a design document")
      ->capture_default_str();
  app->add_option(
      "--run-seed", flags->run_seed,
      "run the one trial of this seed (one algorithm, a --sweep of one point if any) and print it as run does");
  return {app, [flags] { return Bench(*flags); }};
}

}  // namespace electsim::commands
