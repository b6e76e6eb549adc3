// The trace exports through the binary: the JSON Lines trace against its
// schema and the Perfetto export against the trace it came from (the HTML
// timeline: html_timeline_test.cc); replays that differ.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/schema.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validator.hpp"

namespace {

namespace fs = std::filesystem;
using electsim_test::Outcome;
using nlohmann::json;

class TraceExportTest : public electsim_test::TempDirTest {
 protected:
  // Runs `scenario` with --trace in `format`; the file's path.
  std::string Export(const std::string& scenario, const std::string& format, const std::string& extra = "") {
    const std::string path = (dir_ / (fs::path(scenario).stem().string() + "." + format)).string();
    const Outcome out =
        electsim_test::RunCombined("run " + electsim_test::ShippedScenario(scenario) + " --repro-dir '' --trace " +
                                   path + " --trace-format " + format + " " + extra);
    EXPECT_EQ(out.exit_status, 0) << out.output;
    return path;
  }

  std::vector<json> ReadJsonl(const std::string& path) {
    std::vector<json> lines;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) lines.push_back(json::parse(line));
    return lines;
  }
};

const json& TraceSchemaDocument() {
  static const json* doc = new json(
      json::parse(electsim_test::ReadWholeFile(fs::path(ELECTSIM_SOURCE_DIR) / "scenarios/schema/trace.schema.json")));
  return *doc;
}

const valijson::Schema& TraceSchema() {
  static const valijson::Schema* schema = [] {
    auto* parsed = new valijson::Schema;
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter adapter(TraceSchemaDocument());
    parser.populateSchema(adapter, *parsed);
    return parsed;
  }();
  return *schema;
}

// A line's verdict under a schema that compares numbers only by type and by
// const, enum, minimum and maximum depends on each number only through its
// type and its order against the numbers the schema names. Lines alike in
// everything else share a verdict, so the check below validates one line of
// each such shape: most lines of a trace differ only in times and indices,
// and validating every one took most of this test's time under the
// sanitizers. A schema that sees more of a number (multipleOf, uniqueItems,
// contains) turns the shortcut off.
class LineShapes {
 public:
  explicit LineShapes(const json& schema) { Collect(schema); }

  // True for the first line of its shape, and for every line when the
  // shortcut is off. Reads the line's text: parsing every line was most of
  // the test's time in the sanitizer build.
  bool FirstOfItsShape(std::string_view line) { return !exact_ || seen_.insert(Shape(line)).second; }
  size_t shapes() const { return seen_.size(); }

 private:
  void Collect(const json& node) {
    if (node.is_array()) {
      for (const json& item : node) Collect(item);
      return;
    }
    if (!node.is_object()) return;
    for (const auto& [key, value] : node.items()) {
      if (key == "multipleOf" || key == "uniqueItems" || key == "contains") exact_ = false;
      const bool compares = key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
                            key == "exclusiveMaximum" || key == "const";
      if (compares && value.is_number()) thresholds_.push_back(value.get<double>());
      if (key == "enum" && value.is_array()) {
        for (const json& member : value) {
          if (member.is_number()) thresholds_.push_back(member.get<double>());
        }
      }
      Collect(value);
    }
  }

  // The line with each number outside a string replaced by its type and its
  // order against the thresholds ("#i<>>"); strings and punctuation as they are.
  std::string Shape(std::string_view line) const {
    std::string shape;
    bool in_string = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (in_string) {
        shape += c;
        if (c == '\\' && i + 1 < line.size()) {
          shape += line[++i];
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
        shape += c;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        size_t end = i + 1;
        while (end < line.size() && std::string_view("0123456789.eE+-").find(line[end]) != std::string_view::npos)
          ++end;
        const std::string number(line.substr(i, end - i));
        const bool integer = number.find_first_of(".eE") == std::string::npos;
        const double x = std::strtod(number.c_str(), nullptr);
        shape += integer ? "#i" : "#f";
        for (double t : thresholds_) shape += x < t ? '<' : (x == t ? '=' : '>');
        i = end - 1;
      } else {
        shape += c;
      }
    }
    return shape;
  }

  bool exact_ = true;
  std::vector<double> thresholds_;
  std::set<std::string> seen_;
};

// The integer value of `key` in the line's top-level object, read from its
// text (json::parse of every line of a 200-node trace was a minute and a
// half of the sanitizer build's tests); nullopt when absent or not an integer.
std::optional<int64_t> TopLevelInteger(std::string_view line, std::string_view key) {
  int depth = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
      const std::string_view text = line.substr(i + 1, std::min(end, line.size()) - i - 1);
      i = end;
      // A key: a string at depth 1 followed by a colon.
      if (depth == 1 && text == key && i + 1 < line.size() && line[i + 1] == ':') {
        int64_t value = 0;
        const char* first = line.data() + i + 2;
        const auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), value);
        if (ec != std::errc() || ptr == first || (ptr < line.data() + line.size() && (*ptr == '.' || *ptr == 'e')))
          return std::nullopt;
        return value;
      }
    }
  }
  return std::nullopt;
}

TEST(TraceLineText, TopLevelIntegerReadsOnlyTheOuterObjectsKey) {
  EXPECT_EQ(TopLevelInteger(R"({"i":3,"kind":"crash","node":212,"local":5})", "node"), 212);
  EXPECT_EQ(TopLevelInteger(R"({"i":3,"payload":{"node":9},"node":-1})", "node"), -1);
  EXPECT_EQ(TopLevelInteger(R"({"i":3,"detail":"\"node\":7","payload":{"node":9}})", "node"), std::nullopt);
  EXPECT_EQ(TopLevelInteger(R"({"node":1.5})", "node"), std::nullopt);
  EXPECT_EQ(TopLevelInteger(R"({"node":"4"})", "node"), std::nullopt);
}

// Scenarios that between them show every kind of record a fault makes.
const std::vector<std::string> kVariedScenarios = {
    "raft-leader-crash.json",
    "raft-lossy-network.json",
    "raft-bug-skip-sync-power-loss.json",
    "lease-clock-drift-unfenced.json",
    "lease-paused-holder-unfenced.json",
    "bully-partition-split-brain.json",
    "ring-successor-crash-mid-election.json",
    "raft-wall-clock-step.json",
};

TEST_F(TraceExportTest, Jsonl_EveryLineOfRealTracesMatchesTheSchema) {
  const valijson::Schema& schema = TraceSchema();
  LineShapes shapes(TraceSchemaDocument());
  std::set<std::string> kinds, roles;
  size_t line_count = 0;
  for (const std::string& scenario : kVariedScenarios) {
    std::ifstream in(Export(scenario, "jsonl"));
    std::string text;
    const size_t lines_before = line_count;
    for (size_t i = 0; std::getline(in, text); ++i, ++line_count) {
      // Every kind and role is a string, and so in the shape: the lines
      // validated show them all.
      if (!shapes.FirstOfItsShape(text)) continue;
      const json line = json::parse(text);
      if (i == 0) {
        EXPECT_EQ(line.value("trace_version", 0), 1) << scenario;
      }
      valijson::Validator validator;
      valijson::adapters::NlohmannJsonAdapter target(line);
      ASSERT_TRUE(validator.validate(schema, target, nullptr)) << scenario << " line " << i + 1 << ": " << text;
      if (i == 0) continue;
      kinds.insert(line["kind"].get<std::string>());
      if (line.value("type", "") == "role" && line["kind"] == "observe") {
        roles.insert(line["fields"]["role"].get<std::string>());
      }
    }
    EXPECT_GT(line_count - lines_before, 10u) << scenario;
  }
  for (const char* kind : {"crash", "restart", "pause", "resume", "clock", "network", "drop", "duplicate", "deliver"}) {
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " record in the scenarios: the schema check saw none";
  }
  EXPECT_EQ(roles, (std::set<std::string>{"candidate", "follower", "leader"}));
  std::cout << line_count << " lines, " << shapes.shapes() << " shapes validated\n";
}

// Past the shipped scenarios' few nodes, and for an algorithm of keys: the
// schema once capped node ids at 65 and named four algorithms.
TEST_F(TraceExportTest, Jsonl_LargeClustersAndShardsMatchTheSchema) {
  const valijson::Schema& schema = TraceSchema();
  LineShapes shapes(TraceSchemaDocument());
  int64_t highest_node = 0;
  for (const auto& [scenario, extra] : std::vector<std::pair<std::string, std::string>>{
           {"raft-healthy.json", "--set nodes=200"}, {"shards-plain-unlock.json", ""}}) {
    std::ifstream in(Export(scenario, "jsonl", extra));
    std::string text;
    for (size_t i = 0; std::getline(in, text); ++i) {
      if (const auto node = TopLevelInteger(text, "node")) highest_node = std::max(highest_node, *node);
      if (!shapes.FirstOfItsShape(text)) continue;
      const json line = json::parse(text);
      valijson::Validator validator;
      valijson::adapters::NlohmannJsonAdapter target(line);
      ASSERT_TRUE(validator.validate(schema, target, nullptr)) << scenario << " line " << i + 1 << ": " << text;
    }
  }
  EXPECT_GE(highest_node, 199);
}

// Lines that differ only in numbers the schema cannot tell apart share a
// shape; a number on the other side of one of its bounds makes another.
TEST(TraceLineShapes, NumbersOnTheSameSideOfEveryBoundShareAShape) {
  LineShapes shapes(TraceSchemaDocument());
  const std::string first = R"({"i":3,"t":500,"kind":"crash","node":2,"local":500})";
  EXPECT_TRUE(shapes.FirstOfItsShape(first));
  EXPECT_FALSE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"crash","node":3,"local":700})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"crash","node":1,"local":700})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"crash","node":-1,"local":700})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700.5,"kind":"crash","node":2,"local":700})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"restart","node":2,"local":700})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"crash","node":2,"local":"700"})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"crash","node":2})"));
  // Digits in a string are text, escaped quotes included.
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"write","node":2,"detail":"log.6.id"})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"write","node":2,"detail":"log.7.id"})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"write","node":2,"detail":"a\"7"})"));
  EXPECT_TRUE(shapes.FirstOfItsShape(R"({"i":9,"t":700,"kind":"write","node":2,"detail":"a\"8"})"));
  // Off for a schema that sees more of a number than its order.
  LineShapes unique(json::parse(R"({"properties":{"nodes":{"type":"array","uniqueItems":true}}})"));
  EXPECT_TRUE(unique.FirstOfItsShape(first));
  EXPECT_TRUE(unique.FirstOfItsShape(first));
}

// A line that breaks the schema is caught: the check above can fail.
TEST_F(TraceExportTest, Jsonl_SchemaRejectsIntegerRoles) {
  const valijson::Schema& schema = TraceSchema();
  const json good = json::parse(
      R"({"i":3,"t":5,"kind":"observe","node":1,"local":5,"type":"role","fields":{"role":"leader","term":2}})");
  json bad = good;
  bad["fields"]["role"] = 2;
  valijson::Validator validator;
  valijson::adapters::NlohmannJsonAdapter good_target(good), bad_target(bad);
  EXPECT_TRUE(validator.validate(schema, good_target, nullptr));
  EXPECT_FALSE(validator.validate(schema, bad_target, nullptr));
  for (
      const char* line :
      {R"({"i":1,"t":5,"kind":"drop","node":1,"peer":2,"msg":4,"local":5,"detail":"bogus"})",
       R"({"i":1,"t":5,"kind":"crash","node":1,"local":5})", R"({"i":1,"t":5,"kind":"teleport","node":1,"local":5})",
       R"({"trace_version":2,"scenario":"s","algorithm":"raft","seed":1,"duration_ns":1,"election_nodes":1,"nodes":[]})"}) {
    const json doc = json::parse(line);
    valijson::adapters::NlohmannJsonAdapter target(doc);
    EXPECT_FALSE(validator.validate(schema, target, nullptr)) << line;
  }
}

using Slices = std::map<int, std::vector<std::tuple<int64_t, int64_t, std::string>>>;  // tid -> (start, end, name)
using Flows = std::multiset<std::tuple<int, int64_t, int, int64_t>>;                   // from, sent, to, delivered

int64_t PerfettoNs(const json& ts) { return static_cast<int64_t>(std::llround(ts.get<double>() * 1000)); }

// What a Perfetto export holds: tracks, flows (as deliveries), slices, violation marks.
struct PerfettoView {
  std::map<int, std::string> track_names;
  Flows flows;
  Slices slices;
  std::map<std::pair<int, int64_t>, std::string> slice_names;  // by track and start
  int violation_marks = 0;
};

PerfettoView ReadPerfetto(const json& perfetto) {
  PerfettoView view;
  std::map<uint64_t, json> flow_starts, flow_ends;
  for (const json& e : perfetto["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") view.track_names[e["tid"]] = e["args"]["name"];
    if (ph == "s") flow_starts[e["id"]] = e;
    if (ph == "f") {
      EXPECT_EQ(e.value("bp", ""), "e");
      flow_ends[e["id"]] = e;
    }
    if (ph == "X") {
      view.slices[e["tid"]].emplace_back(PerfettoNs(e["ts"]), PerfettoNs(e["ts"]) + PerfettoNs(e["dur"]),
                                         e["args"]["state"]);
      view.slice_names[{e["tid"].get<int>(), PerfettoNs(e["ts"])}] = e["name"];
    }
    if (ph == "i" && e.value("cat", "") == "violation") ++view.violation_marks;
  }
  EXPECT_EQ(flow_starts.size(), flow_ends.size());
  for (const auto& [id, s] : flow_starts) {
    if (!flow_ends.contains(id)) continue;
    const json& f = flow_ends.at(id);
    EXPECT_EQ(s["name"], f["name"]);
    view.flows.emplace(s["tid"].get<int>() - 1, PerfettoNs(s["ts"]), f["tid"].get<int>() - 1, PerfettoNs(f["ts"]));
  }
  return view;
}

// Every delivery of a JSON Lines trace, from its send, and every leader claim.
std::pair<Flows, std::multiset<std::pair<int, int64_t>>> DeliveriesAndClaims(const std::vector<json>& trace) {
  std::map<uint64_t, const json*> sends;
  Flows deliveries;
  std::multiset<std::pair<int, int64_t>> leader_claims;
  for (size_t i = 1; i < trace.size(); ++i) {
    const json& r = trace[i];
    if (r["kind"] == "send") sends[r["msg"]] = &r;
    if (r["kind"] == "deliver") {
      const json& send = *sends.at(r["msg"]);
      deliveries.emplace(send["node"].get<int>(), send["t"].get<int64_t>(), r["node"].get<int>(),
                         r["t"].get<int64_t>());
    }
    if (r["kind"] == "observe" && r.value("type", "") == "role" && r["fields"]["role"] == "leader") {
      leader_claims.emplace(r["node"].get<int>(), r["t"].get<int64_t>());
    }
  }
  return {deliveries, leader_claims};
}

// Perfetto: one named track per node; an arrow per delivery, from the send;
// role slices that tile each node's track and start where the trace says
// the node took the role; violations marked.
TEST_F(TraceExportTest, Perfetto_TracksFlowsAndSlicesMatchTheTrace) {
  for (const std::string& scenario :
       {std::string("bully-partition-split-brain.json"), std::string("lease-paused-holder-unfenced.json"),
        std::string("raft-leader-crash.json")}) {
    SCOPED_TRACE(scenario);
    const std::vector<json> trace = ReadJsonl(Export(scenario, "jsonl"));
    const json perfetto = json::parse(electsim_test::ReadWholeFile(Export(scenario, "perfetto")));
    ASSERT_TRUE(perfetto.contains("traceEvents"));
    const size_t nodes = trace[0]["nodes"].size();
    const int64_t end_ns = trace[0]["duration_ns"].get<int64_t>();
    PerfettoView view = ReadPerfetto(perfetto);
    ASSERT_EQ(view.track_names.size(), nodes);
    for (const json& node : trace[0]["nodes"]) EXPECT_EQ(view.track_names[node["id"].get<int>() + 1], node["name"]);

    // Every delivery is one flow, from its send.
    const auto [deliveries, leader_claims] = DeliveriesAndClaims(trace);
    EXPECT_GT(deliveries.size(), 10u);
    EXPECT_EQ(view.flows, deliveries);

    // Slices tile every track from 0 to the end; leader slices start at claims.
    std::multiset<std::pair<int, int64_t>> leader_starts;
    for (auto& [tid, list] : view.slices) {
      std::sort(list.begin(), list.end());
      int64_t at = 0;
      for (const auto& [start, stop, state] : list) {
        EXPECT_EQ(start, at) << "track " << tid;
        EXPECT_GT(stop, start);
        at = stop;
        if (state == "leader") leader_starts.emplace(tid - 1, start);
      }
      EXPECT_EQ(at, end_ns) << "track " << tid;
    }
    EXPECT_EQ(view.slices.size(), nodes);
    EXPECT_FALSE(leader_claims.empty());
    EXPECT_EQ(leader_starts, leader_claims);
    const bool violates = scenario != "raft-leader-crash.json";
    EXPECT_EQ(view.violation_marks > 0, violates);

    // A role slice names the term the node was in all along: the last term
    // or role observation of each instant inside a slice leaves the term its
    // name says (earlier ones of an instant last no time).
    std::map<std::pair<int, int64_t>, const json*> last_of_instant;
    for (const json& record : trace) {
      if (record.value("kind", "") != "observe") continue;
      const std::string type = record.value("type", "");
      if (type != "term" && type != "role") continue;
      last_of_instant[{record["node"].get<int>() + 1, record["t"].get<int64_t>()}] = &record;
    }
    EXPECT_GT(last_of_instant.size(), 10u);
    for (const auto& [at_instant, last] : last_of_instant) {
      const json& record = *last;
      // Plain copies: clang 14 does not capture structured bindings.
      const int tid = at_instant.first;
      const int64_t t = at_instant.second;
      const auto& list = view.slices[tid];
      const auto slice = std::find_if(list.begin(), list.end(),
                                      [&](const auto& s) { return std::get<0>(s) <= t && t < std::get<1>(s); });
      if (slice == list.end()) continue;
      const std::string name = view.slice_names[{tid, std::get<0>(*slice)}];
      const size_t at = name.find("(term ");
      if (at == std::string::npos) continue;
      const int64_t term = record["fields"]["term"].get<int64_t>();
      EXPECT_EQ(name.substr(at), "(term " + std::to_string(term) + ")")
          << "record #" << record["i"] << " at " << t << " in slice " << name;
    }
  }
}

}  // namespace

namespace {

// A replay whose trace differs says where: the repro's checkpoints narrow it
// to a stretch of records, and the trace of a good run names the record.
class ReplayDifferenceTest : public electsim_test::TempDirTest {
 protected:
  void SetUp() override {
    electsim_test::TempDirTest::SetUp();
    const Outcome run = electsim_test::RunCombined(
        "run " + electsim_test::ShippedScenario("lease-paused-holder-unfenced.json") +
        " --repro-on violation --repro-dir " + dir_.string() + " --trace " + (dir_ / "good.jsonl").string());
    ASSERT_EQ(run.exit_status, 0) << run.output;
    repro_ = json::parse(electsim_test::ReadWholeFile(dir_ / "lease-paused-holder-unfenced-seed1.repro.json"));
  }
  std::string WriteRepro(const json& doc, const std::string& name) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << doc.dump(1);
    return path;
  }
  json repro_;
};

TEST_F(ReplayDifferenceTest, Replay_ChangedOptionIsNarrowedByCheckpointsAndNamedWithTheExpectedTrace) {
  ASSERT_TRUE(repro_.contains("trace_checkpoints"));
  json changed = repro_;
  changed["scenario"]["algorithm"]["options"]["renew_interval"] = "300ms";
  const std::string path = WriteRepro(changed, "changed.repro.json");
  const Outcome narrowed = electsim_test::RunCombined("replay " + path);
  EXPECT_EQ(narrowed.exit_status, 1) << narrowed.output;
  EXPECT_NE(narrowed.output.find("the first difference is among records #64 to #127"), std::string::npos)
      << narrowed.output;
  EXPECT_NE(narrowed.output.find("  #64: {\"i\":64,\"t\":5581487,\"kind\":\"timer_cancel\""), std::string::npos)
      << narrowed.output;
  // The same checker's name in another trace is not the same violation.
  EXPECT_NE(narrowed.output.find("replay: the same checker fired (stale_token), in a different trace\n"),
            std::string::npos)
      << narrowed.output;
  EXPECT_EQ(narrowed.output.find("the same violation"), std::string::npos) << narrowed.output;

  const Outcome named = electsim_test::RunCombined("replay " + path + " --expected " + (dir_ / "good.jsonl").string());
  EXPECT_EQ(named.exit_status, 1) << named.output;
  EXPECT_NE(named.output.find("replay: first differing record: #67\n"), std::string::npos) << named.output;
  EXPECT_NE(
      named.output.find("  expected: {\"i\":67,\"t\":5581487,\"kind\":\"timer_set\",\"node\":2,\"local\":338581487"),
      std::string::npos)
      << named.output;
  EXPECT_NE(
      named.output.find("  actual:   {\"i\":67,\"t\":5581487,\"kind\":\"timer_set\",\"node\":2,\"local\":305581487"),
      std::string::npos)
      << named.output;
  EXPECT_NE(named.output.find("  same:     {\"i\":66,"), std::string::npos) << named.output;
  EXPECT_EQ(named.output.find("note:"), std::string::npos) << "the same scenario and seed: " << named.output;
}

// A good run's trace of another seed is compared all the same, with a note
// that the two runs were never meant to agree.
TEST_F(ReplayDifferenceTest, Replay_AnExpectedTraceOfAnotherSeedIsNoted) {
  json other = repro_;
  other["seed"] = 2;
  const Outcome out = electsim_test::RunCombined("replay " + WriteRepro(other, "seed2.repro.json") + " --expected " +
                                                 (dir_ / "good.jsonl").string());
  EXPECT_EQ(out.exit_status, 1) << out.output;
  EXPECT_NE(out.output.find("is a trace of scenario lease-paused-holder-unfenced seed 1, and this repro runs "
                            "lease-paused-holder-unfenced seed 2: it is compared only if the replay differs from "
                            "the repro"),
            std::string::npos)
      << out.output;
}

// --expected is an input: checked before anything runs, even when the
// hash matches and it would not be read.
TEST_F(ReplayDifferenceTest, Replay_AnExpectedTraceThatIsMissingOrNoTraceIsRefusedFirst) {
  const std::string path = WriteRepro(repro_, "same.repro.json");
  std::ofstream(dir_ / "garbage.jsonl") << "{\"garbage\": 1}\n";
  for (const std::string& expected : {(dir_ / "missing.jsonl").string(), (dir_ / "garbage.jsonl").string()}) {
    const Outcome out = electsim_test::RunCombined("replay " + path + " --expected " + expected);
    EXPECT_EQ(out.exit_status, 2) << out.output;
    EXPECT_NE(out.output.find("expected a JSON Lines trace"), std::string::npos) << out.output;
    EXPECT_EQ(out.output.find("trace-hash"), std::string::npos) << "ran anyway: " << out.output;
  }
}

// Where the checkers differ, both lists are named.
TEST_F(ReplayDifferenceTest, Replay_ViolationsThatDifferAreNamedOnBothSides) {
  const Outcome same = electsim_test::RunCombined("replay " + WriteRepro(repro_, "same.repro.json"));
  EXPECT_EQ(same.exit_status, 0) << same.output;
  EXPECT_NE(same.output.find("replay: the same violation reproduced: stale_token\n"), std::string::npos) << same.output;
  json none = repro_;
  none["violations"] = json::array();
  const Outcome out = electsim_test::RunCombined("replay " + WriteRepro(none, "none.repro.json"));
  EXPECT_EQ(out.exit_status, 1) << out.output;
  EXPECT_NE(out.output.find("replay: the violations differ from the repro's: it has none, this run stale_token\n"),
            std::string::npos)
      << out.output;
}

TEST_F(ReplayDifferenceTest, Replay_TamperedHashIsToldApartFromADifferentTrace) {
  json tampered = repro_;
  tampered["trace_hash"] = "0x0000000000000001";
  const Outcome out = electsim_test::RunCombined("replay " + WriteRepro(tampered, "tampered.repro.json"));
  EXPECT_EQ(out.exit_status, 1) << out.output;
  EXPECT_NE(out.output.find("every checkpoint matches and both traces have 2484 records"), std::string::npos)
      << out.output;
  // Nothing says the trace differs: the violation is not called another one's.
  EXPECT_NE(out.output.find("replay: the same checker fired (stale_token)\n"), std::string::npos) << out.output;
  // Checkpoints tampered with: the difference is placed where they stop agreeing.
  json moved = repro_;
  moved["trace_checkpoints"]["hashes"][5] = "0x0000000000000002";
  const Outcome at_five = electsim_test::RunCombined("replay " + WriteRepro(moved, "moved.repro.json"));
  EXPECT_EQ(at_five.exit_status, 0) << at_five.output;  // the hash still matches: checkpoints only explain
}

TEST_F(ReplayDifferenceTest, Replay_ReproWithoutCheckpointsStillLoadsAndSaysWhatWouldHelp) {
  json old = repro_;
  old.erase("trace_checkpoints");
  EXPECT_EQ(electsim_test::RunCombined("replay " + WriteRepro(old, "old.repro.json")).exit_status, 0);
  old["scenario"]["algorithm"]["options"]["renew_interval"] = "300ms";
  const Outcome out = electsim_test::RunCombined("replay " + WriteRepro(old, "old-changed.repro.json"));
  EXPECT_EQ(out.exit_status, 1) << out.output;
  EXPECT_NE(out.output.find("this repro has no trace checkpoints"), std::string::npos) << out.output;
}

}  // namespace

namespace {

// A run past 128 checkpoints of 64 records keeps every other one and doubles
// the spacing, and still places a difference.
TEST_F(ReplayDifferenceTest, Replay_LongRunThinsItsCheckpointsAndStillPlacesADifference) {
  const Outcome run =
      electsim_test::RunCombined("run " + electsim_test::ShippedScenario("raft-paused-leader-unfenced.json") +
                                 " --repro-on violation --repro-dir " + dir_.string());
  ASSERT_EQ(run.exit_status, 0) << run.output;
  json repro = json::parse(electsim_test::ReadWholeFile(dir_ / "raft-paused-leader-unfenced-seed1.repro.json"));
  const uint64_t records = repro["trace_records"];
  ASSERT_GT(records, 64u * 128u);
  EXPECT_EQ(repro["trace_checkpoints"]["every"], 128);
  EXPECT_EQ(repro["trace_checkpoints"]["hashes"].size(), records / 128);
  EXPECT_EQ(electsim_test::RunCombined("replay " + WriteRepro(repro, "long.repro.json")).exit_status, 0);
  // A pause 1ms longer: the traces agree until the leader resumes, at 5s.
  repro["scenario"]["faults"][0]["for"] = "2001ms";
  const Outcome changed = electsim_test::RunCombined("replay " + WriteRepro(repro, "long-changed.repro.json"));
  EXPECT_EQ(changed.exit_status, 1) << changed.output;
  EXPECT_NE(changed.output.find("the first difference is among records #"), std::string::npos) << changed.output;
}

}  // namespace

namespace {

TEST_F(TraceExportTest, UnknownTraceFormatExitsTwoAndWritesNothing) {
  const std::string trace = (dir_ / "t.svg").string();
  const Outcome out = electsim_test::RunCombined("run " + electsim_test::ShippedScenario("raft-healthy.json") +
                                                 " --trace " + trace + " --trace-format svg");
  EXPECT_EQ(out.exit_status, 2) << out.output;
  EXPECT_NE(out.output.find("--trace-format: expected jsonl, perfetto or html; got \"svg\""), std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("trace-hash"), std::string::npos) << "ran anyway";
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
