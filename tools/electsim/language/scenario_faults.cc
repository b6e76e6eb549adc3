// Fault steps: "at" a time, one action, and for some actions "for" (undo
// after), "during" (wait for a write) or "lose_unsynced" (a crash that is a
// power loss). The schema has checked which keys each action allows and their
// types; here node ids are held to the cluster, times to the run, and the
// relations between nodes are checked (partition groups disjoint, a cut
// between two different nodes).
#include <algorithm>
#include <array>
#include <utility>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/language/json_document.h"
#include "tools/electsim/language/scenario_reader.h"

namespace electsim {

std::string NodeSelector::Describe() const {
  switch (kind) {
    case Kind::kId: return fmt::format("node {}", id);
    case Kind::kLeader: return "the leader";
    case Kind::kStore: return "the store";
    case Kind::kResource: return "the resource";
    case Kind::kNextLeader: return id == 1 ? "the next leader" : fmt::format("the leader {} elections on", id);
  }
  return "?";
}

std::string_view FaultStep::MomentName(Moment moment) {
  switch (moment) {
    case Moment::kNone: return "";
    case Moment::kWrite: return "write";
    case Moment::kVote: return "vote";
    case Moment::kTerm: return "term";
    case Moment::kRenewal: return "renewal";
    case Moment::kCommit: return "commit";
    case Moment::kCampaign: return "campaign";
  }
  return "";
}

std::string FaultStep::Describe() const {
  std::string text = action_key;
  switch (action) {
    case Action::kCrash:
    case Action::kRestart:
    case Action::kPause:
    case Action::kResume:
    case Action::kIsolate:
    case Action::kClockDrift:
    case Action::kClockShift: text += fmt::format(" {}", node.Describe()); break;
    case Action::kCut:
    case Action::kLink: text += fmt::format(" from {} to {}", node.Describe(), to.Describe()); break;
    case Action::kPartition:
    case Action::kHeal:
    case Action::kNetwork: break;
  }
  if (action == Action::kClockDrift) text += fmt::format(" drift {} ppm", drift_ppm);
  if (action == Action::kClockShift) text += fmt::format(" shift {}", sim::FormatDuration(shift));
  if (during != Moment::kNone) text += fmt::format(" during its next {}", MomentName(during));
  if (within) text += fmt::format(" within {}", sim::FormatDuration(*within));
  if (lose_unsynced) text += " losing its unsynced writes";
  if (for_ns) text += fmt::format(" for {}", sim::FormatDuration(*for_ns));
  return text;
}

namespace scenario_reader {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<const char*, FaultStep::Action>, 11> kActions = {{
    {"crash", FaultStep::Action::kCrash},
    {"restart", FaultStep::Action::kRestart},
    {"pause", FaultStep::Action::kPause},
    {"resume", FaultStep::Action::kResume},
    {"partition", FaultStep::Action::kPartition},
    {"isolate", FaultStep::Action::kIsolate},
    {"cut", FaultStep::Action::kCut},
    {"heal", FaultStep::Action::kHeal},
    {"clock", FaultStep::Action::kClockDrift},  // or kClockShift, by its body
    {"network", FaultStep::Action::kNetwork},
    {"link", FaultStep::Action::kLink},
}};

void ReadPartition(const Reader& reader, const json& body, const std::string& path, const Scenario& s,
                   FaultStep& step) {
  for (size_t g = 0; g < body.size(); ++g) {
    const std::string group_path = Reader::Child(path, g);
    std::vector<NodeSelector> group;
    for (size_t i = 0; i < body[g].size(); ++i) {
      const std::string node_path = Reader::Child(group_path, i);
      group.push_back(ReadNodeSelector(reader, body[g][i], node_path, s, /*actor=*/false));
      for (const auto& earlier : step.groups) {
        if (std::count(earlier.begin(), earlier.end(), group.back())) {
          reader.Fail(node_path,
                      fmt::format("each node in one group only ({} is in an earlier group)", group.back().Describe()));
        }
      }
      if (std::count(group.begin(), group.end(), group.back()) > 1) {
        reader.Fail(node_path, fmt::format("each node once ({} is already in this group)", group.back().Describe()));
      }
    }
    step.groups.push_back(std::move(group));
  }
}

// "from" and "to" of a cut or a link: two different nodes.
void ReadEnds(const Reader& reader, const json& body, const std::string& path, const Scenario& s,
              std::string_view why_different, bool from_acts, FaultStep& step) {
  step.node = ReadNodeSelector(reader, body.at("from"), Reader::Child(path, "from"), s, from_acts);
  step.to = ReadNodeSelector(reader, body.at("to"), Reader::Child(path, "to"), s, /*actor=*/false);
  if (step.to == step.node) {
    reader.Fail(Reader::Child(path, "to"), fmt::format("a node other than \"from\" ({})", why_different));
  }
}

constexpr std::array<std::pair<const char*, Trigger::Event>, 3> kEvents = {{
    {"leader_elected", Trigger::Event::kLeaderElected},
    {"leader_known", Trigger::Event::kLeaderKnown},
    {"step_done", Trigger::Event::kStepDone},
}};

Trigger ReadTrigger(const Reader& reader, const json& value, const std::string& path, const Scenario& s) {
  (void)s;
  Trigger trigger;
  const std::string& event = reader.String(value.at("event"), Reader::Child(path, "event"));
  for (const auto& [key, kind] : kEvents) {
    if (event == key) trigger.event = kind;
  }
  if (const json* step = Reader::Find(value, "step")) {
    // An index is checked against the step count, a name resolved, once every step is read.
    if (step->is_string()) {
      trigger.step_name = step->get<std::string>();
    } else {
      trigger.step = reader.Unsigned(*step, Reader::Child(path, "step"));
    }
  } else if (trigger.event == Trigger::Event::kStepDone) {
    reader.Fail(path, "a \"step\" with \"event\": \"step_done\" (the step to wait for)");
  }
  if (const json* delay = Reader::Find(value, "delay"))
    trigger.delay = reader.Time(*delay, Reader::Child(path, "delay"));
  return trigger;
}

}  // namespace

void ResolveStepReferences(const Reader& reader, std::vector<FaultStep>& steps) {
  for (FaultStep& step : steps) {
    if (!step.after || (!step.after->step && step.after->step_name.empty())) continue;
    const std::string ref_path = Reader::Child(Reader::Child(step.json_path, "after"), "step");
    if (!step.after->step_name.empty()) {
      const auto named = std::find_if(steps.begin(), steps.end(),
                                      [&](const FaultStep& other) { return other.name == step.after->step_name; });
      if (named == steps.end()) {
        reader.Fail(ref_path, fmt::format("the \"name\" of a step in \"faults\" (no step is named \"{}\")",
                                          step.after->step_name));
      }
      step.after->step = named->file_index;
    }
    if (*step.after->step >= steps.size()) {
      reader.Fail(ref_path, fmt::format("the index of a step in \"faults\", in [0, {}]", steps.size() - 1));
    }
  }
  // A step waiting, through a chain of others, for itself would never happen.
  for (const FaultStep& start : steps) {
    size_t hops = 0;
    for (const FaultStep* step = &start; step->after && step->after->step; step = &steps[*step->after->step]) {
      if (++hops > steps.size() || *step->after->step == start.file_index) {
        reader.Fail(Reader::Child(Reader::Child(start.json_path, "after"), "step"),
                    "a step that does not wait, directly or through others, for this one");
      }
    }
  }
}

NodeSelector ReadNodeSelector(const Reader& reader, const json& value, const std::string& path, const Scenario& s,
                              bool actor) {
  const std::string expected = fmt::format(
      "a node: an id in [0, {}], \"leader\"{}, \"resource\"{}", s.nodes - 1, actor ? ", {\"next_leader\": N}" : "",
      s.algorithm->uses_store() ? " or \"store\"" : " (this algorithm has no store)");
  NodeSelector selector;
  if (value.is_object()) {
    const json* n = Reader::Find(value, "next_leader");
    if (!actor || n == nullptr || value.size() != 1) reader.Fail(path, expected, &value);
    selector.kind = NodeSelector::Kind::kNextLeader;
    selector.id = static_cast<uint32_t>(reader.Integer(*n, Reader::Child(path, "next_leader"), 1, kMaxNextLeader));
    return selector;
  }
  if (value.is_string()) {
    const std::string& name = value.get_ref<const std::string&>();
    if (name == "leader") {
      selector.kind = NodeSelector::Kind::kLeader;
    } else if (name == "resource") {
      selector.kind = NodeSelector::Kind::kResource;
    } else if (name == "store" && s.algorithm->uses_store()) {
      selector.kind = NodeSelector::Kind::kStore;
    } else {
      reader.Fail(path, expected, &value);
    }
    return selector;
  }
  const std::optional<uint64_t> id = AsNonNegativeInteger(value);
  if (!id || *id >= s.nodes) reader.Fail(path, expected, &value);
  selector.id = static_cast<uint32_t>(*id);
  return selector;
}

// The step's name and when it happens ("at" or "after").
void ReadStepTime(const Reader& reader, const json& value, const std::string& path, const Scenario& s,
                  FaultStep& step) {
  if (const json* name = Reader::Find(value, "name")) {
    step.name = reader.String(*name, Reader::Child(path, "name"));
    for (const FaultStep& earlier : s.faults) {
      if (earlier.name == step.name) {
        reader.Fail(Reader::Child(path, "name"), fmt::format("a name no other step has ({} has it)", earlier.json_path),
                    name);
      }
    }
  }
  const json* at = Reader::Find(value, "at");
  if ((at != nullptr) == value.contains("after")) {
    // Checked here rather than in the schema: a oneOf per step costs a million-step file seconds.
    reader.Fail(path, fmt::format("exactly one of \"at\" and \"after\" (this step has {})",
                                  at != nullptr ? "both" : "neither"));
  }
  if (at != nullptr) {
    step.at_range = reader.Time(*at, Reader::Child(path, "at"));
    step.at = step.at_range.min;
    if (step.at_range.max > s.duration) {
      reader.Fail(Reader::Child(path, "at"),
                  fmt::format("a time within the run's duration ({})", sim::FormatDuration(s.duration)), at);
    }
  } else {
    step.after = ReadTrigger(reader, value.at("after"), Reader::Child(path, "after"), s);
  }
}

FaultStep::Moment ReadMoment(const Reader& reader, const json& value, const std::string& step_path) {
  using Moment = FaultStep::Moment;
  for (Moment moment :
       {Moment::kWrite, Moment::kVote, Moment::kTerm, Moment::kRenewal, Moment::kCommit, Moment::kCampaign}) {
    if (value == FaultStep::MomentName(moment)) return moment;
  }
  reader.Fail(Reader::Child(step_path, "during"),
              "\"write\", \"vote\", \"term\", \"renewal\", \"commit\" or \"campaign\"", &value);
  return Moment::kNone;
}

// Only election nodes reach the moments "during" waits for.
void RequireMomentNode(const Reader& reader, const FaultStep& step, const std::string& path, const json& value) {
  const bool service = step.node.kind == NodeSelector::Kind::kStore || step.node.kind == NodeSelector::Kind::kResource;
  if (step.during != FaultStep::Moment::kNone && service) {
    reader.Fail(path, "an election node or \"leader\" with \"during\" (only they reach those moments)", &value);
  }
}

// What the step does to whom, by its action.
void ReadStepAction(const Reader& reader, const json& body, const std::string& action_path, const Scenario& s,
                    FaultStep& step) {
  switch (step.action) {
    case FaultStep::Action::kCrash:
    case FaultStep::Action::kRestart:
    case FaultStep::Action::kPause:
    case FaultStep::Action::kResume:
    case FaultStep::Action::kIsolate: {
      // A restart or resume acts on a node that is down or paused, which no
      // election makes leader.
      const bool acts = step.action != FaultStep::Action::kRestart && step.action != FaultStep::Action::kResume;
      step.node = ReadNodeSelector(reader, body, action_path, s, acts);
      RequireMomentNode(reader, step, action_path, body);
      break;
    }
    case FaultStep::Action::kPartition: ReadPartition(reader, body, action_path, s, step); break;
    case FaultStep::Action::kCut:
      ReadEnds(reader, body, action_path, s, "a node always reaches itself", /*from_acts=*/true, step);
      RequireMomentNode(reader, step, Reader::Child(action_path, "from"), body.at("from"));  // its sends are cut
      break;
    case FaultStep::Action::kHeal: break;
    case FaultStep::Action::kClockDrift:
      step.node = ReadNodeSelector(reader, body.at("node"), Reader::Child(action_path, "node"), s, /*actor=*/true);
      if (const json* drift = Reader::Find(body, "drift_ppm")) {
        step.drift_ppm = reader.Integer(*drift, Reader::Child(action_path, "drift_ppm"), -kMaxDriftPpm, kMaxDriftPpm);
      } else {
        step.action = FaultStep::Action::kClockShift;
        step.shift = reader.Duration(body.at("shift"), Reader::Child(action_path, "shift"), /*allow_negative=*/true);
      }
      RequireMomentNode(reader, step, Reader::Child(action_path, "node"), body.at("node"));
      break;
    case FaultStep::Action::kNetwork:
      step.link = s.network;
      ReadLinkSettings(reader, body, action_path, step.link);
      break;
    case FaultStep::Action::kLink:
      step.link = s.network;
      ReadLinkSettings(reader, body, action_path, step.link);
      ReadEnds(reader, body, action_path, s, "messages to oneself do not cross the network", /*from_acts=*/false, step);
      break;
    case FaultStep::Action::kClockShift: break;
  }
}

FaultStep ReadFaultStep(const Reader& reader, const json& value, const std::string& path, const Scenario& s) {
  FaultStep step;
  step.json_path = path;
  step.file_index = s.faults.size();
  ReadStepTime(reader, value, path, s, step);
  for (const auto& [key, action] : kActions) {
    if (value.contains(key)) {
      step.action_key = key;
      step.action = action;
      break;
    }
  }
  if (step.action_key.empty()) reader.Fail(path, "one action");  // the schema requires one
  const std::string action_path = Reader::Child(path, step.action_key);
  const json& body = value.at(step.action_key);
  if (const json* f = Reader::Find(value, "for")) {
    step.for_range = reader.Time(*f, Reader::Child(path, "for"), /*positive=*/true);
    step.for_ns = step.for_range->min;
  }
  if (const json* during = Reader::Find(value, "during")) step.during = ReadMoment(reader, *during, path);
  if (const json* within = Reader::Find(value, "within")) {
    if (step.during == FaultStep::Moment::kNone)
      reader.Fail(Reader::Child(path, "within"), "\"within\" only with \"during\"", within);
    step.within = reader.PositiveDuration(*within, Reader::Child(path, "within"));
  }
  if (const json* lose = Reader::Find(value, "lose_unsynced")) {  // the schema allows it in crash steps only
    step.lose_unsynced = reader.Bool(*lose, Reader::Child(path, "lose_unsynced"));
  }

  ReadStepAction(reader, body, action_path, s, step);
  return step;
}

}  // namespace scenario_reader

algorithms::FaultKinds LinkFaultKinds(const sim::LinkConfig& link) {
  using algorithms::FaultKind;
  algorithms::FaultKinds kinds;
  if (link.drop.parts() > 0) kinds = kinds.With({FaultKind::kLoss});
  if (link.duplicate.parts() > 0) kinds = kinds.With({FaultKind::kDuplication});
  if (std::max(link.latency.min_ns, link.latency.max_ns) > kCalmLatencyMax) kinds = kinds.With({FaultKind::kLatency});
  return kinds;
}

algorithms::FaultKinds FaultStep::Kinds() const {
  using algorithms::FaultKind;
  switch (action) {
    case FaultStep::Action::kCrash: return {lose_unsynced ? FaultKind::kPowerLoss : FaultKind::kCrash};
    case FaultStep::Action::kRestart: return {FaultKind::kCrash};
    case FaultStep::Action::kPause:
    case FaultStep::Action::kResume: return {FaultKind::kPause};
    case FaultStep::Action::kPartition:
    case FaultStep::Action::kIsolate: return {FaultKind::kPartition};
    case FaultStep::Action::kCut: return {FaultKind::kOneWayCut};
    case FaultStep::Action::kHeal: return {};
    case FaultStep::Action::kClockDrift: return {FaultKind::kClockDrift};
    case FaultStep::Action::kClockShift: return {FaultKind::kClockStep};
    case FaultStep::Action::kNetwork:
    case FaultStep::Action::kLink: return LinkFaultKinds(link);
  }
  return algorithms::FaultKinds::All();  // unknown: promise nothing
}

}  // namespace electsim
