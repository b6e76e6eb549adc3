// External nodes over the step protocol (docs/step-protocol.md), through the
// electsim binary: a well-behaved node runs, restarts on its stable storage
// and replays to the same trace hash; every way of breaking the protocol
// ends the run with a message naming the node and what went wrong; a bad
// manifest names its file and JSON path; a node that draws from the OS is
// caught by running it twice.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/tests/electsim_command.h"

namespace {

using electsim_test::RunCombined;

const std::string kSource = ELECTSIM_SOURCE_DIR;
const std::string kFixtureNode = kSource + "/tools/tests/step_protocol/fixture_node.py";
const std::string kScenario = kSource + "/tools/tests/step_protocol/fixture.json";

class StepProtocol : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("electsim-step-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("ELECTSIM_ALGORITHMS");
    std::filesystem::remove_all(dir_);
  }

  // Writes a manifest of the fixture node in `mode` and registers it.
  std::string UseFixture(const std::string& mode, int budget_ms = 10000) {
    return UseManifest(R"({"protocol":1,"name":"fixture","command":[")" + kFixtureNode + R"(",")" + mode +
                       R"("],"step_budget_ms":)" + std::to_string(budget_ms) + R"(,
      "messages":[{"type":"fx.ping","fields":["term"]}],
      "message_roles":{"leader_only":[{"type":"fx.ping","term":"term"}]},
      "guarantees":[{"keeps":{"election_safety":"all"}}]})");
  }
  std::string UseManifest(const std::string& text) {
    const std::string path = (dir_ / "manifest.json").string();
    std::ofstream(path) << text;
    setenv("ELECTSIM_ALGORITHMS", path.c_str(), 1);
    return path;
  }

  static std::string TraceHash(const std::string& output) {
    std::smatch match;
    return std::regex_search(output, match, std::regex("trace-hash: (0x[0-9a-f]+)")) ? match[1].str() : "";
  }

  std::filesystem::path dir_;
};

TEST_F(StepProtocol, AnExternalNodeRunsAndItsStableStorageOutlivesACrash) {
  UseFixture("ok");
  const auto outcome = RunCombined({"run", kScenario, "--repro-dir", ""});
  ASSERT_EQ(outcome.exit_status, 0) << outcome.output;
  // Node 0 leads the term it reads back from storage: 1 at first, 2 after
  // the crash at 300ms restarts it in a new process.
  EXPECT_NE(outcome.output.find("term 1: node 0"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("term 2: node 0"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("fx.ping"), std::string::npos) << outcome.output;
}

TEST_F(StepProtocol, OneSeedGivesOneTraceHashRunTwiceAndReplayed) {
  UseFixture("two_leaders");  // a violation, so the run writes a repro to replay
  const std::string repros = (dir_ / "repros").string();
  const auto first = RunCombined({"run", kScenario, "--seed", "7", "--repro-dir", repros});
  const auto second = RunCombined({"run", kScenario, "--seed", "7", "--repro-dir", ""});
  const auto other = RunCombined({"run", kScenario, "--seed", "8", "--repro-dir", ""});
  ASSERT_FALSE(TraceHash(first.output).empty()) << first.output;
  EXPECT_EQ(TraceHash(first.output), TraceHash(second.output));
  EXPECT_NE(TraceHash(first.output), TraceHash(other.output));
  EXPECT_NE(first.output.find("election_safety"), std::string::npos) << first.output;
  // The printed commands carry the manifest: pasted elsewhere they still know the algorithm.
  EXPECT_NE(first.output.find("reproduce: ELECTSIM_ALGORITHMS="), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("(replay: ELECTSIM_ALGORITHMS="), std::string::npos) << first.output;
  const auto replayed = RunCombined({"replay", repros + "/fixture-seed7.repro.json"});
  EXPECT_NE(replayed.output.find("trace hash matches the repro (" + TraceHash(first.output) + ")"), std::string::npos)
      << replayed.output;
}

TEST_F(StepProtocol, NoOutputReplacesTheManifestOrTheProgramItRuns) {
  // The program is a copy, so that a write over it would harm nothing shared.
  const std::string program = (dir_ / "node.py").string();
  std::filesystem::copy_file(kFixtureNode, program);
  const std::string manifest = UseManifest(R"({"protocol":1,"name":"fixture","command":["python3",")" + program +
                                           R"(","ok"],"messages":[{"type":"fx.ping","fields":["term"]}]})");
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string manifest_text = read(manifest);
  const std::string program_text = read(program);
  const std::vector<std::vector<std::string>> commands = {
      {"run", kScenario, "--trace", manifest},
      {"run", kScenario, "--trace", program},
      {"sweep", kScenario, "--seeds", "2", "--summary", manifest},
      {"sweep", kScenario, "--seeds", "2", "--junit", program},
  };
  for (const auto& command : commands) {
    const auto outcome = RunCombined(command);
    EXPECT_EQ(outcome.exit_status, 2) << command.back() << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("is the input file"), std::string::npos) << outcome.output;
  }
  EXPECT_EQ(read(manifest), manifest_text);
  EXPECT_EQ(read(program), program_text);
}

TEST_F(StepProtocol, ANodeThatDrawsFromTheSystemIsCaughtByRunningItTwice) {
  UseFixture("nondeterministic");
  const auto first = RunCombined({"run", kScenario, "--repro-dir", ""});
  const auto second = RunCombined({"run", kScenario, "--repro-dir", ""});
  ASSERT_FALSE(TraceHash(first.output).empty()) << first.output;
  EXPECT_NE(TraceHash(first.output), TraceHash(second.output));
}

TEST_F(StepProtocol, ANodeThatBreaksTheProtocolEndsTheRunNamingItAndWhat) {
  const std::pair<std::string, std::string> cases[] = {
      {"wrong_hello", "speaks protocol 2, electsim speaks 1"},
      {"exit", "exited with status 3"},
      {"hang", "wrote nothing for the step budget of 300 ms"},
      {"malformed", "a line that is not an effect"},
      {"error", "it reported an error (cannot go on)"},
      {"undeclared", "of type \"fx.nothing\", which the manifest does not declare"},
      {"no_such_node", "a send to node 99, which does not exist"},
  };
  for (const auto& [mode, what] : cases) {
    // A short budget for the hang alone: a loaded machine may take longer
    // than that to start Python.
    UseFixture(mode, mode == "hang" ? 300 : 10000);
    const auto outcome = RunCombined({"run", kScenario, "--repro-dir", ""});
    EXPECT_EQ(outcome.exit_status, 1) << mode << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("node 0: algorithm fixture, process " + kFixtureNode), std::string::npos)
        << mode << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(what), std::string::npos) << mode << ": " << outcome.output;
  }
}

TEST_F(StepProtocol, AProgramThatCannotStartIsNamed) {
  UseManifest(R"({"protocol":1,"name":"fixture","command":["./no-such-program"]})");
  const auto outcome = RunCombined({"run", kScenario, "--repro-dir", ""});
  EXPECT_EQ(outcome.exit_status, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("no-such-program"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("No such file or directory"), std::string::npos) << outcome.output;
}

TEST_F(StepProtocol, ABadManifestNamesItsFileAndJsonPathAndStopsEveryCommand) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"protocol":2,"name":"x","command":["x"]})", "/protocol: expected 1"},
      {R"({"protocol":1,"name":"x","command":[]})", "/command: expected a non-empty array of strings"},
      {R"({"protocol":1,"name":"x","command":["x"],"options":[{"name":"a","type":"duration","default":"soon"}]})",
       "/options/0/default: expected a duration"},
      {R"({"protocol":1,"name":"x","command":["x"],"messages":[{"type":"raft.append","fields":["term"]}]})",
       "/messages/0/type: expected a string \"<prefix>.<message>\""},
      {R"({"protocol":1,"name":"x","command":["x"],"messages":[{"type":"x.a","fields":["term"]}],
          "message_roles":{"leader_only":[{"type":"x.a","term":"epoch"}]}})",
       "/message_roles/leader_only/0/term: expected one of the message's fields"},
      {R"({"protocol":1,"name":"x","command":["x"],"guarantees":[{"keeps":{"election_safety":["rain"]}}]})",
       "/guarantees/0/keeps/election_safety/0: expected a fault kind"},
      {R"({"protocol":1,"name":"x","command":["x"],"options":[{"name":"a","type":"duration","default":"1s"}],
          "constraints":[{"shorter":"a","than":"a","times":0}]})",
       "/constraints/0/times: expected an integer from 1 to 1000"},
      {R"({"protocol":1,"name":"x","command":["x"],"options":[{"name":"a","type":"duration","default":"1s"}],
          "constraints":[{"not_shorter":"b","than":"a"}]})",
       "/constraints/0/not_shorter: expected a duration option's name"},
      {R"({"protocol":1,"name":"x","command":["x"]})"
       "garbage",
       "not valid JSON"},
  };
  for (const auto& [text, what] : cases) {
    const std::string path = UseManifest(text);
    const auto outcome = RunCombined(std::string("list"));
    EXPECT_EQ(outcome.exit_status, 2) << text << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(path + ": "), std::string::npos) << text << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(what), std::string::npos) << text << ": " << outcome.output;
  }
}

// The manifest's constraints judge a scenario's options before any node
// starts: a range with "unless_zero" (etcd-raft's election_timeout_max) is
// bad usage on either side, and 0 passes.
TEST_F(StepProtocol, AnOptionOutsideItsManifestsRangeIsBadUsage) {
  UseManifest(R"({"protocol":1,"name":"fixture","command":[")" + kFixtureNode + R"(","ok"],
    "options":[{"name":"base","type":"duration","default":"100ms","min":"1ns"},
               {"name":"cap","type":"duration","default":"0ns","min":"0ns"}],
    "constraints":[{"not_shorter":"cap","than":"base","unless_zero":true,"because":"a range"},
                   {"shorter":"cap","than":"base","times":2,"unless_zero":true,"because":"a range"}],
    "messages":[{"type":"fx.ping","fields":["term"]}],
    "message_roles":{"leader_only":[{"type":"fx.ping","term":"term"}]}})");
  const std::pair<std::string, std::string> cases[] = {
      {"200ms", "option cap (200ms) must be shorter than 2 times base (200ms): a range"},
      {"50ms", "option cap (50ms) must be at least base (100ms): a range"},
  };
  for (const auto& [cap, message] : cases) {
    const auto outcome = RunCombined({"run", kScenario, "--set", "algorithm.options.cap=" + cap, "--repro-dir", ""});
    EXPECT_EQ(outcome.exit_status, 2) << cap << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(message), std::string::npos) << cap << ": " << outcome.output;
  }
  for (const std::string cap : {"0ns", "100ms", "199ms"}) {
    const auto outcome = RunCombined({"run", kScenario, "--set", "algorithm.options.cap=" + cap, "--repro-dir", ""});
    EXPECT_EQ(outcome.exit_status, 0) << cap << ": " << outcome.output;
  }
}

TEST_F(StepProtocol, AManifestsAlgorithmIsListedWithItsOptions) {
  UseManifest(R"({"protocol":1,"name":"fixture","command":["x"],
    "options":[{"name":"tick","type":"duration","default":"1.5s","min":"1ms","help":"how often"}]})");
  const auto outcome = RunCombined(std::string("list"));
  EXPECT_EQ(outcome.exit_status, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("fixture"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("tick"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("default 1500ms"), std::string::npos)
      << "durations as scenarios write them: " << outcome.output;
}

}  // namespace
