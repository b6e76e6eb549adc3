#include "tools/electsim/export/perfetto_export.h"

#include <iterator>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "tools/electsim/export/timeline_state.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim {
namespace {

using sim::AppendJsonString;

// Trace-event timestamps are microseconds; three decimals keep every nanosecond.
std::string MicrosText(sim::TimeNs t) { return fmt::format("{}.{:03}", t.ns() / 1000, t.ns() % 1000); }

// Every simulated process is a thread of one process, so that Perfetto shows
// the whole cluster in one group, one track per node, in id order.
constexpr int kPid = 1;
uint32_t Tid(uint32_t node) { return node + 1; }

class PerfettoExporter final : public TraceExporter {
 public:
  PerfettoExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario, uint64_t seed)
      : output_(std::move(output)),
        timeline_(
            scenario.total_nodes(), scenario.nodes, [this](const TimelineTracker::Span& span) { OnSpan(span); },
            [this](const TimelineTracker::Flow& flow) { OnFlow(flow); }) {
    output_->Write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    std::string name;
    AppendJsonString(name, fmt::format("electsim {} seed {}", scenario.name, seed));
    Event(fmt::format(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":{}}}}})", kPid, name));
    for (uint32_t node = 0; node < scenario.total_nodes(); ++node) {
      std::string label;
      AppendJsonString(label, NodeLabel(scenario, node));
      Event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})", kPid, Tid(node),
                        label));
      Event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", kPid,
                        Tid(node), node));
    }
  }

  void OnRecord(const sim::TraceRecord& r) override {
    timeline_.OnRecord(r);
    using sim::TraceKind;
    switch (r.kind) {
      case TraceKind::kDrop: Instant(r, fmt::format("drop {}", r.detail), "t"); return;
      case TraceKind::kCrash: Instant(r, r.detail.empty() ? "crash" : fmt::format("crash ({})", r.detail), "t"); return;
      case TraceKind::kRestart:
      case TraceKind::kPause:
      case TraceKind::kResume: Instant(r, sim::TraceKindName(r.kind), "t"); return;
      case TraceKind::kClock: Instant(r, fmt::format("clock {} {}", r.detail, r.value), "t"); return;
      case TraceKind::kNetwork:
        Instant(r, fmt::format("network: {}", r.detail), r.node == sim::kNoNode ? "g" : "t");
        return;
      case TraceKind::kNote: Instant(r, r.detail, r.node == sim::kNoNode ? "g" : "t"); return;
      default: return;
    }
  }

  void Finish(const RunResult& result) override {
    timeline_.Finish(result.end);
    for (const checkers::Violation& v : result.violations) {
      std::string name, message;
      AppendJsonString(name, fmt::format("VIOLATION {}", v.checker));
      AppendJsonString(message, checkers::DescribeViolation(v));
      Event(fmt::format(R"({{"ph":"i","s":"g","pid":{},"tid":0,"ts":{},"name":{},"cat":"violation",)"
                        R"("cname":"terrible","args":{{"message":{},"trace_index":{}}}}})",
                        kPid, MicrosText(v.time), name, message, v.trace_index));
      // On the track of each node involved too, where the eye already is.
      for (const sim::NodeId node : v.nodes) {
        Event(fmt::format(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":"violation",)"
                          R"("cname":"terrible","args":{{"message":{}}}}})",
                          kPid, Tid(node.value()), MicrosText(v.time), name, message));
      }
    }
    output_->Write("\n]}\n");
  }

  absl::Status Commit() override { return output_->Commit(); }

 private:
  void Event(const std::string& json) {
    if (!first_) output_->Write(",\n");
    first_ = false;
    output_->Write(json);
  }

  void Instant(const sim::TraceRecord& r, std::string_view what, std::string_view scope) {
    std::string name;
    AppendJsonString(name, what);
    const uint32_t tid = r.node == sim::kNoNode ? 0 : Tid(r.node.value());
    Event(fmt::format(R"({{"ph":"i","s":"{}","pid":{},"tid":{},"ts":{},"name":{},"cat":"fault","args":{{"i":{}}}}})",
                      scope, kPid, tid, MicrosText(r.time), name, r.index));
  }

  void OnSpan(const TimelineTracker::Span& span) {
    const std::string name =
        span.term >= 0 ? fmt::format("{} (term {})", span.state, span.term) : std::string(span.state);
    Event(fmt::format(
        R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}","cat":"role","args":{{"state":"{}"}}}})", kPid,
        Tid(span.node), MicrosText(span.start), MicrosText(span.end - span.start), name, span.state));
  }

  void OnFlow(const TimelineTracker::Flow& flow) {
    // A duplicated message is delivered twice: each delivery gets its own arrow.
    const uint64_t id = ++flows_;
    std::string name;
    AppendJsonString(name, flow.type);
    Event(fmt::format(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":{},"cat":"msg","args":{{"msg":{}}}}})", id,
                      kPid, Tid(flow.from), MicrosText(flow.sent), name, flow.message_id));
    Event(fmt::format(
        R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":{},"cat":"msg","args":{{"msg":{}}}}})", id,
        kPid, Tid(flow.to), MicrosText(flow.delivered), name, flow.message_id));
  }

  std::unique_ptr<TraceOutput> output_;
  TimelineTracker timeline_;
  bool first_ = true;
  uint64_t flows_ = 0;
};

}  // namespace

std::unique_ptr<TraceExporter> MakePerfettoExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario,
                                                    uint64_t seed) {
  return std::make_unique<PerfettoExporter>(std::move(output), scenario, seed);
}

}  // namespace electsim
