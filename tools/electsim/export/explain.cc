#include "tools/electsim/export/explain.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "checkers/checker.h"
#include "electsim/algorithms/store.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/trace_json.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {

using sim::TraceKind;

// A trace record kept for the account: what it says, and its place in
// happened-before (the count of events at its node up to it, and for the
// records a claim can rest on, the whole vector clock).
struct Event {
  uint64_t index = 0;
  sim::TimeNs time;
  TraceKind kind = TraceKind::kNote;
  uint32_t node = kNone;
  uint32_t peer = kNone;
  uint64_t message_id = 0;
  int64_t value = 0;
  std::string detail;
  std::optional<sim::Payload> payload;
  uint32_t seq = 0;  // this node's own vector-clock component at the event

  static constexpr uint32_t kNone = UINT32_MAX;
  bool Observes(const sim::RecordType& type) const {
    return kind == TraceKind::kObserve && payload && payload->Is(type);
  }
};

bool IsFault(TraceKind kind) {
  return kind == TraceKind::kCrash || kind == TraceKind::kRestart || kind == TraceKind::kPause ||
         kind == TraceKind::kResume || kind == TraceKind::kClock || kind == TraceKind::kNetwork;
}
bool IsFaultStep(const Event& e) { return e.kind == TraceKind::kNote && e.detail.rfind("fault ", 0) == 0; }

// Keeps what an account can need: every record but timers being set or
// cancelled and storage writes, with vector clocks carried on messages.
class Recorder final : public sim::TraceSink {
 public:
  explicit Recorder(uint32_t total_nodes) : clocks_(total_nodes, std::vector<uint32_t>(total_nodes, 0)) {}

  void OnRecord(const sim::TraceRecord& r) override {
    const bool at_node = r.node != sim::kNoNode && r.node.value() < clocks_.size();
    const uint32_t node = at_node ? r.node.value() : Event::kNone;
    if (at_node) {
      std::vector<uint32_t>& clock = clocks_[node];
      if (r.kind == TraceKind::kDeliver) {
        if (auto it = in_flight_.find(r.message_id); it != in_flight_.end()) {
          for (size_t i = 0; i < clock.size(); ++i) clock[i] = std::max(clock[i], it->second.clock[i]);
          if (--it->second.copies == 0) in_flight_.erase(it);
        }
      }
      ++clock[node];
      if (r.kind == TraceKind::kSend) in_flight_[r.message_id] = InFlight{clock, 1};
      if (r.kind == TraceKind::kDuplicate) {
        if (auto it = in_flight_.find(r.message_id); it != in_flight_.end()) ++it->second.copies;
      }
      if (r.kind == TraceKind::kDrop) {
        if (auto it = in_flight_.find(r.message_id); it != in_flight_.end() && --it->second.copies == 0) {
          in_flight_.erase(it);
        }
      }
    }
    switch (r.kind) {
      case TraceKind::kTimerSet:
      case TraceKind::kTimerCancel:
      case TraceKind::kPersist:
      case TraceKind::kWrite:
      case TraceKind::kSync: return;
      default: break;
    }
    Event e{.index = r.index,
            .time = r.time,
            .kind = r.kind,
            .node = node,
            .peer = r.peer == sim::kNoNode ? Event::kNone : r.peer.value(),
            .message_id = r.message_id,
            .value = r.value,
            .detail = std::string(r.detail)};
    if (r.payload != nullptr) e.payload = *r.payload;
    if (at_node) e.seq = clocks_[node][node];
    if (at_node && r.kind == TraceKind::kObserve) clock_at_[r.index] = clocks_[node];
    events_.push_back(std::move(e));
  }

  const std::vector<Event>& events() const { return events_; }
  // The vector clock at an observation.
  const std::vector<uint32_t>* ClockAt(uint64_t index) const {
    auto it = clock_at_.find(index);
    return it == clock_at_.end() ? nullptr : &it->second;
  }
  const Event* Find(uint64_t index) const {
    auto it =
        std::lower_bound(events_.begin(), events_.end(), index, [](const Event& e, uint64_t i) { return e.index < i; });
    return it != events_.end() && it->index == index ? &*it : nullptr;
  }

 private:
  struct InFlight {
    std::vector<uint32_t> clock;
    int copies = 1;
  };
  std::vector<std::vector<uint32_t>> clocks_;
  std::map<uint64_t, InFlight> in_flight_;
  std::vector<Event> events_;
  std::map<uint64_t, std::vector<uint32_t>> clock_at_;
};

// As the checkers print times: seconds with every microsecond.
std::string Seconds(sim::TimeNs t) { return fmt::format("{}.{:06}s", t.ns() / 1000000000, t.ns() % 1000000000 / 1000); }

// "type{field=value …}", roles and store event kinds named.
std::string DescribePayload(const sim::Payload& p) {
  std::string out = std::string(p.type_name()) + "{";
  bool first = true;
  for (const sim::Field& f : p.fields()) {
    if (!first) out.push_back(' ');
    first = false;
    if (p.Is(vocab::kRoleChange) && f.key == vocab::kFieldRole && f.value >= 0 && f.value <= 2) {
      out += fmt::format("{}={}", f.key, vocab::RoleName(static_cast<vocab::Role>(f.value)));
    } else if (p.Is(algorithms::store::kStoreEvent) && f.key == "kind") {
      const auto kind = static_cast<algorithms::store::EventKind>(f.value);
      out += fmt::format("{}={}", f.key,
                         kind == algorithms::store::EventKind::kExpire   ? "expire"
                         : kind == algorithms::store::EventKind::kPut    ? "put"
                         : kind == algorithms::store::EventKind::kDelete ? "delete"
                                                                         : std::to_string(f.value));
    } else {
      out += fmt::format("{}={}", f.key, f.value);
    }
  }
  return out + "}";
}

class Account {
 public:
  Account(const Scenario& scenario, const RunResult& result, const Recorder& recorder, const ExplainOptions& options)
      : scenario_(scenario),
        result_(result),
        recorder_(recorder),
        options_(options),
        epoch_word_(scenario.algorithm->name() == "raft" || scenario.algorithm->name() == "lease" ? "term" : "epoch") {}

  std::string Write() {
    const checkers::Violation& v = *std::min_element(
        result_.violations.begin(), result_.violations.end(),
        [](const checkers::Violation& a, const checkers::Violation& b) { return a.trace_index < b.trace_index; });
    violation_ = &v;
    Line(fmt::format("violation: {}", checkers::DescribeViolation(v)));
    for (const checkers::Violation& other : result_.violations) {
      if (&other != &v) Line(fmt::format("  also: {}", checkers::DescribeViolation(other)));
    }
    Claims();
    Facts();
    Timeline();
    return out_;
  }

 private:
  void Line(const std::string& text) { out_ += EscapeForTerminal(text) + "\n"; }

  std::string Node(uint32_t node) const { return NodeLabel(scenario_, node); }

  // The node's last leader claim at or before the violation.
  const Event* LeaderClaim(uint32_t node) const {
    const Event* claim = nullptr;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      if (e.node == node && e.Observes(vocab::kRoleChange) &&
          e.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader)) {
        claim = &e;
      }
    }
    return claim;
  }

  // The resource's last acceptance of a write from `writer` at or before the violation.
  const Event* LastAccepted(uint32_t writer) const {
    const Event* accepted = nullptr;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      if (e.Observes(vocab::kResourceAccept) && e.payload->Get(vocab::kFieldWriter) == writer) accepted = &e;
    }
    return accepted;
  }

  // When `node` left the leader role after `claim`, if it did before the violation.
  std::optional<sim::TimeNs> LeftLeadership(uint32_t node, const Event& claim) const {
    for (const Event& e : recorder_.events()) {
      if (e.index <= claim.index) continue;
      if (e.index > violation_->trace_index) break;
      if (e.node != node) continue;
      if (e.kind == TraceKind::kCrash) return e.time;
      if (e.Observes(vocab::kRoleChange) &&
          e.payload->Get(vocab::kFieldRole) != static_cast<int64_t>(vocab::Role::kLeader)) {
        return e.time;
      }
    }
    return std::nullopt;
  }

  void Claims() {
    const std::vector<sim::NodeId>& nodes = violation_->nodes;
    std::vector<const Event*> claims;
    for (const sim::NodeId id : nodes) {
      const Event* claim = LeaderClaim(id.value());
      if (claim == nullptr) continue;
      claims.push_back(claim);
      claims_.push_back(claim->index);
    }
    // The stale write of a stale_token or unique_token violation is the
    // record that exposed it: a write the resource accepted.
    const Event* exposing = recorder_.Find(violation_->trace_index);
    if (exposing != nullptr && exposing->Observes(vocab::kResourceAccept)) {
      const int64_t writer = exposing->payload->Get(vocab::kFieldWriter);
      const int64_t token = exposing->payload->Get(vocab::kFieldToken);
      const int64_t highest = exposing->payload->Get(vocab::kFieldHighest);
      const bool stale = token < highest;
      Line(fmt::format("  {}: {} wrote under token {}; the resource accepted it at {} (trace #{}){}",
                       stale ? "stale write" : "second writer", Node(static_cast<uint32_t>(writer)), token,
                       Seconds(exposing->time), exposing->index,
                       stale ? fmt::format(", after accepting token {}", highest) : ""));
    }
    if (claims.size() == 2 &&
        claims[0]->payload->Get(vocab::kFieldTerm) == claims[1]->payload->Get(vocab::kFieldTerm)) {
      Line(fmt::format("  both leaders: {} and {}, {} {}", Node(claims[0]->node), Node(claims[1]->node), epoch_word_,
                       claims[0]->payload->Get(vocab::kFieldTerm)));
    }
    // Newest claim last: with two claims of different tokens, the later is the new holder.
    std::sort(claims.begin(), claims.end(), [](const Event* a, const Event* b) { return a->index < b->index; });
    for (size_t i = 0; i < claims.size(); ++i) {
      const Event& c = *claims[i];
      const bool newer = i + 1 == claims.size() && claims.size() == 2 &&
                         c.payload->Get(vocab::kFieldToken, -1) > claims[0]->payload->Get(vocab::kFieldToken, -1);
      const std::optional<sim::TimeNs> left = LeftLeadership(c.node, c);
      std::string token;
      if (c.payload->Has(vocab::kFieldToken)) token = fmt::format(" with token {}", c.payload->Get(vocab::kFieldToken));
      Line(fmt::format(
          "  {}: {} became leader of {} {}{} at {} (trace #{}){}", newer ? "new holder" : "leader", Node(c.node),
          epoch_word_, c.payload->Get(vocab::kFieldTerm), token, Seconds(c.time), c.index,
          left ? fmt::format(", left the role at {}", Seconds(*left)) : ", still leader when the violation was found"));
      if (newer) {
        if (const Event* accepted = LastAccepted(c.node)) {
          Line(fmt::format("    its write under token {} was accepted at {} (trace #{})",
                           accepted->payload->Get(vocab::kFieldToken), Seconds(accepted->time), accepted->index));
        }
      }
    }
  }

  // Faults on the nodes involved, lease expiries and fault steps before the violation.
  void Facts() {
    std::set<uint32_t> involved;
    for (const sim::NodeId id : violation_->nodes) involved.insert(id.value());
    const algorithms::Cluster cluster = scenario_.cluster();
    std::map<uint32_t, const Event*> paused_at;
    int64_t lease_holder = -1;
    int64_t last_leader = -1;                    // who last claimed leadership, when the store never said
    std::optional<sim::TimeNs> expiry_reported;  // the store tells every watcher of one expiry
    // Fault steps and network changes, the first few (the timeline has the rest).
    constexpr int kMaxFaultLines = 8;
    int fault_lines = 0;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      if (IsFaultStep(e) || (e.kind == TraceKind::kNetwork && e.node == Event::kNone)) {
        if (++fault_lines <= kMaxFaultLines) {
          Line(IsFaultStep(e) ? fmt::format("  fault step at {}: {}", Seconds(e.time), e.detail.substr(6))
                              : fmt::format("    network at {}: {}", Seconds(e.time), e.detail));
        }
      }
      if (e.Observes(vocab::kRoleChange) &&
          e.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader)) {
        last_leader = e.node;
      }
      if (!involved.count(e.node)) {
        StoreFact(e, cluster, last_leader, lease_holder, expiry_reported);
        continue;
      }
      NodeFact(e, paused_at);
    }
    if (fault_lines > kMaxFaultLines) {
      Line(fmt::format("  ... and {} more fault steps and network changes", fault_lines - kMaxFaultLines));
    }
    for (const auto& [node, pause] : paused_at) {
      Line(fmt::format("  paused: {} was paused at {} and still was when the violation was found{}", Node(node),
                       Seconds(pause->time), MidWrite(*pause)));
    }
  }

  // A fault on a node the violation involves.
  void NodeFact(const Event& e, std::map<uint32_t, const Event*>& paused_at) {
    switch (e.kind) {
      case TraceKind::kPause: paused_at[e.node] = &e; break;
      case TraceKind::kResume:
        if (auto it = paused_at.find(e.node); it != paused_at.end()) {
          Line(fmt::format("  paused: {} was paused from {} to {} ({}){}", Node(e.node), Seconds(it->second->time),
                           Seconds(e.time), sim::FormatDuration(e.time - it->second->time), MidWrite(*it->second)));
          paused_at.erase(it);
        }
        break;
      case TraceKind::kCrash:
        Line(fmt::format("  crash: {} crashed at {}{}", Node(e.node), Seconds(e.time),
                         e.detail.empty() ? "" : " (" + e.detail + ")"));
        break;
      case TraceKind::kRestart:
        Line(fmt::format("  restart: {} restarted at {}", Node(e.node), Seconds(e.time)));
        break;
      case TraceKind::kClock:
        Line(fmt::format("  clock: {} {} {} at {}", Node(e.node), e.detail, e.value, Seconds(e.time)));
        break;
      default: break;
    }
  }

  // The store's view of who holds the lease, from its put events, and each expiry once.
  void StoreFact(const Event& e, const algorithms::Cluster& cluster, int64_t last_leader, int64_t& lease_holder,
                 std::optional<sim::TimeNs>& expiry_reported) {
    if (cluster.store == sim::kNoNode || e.node != cluster.store.value() || e.kind != TraceKind::kSend || !e.payload ||
        !e.payload->Is(algorithms::store::kStoreEvent)) {
      return;
    }
    const algorithms::store::Event event = *e.payload->As<algorithms::store::Event>();
    const auto kind = static_cast<algorithms::store::EventKind>(event.kind);
    if (kind == algorithms::store::EventKind::kPut) lease_holder = event.holder;
    if (kind != algorithms::store::EventKind::kExpire || expiry_reported == e.time) return;
    expiry_reported = e.time;
    Line(fmt::format("  lease expiry: the store expired {}'s lease at {} (trace #{})",
                     lease_holder >= 0  ? Node(static_cast<uint32_t>(lease_holder))
                     : last_leader >= 0 ? Node(static_cast<uint32_t>(last_leader))
                                        : "the holder",
                     Seconds(e.time), e.index));
  }

  // ", in the middle of a write under token N" when the pause came right after a write_begin.
  std::string MidWrite(const Event& pause) const {
    const Event* before = nullptr;
    for (const Event& e : recorder_.events()) {
      if (e.index >= pause.index) break;
      if (e.node == pause.node && e.kind == TraceKind::kObserve) before = &e;
    }
    if (before != nullptr && before->time == pause.time && before->Observes(vocab::kWriteBegin)) {
      return fmt::format(", in the middle of a write under token {}", before->payload->Get(vocab::kFieldToken));
    }
    return "";
  }

  // Whether `e` happened before (or is) the record whose vector clock is `clock`.
  static bool HappenedBefore(const Event& e, const std::vector<uint32_t>& clock) {
    return e.node != Event::kNone && e.node < clock.size() && e.seq <= clock[e.node];
  }

  // What says something new: an observation unlike the node's previous one
  // of its type (a sequence number aside; Raft's log and beliefs left out),
  // and the delivery or timer the node was handling when it made it. Steady
  // work (the same write under the same token, again) is not news.
  std::set<uint64_t> Newsworthy() const {
    std::set<uint64_t> shown;
    std::map<uint32_t, uint64_t> last_input;  // node -> index of its last delivery or timer fire
    std::map<std::pair<uint32_t, std::string_view>, std::string> last_said;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      if (e.node == Event::kNone) continue;
      if (e.kind == TraceKind::kDeliver || e.kind == TraceKind::kTimerFire) last_input[e.node] = e.index;
      if (e.kind != TraceKind::kObserve || e.Observes(vocab::kBelief) || e.payload->type_name().rfind("log.", 0) == 0) {
        continue;
      }
      std::string said;
      for (const sim::Field& f : e.payload->fields()) {
        if (f.key != vocab::kFieldSeq) said += fmt::format("{}={} ", f.key, f.value);
      }
      std::string& last = last_said[{e.node, e.payload->type_name()}];
      if (said == last && e.index != violation_->trace_index) continue;
      last = said;
      shown.insert(e.index);
      if (auto it = last_input.find(e.node); it != last_input.end()) shown.insert(it->second);
    }
    return shown;
  }

  std::string Describe(const Event& e, const std::map<uint64_t, const Event*>& sends) const {
    switch (e.kind) {
      case TraceKind::kDeliver: {
        auto it = sends.find(e.message_id);
        const std::string sent = it != sends.end() ? fmt::format(" (sent {})", Seconds(it->second->time)) : "";
        return fmt::format("<- {}: {}{}", Node(e.peer), e.payload ? DescribePayload(*e.payload) : "", sent);
      }
      case TraceKind::kTimerFire: return "timer fired";
      case TraceKind::kObserve: return DescribePayload(*e.payload);
      case TraceKind::kNote: return e.detail;
      case TraceKind::kCrash: return e.detail.empty() ? "CRASH" : "CRASH (" + e.detail + ")";
      case TraceKind::kClock: return fmt::format("CLOCK {} {}", e.detail, e.value);
      case TraceKind::kNetwork: return "NETWORK " + e.detail;
      default: {
        std::string kind(sim::TraceKindName(e.kind));
        std::transform(kind.begin(), kind.end(), kind.begin(), ::toupper);
        return kind;
      }
    }
  }

  // The events in the causal history of the claims and the violation, with
  // every send by message id (for describing receipts).
  std::vector<const Event*> History(std::map<uint64_t, const Event*>& sends) const {
    std::vector<const std::vector<uint32_t>*> cones;
    for (const uint64_t claim : claims_) {
      if (const auto* clock = recorder_.ClockAt(claim)) cones.push_back(clock);
    }
    // From the violation itself, only what followed the last fault of a node
    // involved (the paused node waking and writing): before that, the claims'
    // histories say it, and the run's steady work would drown them.
    const std::vector<uint32_t>* violation_cone = recorder_.ClockAt(violation_->trace_index);
    uint64_t last_involved_fault = 0;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      for (const sim::NodeId id : violation_->nodes) {
        if (e.node == id.value() && IsFault(e.kind)) last_involved_fault = e.index;
      }
    }
    const std::set<uint64_t> newsworthy = Newsworthy();
    std::set<uint32_t> involved;
    for (const sim::NodeId id : violation_->nodes) involved.insert(id.value());
    std::vector<const Event*> lines;
    for (const Event& e : recorder_.events()) {
      if (e.index > violation_->trace_index) break;
      if (e.kind == TraceKind::kSend) sends[e.message_id] = &e;
      const bool fault = IsFault(e.kind) || IsFaultStep(e);
      if (!fault && !newsworthy.count(e.index)) continue;
      // Faults anywhere count (a partition has no node); the rest only when
      // it happened before a claim or the violation.
      const bool in_history =
          e.node == Event::kNone || (fault && involved.count(e.node)) ||
          std::any_of(cones.begin(), cones.end(), [&](const auto* clock) { return HappenedBefore(e, *clock); }) ||
          (violation_cone != nullptr && e.index >= last_involved_fault && HappenedBefore(e, *violation_cone));
      if (!in_history) continue;
      lines.push_back(&e);
    }
    return lines;
  }

  // Cut to the window: keep every fault and the latest other events.
  struct Window {
    std::vector<const Event*> kept;
    size_t skipped = 0;
    std::optional<sim::TimeNs> skipped_from, skipped_to;
  };
  Window CutToWindow(const std::vector<const Event*>& lines) const {
    Window w;
    size_t others = 0;
    for (const Event* e : lines) others += !(IsFault(e->kind) || IsFaultStep(*e));
    const size_t faults = lines.size() - others;
    const size_t keep_others = options_.max_timeline_lines > faults ? options_.max_timeline_lines - faults : 0;
    size_t seen_others = 0;
    for (const Event* e : lines) {
      const bool fault = IsFault(e->kind) || IsFaultStep(*e);
      if (!fault && seen_others++ < others - std::min(others, keep_others)) {
        ++w.skipped;
        if (!w.skipped_from) w.skipped_from = e->time;
        w.skipped_to = e->time;
        continue;
      }
      w.kept.push_back(e);
    }
    return w;
  }

  void Timeline() {
    std::map<uint64_t, const Event*> sends;  // by message id
    const Window w = CutToWindow(History(sends));
    const std::vector<const Event*>& kept = w.kept;
    const uint32_t columns = scenario_.total_nodes();
    std::string header(columns * 2, ' ');
    Line(
        fmt::format("causal history (happened-before the claims and the violation; one column per node, ! fault, "
                    "L leader claim, * event; {} lines):",
                    kept.size()));
    std::string legend;
    for (uint32_t n = 0; n < columns; ++n)
      legend += fmt::format("{:<2}", n < scenario_.nodes ? std::to_string(n) : Node(n).substr(0, 1));
    Line(fmt::format("  {:>12}  {}", "time", legend));
    if (w.skipped > 0) {
      Line(fmt::format("  ... {} earlier events of the history skipped ({} to {})", w.skipped, Seconds(*w.skipped_from),
                       Seconds(*w.skipped_to)));
    }
    for (const Event* e : kept) {
      std::string cells;
      const bool fault = IsFault(e->kind) || IsFaultStep(*e);
      const bool claim = std::find(claims_.begin(), claims_.end(), e->index) != claims_.end();
      for (uint32_t n = 0; n < columns; ++n) {
        const char mark = n != e->node ? '.' : fault ? '!' : claim ? 'L' : '*';
        cells += fmt::format("{} ", mark);
      }
      const std::string who = e->node == Event::kNone ? "all" : Node(e->node);
      Line(fmt::format("  {:>12}  {} {}: {}{}", Seconds(e->time), cells, who, fault ? "!! " : "", Describe(*e, sends)));
    }
    Line(fmt::format("  {:>12}  violation: {} (trace #{})", Seconds(violation_->time), violation_->checker,
                     violation_->trace_index));
  }

  const Scenario& scenario_;
  const RunResult& result_;
  const Recorder& recorder_;
  const ExplainOptions& options_;
  const std::string epoch_word_;
  const checkers::Violation* violation_ = nullptr;
  std::vector<uint64_t> claims_;
  std::string out_;
};

}  // namespace

absl::StatusOr<std::string> ExplainRun(const Scenario& scenario, uint64_t seed, const ExplainOptions& options) {
  Recorder recorder(scenario.total_nodes());
  RunOptions run_options;
  run_options.extra_sinks.push_back(&recorder);
  auto result = RunScenario(scenario, seed, run_options);
  if (!result.ok()) return result.status();
  std::string header = fmt::format("explain: {} ({}, {} nodes), seed {}, {} simulated, trace-hash {}\n",
                                   EscapeForTerminal(scenario.name), scenario.algorithm->name(), scenario.nodes, seed,
                                   sim::FormatDuration(result->end), sim::FormatTraceHash(result->trace_hash));
  if (result->violations.empty()) return header + "no violation in this run: nothing to explain\n";
  Account account(scenario, *result, recorder, options);
  return header + account.Write();
}

}  // namespace electsim
