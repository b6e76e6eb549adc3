// The JSON Schemas: the committed files are what the binary checks against,
// their generated part agrees with the registries, and a failure reads as a
// message that says where and what was expected.
#include "tools/electsim/language/schema.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/language/scenario.h"
#include "tools/electsim/language/schema_internal.h"
#include "tools/electsim/language/schema_registry.h"

namespace electsim {
namespace {

using nlohmann::json;

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(ELECTSIM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ScenarioErrorOf(const std::string& text) {
  auto scenario = ParseScenario(text, "s.json");
  EXPECT_FALSE(scenario.ok()) << "accepted: " << text.substr(0, 200);
  if (scenario.ok()) return "";
  EXPECT_EQ(scenario.status().code(), absl::StatusCode::kInvalidArgument) << scenario.status();
  return std::string(scenario.status().message());
}

// A valid scenario with `extra` (",\"key\": value") added at the top level.
std::string With(const std::string& extra) {
  return R"({"nodes": 3, "duration": "2s", "algorithm": "raft")" + extra + "}";
}

TEST(SchemaFile, BuiltInTextIsTheCommittedFile) {
  EXPECT_EQ(SchemaText(SchemaKind::kScenario), ReadSource("scenarios/schema/scenario.schema.json"));
  EXPECT_EQ(SchemaText(SchemaKind::kRepro), ReadSource("scenarios/schema/repro.schema.json"));
}

TEST(SchemaFile, GeneratedDefinitionsMatchTheRegistries) {
  const std::string committed = ReadSource("scenarios/schema/scenario.schema.json");
  const std::string current = WithRegistryDefinitions(nlohmann::ordered_json::parse(committed)).dump(2) + "\n";
  EXPECT_EQ(committed, current) << "the algorithm options or checkers changed: run "
                                   "build/tools/electsim-schema scenarios/schema/scenario.schema.json";
  // Every registered option is in the schema.
  const json schema = json::parse(committed);
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    const json& options = schema["definitions"]["options_" + std::string(algorithm->name())]["properties"];
    EXPECT_EQ(options.size(), algorithm->options().size()) << algorithm->name();
    for (const auto& spec : algorithm->options()) EXPECT_TRUE(options.contains(spec.name)) << spec.name;
  }
}

// Every pattern must be matched whole: its maxLength (in characters, up to
// four bytes each) must stay within what the pattern constraint matches.
// And array limits must be visible within one window.
void ExpectBoundedPatterns(const json& node, const std::string& where) {
  if (node.is_object()) {
    // Long arrays are checked in windows of kArrayWindow elements when a file
    // fails: no array limit may need more to show.
    for (const char* limit : {"maxItems", "minItems"}) {
      if (node.contains(limit)) {
        EXPECT_LT(node[limit].get<size_t>(), schema_internal::kArrayWindow) << where;
      }
    }
    if (node.contains("pattern")) {
      ASSERT_TRUE(node.contains("maxLength")) << where << " has a pattern without maxLength";
      EXPECT_LE(node["maxLength"].get<size_t>() * 4, schema_internal::kMaxPatternSubjectBytes) << where;
    }
    for (auto it = node.begin(); it != node.end(); ++it) ExpectBoundedPatterns(it.value(), where + "/" + it.key());
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) ExpectBoundedPatterns(node[i], where + "/" + std::to_string(i));
  }
}

TEST(SchemaFile, EveryPatternHasAMaxLengthAndArrayLimitsFitAWindow) {
  ExpectBoundedPatterns(json::parse(SchemaText(SchemaKind::kScenario)), "scenario.schema.json#");
  ExpectBoundedPatterns(json::parse(SchemaText(SchemaKind::kRepro)), "repro.schema.json#");
}

TEST(Schema_Check, ValidDocumentPasses) {
  EXPECT_TRUE(CheckAgainstSchema(SchemaKind::kScenario, json::parse(With("")), "s.json").ok());
}

TEST(Schema_Messages, EachKeywordSaysWhatWasExpected) {
  struct Case {
    std::string extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      // type
      {R"(, "faults": {})", "s.json: at /faults: expected an array of fault steps, got an object"},
      // required, named by the member's own description
      {R"(, "liveness": {"after": "1s"})",
       "at /liveness/within: expected a duration: how soon after \"after\" one "
       "leader must be known to every live node (this key is required)"},
      // additionalProperties, with and without a title
      {R"(, "resource": {"fenced": true})",
       "at /resource/fenced: expected no key \"fenced\" here (allowed: \"exclusive_token\", \"fencing\")"},
      {R"(, "faults": [{"at": "1s", "restart": 1, "for": "1s"}])",
       "at /faults/0/for: expected no key \"for\" in a \"restart\" step (allowed: \"after\", \"at\", \"name\", "
       "\"restart\")"},
      // enum, const
      {R"(, "checkers": ["election_safety", "single_vote", "split_brain"])",
       "at /checkers/2: expected one of the checkers \"committed_agreement\", \"declared_winner\""},
      {R"(, "faults": [{"at": "1s", "heal": "yes"}])", "at /faults/0/heal: expected true, got the string \"yes\""},
      // minimum, maximum
      {R"(, "network": {"duplicate": -0.5})",
       "at /network/duplicate: expected a probability: a number in [0, 1], got the number -0.5"},
      {R"(, "faults": [{"at": "1s", "clock": {"node": 0, "drift_ppm": 500000}}])",
       "at /faults/0/clock/drift_ppm: expected an integer in [-499999, 499999], got the integer 500000"},
      // minItems, maxItems
      {R"(, "faults": [{"at": "1s", "partition": []}])",
       "at /faults/0/partition: expected an array of groups, each an array of nodes, got an array"},
      {R"(, "network": {"latency": {"uniform": ["1ms", "2ms", "3ms"]}})",
       "at /network/latency/uniform: expected [MIN, MAX], two durations, got an array"},
      // minProperties / maxProperties
      {R"(, "network": {"latency": {}})", "at /network/latency: expected a latency: a duration, or an object with one"},
      // oneOf with more than one alternative present
      {R"(, "faults": [{"at": "1s", "clock": {"node": 0, "drift_ppm": 5, "shift": "1ms"}}])",
       "at /faults/0/clock: expected exactly one of \"drift_ppm\" and \"shift\" (this object has \"drift_ppm\", "
       "\"shift\")"},
      // anyOf: no action at all
      {R"(, "faults": [{"at": "1s"}])",
       "at /faults/0: expected a fault step object with \"at\" or \"after\" and one action"},
      // pattern, maxLength
      {R"(, "name": "-ok-but-not/this")", "at /name: expected a name of letters, digits"},
      {R"(, "description": ")" + std::string(1001, 'x') + "\"",
       "at /description: expected a one-line string without control characters (at most 1000 characters), got the "
       "string \"xxxx"},
      // a malformed duration is explained by the duration parser
      {R"(, "faults": [{"at": "1.5", "crash": 0}])",
       "at /faults/0/at: expected a duration such as \"150ms\", \"2.5s\" or \"1m30s\", got \"1.5\" (missing unit"},
  };
  for (const Case& c : cases) {
    const std::string error = ScenarioErrorOf(With(c.extra));
    EXPECT_NE(error.find(c.message), std::string::npos) << c.extra << "\n" << error;
  }
}

TEST(Schema_Messages, AlternativesThatWereOnlyTriedAreNotReported) {
  // The anyOf over actions tries "required": ["crash"] and ten more; none of
  // those misses may surface as "crash (this key is required)".
  const std::string error = ScenarioErrorOf(With(R"(, "faults": [{"at": "1s", "mend": 0}])"));
  EXPECT_EQ(error.find("this key is required"), std::string::npos) << error;
  EXPECT_NE(error.find("at /faults/0: expected a fault step object"), std::string::npos) << error;
}

TEST(Schema_Messages, TheErrorNearestTheTopIsReported) {
  const std::string error = ScenarioErrorOf(With(R"(, "nodes_": 1, "faults": [{"at": "x", "crash": 0}])"));
  EXPECT_NE(error.find("at /nodes_: expected no key \"nodes_\" in a scenario"), std::string::npos) << error;
}

TEST(Schema_Messages, PathsInsideAReproStartAtTheScenario) {
  const std::string repro = std::string(R"({"electsim_repro": 1, "scenario_file": "s.json", "seed": 1,
      "trace_hash": "0x0000000000000001", "trace_records": 5, "violations": [], "scenario": )") +
                            With(R"(, "faults": [{"at": "1s", "crash": -1}])") + "}";
  auto parsed = ParseRepro(repro, "r.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("r.json: at /scenario/faults/0/crash: expected a node"), std::string::npos)
      << parsed.status();
}

TEST(Schema_Check, LongStringsAreRefusedWithoutExhaustingTheStack) {
  // std::regex in its default mode recurses once per character; 60000 is
  // matched (within the pattern constraint's limit), 200000 is not.
  for (const std::string& extra :
       {R"(, "description": ")" + std::string(60000, 'x') + "\"",
        R"(, "description": ")" + std::string(200000, 'x') + "\"", R"(, "name": ")" + std::string(200000, 'a') + "\"",
        R"(, "duration": ")" + std::string(200000, '1') + "s\"",
        R"(, "faults": [{"at": ")" + std::string(100000, '1') + "ms\", \"crash\": 0}]"}) {
    const std::string error = ScenarioErrorOf(With(extra));
    EXPECT_NE(error.find("s.json: at /"), std::string::npos) << error.substr(0, 300);
  }
}

TEST(Schema_Messages, AnErrorFarIntoALongArrayNamesItsOwnIndex) {
  // Long arrays are checked window by window; the index must be the file's.
  std::string faults;
  for (int i = 0; i < 1000; ++i) faults += R"({"at": "1s", "heal": true},)";
  faults += R"({"at": "1s", "heal": "no"})";
  EXPECT_NE(ScenarioErrorOf(With(R"(, "faults": [)" + faults + "]")).find("at /faults/1000/heal: expected true"),
            std::string::npos);
  // Within the first window, and in an array of arrays.
  EXPECT_NE(
      ScenarioErrorOf(With(R"(, "faults": [{"at": "1s", "heal": true}, {"at": "1s", "heal": 0}, )" + faults + "]"))
          .find("at /faults/1/heal: expected true"),
      std::string::npos);
  std::string groups;
  for (int i = 0; i < 600; ++i) groups += "[0],";
  EXPECT_NE(ScenarioErrorOf(With(R"(, "faults": [{"at": "1s", "partition": [)" + groups + "[]]}]"))
                .find("at /faults/0/partition/600: expected a group: a non-empty array of nodes"),
            std::string::npos);
}

TEST(Schema_Check, SeedsUpTo2To64Minus1Load) {
  // valijson reads integers as int64: the largest seeds must not wrap negative.
  auto scenario = ParseScenario(With(R"(, "seed": 18446744073709551615)"), "s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_EQ(scenario->seed, 18446744073709551615u);
  EXPECT_NE(ScenarioErrorOf(R"({"nodes": 18446744073709551615, "duration": "2s", "algorithm": "raft"})")
                .find("at /nodes: expected an integer in [1, 100000], got the integer 18446744073709551615"),
            std::string::npos);
}

TEST(Schema_Check, MinusZeroIsZero) {
  auto scenario = ParseScenario(With(R"(, "seed": -0, "faults": [{"at": "1s", "crash": -0}])"), "s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_EQ(scenario->seed, 0u);
  EXPECT_EQ(scenario->faults.at(0).node.id, 0u);
  EXPECT_NE(ScenarioErrorOf(With(R"(, "seed": -1)")).find("at /seed: expected a seed: an integer in [0, "),
            std::string::npos);
}

}  // namespace
}  // namespace electsim
