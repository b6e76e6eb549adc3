#include "tools/electsim/external/external_algorithm.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "electsim/algorithms/leader_work.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/format.h"
#include "tools/electsim/external/plain_json.h"
#include "tools/electsim/external/step_process.h"
#include "tools/electsim/language/duration.h"

namespace electsim::external {
namespace {

using json = nlohmann::json;
using algorithms::Algorithm;
using algorithms::AllFaultKinds;
using algorithms::Cluster;
using algorithms::FaultKind;
using algorithms::FaultKindName;
using algorithms::FaultKinds;
using algorithms::Guarantees;
using algorithms::OptionSpec;
using algorithms::OptionType;
using algorithms::OptionValues;
using algorithms::ResourceAck;
using algorithms::ResourceWrite;

constexpr int kProtocolVersion = 1;
constexpr size_t kMaxStorageKeyBytes = 128;

// The observation types a process may report: the vocabulary's, as built-in
// nodes report them. Services' records (the store's, the resource's) are not
// a node's to make.
const std::vector<const sim::RecordType*>& ObservationTypes() {
  static const std::vector<const sim::RecordType*> types = {
      &vocab::kRoleChange, &vocab::kBelief,      &vocab::kTermChange,  &vocab::kVote,        &vocab::kWriteBegin,
      &vocab::kWrite,      &vocab::kLogAppend,   &vocab::kLogTruncate, &vocab::kLogCommit,   &vocab::kHearing,
      &vocab::kRank,       &vocab::kRankAnytime, &vocab::kLeaseMargin, &vocab::kLeaseRequest};
  return types;
}

const sim::RecordType* FindType(const std::vector<const sim::RecordType*>& types, std::string_view name) {
  for (const sim::RecordType* type : types) {
    if (type->name() == name) return type;
  }
  return nullptr;
}

// A record type made at run time from names the algorithm owns.
sim::RecordType MakeRecordType(std::string_view name, const std::vector<std::string_view>& f) {
  switch (f.size()) {
    case 0: return sim::RecordType(name, {});
    case 1: return sim::RecordType(name, {f[0]});
    case 2: return sim::RecordType(name, {f[0], f[1]});
    case 3: return sim::RecordType(name, {f[0], f[1], f[2]});
    case 4: return sim::RecordType(name, {f[0], f[1], f[2], f[3]});
    case 5: return sim::RecordType(name, {f[0], f[1], f[2], f[3], f[4]});
    default: return sim::RecordType(name, {f[0], f[1], f[2], f[3], f[4], f[5]});
  }
}

// A duration as scenarios write it ("150ms", "1.5s"), or an integer of nanoseconds.
std::optional<int64_t> ParseNanos(const json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (!value.is_string()) return std::nullopt;
  const absl::StatusOr<sim::TimeNs> parsed = ParseDuration(value.get<std::string>());
  return parsed.ok() ? std::optional<int64_t>(parsed->ns()) : std::nullopt;
}

// A relation between two duration options: `subject` against `other`.
struct Constraint {
  enum class Kind {
    kShorter,     // below `times` times other
    kNotShorter,  // at least other
    kMultiple,    // a whole multiple of other
  };
  Kind kind = Kind::kMultiple;
  std::string subject;
  std::string other;
  int64_t times = 1;
  bool unless_zero = false;  // 0 (the option left unset) passes
  std::string because;
};

// Whether `constraint` holds; the message a scenario that breaks it gets.
absl::Status Check(const Constraint& constraint, const OptionValues& options) {
  const int64_t value = options.Int(constraint.subject);
  if (constraint.unless_zero && value == 0) return absl::OkStatus();
  int64_t bound = options.Int(constraint.other);
  std::string relation;
  switch (constraint.kind) {
    case Constraint::Kind::kShorter:
      if (__builtin_mul_overflow(bound, constraint.times, &bound)) bound = std::numeric_limits<int64_t>::max();
      if (value < bound) return absl::OkStatus();
      relation = constraint.times == 1 ? "shorter than" : fmt::format("shorter than {} times", constraint.times);
      break;
    case Constraint::Kind::kNotShorter:
      if (value >= bound) return absl::OkStatus();
      relation = "at least";
      break;
    case Constraint::Kind::kMultiple:
      if (bound > 0 && value % bound == 0) return absl::OkStatus();
      relation = "a whole multiple of option";
      break;
  }
  return absl::InvalidArgumentError(fmt::format("option {} ({}) must be {} {} ({}){}{}", constraint.subject,
                                                sim::FormatDuration(sim::TimeNs(value)), relation, constraint.other,
                                                sim::FormatDuration(sim::TimeNs(bound)),
                                                constraint.because.empty() ? "" : ": ", constraint.because));
}

struct GuaranteeSet {
  std::vector<std::pair<std::string, json>> when;
  Guarantees keeps;
};

class ManifestReader;

class ExternalAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  const std::vector<OptionSpec>& options() const override { return options_; }
  const vocab::MessageRoles& message_roles() const override { return roles_; }
  bool replicates_log() const override { return replicates_log_; }
  std::optional<BenchTiming> bench_timing() const override { return bench_timing_; }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    (void)cluster;
    for (const Constraint& constraint : constraints_) {
      if (auto s = Check(constraint, options); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  Guarantees guarantees(const OptionValues& options) const override {
    for (const GuaranteeSet& set : guarantees_) {
      const bool matches = std::all_of(set.when.begin(), set.when.end(), [&](const auto& condition) {
        return OptionIs(options, condition.first, condition.second);
      });
      if (matches) return set.keeps;
    }
    return {};
  }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override;

  // The manifest, and each word of the command that names an existing file
  // (the program, or the script an interpreter runs).
  std::vector<std::string> input_files() const override {
    std::vector<std::string> files{manifest_path_};
    for (const std::string& word : command_) {
      std::error_code error;
      if (std::filesystem::is_regular_file(word, error)) files.push_back(word);
    }
    return files;
  }

  const std::vector<std::string>& command() const { return command_; }
  int64_t budget_ms() const { return budget_ms_; }
  const std::vector<const sim::RecordType*>& message_types() const { return message_types_; }

  // The options as the start event carries them.
  std::string OptionsJson(const OptionValues& options) const {
    json out = json::object();
    for (const OptionSpec& spec : options_) {
      switch (spec.type) {
        case OptionType::kBool: out[spec.name] = options.Bool(spec.name); break;
        case OptionType::kChoice: out[spec.name] = options.Choice(spec.name); break;
        case OptionType::kIntList: out[spec.name] = options.List(spec.name); break;
        default: out[spec.name] = options.Int(spec.name); break;
      }
    }
    return out.dump();
  }

 private:
  friend class ManifestReader;

  bool OptionIs(const OptionValues& options, const std::string& name, const json& wanted) const {
    for (const OptionSpec& spec : options_) {
      if (spec.name != name) continue;
      if (spec.type == OptionType::kChoice)
        return wanted.is_string() && options.Choice(name) == wanted.get<std::string>();
      if (wanted.is_boolean()) return options.Bool(name) == wanted.get<bool>();
      const std::optional<int64_t> value = ParseNanos(wanted);
      return value && options.Int(name) == *value;
    }
    return false;
  }

  std::string name_;
  std::string summary_;
  std::string manifest_path_;
  std::vector<std::string> command_;
  int64_t budget_ms_ = 10000;
  std::vector<OptionSpec> options_;
  std::vector<Constraint> constraints_;
  std::deque<std::string> strings_;  // names the record types and guarantees point into
  std::deque<sim::RecordType> records_;
  std::vector<const sim::RecordType*> message_types_;  // declared ones, then the resource's
  vocab::MessageRoles roles_;
  std::vector<GuaranteeSet> guarantees_;
  std::optional<BenchTiming> bench_timing_;
  bool replicates_log_ = false;
};

// ---- the node: one process per boot ----

class ExternalNode final : public sim::Process {
 public:
  ExternalNode(const ExternalAlgorithm& algorithm, sim::NodeId self, const Cluster& cluster, std::string options_json)
      : algorithm_(algorithm), self_(self), cluster_(cluster), options_json_(std::move(options_json)) {}

  void OnStart(sim::Context& ctx) override {
    auto started = StepProcess::Start(algorithm_.command(), algorithm_.budget_ms());
    if (!started.ok()) {
      Stop(ctx, "start", std::string(started.status().message()));
      return;
    }
    process_ = std::move(*started);
    auto hello = process_->ReadLine();
    if (!hello.ok()) {
      Stop(ctx, "hello", std::string(hello.status().message()));
      return;
    }
    json line = json::parse(*hello, nullptr, false);
    if (!line.is_object() || line.value("type", json()) != "hello") {
      Stop(ctx, "hello", fmt::format("its first line is not {{\"type\":\"hello\",...}}: {}", Excerpt(*hello)));
      return;
    }
    if (line.value("protocol", json()) != kProtocolVersion) {
      Stop(ctx, "hello",
           fmt::format("speaks protocol {}, electsim speaks {}", line.value("protocol", json()).dump(),
                       kProtocolVersion));
      return;
    }
    const uint64_t seed = ctx.rng().Next();
    Step(ctx, "start",
         fmt::format(R"({{"type":"start","protocol":{},"node":{},"nodes":{},"resource":{},"seed":{},"options":{},)"
                     R"("leader_work":{{"write_interval":{},"write_duration":{}}},"mono":{},"wall":{}}})",
                     kProtocolVersion, self_.value(), cluster_.node_count, ResourceId(), seed, options_json_,
                     cluster_.leader_work.write_interval.ns(), cluster_.leader_work.write_duration.ns(),
                     ctx.MonotonicNow().ns(), ctx.WallNow().ns()));
  }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    if (process_ == nullptr) return;
    std::string event = fmt::format(R"({{"type":"message","from":{},"msg":)", from.value());
    AppendRecord(event, message);
    fmt::format_to(std::back_inserter(event), R"(,"mono":{},"wall":{}}})", ctx.MonotonicNow().ns(), ctx.WallNow().ns());
    Step(ctx, "message", event);
  }

  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) override {
    if (process_ == nullptr) return;
    const int64_t id = static_cast<int64_t>(tag);
    auto armed = std::find_if(armed_.begin(), armed_.end(), [&](const auto& t) { return t.first == id; });
    if (armed == armed_.end() || armed->second != timer) return;  // re-armed or cancelled since
    armed_.erase(armed);
    Step(ctx, "timer",
         fmt::format(R"({{"type":"timer","id":{},"mono":{},"wall":{}}})", id, ctx.MonotonicNow().ns(),
                     ctx.WallNow().ns()));
  }

 private:
  int64_t ResourceId() const {
    return cluster_.resource == sim::kNoNode ? -1 : static_cast<int64_t>(cluster_.resource.value());
  }

  // A node of the cluster, or its resource.
  bool IsDestination(int64_t to) const { return (to >= 0 && to < cluster_.node_count) || to == ResourceId(); }

  // Cancels the process's timer `id` if armed; with a delay, arms it anew.
  void Rearm(sim::Context& ctx, int64_t id, std::optional<int64_t> delay_ns) {
    auto armed = std::find_if(armed_.begin(), armed_.end(), [&](const auto& t) { return t.first == id; });
    if (armed != armed_.end()) {
      ctx.CancelTimer(armed->second);
      armed_.erase(armed);
    }
    if (delay_ns) armed_.emplace_back(id, ctx.SetTimer(sim::TimeNs(*delay_ns), static_cast<uint64_t>(id)));
  }

  static sim::Payload MakePayload(const sim::RecordType& type,
                                  const std::array<int64_t, sim::RecordType::kMaxFields>& values, int size) {
    sim::Payload out(type);
    for (int i = 0; i < size; ++i) out.Set(i, values[i]);
    return out;
  }

  static std::string Excerpt(std::string_view line) {
    constexpr size_t kShown = 200;
    std::string shown(line.substr(0, kShown));
    if (line.size() > kShown) shown += "...";
    return shown;
  }

  // Ends the run: the process broke the protocol or could not go on.
  void Stop(sim::Context& ctx, std::string_view event, std::string_view what) {
    ctx.Fail(fmt::format("algorithm {}, process {}, answering its {} event: {}", algorithm_.name(),
                         algorithm_.command().front(), event, what));
    process_.reset();
  }

  static void AppendRecord(std::string& out, const sim::Payload& record) {
    fmt::format_to(std::back_inserter(out), R"({{"type":"{}")", record.type_name());
    for (const sim::Field field : record.fields())
      fmt::format_to(std::back_inserter(out), R"(,"{}":{})", field.key, field.value);
    out.push_back('}');
  }

  // Sends one event and applies its effects up to `done`.
  void Step(sim::Context& ctx, std::string_view what, const std::string& event) {
    if (auto s = process_->WriteLine(event); !s.ok()) {
      Stop(ctx, what, std::string(s.message()));
      return;
    }
    while (process_ != nullptr) {
      auto line = process_->ReadLine();
      if (!line.ok()) {
        Stop(ctx, what, std::string(line.status().message()));
        return;
      }
      if (plain_.Parse(*line)) {
        const PlainOutcome outcome = ApplyPlain(ctx, plain_.top());
        if (outcome == PlainOutcome::kDone) return;
        if (outcome == PlainOutcome::kApplied) continue;
      }
      json effect = json::parse(*line, nullptr, false);
      if (!effect.is_object() || !effect.contains("type") || !effect["type"].is_string()) {
        Stop(ctx, what,
             fmt::format("a line that is not an effect (a JSON object with a \"type\"): {}", Excerpt(*line)));
        return;
      }
      const std::string type = effect["type"].get<std::string>();
      if (type == "done") return;
      std::string problem = Apply(ctx, type, effect);
      if (!problem.empty()) {
        Stop(ctx, what, fmt::format("{}: {}", problem, Excerpt(*line)));
        return;
      }
    }
  }

  // What ApplyPlain did: nothing at all when the effect needs the full
  // parser (a load, an error, or anything wrong, which it words).
  enum class PlainOutcome : uint8_t { kDone, kApplied, kNotApplied };

  // The common effects of a plain line (see plain_json.h), applied exactly as
  // Apply applies them, or nothing done.
  PlainOutcome ApplyPlain(sim::Context& ctx, const PlainJsonObject& effect) {
    const std::optional<std::string_view> type = effect.String("type");
    if (!type) return PlainOutcome::kNotApplied;
    if (*type == "done") return PlainOutcome::kDone;
    if (*type == "send") {
      const std::optional<int64_t> to = effect.Integer("to");
      sim::Payload message;
      if (!to || !IsDestination(*to) || !ReadPlainRecord(plain_.Nested("msg"), algorithm_.message_types(), message)) {
        return PlainOutcome::kNotApplied;
      }
      ctx.Send(sim::NodeId(static_cast<uint32_t>(*to)), message);
    } else if (*type == "observe") {
      sim::Payload observation;
      if (!ReadPlainRecord(plain_.Nested("obs"), ObservationTypes(), observation)) return PlainOutcome::kNotApplied;
      ctx.Observe(observation);
    } else if (*type == "set_timer" || *type == "cancel_timer") {
      const std::optional<int64_t> id = effect.Integer("id");
      const std::optional<int64_t> delay = effect.Integer("delay");
      const bool set = *type == "set_timer";
      if (!id || (set && (!delay || *delay < 0))) return PlainOutcome::kNotApplied;
      Rearm(ctx, *id, set ? delay : std::nullopt);
    } else if (*type == "sync") {
      ctx.Sync();
    } else if (*type == "persist" || *type == "write") {
      const std::optional<std::string_view> key = effect.String("key");
      const std::optional<int64_t> value = effect.Integer("value");
      if (!key || key->empty() || key->size() > kMaxStorageKeyBytes || !value) return PlainOutcome::kNotApplied;
      if (*type == "persist") {
        ctx.Persist(*key, *value);
      } else {
        ctx.Write(*key, *value);
      }
    } else {
      return PlainOutcome::kNotApplied;
    }
    return PlainOutcome::kApplied;
  }

  // ReadRecord's reading of a plain record; false where ReadRecord would
  // find something wrong.
  static bool ReadPlainRecord(const PlainJsonObject* record, const std::vector<const sim::RecordType*>& types,
                              sim::Payload& out) {
    if (record == nullptr) return false;
    const std::optional<std::string_view> type_name = record->String("type");
    if (!type_name) return false;
    const sim::RecordType* type = FindType(types, *type_name);
    if (type == nullptr) return false;
    std::array<int64_t, sim::RecordType::kMaxFields> values{};
    int size = 0;
    for (int i = 0; i < record->size(); ++i) {
      const PlainJsonObject::Member& field = record->member(i);
      if (field.key == "type") continue;
      const int index = type->IndexOf(field.key);
      if (index < 0 || field.kind != PlainJsonObject::Kind::kInteger) return false;
      values[index] = field.integer;
      size = std::max(size, index + 1);
    }
    out = MakePayload(*type, values, size);
    return true;
  }

  static std::optional<int64_t> Integer(const json& effect, const char* member) {
    auto it = effect.find(member);
    if (it == effect.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  }

  // set_timer and cancel_timer: the process names its timers by its own ids.
  std::string ApplyTimer(sim::Context& ctx, const std::string& type, const json& effect) {
    const std::optional<int64_t> id = Integer(effect, "id");
    if (!id) return fmt::format("a {} without an integer \"id\"", type);
    Rearm(ctx, *id, std::nullopt);
    if (type == "cancel_timer") return "";
    const std::optional<int64_t> delay = Integer(effect, "delay");
    if (!delay || *delay < 0) return "a set_timer without a \"delay\" of 0 ns or more";
    Rearm(ctx, *id, delay);
    return "";
  }

  // persist, write, sync and load.
  std::string ApplyStorage(sim::Context& ctx, const std::string& type, const json& effect) {
    if (type == "sync") {
      ctx.Sync();
      return "";
    }
    auto key = effect.find("key");
    if (key == effect.end() || !key->is_string() || key->get_ref<const std::string&>().empty() ||
        key->get_ref<const std::string&>().size() > kMaxStorageKeyBytes) {
      return fmt::format("a {} without a \"key\" of 1 to {} bytes", type, kMaxStorageKeyBytes);
    }
    const std::string& name = key->get_ref<const std::string&>();
    if (type == "load") {
      const std::optional<int64_t> value = ctx.Load(name);
      json answer = {{"type", "value"}, {"key", name}, {"value", value ? json(*value) : json(nullptr)}};
      if (auto s = process_->WriteLine(answer.dump()); !s.ok()) return std::string(s.message());
      return "";
    }
    const std::optional<int64_t> value = Integer(effect, "value");
    if (!value) return fmt::format("a {} without an integer \"value\"", type);
    if (type == "persist") {
      ctx.Persist(name, *value);
    } else {
      ctx.Write(name, *value);
    }
    return "";
  }

  // Applies one effect; returns what is wrong with it, or "".
  std::string Apply(sim::Context& ctx, const std::string& type, const json& effect) {
    if (type == "send") {
      const std::optional<int64_t> to = Integer(effect, "to");
      if (!to) return "a send without an integer \"to\"";
      if (!IsDestination(*to)) return fmt::format("a send to node {}, which does not exist", *to);
      sim::Payload message;
      if (std::string problem = ReadRecord(effect, "msg", algorithm_.message_types(), message); !problem.empty()) {
        return problem;
      }
      ctx.Send(sim::NodeId(static_cast<uint32_t>(*to)), message);
      return "";
    }
    if (type == "set_timer" || type == "cancel_timer") return ApplyTimer(ctx, type, effect);
    if (type == "persist" || type == "write" || type == "load" || type == "sync")
      return ApplyStorage(ctx, type, effect);
    if (type == "observe") {
      sim::Payload observation;
      if (std::string problem = ReadRecord(effect, "obs", ObservationTypes(), observation); !problem.empty()) {
        return problem;
      }
      ctx.Observe(observation);
      return "";
    }
    if (type == "error") {
      auto message = effect.find("message");
      return fmt::format("it reported an error ({})",
                         message != effect.end() && message->is_string() ? message->get<std::string>() : "no message");
    }
    return fmt::format("an effect of unknown type \"{}\"", type);
  }

  // Reads the record in member `member` into `out`; returns what is wrong, or "".
  static std::string ReadRecord(const json& effect, const char* member,
                                const std::vector<const sim::RecordType*>& types, sim::Payload& out) {
    auto record = effect.find(member);
    if (record == effect.end() || !record->is_object()) return fmt::format("no record in \"{}\"", member);
    auto type_name = record->find("type");
    if (type_name == record->end() || !type_name->is_string())
      return fmt::format("a \"{}\" without a \"type\"", member);
    const sim::RecordType* type = FindType(types, type_name->get_ref<const std::string&>());
    if (type == nullptr) {
      return fmt::format("a \"{}\" of type \"{}\", which the {} does not declare", member,
                         type_name->get_ref<const std::string&>(),
                         std::string_view(member) == "msg" ? "manifest" : "observation vocabulary");
    }
    std::array<int64_t, sim::RecordType::kMaxFields> values{};
    int size = 0;
    for (auto it = record->begin(); it != record->end(); ++it) {
      if (it.key() == "type") continue;
      const int index = type->IndexOf(it.key());
      if (index < 0)
        return fmt::format("a {} record with a field \"{}\" its type does not have", type->name(), it.key());
      if (!it->is_number_integer())
        return fmt::format("a {} record whose field \"{}\" is not an integer", type->name(), it.key());
      values[index] = it->get<int64_t>();
      size = std::max(size, index + 1);
    }
    out = MakePayload(*type, values, size);
    return "";
  }

  const ExternalAlgorithm& algorithm_;
  sim::NodeId self_;
  Cluster cluster_;
  std::string options_json_;
  std::unique_ptr<StepProcess> process_;
  std::vector<std::pair<int64_t, sim::TimerId>> armed_;  // the process's timer ids, a handful
  PlainJsonLine plain_;                                  // the line being applied, kept to reuse its storage
};

std::unique_ptr<sim::Process> ExternalAlgorithm::CreateNode(sim::NodeId self, const Cluster& cluster,
                                                            const OptionValues& options) const {
  return std::make_unique<ExternalNode>(*this, self, cluster, OptionsJson(options));
}

// ---- reading a manifest ----

// A message type of the algorithm's own: "<prefix>.<message>", where the
// prefix is none of electsim's, so no record of a built-in algorithm or
// service shares its name (records with one name are one type).
bool IsOwnTypeName(std::string_view name) {
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  static constexpr std::string_view kReserved[] = {"raft",     "bully", "ring", "lease",   "shards", "store",
                                                   "resource", "role",  "log",  "declare", "key"};
  const std::string_view prefix = name.substr(0, dot);
  return std::find(std::begin(kReserved), std::end(kReserved), prefix) == std::end(kReserved);
}

class ManifestReader {
 public:
  explicit ManifestReader(std::string path) : path_(std::move(path)) {}

  absl::StatusOr<std::unique_ptr<ExternalAlgorithm>> Read() {
    std::ifstream in(path_);
    if (!in) return absl::InvalidArgumentError(fmt::format("{}: cannot read the algorithm manifest", path_));
    std::stringstream text;
    text << in.rdbuf();
    json doc = json::parse(text.str(), nullptr, false);
    if (doc.is_discarded()) return absl::InvalidArgumentError(fmt::format("{}: not valid JSON", path_));
    auto algorithm = std::make_unique<ExternalAlgorithm>();
    a_ = algorithm.get();
    a_->manifest_path_ = path_;
    if (!ReadAll(doc)) return absl::InvalidArgumentError(error_);
    return algorithm;
  }

 private:
  bool Fail(std::string_view at, std::string_view expected) {
    error_ = fmt::format("{}: {}: expected {}", path_, at, expected);
    return false;
  }

  std::string_view Intern(std::string text) { return a_->strings_.emplace_back(std::move(text)); }

  const sim::RecordType* Message(const json& name) {
    if (!name.is_string()) return nullptr;
    return FindType(a_->message_types_, name.get<std::string>());
  }

  bool ReadAll(const json& doc) {
    if (!doc.is_object()) return Fail("/", "an object");
    if (doc.value("protocol", json()) != kProtocolVersion) return Fail("/protocol", "1");
    const json name = doc.value("name", json());
    if (!name.is_string()) return Fail("/name", "a string");
    a_->name_ = name.get<std::string>();
    a_->summary_ = doc.value("summary", std::string("an external algorithm over the step protocol"));
    if (!ReadCommand(doc)) return false;
    if (doc.contains("step_budget_ms")) {
      const json& budget = doc["step_budget_ms"];
      if (!budget.is_number_integer() || budget.get<int64_t>() < 1) return Fail("/step_budget_ms", "an integer >= 1");
      a_->budget_ms_ = budget.get<int64_t>();
    }
    if (!ReadOptions(doc.value("options", json::array()))) return false;
    if (!ReadConstraints(doc.value("constraints", json::array()))) return false;
    if (!ReadMessages(doc.value("messages", json::array()))) return false;
    if (!ReadRoles(doc.value("message_roles", json::object()))) return false;
    if (!ReadGuarantees(doc.value("guarantees", json::array()))) return false;
    if (doc.contains("bench_timing")) {
      const json& timing = doc["bench_timing"];
      const std::string period = timing.value("period_option", std::string());
      const std::string detection = timing.value("detection_option", std::string());
      if (!IsOption(period, OptionType::kDuration))
        return Fail("/bench_timing/period_option", "a duration option's name");
      if (!IsOption(detection, OptionType::kDuration)) {
        return Fail("/bench_timing/detection_option", "a duration option's name");
      }
      a_->bench_timing_ = Algorithm::BenchTiming{Intern(period), Intern(detection)};
    }
    const json replicates = doc.value("replicates_log", json(false));
    if (!replicates.is_boolean()) return Fail("/replicates_log", "true or false");
    a_->replicates_log_ = replicates.get<bool>();
    return true;
  }

  bool ReadCommand(const json& doc) {
    const json command = doc.value("command", json());
    if (!command.is_array() || command.empty()) return Fail("/command", "a non-empty array of strings");
    for (size_t i = 0; i < command.size(); ++i) {
      if (!command[i].is_string()) return Fail(fmt::format("/command/{}", i), "a string");
      a_->command_.push_back(command[i].get<std::string>());
    }
    // A program named with a '/' lives beside the manifest.
    std::string& program = a_->command_.front();
    if (program.find('/') != std::string::npos && program.front() != '/') {
      program = (std::filesystem::absolute(path_).parent_path() / program).lexically_normal().string();
    }
    return true;
  }

  bool IsOption(const std::string& name, OptionType type) const {
    return std::any_of(a_->options_.begin(), a_->options_.end(),
                       [&](const OptionSpec& spec) { return spec.name == name && spec.type == type; });
  }

  bool ReadOptions(const json& options) {
    if (!options.is_array()) return Fail("/options", "an array");
    for (size_t i = 0; i < options.size(); ++i) {
      const std::string at = fmt::format("/options/{}", i);
      const json& o = options[i];
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) return Fail(at + "/name", "a string");
      const std::string option = o["name"].get<std::string>();
      const std::string type = o.value("type", std::string());
      const std::string help = o.value("help", std::string());
      const json fallback = o.value("default", json());
      OptionSpec spec;
      if (type == "duration") {
        const auto value = ParseNanos(fallback);
        if (!value) return Fail(at + "/default", "a duration such as \"150ms\"");
        spec = OptionSpec::Duration(option, sim::TimeNs(*value), help);
        if (o.contains("min") && !ReadBound(o["min"], at + "/min", spec.min, true)) return false;
        if (o.contains("max") && !ReadBound(o["max"], at + "/max", spec.max, true)) return false;
      } else if (type == "int") {
        if (!fallback.is_number_integer()) return Fail(at + "/default", "an integer");
        spec = OptionSpec::Int(option, fallback.get<int64_t>(), std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::max(), help);
        if (o.contains("min") && !ReadBound(o["min"], at + "/min", spec.min, false)) return false;
        if (o.contains("max") && !ReadBound(o["max"], at + "/max", spec.max, false)) return false;
      } else if (type == "bool") {
        if (!fallback.is_boolean()) return Fail(at + "/default", "true or false");
        spec = OptionSpec::Bool(option, fallback.get<bool>(), help);
      } else if (type == "ratio") {
        if (!fallback.is_number() || fallback.get<double>() < 0 || fallback.get<double>() > 1) {
          return Fail(at + "/default", "a number in [0, 1]");
        }
        spec = OptionSpec::Ratio(option, std::lround(fallback.get<double>() * 1e6), 0, 1000000, help);
      } else if (type == "choice") {
        const json choices = o.value("choices", json());
        if (!choices.is_array() || choices.empty()) return Fail(at + "/choices", "a non-empty array of strings");
        std::vector<std::string> names;
        for (const json& choice : choices) {
          if (!choice.is_string()) return Fail(at + "/choices", "a non-empty array of strings");
          names.push_back(choice.get<std::string>());
        }
        spec = OptionSpec::Choice(option, names, help);
        auto chosen = std::find(names.begin(), names.end(), fallback.is_string() ? fallback.get<std::string>() : "");
        if (chosen == names.end()) return Fail(at + "/default", "one of its choices");
        spec.default_value = chosen - names.begin();
      } else {
        return Fail(at + "/type", "\"duration\", \"int\", \"bool\", \"ratio\" or \"choice\"");
      }
      if (spec.default_value < spec.min || spec.default_value > spec.max)
        return Fail(at + "/default", "within min and max");
      if (o.contains("step")) {
        const std::optional<int64_t> step = type == "duration" ? ParseNanos(o["step"]) : std::nullopt;
        if (!step || *step <= 0) return Fail(at + "/step", "a duration above 0 (duration options only)");
        spec.step = *step;
      }
      const json swarmed = o.value("swarmed", json(true));
      if (!swarmed.is_boolean()) return Fail(at + "/swarmed", "true or false");
      spec.swarmed = swarmed.get<bool>();
      if (std::any_of(a_->options_.begin(), a_->options_.end(), [&](const auto& s) { return s.name == option; })) {
        return Fail(at + "/name", "a name no other option has");
      }
      a_->options_.push_back(std::move(spec));
    }
    return true;
  }

  bool ReadBound(const json& value, const std::string& at, int64_t& out, bool duration) {
    const std::optional<int64_t> bound =
        duration ? ParseNanos(value) : (value.is_number_integer() ? std::optional(value.get<int64_t>()) : std::nullopt);
    if (!bound) return Fail(at, duration ? "a duration such as \"1ns\"" : "an integer");
    out = *bound;
    return true;
  }

  // A constraint's "times" (a "shorter" one's factor) and "unless_zero".
  bool ReadConstraintFlags(const json& c, const std::string& at, Constraint& constraint) {
    if (c.contains("times")) {
      const json& times = c["times"];
      if (!c.contains("shorter") || !times.is_number_integer() || times.get<int64_t>() < 1 ||
          times.get<int64_t>() > 1000) {
        return Fail(at + "/times", "an integer from 1 to 1000, in a \"shorter\" constraint");
      }
      constraint.times = times.get<int64_t>();
    }
    const json unless_zero = c.value("unless_zero", json(false));
    if (!unless_zero.is_boolean()) return Fail(at + "/unless_zero", "true or false");
    constraint.unless_zero = unless_zero.get<bool>();
    return true;
  }

  bool ReadConstraints(const json& constraints) {
    if (!constraints.is_array()) return Fail("/constraints", "an array");
    for (size_t i = 0; i < constraints.size(); ++i) {
      const std::string at = fmt::format("/constraints/{}", i);
      const json& c = constraints[i];
      Constraint constraint;
      constraint.because = c.value("because", std::string());
      if (!ReadConstraintFlags(c, at, constraint)) return false;
      const bool shorter = c.contains("shorter");
      const bool not_shorter = c.contains("not_shorter");
      const char* key = shorter ? "shorter" : not_shorter ? "not_shorter" : "multiple";
      const char* other_key = shorter || not_shorter ? "than" : "of";
      constraint.kind = shorter       ? Constraint::Kind::kShorter
                        : not_shorter ? Constraint::Kind::kNotShorter
                                      : Constraint::Kind::kMultiple;
      constraint.subject = c.value(key, std::string());
      constraint.other = c.value(other_key, std::string());
      if (!IsOption(constraint.subject, OptionType::kDuration)) {
        return Fail(at + "/" + key, shorter || not_shorter
                                        ? "a duration option's name"
                                        : "a duration option's name (or \"shorter\", \"not_shorter\")");
      }
      if (!IsOption(constraint.other, OptionType::kDuration)) {
        return Fail(at + "/" + other_key, "a duration option's name");
      }
      a_->constraints_.push_back(std::move(constraint));
    }
    return true;
  }

  bool ReadMessages(const json& messages) {
    if (!messages.is_array()) return Fail("/messages", "an array");
    for (size_t i = 0; i < messages.size(); ++i) {
      const std::string at = fmt::format("/messages/{}", i);
      const json& m = messages[i];
      const json type = m.value("type", json());
      if (!type.is_string() || !IsOwnTypeName(type.get<std::string>())) {
        return Fail(at + "/type",
                    "a string \"<prefix>.<message>\" whose prefix is not electsim's own (raft, bully, ring, lease, "
                    "shards, store, resource, role, log, declare, key)");
      }
      if (Message(type) != nullptr) return Fail(at + "/type", "a type no other message has");
      const json fields = m.value("fields", json::array());
      if (!fields.is_array() || fields.size() > static_cast<size_t>(sim::RecordType::kMaxFields)) {
        return Fail(at + "/fields", "an array of at most 6 field names");
      }
      std::vector<std::string_view> names;
      for (size_t f = 0; f < fields.size(); ++f) {
        if (!fields[f].is_string() || fields[f].get<std::string>().empty() || fields[f] == "type") {
          return Fail(fmt::format("{}/fields/{}", at, f), "a field name (not \"type\")");
        }
        names.push_back(Intern(fields[f].get<std::string>()));
      }
      a_->records_.push_back(MakeRecordType(Intern(type.get<std::string>()), names));
      a_->message_types_.push_back(&a_->records_.back());
    }
    // The shared resource's protocol, for leader work.
    a_->message_types_.push_back(&ResourceWrite::kType);
    a_->message_types_.push_back(&ResourceAck::kType);
    return true;
  }

  bool ReadRoles(const json& roles) {
    if (!roles.is_object()) return Fail("/message_roles", "an object");
    const json leader_only = roles.value("leader_only", json::array());
    for (size_t i = 0; i < leader_only.size(); ++i) {
      const std::string at = fmt::format("/message_roles/leader_only/{}", i);
      const sim::RecordType* type = Message(leader_only[i].value("type", json()));
      if (type == nullptr) return Fail(at + "/type", "a declared message type");
      const std::string term = leader_only[i].value("term", std::string());
      if (type->IndexOf(term) < 0) return Fail(at + "/term", "one of the message's fields");
      a_->roles_.leader_only.emplace_back(*type, term);
    }
    const json grants = roles.value("vote_grants", json::array());
    for (size_t i = 0; i < grants.size(); ++i) {
      const std::string at = fmt::format("/message_roles/vote_grants/{}", i);
      const sim::RecordType* type = Message(grants[i].value("type", json()));
      if (type == nullptr) return Fail(at + "/type", "a declared message type");
      const std::string term = grants[i].value("term", std::string());
      const std::string granted = grants[i].value("granted", std::string());
      if (type->IndexOf(term) < 0) return Fail(at + "/term", "one of the message's fields");
      if (!granted.empty() && type->IndexOf(granted) < 0) return Fail(at + "/granted", "one of the message's fields");
      a_->roles_.vote_grants.emplace_back(*type, term, granted);
    }
    const json steady = roles.value("steady_state", json::array());
    for (size_t i = 0; i < steady.size(); ++i) {
      const sim::RecordType* type = Message(steady[i]);
      if (type == nullptr) return Fail(fmt::format("/message_roles/steady_state/{}", i), "a declared message type");
      a_->roles_.steady_state.push_back(type);
    }
    return true;
  }

  bool ReadFaultKinds(const json& kinds, const std::string& at, FaultKinds& out) {
    if (kinds == "all") {
      out = FaultKinds::All();
      return true;
    }
    if (!kinds.is_array()) return Fail(at, "\"all\" or an array of fault kinds");
    out = FaultKinds();
    for (size_t i = 0; i < kinds.size(); ++i) {
      const auto& all = AllFaultKinds();
      auto kind = std::find_if(all.begin(), all.end(), [&](FaultKind k) { return kinds[i] == FaultKindName(k); });
      if (kind == all.end()) {
        return Fail(fmt::format("{}/{}", at, i),
                    "a fault kind (loss, duplication, latency, partition, one_way_cut, crash, power_loss, pause, "
                    "clock_drift, clock_step)");
      }
      out = out.With({*kind});
    }
    return true;
  }

  bool ReadGuarantees(const json& sets) {
    if (!sets.is_array()) return Fail("/guarantees", "an array");
    for (size_t i = 0; i < sets.size(); ++i) {
      const std::string at = fmt::format("/guarantees/{}", i);
      GuaranteeSet set;
      const json when = sets[i].value("when", json::object());
      if (!when.is_object()) return Fail(at + "/when", "an object of option values");
      for (auto it = when.begin(); it != when.end(); ++it) {
        if (!std::any_of(a_->options_.begin(), a_->options_.end(), [&](const auto& s) { return s.name == it.key(); })) {
          return Fail(fmt::format("{}/when/{}", at, it.key()), "a declared option's name");
        }
        set.when.emplace_back(it.key(), it.value());
      }
      const json keeps = sets[i].value("keeps", json());
      if (!keeps.is_object()) return Fail(at + "/keeps", "an object of invariant names and fault kinds");
      for (auto it = keeps.begin(); it != keeps.end(); ++it) {
        FaultKinds kinds;
        if (!ReadFaultKinds(it.value(), fmt::format("{}/keeps/{}", at, it.key()), kinds)) return false;
        set.keeps.push_back({Intern(it.key()), kinds});
      }
      a_->guarantees_.push_back(std::move(set));
    }
    return true;
  }

  std::string path_;
  std::string error_;
  ExternalAlgorithm* a_ = nullptr;
};

}  // namespace

absl::StatusOr<const algorithms::Algorithm*> LoadManifest(const std::string& path) {
  auto algorithm = ManifestReader(path).Read();
  if (!algorithm.ok()) return algorithm.status();
  // The registry keeps algorithms for the program's life, as a pointer in a
  // global: never destroyed (a worker may still read one at exit), and never
  // reported as a leak.
  static auto* const loaded = new std::vector<std::unique_ptr<ExternalAlgorithm>>();
  static std::mutex loaded_mutex;
  std::lock_guard lock(loaded_mutex);
  loaded->push_back(std::move(*algorithm));
  return loaded->back().get();
}

std::vector<std::string> ManifestPaths() {
  std::vector<std::string> paths;
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path directory = program.parent_path() / "algorithms.d";
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
      if (entry.path().extension() == ".json") found.push_back(entry.path().string());
    }
    std::sort(found.begin(), found.end());  // directory order is the file system's
    paths.insert(paths.end(), found.begin(), found.end());
  }
  if (const char* listed = std::getenv("ELECTSIM_ALGORITHMS"); listed != nullptr) {
    std::string_view rest(listed);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view item = rest.substr(0, colon);
      if (!item.empty()) paths.emplace_back(item);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return paths;
}

absl::Status RegisterExternalAlgorithms() {
  for (const std::string& path : ManifestPaths()) {
    auto algorithm = LoadManifest(path);
    if (!algorithm.ok()) return algorithm.status();
    if (auto s = algorithms::RegisterAlgorithm(**algorithm); !s.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", path, std::string(s.message())));
    }
  }
  return absl::OkStatus();
}

}  // namespace electsim::external
