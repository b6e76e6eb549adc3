#include "tools/electsim/export/html_timeline.h"

#include <iterator>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "tools/electsim/export/timeline_state.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim {
namespace {

using sim::AppendJsonString;

// Beyond this many message lines the page would grow past what a CI job
// attaches comfortably; later messages are counted, not drawn.
constexpr uint64_t kMaxDrawnMessages = 20000;

// The page: data arrays are appended between kPageHead and kPageTail.
constexpr std::string_view kPageHead = R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>electsim timeline (rendering)</title>
<style>
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
#chart{overflow-x:auto;border:1px solid #ccc}
.legend span{display:inline-block;padding:1px 6px;margin-right:6px;border-radius:3px}
#violations li{color:#b00;font-weight:bold}
</style></head><body>
<h2 id="heading"></h2>
<div class="legend"><span style="background:#dde">follower</span><span style="background:#fd8">candidate</span><span style="background:#6c6">leader</span><span style="background:#aaa">paused</span><span style="background:#333;color:#fff">crashed</span> | lines: messages, &#9670; faults, red: violations | zoom: <button id="zin">+</button><button id="zout">&minus;</button></div>
<ul id="violations"></ul>
<div id="chart"></div>
<p id="notes"></p>
<script>
)";

constexpr std::string_view kPageTail = R"(
const COLORS={follower:"#dde",candidate:"#fd8",leader:"#6c6",paused:"#aaa",crashed:"#333",up:"#eee"};
let pxPerMs=Math.max(0.05,1100/Math.max(1,D.end/1e6));
const ROW=26,LEFT=90,TOP=20;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);}
function x(t){return LEFT+t/1e6*pxPerMs;}
function y(n){return TOP+n*ROW;}
function draw(){
  const w=Math.ceil(x(D.end))+20,h=TOP+D.nodes.length*ROW+10;
  let s=`<svg width="${w}" height="${h}">`;
  for(let t=0;t<=D.end;t+=tick()){s+=`<line x1="${x(t)}" x2="${x(t)}" y1="${TOP-4}" y2="${h}" stroke="#eee"/><text x="${x(t)+2}" y="12" font-size="10">${(t/1e9).toFixed(3)}s</text>`;}
  D.nodes.forEach((name,n)=>{s+=`<g class="row" id="row-${n}"><text x="4" y="${y(n)+16}">${esc(name)}</text></g>`;});
  for(const [n,st,term,a,b] of SPANS){const c=COLORS[D.states[st]]||"#eee";
    s+=`<rect x="${x(a)}" y="${y(n)+3}" width="${Math.max(0.5,x(b)-x(a))}" height="${ROW-8}" fill="${c}"><title>${esc(D.nodes[n])}: ${D.states[st]}${term>=0?" term "+term:""} ${(a/1e9).toFixed(6)}s–${(b/1e9).toFixed(6)}s</title></rect>`;}
  for(const [f,t,a,b,ty] of MSGS){s+=`<line x1="${x(a)}" y1="${y(f)+ROW/2}" x2="${x(b)}" y2="${y(t)+ROW/2}" stroke="#57a" stroke-opacity="0.35"><title>${esc(D.types[ty])}</title></line>`;}
  for(const [n,t,what] of MARKS){const X=x(t),Y=n<0?TOP-2:y(n)+ROW/2;
    s+=`<path d="M${X} ${Y-5}L${X+5} ${Y}L${X} ${Y+5}L${X-5} ${Y}Z" fill="#c60"><title>${(t/1e9).toFixed(6)}s ${esc(what)}</title></path>`;}
  VIOLATIONS.forEach(([t,checker,msg,nodes],k)=>{
    s+=`<g class="violation-marker" id="violation-${k}"><line x1="${x(t)}" x2="${x(t)}" y1="${TOP-6}" y2="${h}" stroke="#d00" stroke-width="2"><title>${esc(msg)}</title></line>`;
    for(const n of nodes){s+=`<circle cx="${x(t)}" cy="${y(n)+ROW/2}" r="6" fill="none" stroke="#d00" stroke-width="2"/>`;}
    s+=`</g>`;});
  document.getElementById("chart").innerHTML=s+"</svg>";
}
function tick(){const target=100/pxPerMs*1e6;let t=1e6;while(t<target)t*=10;return t;}
document.getElementById("heading").textContent=`${D.scenario} (${D.algorithm}), seed ${D.seed}, ${(D.end/1e9).toFixed(3)}s simulated`;
document.getElementById("violations").innerHTML=VIOLATIONS.map(v=>`<li>${esc(v[2])}</li>`).join("");
if(D.undrawn_messages>0)document.getElementById("notes").textContent=`${D.undrawn_messages} later messages are not drawn (the first ${MSGS.length} are).`;
document.getElementById("zin").onclick=()=>{pxPerMs*=2;draw();};
document.getElementById("zout").onclick=()=>{pxPerMs/=2;draw();};
draw();
document.title=`electsim timeline: ${D.nodes.length} rows, ${VIOLATIONS.length} violations`;
document.body.dataset.rendered="rows="+document.querySelectorAll("g.row").length+" violation-markers="+document.querySelectorAll("g.violation-marker").length;
</script></body></html>
)";

// Inside <script>, "</" would end the element early; JSON allows "<\/".
std::string ScriptSafe(std::string json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\";
    } else {
      out.push_back(json[i]);
    }
  }
  return out;
}

class HtmlTimelineExporter final : public TraceExporter {
 public:
  HtmlTimelineExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario, uint64_t seed)
      : output_(std::move(output)),
        scenario_(scenario),
        seed_(seed),
        timeline_(
            scenario.total_nodes(), scenario.nodes, [this](const TimelineTracker::Span& span) { OnSpan(span); },
            [this](const TimelineTracker::Flow& flow) { OnFlow(flow); }) {
    output_->Write(kPageHead);
    // Three arrays fill as the run goes; each starts here and is closed in Finish.
    output_->Write("const SPANS=[],MSGS=[],MARKS=[];\n");
  }

  void OnRecord(const sim::TraceRecord& r) override {
    timeline_.OnRecord(r);
    using sim::TraceKind;
    switch (r.kind) {
      case TraceKind::kCrash:
      case TraceKind::kRestart:
      case TraceKind::kPause:
      case TraceKind::kResume:
      case TraceKind::kClock:
      case TraceKind::kNetwork: {
        std::string what(sim::TraceKindName(r.kind));
        if (!r.detail.empty()) what += fmt::format(" {}", r.detail);
        std::string text;
        AppendJsonString(text, what);
        const int64_t node = r.node == sim::kNoNode ? -1 : static_cast<int64_t>(r.node.value());
        output_->Write(ScriptSafe(fmt::format("MARKS.push([{},{},{}]);\n", node, r.time.ns(), text)));
        return;
      }
      default: return;
    }
  }

  void Finish(const RunResult& result) override {
    timeline_.Finish(result.end);
    std::string data = fmt::format(R"({{"seed":{},"end":{},"undrawn_messages":{},"scenario":)", seed_, result.end.ns(),
                                   undrawn_messages_);
    AppendJsonString(data, scenario_.name);
    data += R"(,"algorithm":)";
    AppendJsonString(data, scenario_.algorithm->name());
    data += R"(,"nodes":[)";
    for (uint32_t node = 0; node < scenario_.total_nodes(); ++node) {
      if (node > 0) data.push_back(',');
      AppendJsonString(data, NodeLabel(scenario_, node));
    }
    data += R"(],"states":[)";
    for (size_t i = 0; i < states_.size(); ++i) {
      if (i > 0) data.push_back(',');
      AppendJsonString(data, states_[i]);
    }
    data += R"(],"types":[)";
    for (size_t i = 0; i < types_.size(); ++i) {
      if (i > 0) data.push_back(',');
      AppendJsonString(data, types_[i]);
    }
    data += "]}";
    std::string violations = "[";
    for (const checkers::Violation& v : result.violations) {
      if (violations.size() > 1) violations.push_back(',');
      fmt::format_to(std::back_inserter(violations), "[{},", v.time.ns());
      AppendJsonString(violations, v.checker);
      violations.push_back(',');
      AppendJsonString(violations, checkers::DescribeViolation(v));
      violations += ",[";
      for (size_t i = 0; i < v.nodes.size(); ++i) {
        fmt::format_to(std::back_inserter(violations), "{}{}", i > 0 ? "," : "", v.nodes[i].value());
      }
      violations += "]]";
    }
    violations += "]";
    output_->Write(ScriptSafe(fmt::format("const D={};\nconst VIOLATIONS={};\n", data, violations)));
    output_->Write(kPageTail);
  }

  absl::Status Commit() override { return output_->Commit(); }

 private:
  // Small tables of names, so that each array entry is a few integers.
  static size_t IndexOf(std::vector<std::string>& names, std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    names.emplace_back(name);
    return names.size() - 1;
  }

  void OnSpan(const TimelineTracker::Span& span) {
    output_->Write(fmt::format("SPANS.push([{},{},{},{},{}]);\n", span.node, IndexOf(states_, span.state), span.term,
                               span.start.ns(), span.end.ns()));
  }

  void OnFlow(const TimelineTracker::Flow& flow) {
    if (drawn_messages_ == kMaxDrawnMessages) {
      ++undrawn_messages_;
      return;
    }
    ++drawn_messages_;
    output_->Write(fmt::format("MSGS.push([{},{},{},{},{}]);\n", flow.from, flow.to, flow.sent.ns(),
                               flow.delivered.ns(), IndexOf(types_, flow.type)));
  }

  std::unique_ptr<TraceOutput> output_;
  const Scenario& scenario_;
  uint64_t seed_;
  TimelineTracker timeline_;
  std::vector<std::string> states_;
  std::vector<std::string> types_;
  uint64_t drawn_messages_ = 0;
  uint64_t undrawn_messages_ = 0;
};

}  // namespace

std::unique_ptr<TraceExporter> MakeHtmlTimelineExporter(std::unique_ptr<TraceOutput> output, const Scenario& scenario,
                                                        uint64_t seed) {
  return std::make_unique<HtmlTimelineExporter>(std::move(output), scenario, seed);
}

absl::Status WriteHtmlTimeline(const Scenario& scenario, uint64_t seed, const std::string& path) {
  auto output = TraceOutput::Open(path, {scenario.source});
  if (!output.ok()) return output.status();
  auto exporter = MakeHtmlTimelineExporter(std::move(*output), scenario, seed);
  RunOptions options;
  options.extra_sinks.push_back(exporter.get());
  auto result = RunScenario(scenario, seed, options);
  if (!result.ok()) return result.status();
  exporter->Finish(*result);
  return exporter->Commit();
}

}  // namespace electsim
