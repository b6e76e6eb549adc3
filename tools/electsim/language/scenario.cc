// A scenario file, from text to a Scenario: the strict JSON reader
// (json_document.cc), the JSON Schema (schema.cc), then the top-level keys
// here and each larger part in its own file (scenario_algorithm.cc,
// scenario_network.cc, scenario_faults.cc, scenario_expect.cc).
#include "tools/electsim/language/scenario.h"

#include <algorithm>
#include <filesystem>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/language/scenario_reader.h"
#include "tools/electsim/language/schema.h"

namespace electsim {

using nlohmann::json;
using scenario_reader::Reader;

algorithms::Cluster Scenario::cluster() const {
  algorithms::Cluster c;
  c.node_count = nodes;
  c.resource = sim::NodeId(nodes);
  if (algorithm != nullptr && algorithm->uses_store()) c.store = sim::NodeId(nodes + 1);
  c.leader_work = leader_work;
  return c;
}

std::optional<sim::TimeNs> FaultStep::LatestEnd() const {
  if (after) return std::nullopt;
  return at_range.max + (for_range ? for_range->max : sim::TimeNs(0));
}

std::optional<sim::TimeNs> Scenario::LivenessAfter() const {
  if (liveness_after) return *liveness_after;
  sim::TimeNs last;
  for (const FaultStep& step : faults) {
    const std::optional<sim::TimeNs> end = step.LatestEnd();
    if (!end) return std::nullopt;
    last = std::max(last, *end);
  }
  return last;
}

uint32_t Scenario::total_nodes() const { return nodes + 1 + (algorithm != nullptr && algorithm->uses_store() ? 1 : 0); }

namespace {

// Names end up in file names (repros): keep them to a safe alphabet.
bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

std::string PlainName(std::string name) {
  for (char& c : name) {
    if (!IsPlainChar(c)) c = '_';
  }
  if (name.empty() || name[0] == '.') name.insert(name.begin(), '_');
  return name.substr(0, 100);
}

void ReadLeaderWork(const Reader& reader, const json& work, algorithms::LeaderWorkConfig& config) {
  if (const json* i = Reader::Find(work, "interval")) {
    config.write_interval = reader.PositiveDuration(*i, "/leader_work/interval");
  }
  if (const json* d = Reader::Find(work, "duration"))
    config.write_duration = reader.Duration(*d, "/leader_work/duration");
  if (config.write_duration >= config.write_interval) {
    reader.Fail("/leader_work/duration", fmt::format("a duration shorter than leader_work.interval ({})",
                                                     sim::FormatDuration(config.write_interval)));
  }
}

// "duration", or "stop" with "max": one of them bounds the run.
void ReadDurationAndStop(const Reader& reader, const json& document, Scenario& s) {
  const json* duration = Reader::Find(document, "duration");
  const json* stop = Reader::Find(document, "stop");
  const json* max = stop != nullptr ? Reader::Find(*stop, "max") : nullptr;
  if (duration != nullptr && max != nullptr) {
    reader.Fail("/stop/max", "no \"max\" when the scenario has a \"duration\" (either bounds the run)", max);
  }
  if (duration == nullptr && max == nullptr) {
    reader.Fail("/duration", "a duration: how long to simulate (this key is required unless \"stop\" has a \"max\")");
  }
  s.duration = duration != nullptr ? reader.PositiveDuration(*duration, "/duration")
                                   : reader.PositiveDuration(*max, "/stop/max");
  s.stop_when_leader_known = stop != nullptr;  // the schema allows one condition
}

// The document has passed the schema. Order matters where parts depend on
// each other: leader_work before the algorithm's option checks, the algorithm
// before node selectors (whether there is a store), the duration before fault
// times, faults before liveness.
Scenario Read(const Reader& reader, json document) {
  Scenario s;
  s.source = reader.source();
  if (const json* name = Reader::Find(document, "name")) {
    s.name = reader.String(*name, "/name");
  } else {
    s.name = ScenarioNameFromPath(reader.source());
  }
  if (const json* v = Reader::Find(document, "description")) s.description = reader.String(*v, "/description");
  s.nodes = static_cast<uint32_t>(reader.Integer(document.at("nodes"), "/nodes", 1, kMaxNodes));
  if (const json* v = Reader::Find(document, "seed")) s.seed = reader.Unsigned(*v, "/seed");
  ReadDurationAndStop(reader, document, s);
  if (const json* v = Reader::Find(document, "pending_events_memory_mib")) {
    s.pending_events_memory_mib = static_cast<uint64_t>(reader.Integer(*v, "/pending_events_memory_mib", 1, 1 << 20));
  }

  // Before the algorithm: its option relations are checked against the cluster.
  if (const json* v = Reader::Find(document, "leader_work")) ReadLeaderWork(reader, *v, s.leader_work);
  scenario_reader::ReadAlgorithm(reader, document.at("algorithm"), s);
  s.network.latency = sim::LatencyModel::Fixed(sim::TimeNs::Millis(1));
  if (const json* v = Reader::Find(document, "network"))
    scenario_reader::ReadLinkSettings(reader, *v, "/network", s.network);
  if (const json* v = Reader::Find(document, "nodes_model")) {
    scenario_reader::ReadNodeModel(reader, *v, "/nodes_model", s.node_model);
  }
  if (const json* v = Reader::Find(document, "resource")) {
    if (const json* fencing = Reader::Find(*v, "fencing")) s.fencing = reader.Bool(*fencing, "/resource/fencing");
    if (const json* exclusive = Reader::Find(*v, "exclusive_token")) {
      s.exclusive_token = reader.Bool(*exclusive, "/resource/exclusive_token");
      if (s.exclusive_token && !s.fencing) {
        reader.Fail("/resource/exclusive_token", "false when fencing is off (an unfenced resource checks no token)",
                    exclusive);
      }
    }
  }

  if (const json* faults = Reader::Find(document, "faults")) {
    s.faults.reserve(faults->size());
    for (size_t i = 0; i < faults->size(); ++i) {
      s.faults.push_back(scenario_reader::ReadFaultStep(reader, (*faults)[i], Reader::Child("/faults", i), s));
    }
  }
  scenario_reader::ResolveStepReferences(reader, s.faults);
  // Steps run in time order; equal times keep file order; triggered steps last.
  std::stable_sort(s.faults.begin(), s.faults.end(), [](const FaultStep& a, const FaultStep& b) {
    return std::make_pair(a.after.has_value(), a.at) < std::make_pair(b.after.has_value(), b.at);
  });

  scenario_reader::ReadCheckersAndExpectations(reader, document, s);
  s.document = std::move(document);
  return s;
}

// The document as the readers see it, with or without the schema before.
absl::StatusOr<Scenario> ReadDocument(json document, const std::string& source, const std::string& json_path_prefix) {
  try {
    return Read(Reader(source, json_path_prefix), std::move(document));
  } catch (const scenario_reader::LoadFailure& failure) {
    return failure.status;
  } catch (const json::exception& error) {
    // The schema has checked every type the readers rely on; this is a
    // safety net so that no input can end the process.
    return InputError(fmt::format("{}: unreadable scenario: {}", source, error.what()));
  }
}

}  // namespace

absl::StatusOr<Scenario> ParseScenarioJson(json document, const std::string& source,
                                           const std::string& json_path_prefix) {
  if (auto status = CheckAgainstSchema(SchemaKind::kScenario, document, source, json_path_prefix); !status.ok()) {
    return status;
  }
  return ReadDocument(std::move(document), source, json_path_prefix);
}

absl::StatusOr<Scenario> ParseGeneratedScenarioJson(json document, const std::string& source) {
  return ReadDocument(std::move(document), source, "");
}

absl::StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& source) {
  auto document = ParseJsonText(text, source);
  if (!document.ok()) return document.status();
  return ParseScenarioJson(std::move(*document), source);
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
