#include "tools/electsim/export/explain_why.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "electsim/algorithms/store.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/export/explain_leases.h"

namespace electsim::explain {
namespace {

using sim::TraceKind;

bool IsLeaderRole(const Event& e) {
  return e.Observes(vocab::kRoleChange) &&
         e.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader);
}

bool IsDrop(Effect effect) {
  return effect == Effect::kCut || effect == Effect::kLost || effect == Effect::kReceiverDown;
}

// Messages alike in what befell them, said in one phrase.
struct Group {
  Effect effect = Effect::kCut;
  const AppliedStep* step = nullptr;
  bool outgoing = true;
  std::string type;
  std::string cls;
  std::vector<uint32_t> peers;
  std::vector<uint64_t> refs;
  sim::TimeNs first_sent;
  sim::TimeNs first_outcome;
  int count = 0;
};

// Who a phrase is about: "its" and "it", or "node 1's" and "node 1".
struct Owner {
  std::string possessive;
  std::string object;
};

class WhyWriter {
 public:
  WhyWriter(const Story& story, const std::vector<const checkers::Violation*>& violations)
      : story_(story), violations_(violations) {}

  Why Write() {
    StaleWrites();
    LateActs();
    Expiries();
    Clocks();
    DoubleVotes();
    Claims();
    Untouched();
    return std::move(why_);
  }

 private:
  std::string Node(uint32_t node) const { return story_.Node(node); }
  void Line(std::string text) { why_.lines.push_back(std::move(text)); }
  std::string Label(const AppliedStep* step) {
    used_.insert(step);
    return step != nullptr ? step->Label() : "a fault";
  }

  // What faults did to the messages `node` sent, and to those sent to it,
  // from `from` to `to` (and not after record `up_to_index`).
  std::vector<const MessageEffect*> EffectsAround(uint32_t node, sim::TimeNs from, sim::TimeNs to,
                                                  uint64_t up_to_index = UINT64_MAX) const {
    std::vector<const MessageEffect*> found;
    std::set<uint64_t> seen;
    const std::vector<Event>& all = story_.events();
    auto it = std::lower_bound(all.begin(), all.end(), from, [](const Event& e, sim::TimeNs t) { return e.time < t; });
    for (; it != all.end() && it->time <= to && it->index <= up_to_index; ++it) {
      const Event& e = *it;
      const bool sent = e.kind == TraceKind::kSend && e.node == node;
      const bool to_it =
          (e.kind == TraceKind::kDrop && e.peer == node) || (e.kind == TraceKind::kDeliver && e.node == node);
      if (!sent && !to_it) continue;
      const MessageEffect* effect = story_.ledger().EffectOn(e.message_id);
      if (effect == nullptr || (to_it && effect->outcome != &e) || !seen.insert(e.message_id).second) continue;
      found.push_back(effect);
    }
    return found;
  }

  std::vector<Group> Grouped(uint32_t node, const std::vector<const MessageEffect*>& effects) const {
    std::vector<Group> groups;
    for (const MessageEffect* effect : effects) {
      const bool outgoing = effect->send->node == node;
      const std::string type(effect->send->payload ? effect->send->payload->type_name() : "message");
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
        return x.effect == effect->effect && x.step == effect->step && x.outgoing == outgoing && x.type == type;
      });
      if (g == groups.end()) {
        g = groups.insert(groups.end(),
                          Group{effect->effect, effect->step, outgoing, type,
                                effect->send->payload ? story_.MessageClass(*effect->send->payload) : "message"});
        g->first_sent = effect->send->time;
        g->first_outcome = effect->outcome->time;
      }
      g->peers.push_back(outgoing ? effect->send->peer : effect->send->node);
      g->refs.push_back(effect->outcome->index);
      ++g->count;
    }
    return groups;
  }

  std::string Phrase(const Owner& owner, const Group& g) {
    const std::string what = fmt::format("{}{} ({})", g.cls, g.count > 1 ? "s" : "", g.type);
    const std::string subject =
        g.outgoing ? fmt::format("{} {} to {}", owner.possessive, what, NodeList(story_.scenario(), g.peers))
                   : fmt::format("{} from {} to {}", what, NodeList(story_.scenario(), g.peers), owner.object);
    const char* verb = g.count > 1 ? "were" : "was";
    std::string text;
    switch (g.effect) {
      case Effect::kCut: text = fmt::format("{} {} cut by {}", subject, verb, Label(g.step)); break;
      case Effect::kLost:
        text = fmt::format("{} {} lost to {}", subject, verb, g.step ? Label(g.step) : "the network's own loss");
        break;
      case Effect::kReceiverDown:
        text = fmt::format("{} {} lost while the receiver was down after {}", subject, verb, Label(g.step));
        break;
      case Effect::kHeld:
        text = fmt::format("{} {} held until {} by {}", subject, verb, Seconds(g.first_outcome), Label(g.step));
        break;
      case Effect::kSlowed:
        text = fmt::format("{} {} delayed by {} (sent {}, delivered {})", subject, verb, Label(g.step),
                           Seconds(g.first_sent), Seconds(g.first_outcome));
        break;
    }
    for (const uint64_t ref : g.refs) why_.evidence.insert(ref);
    return fmt::format("{} (trace {})", text, TraceRefs(g.refs));
  }

  // Each phrase; with `explains_timeout`, whether it says why a timer fired:
  // a request of the node's went unanswered, or a heartbeat or vote to it
  // never came.
  std::vector<std::string> Phrases(const Owner& owner, uint32_t node, const std::vector<const MessageEffect*>& effects,
                                   std::vector<bool>* explains_timeout = nullptr) {
    std::vector<std::string> phrases;
    for (const Group& g : Grouped(node, effects)) {
      if (explains_timeout != nullptr) {
        explains_timeout->push_back(IsDrop(g.effect) && (g.outgoing || g.cls == "heartbeat" || g.cls == "vote"));
      }
      phrases.push_back(Phrase(owner, g));
    }
    return phrases;
  }

  // Why a timer at its node fired: peers it used to hear from fell silent,
  // paused or crashed by a fault step, while it waited.
  std::vector<std::string> SilentPeers(const Event& fire) {
    std::vector<std::string> phrases;
    if (!fire.timer_armed) return phrases;
    const sim::TimeNs armed = *fire.timer_armed;
    const sim::TimeNs before = armed - (fire.time - armed);
    std::map<uint32_t, const Event*> heard_before;  // sender -> its last delivery before the wait
    std::set<uint32_t> heard_during;
    const std::vector<Event>& all = story_.events();
    auto it =
        std::lower_bound(all.begin(), all.end(), before, [](const Event& e, sim::TimeNs t) { return e.time < t; });
    for (; it != all.end() && it->time <= fire.time; ++it) {
      if (it->kind != TraceKind::kDeliver || it->node != fire.node) continue;
      if (it->time <= armed) heard_before[it->peer] = &*it;
      if (it->time > armed) heard_during.insert(it->peer);
    }
    for (const auto& [peer, last] : heard_before) {
      if (heard_during.count(peer)) continue;
      for (const ProcessFault& f : story_.ledger().process_faults()) {
        if (f.node != peer || f.step == nullptr || f.from > fire.time || (f.until && *f.until <= armed)) continue;
        const std::string type(last->payload ? last->payload->type_name() : "message");
        phrases.push_back(fmt::format("no {} came from {} after {}: {} was {} by {}", type, Node(peer),
                                      Seconds(last->time), Node(peer), f.paused ? "paused" : "down", Label(f.step)));
        break;
      }
    }
    return phrases;
  }

  void StaleWrites();
  void HeldByPause(const ProcessFault& pause);
  void LateActs();
  const MessageEffect* RequestEffect(const Event& request, uint32_t store) const;
  void Expiries();
  void DoubleVotes();
  const Event* VoteLine(uint32_t voter, int64_t term, uint32_t candidate, const checkers::Violation& v);
  std::string MadeLeader(uint32_t voter, int64_t term, uint32_t candidate, const Event& vote);
  std::vector<const Event*> ClaimsInStory() const;
  void Claims();
  struct Campaign {
    const Event* input = nullptr;            // what the node handled when it claimed
    const Event* candidacy = nullptr;        // its turn to candidate before, if any
    const Event* candidacy_input = nullptr;  // what it handled then
    const Event* timer = nullptr;            // the timer firing that began it, if one did
    sim::TimeNs from;                        // when the campaign's wait began
  };
  Campaign CampaignOf(const Event& claim) const;
  std::string ClaimLine(const Event& claim, bool* quiet);
  std::string Trigger(const Event& input, sim::TimeNs claimed, bool candidacy);
  void Clocks();
  void Race(const std::vector<const Event*>& claims);
  bool TimedOut(uint32_t node, sim::TimeNs from, sim::TimeNs to) const;
  void Strangers(const Event& a, const Event& b, sim::TimeNs until);
  void Untouched();

  const Story& story_;
  const std::vector<const checkers::Violation*>& violations_;
  std::set<const AppliedStep*> used_;
  Why why_;
};

void WhyWriter::StaleWrites() {
  std::set<uint64_t> told;  // stale_token and unique_token may name one accept
  for (const checkers::Violation* v : violations_) {
    const Event* accept = story_.recorder().Find(v->trace_index);
    if (accept == nullptr || !accept->Observes(vocab::kResourceAccept) || !told.insert(accept->index).second) continue;
    const sim::Payload& p = *accept->payload;
    const int64_t token = p.Get(vocab::kFieldToken), seq = p.Get(vocab::kFieldSeq);
    if (token >= p.Get(vocab::kFieldHighest)) continue;  // not stale: a second writer, told by the claims
    const auto writer = static_cast<uint32_t>(p.Get(vocab::kFieldWriter));
    const Event* write = story_.LastAt(writer, *accept, [&](const Event& e) {
      return e.Observes(vocab::kWrite) && e.payload->Get(vocab::kFieldToken) == token &&
             e.payload->Get(vocab::kFieldSeq) == seq;
    });
    if (write == nullptr) continue;
    const Event* begin = story_.LastAt(writer, *write, [](const Event& e) { return e.Observes(vocab::kWriteBegin); });
    const Event* send = story_.LastAt(writer, *write, [&](const Event& e) {
      return e.kind == TraceKind::kSend && e.time == write->time && e.peer == accept->node;
    });
    const ProcessFault* pause = nullptr;
    for (const ProcessFault& f : story_.ledger().process_faults()) {
      if (begin != nullptr && f.node == writer && f.paused && f.from >= begin->time && f.until &&
          *f.until <= write->time) {
        pause = &f;
      }
    }
    std::string line = fmt::format("{} wrote under token {} at {}", Node(writer), token, Seconds(write->time));
    if (begin != nullptr && pause != nullptr) {
      line = fmt::format(
          "{} began a write under token {} at {} (trace #{}) and was frozen by {} until {} ({}); "
          "the write went out then",
          Node(writer), token, Seconds(begin->time), begin->index, Label(pause->step), Seconds(*pause->until),
          sim::FormatDuration(*pause->until - pause->from));
    }
    if (send != nullptr) {
      if (const MessageEffect* late = story_.ledger().EffectOn(send->message_id)) {
        line += ", " + Phrases({"its", "it"}, writer, {late})[0];
      }
    }
    Line(fmt::format("{}; the resource accepted it at {} (trace #{}), after token {}", line, Seconds(accept->time),
                     accept->index, p.Get(vocab::kFieldHighest)));
    if (pause != nullptr) HeldByPause(*pause);
  }
}

// What else the pause held up: deliveries to the paused node.
void WhyWriter::HeldByPause(const ProcessFault& pause) {
  std::vector<const MessageEffect*> held;
  for (const MessageEffect* e : EffectsAround(pause.node, pause.from, *pause.until)) {
    if (e->effect == Effect::kHeld && e->step == pause.step) held.push_back(e);
  }
  if (held.empty()) return;
  std::set<std::string> types;
  std::vector<uint64_t> refs;
  for (const MessageEffect* e : held) {
    if (e->send->payload) types.insert(std::string(e->send->payload->type_name()));
    refs.push_back(e->outcome->index);
    why_.evidence.insert(e->outcome->index);
  }
  std::string list;
  for (const std::string& type : types) list += (list.empty() ? "" : ", ") + type;
  Line(fmt::format("  {} also held {} message{} to {} until {} ({}; trace {})",
                   pause.step ? pause.step->path : "the pause", held.size(), held.size() > 1 ? "s" : "",
                   Node(pause.node), Seconds(*pause.until), list, TraceRefs(refs)));
}

// Leases the store expired before the (last) violation, the last two: each
// a timer that fired because no renewal came.
// What a fault did to a request sent to the store, or to the store's reply.
const MessageEffect* WhyWriter::RequestEffect(const Event& request, uint32_t store) const {
  if (const MessageEffect* effect = story_.ledger().EffectOn(request.message_id)) return effect;
  for (const Event& e : story_.events()) {
    if (e.index > request.index && e.kind == TraceKind::kSend && e.node == store && e.peer == request.node &&
        e.Carries(algorithms::store::kStoreReply) && e.payload->Get("req") == request.payload->Get("req")) {
      return story_.ledger().EffectOn(e.message_id);
    }
  }
  return nullptr;
}

// A holder that acted past its margin (lease_validity): its lease requests
// after the last one the store granted, and what kept their grants from
// coming back in time.
void WhyWriter::LateActs() {
  const algorithms::Cluster cluster = story_.scenario().cluster();
  if (cluster.store == sim::kNoNode) return;
  const uint32_t store = cluster.store.value();
  namespace store_api = algorithms::store;
  auto is_request = [&](const Event& e) {
    return e.kind == TraceKind::kSend && e.peer == store && !story_.OfOtherKey(e) &&
           (e.Carries(store_api::kStorePutIfAbsent) || e.Carries(store_api::kStoreCas) ||
            e.Carries(store_api::kStoreKeepAlive));
  };
  for (const checkers::Violation* v : violations_) {
    const Event* act = story_.recorder().Find(v->trace_index);
    if (v->checker != "lease_validity" || act == nullptr || v->nodes.empty()) continue;
    const uint32_t holder = v->nodes[0].value();
    std::map<int64_t, const Event*> requests;  // req -> its send, the holder's, before the act
    const Event* granted = nullptr;            // the last request the store granted before the act
    std::vector<const Event*> later;           // the holder's requests after it
    for (const Event& e : story_.events()) {
      if (e.index >= act->index) break;
      if (e.node == holder && is_request(e)) {
        requests[e.payload->Get("req")] = &e;
        later.push_back(&e);
      } else if (e.kind == TraceKind::kSend && e.node == store && e.peer == holder &&
                 e.Carries(store_api::kStoreReply) && e.payload->Get("ok") == 1) {
        const auto request = requests.find(e.payload->Get("req"));
        if (request == requests.end()) continue;
        granted = request->second;
        later.erase(later.begin(), std::find(later.begin(), later.end(), granted) + 1);
      }
    }
    if (granted == nullptr) continue;
    std::string line = fmt::format(
        "{} {} at {} (trace #{}), {} after it sent {} at {}, the last lease request the "
        "store granted",
        Node(holder), act->Observes(vocab::kWriteBegin) ? "decided to write" : "claimed", Seconds(act->time),
        act->index, Seconds(act->time - granted->time), granted->payload->type_name(), Seconds(granted->time));
    std::vector<const MessageEffect*> effects;
    std::vector<const Event*> unanswered;
    for (const Event* request : later) {
      const MessageEffect* effect = RequestEffect(*request, store);
      if (effect != nullptr) {
        effects.push_back(effect);
      } else {
        unanswered.push_back(request);
      }
    }
    std::vector<std::string> phrases = Phrases({"its", "it"}, holder, effects);
    if (!unanswered.empty()) {
      std::vector<std::string> sent;
      sent.reserve(unanswered.size());
      for (const Event* request : unanswered) {
        sent.push_back(
            fmt::format("{} at {} (trace #{})", request->payload->type_name(), Seconds(request->time), request->index));
      }
      std::string phrase = fmt::format("no grant came back in time for its {}", fmt::join(sent, ", "));
      // Still on the wire: the links as a step had set them, if one had.
      if (const AppliedStep* step = story_.ledger().LinkStepAt(holder, store, unanswered.front()->time)) {
        phrase += fmt::format(", sent on links {} had slowed", Label(step));
      }
      phrases.push_back(std::move(phrase));
    }
    if (later.empty()) phrases.emplace_back("it sent no lease request after it");
    for (size_t i = 0; i < phrases.size(); ++i) line += (i == 0 ? ": " : "; ") + phrases[i];
    why_.evidence.insert(act->index);
    Line(line);
  }
}

void WhyWriter::Expiries() {
  const algorithms::Cluster cluster = story_.scenario().cluster();
  if (cluster.store == sim::kNoNode || violations_.empty()) return;
  const uint32_t store = cluster.store.value();
  std::vector<std::pair<const Event*, int64_t>> expiries;  // the first notice of each, and the holder
  int64_t holder = vocab::kNobody;
  // An owner of many keys: the key judged only, its holder as the store's
  // grants of it name them (a reply names no key).
  const std::optional<int64_t>& key = story_.focus_key();
  for (const Event& e : story_.events()) {
    if (e.time > violations_.back()->time) break;
    if (e.node != store) continue;
    if (key && e.Observes(vocab::kLeaseGrant) && vocab::KeyOf(*e.payload) == key) {
      holder = e.payload->Get(vocab::kFieldHolder);
    }
    if (e.kind != TraceKind::kSend || story_.OfOtherKey(e)) continue;
    if (!key && e.Carries(algorithms::store::kStoreReply) && e.payload->Get("ok") == 1) {
      holder = e.payload->Get("holder");
    }
    if (!e.Carries(algorithms::store::kStoreEvent)) continue;
    const auto kind = static_cast<algorithms::store::EventKind>(e.payload->Get("kind"));
    if (kind == algorithms::store::EventKind::kPut) holder = e.payload->Get("holder");
    if (kind != algorithms::store::EventKind::kExpire) continue;
    if (expiries.empty() || expiries.back().first->time != e.time) expiries.emplace_back(&e, holder);
  }
  if (expiries.size() > 2) expiries.erase(expiries.begin(), expiries.end() - 2);
  for (const auto& [expiry, was_held_by] : expiries) {
    const Event* fire = story_.HandlerInput(*expiry);
    std::vector<std::string> silent;
    if (fire != nullptr && fire->kind == TraceKind::kTimerFire && fire->timer_armed) {
      silent = SilentPeers(*fire);
      // Renewals that faults stopped on the way to the store.
      std::vector<const MessageEffect*> stopped;
      for (const MessageEffect* e : EffectsAround(store, *fire->timer_armed, fire->time, fire->index)) {
        if (e->send->peer == store && IsDrop(e->effect)) stopped.push_back(e);
      }
      for (std::string& phrase : Phrases({"the store's", "the store"}, store, stopped))
        silent.push_back(std::move(phrase));
    }
    const std::string whose = was_held_by >= 0 ? Node(static_cast<uint32_t>(was_held_by)) + "'s" : "a";
    std::string line =
        fmt::format("the store expired {} lease at {} (trace #{})", whose, Seconds(expiry->time), expiry->index);
    for (size_t i = 0; i < silent.size(); ++i) line += (i == 0 ? ": " : "; ") + silent[i];
    Line(line);
  }
}

// A lease holder counts its deadline on its own clock, the store its expiry
// on the store's: a clock fault on a node a violation involves is where the
// two parted, though it cut no message. Drift moves every clock of the node;
// a wall-clock step only deadlines counted on the wall clock.
void WhyWriter::Clocks() {
  if (story_.scenario().cluster().store == sim::kNoNode || violations_.empty()) return;
  std::set<uint32_t> involved;
  for (const checkers::Violation* v : violations_) {
    for (const sim::NodeId node : v->nodes) involved.insert(node.value());
  }
  const bool wall_deadlines = DeadlinesOnWallClock(story_.scenario());
  for (const Event& e : story_.events()) {
    if (e.time > violations_.back()->time) break;
    if (e.kind != TraceKind::kClock || !involved.contains(e.node)) continue;
    const bool drift = e.detail == "drift";
    if (!drift && !(e.detail == "wall_step" && wall_deadlines)) continue;
    const AppliedStep* step = nullptr;
    for (const AppliedStep& s : story_.ledger().steps()) {
      if (s.at == e.time && s.step != nullptr &&
          s.step->action == (drift ? FaultStep::Action::kClockDrift : FaultStep::Action::kClockShift)) {
        step = &s;
      }
    }
    why_.evidence.insert(e.index);
    if (drift && e.value == 0) {
      // The end of a drift: the clocks part no further, but the part they
      // did stays.
      Line(fmt::format("{}'s clock was set back to run at the true rate by {} (trace #{})", Node(e.node), Label(step),
                       e.index));
    } else if (drift) {
      Line(fmt::format(
          "{}'s clock was set to run {} ppm {} by {} (trace #{}): the lease deadlines it counts on its own clock "
          "part from the store's expiries (the margins are under \"leases\" below)",
          Node(e.node), std::abs(e.value), e.value < 0 ? "slow" : "fast", Label(step), e.index));
    } else {
      Line(fmt::format(
          "{}'s wall clock was stepped {}{} by {} (trace #{}): the lease deadlines it counts on the wall clock "
          "(deadline_clock=wall) moved with it (the margins are under \"leases\" below)",
          Node(e.node), e.value < 0 ? "back " : "", sim::FormatDuration(sim::TimeNs(std::abs(e.value))), Label(step),
          e.index));
    }
  }
}

void WhyWriter::DoubleVotes() {
  for (const checkers::Violation* v : violations_) {
    if (v->checker != "single_vote" || v->nodes.size() < 3) continue;
    const uint32_t voter = v->nodes[0].value();
    const std::vector<std::string> bugs = DeliberateBugs(story_.scenario());
    std::string with;
    for (const std::string& bug : bugs) with += (with.empty() ? " (" : ", ") + bug;
    Line(fmt::format("{} voted twice in {} {}{}:", Node(voter), story_.epoch_word(), v->term,
                     with.empty() ? "" : with + ")"));
    const Event* first = VoteLine(voter, v->term, v->nodes[1].value(), *v);
    const Event* second = story_.recorder().Find(v->trace_index);
    for (const ProcessFault& f : story_.ledger().process_faults()) {
      if (first == nullptr || second == nullptr || f.node != voter || f.paused || f.from < first->time ||
          f.from > second->time) {
        continue;
      }
      Line(f.power_loss ? fmt::format("  then {} lost its {} unsynced write{}", Label(f.step), f.lost_writes,
                                      f.lost_writes == 1 ? "" : "s")
                        : fmt::format("  then {} restarted it from its stable storage", Label(f.step)));
    }
    VoteLine(voter, v->term, v->nodes[2].value(), *v);
  }
}

// "for node 0 at …: node 0 became leader with it at …"; the vote's record.
const Event* WhyWriter::VoteLine(uint32_t voter, int64_t term, uint32_t candidate, const checkers::Violation& v) {
  const Event* vote = nullptr;
  for (const Event& e : story_.events()) {
    if (e.index > v.trace_index) break;
    if (e.node == voter && e.Observes(vocab::kVote) && e.payload->Get(vocab::kFieldTerm) == term &&
        e.payload->Get(vocab::kFieldCandidate) == candidate) {
      vote = &e;
      break;
    }
  }
  if (vote == nullptr) return nullptr;
  std::string line = fmt::format("  for {}{} at {} (trace #{})", Node(candidate), candidate == voter ? " (itself)" : "",
                                 Seconds(vote->time), vote->index);
  const Event* request = story_.HandlerInput(*vote);
  const MessageEffect* late = request != nullptr && request->kind == TraceKind::kDeliver
                                  ? story_.ledger().EffectOn(request->message_id)
                                  : nullptr;
  if (late != nullptr && request->payload) {
    line += fmt::format(", on {}'s {} {} by {} (sent {}, delivered {}; trace #{})", Node(request->peer),
                        request->payload->type_name(), late->effect == Effect::kHeld ? "held" : "delayed",
                        Label(late->step), Seconds(late->send->time), Seconds(request->time), request->index);
    why_.evidence.insert(request->index);
  }
  Line(line + ": " + MadeLeader(voter, term, candidate, *vote));
  return vote;
}

// Whether `vote` made its candidate leader: its grant on the wire, and the claim after it.
std::string WhyWriter::MadeLeader(uint32_t voter, int64_t term, uint32_t candidate, const Event& vote) {
  uint64_t after = vote.index;
  if (candidate != voter) {
    const vocab::MessageRoles& roles = story_.scenario().algorithm->message_roles();
    const Event* grant = nullptr;
    for (size_t i = story_.PositionOf(vote.index); i < story_.events().size(); ++i) {
      const Event& e = story_.events()[i];
      if (e.time != vote.time) break;
      if (e.kind == TraceKind::kSend && e.node == voter && e.peer == candidate && e.payload &&
          roles.GrantTerm(*e.payload) == term) {
        grant = &e;
        break;
      }
    }
    const MessageFate* fate = grant != nullptr ? story_.recorder().Fate(grant->message_id) : nullptr;
    if (fate == nullptr || fate->deliveries.empty()) {
      const MessageEffect* lost = grant != nullptr ? story_.ledger().EffectOn(grant->message_id) : nullptr;
      return lost != nullptr ? Phrases({Node(voter) + "'s", Node(voter)}, voter, {lost})[0] : "it made no leader";
    }
    after = fate->deliveries.front()->index;
  }
  for (size_t i = story_.PositionOf(after); i < story_.events().size(); ++i) {
    const Event& e = story_.events()[i];
    if (e.node == candidate && IsLeaderRole(e) && e.payload->Get(vocab::kFieldTerm) == term) {
      return fmt::format("{} became leader of {} {} with it at {} (trace #{})", Node(candidate), story_.epoch_word(),
                         term, Seconds(e.time), e.index);
    }
  }
  return fmt::format("{} did not become leader of {} {}", Node(candidate), story_.epoch_word(), term);
}

// The leader claims the violations rest on, at most four.
std::vector<const Event*> WhyWriter::ClaimsInStory() const {
  std::vector<const Event*> claims;
  for (const checkers::Violation* v : violations_) {
    std::vector<sim::NodeId> nodes = v->nodes;
    if (v->checker == "single_vote") continue;  // its candidates are told with the votes
    // A stale write outlived the holder of the higher token: that holder's claim.
    if (v->checker == "stale_token") nodes.erase(nodes.begin());
    for (const sim::NodeId node : nodes) {
      const Event* claim = story_.LeaderClaim(node.value(), v->trace_index, v->key);
      if (claim != nullptr && std::find(claims.begin(), claims.end(), claim) == claims.end() && claims.size() < 4) {
        claims.push_back(claim);
      }
    }
  }
  return claims;
}

void WhyWriter::Claims() {
  const std::vector<const Event*> claims = ClaimsInStory();
  std::vector<std::string> quiet_lines;
  for (const Event* claim : claims) {
    bool quiet = false;
    std::string line = ClaimLine(*claim, &quiet);
    (quiet ? quiet_lines : why_.lines).push_back(std::move(line));
  }
  Race(claims);
  for (size_t i = 0; i < claims.size(); ++i) {
    for (size_t j = i + 1; j < claims.size(); ++j) {
      if (claims[i]->node == claims[j]->node ||
          claims[i]->payload->Get(vocab::kFieldTerm) != claims[j]->payload->Get(vocab::kFieldTerm)) {
        continue;
      }
      Strangers(*claims[i], *claims[j], std::max({claims[i]->time, claims[j]->time, violations_.front()->time}));
    }
  }
  for (std::string& line : quiet_lines) why_.lines.push_back(std::move(line));
}

// How a claim came about: the input the node was handling, and, when it
// was a candidate first, what made it one.
WhyWriter::Campaign WhyWriter::CampaignOf(const Event& claim) const {
  Campaign c;
  c.input = story_.HandlerInput(claim);
  const Event* role_before = story_.LastAt(
      claim.node, claim, [&](const Event& e) { return e.index < claim.index && e.Observes(vocab::kRoleChange); });
  if (role_before != nullptr &&
      role_before->payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kCandidate)) {
    c.candidacy = role_before;
    c.candidacy_input = story_.HandlerInput(*role_before);
  }
  c.from = c.candidacy != nullptr ? c.candidacy->time : claim.time;
  for (const Event* in : {c.input, c.candidacy_input}) {
    if (in != nullptr && in->timer_armed) c.from = std::min(c.from, *in->timer_armed);
    if (c.timer == nullptr && in != nullptr && in->kind == TraceKind::kTimerFire) c.timer = in;
  }
  return c;
}

std::string WhyWriter::ClaimLine(const Event& claim, bool* quiet) {
  const uint32_t node = claim.node;
  const Campaign c = CampaignOf(claim);
  std::vector<std::string> parts;
  if (c.candidacy_input != nullptr && c.candidacy_input != c.input) {
    parts.push_back(Trigger(*c.candidacy_input, claim.time, true));
  }
  if (c.input != nullptr) parts.push_back(Trigger(*c.input, claim.time, false));
  parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
  std::string sentence = Node(node);
  for (size_t i = 0; i < parts.size(); ++i) sentence += (i == 0 ? " " : ", ") + parts[i];
  sentence += fmt::format("{}became leader of {} {} at {} (trace #{})", parts.empty() ? " " : " and ",
                          story_.epoch_word(), claim.payload->Get(vocab::kFieldTerm), Seconds(claim.time), claim.index);
  std::vector<bool> explains_timeout;
  std::vector<std::string> phrases =
      Phrases({"its", "it"}, node, EffectsAround(node, c.from, claim.time, claim.index), &explains_timeout);
  // The timer that made it a candidate as well as the one that made it
  // leader: a peer silent since a crash explains the first.
  std::vector<const Event*> timers = {c.timer};
  if (c.candidacy_input != nullptr && c.candidacy_input != c.timer &&
      c.candidacy_input->kind == TraceKind::kTimerFire) {
    timers.push_back(c.candidacy_input);
  }
  for (const Event* timer : timers) {
    if (timer == nullptr) continue;
    for (std::string& phrase : SilentPeers(*timer)) {
      if (std::find(phrases.begin(), phrases.end(), phrase) != phrases.end()) continue;
      phrases.push_back(std::move(phrase));
      explains_timeout.push_back(true);
    }
  }
  *quiet = phrases.empty();
  if (phrases.empty()) return sentence + "; nothing it sent or awaited was cut, lost or delayed";
  // What explains the timeout first.
  std::vector<size_t> order(phrases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return explains_timeout[i]; });
  const bool because = c.input != nullptr && c.input->kind == TraceKind::kTimerFire && explains_timeout[order[0]];
  for (size_t i = 0; i < order.size(); ++i) {
    sentence += (i == 0 ? (because ? " because " : ": ") : "; ") + phrases[order[i]];
  }
  return sentence;
}

// "timed out", "got node 2's vote (raft.vote)", "turned candidate at 3.007511s on the store's store.event".
std::string WhyWriter::Trigger(const Event& input, sim::TimeNs claimed, bool candidacy) {
  const std::string at = input.time != claimed ? " at " + Seconds(input.time) : "";
  if (input.kind == TraceKind::kTimerFire) return "timed out" + at;
  if (input.kind == TraceKind::kStart && input.time > sim::TimeNs()) {
    // A process that campaigns as it boots: the end of a crash.
    for (const ProcessFault& f : story_.ledger().process_faults()) {
      if (f.node == input.node && !f.paused && f.until == input.time) {
        return fmt::format("restarted{} after {}{}", at, f.step != nullptr ? Label(f.step) : "a crash",
                           candidacy ? " and turned candidate" : "");
      }
    }
  }
  if (input.kind != TraceKind::kDeliver || !input.payload) return "";
  const std::string type(input.payload->type_name());
  const std::string what = input.peer < story_.scenario().nodes ? fmt::format("{}'s {} ({})", Node(input.peer),
                                                                              story_.MessageClass(*input.payload), type)
                                                                : fmt::format("the {}'s {}", Node(input.peer), type);
  return candidacy ? fmt::format("turned candidate{} on {}", at, what) : fmt::format("got {}{}", what, at);
}

// Leaders of one term whose campaigns began when their timers fired at the
// same instant; and the nodes a fault step kept out of that race.
void WhyWriter::Race(const std::vector<const Event*>& claims) {
  std::map<int64_t, std::vector<std::pair<uint32_t, const Event*>>> timers;  // term -> (node, timer fire)
  for (const Event* claim : claims) {
    const Campaign c = CampaignOf(*claim);
    if (c.timer != nullptr) timers[claim->payload->Get(vocab::kFieldTerm)].emplace_back(claim->node, c.timer);
  }
  for (const auto& [term, racers] : timers) {
    const sim::TimeNs at = racers.front().second->time;
    if (racers.size() < 2 ||
        std::any_of(racers.begin(), racers.end(), [&](const auto& racer) { return racer.second->time != at; })) {
      continue;
    }
    std::vector<uint32_t> nodes;
    for (const auto& racer : racers) nodes.push_back(racer.first);
    std::string line = fmt::format("{} timed out at the same instant, {}, and campaigned at once",
                                   NodeList(story_.scenario(), nodes), Seconds(at));
    for (uint32_t n = 0; n < story_.scenario().nodes; ++n) {
      if (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) continue;
      const ProcessFault* crash = nullptr;
      for (const ProcessFault& f : story_.ledger().process_faults()) {
        if (f.node == n && !f.paused && f.step != nullptr && f.until && *f.until <= at) crash = &f;
      }
      if (crash == nullptr || TimedOut(n, *crash->until, at)) continue;
      line += fmt::format("; {}, down from {} to {} by {}, had not timed out since", Node(n), Seconds(crash->from),
                          Seconds(*crash->until), Label(crash->step));
    }
    Line(line);
  }
}

bool WhyWriter::TimedOut(uint32_t node, sim::TimeNs from, sim::TimeNs to) const {
  for (const Event& e : story_.events()) {
    if (e.time > to) break;
    if (e.node == node && e.kind == TraceKind::kTimerFire && e.time >= from) return true;
  }
  return false;
}

// Two leaders of one term: the leader messages each sent the other that faults stopped.
void WhyWriter::Strangers(const Event& a, const Event& b, sim::TimeNs until) {
  const vocab::MessageRoles& roles = story_.scenario().algorithm->message_roles();
  std::vector<std::string> phrases;
  for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    std::vector<const MessageEffect*> stopped;
    for (const MessageEffect* e : EffectsAround(from->node, from->time, until)) {
      if (e->send->node == from->node && e->send->peer == to->node && e->send->payload &&
          roles.LeaderTerm(*e->send->payload)) {
        stopped.push_back(e);
      }
    }
    for (std::string& phrase : Phrases({Node(from->node) + "'s", Node(from->node)}, from->node, stopped)) {
      phrases.push_back(std::move(phrase));
    }
  }
  if (phrases.empty()) return;
  std::string line = fmt::format("{} and {} never heard from each other as leader", Node(a.node), Node(b.node));
  for (size_t i = 0; i < phrases.size(); ++i) line += (i == 0 ? ": " : "; ") + phrases[i];
  Line(line);
}

// Steps that applied before the violations but touched none of the chains.
void WhyWriter::Untouched() {
  if (violations_.empty()) return;
  std::vector<std::string> labels;
  for (const AppliedStep& step : story_.ledger().steps()) {
    if (step.at <= violations_.back()->time && !used_.count(&step)) labels.push_back(step.Label());
  }
  if (labels.empty()) return;
  std::string list;
  for (size_t i = 0; i < labels.size() && i < 3; ++i) list += (i == 0 ? "" : ", ") + labels[i];
  if (labels.size() > 3) list += fmt::format(" and {} more", labels.size() - 3);
  Line(fmt::format("also applied, cutting or delaying none of the messages above: {}", list));
}

}  // namespace

Why ExplainWhy(const Story& story, const std::vector<const checkers::Violation*>& violations) {
  return WhyWriter(story, violations).Write();
}

}  // namespace electsim::explain
