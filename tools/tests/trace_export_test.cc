// The trace exports through the binary: the JSON Lines trace against its
// schema, the Perfetto export against the trace it came from, and the HTML
// timeline rendered by headless Chromium.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
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

const valijson::Schema& TraceSchema() {
  static const valijson::Schema* schema = [] {
    const json doc =
        json::parse(electsim_test::ReadWholeFile(fs::path(ELECTSIM_SOURCE_DIR) / "scenarios/schema/trace.schema.json"));
    auto* parsed = new valijson::Schema;
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, *parsed);
    return parsed;
  }();
  return *schema;
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
  std::set<std::string> kinds, roles;
  for (const std::string& scenario : kVariedScenarios) {
    const std::vector<json> lines = ReadJsonl(Export(scenario, "jsonl"));
    ASSERT_GT(lines.size(), 10u) << scenario;
    EXPECT_EQ(lines[0].value("trace_version", 0), 1) << scenario;
    for (size_t i = 0; i < lines.size(); ++i) {
      valijson::Validator validator;
      valijson::adapters::NlohmannJsonAdapter target(lines[i]);
      ASSERT_TRUE(validator.validate(schema, target, nullptr)) << scenario << " line " << i + 1 << ": " << lines[i];
      if (i == 0) continue;
      kinds.insert(lines[i]["kind"].get<std::string>());
      if (lines[i].value("type", "") == "role" && lines[i]["kind"] == "observe") {
        roles.insert(lines[i]["fields"]["role"].get<std::string>());
      }
    }
  }
  for (const char* kind : {"crash", "restart", "pause", "resume", "clock", "network", "drop", "duplicate", "deliver"}) {
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " record in the scenarios: the schema check saw none";
  }
  EXPECT_EQ(roles, (std::set<std::string>{"candidate", "follower", "leader"}));
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

    std::map<int, std::string> track_names;
    std::map<uint64_t, json> flow_starts, flow_ends;
    std::map<int, std::vector<std::tuple<int64_t, int64_t, std::string>>> slices;  // tid -> (start, end, name)
    int violation_marks = 0;
    auto ns = [](const json& ts) { return static_cast<int64_t>(std::llround(ts.get<double>() * 1000)); };
    for (const json& e : perfetto["traceEvents"]) {
      const std::string ph = e["ph"];
      if (ph == "M" && e["name"] == "thread_name") track_names[e["tid"]] = e["args"]["name"];
      if (ph == "s") flow_starts[e["id"]] = e;
      if (ph == "f") {
        EXPECT_EQ(e.value("bp", ""), "e");
        flow_ends[e["id"]] = e;
      }
      if (ph == "X") slices[e["tid"]].emplace_back(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["args"]["state"]);
      if (ph == "i" && e.value("cat", "") == "violation") ++violation_marks;
    }
    ASSERT_EQ(track_names.size(), nodes);
    for (const json& node : trace[0]["nodes"]) EXPECT_EQ(track_names[node["id"].get<int>() + 1], node["name"]);

    // Every delivery is one flow, from its send.
    std::map<uint64_t, const json*> sends;
    std::multiset<std::tuple<int, int64_t, int, int64_t>> deliveries, flows;  // from, sent, to, delivered
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
    ASSERT_EQ(flow_starts.size(), flow_ends.size());
    for (const auto& [id, s] : flow_starts) {
      const json& f = flow_ends.at(id);
      EXPECT_EQ(s["name"], f["name"]);
      flows.emplace(s["tid"].get<int>() - 1, ns(s["ts"]), f["tid"].get<int>() - 1, ns(f["ts"]));
    }
    EXPECT_GT(deliveries.size(), 10u);
    EXPECT_EQ(flows, deliveries);

    // Slices tile every track from 0 to the end; leader slices start at claims.
    std::multiset<std::pair<int, int64_t>> leader_starts;
    for (auto& [tid, list] : slices) {
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
    EXPECT_EQ(slices.size(), nodes);
    EXPECT_FALSE(leader_claims.empty());
    EXPECT_EQ(leader_starts, leader_claims);
    const bool violates = scenario != "raft-leader-crash.json";
    EXPECT_EQ(violation_marks > 0, violates);
  }
}

}  // namespace

namespace {

// The first `count` lines of `text`.
std::string FirstLines(const std::string& text, int count) {
  size_t at = 0;
  for (int i = 0; i < count && at != std::string::npos; ++i) at = text.find('\n', at + 1);
  return text.substr(0, at);
}

std::string Repro(const std::string& name) { return std::string(ELECTSIM_SOURCE_DIR) + "/results/repros/" + name; }

TEST(Explain, LeasePauseReproNamesStaleWritePausedNodeExpiryAndNewHolderFirst) {
  const Outcome out = electsim_test::RunCombined("explain " + Repro("lease-paused-holder-unfenced-seed1.repro.json"));
  ASSERT_EQ(out.exit_status, 0) << out.output;
  const std::string head = FirstLines(out.output, 10);
  for (const char* fact : {"violation: stale_token at 5.009913s",
                           "stale write: node 2 wrote under token 1; the resource accepted it at 5.009913s",
                           "new holder: node 1 became leader of term 3 with token 3 at 3.013344s",
                           "lease expiry: the store expired node 2's lease at 3.006023s",
                           "paused: node 2 was paused from 2.005581s to 5.005581s (3s), in the middle of a write "
                           "under token 1"}) {
    EXPECT_NE(head.find(fact), std::string::npos) << fact << "\n" << out.output;
  }
  // The timeline walks back to the claims, faults marked, and ends at the violation.
  EXPECT_NE(out.output.find("node 2: !! PAUSE"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("node 1: <- store: store.event{key=0 kind=expire"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find(". L . . .  node 1: role{role=leader term=3 token=3}"), std::string::npos) << out.output;
}

TEST(Explain, BullyPartitionReproNamesBothLeadersTheirEpochAndThePartitionFirst) {
  const Outcome out = electsim_test::RunCombined("explain " + Repro("bully-partition-split-brain-seed1.repro.json"));
  ASSERT_EQ(out.exit_status, 0) << out.output;
  const std::string head = FirstLines(out.output, 10);
  for (const char* fact :
       {"violation: election_safety at 0.100000s", "both leaders: node 1 and node 4, epoch 1",
        "fault step at 0.000000s: /faults/0: partition for 4s", "network at 0.000000s: partition [0,1] [2,3,4]"}) {
    EXPECT_NE(head.find(fact), std::string::npos) << fact << "\n" << out.output;
  }
}

TEST(Explain, ScenarioAndSeedWorkLikeARepro) {
  const Outcome repro = electsim_test::RunCombined("explain " + Repro("bully-partition-split-brain-seed1.repro.json"));
  const Outcome scenario = electsim_test::RunCombined(
      "explain " + electsim_test::ShippedScenario("bully-partition-split-brain.json") + " --seed 1");
  ASSERT_EQ(scenario.exit_status, 0) << scenario.output;
  EXPECT_EQ(scenario.output, repro.output);
  const Outcome healthy = electsim_test::RunCombined("explain " + electsim_test::ShippedScenario("raft-healthy.json"));
  EXPECT_EQ(healthy.exit_status, 0) << healthy.output;
  EXPECT_NE(healthy.output.find("no violation in this run"), std::string::npos) << healthy.output;
  EXPECT_EQ(electsim_test::RunCombined("explain /nonexistent.json").exit_status, 2);
}

// A long history is cut to its latest events, faults kept, with a note.
TEST(Explain, LongHistoryIsCutWithANote) {
  const Outcome out =
      electsim_test::RunCombined("explain " + Repro("lease-paused-holder-unfenced-seed1.repro.json") + " --lines 8");
  ASSERT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("... 60 earlier events of the history skipped (0.000000s to 3.010433s)"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("node 2: !! PAUSE"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("node 1: role{role=leader term=3 token=3}"), std::string::npos) << out.output;
}

}  // namespace

namespace {

// Headless Chromium (Debian's `chromium`, installed by tools/setup) opens the
// HTML timeline from disk with the network off: the page draws a row per
// node and a marker per violation and says so in its DOM, and a screenshot
// is taken.
class HtmlTimelineTest : public electsim_test::TempDirTest {};

TEST_F(HtmlTimelineTest, Html_RendersNodeRowsAndViolationMarkersInHeadlessChromium) {
  ASSERT_EQ(std::system("command -v chromium >/dev/null"), 0) << "chromium is not installed: run tools/setup";
  const std::string page = (dir_ / "timeline.html").string();
  const Outcome run =
      electsim_test::RunCombined("run " + electsim_test::ShippedScenario("bully-partition-split-brain.json") +
                                 " --repro-dir '' --trace-format html --trace " + page);
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const std::string html = electsim_test::ReadWholeFile(page);
  EXPECT_EQ(html.find("http://"), std::string::npos) << "the page must not reach the network";
  EXPECT_EQ(html.find("https://"), std::string::npos) << "the page must not reach the network";
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --disable-extensions --no-first-run --user-data-dir=" +
      (dir_ / "profile").string() + " --proxy-server=127.0.0.1:9 ";
  const std::string dom_path = (dir_ / "dom.html").string();
  ASSERT_EQ(std::system((chromium + "--dump-dom file://" + page + " > " + dom_path + " 2>/dev/null").c_str()), 0);
  const std::string dom = electsim_test::ReadWholeFile(dom_path);
  EXPECT_NE(dom.find("<title>electsim timeline: 6 rows, 3 violations</title>"), std::string::npos)
      << dom.substr(0, 400);
  EXPECT_NE(dom.find("data-rendered=\"rows=6 violation-markers=3\""), std::string::npos) << dom.substr(0, 400);
  for (int row = 0; row < 6; ++row) {
    EXPECT_NE(dom.find("id=\"row-" + std::to_string(row) + "\""), std::string::npos) << row;
  }
  EXPECT_NE(dom.find("class=\"violation-marker\""), std::string::npos);
  const std::string png = (dir_ / "timeline.png").string();
  ASSERT_EQ(std::system((chromium + "--hide-scrollbars --window-size=1400,420 --screenshot=" + png + " file://" + page +
                         " >/dev/null 2>&1")
                            .c_str()),
            0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 10000u);  // a drawn page, not a blank one
}

}  // namespace

namespace {

// A replay whose trace differs says where: the repro's checkpoints narrow it
// to a stretch of records, and the trace of a good run names the record.
class ReplayDifferenceTest : public electsim_test::TempDirTest {
 protected:
  void SetUp() override {
    electsim_test::TempDirTest::SetUp();
    const Outcome run =
        electsim_test::RunCombined("run " + electsim_test::ShippedScenario("lease-paused-holder-unfenced.json") +
                                   " --repro-dir " + dir_.string() + " --trace " + (dir_ / "good.jsonl").string());
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
}

TEST_F(ReplayDifferenceTest, Replay_TamperedHashIsToldApartFromADifferentTrace) {
  json tampered = repro_;
  tampered["trace_hash"] = "0x0000000000000001";
  const Outcome out = electsim_test::RunCombined("replay " + WriteRepro(tampered, "tampered.repro.json"));
  EXPECT_EQ(out.exit_status, 1) << out.output;
  EXPECT_NE(out.output.find("every checkpoint matches and both traces have 2484 records"), std::string::npos)
      << out.output;
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
  const Outcome run = electsim_test::RunCombined(
      "run " + electsim_test::ShippedScenario("raft-paused-leader-unfenced.json") + " --repro-dir " + dir_.string());
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
