#include "tools/electsim/export/html_timeline.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "tools/electsim/export/timeline_state.h"
#include "tools/electsim/export/trace_json.h"

namespace electsim {
namespace {

using sim::AppendJsonString;

// The page stays under 1 MB for any run: messages take at most the first
// budget (later ones are counted, not drawn), everything else the second
// (past it the page is cut at that moment, and says so), and the spans
// still open at the cut a reserve of their own. The page's own text and
// its tables (names, violations) are a few tens of kilobytes.
constexpr size_t kMessageBytes = 500000;
constexpr size_t kOtherBytes = 300000;
constexpr size_t kOpenSpanBytes = 100000;
constexpr size_t kMaxNameBytes = 200;

// Times go to the page in microseconds: what its labels show, in fewer digits.
int64_t Micros(sim::TimeNs t) { return t.ns() / 1000; }

// The page: data is appended between kPageHead and kPageTail, as one array
// E of records [kind, ...]: 0 a span, 1 a message, 2 a fault at a node,
// 3 a partition, 4 a fault step (or the end of one) for the whole cluster.
constexpr std::string_view kPageHead = R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>electsim timeline (rendering)</title>
<style>
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
#chart{overflow-x:auto;border:1px solid #ccc}
.legend span{display:inline-block;padding:1px 6px;margin-right:6px;border-radius:3px}
#violations li{color:#b00;font-weight:bold}
svg text{font-family:system-ui,sans-serif}
</style></head><body>
<h2 id="heading"></h2>
<div class="legend"><span style="background:#dde">follower</span><span style="background:#fd8">candidate</span><span style="background:#6c6">leader</span><span style="background:#aaa">paused</span><span style="background:#333;color:#fff">crashed</span><span style="background:#b9d7ff">partition side 1</span><span style="background:#ffd3a8">side 2</span><span style="background:#c5ecb8">side 3</span> | lines: messages, &#9670; faults at a node, &#9660; fault steps, red: violations | zoom: <button id="zin">+</button><button id="zout">&minus;</button></div>
<ul id="violations"></ul>
<div id="chart"></div>
<p id="notes"></p>
<script>
const E=[
)";

constexpr std::string_view kPageTail = R"(
const COLORS={follower:"#dde",candidate:"#fd8",leader:"#6c6",paused:"#aaa",crashed:"#333",up:"#eee"};
const SIDES=["#b9d7ff","#ffd3a8","#c5ecb8","#f4d4f4","#fff3b0","#d0f0f0"];
const SPANS=[],MSGS=[],MARKS=[],PARTS=[],STEPS=[];
for(const e of E)[SPANS,MSGS,MARKS,PARTS,STEPS][e[0]].push(e);
STEPS.sort((a,b)=>a[1]-b[1]);
const ROW=26,LEFT=90,RIGHT=16,LANE=15;
let zoom=1;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);}
function sec(t,d){return (t/1e6).toFixed(d)+"s";}
// Text is measured in a hidden SVG before the chart is laid out.
const ruler=document.createElement("div");ruler.style.cssText="position:absolute;visibility:hidden";
ruler.innerHTML="<svg><text></text></svg>";document.body.appendChild(ruler);const probe=ruler.querySelector("text");
function textWidth(s,size){probe.setAttribute("font-size",size);probe.textContent=s;return probe.getComputedTextLength();}
// The chart fits the window at zoom 1; the zoom buttons widen it (the frame scrolls).
function width(){return Math.max(360,document.getElementById("chart").clientWidth-2)*zoom;}
function scale(){return (width()-LEFT-RIGHT)/Math.max(1,D.end);}
function x(t){return LEFT+t*scale();}
// A round tick interval (1, 2 or 5 times a power of ten) at least 70px apart.
function tickStep(){const want=70/scale();let p=1;while(p*10<=want)p*=10;for(const m of [1,2,5,10])if(p*m>=want)return p*m;return p*10;}
// Labels stacked in lanes so that none overlaps another; each inside the chart.
function lanes(items,size){const ends=[];const W=width();for(const it of items){it.w=textWidth(it.text,size)+4;
  while(it.w>W-LEFT-RIGHT&&it.text.length>2){it.text=it.text.slice(0,Math.floor(it.text.length*0.8))+"…";it.w=textWidth(it.text,size)+4;}
  it.lx=Math.min(Math.max(LEFT,it.x-2),W-RIGHT-it.w);let k=0;while(k<ends.length&&ends[k]>it.lx-4)k++;ends[k]=it.lx+it.w;it.lane=k;}return ends.length;}
function draw(){
  const W=width(),step=tickStep(),dec=Math.max(0,Math.ceil(-Math.log10(step/1e6)-1e-9));
  const bands=STEPS.map(s=>({x:x(s[1]),t:s[1],text:s[2],undo:s[3]})).concat(VIOLATIONS.map(v=>({x:x(v[0]),t:v[0],text:"✖ "+v[1],violation:1})));
  bands.sort((a,b)=>a.t-b.t);const nl=lanes(bands,11),TOP=20+nl*LANE+6,H=TOP+D.nodes.length*ROW+8;
  const y=n=>TOP+n*ROW;
  let s=`<svg id="timeline" width="${W}" height="${H}">`;
  for(let t=0;t<=D.end;t+=step)s+=`<g class="tick" data-t="${t}"><line x1="${x(t)}" x2="${x(t)}" y1="14" y2="${H}" stroke="#e4e4e4"/><text x="${x(t)}" y="11" font-size="10" text-anchor="middle">${sec(t,dec)}</text></g>`;
  D.nodes.forEach((name,n)=>{s+=`<g class="row" id="row-${n}"><text x="4" y="${y(n)+17}" font-size="12">${esc(name)}</text></g>`;});
  for(const [,a,b,groups] of PARTS){const g=JSON.parse(groups);const side=[];g.forEach((m,k)=>m.forEach(n=>side[n]=k));
    for(let n=0;n<D.election_nodes;n++)if(side[n]===undefined)side[n]=g.length;
    side.forEach((k,n)=>{if(k===undefined||n>=D.nodes.length)return;s+=`<rect class="partition-side" data-node="${n}" data-side="${k}" data-start="${a}" data-end="${b}" x="${x(a)}" y="${y(n)}" width="${Math.max(1,x(b)-x(a))}" height="${ROW}" fill="${SIDES[k%SIDES.length]}"><title>partition side ${k+1} ${sec(a,6)}–${sec(b,6)}</title></rect>`;});}
  for(const [,n,st,term,a,b] of SPANS){const c=COLORS[D.states[st]]||"#eee";
    s+=`<rect x="${x(a)}" y="${y(n)+5}" width="${Math.max(0.5,x(b)-x(a))}" height="${ROW-10}" fill="${c}"><title>${esc(D.nodes[n])}: ${D.states[st]}${term>=0?" term "+term:""} ${sec(a,6)}–${sec(b,6)}</title></rect>`;}
  for(const [,f,t,a,b,ty] of MSGS)s+=`<line x1="${x(a)}" y1="${y(f)+ROW/2}" x2="${x(b)}" y2="${y(t)+ROW/2}" stroke="#57a" stroke-opacity="0.35"><title>${esc(D.types[ty])}</title></line>`;
  if(D.cut_at>=0)s+=`<rect class="cut" x="${x(D.cut_at)}" y="${TOP}" width="${Math.max(0,x(D.end)-x(D.cut_at))}" height="${H-TOP}" fill="#f4f4f4" fill-opacity="0.85"/>`;
  for(const b of bands){const c=b.violation?"#d00":b.undo?"#888":"#c60";
    s+=`<line x1="${b.x}" x2="${b.x}" y1="${20+b.lane*LANE}" y2="${H}" stroke="${c}" stroke-dasharray="${b.violation?"":"3 3"}" stroke-width="${b.violation?2:1}"/>`;
    s+=`<text class="${b.violation?"violation-label":"fault-label"}" x="${b.lx+2}" y="${20+b.lane*LANE+11}" font-size="11" fill="${c}" data-t="${b.t}">${esc(b.text)}</text>`;}
  const ends={};
  for(const [,n,t,what] of MARKS){const X=x(t),Y=n<0?TOP-2:y(n)+ROW/2;
    s+=`<path d="M${X} ${Y-5}L${X+5} ${Y}L${X} ${Y+5}L${X-5} ${Y}Z" fill="#c60"><title>${sec(t,6)} ${esc(what)}</title></path>`;
    // Labelled where the row has room; the step's own label is in the band above.
    const w=textWidth(what,9)+2,lx=Math.min(X+6,W-RIGHT-w);if(n<0||(ends[n]||-1e9)>lx-3)continue;ends[n]=lx+w;
    s+=`<text class="mark-label" x="${lx}" y="${y(n)+ROW-3}" font-size="9" fill="#a40" stroke="#fff" stroke-width="3" paint-order="stroke">${esc(what)}</text>`;}
  VIOLATIONS.forEach(([t,checker,msg,nodes],k)=>{
    s+=`<g class="violation-marker" id="violation-${k}"><line x1="${x(t)}" x2="${x(t)}" y1="${TOP}" y2="${H}" stroke="#d00" stroke-width="2"><title>${esc(msg)}</title></line>`;
    for(const n of nodes)s+=`<circle cx="${x(t)}" cy="${y(n)+ROW/2}" r="6" fill="none" stroke="#d00" stroke-width="2"/>`;
    s+=`</g>`;});
  document.getElementById("chart").innerHTML=s+"</svg>";
  // A tick label that would run past either end is anchored to stay inside.
  for(const t of document.querySelectorAll("g.tick text")){const b=t.getBBox();
    if(b.x+b.width>W-1)t.setAttribute("text-anchor","end");else if(b.x<LEFT-30)t.setAttribute("text-anchor","start");}
  report();
}
// Where the key elements landed, in window coordinates, for tests.
function report(){const box=e=>{const r=e.getBoundingClientRect();return [r.left,r.right,r.top,r.bottom];};
  const q=sel=>[...document.querySelectorAll(sel)];
  document.body.dataset.layout=JSON.stringify({viewport:window.innerWidth,svg:box(document.getElementById("timeline")),
    ticks:q("g.tick").map(g=>({t:+g.dataset.t,line:box(g.querySelector("line"))[0],label:box(g.querySelector("text"))})),
    faults:q("text.fault-label").map(e=>({t:+e.dataset.t,text:e.textContent,box:box(e)})),
    marks:q("text.mark-label").map(e=>({text:e.textContent,box:box(e)})),
    sides:q("rect.partition-side").map(e=>({node:+e.dataset.node,side:+e.dataset.side,start:+e.dataset.start,end:+e.dataset.end,box:box(e)}))});}
document.getElementById("heading").textContent=`${D.scenario} (${D.algorithm}), seed ${D.seed}, ${sec(D.end,3)} simulated`;
document.getElementById("violations").innerHTML=VIOLATIONS.map(v=>`<li>${esc(v[2])}</li>`).join("");
const notes=[];
if(D.undrawn_messages>0)notes.push(`${D.undrawn_messages} later messages are not drawn (the first ${MSGS.length} are), to keep this page under 1 MB.`);
if(D.cut_at>=0)notes.push(`Roles and faults after ${sec(D.cut_at,6)} are not drawn (${D.undrawn_records} records), to keep this page under 1 MB; the violations are.`);
document.getElementById("notes").textContent=notes.join(" ");
document.getElementById("zin").onclick=()=>{zoom*=2;draw();};
document.getElementById("zout").onclick=()=>{zoom=Math.max(1,zoom/2);draw();};
window.onresize=draw;
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

std::string JsonText(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
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
  }

  void OnRecord(const sim::TraceRecord& r) override {
    now_ = r.time;
    timeline_.OnRecord(r);
    using sim::TraceKind;
    const bool cluster_wide = r.node == sim::kNoNode;
    switch (r.kind) {
      case TraceKind::kNote:
        if (r.detail.rfind("fault ", 0) == 0) Step(r.time, r.detail.substr(6), false);
        last_note_ = r.time;
        return;
      case TraceKind::kNetwork:
        if (cluster_wide) {
          const bool ends_partition = Partition(r);
          // A step's own change is labelled by its note; an undo has none.
          if (last_note_ != r.time)
            Step(r.time, ends_partition ? "partition over: " + std::string(r.detail) : std::string(r.detail), true);
          return;
        }
        Mark(r, NodeNetworkText(r));
        return;
      case TraceKind::kCrash: Mark(r, r.detail.empty() ? "crash" : fmt::format("crash ({})", r.detail)); return;
      case TraceKind::kRestart:
      case TraceKind::kPause:
      case TraceKind::kResume: Mark(r, sim::TraceKindName(r.kind)); return;
      case TraceKind::kClock:
        Mark(r, r.detail == "drift" ? fmt::format("clock drift {} ppm", r.value)
                                    : fmt::format("wall clock step {}ms", r.value / 1000000));
        return;
      default: return;
    }
  }

  void Finish(const RunResult& result) override {
    now_ = result.end;
    timeline_.Finish(result.end);
    for (const OpenPartition& p : partitions_) WritePartition(p, result.end);
    partitions_.clear();
    output_->Write(
        ScriptSafe(fmt::format("];\nconst D={};\nconst VIOLATIONS={};\n", Data(result), Violations(result))));
    output_->Write(kPageTail);
  }

  absl::Status Commit() override { return output_->Commit(); }

 private:
  struct OpenPartition {
    sim::TimeNs start;
    std::string groups;  // "[[0,1],[2,3,4]]"
    int64_t links = 0;
  };

  std::string Data(const RunResult& result) const {
    std::string name = scenario_.name.substr(0, kMaxNameBytes);
    std::string data = fmt::format(
        R"({{"seed":{},"end":{},"undrawn_messages":{},"undrawn_records":{},"cut_at":{},"election_nodes":{},"scenario":)",
        seed_, Micros(result.end), undrawn_messages_, undrawn_records_, cut_at_ ? Micros(*cut_at_) : -1,
        scenario_.nodes);
    AppendJsonString(data, name);
    data += R"(,"algorithm":)";
    AppendJsonString(data, scenario_.algorithm->name());
    // Nodes by name; election nodes are "node N", so only their count is sent.
    data += fmt::format(R"(,"nodes":Array.from({{length:{}}},(_,n)=>"node "+n).concat([)", scenario_.nodes);
    for (uint32_t node = scenario_.nodes; node < scenario_.total_nodes(); ++node) {
      if (node > scenario_.nodes) data.push_back(',');
      AppendJsonString(data, NodeLabel(scenario_, node));
    }
    data += "]),\"states\":" + Table(states_) + ",\"types\":" + Table(types_) + "}";
    return data;
  }

  static std::string Table(const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(out, names[i]);
    }
    return out + "]";
  }

  static std::string Violations(const RunResult& result) {
    std::string out = "[";
    for (const checkers::Violation& v : result.violations) {
      if (out.size() > 1) out.push_back(',');
      fmt::format_to(std::back_inserter(out), "[{},{},{},[", Micros(v.time), JsonText(v.checker),
                     JsonText(checkers::DescribeViolation(v)));
      for (size_t i = 0; i < v.nodes.size(); ++i) {
        fmt::format_to(std::back_inserter(out), "{}{}", i > 0 ? "," : "", v.nodes[i].value());
      }
      out += "]]";
    }
    return out + "]";
  }

  std::string NodeNetworkText(const sim::TraceRecord& r) const {
    const std::string to = r.peer == sim::kNoNode ? "" : " to " + NodeLabel(scenario_, r.peer.value());
    if (r.detail.rfind("link", 0) == 0) return "link" + to + " changed";
    return std::string(r.detail) + to;
  }

  // Writes a record other than a message while the budget lasts; past it,
  // the page is cut at this moment.
  bool WriteOther(const std::string& record) {
    if (cut_at_ || other_bytes_ + record.size() > kOtherBytes) {
      if (!cut_at_) cut_at_ = now_;
      ++undrawn_records_;
      return false;
    }
    other_bytes_ += record.size();
    output_->Write(record);
    return true;
  }

  void Step(sim::TimeNs at, std::string_view text, bool undo) {
    WriteOther(ScriptSafe(fmt::format("[4,{},{},{}],\n", Micros(at), JsonText(text), undo ? 1 : 0)));
  }

  void Mark(const sim::TraceRecord& r, std::string_view what) {
    WriteOther(ScriptSafe(fmt::format("[2,{},{},{}],\n", r.node.value(), Micros(r.time), JsonText(what))));
  }

  // A partition is shaded by side from its start until its links come back;
  // true when `r` ended one.
  bool Partition(const sim::TraceRecord& r) {
    if (r.detail.rfind("partition", 0) == 0) {
      std::string groups = "[";
      for (const char c : r.detail.substr(9)) {
        if (c == ' ' && groups.size() > 1) groups.push_back(',');
        if (c == '[' || c == ']' || c == ',' || (c >= '0' && c <= '9')) groups.push_back(c);
      }
      partitions_.push_back({r.time, groups + "]", r.value});
      return false;
    }
    if (partitions_.empty()) return false;
    if (r.detail == "restore links") {
      // The restore of a one-way cut (one link) ends no partition.
      auto it = partitions_.end();
      for (auto p = partitions_.begin(); p != partitions_.end(); ++p) {
        if (p->links == r.value) it = p;
      }
      if (it == partitions_.end()) return false;
      WritePartition(*it, r.time);
      partitions_.erase(it);
      return true;
    }
    if (r.detail != "heal") return false;
    for (const OpenPartition& p : partitions_) WritePartition(p, r.time);
    partitions_.clear();
    return true;
  }

  void WritePartition(const OpenPartition& p, sim::TimeNs end) {
    WriteOther(fmt::format("[3,{},{},{}],\n", Micros(p.start), Micros(end), JsonText(p.groups)));
  }

  // Small tables of names, so that each record is a few integers.
  static size_t IndexOf(std::vector<std::string>& names, std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    names.emplace_back(name);
    return names.size() - 1;
  }

  void OnSpan(const TimelineTracker::Span& span) {
    const size_t state = IndexOf(states_, span.state);
    const auto record = [&](sim::TimeNs end) {
      return fmt::format("[0,{},{},{},{},{}],\n", span.node, state, span.term, Micros(span.start), Micros(end));
    };
    if (WriteOther(record(span.end))) return;
    // Open when the page was cut: drawn up to the cut, from a reserve of its own.
    const std::string clipped = record(std::min(span.end, *cut_at_));
    if (span.start < *cut_at_ && open_span_bytes_ + clipped.size() <= kOpenSpanBytes) {
      open_span_bytes_ += clipped.size();
      output_->Write(clipped);
    }
  }

  void OnFlow(const TimelineTracker::Flow& flow) {
    const std::string record = fmt::format("[1,{},{},{},{},{}],\n", flow.from, flow.to, Micros(flow.sent),
                                           Micros(flow.delivered), IndexOf(types_, flow.type));
    if (message_bytes_ + record.size() > kMessageBytes) {
      message_bytes_ = kMessageBytes;  // later, shorter records stay out too: the first ones are drawn
      ++undrawn_messages_;
      return;
    }
    message_bytes_ += record.size();
    output_->Write(record);
  }

  std::unique_ptr<TraceOutput> output_;
  const Scenario& scenario_;
  uint64_t seed_;
  TimelineTracker timeline_;
  std::vector<std::string> states_;
  std::vector<std::string> types_;
  std::vector<OpenPartition> partitions_;
  sim::TimeNs now_;  // the time of the record being read
  std::optional<sim::TimeNs> last_note_;
  std::optional<sim::TimeNs> cut_at_;
  size_t message_bytes_ = 0;
  size_t other_bytes_ = 0;
  size_t open_span_bytes_ = 0;
  uint64_t undrawn_messages_ = 0;
  uint64_t undrawn_records_ = 0;
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
