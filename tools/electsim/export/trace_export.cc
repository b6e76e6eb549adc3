#include "tools/electsim/export/trace_export.h"

#include "fmt/format.h"
#include "tools/electsim/export/html_timeline.h"
#include "tools/electsim/export/perfetto_export.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim {

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view text) {
  if (text == "jsonl") return TraceFormat::kJsonl;
  if (text == "perfetto") return TraceFormat::kPerfetto;
  if (text == "html") return TraceFormat::kHtml;
  return absl::InvalidArgumentError(fmt::format("--trace-format: expected jsonl, perfetto or html; got \"{}\"", text));
}

namespace {

// The documented JSON Lines trace (docs/trace.md): a header line, then one
// line per record.
class JsonlExporter final : public TraceExporter {
 public:
  JsonlExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario, uint64_t seed)
      : output_(std::move(output)) {
    output_->Write(TraceHeaderJson(scenario, seed) + "\n");
  }
  void OnRecord(const sim::TraceRecord& record) override {
    std::string line = TraceRecordToNamedJson(record);
    line.push_back('\n');
    output_->Write(line);
  }
  void Finish(const RunResult&) override {}
  absl::Status Commit() override { return output_->Commit(); }

 private:
  std::unique_ptr<TraceOutput> output_;
};

}  // namespace

std::unique_ptr<TraceExporter> MakeTraceExporter(TraceFormat format, std::unique_ptr<TraceOutput> output,
                                                 const Scenario& scenario, uint64_t seed) {
  switch (format) {
    case TraceFormat::kJsonl: return std::make_unique<JsonlExporter>(std::move(output), scenario, seed);
    case TraceFormat::kPerfetto: return MakePerfettoExporter(std::move(output), scenario, seed);
    case TraceFormat::kHtml: return MakeHtmlTimelineExporter(std::move(output), scenario, seed);
  }
  return nullptr;
}

}  // namespace electsim
