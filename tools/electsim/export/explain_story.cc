#include "tools/electsim/export/explain_story.h"

#include <algorithm>

#include "electsim/algorithms/store.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim::explain {

using sim::TraceKind;

std::string Seconds(sim::TimeNs t) { return fmt::format("{}.{:06}s", t.ns() / 1000000000, t.ns() % 1000000000 / 1000); }

std::string NodeList(const Scenario& scenario, std::vector<uint32_t> nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::vector<std::string> names;
  bool all_election_nodes = true;
  for (const uint32_t n : nodes) {
    all_election_nodes = all_election_nodes && n < scenario.nodes;
    names.push_back(n < scenario.nodes ? std::to_string(n) : NodeLabel(scenario, n));
  }
  if (names.empty()) return "nobody";
  std::string list = names[0];
  for (size_t i = 1; i < names.size(); ++i) list += (i + 1 == names.size() ? " and " : ", ") + names[i];
  if (!all_election_nodes) return names.size() == 1 ? NodeLabel(scenario, nodes[0]) : list;
  return (names.size() == 1 ? "node " : "nodes ") + list;
}

std::string TraceRefs(std::vector<uint64_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<std::string> refs;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices.size() > 4 && i == 2) {
      refs.push_back("…");
      i = indices.size() - 2;
      continue;
    }
    refs.push_back(fmt::format("#{}", indices[i]));
  }
  std::string out = refs.empty() ? "" : refs[0];
  for (size_t i = 1; i < refs.size(); ++i) out += (i + 1 == refs.size() ? " and " : ", ") + refs[i];
  return out;
}

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

std::string Unquoted(const std::string& text) {
  return text.size() >= 2 && text.front() == '"' && text.back() == '"' ? text.substr(1, text.size() - 2) : text;
}

std::vector<std::string> DeliberateBugs(const Scenario& scenario) {
  const auto values = scenario.options.Describe();
  const auto defaults = algorithms::OptionValues::Defaults(scenario.algorithm->options()).Describe();
  std::vector<std::string> bugs;
  for (const algorithms::OptionSpec& spec : scenario.algorithm->options()) {
    const bool names_a_bug = spec.name == "bug" || spec.help.find("deliberate bug") != std::string::npos;
    auto value = values.find(spec.name);
    if (!names_a_bug || value == values.end() || value->second == defaults.at(spec.name)) continue;
    bugs.push_back(fmt::format("{}={}", spec.name, Unquoted(value->second)));
  }
  return bugs;
}

Story::Story(const Scenario& scenario, const RunResult& result, const Recorder& recorder, const FaultLedger& ledger)
    : scenario_(scenario),
      result_(result),
      recorder_(recorder),
      ledger_(ledger),
      epoch_word_(scenario.algorithm->name() == "raft" || scenario.algorithm->name() == "lease" ? "term" : "epoch"),
      store_(scenario.cluster().store) {
  const checkers::Violation* first = nullptr;
  for (const checkers::Violation& v : result.violations) {
    if (first == nullptr || std::pair(v.time, v.trace_index) < std::pair(first->time, first->trace_index)) first = &v;
  }
  if (first == nullptr || !first->key) return;
  focus_key_ = first->key;
  for (const Event& e : events()) {
    if (e.kind != TraceKind::kSend || e.peer != store_.value() || !e.payload || !e.payload->Has("req")) continue;
    const std::optional<int64_t> key = NamedKey(*e.payload);
    if (key && *key != *focus_key_) other_key_requests_.emplace(e.node, e.payload->Get("req"));
  }
}

// The key a record names: its key field, or a line's directory.
std::optional<int64_t> Story::NamedKey(const sim::Payload& p) {
  if (const std::optional<int64_t> key = vocab::KeyOf(p)) return key;
  if (p.Has("dir")) return p.Get("dir");
  return std::nullopt;
}

bool Story::OfOtherKey(const Event& e) const {
  if (!focus_key_ || !e.payload) return false;
  if (const std::optional<int64_t> key = NamedKey(*e.payload)) return *key != *focus_key_;
  if (!e.payload->Has("req") || store_ == sim::kNoNode) return false;
  const uint32_t store = store_.value();
  const uint32_t client = e.kind == TraceKind::kSend && e.node == store      ? e.peer
                          : e.kind == TraceKind::kDeliver && e.peer == store ? e.node
                                                                             : Event::kNone;
  return client != Event::kNone && other_key_requests_.contains({client, e.payload->Get("req")});
}

std::string Story::Node(uint32_t node) const { return NodeLabel(scenario_, node); }

std::string Story::MessageClass(const sim::Payload& message) const {
  const vocab::MessageRoles& roles = scenario_.algorithm->message_roles();
  for (const vocab::VoteGrantMessage& grant : roles.vote_grants) {
    if (message.Is(*grant.type)) return "vote";
  }
  if (roles.IsSteadyState(message)) return "heartbeat";
  if (roles.LeaderTerm(message)) return "leader message";
  const std::string_view type = message.type_name();
  if (type.rfind("resource.", 0) == 0) return "write";
  if (type.rfind("store.", 0) == 0) return "store message";
  return "election message";
}

size_t Story::PositionOf(uint64_t index) const {
  const std::vector<Event>& all = events();
  return std::lower_bound(all.begin(), all.end(), index, [](const Event& e, uint64_t i) { return e.index < i; }) -
         all.begin();
}

const Event* Story::LeaderClaim(uint32_t node, uint64_t up_to, std::optional<int64_t> key) const {
  const Event* claim = nullptr;
  for (const Event& e : events()) {
    if (e.index > up_to) break;
    if (e.node == node && e.Observes(vocab::kRoleChange) &&
        e.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader) &&
        (!key || vocab::KeyOf(*e.payload) == key)) {
      claim = &e;
    }
  }
  return claim;
}

const Event* Story::LastAt(uint32_t node, const Event& e, const std::function<bool(const Event&)>& match) const {
  const std::vector<Event>& all = events();
  for (size_t i = std::min(PositionOf(e.index) + 1, all.size()); i-- > 0;) {
    if (all[i].node == node && match(all[i])) return &all[i];
  }
  return nullptr;
}

const Event* Story::HandlerInput(const Event& e) const {
  const std::vector<Event>& all = events();
  // A handler's records share its input's instant.
  for (size_t i = PositionOf(e.index); i-- > 0 && all[i].time == e.time;) {
    const Event& x = all[i];
    if (x.node == e.node &&
        (x.kind == TraceKind::kDeliver || x.kind == TraceKind::kTimerFire || x.kind == TraceKind::kStart)) {
      return &x;
    }
  }
  return nullptr;
}

}  // namespace electsim::explain
