#include "tools/electsim/export/bench_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "fmt/format.h"

namespace electsim {
namespace {

using json = nlohmann::json;

// Summary statistics, in floating point: they are only printed.
struct Stats {
  size_t n = 0;
  double mean = 0, variance = 0;  // sample variance
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  double ci95 = 0;  // half width, normal approximation
};

Stats Summarize(std::vector<double> values) {
  Stats s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p of the trials at or below it.
  auto rank = [&](double p) {
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::max<size_t>(k, 1) - 1];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = values.back();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.variance = squares / static_cast<double>(s.n - 1);
    s.ci95 = 1.96 * std::sqrt(s.variance / static_cast<double>(s.n));
  }
  return s;
}

std::string Ms(double ns) { return fmt::format("{:.1f}", ns / 1e6); }

using Metric = std::optional<int64_t> BenchTrial::*;
struct MetricColumn {
  const char* name;
  Metric field;
};
const MetricColumn kMetrics[] = {{"detection", &BenchTrial::detection_ns},
                                 {"election", &BenchTrial::election_ns},
                                 {"known to all", &BenchTrial::known_ns}};

std::vector<double> Values(const std::vector<BenchTrial>& trials, Metric field) {
  std::vector<double> values;
  for (const BenchTrial& t : trials) {
    if (t.ran && t.*field) values.push_back(static_cast<double>(*(t.*field)));
  }
  return values;
}

std::string Optional(const std::optional<int64_t>& value) { return value ? std::to_string(*value) : std::string(); }

}  // namespace

BenchTrial MeasureTrial(const RunResult& result) {
  const checkers::RunMetrics& m = result.metrics;
  BenchTrial t;
  t.ran = true;
  for (const std::string& name : result.violated_checkers()) t.violations += (t.violations.empty() ? "" : ";") + name;
  t.elections = m.elections.size();
  t.max_term = m.max_term;
  t.messages_election = m.messages_election;
  t.messages_steady_state = m.messages_steady_state;
  t.bytes_election = m.bytes_election;
  t.bytes_steady_state = m.bytes_steady_state;
  t.end_ns = result.end.ns();
  if (!m.elections.empty()) {
    // The last episode: the one the fault caused (MetricsCsvRow measures the same).
    const checkers::Election& e = m.elections.back();
    t.cause = e.cause;
    auto since = [&](const std::optional<sim::TimeNs>& time) -> std::optional<int64_t> {
      if (!time) return std::nullopt;
      return (*time - e.started).ns();
    };
    t.detection_ns = since(e.detected);
    t.election_ns = since(e.elected);
    t.known_ns = since(e.known);
    t.election_messages = e.election_messages;
    t.election_bytes = e.election_bytes;
  }
  return t;
}

std::string BenchCsv(const BenchResults& b) {
  std::string csv =
      "sweep,value,algorithm,nodes,fault,preset,trial,seed,violations,elections,cause,detection_ns,election_ns,"
      "known_ns,max_term,election_messages,messages_election,messages_steady_state,end_ns,election_bytes,"
      "bytes_election,bytes_steady_state\n";
  for (size_t c = 0; c < b.configs->size(); ++c) {
    const BenchConfig& config = (*b.configs)[c];
    for (uint64_t i = 0; i < b.trials; ++i) {
      const BenchTrial& t = (*b.results)[c][i];
      if (!t.ran) continue;
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", b.sweep,
                         config.sweep_label, config.algorithm, config.scenario.nodes, b.fault, b.preset, i,
                         b.first_seed + i, t.violations, t.elections, t.cause, Optional(t.detection_ns),
                         Optional(t.election_ns), Optional(t.known_ns), t.max_term, t.election_messages,
                         t.messages_election, t.messages_steady_state, t.end_ns, t.election_bytes, t.bytes_election,
                         t.bytes_steady_state);
    }
  }
  return csv;
}

namespace {

json TrialJson(const BenchResults& b, const BenchConfig& c, uint64_t trial, const BenchTrial& t) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return json{{"sweep", b.sweep},
              {"value", c.sweep_label},
              {"algorithm", c.algorithm},
              {"nodes", c.scenario.nodes},
              {"trial", trial},
              {"seed", b.first_seed + trial},
              {"violations", t.violations},
              {"elections", t.elections},
              {"cause", t.cause},
              {"detection_ns", opt(t.detection_ns)},
              {"election_ns", opt(t.election_ns)},
              {"known_ns", opt(t.known_ns)},
              {"max_term", t.max_term},
              {"election_messages", t.election_messages},
              {"messages_election", t.messages_election},
              {"messages_steady_state", t.messages_steady_state},
              {"end_ns", t.end_ns},
              {"election_bytes", t.election_bytes},
              {"bytes_election", t.bytes_election},
              {"bytes_steady_state", t.bytes_steady_state}};
}

// The cluster size every configuration ran, or null when they differ.
json UniformNodes(const std::vector<BenchConfig>& configs) {
  std::set<uint32_t> sizes;
  for (const BenchConfig& c : configs) sizes.insert(c.scenario.nodes);
  return sizes.size() == 1 ? json(*sizes.begin()) : json(nullptr);
}

}  // namespace

json BenchJson(const BenchResults& b) {
  json rows = json::array();
  for (size_t c = 0; c < b.configs->size(); ++c) {
    for (uint64_t i = 0; i < b.trials; ++i) {
      if ((*b.results)[c][i].ran) rows.push_back(TrialJson(b, (*b.configs)[c], i, (*b.results)[c][i]));
    }
  }
  std::vector<std::string> algorithms;
  for (size_t c = 0; c < b.algorithms && c < b.configs->size(); ++c) algorithms.push_back((*b.configs)[c].algorithm);
  return {{"algorithms", algorithms},
          {"fault", b.fault},
          {"nodes", UniformNodes(*b.configs)},
          {"preset", b.preset},
          {"first_seed", b.first_seed},
          {"trials_per_configuration", b.trials},
          {"sweep", b.sweep},
          {"results", rows}};
}

namespace {

constexpr std::string_view kRowFormat = "{:<{}}{:<10}{:<14}{:>7}{:>9}{:>9}{:>9}{:>9}{:>18}\n";

// "fault crash-leader, 5 nodes, ...": the cluster size the configurations ran.
std::string Header(const BenchResults& b) {
  const json nodes = UniformNodes(*b.configs);
  return fmt::format("fault {}, {}, preset {}, seeds {}..{}{}\n", b.fault,
                     nodes.is_null() ? "nodes by row" : fmt::format("{} nodes", nodes.get<uint32_t>()),
                     b.preset.empty() ? "none" : b.preset, b.first_seed, b.first_seed + (b.trials - 1),
                     b.sweep.empty() ? "" : ", sweep over " + b.sweep);
}

// Latency rows and the message line of one configuration.
std::string ConfigRows(const BenchConfig& config, const std::vector<BenchTrial>& trials, size_t first) {
  uint64_t ran = 0, violating = 0, messages = 0, bytes = 0, measured = 0;
  for (const BenchTrial& t : trials) {
    if (!t.ran) continue;
    ++ran;
    if (!t.violations.empty()) ++violating;
    if (t.known_ns) {
      messages += t.election_messages;
      bytes += t.election_bytes;
      ++measured;
    }
  }
  std::string out;
  for (const MetricColumn& metric : kMetrics) {
    const Stats s = Summarize(Values(trials, metric.field));
    if (s.n == 0) {
      out += fmt::format(fmt::runtime(kRowFormat), config.sweep_label, first, config.algorithm, metric.name, 0, "-",
                         "-", "-", "-", "-");
      continue;
    }
    out += fmt::format(fmt::runtime(kRowFormat), config.sweep_label, first, config.algorithm, metric.name, s.n,
                       Ms(s.p50), Ms(s.p90), Ms(s.p99), Ms(s.max), fmt::format("{} ± {}", Ms(s.mean), Ms(s.ci95)));
  }
  auto per_election = [measured](uint64_t total) {
    return measured == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(measured);
  };
  return out + fmt::format(
                   "{:<{}}messages per election {:.1f}, bytes per election {:.0f}; not known to all by the end: {}; "
                   "with a violation: {}\n",
                   "", first + 10, per_election(messages), per_election(bytes), ran - measured, violating);
}

// The same trial (seed) under this configuration and the first algorithm's.
std::string PairedRow(const BenchConfig& config, const std::vector<BenchTrial>& trials,
                      const std::vector<BenchTrial>& base, size_t first) {
  std::vector<double> differences;
  for (size_t i = 0; i < trials.size(); ++i) {
    const BenchTrial& a = trials[i];
    const BenchTrial& b = base[i];
    if (a.ran && b.ran && a.known_ns && b.known_ns)
      differences.push_back(static_cast<double>(*a.known_ns - *b.known_ns));
  }
  const Stats d = Summarize(differences);
  const Stats a = Summarize(Values(trials, &BenchTrial::known_ns));
  const Stats b = Summarize(Values(base, &BenchTrial::known_ns));
  const double unpaired =
      (a.n > 1 && b.n > 1)
          ? 1.96 * std::sqrt(a.variance / static_cast<double>(a.n) + b.variance / static_cast<double>(b.n))
          : 0;
  return fmt::format("{:<{}}{:<10}{:>5} pairs: {} ± {}; paired/unpaired CI width {}\n", config.sweep_label, first,
                     config.algorithm, d.n, Ms(d.mean), Ms(d.ci95),
                     unpaired > 0 ? fmt::format("{:.2f}", d.ci95 / unpaired) : std::string("n/a"));
}

}  // namespace

// Per configuration: latencies, messages per election, violations; then
// each algorithm against the first on the same trials.
std::string BenchTable(const BenchResults& b) {
  const std::vector<BenchConfig>& configs = *b.configs;
  std::string out = Header(b);
  const size_t first = b.sweep.empty() ? 0 : std::max<size_t>(10, b.sweep.size() + 2);
  out += fmt::format(fmt::runtime(kRowFormat), b.sweep, first, "algorithm", "ms", "trials", "p50", "p90", "p99", "max",
                     "mean ± 95% CI");
  for (size_t c = 0; c < configs.size(); ++c) out += ConfigRows(configs[c], (*b.results)[c], first);
  bool header = false;
  for (size_t c = 0; c < configs.size(); ++c) {
    const size_t base = c - c % b.algorithms;  // the first algorithm at this sweep point
    if (c == base) continue;
    if (!header) {
      out += fmt::format("paired difference in time known to all vs {} (same seeds), ms:\n", configs[base].algorithm);
      header = true;
    }
    out += PairedRow(configs[c], (*b.results)[c], (*b.results)[base], first);
  }
  return out;
}

}  // namespace electsim
