// `electsim bench` end to end: bad flags, common random numbers, outputs
// that do not depend on --jobs, and what the measured times mean.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/bench_scenarios.h"
#include "tools/electsim/export/bench_report.h"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/schema.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validator.hpp"

namespace {

using electsim_test::Outcome;
using electsim_test::ReadWholeFile;
using electsim_test::RunCombined;

class BenchTest : public electsim_test::TempDirTest {};

// The CSV as rows of named fields.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  const std::vector<std::vector<std::string>> lines = electsim_test::ParseCsv(ReadWholeFile(path));
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  const std::vector<std::string>& header = lines.front();
  for (size_t r = 1; r < lines.size(); ++r) {
    const std::vector<std::string>& fields = lines[r];
    EXPECT_EQ(fields.size(), header.size()) << r;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

TEST_F(BenchTest, BadFlags_ExitTwoWithAPreciseMessage) {
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"--algorithms raft,paxos", "--algorithms: unknown algorithm \"paxos\"; expected one of"},
      {"--trials 0", "expected a number of trials above 0"},
      {"--trials -3", "expected a number of trials above 0"},
      {"--preset nope", "--preset: unknown preset \"nope\"; expected one of equal-detection, etcd"},
      {"--fault meteor", "--fault: unknown fault \"meteor\""},
      {"--algorithms raft,bully --set algorithm.options.pre_vote=true", "--set algorithm.options.pre_vote=true: "},
      {"--sweep warp_factor=1..9", "--sweep: unknown parameter \"warp_factor\""},
      {"--sweep nodes=x",
       "--sweep nodes=x: expected an integer for nodes; expected PARAM=FROM..TO[:POINTS] or PARAM=VALUE"},
      {"--algorithms raft --sweep nodes=3..4 --nodes 7", "--nodes: --sweep nodes=... sets the cluster size"},
      // Key faults are for owners of keys, leader faults for leaders.
      {"--algorithms raft --fault replica-crash",
       "--fault replica-crash: algorithm \"raft\" elects one leader, it owns no keys; expected crash-leader"},
      {"--algorithms shards --fault crash-leader",
       "--fault crash-leader: algorithm \"shards\" has owners of keys, not one leader; expected replica-crash"},
      // A trial's verdict is bench's own (no violation), as its --run-seed's is.
      {"--algorithms raft --set 'expect={\"violations\":[\"election_safety\"]}'",
       "bench decides expect with its own verdict"},
      {"--algorithms raft --set faults.0.at=1s", "bench decides faults with --fault"},
      {"--algorithms shards --fault store-slowdown --set algorithm.options.store_slowdown_at=1s",
       "--set algorithm.options.store_slowdown_at=1s: bench sets algorithm.options.store_slowdown_at with --fault"},
  };
  // Trials beyond what bench keeps in memory, per configuration or in all.
  const Outcome too_many = RunCombined("bench --trials 1000001 --jobs 1");
  EXPECT_EQ(too_many.exit_status, 2) << too_many.output;
  EXPECT_NE(too_many.output.find("expected a number of trials above 0"), std::string::npos) << too_many.output;
  const Outcome too_many_in_all = RunCombined("bench --trials 600000 --algorithms raft,bully --jobs 1");
  EXPECT_EQ(too_many_in_all.exit_status, 2) << too_many_in_all.output;
  EXPECT_NE(too_many_in_all.output.find("600000 trials for each of 2 configurations is more than 1000000 in all"),
            std::string::npos)
      << too_many_in_all.output;
  for (const auto& c : cases) {
    const Outcome outcome = RunCombined("bench --trials 2 --jobs 1 " + c.args);
    EXPECT_EQ(outcome.exit_status, 2) << c.args << "\n" << outcome.output;
    EXPECT_NE(outcome.output.find(c.message), std::string::npos) << c.args << "\n" << outcome.output;
    EXPECT_EQ(Names(dir_), std::vector<std::string>{});
  }
  // The option the algorithm lacks is named, with the path the loader checked.
  const Outcome lacking = RunCombined("bench --trials 2 --algorithms bully --set algorithm.options.pre_vote=true");
  EXPECT_NE(lacking.output.find("/algorithm/options"), std::string::npos) << lacking.output;
}

TEST_F(BenchTest, NodesModelOverride_DelaysEveryElection) {
  // Raft syncs its term and vote before it answers a vote request, so a
  // persist latency lengthens each election by at least one sync.
  const std::string plain_csv = (dir_ / "plain.csv").string();
  const std::string slow_csv = (dir_ / "slow.csv").string();
  ASSERT_EQ(RunCombined("bench --algorithms raft --trials 5 --jobs 1 --csv " + plain_csv).exit_status, 0);
  const Outcome slow =
      RunCombined("bench --algorithms raft --trials 5 --jobs 1 --set nodes_model.persist=20ms --csv " + slow_csv);
  ASSERT_EQ(slow.exit_status, 0) << slow.output;
  const auto plain = ReadCsv(plain_csv);
  const auto slowed = ReadCsv(slow_csv);
  ASSERT_EQ(plain.size(), 5u);
  ASSERT_EQ(slowed.size(), 5u);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_GE(std::stoll(slowed[i].at("election_ns")), std::stoll(plain[i].at("election_ns")) + 20000000) << i;
    // Labels say what ran: the --set is in every row, and in no row without it.
    EXPECT_EQ(slowed[i].at("set"), "nodes_model.persist=20ms") << i;
    EXPECT_EQ(plain[i].at("set"), "") << i;
  }
  EXPECT_NE(slow.output.find("fault crash-leader, 5 nodes, preset none, --set nodes_model.persist=20ms, seeds 1..5"),
            std::string::npos)
      << slow.output;
  // A value with commas and quotes stays one CSV field (RFC 4180 quoting).
  const std::string json_path = (dir_ / "two.json").string();
  const std::string csv_path = (dir_ / "two.csv").string();
  const std::string latency = R"(network.latency.uniform=["5ms","6ms"])";
  ASSERT_EQ(RunCombined("bench --algorithms raft --trials 2 --jobs 1 --set nodes_model.persist=20ms --set '" + latency +
                        "' --json " + json_path + " --csv " + csv_path)
                .exit_status,
            0);
  const nlohmann::json two = nlohmann::json::parse(ReadWholeFile(json_path));
  EXPECT_EQ(two["set"], nlohmann::json::array({"nodes_model.persist=20ms", latency})) << two.dump();
  EXPECT_EQ(two["results"][0]["set"], "nodes_model.persist=20ms;" + latency) << two.dump();
  const auto two_rows = ReadCsv(csv_path);
  ASSERT_EQ(two_rows.size(), 2u);
  EXPECT_EQ(two_rows[0].at("set"), "nodes_model.persist=20ms;" + latency);
  EXPECT_EQ(two_rows[0].at("trial"), "0");
  // How long a leader fault's trial runs is bench's: it stops at the failover.
  const Outcome duration = RunCombined("bench --algorithms raft --trials 2 --jobs 1 --set duration=1s");
  EXPECT_EQ(duration.exit_status, 2) << duration.output;
  EXPECT_NE(duration.output.find("--set duration=1s: bench ends a crash-leader trial once every node knows the new "
                                 "leader, at most at its stop.max; expected --set stop.max=... to bound it instead"),
            std::string::npos)
      << duration.output;
  const Outcome bad = RunCombined("bench --trials 2 --jobs 1 --set nodes_model.persist=soon");
  EXPECT_EQ(bad.exit_status, 2) << bad.output;
  EXPECT_NE(bad.output.find("/nodes_model/persist"), std::string::npos) << bad.output;
}

TEST_F(BenchTest, SameConfigurationTwice_PairedDifferencesExactlyZero) {
  const std::string csv = (dir_ / "trials.csv").string();
  const Outcome outcome = RunCombined("bench --algorithms raft,raft --trials 20 --jobs 2 --csv " + csv);
  ASSERT_EQ(outcome.exit_status, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("20 pairs: 0.0 ± 0.0 (unpaired ± "), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("paired/unpaired CI width 0.00)"), std::string::npos) << outcome.output;
  const auto rows = ReadCsv(csv);
  ASSERT_EQ(rows.size(), 40u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(rows[i].at("known_ns"), rows[20 + i].at("known_ns"));
    EXPECT_EQ(rows[i].at("failover_messages"), rows[20 + i].at("failover_messages"));
    EXPECT_FALSE(rows[i].at("known_ns").empty());
  }
}

// The lines under each configuration's rows (split votes, trials with no new
// leader, the old leader back, those left out) say what the figures leave
// out: a Markdown table, made for a design document, must carry them too,
// under the table, each named by its configuration, and nothing may break
// the table.
// A trial whose fault found no leader to strike (none ever elected, here
// under total loss) had no failover: it is counted as such, not as a
// failover that found no new leader.
TEST_F(BenchTest, Notes_ATrialWithNoLeaderToStrikeIsNotAFailedFailover) {
  const Outcome lost = RunCombined("bench --algorithms raft,lease --trials 3 --set network.drop=1");
  ASSERT_EQ(lost.exit_status, 0) << lost.output;
  EXPECT_EQ(lost.output.find("no new leader known by the end: 3"), std::string::npos) << lost.output;
  size_t notes = 0;
  for (size_t at = 0; (at = lost.output.find("no new leader known by the end: 0; old leader back after the fault: 0; "
                                             "no leader for the fault to strike (nothing measured): 3;",
                                             at)) != std::string::npos;
       ++at) {
    ++notes;
  }
  EXPECT_EQ(notes, 2u) << lost.output;
  const Outcome usual = RunCombined("bench --algorithms raft --trials 3");
  ASSERT_EQ(usual.exit_status, 0) << usual.output;
  EXPECT_EQ(usual.output.find("no leader for the fault to strike"), std::string::npos) << usual.output;
}

TEST_F(BenchTest, Markdown_KeepsEveryConfigurationsNoteUnderAnUnbrokenTable) {
  for (const char* fault_name : {"isolate-leader", "replica-crash"}) {
    const std::string fault = fault_name;
    const std::string algorithms = fault == "replica-crash" ? "shards" : "raft,bully";
    const std::string flags = "bench --algorithms " + algorithms + " --fault " + fault + " --trials 4 --jobs 2";
    const Outcome text = RunCombined(flags);
    const Outcome markdown = RunCombined(flags + " --format markdown");
    ASSERT_EQ(text.exit_status, 0) << text.output;
    ASSERT_EQ(markdown.exit_status, 0) << markdown.output;
    // Text: a note is a line indented past the first columns.
    std::vector<std::string> notes;
    std::istringstream text_lines(text.output);
    for (std::string line; std::getline(text_lines, line);) {
      if (line.starts_with("          ") && line.find_first_not_of(' ') != std::string::npos) {
        notes.push_back(line.substr(line.find_first_not_of(' ')));
      }
    }
    ASSERT_EQ(notes.size(), algorithms == "shards" ? 1u : 2u) << text.output;
    std::vector<std::string> markdown_notes;
    std::istringstream markdown_lines(markdown.output);
    bool in_table = false, table_ended = false;
    for (std::string line; std::getline(markdown_lines, line);) {
      // No sweep: no value column.
      EXPECT_FALSE(line.starts_with("| value |")) << line;
      if (line.starts_with("| algorithm |")) in_table = true;
      if (in_table && !line.starts_with("|")) {
        in_table = false;
        table_ended = true;
        EXPECT_EQ(line, "") << "the table ends at a blank line:\n" << markdown.output;
      }
      if (line.starts_with("- ") && line.find(" pairs: ") == std::string::npos) markdown_notes.push_back(line);
    }
    EXPECT_TRUE(table_ended) << markdown.output;
    ASSERT_EQ(markdown_notes.size(), notes.size()) << markdown.output;
    const std::vector<std::string> names =
        algorithms == "shards" ? std::vector<std::string>{"shards"} : std::vector<std::string>{"raft", "bully"};
    for (size_t i = 0; i < notes.size(); ++i) EXPECT_EQ(markdown_notes[i], "- " + names[i] + ": " + notes[i]);
  }
}

TEST_F(BenchTest, Seeds_RunTheTrialsThatTrialsFromSeedRun) {
  // --seeds as sweep and fuzz take it: a range, or a number from --seed on.
  const std::string common = "bench --algorithms raft,bully --jobs 1 ";
  const std::string by_trials = (dir_ / "by-trials.csv").string();
  const std::string by_range = (dir_ / "by-range.csv").string();
  const std::string by_count = (dir_ / "by-count.csv").string();
  const Outcome trials = RunCombined(common + "--seed 5 --trials 3 --csv " + by_trials);
  ASSERT_EQ(trials.exit_status, 0) << trials.output;
  const Outcome range = RunCombined(common + "--seeds 5..7 --csv " + by_range);
  ASSERT_EQ(range.exit_status, 0) << range.output;
  const Outcome count = RunCombined(common + "--seed 5 --seeds 3 --csv " + by_count);
  ASSERT_EQ(count.exit_status, 0) << count.output;
  EXPECT_EQ(ReadWholeFile(by_range), ReadWholeFile(by_trials));
  EXPECT_EQ(ReadWholeFile(by_count), ReadWholeFile(by_trials));
  EXPECT_EQ(ReadCsv(by_range).size(), 3u * 2);
  EXPECT_NE(range.output.find("seeds 5..7 (3 trials per row)"), std::string::npos) << range.output;
  // From seed 1 when --seed is not given, as --trials counts.
  const Outcome from_one = RunCombined(common + "--seeds 2");
  EXPECT_NE(from_one.output.find("seeds 1..2 (2 trials per row)"), std::string::npos) << from_one.output;

  const struct {
    std::string args;
    std::string message;
  } refused[] = {
      {"--seeds 3 --trials 4", "--trials: --seeds 3 says which trials run; expected one of --seeds and --trials"},
      {"--seeds 3..4 --seed 2", "--seed: --seeds 3..4 names its own first seed"},
      {"--seeds 9..3", "--seeds: expected A..B with A <= B"},
      {"--seeds 0", "--seeds: expected at least 1 seed"},
      {"--algorithms raft,bully --seeds 1..600000",
       "--seeds: 600000 trials for each of 2 configurations is more than 1000000 in all"},
      {"--algorithms raft --seeds 2 --run-seed 3", "--run-seed: runs the one trial of its seed; expected no --seeds"},
  };
  for (const auto& c : refused) {
    const Outcome outcome = RunCombined("bench --jobs 1 --csv " + (dir_ / "refused.csv").string() + " " + c.args);
    EXPECT_EQ(outcome.exit_status, 2) << c.args << "\n" << outcome.output;
    EXPECT_NE(outcome.output.find(c.message), std::string::npos) << c.args << "\n" << outcome.output;
    EXPECT_EQ(Names(dir_), (std::vector<std::string>{"by-count.csv", "by-range.csv", "by-trials.csv"})) << c.args;
  }
}

TEST_F(BenchTest, DifferentJobs_IdenticalCsvAndJson) {
  const std::string one = (dir_ / "one.csv").string(), two = (dir_ / "two.csv").string();
  const std::string one_json = (dir_ / "one.json").string(), two_json = (dir_ / "two.json").string();
  const std::string common = "bench --trials 12 --fault lossy --sweep nodes=3..5 ";
  // Bully breaks invariants under loss (exit 1); both runs find the same.
  const int one_exit = RunCombined(common + "--jobs 1 --csv " + one + " --json " + one_json).exit_status;
  ASSERT_LE(one_exit, 1);
  ASSERT_EQ(RunCombined(common + "--jobs 3 --csv " + two + " --json " + two_json).exit_status, one_exit);
  EXPECT_EQ(ReadWholeFile(one), ReadWholeFile(two));
  EXPECT_EQ(ReadWholeFile(one_json), ReadWholeFile(two_json));
  EXPECT_EQ(ReadCsv(one).size(), 12u * 4 * 3);
}

TEST_F(BenchTest, CtrlC_KeepsTheTrialsThatFinishedInWholeFiles) {
  const std::string csv = (dir_ / "t.csv").string(), json_path = (dir_ / "t.json").string();
  electsim_test::ElectsimProcess bench(
      {"bench", "--algorithms", "raft", "--trials", "1000000", "--jobs", "2", "--csv", csv, "--json", json_path});
  // Off a terminal, progress is a log line at 16, 32, 64, ... trials.
  ASSERT_TRUE(bench.WaitForError("bench: 32/1000000 trials")) << bench.err();
  ASSERT_EQ(kill(bench.pid(), SIGINT), 0);
  EXPECT_EQ(bench.Wait(), 130) << bench.err();
  EXPECT_NE(bench.out().find("interrupted: the table and files cover the trials that finished"), std::string::npos)
      << bench.out();
  // The files hold the trials the table counts. Workers finish out of seed
  // order, so that may be fewer than the last progress line said (14 of 32
  // on a loaded machine), but never none.
  const auto rows = ReadCsv(csv);
  std::smatch counted;
  ASSERT_TRUE(std::regex_search(bench.out(), counted, std::regex("raft +detection +([0-9]+) "))) << bench.out();
  EXPECT_EQ(rows.size(), std::stoul(counted[1].str())) << bench.out();
  EXPECT_GE(rows.size(), 1u);
  for (const auto& row : rows) EXPECT_FALSE(row.at("known_ns").empty());
  const nlohmann::json document = nlohmann::json::parse(ReadWholeFile(json_path));
  EXPECT_EQ(document["results"].size(), rows.size());
  // The header and the JSON count the trials that ran, and say they are
  // fewer than those asked for.
  EXPECT_EQ(document["trials_per_configuration"], rows.size());
  EXPECT_EQ(document["trials_requested"], 1000000);
  EXPECT_EQ(document["complete"], false);
  EXPECT_NE(bench.out().find(fmt::format("seeds 1..{0} ({0} of 1000000 trials per row: interrupted)", rows.size())),
            std::string::npos)
      << bench.out();
}

// Raft with timeouts in [150ms, 300ms], heartbeats every 50ms and links of
// 1-10ms, its leader crashed: a follower acts when its timer runs out, which
// it last restarted on a heartbeat sent at most 50ms before the crash, so
// detection lies within [100ms, 310ms]; election and knowledge follow it.
TEST_F(BenchTest, CrashLeader_TimesFollowTheirDefinitions) {
  const std::string csv = (dir_ / "raft.csv").string();
  ASSERT_EQ(RunCombined("bench --algorithms raft --trials 30 --csv " + csv).exit_status, 0);
  for (const auto& row : ReadCsv(csv)) {
    EXPECT_EQ(row.at("violations"), "");
    const int64_t detection = std::stoll(row.at("detection_ns"));
    const int64_t election = std::stoll(row.at("election_ns"));
    const int64_t known = std::stoll(row.at("known_ns"));
    EXPECT_GE(detection, 100'000'000);
    EXPECT_LE(detection, 310'000'000);
    EXPECT_LE(detection, election);
    EXPECT_LE(election, known);
    // A candidate's vote requests alone are four messages.
    EXPECT_GE(std::stoll(row.at("failover_messages")), 4);
  }
}

// A Raft failover with no timeout spread splits the vote again and again; a
// wide spread rarely does. failover_terms counts the rounds.
TEST_F(BenchTest, CrashLeader_FailoverTermsCountTheSplitVotes) {
  auto split_votes = [&](const std::string& max) {
    const std::string csv = (dir_ / ("raft-" + max + ".csv")).string();
    const Outcome outcome = RunCombined(
        "bench --algorithms raft --trials 40 --set algorithm.options.election_timeout_max=" + max + " --csv " + csv);
    EXPECT_EQ(outcome.exit_status, 0) << outcome.output;
    EXPECT_NE(outcome.output.find("more than one term (split votes): "), std::string::npos) << outcome.output;
    int split = 0;
    for (const auto& row : ReadCsv(csv)) {
      if (row.at("failover_terms").empty()) continue;
      const int64_t terms = std::stoll(row.at("failover_terms"));
      EXPECT_GE(terms, 1);
      split += terms > 1;
    }
    return split;
  };
  const int narrow = split_votes("151ms");
  const int wide = split_votes("300ms");
  EXPECT_GT(narrow, wide);
  EXPECT_GE(narrow, 10);
}

TEST(BenchSweep, Points_EvenlySpacedAndExact) {
  auto timeouts = electsim::ParseSweep("election_timeout_max=150ms..300ms:6", {"raft"});
  ASSERT_TRUE(timeouts.ok()) << timeouts.status();
  std::vector<std::string> labels;
  for (const auto& p : timeouts->points) labels.push_back(p.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"150ms", "180ms", "210ms", "240ms", "270ms", "300ms"}));
  auto nodes = electsim::ParseSweep("nodes=3..9", {"raft"});
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->points.size(), 7u);
  auto drop = electsim::ParseSweep("drop=0..0.2:5", {"raft"});
  ASSERT_TRUE(drop.ok());
  EXPECT_EQ(drop->points[1].label, "0.05");
  EXPECT_FALSE(electsim::ParseSweep("nodes=3..x", {"raft"}).ok());
  EXPECT_FALSE(electsim::ParseSweep("nodes=3..9:1", {"raft"}).ok());
}

// PARAM=VALUE, what a swept row's reproduce line gives: that one point,
// labelled as the row was.
TEST(BenchSweep, Points_OneValueIsOnePoint) {
  for (const auto& [text, label] : std::vector<std::pair<std::string, std::string>>{
           {"drop=0.2", "0.2"}, {"election_timeout_max=180ms", "180ms"}, {"nodes=7", "7"}, {"drop=0.1..0.1", "0.1"}}) {
    auto one = electsim::ParseSweep(text, {"raft"});
    ASSERT_TRUE(one.ok()) << text << ": " << one.status();
    ASSERT_EQ(one->points.size(), 1u) << text;
    EXPECT_EQ(one->points[0].label, label) << text;
  }
  EXPECT_FALSE(electsim::ParseSweep("drop=", {"raft"}).ok());
  EXPECT_FALSE(electsim::ParseSweep("drop=x", {"raft"}).ok());
}

// bench --json against scenarios/schema/bench.schema.json, for every fault;
// and the schema's result fields are the CSV's columns, one name each.
TEST_F(BenchTest, Json_MatchesItsSchemaForEveryFault) {
  const nlohmann::json schema_doc =
      nlohmann::json::parse(ReadWholeFile(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/schema/bench.schema.json"));
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  std::vector<std::string> names;
  for (const auto& [name, unused] : schema_doc["properties"]["results"]["items"]["properties"].items()) {
    names.push_back(name);
  }
  std::vector<std::string> columns;
  for (const electsim::CsvColumn& column : electsim::BenchCsvColumns()) columns.push_back(column.name);
  std::sort(names.begin(), names.end());
  std::sort(columns.begin(), columns.end());
  EXPECT_EQ(names, columns);
  for (const char* fault :
       {"crash-leader", "isolate-leader", "pause-leader", "lossy", "replica-crash", "replica-cut", "store-slowdown"}) {
    const std::string path = (dir_ / fmt::format("{}.json", fault)).string();
    const std::string algorithms = electsim::IsKeyFault(fault) ? "shards,shards" : "raft,bully";
    // 1 where a trial broke an invariant (Bully under loss): the file is written.
    ASSERT_LE(RunCombined(fmt::format("bench --algorithms {} --fault {} --trials 6 --json {}", algorithms, fault, path))
                  .exit_status,
              1);
    const nlohmann::json document = nlohmann::json::parse(ReadWholeFile(path));
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    EXPECT_TRUE(validator.validate(schema, adapter, &results)) << fault << ": " << results.numErrors() << " errors";
    EXPECT_EQ(document["results"].size(), 12u);
    EXPECT_EQ(document["complete"], true);
    EXPECT_EQ(document["trials_requested"], 6);
  }
}

// Owners of keys (shards, 200 keys, fair shares over 5 replicas): replica
// 0's crash leaves its 40 keys without an owner until their leases run out
// (a TTL of 1 s after the last renewal, at most 333 ms before the crash) and
// the next owner claims each, within a renewal period past the TTL (shares
// grow once replica 0's member lease has run out too); the others then hold
// 50 each, and every removal woke all 5 watchers. A store
// slowed to half the renewals' rate lets leases expire in a cascade: more
// keys lose their owner than the one replica held, for longer.
TEST_F(BenchTest, KeyFaults_ReplicaCrashAndStoreSlowdownMeasureTheKeys) {
  const auto rows_of = [&](const std::string& fault) {
    const std::string csv = (dir_ / (fault + ".csv")).string();
    const Outcome out = RunCombined("bench --algorithms shards --fault " + fault +
                                    " --trials 4 --set algorithm.options.keys=200 --set algorithm.options.policy=fair"
                                    " --csv " +
                                    csv);
    EXPECT_EQ(out.exit_status, 0) << out.output;
    EXPECT_NE(out.output.find("wake-ups per removal"), std::string::npos) << out.output;
    return ReadCsv(csv);
  };
  const auto crash = rows_of("replica-crash");
  ASSERT_EQ(crash.size(), 4u);
  for (const auto& row : crash) {
    EXPECT_EQ(row.at("violations"), "");
    EXPECT_EQ(row.at("keys"), "200");
    EXPECT_EQ(row.at("ownership_gaps"), "40");
    EXPECT_GE(std::stoll(row.at("gap_p50_ns")), 1'000'000'000 - 333'000'000);
    EXPECT_LE(std::stoll(row.at("gap_max_ns")), 1'000'000'000 + 333'000'000);
    EXPECT_EQ(row.at("min_per_replica"), "50");
    EXPECT_EQ(row.at("max_per_replica"), "50");
    EXPECT_EQ(row.at("unowned_at_end"), "0");
    EXPECT_EQ(std::stoll(row.at("removal_wakeups")), 5 * std::stoll(row.at("removals")));
    EXPECT_EQ(row.at("known_ns"), "");  // no single leader's failover is measured
  }
  const auto slowdown = rows_of("store-slowdown");
  ASSERT_EQ(slowdown.size(), 4u);
  for (const auto& row : slowdown) {
    EXPECT_GT(std::stoll(row.at("ownership_gaps")), 40);
    EXPECT_GT(std::stoll(row.at("gap_p50_ns")), 1'000'000'000);
    EXPECT_EQ(row.at("unowned_at_end"), "0");
  }
}

// Every preset times the shards workload as it does the lease: its renewal
// period and TTL (the algorithm's bench timing), so the gap after a crash
// is at most the preset's TTL plus a retry. Fair shares, so that replica 0
// holds keys in every trial.
TEST_F(BenchTest, KeyFaults_EveryPresetTimesTheShardsLeases) {
  const std::map<std::string, int64_t> ttl_ms = {
      {"equal-detection", 300}, {"etcd", 1000}, {"hashicorp", 1000}, {"kubernetes-lease", 15000}, {"zookeeper", 4000}};
  for (const auto& [preset, ttl] : ttl_ms) {
    SCOPED_TRACE(preset);
    const std::string csv = (dir_ / (preset + ".csv")).string();
    const Outcome out = RunCombined("bench --algorithms shards --fault replica-crash --trials 2 --preset " + preset +
                                    " --set algorithm.options.policy=fair --csv " + csv);
    ASSERT_EQ(out.exit_status, 0) << out.output;
    const auto rows = ReadCsv(csv);
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) {
      EXPECT_GT(std::stoll(row.at("ownership_gaps")), 0);
      EXPECT_LE(std::stoll(row.at("gap_max_ns")), (ttl + 2000) * 1'000'000);
      EXPECT_GE(std::stoll(row.at("gap_max_ns")), ttl * 1'000'000 / 2);
    }
  }
}

// README documents every CSV column.
TEST(BenchCsv, EveryColumnIsDocumented) {
  const std::string readme = ReadWholeFile(std::string(ELECTSIM_SOURCE_DIR) + "/README.md");
  for (const electsim::CsvColumn& column : electsim::BenchCsvColumns()) {
    EXPECT_NE(readme.find(fmt::format("| `{}` |", column.name)), std::string::npos) << column.name;
  }
}

// etcd's timing, the leader cut off: Raft's failover lies between the
// election timeout's minimum (1 s) and two of its maxima plus a heartbeat
// (2 × 2 s + 100 ms), and no node detects after the election.
TEST_F(BenchTest, EtcdIsolate_RaftFailoverWithinItsTimeouts) {
  const std::string csv = (dir_ / "etcd.csv").string();
  ASSERT_EQ(
      RunCombined("bench --algorithms raft --preset etcd --fault isolate-leader --trials 40 --csv " + csv).exit_status,
      0);
  std::vector<int64_t> known;
  for (const auto& row : ReadCsv(csv)) {
    ASSERT_FALSE(row.at("known_ns").empty());
    EXPECT_LE(std::stoll(row.at("detection_ns")), std::stoll(row.at("election_ns")));
    EXPECT_LE(std::stoll(row.at("election_ns")), std::stoll(row.at("known_ns")));
    known.push_back(std::stoll(row.at("known_ns")));
  }
  ASSERT_EQ(known.size(), 40u);
  std::sort(known.begin(), known.end());
  const int64_t p50 = known[19];
  EXPECT_GE(p50, 1'000'000'000);
  EXPECT_LE(p50, 4'100'000'000);
}

// One option changed (heartbeats every 50 ms against 60 ms), the same
// seeds: the paired CI is at most half the unpaired one.
TEST_F(BenchTest, OneOptionChanged_PairedCiAtMostHalfTheUnpaired) {
  const Outcome outcome =
      RunCombined("bench --algorithms raft --sweep heartbeat_interval=50ms..60ms:2 --trials 1000 --jobs 2");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(outcome.output, match, std::regex("paired/unpaired CI width ([0-9.]+)")))
      << outcome.output;
  EXPECT_LE(std::stod(match[1].str()), 0.5) << outcome.output;
}

// Statistics the trials cannot support are not printed, and trials that
// broke an invariant are counted apart, not averaged in.
TEST_F(BenchTest, Statistics_PercentilesNeedTheirTrialsAndViolationsAreLeftOut) {
  const Outcome few = RunCombined("bench --algorithms raft --trials 5");
  ASSERT_EQ(few.exit_status, 0) << few.output;
  EXPECT_TRUE(std::regex_search(few.output, std::regex(R"(raft +detection +5 +[0-9.]+ +— +— )"))) << few.output;
  const Outcome buggy = RunCombined("bench --algorithms raft --trials 30 --set algorithm.options.bug=vote_twice");
  // A bench trial expects no violation, as its --run-seed judges it: found, exit 1.
  ASSERT_EQ(buggy.exit_status, 1) << buggy.output;
  std::smatch left_out, counted;
  ASSERT_TRUE(std::regex_search(buggy.output, left_out, std::regex(R"(with a violation \(left out\): (\d+))")));
  ASSERT_TRUE(std::regex_search(buggy.output, counted, std::regex(R"(raft +detection +(\d+) )")));
  EXPECT_GT(std::stoi(left_out[1].str()), 0) << buggy.output;
  EXPECT_EQ(std::stoi(counted[1].str()) + std::stoi(left_out[1].str()), 30) << buggy.output;
  EXPECT_NE(buggy.output.find(fmt::format("failed: {} of 30 trials broke an invariant (raft {})", left_out[1].str(),
                                          left_out[1].str())),
            std::string::npos)
      << buggy.output;
  EXPECT_EQ(few.output.find("failed:"), std::string::npos) << few.output;
}

// A reader that closes the pipe ends bench as SIGPIPE ends any command
// (141), even though bench catches it to stop its trials cleanly.
// Standard output is a pipe whose reading end is closed before bench starts:
// `bench | true` raced, as bench could write all it had before true exited.
TEST_F(BenchTest, ClosedPipe_ExitsAsSigpipe) {
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  close(pipe_ends[0]);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(pipe_ends[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    signal(SIGPIPE, SIG_DFL);  // as a shell starts it
    execl(ELECTSIM_BINARY, ELECTSIM_BINARY, "bench", "--algorithms", "raft", "--trials", "50", "--jobs", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_ends[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // 128 + SIGPIPE, as the shell reports either: an exit with that status, or death by the signal.
  const bool as_sigpipe = (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGPIPE) ||
                          (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE);
  EXPECT_TRUE(as_sigpipe) << "status " << status;
}

// A swept option the preset also sets runs the sweep's value: the header says
// so, where it would otherwise name the preset alone.
TEST_F(BenchTest, Header_SaysWhenTheSweepReplacesThePresetsValue) {
  const Outcome replaced = RunCombined(
      "bench --algorithms raft --preset etcd --trials 2 --jobs 1 --sweep election_timeout_min=500ms..900ms:2");
  ASSERT_EQ(replaced.exit_status, 0) << replaced.output;
  EXPECT_NE(replaced.output.find("preset etcd, seeds 1..2 (2 trials per row), sweep over election_timeout_min (in "
                                 "place of the preset's value)"),
            std::string::npos)
      << replaced.output;
  const Outcome plain =
      RunCombined("bench --algorithms raft --trials 2 --jobs 1 --sweep election_timeout_min=100ms..200ms:2");
  ASSERT_EQ(plain.exit_status, 0) << plain.output;
  EXPECT_NE(plain.output.find("sweep over election_timeout_min\n"), std::string::npos) << plain.output;
  // The lossy fault's loss is the drop a sweep of drop replaces.
  const Outcome lossy = RunCombined("bench --algorithms raft --fault lossy --trials 2 --jobs 1 --sweep drop=0..0.2:2");
  EXPECT_NE(lossy.output.find("sweep over drop (in place of the lossy fault's loss)\n"), std::string::npos)
      << lossy.output;
  // One trial's summary names the preset as the header does.
  const Outcome trial = RunCombined("bench --algorithms raft --preset etcd --run-seed 1");
  EXPECT_NE(trial.output.find("(bench raft crash-leader preset=etcd)\n"), std::string::npos) << trial.output;
  const Outcome calm = RunCombined("bench --algorithms raft --trials 2 --jobs 1 --sweep drop=0..0.2:2");
  EXPECT_NE(calm.output.find("sweep over drop\n"), std::string::npos) << calm.output;
}

}  // namespace
