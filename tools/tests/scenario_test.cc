// The scenario loader: what it accepts and, above all, how it rejects.
#include "tools/electsim/language/scenario.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "tools/tests/scenario_error.h"

namespace electsim {
namespace {

constexpr const char* kValid = R"({
  "description": "ok",
  "nodes": 5,
  "duration": "3s",
  "algorithm": {"name": "raft", "options": {"election_timeout_min": "150ms", "election_timeout_max": "300ms"}},
  "network": {"latency": {"uniform": ["1ms", "5ms"]}, "drop": 0.1},
  "faults": [
    {"at": "1s", "crash": "leader", "for": "500ms"},
    {"at": "500ms", "partition": [[0, 1], [2, 3, 4]]},
    {"at": "1500ms", "heal": true},
    {"at": "100ms", "clock": {"node": 2, "shift": "-20ms"}}
  ],
  "liveness": {"within": "1s"}
})";

// Replaces the first occurrence of `from` in the valid scenario.
std::string Variant(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Scenario_Load, ValidScenarioLoadsSortedFaultsAndDefaults) {
  auto scenario = ParseScenario(kValid, "scenarios/x.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_EQ(scenario->name, "x");
  EXPECT_EQ(scenario->nodes, 5u);
  EXPECT_EQ(scenario->algorithm->name(), "raft");
  EXPECT_EQ(scenario->options.Duration("election_timeout_min"), sim::TimeNs::Millis(150));
  ASSERT_EQ(scenario->faults.size(), 4u);
  EXPECT_EQ(scenario->faults[0].at, sim::TimeNs::Millis(100));  // sorted by time
  EXPECT_EQ(scenario->faults[0].action, FaultStep::Action::kClockShift);
  EXPECT_EQ(scenario->faults[0].shift, sim::TimeNs::Millis(-20));
  EXPECT_EQ(scenario->faults[2].node.kind, NodeSelector::Kind::kLeader);
  EXPECT_TRUE(scenario->liveness);
  EXPECT_EQ(scenario->fencing, true);
  EXPECT_EQ(scenario->seed, 1u);
  EXPECT_EQ(scenario->network.drop, *sim::Probability::FromDouble(0.1));
}

TEST(Scenario_Errors, BadJsonNamesFileLineAndColumn) {
  const std::string error = ErrorOf("{\n  \"nodes\": 5,\n  \"duration\" \"2s\"\n}");
  EXPECT_NE(error.find("scenarios/x.json:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("invalid JSON"), std::string::npos) << error;
}

TEST(Scenario_Errors, NumberTooLargeForJsonIsBadInputNotACrash) {
  std::string error = ErrorOf(R"({"nodes": 1e400, "duration": "1s", "algorithm": "raft"})");
  EXPECT_NE(error.find("scenarios/x.json: at /nodes: expected a number within the range of a 64-bit float"),
            std::string::npos)
      << error;
  error = ErrorOf(R"({"faults": [{"at": "1s"}, 1e400]})");
  EXPECT_NE(error.find("at /faults/1: expected a number within"), std::string::npos) << error;
}

TEST(Scenario_Errors, DeepNestingIsRefusedNotAStackOverflow) {
  // Copying or freeing a document recurses per level: 200000 levels would crash.
  const std::string deep = R"({"description": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
  const std::string error = ErrorOf(deep);
  EXPECT_NE(error.find("at /description/0/0/0"), std::string::npos) << error.substr(0, 200);
  EXPECT_NE(error.find("expected at most 32 levels of nested arrays and objects"), std::string::npos)
      << error.substr(0, 200);
}

TEST(Scenario_Errors, DevicesAndFoldersAreNotScenarioFiles) {
  auto device = LoadScenarioFile("/dev/zero");  // would be read forever
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("/dev/zero: is a device, pipe or socket"), std::string_view::npos)
      << device.status();
  auto folder = LoadScenarioFile("/tmp");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("/tmp: is a directory"), std::string_view::npos) << folder.status();
}

TEST(Scenario_Errors, PartitionGroupsAreNonEmptyAndDisjoint) {
  std::string error = ErrorOf(Variant("[[0, 1], [2, 3, 4]]", "[[0, 1], [1, 2]]"));
  EXPECT_NE(error.find("at /faults/1/partition/1/0: expected each node in one group only (node 1 is in an earlier"),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("[[0, 1], [2, 3, 4]]", "[[0, 0], [2]]"));
  EXPECT_NE(error.find("at /faults/1/partition/0/1: expected each node once"), std::string::npos) << error;
  error = ErrorOf(Variant("[[0, 1], [2, 3, 4]]", "[[], [2]]"));
  EXPECT_NE(error.find("at /faults/1/partition/0: expected a group: a non-empty array of nodes"), std::string::npos)
      << error;
}

TEST(Scenario_Errors, CutsAndLinksNeedTwoDifferentNodes) {
  std::string error = ErrorOf(Variant("\"heal\": true", "\"cut\": {\"from\": 2, \"to\": 2}"));
  EXPECT_NE(error.find("at /faults/2/cut/to: expected a node other than \"from\""), std::string::npos) << error;
  error = ErrorOf(Variant("\"heal\": true", "\"link\": {\"from\": \"leader\", \"to\": \"leader\", \"drop\": 1}"));
  EXPECT_NE(error.find("at /faults/2/link/to: expected a node other than \"from\""), std::string::npos) << error;
}

TEST(Scenario_Errors, OnlyElectionNodesCanBePausedDuringAWrite) {
  const std::string error = ErrorOf(Variant("\"crash\": \"leader\"", "\"pause\": \"resource\", \"during\": \"write\""));
  EXPECT_NE(error.find("at /faults/0/pause: expected an election node or \"leader\""), std::string::npos) << error;
}

// {"next_leader": N} names the node a step acts on, never a node it acts
// for or against: not a restart's, a cut's "to" or a partition's member.
TEST(Scenario_Errors, NextLeaderOnlyForTheNodeAStepActsOn) {
  ASSERT_TRUE(ParseScenario(Variant("\"crash\": \"leader\"", "\"crash\": {\"next_leader\": 2}"), "x.json").ok());
  std::string error =
      ErrorOf(Variant("\"crash\": \"leader\", \"for\": \"500ms\"", "\"restart\": {\"next_leader\": 1}"));
  EXPECT_NE(error.find("at /faults/0/restart: expected a node: an id in [0, 4], \"leader\", \"resource\""),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"cut\": {\"from\": 1, \"to\": {\"next_leader\": 1}}"));
  EXPECT_NE(error.find("at /faults/0/cut/to: expected a node"), std::string::npos) << error;
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": {\"next_leader\": 0}"));
  EXPECT_NE(error.find("/faults/0/crash"), std::string::npos) << error;
}

// A cut "during" waits for a moment of its "from" node, whose sends it cuts.
TEST(Scenario_Errors, OnlyAnElectionNodesSendsAreCutDuringAMoment) {
  std::string error =
      ErrorOf(Variant("\"crash\": \"leader\"", "\"cut\": {\"from\": \"resource\", \"to\": 1}, \"during\": \"write\""));
  EXPECT_NE(error.find("at /faults/0/cut/from: expected an election node or \"leader\""), std::string::npos) << error;
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"partition\": [[0]], \"during\": \"write\""));
  EXPECT_NE(error.find("/faults/0"), std::string::npos) << error;  // a partition has no node of its own
  std::string text =
      Variant("\"crash\": \"leader\"", "\"cut\": {\"from\": \"leader\", \"to\": 1}, \"during\": \"commit\"");
  text.replace(text.find("\"liveness\": {"), 13, "\"liveness\": {\"after\": \"1500ms\", ");
  auto cut = ParseScenario(text, "x.json");
  ASSERT_TRUE(cut.ok()) << cut.status();
  const auto step = std::find_if(cut->faults.begin(), cut->faults.end(),
                                 [](const FaultStep& f) { return f.action == FaultStep::Action::kCut; });
  ASSERT_NE(step, cut->faults.end());
  EXPECT_EQ(step->during, FaultStep::Moment::kCommit);
}

TEST(Scenario_Load, ACrashCanLoseUnsyncedWrites) {
  auto scenario = ParseScenario(Variant("\"crash\": \"leader\"", "\"crash\": 2, \"lose_unsynced\": true"), "x.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  const FaultStep& crash = scenario->faults[2];
  EXPECT_TRUE(crash.lose_unsynced);
  EXPECT_EQ(crash.Describe(), "crash node 2 losing its unsynced writes for 500ms");
  // A plain crash keeps them.
  auto plain = ParseScenario(kValid, "x.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->faults[2].lose_unsynced);
}

TEST(Scenario_Errors, LoseUnsyncedIsABooleanOnACrash) {
  std::string error = ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": 2, \"lose_unsynced\": 1"));
  EXPECT_NE(error.find("at /faults/0/lose_unsynced: expected true or false, got the integer 1"), std::string::npos)
      << error;
  error = ErrorOf(Variant("\"heal\": true", "\"restart\": 1, \"lose_unsynced\": true"));
  EXPECT_NE(error.find("at /faults/2/lose_unsynced: expected no key \"lose_unsynced\" in a \"restart\" step"),
            std::string::npos)
      << error;
}

TEST(Scenario_Errors, LivenessMustBeJudgeableWithinTheRun) {
  // The faults end at 1.5s; 2s more runs past the 3s end.
  std::string error = ErrorOf(Variant("\"within\": \"1s\"", "\"within\": \"2s\""));
  EXPECT_NE(error.find("at /liveness: expected a deadline within the run: liveness is judged from 1500ms (when the "
                       "last fault step ends) until 2s later, 3500ms, past the run's end at 3s"),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("\"within\": \"1s\"", "\"within\": \"0s\""));
  EXPECT_NE(error.find("at /liveness/within: expected a duration > 0"), std::string::npos) << error;
  // A step that waits for a moment (a write, a vote) ends at a time the loader cannot know.
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"pause\": \"leader\", \"during\": \"write\""));
  EXPECT_NE(error.find("at /liveness/after: expected a duration (this key is required when a step waits for a "
                       "moment with \"during\""),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": \"leader\", \"during\": \"vote\""));
  EXPECT_NE(error.find("at /liveness/after: expected a duration"), std::string::npos) << error;
  error = ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": \"leader\", \"within\": \"1s\""));
  EXPECT_NE(error.find("at /faults/0/within: expected \"within\" only with \"during\""), std::string::npos) << error;
  EXPECT_TRUE(ParseScenario(Variant("\"within\": \"1s\"", "\"within\": \"1s\", \"after\": \"1s\""), "x.json").ok());
}

TEST(Scenario_Load, LivenessStabilityWindowAndExclusiveTokenResource) {
  auto scenario =
      ParseScenario(Variant("\"within\": \"1s\"", "\"within\": \"1s\", \"stable_for\": \"500ms\""), "x.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_EQ(scenario->liveness_stable_for, sim::TimeNs::Millis(500));
  EXPECT_FALSE(scenario->exclusive_token);
  scenario = ParseScenario(
      Variant("\"description\": \"ok\",", "\"description\": \"ok\", \"resource\": {\"exclusive_token\": true},"),
      "x.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_TRUE(scenario->exclusive_token);
  EXPECT_FALSE(ParseScenario(kValid, "x.json")->liveness_stable_for.has_value());  // until the end of the run
}

TEST(Scenario_Errors, LivenessStabilityWindowMustFitInTheRun) {
  // Deadline 2.5s (faults end at 1.5s, within 1s); the run ends at 3s.
  std::string error = ErrorOf(Variant("\"within\": \"1s\"", "\"within\": \"1s\", \"stable_for\": \"600ms\""));
  EXPECT_NE(error.find("at /liveness/stable_for: expected a window that fits in the run: a leader found at the "
                       "deadline 2500ms must hold 600ms more, until 3100ms, past the run's end at 3s, got the string "
                       "\"600ms\""),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("\"within\": \"1s\"", "\"within\": \"1s\", \"stable_for\": \"0s\""));
  EXPECT_NE(error.find("at /liveness/stable_for: expected a duration > 0"), std::string::npos) << error;
  error = ErrorOf(Variant("\"within\": \"1s\"", "\"within\": \"1s\", \"stable_for\": 5"));
  EXPECT_NE(error.find("at /liveness/stable_for: expected a duration string"), std::string::npos) << error;
}

TEST(Scenario_Errors, ExclusiveTokenNeedsFencingAndABoolean) {
  std::string error = ErrorOf(Variant("\"description\": \"ok\",",
                                      "\"description\": \"ok\", \"resource\": {\"exclusive_token\": true, "
                                      "\"fencing\": false},"));
  EXPECT_NE(error.find("at /resource/exclusive_token: expected false when fencing is off"), std::string::npos) << error;
  error =
      ErrorOf(Variant("\"description\": \"ok\",", "\"description\": \"ok\", \"resource\": {\"exclusive_token\": 1},"));
  EXPECT_NE(error.find("at /resource/exclusive_token: expected true or false, got the integer 1"), std::string::npos)
      << error;
}

TEST(Scenario_Errors, RatiosAreCheckedBeforeRounding) {
  const std::string lease = R"({"nodes": 3, "duration": "1s", "algorithm": {"name": "lease", "options": )";
  std::string error = ErrorOf(lease + R"({"safety_margin": 1.0000001}}})");
  EXPECT_NE(error.find("at /algorithm/options/safety_margin: expected a number in (0, 1]"), std::string::npos) << error;
  error = ErrorOf(lease + R"({"safety_margin": 0.0000006}}})");  // rounds to 1 ppm, but is below it
  EXPECT_NE(error.find("at /algorithm/options/safety_margin"), std::string::npos) << error;
  EXPECT_TRUE(ParseScenario(lease + R"({"safety_margin": 1}}})", "x.json").ok());
  EXPECT_TRUE(ParseScenario(lease + R"({"safety_margin": 0.6}}})", "x.json").ok());
}

TEST(Scenario_Errors, LatencyModelErrorsNameTheValueAtFault) {
  std::string error = ErrorOf(Variant("[\"1ms\", \"5ms\"]", "[\"10ms\", \"1ms\"]"));
  EXPECT_NE(error.find("at /network/latency/uniform/1: expected a duration of at least the minimum (10ms), got the "
                       "string \"1ms\""),
            std::string::npos)
      << error;
  error = ErrorOf(Variant("{\"uniform\": [\"1ms\", \"5ms\"]}",
                          "{\"pareto\": {\"scale\": \"1ms\", \"alpha\": 0.0001, \"max\": \"1s\"}}"));
  EXPECT_NE(error.find("at /network/latency/pareto/alpha: expected a number in [0.001, 100]"), std::string::npos)
      << error;
  error = ErrorOf(Variant("{\"uniform\": [\"1ms\", \"5ms\"]}",
                          "{\"exponential\": {\"min\": \"1ms\", \"mean\": \"0ms\", \"max\": \"1s\"}}"));
  EXPECT_NE(error.find("at /network/latency/exponential/mean: expected a duration of at least 1ns"), std::string::npos)
      << error;
}

TEST(Scenario_Load, NodesModelTakesTheLatencyFormsAndDefaultsToZero) {
  auto plain = ParseScenario(kValid, "x.json");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->node_model.processing.Describe(), "fixed 0ns");
  EXPECT_EQ(plain->node_model.persist.Describe(), "fixed 0ns");
  auto modelled = ParseScenario(
      Variant("\"faults\"",
              R"("nodes_model": {"processing": "200us", "persist": {"uniform": ["1ms", "3ms"]}}, "faults")"),
      "x.json");
  ASSERT_TRUE(modelled.ok()) << modelled.status();
  EXPECT_EQ(modelled->node_model.processing.Describe(), "fixed 200000ns");
  EXPECT_EQ(modelled->node_model.persist.Describe(), "uniform [1000000ns, 3000000ns]");
}

TEST(Scenario_Errors, NodesModelErrorsNameThePath) {
  const struct {
    std::string model;
    std::string message;
  } cases[] = {
      {R"({"processing": "fast"})", "at /nodes_model/processing: expected a duration"},
      {R"({"persist": {"uniform": ["3ms", "1ms"]}})",
       "at /nodes_model/persist/uniform/1: expected a duration of at least the minimum (3ms)"},
      {R"({"fsync": "1ms"})", "at /nodes_model"},
      {R"("1ms")", "at /nodes_model: expected an object with \"processing\""},
      {R"({"persist": "-1ms"})", "at /nodes_model/persist"},
  };
  for (const auto& c : cases) {
    const std::string error = ErrorOf(Variant("\"faults\"", "\"nodes_model\": " + c.model + ", \"faults\""));
    EXPECT_NE(error.find("scenarios/x.json"), std::string::npos) << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.model << "\n" << error;
  }
}

TEST(Scenario_Errors, DescriptionIsOneLineWithoutControlCharacters) {
  const std::string error = ErrorOf(Variant("\"description\": \"ok\"", "\"description\": \"ok\\u001b[31m\""));
  EXPECT_NE(error.find("at /description: expected a one-line string without control characters"), std::string::npos)
      << error;
}

TEST(Scenario_Errors, DuplicateKeysAreRejectedWithTheirPath) {
  std::string error = ErrorOf(R"({"nodes": 3, "nodes": 4, "duration": "1s", "algorithm": "raft"})");
  EXPECT_NE(error.find("scenarios/x.json: at /nodes: expected each key once"), std::string::npos) << error;
  error = ErrorOf(Variant("\"for\": \"500ms\"", "\"for\": \"500ms\", \"at\": \"1s\""));
  EXPECT_NE(error.find("at /faults/0/at: expected each key once"), std::string::npos) << error;
  error = ErrorOf(Variant("[2, 3, 4]", "[2, 3, 4], {\"a\": 1, \"a\": 2}"));
  EXPECT_NE(error.find("at /faults/1/partition/2/a: expected each key once"), std::string::npos) << error;
}

TEST(Scenario_Errors, HugeDurationsAreRejectedBeforeTheyCanOverflow) {
  const std::string error = ErrorOf(Variant("\"duration\": \"3s\"", "\"duration\": \"9223372036s\""));
  EXPECT_NE(error.find("at /duration: expected a duration"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 1000000s"), std::string::npos) << error;
  // A long but representable latency is fine.
  EXPECT_TRUE(ParseScenario(Variant("\"5ms\"]", "\"999999s\"]"), "x.json").ok());
}

TEST(Scenario_Errors, NameMustBeSafeInAFileName) {
  const std::string error = ErrorOf(Variant("\"description\": \"ok\"", "\"name\": \"../escaped/evil\""));
  EXPECT_NE(error.find("at /name: expected a name of letters"), std::string::npos) << error;
  auto derived = ParseScenario(kValid, "some dir/my scenario!.json");
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_EQ(derived->name, "my_scenario_");
}

TEST(Scenario_Errors, UnknownKeyNamesPathAndAllowedKeys) {
  const std::string error = ErrorOf(Variant("\"description\"", "\"descripton\""));
  EXPECT_NE(error.find("scenarios/x.json: at /descripton: expected no key \"descripton\" in a scenario (allowed: "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("\"description\""), std::string::npos) << error;
}

TEST(Scenario_Errors, WrongTypeNamesPathExpectedAndGot) {
  const std::string error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": \"five\""));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 100000], got the string \"five\""), std::string::npos)
      << error;
}

TEST(Scenario_Errors, IntegerBelowItsMinimum) {
  // Non-negative JSON integers arrive as unsigned: the lower bound must hold for them too.
  std::string error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": 0"));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 100000], got the integer 0"), std::string::npos) << error;
  error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": -2"));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 100000], got the integer -2"), std::string::npos)
      << error;
}

TEST(Scenario_Errors, NegativeDuration) {
  const std::string error = ErrorOf(Variant("\"for\": \"500ms\"", "\"for\": \"-500ms\""));
  EXPECT_NE(error.find("at /faults/0/for: expected a duration"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot be negative"), std::string::npos) << error;
}

TEST(Scenario_Errors, NodeIdOutOfRange) {
  const std::string error = ErrorOf(Variant("[2, 3, 4]", "[2, 3, 5]"));
  EXPECT_NE(error.find("at /faults/1/partition/1/2: expected a node: an id in [0, 4]"), std::string::npos) << error;
  EXPECT_NE(error.find("got the integer 5"), std::string::npos) << error;
}

TEST(Scenario_Errors, UnknownAlgorithmListsKnownOnes) {
  const std::string error = ErrorOf(Variant("\"name\": \"raft\"", "\"name\": \"paxos\""));
  EXPECT_NE(error.find("at /algorithm/name: expected one of the algorithms"), std::string::npos) << error;
  EXPECT_NE(error.find("\"raft\""), std::string::npos) << error;
  EXPECT_NE(error.find("got the string \"paxos\""), std::string::npos) << error;
}

TEST(Scenario_Errors, UnknownOptionAndOutOfRangeOption) {
  std::string error = ErrorOf(Variant("\"election_timeout_min\"", "\"election_timeout_minimum\""));
  EXPECT_NE(
      error.find("at /algorithm/options/election_timeout_minimum: expected no key \"election_timeout_minimum\" in "
                 "the options of algorithm \"raft\" (allowed: "),
      std::string::npos)
      << error;
  error = ErrorOf(Variant("\"election_timeout_max\": \"300ms\"", "\"election_timeout_max\": \"100ms\""));
  EXPECT_NE(error.find("at /algorithm/options"), std::string::npos) << error;
  EXPECT_NE(error.find("election_timeout_max"), std::string::npos) << error;
}

TEST(Scenario_Errors, ProbabilityOutOfRange) {
  const std::string error = ErrorOf(Variant("\"drop\": 0.1", "\"drop\": 1.5"));
  EXPECT_NE(error.find("at /network/drop: expected a probability: a number in [0, 1], got the number 1.5"),
            std::string::npos)
      << error;
}

TEST(Scenario_Errors, FaultStepShape) {
  // Each action's own keys: a second action is a key that step does not have.
  EXPECT_NE(ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": \"leader\", \"pause\": 1"))
                .find("at /faults/0/pause: expected no key \"pause\" in a \"crash\" step (allowed: \"after\", \"at\", "
                      "\"crash\", \"during\", \"for\", \"lose_unsynced\", \"name\", \"within\")"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Variant("\"heal\": true", "\"heal\": true, \"for\": \"1s\""))
                .find("at /faults/2/for: expected no key \"for\" in a \"heal\" step"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Variant("\"heal\": true", "\"mend\": true"))
          .find("at /faults/2: expected a fault step object with \"at\" or \"after\" and one action: crash, restart"),
      std::string::npos);
  EXPECT_NE(ErrorOf(Variant("\"at\": \"1s\"", "\"at\": \"9s\"")).find("a time within the run's duration"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": \"store\"")).find("this algorithm has no store"),
            std::string::npos);
}

TEST(Scenario_Errors, ExpectedViolationMustBeAnEnabledChecker) {
  std::string text = kValid;
  text.insert(text.rfind('}'), R"(, "checkers": ["election_safety"], "expect": {"violations": ["stale_token"]})");
  const std::string error = ErrorOf(text);
  EXPECT_NE(error.find("at /expect/violations/0"), std::string::npos) << error;
}

TEST(Scenario_Errors, MissingRequiredKey) {
  const std::string error = ErrorOf(R"({"nodes": 3, "algorithm": "raft"})");
  EXPECT_NE(error.find("at /duration: expected a duration: how long to simulate (this key is required unless \"stop\" "
                       "has a \"max\")"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace electsim
