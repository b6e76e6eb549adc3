#include "tools/electsim/export/bench_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/export/metrics_csv.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {

using json = nlohmann::json;

// Summary statistics, in floating point: they are only printed.
struct Stats {
  size_t n = 0;
  double mean = 0, variance = 0;  // sample variance
  std::optional<double> p50, p90, p99;
  double max = 0;
  double ci95 = 0;  // half width, normal approximation
};

// A percentile is given only where there are trials enough to tell it from
// the maximum: p50 from 2, p90 from 10, p99 from 100.
Stats Summarize(std::vector<double> values) {
  Stats s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p of the trials at or below it.
  auto rank = [&](double p, size_t needed) -> std::optional<double> {
    if (values.size() < needed) return std::nullopt;
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::max<size_t>(k, 1) - 1];
  };
  s.p50 = rank(0.50, 2);
  s.p90 = rank(0.90, 10);
  s.p99 = rank(0.99, 100);
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

// How a measure's values print: nanoseconds as milliseconds, or as they are.
enum class Unit { kNanos, kCount };
std::string Value(double v, Unit unit) { return unit == Unit::kNanos ? Ms(v) : fmt::format("{:.1f}", v); }
std::string Value(const std::optional<double>& v, Unit unit) { return v ? Value(*v, unit) : std::string("—"); }

// A trial counts in the statistics when it ran and broke nothing.
bool Counted(const BenchTrial& t) { return t.ran && t.violations.empty(); }

// One row of the table: a measure, its values over the counted trials.
struct Measure {
  std::string name;
  std::function<void(const BenchTrial&, std::vector<double>&)> values;
  Unit unit = Unit::kNanos;
};

// A per-key measure of trials whose keys `counts` says it applies to.
Measure KeyMeasure(std::string name, Unit unit, std::function<bool(const checkers::ShardMetrics&)> counts,
                   std::function<double(const checkers::ShardMetrics&)> value) {
  return {std::move(name),
          [counts = std::move(counts), value = std::move(value)](const BenchTrial& t, std::vector<double>& out) {
            if (t.keys && counts(*t.keys)) out.push_back(value(*t.keys));
          },
          unit};
}

Measure Field(std::string name, std::optional<int64_t> BenchTrial::*field) {
  return {std::move(name), [field](const BenchTrial& t, std::vector<double>& out) {
            if (t.*field) out.push_back(static_cast<double>(*(t.*field)));
          }};
}

// The measures of a fault, and what they count from and to.
struct FaultMeasures {
  std::vector<Measure> measures;
  std::string legend;
};

FaultMeasures KeyMeasuresOf(const std::string& fault) {
  FaultMeasures m;
  const auto gaps = [](const checkers::ShardMetrics& k) { return k.ownership_gaps > 0; };
  const auto always = [](const checkers::ShardMetrics&) { return true; };
  const auto ns = [](sim::TimeNs checkers::ShardMetrics::*field) {
    return [field](const checkers::ShardMetrics& k) { return static_cast<double>((k.*field).ns()); };
  };
  const auto count = [](int64_t checkers::ShardMetrics::*field) {
    return [field](const checkers::ShardMetrics& k) { return static_cast<double>(k.*field); };
  };
  m.measures = {
      KeyMeasure("gap p50 (ms)", Unit::kNanos, gaps, ns(&checkers::ShardMetrics::gap_p50)),
      KeyMeasure("gap p99 (ms)", Unit::kNanos, gaps, ns(&checkers::ShardMetrics::gap_p99)),
      KeyMeasure("gap max (ms)", Unit::kNanos, gaps, ns(&checkers::ShardMetrics::gap_max)),
      KeyMeasure("keys moved", Unit::kCount, always, count(&checkers::ShardMetrics::keys_moved)),
      KeyMeasure("per replica min", Unit::kCount, always, count(&checkers::ShardMetrics::min_per_replica)),
      KeyMeasure("per replica max", Unit::kCount, always, count(&checkers::ShardMetrics::max_per_replica)),
      KeyMeasure("store peak req/s", Unit::kCount, always, count(&checkers::ShardMetrics::peak_store_requests_per_s)),
      KeyMeasure(
          "wake-ups per removal", Unit::kCount, [](const checkers::ShardMetrics& k) { return k.removals > 0; },
          [](const checkers::ShardMetrics& k) {
            return static_cast<double>(k.removal_wakeups) / static_cast<double>(k.removals);
          }),
  };
  const std::string what = fault == "replica-crash" ? "replica 0 crashes three TTLs in, once the keys have settled"
                           : fault == "replica-cut"
                               ? "replica 0 is cut off from every node, the store included, three TTLs in, for two "
                                 "TTLs"
                               : "the store slows down three TTLs in, for two TTLs unless --set "
                                 "algorithm.options.store_slowdown_for says otherwise (the note under each "
                                 "configuration gives its times and service time)";
  m.legend = what +
             "; from then on, per trial: gap = how long a key went without an owner, from losing one to the next "
             "owner's claim (p50, p99 and max over the trial's keys), keys moved = claims by another owner than "
             "the key's last, per replica = keys held by the least and the most loaded live replica at the end, "
             "store peak = requests reaching the store in its busiest 100ms, per second, wake-ups per removal = watch "
             "notices per deletion or expiry (of a key, or of a child in a line of waiters)";
  return m;
}

FaultMeasures MeasuresOf(const std::string& fault) {
  if (IsKeyFault(fault)) return KeyMeasuresOf(fault);
  FaultMeasures m;
  m.measures = {Field("detection", &BenchTrial::detection_ns), Field("election", &BenchTrial::election_ns)};
  if (fault == "isolate-leader") {
    m.measures.push_back(Field("known (majority)", &BenchTrial::known_ns));
    m.measures.push_back(Field("old leader acting", &BenchTrial::old_leader_acting_ns));
    m.measures.push_back(Field("settled after heal", &BenchTrial::settled_ns));
    m.legend =
        "failover from the cut: detection = a node of the majority side acting on it (candidate or leader), "
        "election = their first leader claim, known = a new leader known to every live node of the majority side; "
        "old leader acting = from the cut until the cut-off leader stepped down or the cut healed; settled after heal "
        "= from the heal until one leader is known to all";
  } else if (fault == "pause-leader") {
    m.measures.push_back(Field("known (others)", &BenchTrial::known_ns));
    m.measures.push_back(Field("old leader acting", &BenchTrial::old_leader_acting_ns));
    m.legend =
        "failover from the pause: detection = another node acting on it (candidate or leader), election = the first "
        "leader claim among them, known = a new leader known to every other live node; old leader acting = from the "
        "paused leader's resume until it stepped down";
  } else {
    m.measures.push_back(Field("known to all", &BenchTrial::known_ns));
    m.legend =
        "failover from the leader's crash: detection = a node acting on it (candidate or leader), election = the "
        "first leader claim, known = a new leader known to every live node";
  }
  if (fault == "lossy") {
    m.measures.push_back({"every election", [](const BenchTrial& t, std::vector<double>& out) {
                            for (int64_t ns : t.every_election_known_ns) out.push_back(static_cast<double>(ns));
                          }});
    m.legend +=
        "; every election = each election episode of the run, from its start to its leader known to all "
        "(the loss causes its own)";
  }
  return m;
}

std::vector<double> Values(const std::vector<BenchTrial>& trials, const Measure& measure) {
  std::vector<double> values;
  for (const BenchTrial& t : trials) {
    if (Counted(t)) measure.values(t, values);
  }
  return values;
}

}  // namespace

BenchTrial MeasureTrial(const RunResult& result, bool every_election) {
  const checkers::RunMetrics& m = result.metrics;
  BenchTrial t;
  t.ran = true;
  for (const std::string& name : result.violated_checkers()) t.violations += (t.violations.empty() ? "" : ";") + name;
  t.elections = m.elections.size();
  t.max_term = m.max_term;
  t.end_ns = result.end.ns();
  t.run_election_messages = m.messages_election;
  t.run_election_bytes = m.bytes_election;
  t.run_steady_state_messages = m.messages_steady_state;
  t.run_steady_state_bytes = m.bytes_steady_state;
  t.keys = result.shards;
  if (every_election) {
    for (const checkers::Election& e : m.elections) {
      if (e.known) t.every_election_known_ns.push_back((*e.known - e.started).ns());
    }
  }
  if (result.failovers.empty()) return t;
  const FailoverEpisode& f = result.failovers.front();
  auto since = [](const std::optional<sim::TimeNs>& time, sim::TimeNs from) -> std::optional<int64_t> {
    return time ? std::optional<int64_t>((*time - from).ns()) : std::nullopt;
  };
  t.fault_ns = f.started.ns();
  t.detection_ns = since(f.detected, f.started);
  t.election_ns = since(f.elected, f.started);
  t.known_ns = since(f.known, f.started);
  if (f.old_leader_acting) t.old_leader_acting_ns = f.old_leader_acting->ns();
  if (f.undone) t.settled_ns = since(f.settled, *f.undone);
  t.old_leader_back = f.old_leader_back;
  // The failover's election is the first to start at the fault or later;
  // the one before it elected the leader the fault struck.
  for (size_t i = 1; i < m.elections.size(); ++i) {
    if (m.elections[i].started < f.started) continue;
    if (m.elections[i].term >= 0 && m.elections[i - 1].term >= 0) {
      t.failover_terms = m.elections[i].term - m.elections[i - 1].term;
    }
    break;
  }
  t.failover_messages = f.election_messages;
  t.failover_bytes = f.election_bytes;
  return t;
}

const std::vector<CsvColumn>& BenchCsvColumns() {
  static const std::vector<CsvColumn> columns = {
      {"sweep", "the swept parameter (empty without --sweep)"},
      {"value", "its value in this row"},
      {"algorithm", "the algorithm"},
      {"nodes", "election nodes in the scenario that ran"},
      {"fault",
       "crash-leader, isolate-leader, pause-leader or lossy; for owners of keys: replica-crash, replica-cut or "
       "store-slowdown"},
      {"preset", "the timing preset (empty: the algorithm's defaults)"},
      {"set", "the --set changes every configuration ran with, PATH=VALUE, ';'-separated (empty: none)"},
      {"trial", "the trial's index i"},
      {"seed",
       "the seed it ran under: the first seed (--seed, or A of --seeds A..B) + i, the same for every algorithm"},
      {"violations", "checkers that fired, ';'-separated (such a trial is left out of the statistics)"},
      {"fault_ns", "when the fault struck the leader, from the start of the run (empty: it found no leader)"},
      {"detection_ns", "from the fault to the first node expected to take over acting (candidate or leader)"},
      {"election_ns", "from the fault to the first leader claim among them"},
      {"known_ns", "from the fault to a new leader known to all of them (the failover)"},
      {"old_leader_acting_ns",
       "isolate: from the cut until the old leader stepped down or the cut healed; pause: "
       "from its resume until it stepped down"},
      {"settled_ns", "isolate: from the heal until one leader was known to all"},
      {"old_leader_back", "1 when that leader was the old one winning back"},
      {"failover_terms",
       "terms or epochs the failover took: the new leader's less the struck leader's (above 1: a round ended "
       "without a leader, a split vote)"},
      {"elections", "election episodes in the whole run"},
      {"max_term", "the highest term or epoch reached"},
      {"failover_messages", "election messages sent from the fault until the new leader was known"},
      {"failover_bytes", "their estimated encoded bytes"},
      {"run_election_messages", "election messages of the whole run"},
      {"run_election_bytes", "their estimated encoded bytes"},
      {"run_steady_state_messages", "heartbeats, renewals and their replies in the whole run"},
      {"run_steady_state_bytes", "their estimated encoded bytes"},
      {"end_ns", "when the run ended"},
      {"keys", "owners of keys (a key fault): the keys"},
      {"ownership_gaps", "times, from the fault on, a key lost its owner and was owned again"},
      {"gap_p50_ns", "those gaps' median"},
      {"gap_p99_ns", "their 99th percentile"},
      {"gap_max_ns", "the longest"},
      {"keys_moved", "owner claims, from the fault on, by another node than the key's last owner"},
      {"unowned_at_end", "keys that lost their owner and had none when the run ended"},
      {"min_per_replica", "keys held by the least loaded live replica at the end"},
      {"max_per_replica", "keys held by the most loaded live replica at the end"},
      {"peak_store_requests_per_s", "requests reaching the store in its busiest 100ms from the fault on, per second"},
      {"removals", "deletions and expiries, from the fault on, a watcher was told of"},
      {"removal_wakeups", "watch notices those sent"},
  };
  return columns;
}

namespace {

// A trial's fields in BenchCsvColumns' order, as JSON values.
std::vector<json> RowValues(const BenchResults& b, const BenchConfig& c, uint64_t i, const BenchTrial& t) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  auto key = [&t](int64_t checkers::ShardMetrics::*field) { return t.keys ? json((*t.keys).*field) : json(nullptr); };
  auto key_ns = [&t](sim::TimeNs checkers::ShardMetrics::*field) {
    return t.keys ? json(((*t.keys).*field).ns()) : json(nullptr);
  };
  return {b.sweep,
          c.sweep_label,
          c.algorithm,
          c.scenario.nodes,
          b.fault,
          b.preset,
          fmt::format("{}", fmt::join(b.sets, ";")),
          i,
          b.first_seed + i,
          t.violations,
          opt(t.fault_ns),
          opt(t.detection_ns),
          opt(t.election_ns),
          opt(t.known_ns),
          opt(t.old_leader_acting_ns),
          opt(t.settled_ns),
          t.old_leader_back ? 1 : 0,
          opt(t.failover_terms),
          t.elections,
          t.max_term,
          t.failover_messages,
          t.failover_bytes,
          t.run_election_messages,
          t.run_election_bytes,
          t.run_steady_state_messages,
          t.run_steady_state_bytes,
          t.end_ns,
          key(&checkers::ShardMetrics::keys),
          key(&checkers::ShardMetrics::ownership_gaps),
          key_ns(&checkers::ShardMetrics::gap_p50),
          key_ns(&checkers::ShardMetrics::gap_p99),
          key_ns(&checkers::ShardMetrics::gap_max),
          key(&checkers::ShardMetrics::keys_moved),
          key(&checkers::ShardMetrics::unowned_at_end),
          key(&checkers::ShardMetrics::min_per_replica),
          key(&checkers::ShardMetrics::max_per_replica),
          key(&checkers::ShardMetrics::peak_store_requests_per_s),
          key(&checkers::ShardMetrics::removals),
          key(&checkers::ShardMetrics::removal_wakeups)};
}

// A --set value can hold a comma, a quote or a line break.
std::string CsvField(const json& value) {
  if (value.is_null()) return "";
  return CsvQuoted(value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

std::string BenchCsv(const BenchResults& b) {
  std::string csv;
  for (const CsvColumn& column : BenchCsvColumns()) csv += fmt::format("{}{}", csv.empty() ? "" : ",", column.name);
  csv += "\n";
  for (size_t c = 0; c < b.configs->size(); ++c) {
    for (uint64_t i = 0; i < b.trials; ++i) {
      const BenchTrial& t = (*b.results)[c][i];
      if (!t.ran) continue;
      const std::vector<json> values = RowValues(b, (*b.configs)[c], i, t);
      for (size_t k = 0; k < values.size(); ++k) {
        if (k > 0) csv += ',';
        csv += CsvField(values[k]);
      }
      csv += "\n";
    }
  }
  return csv;
}

namespace {

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
      const BenchTrial& t = (*b.results)[c][i];
      if (!t.ran) continue;
      const std::vector<json> values = RowValues(b, (*b.configs)[c], i, t);
      json row = json::object();
      for (size_t k = 0; k < values.size(); ++k) row[BenchCsvColumns()[k].name] = values[k];
      rows.push_back(std::move(row));
    }
  }
  std::vector<std::string> algorithms;
  for (size_t c = 0; c < b.algorithms && c < b.configs->size(); ++c) algorithms.push_back((*b.configs)[c].algorithm);
  return {{"electsim_bench", 1},
          {"algorithms", algorithms},
          {"fault", b.fault},
          {"nodes", UniformNodes(*b.configs)},
          {"preset", b.preset},
          {"set", b.sets},
          {"first_seed", b.first_seed},
          {"trials_per_configuration", b.trials},
          {"trials_requested", std::max(b.trials, b.trials_requested)},
          {"complete", b.trials >= b.trials_requested},
          {"sweep", b.sweep},
          {"results", rows}};
}

namespace {

// Where the table's cells go: aligned text, or a Markdown table.
class TableWriter {
 public:
  TableWriter(BenchFormat format, size_t first_width) : format_(format), first_(first_width) {}
  // Without a sweep (first_ 0) Markdown has no value column, as text has none.
  std::string Row(const std::vector<std::string>& cells) const {
    if (format_ == BenchFormat::kMarkdown) {
      return fmt::format("| {} |\n", fmt::join(cells.begin() + (first_ > 0 ? 0 : 1), cells.end(), " | "));
    }
    return fmt::format("{:<{}}{:<10}{:<20}{:>7}{:>9}{:>9}{:>9}{:>9}{:>20}\n", cells[0], first_, cells[1], cells[2],
                       cells[3], cells[4], cells[5], cells[6], cells[7], cells[8]);
  }
  // `measure`: what the third column names ("ms" when every measure is a latency).
  std::string Header(const std::string& measure) const {
    std::string out =
        Row({first_ > 0 ? "value" : "", "algorithm", measure, "n", "p50", "p90", "p99", "max", "mean ± 95% CI"});
    if (format_ == BenchFormat::kMarkdown)
      out += fmt::format("{}|---|---|--:|--:|--:|--:|--:|--:|\n", first_ > 0 ? "|---" : "");
    return out;
  }
  // What a configuration's trials add up to: a line under its rows in text;
  // in Markdown, where a line inside the table would break it, kept for
  // Notes() under the table, named by its configuration.
  std::string Note(const BenchConfig& config, const std::string& text) {
    if (format_ == BenchFormat::kText) return fmt::format("{:<{}}{}\n", "", first_ + 10, text);
    notes_.push_back(fmt::format("- {}{}: {}\n", config.sweep_label.empty() ? "" : config.sweep_label + " ",
                                 config.algorithm, text));
    return "";
  }
  // The notes kept for under a Markdown table (none in text).
  std::string Notes() const { return notes_.empty() ? "" : fmt::format("\n{}", fmt::join(notes_, "")); }

 private:
  BenchFormat format_;
  size_t first_;
  std::vector<std::string> notes_;
};

// What --set changed, as the flags say it: the title is all a reader of a
// copied table sees of the command.
std::string SetsText(const std::vector<std::string>& sets) {
  std::string text;
  for (const std::string& set : sets) text += fmt::format(", --set {}", EscapeForTerminal(set));
  return text;
}

std::string Header(const BenchResults& b, const std::string& legend, BenchFormat format) {
  const json nodes = UniformNodes(*b.configs);
  const std::string title = fmt::format(
      "fault {}, {}, preset {}{}, seeds {}..{} ({}){}", b.fault,
      nodes.is_null() ? "nodes by row" : fmt::format("{} nodes", nodes.get<uint32_t>()),
      b.preset.empty() ? "none" : b.preset, SetsText(b.sets), b.first_seed, b.first_seed + (b.trials - 1),
      b.trials >= b.trials_requested
          ? fmt::format("{} trial{} per row", b.trials, b.trials == 1 ? "" : "s")
          : fmt::format("{} of {} trials per row: interrupted", b.trials, b.trials_requested),
      b.sweep.empty()
          ? ""
          : fmt::format(", sweep over {}{}", b.sweep,
                        b.sweep_replaces.empty() ? "" : fmt::format(" (in place of {})", b.sweep_replaces)));
  const std::string method =
      "percentiles by nearest rank, given from 2 (p50), 10 (p90) and 100 (p99) trials; 95% CIs by the normal "
      "approximation; trials with a violation are left out";
  if (format == BenchFormat::kMarkdown) return fmt::format("**{}**\n\n{}; {}.\n\n", title, legend, method);
  return fmt::format("{}\n{};\n{}.\n", title, legend, method);
}

// Under a key fault's rows: what the trials add up to, and the slowdown
// each configuration ran.
std::string KeyNote(const BenchConfig& config, const std::vector<BenchTrial>& trials) {
  uint64_t counted = 0, violating = 0, gaps = 0, unowned = 0;
  for (const BenchTrial& t : trials) {
    if (!t.ran) continue;
    if (!Counted(t) || !t.keys) {
      violating += !Counted(t);
      continue;
    }
    ++counted;
    gaps += static_cast<uint64_t>(t.keys->ownership_gaps);
    unowned += t.keys->unowned_at_end > 0;
  }
  std::string slowdown;
  const algorithms::OptionValues& o = config.scenario.options;
  if (config.scenario.algorithm->uses_store() && o.Duration("store_slowdown_at").ns() > 0) {
    slowdown = fmt::format("store slowdown: {} per request from {} for {}; ",
                           sim::FormatDuration(o.Duration("store_slowdown_service_time")),
                           sim::FormatDuration(o.Duration("store_slowdown_at")),
                           sim::FormatDuration(o.Duration("store_slowdown_for")));
  }
  return fmt::format("{}gaps per trial {:.1f}; trials ending with a key unowned: {}; with a violation (left out): {}",
                     slowdown, counted == 0 ? 0.0 : static_cast<double>(gaps) / static_cast<double>(counted), unowned,
                     violating);
}

std::string ConfigRows(const BenchConfig& config, const std::vector<BenchTrial>& trials, const FaultMeasures& measures,
                       TableWriter& table, const std::string& fault) {
  std::string out;
  for (const Measure& measure : measures.measures) {
    const Stats s = Summarize(Values(trials, measure));
    const Unit u = measure.unit;
    out += table.Row({config.sweep_label, config.algorithm, measure.name, std::to_string(s.n), Value(s.p50, u),
                      Value(s.p90, u), Value(s.p99, u), s.n == 0 ? "—" : Value(s.max, u),
                      s.n == 0   ? "—"
                      : s.n == 1 ? fmt::format("{} ± n/a", Value(s.mean, u))  // no interval from one trial
                                 : fmt::format("{} ± {}", Value(s.mean, u), Value(s.ci95, u))});
  }
  if (IsKeyFault(fault)) return out + table.Note(config, KeyNote(config, trials));
  uint64_t counted = 0, violating = 0, unknown = 0, unstruck = 0, messages = 0, bytes = 0, back = 0, split = 0;
  for (const BenchTrial& t : trials) {
    if (!t.ran) continue;
    if (!Counted(t)) {
      ++violating;
      continue;
    }
    ++counted;
    // A fault that found no leader to strike (none elected by then) had no
    // failover to fail: not "no new leader".
    if (!t.fault_ns) {
      ++unstruck;
    } else {
      unknown += !t.known_ns;
    }
    back += t.old_leader_back;
    split += t.failover_terms.value_or(0) > 1;
    messages += t.failover_messages;
    bytes += t.failover_bytes;
  }
  const double per = counted == 0 ? 0 : 1.0 / static_cast<double>(counted);
  // Only where a term is a round of voting: a lease's token is a store
  // revision, which many writes move.
  const bool votes = !config.scenario.algorithm->message_roles().vote_grants.empty();
  return out +
         table.Note(
             config,
             fmt::format("per failover {:.1f} messages, {:.0f} bytes; {}no new leader known by the end: {}; old leader "
                         "back after the fault: {}; {}with a violation (left out): {}",
                         static_cast<double>(messages) * per, static_cast<double>(bytes) * per,
                         votes ? fmt::format("more than one term (split votes): {}; ", split) : "", unknown, back,
                         unstruck == 0
                             ? ""
                             : fmt::format("no leader for the fault to strike (nothing measured): {}; ", unstruck),
                         violating));
}

// This configuration against the first algorithm of its sweep point, trial
// by trial (the same seeds): the paired CI, the unpaired one, their ratio.
// The figure paired: the failover (known), or under a key fault the longest gap.
std::optional<int64_t> PairedFigure(const BenchTrial& t) {
  if (!Counted(t)) return std::nullopt;
  if (t.keys) return t.keys->ownership_gaps > 0 ? std::optional<int64_t>(t.keys->gap_max.ns()) : std::nullopt;
  return t.known_ns;
}

std::string PairedRow(const BenchConfig& config, const std::vector<BenchTrial>& trials,
                      const std::vector<BenchTrial>& base, BenchFormat format) {
  std::vector<double> differences, a_values, b_values;
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::optional<int64_t> a = PairedFigure(trials[i]);
    const std::optional<int64_t> b = PairedFigure(base[i]);
    if (a) a_values.push_back(static_cast<double>(*a));
    if (b) b_values.push_back(static_cast<double>(*b));
    if (a && b) differences.push_back(static_cast<double>(*a - *b));
  }
  const Stats d = Summarize(differences), a = Summarize(a_values), b = Summarize(b_values);
  const double unpaired =
      (a.n > 1 && b.n > 1)
          ? 1.96 * std::sqrt(a.variance / static_cast<double>(a.n) + b.variance / static_cast<double>(b.n))
          : 0;
  // No pair, no difference to show; one pair, no interval.
  const std::string difference = d.n == 0   ? "—"
                                 : d.n == 1 ? fmt::format("{} ± n/a", Ms(d.mean))
                                            : fmt::format("{} ± {}", Ms(d.mean), Ms(d.ci95));
  // A list item in Markdown, where indented lines would run together.
  return fmt::format("{}{}{:<10}{:>5} pairs: {} (unpaired ± {}; paired/unpaired CI width {})\n",
                     format == BenchFormat::kMarkdown ? "- " : "  ",
                     config.sweep_label.empty() ? "" : config.sweep_label + " ", config.algorithm, d.n, difference,
                     unpaired > 0 ? Ms(unpaired) : "n/a",
                     unpaired > 0 && d.n > 1 ? fmt::format("{:.2f}", d.ci95 / unpaired) : std::string("n/a"));
}

}  // namespace

std::string BenchTable(const BenchResults& b, BenchFormat format) {
  const std::vector<BenchConfig>& configs = *b.configs;
  const FaultMeasures measures = MeasuresOf(b.fault);
  TableWriter table(format, b.sweep.empty() ? 0 : std::max<size_t>(10, b.sweep.size() + 2));
  std::string out = Header(b, measures.legend, format) + table.Header(IsKeyFault(b.fault) ? "measure" : "ms");
  for (size_t c = 0; c < configs.size(); ++c) out += ConfigRows(configs[c], (*b.results)[c], measures, table, b.fault);
  out += table.Notes();
  // Against the first algorithm at each sweep point; one algorithm swept
  // over a parameter, against its first point.
  const bool against_first_point = b.algorithms == 1 && configs.size() > 1;
  bool header = false;
  for (size_t c = 0; c < configs.size(); ++c) {
    const size_t base = against_first_point ? 0 : c - c % b.algorithms;
    if (c == base) continue;
    if (!header) {
      const std::string versus = against_first_point
                                     ? fmt::format("{} at {}={}", configs[0].algorithm, b.sweep, configs[0].sweep_label)
                                     : configs[base].algorithm;
      out += fmt::format("{}paired difference in {} vs {}, same seeds, ms, 95% CIs by the normal approximation:\n",
                         format == BenchFormat::kMarkdown ? "\n" : "",
                         IsKeyFault(b.fault) ? "the longest ownership gap" : "the failover (known)", versus);
      header = true;
    }
    out += PairedRow(configs[c], (*b.results)[c], (*b.results)[base], format);
  }
  return out;
}

}  // namespace electsim
