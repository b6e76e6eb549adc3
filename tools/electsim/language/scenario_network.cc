// Network settings: the whole network ("network", a "network" fault step) or
// one link (a "link" step); and the nodes' own latencies ("nodes_model"),
// which take the same latency forms. The schema has checked the keys and the types;
// here a latency model is built and its relations checked (a uniform maximum
// below its minimum, a heavy tail's maximum below its scale).
#include "fmt/format.h"
#include "tools/electsim/language/scenario_reader.h"

namespace electsim::scenario_reader {
namespace {

using nlohmann::json;

sim::LatencyModel ReadLatency(const Reader& reader, const json& value, const std::string& path) {
  if (value.is_string()) return sim::LatencyModel::Fixed(reader.Duration(value, path));
  if (!value.is_object() || value.size() != 1) {
    reader.Fail(path,
                "a latency: a duration, or an object with one of \"fixed\", \"uniform\", \"exponential\", \"pareto\"",
                &value);
  }
  const std::string kind = value.begin().key();
  const json& body = value.begin().value();
  const std::string body_path = Reader::Child(path, kind);
  auto duration = [&](const char* key) { return reader.Duration(body.at(key), Reader::Child(body_path, key)); };
  sim::LatencyModel model;
  if (kind == "fixed") {
    model = sim::LatencyModel::Fixed(reader.Duration(body, body_path));
  } else if (kind == "uniform") {
    const sim::TimeNs min = reader.Duration(body.at(0), Reader::Child(body_path, 0));
    const sim::TimeNs max = reader.AtLeast(reader.Duration(body.at(1), Reader::Child(body_path, 1)), min, "the minimum",
                                           Reader::Child(body_path, 1), body.at(1));
    model = sim::LatencyModel::Uniform(min, max);
  } else if (kind == "exponential") {
    const sim::TimeNs min = duration("min");
    const sim::TimeNs mean =
        reader.AtLeast(duration("mean"), sim::TimeNs(1), "1ns", Reader::Child(body_path, "mean"), body.at("mean"));
    const sim::TimeNs max =
        reader.AtLeast(duration("max"), min, "min", Reader::Child(body_path, "max"), body.at("max"));
    model = sim::LatencyModel::Exponential(min, mean, max);
  } else if (kind == "pareto") {
    const sim::TimeNs scale =
        reader.AtLeast(duration("scale"), sim::TimeNs(1), "1ns", Reader::Child(body_path, "scale"), body.at("scale"));
    const sim::TimeNs max =
        reader.AtLeast(duration("max"), scale, "scale", Reader::Child(body_path, "max"), body.at("max"));
    // The shape is held in thousandths (the schema keeps it in [0.001, 100]).
    const double alpha = body.at("alpha").get<double>();
    model = sim::LatencyModel::Pareto(scale, static_cast<int64_t>(alpha * 1000.0 + 0.5), max);
  } else {
    reader.Fail(path, "one of \"fixed\", \"uniform\", \"exponential\", \"pareto\"", &value);
  }
  if (auto status = model.Validate(); !status.ok()) reader.Fail(path, std::string(status.message()));
  return model;
}

}  // namespace

void ReadLinkSettings(const Reader& reader, const json& object, const std::string& path, sim::LinkConfig& link) {
  if (const json* v = Reader::Find(object, "latency"))
    link.latency = ReadLatency(reader, *v, Reader::Child(path, "latency"));
  if (const json* v = Reader::Find(object, "drop")) link.drop = reader.Probability(*v, Reader::Child(path, "drop"));
  if (const json* v = Reader::Find(object, "duplicate")) {
    link.duplicate = reader.Probability(*v, Reader::Child(path, "duplicate"));
  }
  if (const json* v = Reader::Find(object, "fifo")) link.fifo = reader.Bool(*v, Reader::Child(path, "fifo"));
}

void ReadNodeModel(const Reader& reader, const json& object, const std::string& path, sim::NodeModel& model) {
  if (const json* v = Reader::Find(object, "processing")) {
    model.processing = ReadLatency(reader, *v, Reader::Child(path, "processing"));
  }
  if (const json* v = Reader::Find(object, "persist"))
    model.persist = ReadLatency(reader, *v, Reader::Child(path, "persist"));
}

}  // namespace electsim::scenario_reader
