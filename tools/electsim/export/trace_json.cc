#include "tools/electsim/export/trace_json.h"

#include <iterator>

#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"

namespace electsim {

using sim::AppendJsonString;

std::string NodeLabel(const Scenario& scenario, uint32_t node) {
  const algorithms::Cluster cluster = scenario.cluster();
  if (sim::NodeId(node) == cluster.resource) return "resource";
  if (sim::NodeId(node) == cluster.store) return "store";
  return fmt::format("node {}", node);
}

std::string TraceHeaderJson(const Scenario& scenario, uint64_t seed) {
  std::string out = fmt::format(R"({{"trace_version":{},"scenario":)", kTraceVersion);
  AppendJsonString(out, scenario.name);
  out += R"(,"algorithm":)";
  AppendJsonString(out, scenario.algorithm->name());
  fmt::format_to(std::back_inserter(out), R"(,"seed":{},"duration_ns":{},"election_nodes":{},"nodes":[)", seed,
                 scenario.duration.ns(), scenario.nodes);
  for (uint32_t node = 0; node < scenario.total_nodes(); ++node) {
    if (node > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), R"({{"id":{},"name":)", node);
    AppendJsonString(out, NodeLabel(scenario, node));
    out.push_back('}');
  }
  out += "]}";
  return out;
}

namespace {
// Observation fields that hold a role: written as its name.
bool IsRoleField(const sim::Payload& payload, std::string_view key) {
  return payload.Is(vocab::kRoleChange) && key == vocab::kFieldRole;
}
}  // namespace

std::string TraceRecordToNamedJson(const sim::TraceRecord& r) {
  std::string out;
  out.reserve(160);
  auto to = std::back_inserter(out);
  fmt::format_to(to, R"({{"i":{},"t":{},"kind":"{}")", r.index, r.time.ns(), sim::TraceKindName(r.kind));
  if (r.node != sim::kNoNode) fmt::format_to(to, R"(,"node":{})", r.node.value());
  if (r.peer != sim::kNoNode) fmt::format_to(to, R"(,"peer":{})", r.peer.value());
  if (r.message_id != 0) fmt::format_to(to, R"(,"msg":{})", r.message_id);
  fmt::format_to(to, R"(,"local":{})", r.local_time.ns());
  if (r.value != 0) fmt::format_to(to, R"(,"value":{})", r.value);
  if (!r.detail.empty()) {
    out += R"(,"detail":)";
    AppendJsonString(out, r.detail);
  }
  if (r.kind == sim::TraceKind::kCrash) {
    // The canonical record leaves a plain crash's detail empty; name it.
    fmt::format_to(to, R"(,"crash":"{}")", r.detail.empty() ? "process" : r.detail);
  }
  if (r.payload != nullptr) {
    out += R"(,"type":)";
    AppendJsonString(out, r.payload->type_name());
    out += R"(,"fields":{)";
    bool first = true;
    for (const sim::Field& f : r.payload->fields()) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(out, f.key);
      out.push_back(':');
      if (IsRoleField(*r.payload, f.key) && f.value >= 0 && f.value <= 2) {
        AppendJsonString(out, vocab::RoleName(static_cast<vocab::Role>(f.value)));
      } else {
        fmt::format_to(to, "{}", f.value);
      }
    }
    out.push_back('}');
  }
  out.push_back('}');
  return out;
}

}  // namespace electsim
