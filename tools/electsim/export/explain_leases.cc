#include "tools/electsim/export/explain_leases.h"

#include <algorithm>
#include <map>

#include "electsim/algorithms/store.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"

namespace electsim::explain {
namespace {

namespace store = algorithms::store;
using sim::TraceKind;

// One holder under one token (the lease key's create revision).
struct Tenure {
  const Event* acked = nullptr;       // the holder's last request whose grant reached it
  const Event* ack = nullptr;         // that grant's delivery
  const Event* store_took = nullptr;  // the store's last grant to it: when it took the request
  int64_t store_ttl = 0;
};

bool IsLeaseRequest(const Event& e) {
  return e.Carries(store::kStorePutIfAbsent) || e.Carries(store::kStoreCas) || e.Carries(store::kStoreKeepAlive);
}

std::string SignedSeconds(sim::TimeNs d) {
  return fmt::format("{}{}", d.ns() < 0 ? '-' : '+', Seconds(sim::TimeNs(std::abs(d.ns()))));
}

// When `node`'s monotonic clock read (or will read) `local`: from the last
// record there before it, at the drift in force then.
sim::TimeNs GlobalAt(const Story& story, uint32_t node, sim::TimeNs local, uint64_t up_to) {
  sim::TimeNs t0, local0;
  int64_t drift_ppm = 0;
  for (const Event& e : story.events()) {
    if (e.index > up_to) break;
    // A link's change names its sender but reads no clock (local 0).
    if (e.node != node || e.kind == TraceKind::kNetwork) continue;
    if (e.local > local) break;  // a node's monotonic clock never goes back
    if (e.kind == TraceKind::kClock && e.detail == "drift") drift_ppm = e.value;
    t0 = e.time;
    local0 = e.local;
  }
  const __int128 elapsed = static_cast<__int128>((local - local0).ns()) * 1000000 / (1000000 + drift_ppm);
  return t0 + sim::TimeNs(static_cast<int64_t>(elapsed));
}

// How far `node`'s wall clock stood from its monotonic one after the
// records up to `index`: the sum of its steps.
sim::TimeNs WallOffsetAfter(const Story& story, uint32_t node, uint64_t index) {
  sim::TimeNs offset;
  for (const Event& e : story.events()) {
    if (e.index > index) break;
    if (e.node == node && e.kind == TraceKind::kClock && e.detail == "wall_step")
      offset = offset + sim::TimeNs(e.value);
  }
  return offset;
}

// When, on `node`'s monotonic clock, its wall clock first read `deadline`
// or later, given the offset after record `from`: a step back puts it
// off, a step forward past it reaches it at the step.
sim::TimeNs MonotonicWhenWallReaches(const Story& story, uint32_t node, sim::TimeNs deadline, uint64_t from,
                                     uint64_t up_to) {
  sim::TimeNs offset = WallOffsetAfter(story, node, from);
  sim::TimeNs reached = deadline - offset;
  for (const Event& e : story.events()) {
    if (e.index > up_to) break;
    if (e.index <= from || e.node != node || e.kind != TraceKind::kClock || e.detail != "wall_step") continue;
    if (e.local >= reached) break;
    offset = offset + sim::TimeNs(e.value);
    if (e.local + offset >= deadline) return e.local;
    reached = deadline - offset;
  }
  return reached;
}

// How the holder counts its lease, as its options (and a deliberate bug)
// make it: for how much of the TTL it acts, from when, and how long it waits
// for a reply before it drops the request (a grant arriving later extends
// nothing).
struct HolderRules {
  int64_t view_ppm = 1000000;
  bool from_reply = false;                     // bug=deadline_from_reply
  std::optional<sim::TimeNs> request_timeout;  // on its monotonic clock
};

HolderRules RulesOf(const Scenario& scenario) {
  HolderRules rules;
  for (const algorithms::OptionSpec& spec : scenario.algorithm->options()) {
    if (spec.name == "safety_margin" && spec.type == algorithms::OptionType::kRatio) {
      rules.view_ppm = scenario.options.RatioPpm(spec.name);
    }
    if (spec.name == "request_timeout" && spec.type == algorithms::OptionType::kDuration) {
      rules.request_timeout = scenario.options.Duration(spec.name);
    }
  }
  for (const std::string& bug : DeliberateBugs(scenario)) {
    if (bug == "bug=full_ttl") rules.view_ppm = 1000000;
    if (bug == "bug=deadline_from_reply") rules.from_reply = true;
  }
  return rules;
}

std::map<std::pair<uint32_t, int64_t>, Tenure> Tenures(const Story& story, uint32_t store_node, uint64_t up_to,
                                                       const HolderRules& rules) {
  std::map<std::pair<uint32_t, int64_t>, Tenure> tenures;                            // (holder, token)
  std::map<std::pair<uint32_t, int64_t>, const Event*> requests;                     // (holder, req) -> its send
  std::map<uint64_t, std::pair<std::pair<uint32_t, int64_t>, const Event*>> grants;  // message id -> tenure, request
  std::map<uint32_t, const Event*> last_timer_fire;                                  // by node
  for (const Event& e : story.events()) {
    if (e.index > up_to) break;
    if (e.kind == TraceKind::kTimerFire) last_timer_fire[e.node] = &e;
    if (e.kind == TraceKind::kSend && e.peer == store_node && IsLeaseRequest(e) && e.payload->Get("ttl") > 0 &&
        !story.OfOtherKey(e)) {
      requests[{e.node, e.payload->Get("req")}] = &e;
    } else if (e.kind == TraceKind::kSend && e.node == store_node && e.Carries(store::kStoreReply) &&
               e.payload->Get("ok") == 1) {
      auto request = requests.find({e.peer, e.payload->Get("req")});
      if (request == requests.end()) continue;
      const std::pair<uint32_t, int64_t> key{e.peer, e.payload->Get("create_rev")};
      tenures[key].store_took = &e;
      tenures[key].store_ttl = request->second->payload->Get("ttl");
      grants[e.message_id] = {key, request->second};
    } else if (e.kind == TraceKind::kDeliver && grants.count(e.message_id)) {
      const auto& [key, request] = grants.at(e.message_id);
      // Its request timed out first (a timer of the holder's fired, after the
      // request, at or past the timeout's deadline; timers fire in deadline
      // order): the holder had dropped it. A reply held by a pause comes
      // before the timers due at the resume.
      const auto fired = last_timer_fire.find(e.node);
      if (rules.request_timeout && fired != last_timer_fire.end() && fired->second->index > request->index &&
          fired->second->local >= request->local + *rules.request_timeout) {
        continue;
      }
      tenures[key].acked = request;
      tenures[key].ack = &e;
    }
  }
  return tenures;
}

// ", and wrote under token 1 at 5.005581s, 2.251999s after it".
std::string WroteAfter(const Story& story, uint32_t holder, int64_t token, sim::TimeNs deadline, uint64_t up_to) {
  const Event* late = nullptr;
  for (const Event& e : story.events()) {
    if (e.index > up_to) break;
    // A write's decision (write_begin) is what lease_validity judges.
    if (e.node == holder && (e.Observes(vocab::kWrite) || e.Observes(vocab::kWriteBegin)) &&
        e.payload->Get(vocab::kFieldToken) == token && e.time > deadline) {
      late = &e;
    }
  }
  if (late == nullptr) return "";
  return fmt::format("; it still {} under token {} at {} (trace #{}), {} past its deadline",
                     late->Observes(vocab::kWrite) ? "wrote" : "began a write", token, Seconds(late->time), late->index,
                     Seconds(late->time - deadline));
}

}  // namespace

bool DeadlinesOnWallClock(const Scenario& scenario) {
  for (const algorithms::OptionSpec& spec : scenario.algorithm->options()) {
    if (spec.name != "deadline_clock" || spec.type != algorithms::OptionType::kChoice) continue;
    const int64_t chosen = scenario.options.Int(spec.name);
    return chosen >= 0 && static_cast<size_t>(chosen) < spec.choices.size() && spec.choices[chosen] == "wall";
  }
  return false;
}

std::vector<std::string> LeaseLines(const Story& story, uint64_t up_to) {
  const algorithms::Cluster cluster = story.scenario().cluster();
  std::vector<std::string> lines;
  if (cluster.store == sim::kNoNode) return lines;
  const uint32_t store_node = cluster.store.value();
  const HolderRules rules = RulesOf(story.scenario());
  // In the order the store granted them.
  std::vector<std::pair<std::pair<uint32_t, int64_t>, Tenure>> tenures;
  for (const auto& entry : Tenures(story, store_node, up_to, rules)) {
    if (entry.second.acked != nullptr && entry.second.store_took != nullptr) tenures.push_back(entry);
  }
  std::sort(tenures.begin(), tenures.end(),
            [](const auto& a, const auto& b) { return a.second.store_took->index < b.second.store_took->index; });
  // A holder with deadline_clock=wall counts from its wall clock's reading
  // at the send, and acts until that clock reads its deadline.
  const bool wall = DeadlinesOnWallClock(story.scenario());
  for (const auto& [key, tenure] : tenures) {
    const auto& [holder, token] = key;
    const sim::TimeNs view = sim::TimeNs(
        static_cast<int64_t>(static_cast<__int128>(tenure.acked->payload->Get("ttl")) * rules.view_ppm / 1000000));
    const sim::TimeNs sent_offset = wall ? WallOffsetAfter(story, holder, tenure.acked->index) : sim::TimeNs();
    const sim::TimeNs ack_offset = wall ? WallOffsetAfter(story, holder, tenure.ack->index) : sim::TimeNs();
    const Event& start = rules.from_reply ? *tenure.ack : *tenure.acked;
    const sim::TimeNs believed = start.local + (rules.from_reply ? ack_offset : sent_offset) + view;
    const sim::TimeNs believed_monotonic =
        wall ? MonotonicWhenWallReaches(story, holder, believed, start.index, up_to) : believed;
    const sim::TimeNs expiry = tenure.store_took->local + sim::TimeNs(tenure.store_ttl);
    const sim::TimeNs believed_global = GlobalAt(story, holder, believed_monotonic, up_to);
    const sim::TimeNs expiry_global = GlobalAt(story, store_node, expiry, up_to);
    std::string line = fmt::format(
        "{}, token {}: believed deadline {} on its {}clock ({} sent at {}, its grant received at {}); the store's "
        "expiry {} on its clock (taken at {}); margin {}",
        story.Node(holder), token, Seconds(believed), wall ? "wall " : "", tenure.acked->payload->type_name(),
        Seconds(tenure.acked->local + sent_offset), Seconds(tenure.ack->local + ack_offset), Seconds(expiry),
        Seconds(tenure.store_took->local), SignedSeconds(expiry_global - believed_global));
    if (believed_global != believed || expiry_global != expiry) {
      line += fmt::format(" (on the simulation's clock: deadline {}, expiry {})", Seconds(believed_global),
                          Seconds(expiry_global));
    }
    lines.push_back(line + WroteAfter(story, holder, token, believed_global, up_to));
  }
  for (const std::string& bug : DeliberateBugs(story.scenario())) {
    if (!lines.empty() && (bug == "bug=renew_timeout_as_granted" || bug == "bug=ignore_renewal_result")) {
      lines.push_back(
          fmt::format("({}: the holder also extends its view on renewals the store did not grant, which "
                      "the deadlines above, from granted requests, leave out)",
                      bug));
    }
  }
  return lines;
}

}  // namespace electsim::explain
