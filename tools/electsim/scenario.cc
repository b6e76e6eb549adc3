#include "tools/electsim/scenario.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "checkers/checker.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/duration.h"

namespace electsim {

using nlohmann::json;

std::string NodeSelector::Describe() const {
  switch (kind) {
    case Kind::kId: return fmt::format("node {}", id);
    case Kind::kLeader: return "the leader";
    case Kind::kStore: return "the store";
    case Kind::kResource: return "the resource";
  }
  return "?";
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
    case Action::kClockShift:
      text += fmt::format(" {}", node.Describe());
      break;
    case Action::kCut:
    case Action::kLink:
      text += fmt::format(" from {} to {}", node.Describe(), to.Describe());
      break;
    case Action::kPartition:
    case Action::kHeal:
    case Action::kNetwork:
      break;
  }
  if (action == Action::kClockDrift) text += fmt::format(" drift {} ppm", drift_ppm);
  if (action == Action::kClockShift) text += fmt::format(" shift {}", sim::FormatDuration(shift));
  if (during_write) text += " during its next write";
  if (for_ns) text += fmt::format(" for {}", sim::FormatDuration(*for_ns));
  return text;
}

algorithms::Cluster Scenario::cluster() const {
  algorithms::Cluster c;
  c.node_count = nodes;
  c.resource = sim::NodeId(nodes);
  if (algorithm != nullptr && algorithm->uses_store()) c.store = sim::NodeId(nodes + 1);
  c.leader_work = leader_work;
  return c;
}

sim::TimeNs Scenario::LivenessAfter() const {
  if (liveness_after) return *liveness_after;
  sim::TimeNs last;
  for (const FaultStep& step : faults) last = std::max(last, step.EndsAt());
  return last;
}

uint32_t Scenario::total_nodes() const {
  return nodes + 1 + (algorithm != nullptr && algorithm->uses_store() ? 1 : 0);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(fmt::format("{}: is a directory, expected a file", path));
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device or a pipe may never end (/dev/zero).
    return absl::InvalidArgumentError(fmt::format("{}: is a device, pipe or socket, expected a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: is {} bytes, expected at most {} bytes", path, size, kMaxInputFileBytes));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {

// Thrown inside the parser only, turned into a Status at its edge.
struct ScenarioError {
  std::string message;
};

std::string TypeName(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer() || value.is_number_unsigned()) return fmt::format("the integer {}", value.dump());
  if (value.is_number_float()) return fmt::format("the number {}", value.dump());
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    return fmt::format("the string \"{}\"", text);
  }
  if (value.is_array()) return "an array";
  return "an object";
}

std::string EscapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

// Names end up in file names (repros): keep them to a safe alphabet.
bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}
bool IsPlainName(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' && std::all_of(name.begin(), name.end(), IsPlainChar);
}
std::string PlainName(std::string name) {
  for (char& c : name) {
    if (!IsPlainChar(c)) c = '_';
  }
  if (name.empty() || name[0] == '.') name.insert(name.begin(), '_');
  return name.substr(0, 100);
}

// nlohmann::json keeps the last of duplicate keys; a scenario must not, so a
// parser callback tracks the keys of every open object and the JSON path. It
// also bounds the nesting: copying or destroying a document recurses once per
// level, so 200000 nested brackets would overflow the stack.
constexpr size_t kMaxJsonDepth = 32;
struct DuplicateKey {
  std::string path;
};
struct TooDeep {
  std::string path;
};
class DuplicateKeyGuard {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    (void)depth;
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        EnterElement();
        if (frames_.size() >= kMaxJsonDepth) throw TooDeep{Path()};
        frames_.push_back(Frame{event == json::parse_event_t::array_start, -1, "", {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& frame = frames_.back();
        const std::string key = parsed.get<std::string>();
        frame.key = key;
        if (!frame.keys.insert(key).second) throw DuplicateKey{Path()};
        break;
      }
      case json::parse_event_t::value:
        EnterElement();
        break;
    }
    return true;
  }

  // The path of the value the parser is reading now (before its own event):
  // in an array, the element after the last one entered.
  std::string PathOfNextValue() const { return Path(/*next_element=*/true); }

 private:
  struct Frame {
    bool array;
    long index;       // current element, for arrays
    std::string key;  // current key, for objects
    std::set<std::string> keys;
  };
  void EnterElement() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string Path(bool next_element = false) const {
    std::string path;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      const bool advance = next_element && i + 1 == frames_.size();
      path += '/';
      path += frame.array ? fmt::format("{}", frame.index + (advance ? 1 : 0)) : EscapePointerToken(frame.key);
    }
    return path.empty() ? "/" : path;
  }
  std::vector<Frame> frames_;
};

class Parser {
 public:
  Parser(std::string source, std::string path_prefix)
      : source_(std::move(source)), path_prefix_(std::move(path_prefix)) {}

  [[noreturn]] void Fail(const std::string& path, const std::string& expected, const json* got = nullptr) const {
    const std::string full_path = path_prefix_ + path;
    std::string message =
        fmt::format("{}: at {}: expected {}", source_, full_path.empty() ? "/" : full_path, expected);
    if (got != nullptr) message += fmt::format(", got {}", TypeName(*got));
    throw ScenarioError{message};
  }

  static std::string Child(const std::string& path, const std::string& key) {
    return path + "/" + EscapePointerToken(key);
  }
  static std::string Child(const std::string& path, size_t index) { return fmt::format("{}/{}", path, index); }

  void RequireObject(const json& value, const std::string& path, const std::string& what) const {
    if (!value.is_object()) Fail(path, what, &value);
  }

  // Rejects keys outside `allowed`, naming the first unknown one.
  void AllowOnly(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        std::string list;
        for (std::string_view key : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", key);
        Fail(Child(path, it.key()), fmt::format("no key \"{}\" here (allowed: {})", it.key(), list));
      }
    }
  }

  const json* Find(const json& object, const char* key) const {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }
  const json& Require(const json& object, const std::string& path, const char* key, const std::string& what) const {
    const json* value = Find(object, key);
    if (value == nullptr) Fail(Child(path, key), fmt::format("{} (this key is required)", what));
    return *value;
  }

  int64_t Integer(const json& value, const std::string& path, int64_t min, int64_t max) const {
    const std::string expected = fmt::format("an integer in [{}, {}]", min, max);
    if (value.is_number_unsigned()) {
      // nlohmann reads every non-negative literal as unsigned, so both
      // bounds are checked here too ("nodes": 0 must not pass).
      const uint64_t v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(max) || (min > 0 && v < static_cast<uint64_t>(min))) Fail(path, expected, &value);
      return static_cast<int64_t>(v);
    }
    if (!value.is_number_integer()) Fail(path, expected, &value);
    const int64_t v = value.get<int64_t>();
    if (v < min || v > max) Fail(path, expected, &value);
    return v;
  }

  bool Bool(const json& value, const std::string& path) const {
    if (!value.is_boolean()) Fail(path, "true or false", &value);
    return value.get<bool>();
  }

  std::string String(const json& value, const std::string& path, const std::string& what) const {
    if (!value.is_string()) Fail(path, what, &value);
    return value.get<std::string>();
  }

  sim::TimeNs Duration(const json& value, const std::string& path, bool allow_negative = false) const {
    if (!value.is_string()) {
      Fail(path, allow_negative ? "a duration string such as \"+200ms\"" : "a duration string such as \"150ms\"",
           &value);
    }
    auto parsed = ParseDuration(value.get<std::string>(), allow_negative);
    if (!parsed.ok()) Fail(path, std::string(parsed.status().message()));
    return *parsed;
  }

  // `value` unless it is below `bound`, named `bound_name` in the message.
  sim::TimeNs AtLeast(sim::TimeNs value, sim::TimeNs bound, std::string_view bound_name, const std::string& path,
                      const json& got) const {
    if (value < bound) {
      Fail(path, fmt::format("a duration of at least {} ({})", bound_name, sim::FormatDuration(bound)), &got);
    }
    return value;
  }

  sim::Probability Probability(const json& value, const std::string& path) const {
    if (!value.is_number()) Fail(path, "a probability: a number in [0, 1]", &value);
    auto p = sim::Probability::FromDouble(value.get<double>());
    if (!p.ok()) Fail(path, "a probability: a number in [0, 1]", &value);
    return *p;
  }

  sim::LatencyModel Latency(const json& value, const std::string& path) const {
    const std::string expected =
        "a latency: a duration, or an object with one of \"fixed\", \"uniform\", \"exponential\", \"pareto\"";
    if (value.is_string()) return sim::LatencyModel::Fixed(Duration(value, path));
    if (!value.is_object() || value.size() != 1) Fail(path, expected, &value);
    const std::string kind = value.begin().key();
    const json& body = value.begin().value();
    const std::string body_path = Child(path, kind);
    sim::LatencyModel model;
    if (kind == "fixed") {
      model = sim::LatencyModel::Fixed(Duration(body, body_path));
    } else if (kind == "uniform") {
      if (!body.is_array() || body.size() != 2) Fail(body_path, "[MIN, MAX], two durations", &body);
      const sim::TimeNs min = Duration(body[0], Child(body_path, 0));
      const sim::TimeNs max = AtLeast(Duration(body[1], Child(body_path, 1)), min, "the minimum", Child(body_path, 1),
                                      body[1]);
      model = sim::LatencyModel::Uniform(min, max);
    } else if (kind == "exponential") {
      RequireObject(body, body_path, "an object with \"min\", \"mean\", \"max\"");
      AllowOnly(body, body_path, {"min", "mean", "max"});
      const json& min_json = Require(body, body_path, "min", "a duration");
      const json& mean_json = Require(body, body_path, "mean", "a duration");
      const json& max_json = Require(body, body_path, "max", "a duration");
      const sim::TimeNs min = Duration(min_json, Child(body_path, "min"));
      const sim::TimeNs mean =
          AtLeast(Duration(mean_json, Child(body_path, "mean")), sim::TimeNs(1), "1ns", Child(body_path, "mean"), mean_json);
      const sim::TimeNs max = AtLeast(Duration(max_json, Child(body_path, "max")), min, "min", Child(body_path, "max"),
                                      max_json);
      model = sim::LatencyModel::Exponential(min, mean, max);
    } else if (kind == "pareto") {
      RequireObject(body, body_path, "an object with \"scale\", \"alpha\", \"max\"");
      AllowOnly(body, body_path, {"scale", "alpha", "max"});
      // The shape is held in thousandths, so 0.001 is the smallest that exists.
      const json& alpha = Require(body, body_path, "alpha", "a number in [0.001, 100]");
      if (!alpha.is_number() || !(alpha.get<double>() >= 0.001 && alpha.get<double>() <= 100.0)) {
        Fail(Child(body_path, "alpha"), "a number in [0.001, 100]", &alpha);
      }
      const json& scale_json = Require(body, body_path, "scale", "a duration");
      const json& max_json = Require(body, body_path, "max", "a duration");
      const sim::TimeNs scale = AtLeast(Duration(scale_json, Child(body_path, "scale")), sim::TimeNs(1), "1ns",
                                        Child(body_path, "scale"), scale_json);
      const sim::TimeNs max =
          AtLeast(Duration(max_json, Child(body_path, "max")), scale, "scale", Child(body_path, "max"), max_json);
      model = sim::LatencyModel::Pareto(scale, static_cast<int64_t>(alpha.get<double>() * 1000.0 + 0.5), max);
    } else {
      Fail(path, expected, &value);
    }
    if (auto status = model.Validate(); !status.ok()) Fail(path, std::string(status.message()));
    return model;
  }

  // Applies the keys present in `object` on top of `link` (others stay).
  void LinkSettings(const json& object, const std::string& path, sim::LinkConfig& link,
                    std::initializer_list<std::string_view> extra_keys = {}) const {
    RequireObject(object, path, "an object of network settings");
    std::vector<std::string_view> allowed = {"latency", "drop", "duplicate", "fifo"};
    allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        Fail(Child(path, it.key()), fmt::format("no key \"{}\" here (allowed: latency, drop, duplicate, fifo{})",
                                                it.key(), extra_keys.size() ? ", from, to" : ""));
      }
    }
    if (const json* v = Find(object, "latency")) link.latency = Latency(*v, Child(path, "latency"));
    if (const json* v = Find(object, "drop")) link.drop = Probability(*v, Child(path, "drop"));
    if (const json* v = Find(object, "duplicate")) link.duplicate = Probability(*v, Child(path, "duplicate"));
    if (const json* v = Find(object, "fifo")) link.fifo = Bool(*v, Child(path, "fifo"));
  }

  NodeSelector Selector(const json& value, const std::string& path, const Scenario& s) const {
    const std::string expected = fmt::format(
        "a node: an id in [0, {}], \"leader\", \"resource\"{}", s.nodes - 1,
        s.algorithm->uses_store() ? " or \"store\"" : " (this algorithm has no store)");
    NodeSelector selector;
    if (value.is_string()) {
      const std::string name = value.get<std::string>();
      if (name == "leader") {
        selector.kind = NodeSelector::Kind::kLeader;
      } else if (name == "resource") {
        selector.kind = NodeSelector::Kind::kResource;
      } else if (name == "store" && s.algorithm->uses_store()) {
        selector.kind = NodeSelector::Kind::kStore;
      } else {
        Fail(path, expected, &value);
      }
      return selector;
    }
    if (!value.is_number_integer() && !value.is_number_unsigned()) Fail(path, expected, &value);
    if (value.is_number_integer() && value.get<int64_t>() < 0) Fail(path, expected, &value);
    if (value.get<uint64_t>() >= s.nodes) Fail(path, expected, &value);
    selector.id = static_cast<uint32_t>(value.get<uint64_t>());
    return selector;
  }

  void AlgorithmOptions(const json& value, const std::string& path, Scenario& s) const {
    RequireObject(value, path, "an object of algorithm options");
    const auto& specs = s.algorithm->options();
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string option_path = Child(path, it.key());
      auto spec = std::find_if(specs.begin(), specs.end(), [&](const auto& o) { return o.name == it.key(); });
      if (spec == specs.end()) {
        std::string names;
        for (const auto& o : specs) names += fmt::format("{}{}", names.empty() ? "" : ", ", o.name);
        Fail(option_path, fmt::format("an option of algorithm \"{}\" ({})", s.algorithm->name(),
                                      names.empty() ? "it has none" : names));
      }
      const json& v = it.value();
      const std::string range = spec->RangeText();
      const std::string in_range = range.empty() ? "" : fmt::format(" ({})", range);
      int64_t held = 0;
      switch (spec->type) {
        case algorithms::OptionType::kDuration:
          held = Duration(v, option_path).ns();
          if (held < spec->min || held > spec->max) Fail(option_path, fmt::format("a duration{}", in_range), &v);
          break;
        case algorithms::OptionType::kInt:
          held = Integer(v, option_path, spec->min, spec->max);
          break;
        case algorithms::OptionType::kBool:
          held = Bool(v, option_path) ? 1 : 0;
          break;
        case algorithms::OptionType::kRatio: {
          if (!v.is_number()) Fail(option_path, fmt::format("a number{}", in_range), &v);
          // The range is checked on the number as written, before rounding to
          // ppm: 1.0000001 is outside (0, 1] even though it rounds to 1.
          // (0.000001 * 1e6 is 0.99999..., so values that land within a hair
          // of a whole ppm count as it.)
          double ppm = v.get<double>() * 1e6;
          if (std::abs(ppm - std::round(ppm)) < 1e-6) ppm = std::round(ppm);
          if (!(ppm >= static_cast<double>(spec->min) && ppm <= static_cast<double>(spec->max))) {
            Fail(option_path, fmt::format("a number{}", in_range), &v);
          }
          held = std::clamp(static_cast<int64_t>(ppm + 0.5), spec->min, spec->max);
          break;
        }
        case algorithms::OptionType::kChoice: {
          const std::string choice = String(v, option_path, fmt::format("a string{}", in_range));
          auto found = std::find(spec->choices.begin(), spec->choices.end(), choice);
          if (found == spec->choices.end()) Fail(option_path, fmt::format("a string{}", in_range), &v);
          held = found - spec->choices.begin();
          break;
        }
        case algorithms::OptionType::kIntList: {
          if (!v.is_array()) Fail(option_path, "an array of integers", &v);
          std::vector<int64_t> list;
          for (size_t i = 0; i < v.size(); ++i) {
            list.push_back(Integer(v[i], Child(option_path, i), spec->min, spec->max));
          }
          s.options.SetList(spec->name, std::move(list));
          continue;
        }
      }
      s.options.Set(spec->name, held);
    }
  }

  FaultStep Fault(const json& value, const std::string& path, const Scenario& s) const {
    RequireObject(value, path, "a fault step object with \"at\" and one action");
    FaultStep step;
    step.json_path = path;
    step.at = Duration(Require(value, path, "at", "a duration: when the step happens"), Child(path, "at"));
    if (step.at > s.duration) Fail(Child(path, "at"), fmt::format("a time within the run's duration ({})", sim::FormatDuration(s.duration)), &value["at"]);
    static const std::vector<std::pair<std::string, FaultStep::Action>> kActions = {
        {"crash", FaultStep::Action::kCrash},     {"restart", FaultStep::Action::kRestart},
        {"pause", FaultStep::Action::kPause},     {"resume", FaultStep::Action::kResume},
        {"partition", FaultStep::Action::kPartition}, {"isolate", FaultStep::Action::kIsolate},
        {"cut", FaultStep::Action::kCut},         {"heal", FaultStep::Action::kHeal},
        {"clock", FaultStep::Action::kClockDrift}, {"network", FaultStep::Action::kNetwork},
        {"link", FaultStep::Action::kLink},
    };
    std::string action_key;
    for (const auto& [key, action] : kActions) {
      if (value.contains(key)) {
        if (!action_key.empty()) {
          Fail(Child(path, key), fmt::format("one action per step (this step already has \"{}\")", action_key));
        }
        action_key = key;
        step.action = action;
      }
    }
    step.action_key = action_key;
    if (action_key.empty()) {
      Fail(path, "one action: crash, restart, pause, resume, partition, isolate, cut, heal, clock, network or link");
    }
    const std::string action_path = Child(path, action_key);
    const json& body = value[action_key];
    std::vector<std::string_view> allowed = {"at", action_key};
    const bool undoable = step.action == FaultStep::Action::kCrash || step.action == FaultStep::Action::kPause ||
                          step.action == FaultStep::Action::kPartition ||
                          step.action == FaultStep::Action::kIsolate || step.action == FaultStep::Action::kCut;
    if (undoable) allowed.push_back("for");
    if (step.action == FaultStep::Action::kPause) allowed.push_back("during");
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        Fail(Child(path, it.key()), fmt::format("no key \"{}\" in a \"{}\" step", it.key(), action_key));
      }
    }
    if (const json* f = Find(value, "for")) {
      step.for_ns = Duration(*f, Child(path, "for"));
      if (*step.for_ns <= sim::TimeNs(0)) Fail(Child(path, "for"), "a duration > 0", f);
    }
    if (const json* d = Find(value, "during")) {
      if (!d->is_string() || d->get<std::string>() != "write") Fail(Child(path, "during"), "\"write\"", d);
      step.during_write = true;
    }
    switch (step.action) {
      case FaultStep::Action::kCrash:
      case FaultStep::Action::kRestart:
      case FaultStep::Action::kPause:
      case FaultStep::Action::kResume:
      case FaultStep::Action::kIsolate:
        step.node = Selector(body, action_path, s);
        if (step.during_write && (step.node.kind == NodeSelector::Kind::kStore ||
                                  step.node.kind == NodeSelector::Kind::kResource)) {
          Fail(action_path, "an election node or \"leader\" with \"during\": \"write\" (only they write)", &body);
        }
        break;
      case FaultStep::Action::kPartition: {
        if (!body.is_array() || body.empty()) Fail(action_path, "an array of groups, each an array of nodes", &body);
        for (size_t g = 0; g < body.size(); ++g) {
          const std::string group_path = Child(action_path, g);
          if (!body[g].is_array() || body[g].empty()) Fail(group_path, "a group: a non-empty array of nodes", &body[g]);
          std::vector<NodeSelector> group;
          for (size_t i = 0; i < body[g].size(); ++i) {
            const std::string node_path = Child(group_path, i);
            group.push_back(Selector(body[g][i], node_path, s));
            for (const auto& earlier : step.groups) {
              if (std::count(earlier.begin(), earlier.end(), group.back())) {
                Fail(node_path, fmt::format("each node in one group only ({} is in an earlier group)",
                                            group.back().Describe()));
              }
            }
            if (std::count(group.begin(), group.end(), group.back()) > 1) {
              Fail(node_path, fmt::format("each node once ({} is already in this group)", group.back().Describe()));
            }
          }
          step.groups.push_back(std::move(group));
        }
        break;
      }
      case FaultStep::Action::kCut:
        RequireObject(body, action_path, "an object with \"from\" and \"to\"");
        AllowOnly(body, action_path, {"from", "to"});
        step.node = Selector(Require(body, action_path, "from", "a node"), Child(action_path, "from"), s);
        step.to = Selector(Require(body, action_path, "to", "a node"), Child(action_path, "to"), s);
        if (step.to == step.node) Fail(Child(action_path, "to"), "a node other than \"from\" (a node always reaches itself)");
        break;
      case FaultStep::Action::kHeal:
        if (!body.is_boolean() || !body.get<bool>()) Fail(action_path, "true", &body);
        break;
      case FaultStep::Action::kClockDrift: {
        RequireObject(body, action_path, "an object with \"node\" and \"drift_ppm\" or \"shift\"");
        AllowOnly(body, action_path, {"node", "drift_ppm", "shift"});
        step.node = Selector(Require(body, action_path, "node", "a node"), Child(action_path, "node"), s);
        const json* drift = Find(body, "drift_ppm");
        const json* shift = Find(body, "shift");
        if ((drift == nullptr) == (shift == nullptr)) Fail(action_path, "exactly one of \"drift_ppm\" and \"shift\"");
        if (drift != nullptr) {
          step.drift_ppm = Integer(*drift, Child(action_path, "drift_ppm"), -499999, 499999);
        } else {
          step.action = FaultStep::Action::kClockShift;
          step.shift = Duration(*shift, Child(action_path, "shift"), /*allow_negative=*/true);
        }
        break;
      }
      case FaultStep::Action::kNetwork:
        step.link = s.network;
        LinkSettings(body, action_path, step.link);
        break;
      case FaultStep::Action::kLink:
        step.link = s.network;
        LinkSettings(body, action_path, step.link, {"from", "to"});
        step.node = Selector(Require(body, action_path, "from", "a node"), Child(action_path, "from"), s);
        step.to = Selector(Require(body, action_path, "to", "a node"), Child(action_path, "to"), s);
        if (step.to == step.node) {
          Fail(Child(action_path, "to"), "a node other than \"from\" (messages to oneself do not cross the network)");
        }
        break;
      case FaultStep::Action::kClockShift:
        break;
    }
    return step;
  }

  Scenario Parse(const json& doc) const {
    Scenario s;
    s.source = source_;
    s.name = std::filesystem::path(source_).stem().string();
    s.document = doc;
    RequireObject(doc, "", "a scenario object");
    AllowOnly(doc, "", {"description", "nodes", "seed", "duration", "algorithm", "network", "resource", "leader_work",
                        "faults", "checkers", "liveness", "expect", "name"});
    if (const json* v = Find(doc, "name")) {
      s.name = String(*v, "/name", "a name of letters, digits, '.', '_' and '-' (it names repro files)");
      if (!IsPlainName(s.name)) {
        Fail("/name", "a name of letters, digits, '.', '_' and '-' not starting with '.' (it names repro files)", v);
      }
    } else {
      s.name = PlainName(s.name);
    }
    if (const json* v = Find(doc, "description")) {
      s.description = String(*v, "/description", "a string");
      // It is printed as is: no terminal escapes, no second line.
      if (std::any_of(s.description.begin(), s.description.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
        Fail("/description", "a one-line string without control characters", v);
      }
    }
    s.nodes = static_cast<uint32_t>(
        Integer(Require(doc, "", "nodes", "the number of election nodes"), "/nodes", 1, kMaxNodes));
    if (const json* v = Find(doc, "seed")) {
      if (!v->is_number_unsigned()) Fail("/seed", "a non-negative integer", v);
      s.seed = v->get<uint64_t>();
    }
    s.duration = Duration(Require(doc, "", "duration", "a duration: how long to simulate"), "/duration");
    if (s.duration <= sim::TimeNs(0)) Fail("/duration", "a duration > 0", &doc["duration"]);

    // Algorithm first: node selectors depend on whether it has a store.
    const json& algorithm = Require(doc, "", "algorithm", "an algorithm name or {\"name\", \"options\"}");
    std::string algorithm_name;
    const json* options = nullptr;
    if (algorithm.is_string()) {
      algorithm_name = algorithm.get<std::string>();
    } else if (algorithm.is_object()) {
      AllowOnly(algorithm, "/algorithm", {"name", "options"});
      algorithm_name = String(Require(algorithm, "/algorithm", "name", "the algorithm's name"), "/algorithm/name",
                              "the algorithm's name");
      options = Find(algorithm, "options");
    } else {
      Fail("/algorithm", "an algorithm name or {\"name\", \"options\"}", &algorithm);
    }
    s.algorithm = algorithms::FindAlgorithm(algorithm_name);
    if (s.algorithm == nullptr) {
      std::string names;
      for (const auto* a : algorithms::AllAlgorithms()) names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", a->name());
      Fail(algorithm.is_string() ? "/algorithm" : "/algorithm/name", fmt::format("one of the algorithms {}", names),
           algorithm.is_string() ? &algorithm : &algorithm["name"]);
    }
    s.options = algorithms::OptionValues::Defaults(s.algorithm->options());
    if (options != nullptr) AlgorithmOptions(*options, "/algorithm/options", s);

    s.network.latency = sim::LatencyModel::Fixed(sim::TimeNs::Millis(1));
    if (const json* v = Find(doc, "network")) LinkSettings(*v, "/network", s.network);
    if (const json* v = Find(doc, "resource")) {
      RequireObject(*v, "/resource", "an object with \"fencing\" (and optionally \"exclusive_token\")");
      AllowOnly(*v, "/resource", {"fencing", "exclusive_token"});
      if (const json* f = Find(*v, "fencing")) s.fencing = Bool(*f, "/resource/fencing");
      if (const json* e = Find(*v, "exclusive_token")) {
        s.exclusive_token = Bool(*e, "/resource/exclusive_token");
        if (s.exclusive_token && !s.fencing) {
          Fail("/resource/exclusive_token", "false when fencing is off (an unfenced resource checks no token)", e);
        }
      }
    }
    if (const json* v = Find(doc, "leader_work")) {
      RequireObject(*v, "/leader_work", "an object with \"interval\" and \"duration\"");
      AllowOnly(*v, "/leader_work", {"interval", "duration"});
      if (const json* i = Find(*v, "interval")) s.leader_work.write_interval = Duration(*i, "/leader_work/interval");
      if (const json* d = Find(*v, "duration")) s.leader_work.write_duration = Duration(*d, "/leader_work/duration");
      if (s.leader_work.write_interval <= sim::TimeNs(0)) Fail("/leader_work/interval", "a duration > 0", &(*v)["interval"]);
      if (s.leader_work.write_duration >= s.leader_work.write_interval) {
        Fail("/leader_work/duration", fmt::format("a duration shorter than leader_work.interval ({})",
                                                  sim::FormatDuration(s.leader_work.write_interval)));
      }
    }
    if (auto status = s.algorithm->Validate(s.options, s.cluster()); !status.ok()) {
      Fail(options != nullptr ? "/algorithm/options" : "/algorithm", fmt::format("valid options: {}", std::string(status.message())));
    }

    if (const json* v = Find(doc, "faults")) {
      if (!v->is_array()) Fail("/faults", "an array of fault steps", v);
      for (size_t i = 0; i < v->size(); ++i) s.faults.push_back(Fault((*v)[i], Child("/faults", i), s));
    }
    // Steps run in time order; equal times keep file order.
    std::stable_sort(s.faults.begin(), s.faults.end(), [](const FaultStep& a, const FaultStep& b) { return a.at < b.at; });

    std::set<std::string> enabled;
    if (const json* v = Find(doc, "checkers")) {
      if (!v->is_array()) Fail("/checkers", "an array of checker names", v);
      for (size_t i = 0; i < v->size(); ++i) {
        const std::string name = String((*v)[i], Child("/checkers", i), "a checker name");
        bool known = false;
        std::string names;
        for (const auto& info : checkers::AllCheckers()) {
          known |= info.name == name;
          names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", info.name);
        }
        if (!known || name == "liveness") {
          Fail(Child("/checkers", i), fmt::format("one of the checkers {} (liveness is switched on by a \"liveness\" block)", names), &(*v)[i]);
        }
        enabled.insert(name);
      }
    } else {
      for (const auto& info : checkers::AllCheckers()) {
        if (info.on_by_default) enabled.insert(info.name);
      }
    }
    if (const json* v = Find(doc, "liveness")) {
      RequireObject(*v, "/liveness", "an object with \"within\" (and optionally \"after\" and \"stable_for\")");
      AllowOnly(*v, "/liveness", {"within", "after", "stable_for"});
      s.liveness = true;
      const json& within = Require(*v, "/liveness", "within", "a duration");
      s.liveness_within = Duration(within, "/liveness/within");
      if (s.liveness_within <= sim::TimeNs(0)) Fail("/liveness/within", "a duration > 0", &within);
      if (const json* a = Find(*v, "after")) {
        s.liveness_after = Duration(*a, "/liveness/after");
      } else if (std::any_of(s.faults.begin(), s.faults.end(), [](const FaultStep& f) { return f.during_write; })) {
        // Such a pause starts at a write, so when it ends is known only as the run goes.
        Fail("/liveness/after", "a duration (this key is required when a pause waits for a write: its end is not "
                                "known before the run)");
      }
      const sim::TimeNs deadline = s.LivenessAfter() + s.liveness_within;
      if (deadline > s.duration) {
        Fail("/liveness", fmt::format("a deadline within the run: liveness is judged from {}{} until {} later, {}, "
                                      "past the run's end at {}",
                                      sim::FormatDuration(s.LivenessAfter()),
                                      s.liveness_after ? "" : " (when the last fault step ends)",
                                      sim::FormatDuration(s.liveness_within), sim::FormatDuration(deadline),
                                      sim::FormatDuration(s.duration)));
      }
      if (const json* f = Find(*v, "stable_for")) {
        s.liveness_stable_for = Duration(*f, "/liveness/stable_for");
        if (*s.liveness_stable_for <= sim::TimeNs(0)) Fail("/liveness/stable_for", "a duration > 0", f);
      }
      if (s.liveness_stable_for && deadline + *s.liveness_stable_for > s.duration) {
        Fail("/liveness/stable_for",
             fmt::format("a window that fits in the run: a leader found at the deadline {} must hold {} more, until "
                         "{}, past the run's end at {}",
                         sim::FormatDuration(deadline), sim::FormatDuration(*s.liveness_stable_for),
                         sim::FormatDuration(deadline + *s.liveness_stable_for), sim::FormatDuration(s.duration)),
             Find(*v, "stable_for"));
      }
      enabled.insert("liveness");
    }
    s.checkers.assign(enabled.begin(), enabled.end());

    if (const json* v = Find(doc, "expect")) {
      RequireObject(*v, "/expect", "an object");
      AllowOnly(*v, "/expect", {"violations", "multi_leader", "writes_rejected_min", "writes_accepted_min", "elected"});
      if (const json* list = Find(*v, "violations")) {
        if (!list->is_array()) Fail("/expect/violations", "an array of checker names", list);
        for (size_t i = 0; i < list->size(); ++i) {
          const std::string name = String((*list)[i], Child("/expect/violations", i), "a checker name");
          if (!enabled.count(name)) {
            Fail(Child("/expect/violations", i), "the name of a checker this scenario runs (see \"checkers\")", &(*list)[i]);
          }
          s.expect.violations.push_back(name);
        }
        std::sort(s.expect.violations.begin(), s.expect.violations.end());
        s.expect.violations.erase(std::unique(s.expect.violations.begin(), s.expect.violations.end()),
                                  s.expect.violations.end());
      }
      if (const json* b = Find(*v, "multi_leader")) s.expect.multi_leader = Bool(*b, "/expect/multi_leader");
      if (const json* b = Find(*v, "elected")) s.expect.elected = Bool(*b, "/expect/elected");
      if (const json* n = Find(*v, "writes_rejected_min")) {
        s.expect.writes_rejected_min = Integer(*n, "/expect/writes_rejected_min", 0, 1LL << 40);
      }
      if (const json* n = Find(*v, "writes_accepted_min")) {
        s.expect.writes_accepted_min = Integer(*n, "/expect/writes_accepted_min", 0, 1LL << 40);
      }
    }
    return s;
  }

 private:
  std::string source_;
  std::string path_prefix_;  // where the scenario sits in its file ("/scenario" in a repro)
};

}  // namespace

absl::StatusOr<Scenario> ParseScenarioJson(const json& document, const std::string& source,
                                           const std::string& json_path_prefix) {
  try {
    return Parser(source, json_path_prefix).Parse(document);
  } catch (const ScenarioError& error) {
    return absl::InvalidArgumentError(error.message);
  } catch (const json::exception& error) {
    // The parser checks types before reading values; this is a safety net
    // so that no input can end the process.
    return absl::InvalidArgumentError(fmt::format("{}: unreadable scenario: {}", source, error.what()));
  }
}

absl::StatusOr<json> ParseJsonText(std::string_view text, const std::string& source) {
  json document;
  DuplicateKeyGuard guard;
  try {
    document = json::parse(text.begin(), text.end(), std::ref(guard));
  } catch (const DuplicateKey& duplicate) {
    return absl::InvalidArgumentError(
        fmt::format("{}: at {}: expected each key once in an object, this key appears again", source, duplicate.path));
  } catch (const TooDeep& deep) {
    return absl::InvalidArgumentError(
        fmt::format("{}: at {}: expected at most {} levels of nested arrays and objects", source, deep.path,
                    kMaxJsonDepth));
  } catch (const json::out_of_range& error) {
    // A number too large for a double ("1e400") is rejected while parsing.
    return absl::InvalidArgumentError(
        fmt::format("{}: at {}: expected a number within the range of a 64-bit float, got one beyond it", source,
                    guard.PathOfNextValue()));
  } catch (const json::parse_error& error) {
    // Turn the byte offset into line:column, which is what editors show.
    size_t line = 1, column = 1;
    const size_t end = std::min<size_t>(error.byte > 0 ? error.byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = error.what();
    if (auto pos = what.find("syntax error"); pos != std::string::npos) what = what.substr(pos);
    return absl::InvalidArgumentError(fmt::format("{}:{}:{}: invalid JSON: {}", source, line, column, what));
  }
  return document;
}

absl::StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& source) {
  auto document = ParseJsonText(text, source);
  if (!document.ok()) return document.status();
  return ParseScenarioJson(*document, source);
}

std::string ScenarioNameFromPath(const std::string& path) {
  return PlainName(std::filesystem::path(path).stem().string());
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace electsim
