// The scenario loader: what it accepts and, above all, how it rejects.
#include "tools/electsim/scenario.h"

#include <string>

#include "gtest/gtest.h"

namespace electsim {
namespace {

constexpr const char* kValid = R"({
  "description": "ok",
  "nodes": 5,
  "duration": "2s",
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

std::string ErrorOf(const std::string& text) {
  auto scenario = ParseScenario(text, "scenarios/x.json");
  EXPECT_FALSE(scenario.ok()) << "accepted: " << text;
  if (scenario.ok()) return "";
  EXPECT_EQ(scenario.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(scenario.status().message());
}

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
  const std::string error = ErrorOf(R"({"nodes": 1e400, "duration": "1s", "algorithm": "raft"})");
  EXPECT_NE(error.find("scenarios/x.json: invalid JSON"), std::string::npos) << error;
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
  const std::string error = ErrorOf(Variant("\"duration\": \"2s\"", "\"duration\": \"9223372036s\""));
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
  EXPECT_NE(error.find("scenarios/x.json: at /descripton: expected no key \"descripton\" here"), std::string::npos)
      << error;
  EXPECT_NE(error.find("\"description\""), std::string::npos) << error;
}

TEST(Scenario_Errors, WrongTypeNamesPathExpectedAndGot) {
  const std::string error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": \"five\""));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 64], got the string \"five\""), std::string::npos)
      << error;
}

TEST(Scenario_Errors, IntegerBelowItsMinimum) {
  // Non-negative JSON integers arrive as unsigned: the lower bound must hold for them too.
  std::string error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": 0"));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 64], got the integer 0"), std::string::npos) << error;
  error = ErrorOf(Variant("\"nodes\": 5", "\"nodes\": -2"));
  EXPECT_NE(error.find("at /nodes: expected an integer in [1, 64], got the integer -2"), std::string::npos) << error;
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
  EXPECT_NE(error.find("at /algorithm/options/election_timeout_minimum: expected an option of algorithm \"raft\""),
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
  EXPECT_NE(ErrorOf(Variant("\"crash\": \"leader\"", "\"crash\": \"leader\", \"pause\": 1")).find("one action per step"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Variant("\"heal\": true", "\"mend\": true")).find("at /faults/2: expected one action"),
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
  EXPECT_NE(error.find("at /duration: expected a duration: how long to simulate (this key is required)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace electsim
