// electsim::Main, the command-line front end: the electsim binary's main and
// the one a user's own main calls after registering its algorithms. All file
// and terminal I/O lives here and in tools/electsim/*; the simulation below
// it never touches either.
#include "CLI/CLI.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <thread>

#include "checkers/checker.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/electsim.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/trace.h"
#include "tools/electsim/commands/bench.h"
#include "tools/electsim/commands/fuzz_cli.h"
#include "tools/electsim/commands/sweep.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/explain.h"
#include "tools/electsim/export/guarantee_table.h"
#include "tools/electsim/export/replay_diff.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/export/summary_json.h"
#include "tools/electsim/export/trace_export.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/overrides.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

// Opens the trace a command was asked for: none, standard output ("-"), or a
// file that replaces none of `inputs` and is not where this run's repro goes.
absl::StatusOr<std::unique_ptr<TraceExporter>> OpenTrace(const std::optional<std::string>& path,
                                                         const std::string& format_text,
                                                         const std::vector<std::string>& inputs,
                                                         const std::optional<std::string>& repro_path,
                                                         const Scenario& scenario, uint64_t seed) {
  auto format = ParseTraceFormat(format_text);
  if (!format.ok()) return format.status();
  if (!path) return nullptr;
  if (path->empty()) {
    return absl::InvalidArgumentError("--trace: expected a file path, or - for standard output; got \"\"");
  }
  if (*path == "-") return MakeTraceExporter(*format, TraceOutput::ToStandardOutput(), scenario, seed);
  if (repro_path && SameFile(*path, *repro_path)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: is where this run's repro file {} would go; expected another path", *path, *repro_path));
  }
  auto output = TraceOutput::Open(*path, inputs);
  if (!output.ok()) return output.status();
  return MakeTraceExporter(*format, std::move(*output), scenario, seed);
}

bool TraceToStandardOutput(const std::optional<std::string>& trace_path) { return trace_path && *trace_path == "-"; }

// Commits the trace last, once the verdict and the repro are out.
void CommitTrace(TraceExporter* trace, const RunResult& result, CommandOutcome& outcome) {
  if (trace == nullptr) return;
  trace->Finish(result);
  if (auto status = trace->Commit(); !status.ok()) outcome.CouldNotWrite(status);
}

int Run(const std::string& path, std::optional<uint64_t> seed, const std::optional<std::string>& trace_path,
        const std::string& trace_format, const std::string& repro_dir, bool quiet, const std::vector<std::string>& sets,
        bool json_summary) {
  auto overrides = ParseOverrides(sets);
  if (!overrides.ok()) return ReportError(overrides.status());
  auto scenario = LoadScenarioFile(path, *overrides);
  if (!scenario.ok()) return ReportError(scenario.status());
  const uint64_t run_seed = seed.value_or(scenario->seed);
  const std::vector<std::string> inputs = {path};
  // Every output is checked before the run, not found unwritable after it.
  std::optional<std::string> repro_path;
  if (!repro_dir.empty()) {
    if (auto status = CheckOutputDir(repro_dir); !status.ok()) return ReportError(status);
    repro_path = ReproFilePath(repro_dir, scenario->name, run_seed);
    if (auto status = CheckOutputPath(*repro_path, inputs, OutputFolder::kCreatedOnWrite); !status.ok()) {
      return ReportError(status);
    }
  }
  auto trace = OpenTrace(trace_path, trace_format, inputs, repro_path, *scenario, run_seed);
  if (!trace.ok()) return ReportError(trace.status());
  // Standard output carries exactly the trace when it streams there.
  std::ostream& out = TraceToStandardOutput(trace_path) ? std::cerr : std::cout;
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  auto result = RunScenario(*scenario, run_seed, options);
  if (!result.ok()) return ReportError(result.status());
  CommandOutcome outcome;
  if (!result->met_expectations()) outcome.Failed();
  if (json_summary) {
    out << SummaryJson(*scenario, *result).dump() << "\n";
  } else if (!quiet) {
    out << FormatSummary(*scenario, *result);
  }
  // With --json, standard output holds the JSON object alone.
  std::ostream& notes = json_summary ? std::cerr : out;
  if (!result->violations.empty() && repro_path) {
    if (auto status = WriteReproFile(*repro_path, *scenario, *result, inputs); status.ok()) {
      notes << fmt::format("repro: {0} (replay: {1} replay {0})\n", EscapeForTerminal(*repro_path), ProgramName());
    } else {
      out << std::flush;
      outcome.CouldNotWrite(status);
    }
  }
  if (outcome.failed()) {
    notes << fmt::format("reproduce: {} run {} --seed {}\n", ProgramName(), EscapeForTerminal(path), run_seed);
  }
  out << std::flush;
  notes << std::flush;
  CommitTrace(trace->get(), *result, outcome);
  return outcome.Finish();
}

int Replay(const std::string& repro_path, const std::optional<std::string>& trace_path, const std::string& trace_format,
           const std::optional<std::string>& expected_trace) {
  auto text = ReadFile(repro_path);
  if (!text.ok()) return ReportError(text.status());
  auto repro = ParseRepro(*text, repro_path);
  if (!repro.ok()) return ReportError(repro.status());
  auto trace = OpenTrace(trace_path, trace_format, {repro_path}, std::nullopt, repro->scenario, repro->seed);
  if (!trace.ok()) return ReportError(trace.status());
  std::ostream& out = TraceToStandardOutput(trace_path) ? std::cerr : std::cout;
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  auto result = RunScenario(repro->scenario, repro->seed, options);
  if (!result.ok()) return ReportError(result.status());
  CommandOutcome outcome;
  out << FormatSummary(repro->scenario, *result);
  if (result->trace_hash == repro->trace_hash && result->trace_records == repro->trace_records) {
    out << fmt::format("replay: trace hash matches the repro ({})\n", sim::FormatTraceHash(result->trace_hash));
  } else {
    out << fmt::format("replay: trace DIFFERS: repro has {} over {} records, this run gave {} over {}\n",
                       sim::FormatTraceHash(repro->trace_hash), repro->trace_records,
                       sim::FormatTraceHash(result->trace_hash), result->trace_records);
    auto where = DescribeTraceDifference(*repro, *result, expected_trace);
    if (!where.ok()) return ReportError(where.status());
    out << *where;
    outcome.Failed();
  }
  if (result->violated_checkers() != repro->violations) {
    out << "replay: the violations differ from the repro's\n";
    outcome.Failed();
  } else if (!repro->violations.empty()) {
    out << "replay: the same violation reproduced\n";
  }
  out << std::flush;
  CommitTrace(trace->get(), *result, outcome);
  return outcome.Finish();
}

int Explain(const std::string& path, std::optional<uint64_t> seed, const ExplainOptions& options) {
  auto text = ReadFile(path);
  if (!text.ok()) return ReportError(text.status());
  // A repro names itself in its first key; anything else is read as a scenario.
  std::optional<Scenario> scenario;
  uint64_t run_seed = 0;
  if (text->find("\"electsim_repro\"") != std::string::npos) {
    auto repro = ParseRepro(*text, path);
    if (!repro.ok()) return ReportError(repro.status());
    run_seed = seed.value_or(repro->seed);
    scenario = std::move(repro->scenario);
  } else {
    auto parsed = ParseScenario(*text, path);
    if (!parsed.ok()) return ReportError(parsed.status());
    run_seed = seed.value_or(parsed->seed);
    scenario = std::move(*parsed);
  }
  auto account = ExplainRun(*scenario, run_seed, options);
  if (!account.ok()) return ReportError(account.status());
  std::cout << *account;
  return CommandOutcome().Finish();
}

int List() {
  std::cout << "algorithms:\n";
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    std::cout << fmt::format("  {}{}: {}\n", algorithm->name(), algorithm->uses_store() ? " (uses a store)" : "",
                             algorithm->summary());
    for (const algorithms::OptionSpec& option : algorithm->options()) {
      const std::string range = option.RangeText();
      std::cout << fmt::format("    {:<22} {:<12} default {:<10}{} {}\n", option.name,
                               algorithms::OptionTypeName(option.type), option.DefaultText(),
                               range.empty() ? "" : fmt::format(" [{}]", range), option.help);
    }
    std::cout << "    guarantees with these defaults, against a resource that checks no token (\"yes\": kept under any "
                 "mix of the fault kinds marked yes):\n"
              << FormatGuarantees(*algorithm, algorithms::OptionValues::Defaults(algorithm->options()), 4)
              << FormatGuaranteeChanges(*algorithm, 4);
  }
  std::cout << "checkers:\n";
  size_t name_width = 0;
  for (const auto& checker : checkers::AllCheckers()) name_width = std::max(name_width, checker.name.size());
  for (const auto& checker : checkers::AllCheckers()) {
    std::cout << fmt::format("  {:<{}} {:<4} {}\n", checker.name, name_width, checker.on_by_default ? "on" : "off",
                             checker.summary);
  }
  std::cout
      << "  (\"on\" checkers run when a scenario lists none; liveness runs when a scenario has a liveness block)\n";
  return CommandOutcome().Finish();
}

}  // namespace
}  // namespace electsim

// CLI11 2.1 turns "-3" into 2^64-3 and "18446744073709551616" into 2^64-1
// without a word, and reads " 3" as 3, so counts and seeds are checked as text
// (decimal digits only, within range) before they are converted.
CLI::Validator UnsignedText(std::string what, uint64_t min, uint64_t max) {
  return CLI::Validator(
      [what, min, max](const std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit);
        if (!digits_only || error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("expected {}: an integer in [{}, {}], got \"{}\"", what, min, max, text);
        }
        return "";
      },
      "UINT");
}

namespace electsim {
namespace {

// The command names, for messages about a missing or unknown one.
std::string CommandList(const CLI::App& app) {
  std::string list;
  for (const CLI::App* command : app.get_subcommands({})) {
    list += fmt::format("\n  {:<8} {}", command->get_name(), command->get_description());
  }
  return list;
}

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"electsim: deterministic simulation testbed for leader-election algorithms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("electsim {} (revision {})", ELECTSIM_VERSION, ELECTSIM_REVISION),
                       "print the version and the source revision it was built from");

  std::string scenario_path, repro_dir = ".", repro_path;
  std::optional<std::string> trace_path;
  std::string trace_format = "jsonl";
  const std::string trace_format_help =
      "what --trace writes: jsonl (docs/trace.md), perfetto (Chrome trace-event JSON) or html";
  std::optional<uint64_t> seed;
  bool quiet = false;
  auto* run = app.add_subcommand("run", "run a scenario under a seed and check its invariants");
  run->add_option("scenario", scenario_path, "scenario file (JSON)")->required();
  run->add_option("--seed", seed, "seed (default: the scenario's)")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max()));
  run->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE (-: to standard output)");
  run->add_option("--trace-format", trace_format, trace_format_help)->capture_default_str();
  run->add_option("--repro-dir", repro_dir, "where a violating run writes its repro file (\"\": none)")
      ->capture_default_str();
  run->add_flag("--quiet", quiet, "print nothing but repro and reproduce lines");
  std::vector<std::string> sets;
  const char* set_help =
      "change one value of the scenario, checked like the file: PATH=VALUE, e.g. nodes=7 or "
      "algorithm.options.election_timeout_max=300ms (repeatable)";
  bool json_summary = false;
  run->add_flag("--json", json_summary,
                "print the summary as one JSON object (scenarios/schema/summary.schema.json) instead of text");
  run->add_option("--set", sets, set_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  auto* replay = app.add_subcommand("replay", "re-run a repro file and check its trace hash");
  replay->add_option("repro", repro_path, "repro file written by run")->required();
  replay->add_option("--trace", trace_path, "write the whole trace as JSON Lines to FILE (-: to standard output)");
  replay->add_option("--trace-format", trace_format, trace_format_help)->capture_default_str();
  std::optional<std::string> expected_trace;
  replay->add_option("--expected", expected_trace,
                     "when the trace differs, compare it record by record with this JSON Lines trace of a good run");

  std::string explain_path;
  auto* explain =
      app.add_subcommand("explain", "tell how a run's violation came about (a repro, or a scenario and --seed)");
  explain->add_option("file", explain_path, "repro file, or scenario file")->required();
  explain->add_option("--seed", seed, "seed (default: the repro's, or the scenario's)")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max()));
  electsim::ExplainOptions explain_options;
  explain->add_option("--lines", explain_options.max_timeline_lines, "timeline lines at most (faults are always shown)")
      ->check(UnsignedText("a number of lines", 1, 100000))
      ->capture_default_str();

  app.add_subcommand("list", "show algorithms with their options and guarantees, and checkers");

  std::vector<std::string> sweep_paths;
  electsim::SweepOptions sweep_options;
  sweep_options.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* sweep = app.add_subcommand("sweep", "run many seeds of scenarios; fail on any seed that run would fail");
  sweep->add_option("scenarios", sweep_paths, "scenario files")->required();
  sweep->add_option("--seeds", sweep_options.seeds, "how many seeds")
      ->check(UnsignedText("a number of seeds", 1, 100000000))
      ->capture_default_str();
  sweep->add_option("--first-seed", sweep_options.first_seed, "first seed")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  sweep->add_option("--jobs", sweep_options.jobs, "parallel simulations")
      ->check(UnsignedText("a number of jobs", 1, 256))
      ->capture_default_str();
  sweep->add_option("--repro-dir", sweep_options.repro_dir, "where failing seeds write their repro files (\"\": none)")
      ->capture_default_str();
  sweep
      ->add_option("--max-repros", sweep_options.max_repros,
                   "repro files per scenario, for its first failing seeds (0: none)")
      ->check(UnsignedText("a number of repro files", 0, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();

  sweep->add_flag("--json", sweep_options.json_summary,
                  "print one JSON object at the end: per scenario, seeds run, met and failed, failing seeds, "
                  "violations (text lines go to standard error)");
  sweep->add_option("--metrics", sweep_options.metrics_path,
                    "write one CSV row per seed to FILE: verdict, election latencies, messages by class, terms");
  sweep->add_option("--set", sets, set_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  electsim::FuzzCommandLine fuzz_command_line;
  auto* fuzz = electsim::AddFuzzCommand(app, fuzz_command_line);
  electsim::ShrinkOptions shrink_options;
  auto* shrink = electsim::AddShrinkCommand(app, shrink_options);

  electsim::BenchOptions bench_options;
  bench_options.jobs = sweep_options.jobs;
  std::string bench_algorithms = "raft,bully,ring,lease";
  auto* bench =
      app.add_subcommand("bench", "compare election latency across algorithms, trial by trial under the same seeds");
  bench
      ->add_option("--algorithms", bench_algorithms,
                   "comma-separated algorithms; paired differences are against the first")
      ->capture_default_str();
  bench->add_option("--fault", bench_options.fault, "crash-leader, isolate-leader, pause-leader or lossy")
      ->capture_default_str();
  bench->add_option("--trials", bench_options.trials, "trials per algorithm (and per sweep point)")
      ->check(UnsignedText("a number of trials above 0", 1, electsim::kMaxBenchTrials))
      ->capture_default_str();
  bench->add_option("--nodes", bench_options.nodes, "cluster size")
      ->check(UnsignedText("a number of nodes", 1, electsim::kMaxNodes))
      ->capture_default_str();
  bench->add_option("--preset", bench_options.preset,
                    "timing from production defaults: equal-detection, etcd, hashicorp, kubernetes-lease, zookeeper");
  bench->add_option("--seed", bench_options.seed, "trial i runs under seed + i, for every algorithm")
      ->check(UnsignedText("a seed", 0, std::numeric_limits<uint64_t>::max() / 2))
      ->capture_default_str();
  bench->add_option("--jobs", bench_options.jobs, "parallel simulations")
      ->check(UnsignedText("a number of jobs", 1, 256))
      ->capture_default_str();
  bench->add_option("--sweep", bench_options.sweep,
                    "one parameter over a range: PARAM=FROM..TO[:POINTS], e.g. election_timeout_max=150ms..300ms:6, "
                    "nodes=3..9, drop=0..0.2:5");
  bench->add_option("--csv", bench_options.csv_path, "write every trial as a CSV row to FILE, in trial order");
  bench->add_option("--json", bench_options.json_path, "write every trial to FILE as JSON, in trial order");
  bench->add_option("--set", sets, set_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    if (app.get_subcommands().empty()) {
      // No command was recognised: say which there are.
      std::string given = "no command given";
      for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;
        given = fmt::format("unknown command \"{}\"", electsim::EscapeForTerminal(argv[i]));
        break;
      }
      std::cerr << fmt::format("electsim: {}; expected one of:{}\nrun 'electsim --help' for usage\n", given,
                               CommandList(app));
      return electsim::kExitBadInput;
    }
    std::cerr << "electsim: " << error.what() << "\n"
              << "run 'electsim --help' for usage\n";
    return electsim::kExitBadInput;
  }
  if (run->parsed() || replay->parsed()) electsim::HandleTerminatingSignals(electsim::SignalResponse::kExitNow);
  if (run->parsed()) {
    return electsim::Run(scenario_path, seed, trace_path, trace_format, repro_dir, quiet, sets, json_summary);
  }
  if (explain->parsed()) return electsim::Explain(explain_path, seed, explain_options);
  if (replay->parsed()) return electsim::Replay(repro_path, trace_path, trace_format, expected_trace);
  if (sweep->parsed()) {
    if (sweep_options.first_seed > std::numeric_limits<uint64_t>::max() - (sweep_options.seeds - 1)) {
      std::cerr << fmt::format("electsim: --first-seed {} with --seeds {} runs past the largest seed {}\n",
                               sweep_options.first_seed, sweep_options.seeds, std::numeric_limits<uint64_t>::max());
      return electsim::kExitBadInput;
    }
    auto overrides = electsim::ParseOverrides(sets);
    if (!overrides.ok()) return electsim::ReportError(overrides.status());
    sweep_options.overrides = std::move(*overrides);
    return electsim::Sweep(sweep_paths, sweep_options);
  }
  if (fuzz->parsed()) return electsim::RunFuzzCommand(fuzz_command_line);
  if (shrink->parsed()) return electsim::Shrink(shrink_options);
  if (bench->parsed()) {
    bench_options.algorithms.clear();
    for (size_t start = 0;;) {
      const size_t comma = bench_algorithms.find(',', start);
      bench_options.algorithms.push_back(bench_algorithms.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto overrides = electsim::ParseOverrides(sets);
    if (!overrides.ok()) return electsim::ReportError(overrides.status());
    bench_options.overrides = std::move(*overrides);
    return electsim::Bench(bench_options);
  }
  return electsim::List();
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc > 0) SetProgramName(argv[0]);
  // No exception leaves here: out of memory, or anything else unforeseen,
  // is a message and exit status 3. Unwinding to here runs the destructors
  // that remove temporary files.
  try {
    return RunCommandLine(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "electsim: out of memory\n";
  } catch (const std::exception& error) {
    std::cerr << "electsim: stopped by an unexpected error: " << error.what() << "\n";
  } catch (...) {
    std::cerr << "electsim: stopped by an unexpected error\n";
  }
  return kExitIncomplete;
}

}  // namespace electsim
