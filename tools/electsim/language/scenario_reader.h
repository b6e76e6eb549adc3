// Shared by the files that read one part of a scenario each (scenario.cc,
// scenario_algorithm.cc, scenario_network.cc, scenario_faults.cc,
// scenario_expect.cc). By the time they run, the document has passed the
// JSON Schema (scenarios/schema/scenario.schema.json): keys, types, ranges and
// names are known good. What is left to them is what a schema cannot say:
// relations between values, node ids below "nodes", times within the run.
// A new part of the scenario language is one more file here plus its schema.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "electsim/sim/types.h"
#include "nlohmann/json.hpp"
#include "sim/network.h"
#include "tools/electsim/language/scenario.h"

namespace electsim::scenario_reader {

// Thrown by Fail inside the reader, turned into the load's Status at its edge.
struct LoadFailure {
  absl::Status status;
};

// Reads values at JSON paths of one document and fails with messages that
// name the file, the path and what was expected. The typed reads re-check
// the type: cheap, and a gap between schema and code becomes a message
// rather than an exception.
class Reader {
 public:
  Reader(std::string source, std::string path_prefix)
      : source_(std::move(source)), path_prefix_(std::move(path_prefix)) {}

  [[noreturn]] void Fail(const std::string& path, std::string_view expected, const nlohmann::json* got = nullptr) const;

  static std::string Child(const std::string& path, std::string_view key);
  static std::string Child(const std::string& path, size_t index);
  static const nlohmann::json* Find(const nlohmann::json& object, const char* key);

  int64_t Integer(const nlohmann::json& value, const std::string& path, int64_t min, int64_t max) const;
  // Any integer >= 0 up to 2^64 - 1; "-0" is zero.
  uint64_t Unsigned(const nlohmann::json& value, const std::string& path) const;
  bool Bool(const nlohmann::json& value, const std::string& path) const;
  const std::string& String(const nlohmann::json& value, const std::string& path) const;
  sim::TimeNs Duration(const nlohmann::json& value, const std::string& path, bool allow_negative = false) const;
  // A duration that must be > 0.
  sim::TimeNs PositiveDuration(const nlohmann::json& value, const std::string& path) const;
  // A duration, or {"uniform": [LOW, HIGH]} with LOW <= HIGH; with
  // `positive`, LOW (and so every draw) > 0.
  TimeRange Time(const nlohmann::json& value, const std::string& path, bool positive = false) const;
  // `value` unless it is below `bound`, named `bound_name` in the message.
  sim::TimeNs AtLeast(sim::TimeNs value, sim::TimeNs bound, std::string_view bound_name, const std::string& path,
                      const nlohmann::json& got) const;
  sim::Probability Probability(const nlohmann::json& value, const std::string& path) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string path_prefix_;  // where the scenario sits in its file ("/scenario" in a repro)
};

// scenario_algorithm.cc: "algorithm" (a name or {"name", "options"}) into
// s.algorithm and s.options, then the algorithm's own option relations.
void ReadAlgorithm(const Reader& reader, const nlohmann::json& algorithm, Scenario& s);

// scenario_network.cc: the keys of a network-settings object that are
// present, applied on top of `link`.
void ReadLinkSettings(const Reader& reader, const nlohmann::json& object, const std::string& path,
                      sim::LinkConfig& link);
// scenario_network.cc: "nodes_model", an object with "processing" and
// "persist" latencies.
void ReadNodeModel(const Reader& reader, const nlohmann::json& object, const std::string& path, sim::NodeModel& model);

// scenario_faults.cc: one fault step, and a node selector (needs s.nodes and
// s.algorithm).
FaultStep ReadFaultStep(const Reader& reader, const nlohmann::json& value, const std::string& path, const Scenario& s);
// After every step is read: "after": {"step": NAME} becomes an index, and a
// step may not wait (through others) for itself.
void ResolveStepReferences(const Reader& reader, std::vector<FaultStep>& steps);
// `actor`: the node the step acts on (a crash's, pause's, isolation's or
// clock step's node, a cut's "from"), which may also be {"next_leader": N}.
NodeSelector ReadNodeSelector(const Reader& reader, const nlohmann::json& value, const std::string& path,
                              const Scenario& s, bool actor);

// scenario_expect.cc: "checkers" (or the default set), "liveness" and
// "expect", in that order: an expected violation must name a checker that runs.
void ReadCheckersAndExpectations(const Reader& reader, const nlohmann::json& document, Scenario& s);

}  // namespace electsim::scenario_reader
