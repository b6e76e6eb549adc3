// `run --json`: one JSON object that satisfies scenarios/schema/summary.schema.json.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_command.h"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/schema.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validator.hpp"

namespace {

using nlohmann::json;

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

bool SatisfiesSummarySchema(const json& document) {
  static const json schema_document =
      ReadJson(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/schema/summary.schema.json");
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_document);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::adapters::NlohmannJsonAdapter target(document);
  return validator.validate(schema, target, nullptr);
}

// Many owners over one store: the "keys" object, and the cascade a store at
// capacity sets off, against its twin with longer leases that avoids it.
TEST(SummaryJson, ShardsRunsReportTheirKeysAndTheCascadeOfAStoreAtCapacity) {
  const auto summary_of = [](const std::string& scenario) {
    const electsim_test::Outcome out = electsim_test::RunCombined(
        "run " + std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/large/" + scenario + ".json --json --repro-dir ''");
    EXPECT_EQ(out.exit_status, 0) << out.output;
    return json::parse(out.output);
  };
  const json cascade = summary_of("shards-store-at-capacity");
  const json calm = summary_of("shards-store-at-capacity-longer-ttl");
  EXPECT_TRUE(SatisfiesSummarySchema(cascade)) << cascade.dump(2);
  ASSERT_TRUE(cascade.contains("keys"));
  ASSERT_TRUE(calm.contains("keys"));
  // Both settle with every key owned and the keys shared evenly...
  for (const json* run : {&cascade, &calm}) {
    EXPECT_EQ((*run)["keys"]["owned_at_end"], (*run)["keys"]["keys"]);
    EXPECT_EQ((*run)["keys"]["min_per_replica"], (*run)["keys"]["max_per_replica"]);
  }
  // ...but only with 1s leases do they expire by the hundred on the way,
  // each waking every replica, and keys go unowned for seconds.
  EXPECT_GT(cascade["keys"]["removals"].get<int64_t>(), 100);
  EXPECT_EQ(cascade["keys"]["removal_wakeups"].get<int64_t>(), 5 * cascade["keys"]["removals"].get<int64_t>());
  EXPECT_GT(cascade["keys"]["gap_p50_ns"].get<int64_t>(), 1'000'000'000);
  EXPECT_EQ(calm["keys"]["removals"], 0);
  EXPECT_EQ(calm["keys"]["ownership_gaps"], 0);
  // A single-leader algorithm reports no keys.
  const electsim_test::Outcome raft = electsim_test::RunCombined("run " + std::string(ELECTSIM_SOURCE_DIR) +
                                                                 "/scenarios/raft-healthy.json --json --repro-dir ''");
  EXPECT_FALSE(json::parse(raft.output).contains("keys"));
}

// The herd: when owners crash, watching every key wakes every replica per
// deletion; waiting in a line per key wakes one (the one behind), per
// deletion of a key or of a line's child. Both re-own every key.
TEST(SummaryJson, ShardsWatchingEveryKeyWakesTheHerdAndALineWakesOneWaiter) {
  for (const int seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    const auto keys_of = [seed](const std::string& scenario) {
      const electsim_test::Outcome out =
          electsim_test::RunCombined("run " + std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/" + scenario +
                                     ".json --seed " + std::to_string(seed) + " --json --repro-dir ''");
      EXPECT_EQ(out.exit_status, 0) << out.output;
      return json::parse(out.output)["keys"];
    };
    const json watch = keys_of("shards-herd-watch");
    const json queue = keys_of("shards-herd-queue");
    for (const json* keys : {&watch, &queue}) {
      EXPECT_GT((*keys)["removals"].get<int64_t>(), 0);
      EXPECT_EQ((*keys)["owned_at_end"], (*keys)["keys"]);
    }
    EXPECT_EQ(watch["removal_wakeups"].get<int64_t>(), 20 * watch["removals"].get<int64_t>());
    EXPECT_EQ(queue["removal_wakeups"], queue["removals"]);
  }
}

TEST(SummaryJson, RunJsonIsOneObjectThatSatisfiesItsSchema) {
  const electsim_test::Outcome out = electsim_test::RunCombined(
      "run " + std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/raft-leader-crash.json --json --repro-dir ''");
  ASSERT_EQ(out.exit_status, 0) << out.output;
  const json summary = json::parse(out.output);  // nothing but the object (and a newline)
  EXPECT_TRUE(SatisfiesSummarySchema(summary)) << summary.dump(2);
  EXPECT_EQ(summary["algorithm"], "raft");
  EXPECT_EQ(summary["end_ns"], 10'000'000'000);
  EXPECT_EQ(summary["expectations_met"], true);
  ASSERT_EQ(summary["elections"].size(), 2u);
  const json& crash = summary["elections"][1];
  EXPECT_EQ(crash["cause"], "leader crashed");
  EXPECT_EQ(crash["started_ns"], 3'000'000'000);
  EXPECT_EQ(crash["known_latency_ns"].get<int64_t>(),
            crash["known_ns"].get<int64_t>() - crash["started_ns"].get<int64_t>());
  EXPECT_LE(crash["detection_latency_ns"].get<int64_t>(), crash["election_latency_ns"].get<int64_t>());
  const json& messages = summary["messages"];
  EXPECT_EQ(messages["election"].get<uint64_t>() + messages["steady_state"].get<uint64_t>() +
                messages["application"].get<uint64_t>(),
            messages["sent"].get<uint64_t>());
  // The schema can fail: a summary without its verdict does not satisfy it.
  json broken = summary;
  broken.erase("expectations_met");
  EXPECT_FALSE(SatisfiesSummarySchema(broken));
}

}  // namespace
