#include "tools/electsim/export/explain.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "checkers/checker.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/explain_faults.h"
#include "tools/electsim/export/explain_leases.h"
#include "tools/electsim/export/explain_story.h"
#include "tools/electsim/export/explain_trace.h"
#include "tools/electsim/export/explain_why.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {

using explain::Event;
using explain::Seconds;
using explain::Story;
using sim::TraceKind;

std::string Joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : std::string(separator)) + parts[i];
  return out;
}

// "ran: raft with bug=vote_twice (a deliberate bug); options changed from the defaults: …".
std::string RanLine(const Scenario& scenario) {
  const std::vector<std::string> bugs = explain::DeliberateBugs(scenario);
  const auto values = scenario.options.Describe();
  const auto defaults = algorithms::OptionValues::Defaults(scenario.algorithm->options()).Describe();
  std::vector<std::string> changed;
  for (const auto& [name, value] : values) {
    const std::string shown = fmt::format("{}={}", name, explain::Unquoted(value));
    if (value != defaults.at(name) && std::find(bugs.begin(), bugs.end(), shown) == bugs.end()) {
      changed.push_back(shown);
    }
  }
  std::string line = fmt::format("  ran: {}", scenario.algorithm->name());
  if (!bugs.empty()) line += fmt::format(" with {} (a deliberate bug)", Joined(bugs, ", "));
  if (changed.empty()) return line + (bugs.empty() ? " with its default options" : ", other options at their defaults");
  return line + fmt::format("; options changed from the defaults: {}", Joined(changed, ", "));
}

std::string ResourceLine(const Scenario& scenario) {
  const std::string fencing = !scenario.fencing ? "fencing off (it accepts any token)"
                              : scenario.exclusive_token
                                  ? "fencing on, each token kept to its first writer"
                                  : "fencing on (a token below the highest it accepted is rejected)";
  std::vector<std::string> checkers = scenario.checkers;
  if (scenario.liveness && std::find(checkers.begin(), checkers.end(), "liveness") == checkers.end()) {
    checkers.push_back("liveness");
  }
  return fmt::format("  resource: {}; checkers on: {}", fencing, checkers.empty() ? "none" : Joined(checkers, ", "));
}

bool IsLeaderClaim(const Event& e) {
  return e.Observes(vocab::kRoleChange) &&
         e.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader);
}

class Account {
 public:
  Account(const Story& story, const ExplainOptions& options) : story_(story), options_(options) {
    for (const checkers::Violation& v : story.result().violations) violations_.push_back(&v);
    std::stable_sort(violations_.begin(), violations_.end(), [](const auto* a, const auto* b) {
      return std::pair(a->time, a->trace_index) < std::pair(b->time, b->trace_index);
    });
    last_index_ = 0;
    for (const checkers::Violation* v : violations_) last_index_ = std::max(last_index_, v->trace_index);
  }

  std::string Write() {
    WhySection();
    Violations();
    Leases();
    Timeline();
    return out_;
  }

 private:
  void Line(const std::string& text) { out_ += EscapeForTerminal(text) + "\n"; }
  std::string Node(uint32_t node) const { return story_.Node(node); }
  const std::string& Epoch() const { return story_.epoch_word(); }

  void WhySection() {
    why_ = explain::ExplainWhy(story_, violations_);
    if (why_.lines.empty()) {
      Line("why: no fault step cut, lost or delayed a message these violations rest on");
      return;
    }
    Line("why (each chain ends at the fault step responsible):");
    for (const std::string& line : why_.lines) Line("  " + line);
  }

  void Violations() {
    Line("violations, in time order:");
    for (const checkers::Violation* v : violations_) {
      Line(fmt::format("  {} {} (trace #{}): {}", Seconds(v->time), v->checker, v->trace_index, v->message));
      const std::vector<std::string> evidence = Evidence(*v);
      if (!evidence.empty()) Line("    evidence: " + Joined(evidence, "; "));
    }
  }

  std::vector<std::string> Evidence(const checkers::Violation& v) const {
    if (v.checker == "single_vote") return VoteEvidence(v);
    if (v.checker == "unique_token") return AcceptEvidence(v);
    if (v.checker == "stale_token") return StaleEvidence(v);
    std::vector<std::string> claims;
    for (const sim::NodeId node : v.nodes) {
      if (const Event* claim = story_.LeaderClaim(node.value(), v.trace_index, v.key)) {
        claims.push_back(ClaimText(*claim, v));
      }
    }
    return claims;
  }

  // "node 1 led epoch 1 with token 1 from 0.100000s (trace #60)", and when it stopped.
  std::string ClaimText(const Event& claim, const checkers::Violation& v) const {
    std::string text = fmt::format("{} led {} {}", Node(claim.node), Epoch(), claim.payload->Get(vocab::kFieldTerm));
    if (claim.payload->Has(vocab::kFieldToken)) {
      text += fmt::format(" with token {}", claim.payload->Get(vocab::kFieldToken));
    }
    text += fmt::format(" from {} (trace #{})", Seconds(claim.time), claim.index);
    for (size_t i = story_.PositionOf(claim.index) + 1; i < story_.events().size(); ++i) {
      const Event& e = story_.events()[i];
      if (e.index > v.trace_index) break;
      if (e.node == claim.node &&
          (e.kind == TraceKind::kCrash || (e.Observes(vocab::kRoleChange) && vocab::KeyOf(*e.payload) == v.key))) {
        return text + fmt::format(" to {}", Seconds(e.time));
      }
    }
    return text;
  }

  // A vote of `voter` for `candidate` in `term`, at or before the violation.
  const Event* Vote(uint32_t voter, int64_t term, uint32_t candidate, uint64_t up_to) const {
    for (const Event& e : story_.events()) {
      if (e.index > up_to) break;
      if (e.node == voter && e.Observes(vocab::kVote) && e.payload->Get(vocab::kFieldTerm) == term &&
          e.payload->Get(vocab::kFieldCandidate) == candidate) {
        return &e;
      }
    }
    return nullptr;
  }

  std::vector<std::string> VoteEvidence(const checkers::Violation& v) const {
    if (v.nodes.size() < 3) return {};
    std::vector<std::string> votes, leaders;
    for (size_t i = 1; i < 3; ++i) {
      const uint32_t candidate = v.nodes[i].value();
      const Event* vote = Vote(v.nodes[0].value(), v.term, candidate, v.trace_index);
      if (vote == nullptr) continue;
      votes.push_back(fmt::format("for {} at {} (trace #{})", Node(candidate), Seconds(vote->time), vote->index));
      for (size_t k = story_.PositionOf(vote->index); k < story_.events().size(); ++k) {
        const Event& e = story_.events()[k];
        if (e.node != candidate || !IsLeaderClaim(e) || e.payload->Get(vocab::kFieldTerm) != v.term) continue;
        leaders.push_back(fmt::format("{} at {} (trace #{})", Node(candidate), Seconds(e.time), e.index));
        break;
      }
    }
    std::vector<std::string> out = {fmt::format("{}'s votes {}", Node(v.nodes[0].value()), Joined(votes, " and "))};
    if (!leaders.empty())
      out.push_back(fmt::format("the leaders of {} {} they made: {}", Epoch(), v.term, Joined(leaders, ", ")));
    return out;
  }

  // The resource's first acceptance of `token` from each writer named.
  std::vector<std::string> AcceptEvidence(const checkers::Violation& v) const {
    std::vector<std::string> accepts;
    for (const sim::NodeId writer : v.nodes) {
      for (const Event& e : story_.events()) {
        if (e.index > v.trace_index) break;
        if (e.Observes(vocab::kResourceAccept) && e.payload->Get(vocab::kFieldWriter) == writer.value() &&
            e.payload->Get(vocab::kFieldToken) == v.token) {
          accepts.push_back(fmt::format("token {} from {} accepted at {} (trace #{})", v.token, Node(writer.value()),
                                        Seconds(e.time), e.index));
          break;
        }
      }
    }
    return accepts;
  }

  // The stale write, and the holder of the higher token it outlived.
  std::vector<std::string> StaleEvidence(const checkers::Violation& v) const {
    std::vector<std::string> out;
    const Event* accept = story_.recorder().Find(v.trace_index);
    if (accept != nullptr && accept->Observes(vocab::kResourceAccept)) {
      out.push_back(fmt::format("the stale write: {} under token {}, accepted at {} (trace #{})",
                                Node(static_cast<uint32_t>(accept->payload->Get(vocab::kFieldWriter))), v.token,
                                Seconds(accept->time), accept->index));
    }
    if (v.nodes.size() > 1) {
      if (const Event* claim = story_.LeaderClaim(v.nodes[1].value(), v.trace_index, v.key)) {
        out.push_back("the holder it outlived: " + ClaimText(*claim, v));
      }
    }
    return out;
  }

  void Leases() {
    const std::vector<std::string> lines = explain::LeaseLines(story_, last_index_);
    if (lines.empty()) return;
    Line(
        "leases (a holder acts until its deadline on its own clock; the store expires the lease on its clock; the "
        "margin is the store's expiry less the holder's deadline):");
    for (const std::string& line : lines) Line("  " + line);
  }

  void Timeline();
  std::vector<const Event*> History() const;
  std::set<uint64_t> Newsworthy(const checkers::Violation& first) const;
  std::string Describe(const Event& e) const;

  const Story& story_;
  const ExplainOptions& options_;
  std::vector<const checkers::Violation*> violations_;
  uint64_t last_index_ = 0;
  explain::Why why_;
  std::string out_;
};

// Raft's log, what a node declares of itself at boot for the checkers
// (declare.*) and the lease bookkeeping they judge by (lease.*) are not part
// of the story a reader follows; roles, terms, votes and writes are.
bool SaysWhatHappened(std::string_view type) {
  for (std::string_view prefix : {"log.", "declare.", "lease."}) {
    if (type.rfind(prefix, 0) == 0) return false;
  }
  return true;
}

// What says something new: an observation unlike the node's previous one of
// its type (a sequence number aside; Raft's log and beliefs left out), and
// the delivery or timer the node was handling when it made it. Steady work
// (the same write under the same token, again) is not news.
std::set<uint64_t> Account::Newsworthy(const checkers::Violation& first) const {
  std::set<uint64_t> shown;
  std::map<uint32_t, uint64_t> last_input;  // node -> index of its last delivery or timer fire
  std::map<std::pair<uint32_t, std::string_view>, std::string> last_said;
  for (const Event& e : story_.events()) {
    if (e.index > first.trace_index) break;
    if (e.node == Event::kNone) continue;
    if (e.kind == TraceKind::kDeliver || e.kind == TraceKind::kTimerFire) last_input[e.node] = e.index;
    if (e.kind != TraceKind::kObserve || e.Observes(vocab::kBelief) || !SaysWhatHappened(e.payload->type_name()) ||
        story_.OfOtherKey(e)) {
      continue;
    }
    std::string said;
    for (const sim::Field& f : e.payload->fields()) {
      if (f.key != vocab::kFieldSeq) said += fmt::format("{}={} ", f.key, f.value);
    }
    std::string& last = last_said[{e.node, e.payload->type_name()}];
    if (said == last && e.index != first.trace_index) continue;
    last = said;
    shown.insert(e.index);
    if (auto it = last_input.find(e.node); it != last_input.end()) shown.insert(it->second);
  }
  return shown;
}

// Whether `e` happened before (or is) the record whose vector clock is `clock`.
bool HappenedBefore(const Event& e, const std::vector<uint32_t>& clock) {
  return e.node != Event::kNone && e.node < clock.size() && e.seq <= clock[e.node];
}

// The causal history of the first violation's claims and of the violation
// itself, faults everywhere, and the messages the "why" names that faults
// cut or held up (which happened-before cannot reach).
std::vector<const Event*> Account::History() const {
  const checkers::Violation& first = *violations_.front();
  std::set<uint32_t> involved;
  std::vector<const std::vector<uint32_t>*> cones;
  for (const sim::NodeId id : first.nodes) {
    involved.insert(id.value());
    const Event* claim = story_.LeaderClaim(id.value(), first.trace_index, first.key);
    if (claim == nullptr) continue;
    if (const auto* clock = story_.recorder().ClockAt(claim->index)) cones.push_back(clock);
  }
  // From the violation itself, only what followed the last fault of a node
  // involved (the paused node waking and writing): before that, the claims'
  // histories say it, and the run's steady work would drown them.
  const std::vector<uint32_t>* violation_cone = story_.recorder().ClockAt(first.trace_index);
  uint64_t last_involved_fault = 0;
  for (const Event& e : story_.events()) {
    if (e.index > first.trace_index) break;
    if (involved.count(e.node) && explain::IsFault(e.kind)) last_involved_fault = e.index;
  }
  const std::set<uint64_t> newsworthy = Newsworthy(first);
  std::vector<const Event*> lines;
  for (const Event& e : story_.events()) {
    if (why_.evidence.count(e.index)) {
      lines.push_back(&e);
      continue;
    }
    if (e.index > first.trace_index) continue;
    const bool fault = explain::IsFault(e.kind) || explain::IsFaultStep(e);
    if (!fault && !newsworthy.count(e.index)) continue;
    if (!fault && story_.OfOtherKey(e)) continue;  // an owner of many keys: the key judged only
    // Faults anywhere count (a partition has no node); the rest only when
    // it happened before a claim or the violation.
    const bool in_history =
        e.node == Event::kNone || (fault && involved.count(e.node)) ||
        std::any_of(cones.begin(), cones.end(), [&](const auto* clock) { return HappenedBefore(e, *clock); }) ||
        (violation_cone != nullptr && e.index >= last_involved_fault && HappenedBefore(e, *violation_cone));
    if (in_history) lines.push_back(&e);
  }
  return lines;
}

std::string Account::Describe(const Event& e) const {
  const explain::MessageFate* fate = e.message_id != 0 ? story_.recorder().Fate(e.message_id) : nullptr;
  const Event* send = fate != nullptr ? fate->send : nullptr;
  switch (e.kind) {
    case TraceKind::kDeliver: {
      const std::string sent = send != nullptr ? fmt::format(" (sent {})", Seconds(send->time)) : "";
      return fmt::format("<- {}: {}{}", Node(e.peer), e.payload ? explain::DescribePayload(*e.payload) : "", sent);
    }
    case TraceKind::kDrop: {
      const explain::MessageEffect* effect = story_.ledger().EffectOn(e.message_id);
      const std::string by = effect != nullptr && effect->step != nullptr ? " by " + effect->step->path : "";
      const std::string type = send != nullptr && send->payload ? std::string(send->payload->type_name()) : "message";
      return fmt::format("-> {}: {} {}{} (sent {})", Node(e.peer), type,
                         e.detail == "partition" ? "cut"
                         : e.detail == "loss"    ? "lost"
                                                 : "lost, receiver down",
                         by, send != nullptr ? Seconds(send->time) : "?");
    }
    case TraceKind::kTimerFire: return "timer fired";
    case TraceKind::kObserve: return explain::DescribePayload(*e.payload);
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

// Cut to the window: keep every fault and the latest other events.
struct Window {
  std::vector<const Event*> kept;
  size_t skipped = 0;
  std::optional<sim::TimeNs> skipped_from, skipped_to;
  size_t faults = 0;
  bool faults_fill_it = false;  // no other event fits: every one was skipped
};
Window CutToWindow(const std::vector<const Event*>& lines, size_t max_lines) {
  Window w;
  auto fault = [](const Event* e) { return explain::IsFault(e->kind) || explain::IsFaultStep(*e); };
  const size_t others =
      static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](auto* e) { return !fault(e); }));
  const size_t faults = lines.size() - others;
  const size_t keep_others = max_lines > faults ? max_lines - faults : 0;
  w.faults = faults;
  w.faults_fill_it = keep_others == 0 && others > 0;
  size_t seen_others = 0;
  for (const Event* e : lines) {
    if (!fault(e) && seen_others++ < others - std::min(others, keep_others)) {
      ++w.skipped;
      if (!w.skipped_from) w.skipped_from = e->time;
      w.skipped_to = e->time;
      continue;
    }
    w.kept.push_back(e);
  }
  return w;
}

void Account::Timeline() {
  const Window w = CutToWindow(History(), options_.max_timeline_lines);
  const uint32_t columns = story_.scenario().total_nodes();
  // The violations marked among the events: up to the last event shown, or
  // the first violation, whichever is later.
  const uint64_t marked_until = std::max(w.kept.empty() ? 0 : w.kept.back()->index, violations_.front()->trace_index);
  const auto marked = static_cast<size_t>(std::count_if(violations_.begin(), violations_.end(),
                                                        [&](const auto* v) { return v->trace_index <= marked_until; }));
  Line(fmt::format(
      "causal history (happened-before the claims and the violation, with the messages faults cut; one column per "
      "node, ! fault, L leader claim, x message cut or lost, * event; {} lines):",
      w.kept.size() + marked));
  std::string legend;
  for (uint32_t n = 0; n < columns; ++n) {
    legend += fmt::format("{:<2}", n < story_.scenario().nodes ? std::to_string(n) : Node(n).substr(0, 1));
  }
  while (!legend.empty() && legend.back() == ' ') legend.pop_back();
  Line(fmt::format("  {:>12}  {}", "time", legend));
  if (w.skipped > 0) {
    if (w.faults_fill_it) {
      Line(fmt::format(
          "  ... every event but the faults skipped, {} of them ({} to {}): the {} fault lines fill --lines {}",
          w.skipped, Seconds(*w.skipped_from), Seconds(*w.skipped_to), w.faults, options_.max_timeline_lines));
    } else {
      Line(fmt::format("  ... {} earlier events of the history skipped ({} to {})", w.skipped, Seconds(*w.skipped_from),
                       Seconds(*w.skipped_to)));
    }
  }
  std::set<uint64_t> claims;
  for (const sim::NodeId id : violations_.front()->nodes) {
    if (const Event* claim = story_.LeaderClaim(id.value(), violations_.front()->trace_index, violations_.front()->key))
      claims.insert(claim->index);
  }
  size_t next_violation = 0;
  auto violations_until = [&](uint64_t index) {
    for (; next_violation < violations_.size() && violations_[next_violation]->trace_index <= index; ++next_violation) {
      const checkers::Violation& v = *violations_[next_violation];
      Line(fmt::format("  {:>12}  violation: {} (trace #{})", Seconds(v.time), v.checker, v.trace_index));
    }
  };
  for (const Event* e : w.kept) {
    violations_until(e->index - 1);
    const bool fault = explain::IsFault(e->kind) || explain::IsFaultStep(*e);
    const char mark = fault ? '!' : e->kind == TraceKind::kDrop ? 'x' : claims.count(e->index) ? 'L' : '*';
    std::string cells;
    for (uint32_t n = 0; n < columns; ++n) cells += fmt::format("{} ", n != e->node ? '.' : mark);
    const std::string who = e->node == Event::kNone ? "all" : Node(e->node);
    Line(fmt::format("  {:>12}  {} {}: {}{}", Seconds(e->time), cells, who, fault ? "!! " : "", Describe(*e)));
  }
  violations_until(marked_until);
}

}  // namespace

absl::StatusOr<std::string> ExplainRun(const Scenario& scenario, uint64_t seed, const ExplainOptions& options) {
  explain::Recorder recorder(scenario.total_nodes());
  RunOptions run_options;
  run_options.extra_sinks.push_back(&recorder);
  run_options.log_fault_applications = true;
  auto result = RunScenario(scenario, seed, run_options);
  if (!result.ok()) return result.status();
  recorder.IndexMessages();
  std::string out;
  if (options.expected_trace_hash && *options.expected_trace_hash != result->trace_hash) {
    out += fmt::format(
        "warning: the trace hash differs from the repro's: {} now, {} when the repro was written (the repro or "
        "electsim changed since); explaining the run as it now is\n",
        sim::FormatTraceHash(result->trace_hash), sim::FormatTraceHash(*options.expected_trace_hash));
  }
  out += fmt::format("explain: {} ({}, {} nodes), seed {}, {} simulated, trace-hash {}\n",
                     EscapeForTerminal(scenario.name), scenario.algorithm->name(), scenario.nodes, seed,
                     sim::FormatDuration(result->end), sim::FormatTraceHash(result->trace_hash));
  out += EscapeForTerminal(RanLine(scenario)) + "\n" + EscapeForTerminal(ResourceLine(scenario)) + "\n";
  if (result->violations.empty()) {
    const std::string recorded =
        options.recorded_violations.empty()
            ? ""
            : fmt::format(" (the repro recorded {})", Joined(options.recorded_violations, ", "));
    return out + EscapeForTerminal("no violation in this run" + recorded) + ": nothing to explain\n";
  }
  const explain::FaultLedger ledger(scenario, recorder, result->fault_applications);
  const Story story(scenario, *result, recorder, ledger);
  return out + Account(story, options).Write();
}

}  // namespace electsim
