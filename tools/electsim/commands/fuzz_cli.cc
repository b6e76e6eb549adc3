#include "tools/electsim/commands/fuzz_cli.h"

#include <charconv>
#include <limits>
#include <thread>

#include "fmt/format.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/duration.h"
#include "tools/electsim/language/json_document.h"

namespace electsim {
namespace {

std::optional<uint64_t> Unsigned(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "A..B" split at "..".
std::optional<std::pair<std::string, std::string>> Range(const std::string& text) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) return std::nullopt;
  return std::make_pair(text.substr(0, dots), text.substr(dots + 2));
}

absl::Status Bad(std::string_view flag, std::string_view expected, const std::string& got) {
  return InputError(fmt::format("{}: expected {}; got \"{}\"", flag, expected, EscapeForTerminal(got)));
}

absl::Status Check(FuzzCommandLine& cl) {
  FuzzOptions& o = cl.options;
  if (!cl.seeds.empty()) {
    const auto range = Range(cl.seeds);
    const auto first = range ? Unsigned(range->first) : std::nullopt;
    const auto last = range ? Unsigned(range->second) : std::nullopt;
    if (!first || !last || *last < *first) return Bad("--seeds", "A..B, two seeds with A <= B", cl.seeds);
    o.first_seed = *first;
    o.last_seed = *last;
  } else if (!cl.time_budget.empty()) {
    o.last_seed = std::numeric_limits<uint64_t>::max() - 1;  // until the budget is spent
  }
  if (!cl.time_budget.empty()) {
    auto budget = ParseDuration(cl.time_budget);
    if (!budget.ok() || budget->ns() <= 0)
      return Bad("--time-budget", "a positive duration such as 60s", cl.time_budget);
    o.time_budget = *budget;
  }
  if (!cl.nodes.empty()) {
    const auto range = Range(cl.nodes);
    auto min = range ? Unsigned(range->first) : Unsigned(cl.nodes);
    auto max = range ? Unsigned(range->second) : min;
    if (!min || !max || *min < 1 || *max > kMaxNodes || *max < *min) {
      return Bad("--nodes", fmt::format("N or MIN..MAX within [1, {}]", kMaxNodes), cl.nodes);
    }
    o.generator.nodes_min = static_cast<uint32_t>(*min);
    o.generator.nodes_max = static_cast<uint32_t>(*max);
  }
  if (!cl.duration.empty()) {
    const auto range = Range(cl.duration);
    auto min = ParseDuration(range ? range->first : cl.duration);
    auto max = ParseDuration(range ? range->second : cl.duration);
    if (!min.ok() || !max.ok() || *min < sim::TimeNs::Seconds(1) || *max < *min) {
      return Bad("--duration", "D or MIN..MAX, durations of at least 1s", cl.duration);
    }
    o.generator.duration_min = *min;
    o.generator.duration_max = *max;
  }
  if (!cl.faults.empty()) {
    const auto kinds = ParseFaultKindList(cl.faults);
    if (!kinds) {
      return Bad("--faults",
                 fmt::format("fault kinds separated by commas, of {}", FaultKindList(algorithms::FaultKinds::All())),
                 cl.faults);
    }
    o.generator.fault_kinds = *kinds;
  }
  if (!cl.shard.empty()) {
    const size_t slash = cl.shard.find('/');
    const auto k = slash == std::string::npos ? std::nullopt : Unsigned(cl.shard.substr(0, slash));
    const auto n = slash == std::string::npos ? std::nullopt : Unsigned(cl.shard.substr(slash + 1));
    if (!k || !n || *k < 1 || *k > *n) return Bad("--shard", "K/N with 1 <= K <= N", cl.shard);
    o.shard_index = *k;
    o.shard_count = *n;
  }
  if (cl.guarantees_of == "defaults") {
    o.guarantees_of = GuaranteesOf::kDefaults;
  } else if (cl.guarantees_of != "options") {
    return Bad("--guarantees-of", "options or defaults", cl.guarantees_of);
  }
  if (cl.liveness == "finding") {
    o.liveness_guaranteed = false;
  } else if (cl.liveness != "guarantee") {
    return Bad("--liveness", "guarantee or finding", cl.liveness);
  }
  if (cl.merge.empty() && o.algorithm.empty()) return InputError("fuzz: expected --algorithm NAME (or --merge)");
  if (cl.emit_scenario && !cl.seed) return InputError("--emit-scenario: expected --seed N too");
  if (cl.seed && !cl.emit_scenario) return InputError("--seed: expected --emit-scenario (for a range: --seeds A..B)");
  return absl::OkStatus();
}

}  // namespace

CLI::App* AddFuzzCommand(CLI::App& app, FuzzCommandLine& cl) {
  FuzzOptions& o = cl.options;
  o.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* fuzz = app.add_subcommand("fuzz", "run generated scenarios, fail on a broken declared guarantee");
  fuzz->add_option("--algorithm", o.algorithm, "algorithm to fuzz");
  fuzz->add_option("--option", o.options, "algorithm option NAME=VALUE (repeatable)");
  fuzz->add_option("--set", o.sets, "PATH=VALUE: change every generated scenario as run --set does (repeatable)");
  fuzz->add_flag("--fencing", o.generator.fencing, "the resource checks fencing tokens");
  fuzz->add_option("--guarantees-of", cl.guarantees_of,
                   "judge by the guarantees of the options given (options), or of the algorithm's defaults with "
                   "a fencing resource (defaults: to show that a deliberate bug breaks them)")
      ->capture_default_str();
  fuzz->add_option("--liveness", cl.liveness,
                   "a run with no stable leader once its faults are over: a broken guarantee (guarantee) or a "
                   "finding (finding: for Bully and Ring)")
      ->capture_default_str();
  fuzz->add_option("--seeds", cl.seeds, "seed range A..B (default 1..1000)");
  fuzz->add_option("--time-budget", cl.time_budget, "stop starting seeds after this long, e.g. 60s");
  fuzz->add_option("--nodes", cl.nodes, "cluster size N or MIN..MAX (default 3..7)");
  fuzz->add_option("--duration", cl.duration, "simulated run length D or MIN..MAX (default 10s..30s)");
  fuzz->add_option("--faults", cl.faults,
                   "fault kinds to draw from, e.g. loss,crash (default: all; each seed turns on a random subset)");
  fuzz->add_option("--jobs", o.jobs, "parallel simulations (default: every core)")->check(CLI::Range(1, 256));
  fuzz->add_option("--shard", cl.shard, "run only shard K of N (K/N), to split a run across processes or machines");
  fuzz->add_flag("--stop-at-first-failure", o.stop_at_first_failure,
                 "stop at the first seed (in seed order) that breaks a guarantee");
  fuzz->add_option("--summary", o.summary_path, "write a JSON summary (merge shards' with --merge)");
  fuzz->add_option("--junit", o.junit_path, "write a JUnit XML report: one test case per failing seed");
  fuzz->add_option("--repro-dir", o.repro_dir, "where failing seeds write repro files (\"\": none)")
      ->capture_default_str();
  fuzz->add_option("--max-repros", o.max_repros, "repro files for the first failing seeds")->capture_default_str();
  fuzz->add_option("--shrink-runs", o.shrink_runs, "runs spent shrinking each repro (0: do not shrink)")
      ->capture_default_str();
  fuzz->add_option("--seed", cl.seed, "with --emit-scenario: the one seed");
  fuzz->add_flag("--emit-scenario", cl.emit_scenario, "print the scenario of --seed and exit");
  fuzz->add_option("--merge", cl.merge, "combine these shard summaries (into --summary, --junit)");
  return fuzz;
}

int RunFuzzCommand(FuzzCommandLine& cl) {
  if (auto status = Check(cl); !status.ok()) return ReportError(status);
  if (!cl.merge.empty()) return MergeFuzzSummaries(cl.merge, cl.options.summary_path, cl.options.junit_path);
  if (cl.emit_scenario) return EmitFuzzScenario(cl.options, *cl.seed);
  return Fuzz(cl.options);
}

CLI::App* AddShrinkCommand(CLI::App& app, ShrinkOptions& options) {
  auto* shrink = app.add_subcommand("shrink", "reduce a repro to a minimal one that breaks the same invariant");
  shrink->add_option("repro", options.repro_path, "repro file")->required();
  shrink->add_option("--invariant", options.invariant, "the invariant to keep broken (default: the repro's first)");
  shrink->add_option("--max-runs", options.max_runs, "simulations to spend at most")->capture_default_str();
  shrink->add_option("--out", options.out_prefix,
                     "write OUT.repro.json and OUT.json (default: the repro's name with .shrunk)");
  return shrink;
}

}  // namespace electsim
