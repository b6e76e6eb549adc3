// A scenario file, from text to a Scenario: the strict JSON reader
// (json_document.cc), the JSON Schema (schema.cc), then the top-level keys
// here and each larger part in its own file (scenario_algorithm.cc,
// scenario_network.cc, scenario_faults.cc, scenario_expect.cc).
#include "tools/electsim/scenario.h"

#include <algorithm>
#include <filesystem>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/scenario_reader.h"
#include "tools/electsim/schema.h"

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

sim::TimeNs Scenario::LivenessAfter() const {
  if (liveness_after) return *liveness_after;
  sim::TimeNs last;
  for (const FaultStep& step : faults) last = std::max(last, step.EndsAt());
  return last;
}

uint32_t Scenario::total_nodes() const {
  return nodes + 1 + (algorithm != nullptr && algorithm->uses_store() ? 1 : 0);
}

namespace {

// Names end up in file names (repros): keep them to a safe alphabet.
bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
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
  if (const json* d = Reader::Find(work, "duration")) config.write_duration = reader.Duration(*d, "/leader_work/duration");
  if (config.write_duration >= config.write_interval) {
    reader.Fail("/leader_work/duration", fmt::format("a duration shorter than leader_work.interval ({})",
                                                     sim::FormatDuration(config.write_interval)));
  }
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
  s.duration = reader.PositiveDuration(document.at("duration"), "/duration");

  // Before the algorithm: its option relations are checked against the cluster.
  if (const json* v = Reader::Find(document, "leader_work")) ReadLeaderWork(reader, *v, s.leader_work);
  scenario_reader::ReadAlgorithm(reader, document.at("algorithm"), s);
  s.network.latency = sim::LatencyModel::Fixed(sim::TimeNs::Millis(1));
  if (const json* v = Reader::Find(document, "network")) scenario_reader::ReadLinkSettings(reader, *v, "/network", s.network);
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
  // Steps run in time order; equal times keep file order.
  std::stable_sort(s.faults.begin(), s.faults.end(), [](const FaultStep& a, const FaultStep& b) { return a.at < b.at; });

  scenario_reader::ReadCheckersAndExpectations(reader, document, s);
  s.document = std::move(document);
  return s;
}

}  // namespace

absl::StatusOr<Scenario> ParseScenarioJson(json document, const std::string& source,
                                           const std::string& json_path_prefix) {
  if (auto status = CheckAgainstSchema(SchemaKind::kScenario, document, source, json_path_prefix); !status.ok()) {
    return status;
  }
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
