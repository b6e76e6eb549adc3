// `electsim explain` through the binary, on the committed repros: what ran,
// why (chains ending at the fault step responsible, what faults cut or held
// up included), the violations in time order with their evidence, the
// leases, and the causal history. The trace indices an account cites are
// checked against the run's own JSON Lines trace.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"

namespace {

namespace fs = std::filesystem;
using electsim_test::Outcome;
using nlohmann::json;

// The first `count` lines of `text`.
std::string FirstLines(const std::string& text, int count) {
  size_t at = 0;
  for (int i = 0; i < count && at != std::string::npos; ++i) at = text.find('\n', at + 1);
  return text.substr(0, at);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  for (size_t end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(text.substr(at, end - at));
  return lines;
}

using electsim_test::CommittedRepro;

class ExplainTest : public electsim_test::TempDirTest {
 protected:
  Outcome Explain(const std::string& args) {
    const Outcome out = electsim_test::RunCombined("explain " + args);
    EXPECT_EQ(out.exit_status, 0) << out.output;
    return out;
  }
  // The repro's run as a JSON Lines trace, by trace index.
  std::map<uint64_t, json> Trace(const std::string& repro) {
    const std::string path = (dir_ / (repro + ".jsonl")).string();
    const Outcome out = electsim_test::RunCombined("replay " + CommittedRepro(repro) + " --trace " + path);
    EXPECT_EQ(out.exit_status, 0) << out.output;
    std::map<uint64_t, json> records;
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      json record = json::parse(line);
      const uint64_t index = record["i"];
      records[index] = std::move(record);
    }
    return records;
  }
  // Every fact must be in the first 12 lines.
  void ExpectFirstLinesSay(const std::string& output, const std::vector<std::string>& facts) {
    const std::string head = FirstLines(output, 12);
    for (const std::string& fact : facts) EXPECT_NE(head.find(fact), std::string::npos) << fact << "\n" << output;
  }
};

// The issue's example: node 1's election messages were cut by the partition,
// and the trace indices named are those drops.
TEST_F(ExplainTest, BullySplitBrain_NamesThePartitionAndTheElectionMessagesItCut) {
  const Outcome out = Explain(CommittedRepro("bully-partition-split-brain-seed1.repro.json"));
  ExpectFirstLinesSay(out.output,
                      {"node 1 timed out and became leader of epoch 1 at 0.100000s (trace #70) because its election "
                       "messages (bully.election) to nodes 2, 3 and 4 were cut by /faults/0 (partition at 0.000s) "
                       "(trace #52, #53 and #54)",
                       "node 1 and node 4 never heard from each other as leader: node 1's leader message "
                       "(bully.coordinator) to node 4 was cut by /faults/0 (partition at 0.000s) (trace #78); node "
                       "4's leader message (bully.coordinator) to node 1 was cut by /faults/0"});
  std::map<uint64_t, json> trace = Trace("bully-partition-split-brain-seed1.repro.json");
  for (const uint64_t drop : {52, 53, 54, 78}) {
    EXPECT_EQ(trace[drop]["kind"], "drop") << drop;
    EXPECT_EQ(trace[drop]["node"], 1) << drop;
    EXPECT_EQ(trace[drop]["detail"], "partition") << drop;
  }
  EXPECT_EQ(trace[89]["kind"], "drop");
  EXPECT_EQ(trace[89]["node"], 4);
  EXPECT_EQ(trace[89]["peer"], 1);
  EXPECT_EQ(trace[70]["type"], "role");
  EXPECT_EQ(trace[70]["fields"]["role"], "leader");
  // The drops are in the causal history too, marked x, though happened-before cannot reach them.
  EXPECT_NE(out.output.find(". x . . . .  node 1: -> node 2: bully.election cut by /faults/0 (sent 0.000000s)"),
            std::string::npos)
      << out.output;
}

// The stale write: the pause that held the write and what it held up, the
// lease the store expired because no keep-alive came, and the new holder.
TEST_F(ExplainTest, LeaseStaleWrite_NamesThePauseAndWhatItHeld) {
  const Outcome out = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json"));
  ExpectFirstLinesSay(
      out.output, {"node 2 began a write under token 1 at 2.005581s (trace #741) and was frozen by /faults/0 (pause "
                   "of node 2 at 2.005581s) until 5.005581s (3s); the write went out then; the resource accepted "
                   "it at 5.009913s (trace #1485), after token 3",
                   "/faults/0 also held 3 messages to node 2 until 5.005581s (store.event, store.reply; trace "
                   "#1457, #1474 and #1476)",
                   "the store expired node 2's lease at 3.006023s (trace #914): no store.keep_alive came from node "
                   "2 after 2.006023s: node 2 was paused by /faults/0 (pause of node 2 at 2.005581s)",
                   "node 1 turned candidate at 3.007511s on the store's store.event, got the store's store.reply "
                   "and became leader of term 3 at 3.013344s (trace #952)",
                   "resource: fencing off (it accepts any token)"});
  std::map<uint64_t, json> trace = Trace("lease-paused-holder-unfenced-seed1.repro.json");
  EXPECT_EQ(trace[741]["type"], "write_begin");
  for (const uint64_t held : {1457, 1474, 1476}) {
    EXPECT_EQ(trace[held]["kind"], "deliver") << held;
    EXPECT_EQ(trace[held]["node"], 2) << held;
    EXPECT_EQ(trace[held]["t"], 5005581487) << held;
  }
  EXPECT_EQ(trace[914]["type"], "store.event");
}

// The double vote of the skip_sync bug: the power loss between the votes
// and the second request, delayed by a slow link; the cuts that kept the
// two candidates apart.
TEST_F(ExplainTest, SkipSyncSplitBrain_NamesThePowerLossTheDelayedRequestAndTheCuts) {
  const Outcome out = Explain(CommittedRepro("raft-bug-skip-sync-power-loss-seed1.repro.json"));
  ExpectFirstLinesSay(
      out.output,
      {"node 2 voted twice in term 1 (bug=skip_sync):",
       "for node 0 at 0.302000s (trace #64): node 0 became leader of term 1 with it at 0.304000s (trace #72)",
       "then /faults/5 (power loss of node 2 at 0.350s) lost its 2 unsynced writes",
       "for node 1 at 0.450000s (trace #142), on node 1's raft.request_vote delayed by /faults/3 (latency 150ms from "
       "node 1 to node 2 at 0.000s) (sent 0.300000s, delivered 0.450000s; trace #136): node 1 became leader of term "
       "1 with it at 0.452000s (trace #148)",
       "its election message (raft.request_vote) to node 1 was cut by /faults/1 (cut from node 0 to node 1 at "
       "0.000s) (trace #44)"});
  std::map<uint64_t, json> trace = Trace("raft-bug-skip-sync-power-loss-seed1.repro.json");
  EXPECT_EQ(trace[136]["kind"], "deliver");
  EXPECT_EQ(trace[136]["type"], "raft.request_vote");
  EXPECT_EQ(trace[44]["kind"], "drop");
}

// vote_twice needs no fault to vote twice: the account says so, links the
// double vote to the two leaders it made, and says what the one fault step
// did (kept node 2 out of the race).
TEST_F(ExplainTest, VoteTwiceSplitBrain_LinksTheDoubleVoteToBothLeadersAndNamesTheStep) {
  const Outcome out = Explain(CommittedRepro("raft-bug-vote-twice-seed1.repro.json"));
  ExpectFirstLinesSay(
      out.output, {"ran: raft with bug=vote_twice (a deliberate bug)", "node 1 voted twice in term 1 (bug=vote_twice):",
                   "for node 1 (itself) at 0.300000s (trace #45): node 1 became leader of term 1 with it at "
                   "0.304000s (trace #100)",
                   "for node 0 at 0.302000s (trace #54): node 0 became leader of term 1 with it at 0.304000s "
                   "(trace #86)",
                   "nodes 0 and 1 timed out at the same instant, 0.300000s, and campaigned at once; node 2, down "
                   "from 0.000000s to 0.050000s by /faults/0 (crash of node 2 at 0.000s), had not timed out since",
                   "nothing it sent or awaited was cut, lost or delayed"});
}

// Every violation, in time order (not by checker name), each with evidence.
TEST_F(ExplainTest, Violations_AreInTimeOrderEachWithItsEvidence) {
  const Outcome out = Explain(CommittedRepro("raft-bug-vote-twice-seed1.repro.json"));
  const std::vector<std::string> lines = Lines(out.output);
  auto at = std::find(lines.begin(), lines.end(), "violations, in time order:");
  ASSERT_NE(at, lines.end()) << out.output;
  std::vector<std::string> checkers;
  std::string previous_time;
  for (++at; at != lines.end() && at->rfind("  ", 0) == 0; ++at) {
    if (at->rfind("    evidence: ", 0) == 0) continue;
    const std::string time = at->substr(2, at->find(' ', 2) - 2);
    EXPECT_LE(previous_time, time) << *at;  // equal widths: text order is time order
    previous_time = time;
    checkers.push_back(at->substr(3 + time.size(), at->find(' ', 3 + time.size()) - 3 - time.size()));
    ASSERT_NE(at + 1, lines.end());
    EXPECT_EQ((at + 1)->rfind("    evidence: ", 0), 0u) << *at << "\n" << out.output;
  }
  EXPECT_EQ(checkers, (std::vector<std::string>{"single_vote", "election_safety", "single_leader",
                                                "committed_agreement", "unique_token"}));
  EXPECT_NE(out.output.find("evidence: node 1's votes for node 1 at 0.300000s (trace #45) and for node 0 at 0.302000s "
                            "(trace #54); the leaders of term 1 they made: node 1 at 0.304000s (trace #100), node 0 at "
                            "0.304000s (trace #86)"),
            std::string::npos)
      << out.output;
  const Outcome stale = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json"));
  EXPECT_NE(
      stale.output.find("evidence: the stale write: node 2 under token 1, accepted at 5.009913s (trace #1485); the "
                        "holder it outlived: node 1 led term 3 with token 3 from 3.013344s (trace #952)"),
      std::string::npos)
      << stale.output;
}

// The header says what ran: a bug, the options changed, an unfenced
// resource, the checkers, the seed and the trace hash.
TEST_F(ExplainTest, Header_SaysTheBugTheChangedOptionsTheFencingAndTheCheckers) {
  const std::string scenario = Write("header.json", R"({
    "name": "header-check", "nodes": 3, "duration": "2s",
    "algorithm": {"name": "raft", "options": {"bug": "vote_twice", "election_timeout_min": "300ms",
                                              "election_timeout_max": "300ms", "pre_vote": true}},
    "resource": {"fencing": false},
    "network": {"latency": "2ms"},
    "faults": [{"at": "0s", "crash": 2, "for": "50ms"}],
    "checkers": ["election_safety", "single_vote"]
  })");
  const Outcome out = Explain(scenario + " --seed 7");
  const std::vector<std::string> lines = Lines(out.output);
  ASSERT_GE(lines.size(), 3u) << out.output;
  EXPECT_EQ(lines[0].rfind("explain: header-check (raft, 3 nodes), seed 7, 2s simulated, trace-hash 0x", 0), 0u)
      << out.output;
  EXPECT_EQ(lines[1],
            "  ran: raft with bug=vote_twice (a deliberate bug); options changed from the defaults: "
            "election_timeout_min=300ms, pre_vote=true");
  EXPECT_EQ(lines[2], "  resource: fencing off (it accepts any token); checkers on: election_safety, single_vote");
  const Outcome run = electsim_test::RunCombined("run " + scenario + " --seed 7 --repro-dir ''");
  EXPECT_NE(run.output.find("trace-hash: " + lines[0].substr(lines[0].find("trace-hash ") + 11)), std::string::npos)
      << run.output;

  const Outcome defaults = Explain(CommittedRepro("bully-partition-split-brain-seed1.repro.json"));
  EXPECT_EQ(Lines(defaults.output)[1], "  ran: bully with its default options");
  EXPECT_NE(Lines(defaults.output)[2].find("resource: fencing on (a token below the highest it accepted is rejected)"),
            std::string::npos);
}

// A clock fault on a node a lease violation involves cut no message, but it
// is where the holder's deadline and the store's expiry parted: the why
// names it, and no longer lists it as touching nothing. A wall-clock step
// moves only deadlines counted on the wall clock.
TEST_F(ExplainTest, Leases_AClockFaultOnTheHolderIsInTheWhyNotAmongTheUntouched) {
  const Outcome drift = Explain(electsim_test::ShippedScenario("lease-clock-drift-unfenced.json"));
  EXPECT_NE(drift.output.find("  node 2's clock was set to run 400000 ppm slow by /faults/0 (clock drift of node 2 at "
                              "1.000s) (trace #383): the lease deadlines it counts on its own clock part from the "
                              "store's expiries"),
            std::string::npos)
      << drift.output;
  EXPECT_EQ(drift.output.find("also applied, cutting or delaying none of the messages above: /faults/0"),
            std::string::npos)
      << drift.output;
  // A drift set back to 0 is its end, not a drift "0 ppm fast".
  json reset =
      json::parse(electsim_test::ReadWholeFile(electsim_test::ShippedScenario("lease-clock-drift-unfenced.json")));
  reset["faults"].push_back({{"at", "2.5s"}, {"clock", {{"node", 2}, {"drift_ppm", 0}}}});
  const Outcome ended = Explain(Write("reset.json", reset.dump()));
  EXPECT_NE(ended.output.find("  node 2's clock was set back to run at the true rate by /faults/3 (clock drift of "
                              "node 2 at 2.500s) (trace #"),
            std::string::npos)
      << ended.output;
  EXPECT_EQ(ended.output.find("0 ppm fast"), std::string::npos) << ended.output;
  const Outcome step = Explain(electsim_test::ShippedScenario("lease-clock-step-wall-deadline.json"));
  EXPECT_NE(step.output.find("  node 2's wall clock was stepped back 2s by /faults/0 (wall-clock step of node 2 at "
                             "2.000s) (trace #718): the lease deadlines it counts on the wall clock "
                             "(deadline_clock=wall) moved with it"),
            std::string::npos)
      << step.output;
  // Its lease is told on the wall clock: 2s later than the monotonic clock
  // would have it, where the trace has it step down (4.420581s).
  EXPECT_NE(step.output.find("  node 2, token 1: believed deadline 2.420581s on its wall clock (store.keep_alive sent "
                             "at 1.670581s, its grant received at 1.676028s); the store's expiry 2.674246s on its "
                             "clock (taken at 1.674246s); margin -1.746334s (on the simulation's clock: deadline "
                             "4.420581s, expiry 2.674246s)"),
            std::string::npos)
      << step.output;
  // With its deadlines on the monotonic clock, the same step moves none.
  json document =
      json::parse(electsim_test::ReadWholeFile(electsim_test::ShippedScenario("lease-clock-step-wall-deadline.json")));
  document["algorithm"]["options"]["deadline_clock"] = "monotonic";
  const Outcome monotonic = Explain(Write("monotonic.json", document.dump()));
  EXPECT_EQ(monotonic.output.find("wall clock was stepped"), std::string::npos) << monotonic.output;
  EXPECT_EQ(monotonic.output.find("on its wall clock"), std::string::npos) << monotonic.output;
}

// Steps armed together whose "during" moments come later, in another order:
// each crash is told as the step that made it (they were once matched to
// the latest step noted, in reverse).
TEST_F(ExplainTest, Faults_StepsArmedTogetherAreToldByTheRecordsEachMade) {
  const std::string scenario = Write("armed-together.json", R"({
    "nodes": 3, "duration": "5348ms", "seed": 14,
    "algorithm": {"name": "raft", "options": {"bug": "skip_log_check", "check_quorum": false,
      "election_timeout_max": "472ms", "election_timeout_min": "190ms", "heartbeat_interval": "58ms",
      "pre_vote": false}},
    "checkers": ["committed_agreement", "election_safety", "leader_completeness"],
    "faults": [
      {"at": "4330ms", "crash": "leader", "during": "write", "for": "1ms", "within": "3729ms"},
      {"at": "4330ms", "crash": {"next_leader": 1}, "during": "write", "for": "426ms", "within": "3729ms"},
      {"at": "4330ms", "crash": {"next_leader": 2}, "during": "write", "for": "1ms", "within": "3729ms"},
      {"at": "4330ms", "crash": {"next_leader": 3}, "during": "commit", "for": "1ms", "within": "3729ms"}]
  })");
  const Outcome out = Explain(scenario);
  EXPECT_NE(out.output.find("node 2 was down by /faults/1 (crash of node 2 at 4.598518s)"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("/faults/0 (crash of node 2 at 4.377172s)"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("/faults/2 (crash of node 1 at 4.812126s)"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("/faults/3 (crash of node 1 at 5.090600s)"), std::string::npos) << out.output;
}

constexpr std::string_view kBullyCrash = R"({
    "nodes": 3, "duration": "3s", "algorithm": "bully",
    "network": {"latency": {"uniform": ["1ms", "5ms"]}},
    "resource": {"fencing": false},
    "checkers": ["single_leader", "election_safety", "unique_token", "stale_token"],
    "faults": [{"at": "900ms", "network": {"latency": {"uniform": ["1ms", "400ms"]}}},
               {"at": "1s", "crash": "leader", "for": "250ms"}]
  })";

// stale_token and unique_token may name one accepted write: it is told once.
TEST_F(ExplainTest, Why_AWriteTwoCheckersNameIsToldOnce) {
  const std::string scenario = Write("bully-crash.json", std::string(kBullyCrash));
  const Outcome out = Explain(scenario + " --seed 6");
  const std::string line = "node 2 wrote under token 2 at 1.455000s";
  const size_t first = out.output.find(line);
  ASSERT_NE(first, std::string::npos) << out.output;
  EXPECT_EQ(out.output.find(line, first + 1), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("s unique_token (trace #"), std::string::npos) << "the test shows nothing: " << out.output;
}

// The leases block counts as the holder does: bug=full_ttl acts for the
// whole TTL (not the declared margin), and a grant that arrives after its
// request timed out extends nothing (the holder dropped the request).
TEST_F(ExplainTest, Leases_CountTheLeaseAsTheHolderDoes) {
  const std::string full_ttl = Write("full-ttl.json", R"({
    "nodes": 1, "duration": "2504ms", "seed": 11,
    "algorithm": {"name": "lease", "options": {"bug": "full_ttl", "renew": "cas", "request_timeout": "121ms",
                                               "retry_interval": "128ms", "safety_margin": 0.472}},
    "checkers": ["lease_validity", "single_leader"],
    "faults": [{"at": "2162ms", "network": {"latency": {"uniform": ["1ms", "408ms"]}}}],
    "resource": {"fencing": true}
  })");
  const Outcome whole = Explain(full_ttl);
  EXPECT_NE(whole.output.find("  node 0, token 1: believed deadline 3.000000s on its clock (store.cas sent at "
                              "2.000000s, its grant received at 2.002000s)"),
            std::string::npos)
      << whole.output;
  EXPECT_NE(whole.output.find("lease_validity (trace #"), std::string::npos) << "the test shows nothing";
  // The why of lease_validity: the renewals whose grants did not come back,
  // on the links the step had slowed (once no chain at all, and the step
  // listed as touching nothing).
  EXPECT_NE(whole.output.find("  node 0 decided to write at 2.502000s (trace #485), 0.502000s after it sent store.cas "
                              "at 2.000000s, the last lease request the store granted: no grant came back in time "
                              "for its store.cas at 2.333000s (trace #468), store.cas at 2.454000s (trace #482), sent "
                              "on links /faults/0 (network change at 2.162s) had slowed\n"),
            std::string::npos)
      << whole.output;
  EXPECT_EQ(whole.output.find("cutting or delaying none"), std::string::npos) << whole.output;

  // Fuzz seed 10 of the same mutant: the store granted the renewal sent at
  // 2.336689s, but its reply came at 2.761839s, past the 121ms timeout.
  const Outcome emitted = electsim_test::RunCombined(
      "fuzz --algorithm lease --option bug=full_ttl --fencing --guarantees-of defaults --seed 10 --emit-scenario");
  ASSERT_EQ(emitted.exit_status, 0) << emitted.output;
  const Outcome late = Explain(Write("seed10.json", emitted.output));
  EXPECT_NE(late.output.find("  node 0, token 1: believed deadline 3.003689s on its clock (store.cas sent at "
                             "2.003689s, its grant received at 2.017017s)"),
            std::string::npos)
      << late.output;
}

// A node that turned candidate when its leader went silent, because a step
// crashed it, is told so; the crashed node's own campaign begins with its
// restart. Before, the crash was listed as touching nothing and a delayed
// message of another step was blamed.
TEST_F(ExplainTest, Why_ACrashThatSilencedTheLeaderAndItsRestartAreCauses) {
  const Outcome out = Explain(Write("bully-crash.json", std::string(kBullyCrash)) + " --seed 1");
  EXPECT_NE(out.output.find("node 0 timed out at 1.230379s, timed out and became leader of epoch 2 at 1.330379s "
                            "(trace #357) because no bully.heartbeat came from node 2 after 1.030379s: node 2 was "
                            "down by /faults/1 (crash of node 2 at 1.000s)"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("node 2 restarted at 1.250000s after /faults/1 (crash of node 2 at 1.000s) and turned "
                            "candidate, timed out and became leader of epoch 3 at 1.450000s"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("cutting or delaying none of the messages above: /faults/1"), std::string::npos)
      << out.output;
}

// A one-way cut names its sender but reads no clock: the holder's deadline
// is not counted from it (it once gave a margin of -2.2s to a holder with
// no clock fault, as if its clock had stopped).
TEST_F(ExplainTest, Leases_ALinkChangeIsNoReadingOfTheSendersClock) {
  const std::string scenario = Write("pause-cut.json", R"({
    "nodes": 3, "duration": "6s", "algorithm": "lease",
    "network": {"latency": {"uniform": ["1ms", "5ms"]}},
    "resource": {"fencing": false},
    "faults": [{"at": "2s", "pause": "leader", "for": "3s"},
               {"at": "2500ms", "cut": {"from": "leader", "to": 0}, "for": "100ms"}],
    "checkers": ["single_leader", "stale_token", "election_safety"]
  })");
  const Outcome out = Explain(scenario);
  EXPECT_NE(out.output.find("  node 2, token 1: believed deadline 2.420581s on its clock"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("(taken at 1.674246s); margin +0.253665s\n"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("on the simulation's clock"), std::string::npos) << out.output;
}

// Each holder's believed deadline on its own clock beside the store's
// expiry, and the margin; and the write the paused holder made past its own.
TEST_F(ExplainTest, Leases_SetEachHoldersDeadlineBesideTheStoresExpiry) {
  const Outcome out = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json"));
  EXPECT_NE(out.output.find(
                "  node 2, token 1: believed deadline 2.753581s on its clock (store.keep_alive sent at "
                "2.003581s, its grant received at 5.005581s); the store's expiry 3.006023s on its clock (taken at "
                "2.006023s); margin +0.252441s; it still wrote under token 1 at 5.005581s (trace #1463), "
                "2.252000s past its deadline"),
            std::string::npos)
      << out.output;
  // 2.003581487s + 0.75 x 1s, and 2.006023205s + 1s, by the trace.
  std::map<uint64_t, json> trace = Trace("lease-paused-holder-unfenced-seed1.repro.json");
  EXPECT_EQ(trace[736]["type"], "store.keep_alive");
  EXPECT_EQ(trace[736]["local"], 2003581487);
  EXPECT_EQ(trace[749]["kind"], "timer_set");
  EXPECT_EQ(trace[749]["local"], 3006023205);
}

// An edited repro: a hash-mismatch warning first, then the run as it now is.
TEST_F(ExplainTest, EditedRepro_WarnsOfTheHashFirstThenExplainsTheRunAsItIs) {
  json repro =
      json::parse(electsim_test::ReadWholeFile(CommittedRepro("bully-partition-split-brain-seed1.repro.json")));
  repro["scenario"]["faults"][0]["partition"] = json::parse("[[0,1,2],[3,4]]");
  const Outcome moved = Explain(Write("moved.repro.json", repro.dump()));
  EXPECT_EQ(moved.output.rfind("warning: the trace hash differs from the repro's: 0x", 0), 0u) << moved.output;
  EXPECT_NE(moved.output.find("0x8f27ddf9ee1e00fa when the repro was written"), std::string::npos) << moved.output;
  EXPECT_NE(moved.output.find("node 2 timed out and became leader of epoch 1 at 0.100000s"), std::string::npos)
      << moved.output;
  repro["scenario"]["faults"] = json::array();
  const Outcome healed = Explain(Write("healed.repro.json", repro.dump()));
  EXPECT_EQ(healed.output.rfind("warning: the trace hash differs", 0), 0u) << healed.output;
  EXPECT_NE(healed.output.find("no violation in this run (the repro recorded election_safety, single_leader, "
                               "unique_token): nothing to explain"),
            std::string::npos)
      << healed.output;
  // The repro as written: no warning.
  const Outcome same = Explain(CommittedRepro("bully-partition-split-brain-seed1.repro.json"));
  EXPECT_EQ(same.output.rfind("explain: ", 0), 0u) << same.output;
}

TEST_F(ExplainTest, ScenarioAndSeed_WorkLikeARepro) {
  const Outcome repro = Explain(CommittedRepro("bully-partition-split-brain-seed1.repro.json"));
  const Outcome scenario = Explain(electsim_test::ShippedScenario("bully-partition-split-brain.json") + " --seed 1");
  EXPECT_EQ(scenario.output, repro.output);
  const Outcome healthy = Explain(electsim_test::ShippedScenario("raft-healthy.json"));
  EXPECT_NE(healthy.output.find("no violation in this run: nothing to explain"), std::string::npos) << healthy.output;
  EXPECT_EQ(electsim_test::RunCombined("explain /nonexistent.json").exit_status, 2);
}

// An owner of many keys: the account follows the key the violation names.
// The old owner's claim, lease and delete, and its successor's claim, are
// key 3's; the lease the store expired is the paused owner's; nothing in
// the history is about another key.
TEST_F(ExplainTest, ShardsPlainUnlock_FollowsTheKeyTheViolationNames) {
  const Outcome out = Explain(electsim_test::ShippedScenario("shards-plain-unlock.json") + " --seed 1");
  ExpectFirstLinesSay(out.output,
                      {"the store expired node 0's lease at 3.000357s (trace #3796): no store.keep_alive came from "
                       "node 0 after 2.001874s: node 0 was paused by /faults/0 (pause of node 0 at 2.000s)",
                       "owner_displaced (trace #6372): key 3: a request of node 0 deleted key 3 while node 2 held it "
                       "under lease 14",
                       "evidence: node 0 led epoch 1 with token 1 from 0.005339s (trace #295) to 5.000000s; node 2 "
                       "led epoch 14 with token 14 from 3.008044s (trace #3916)"});
  bool in_history = false;
  int history_lines_with_a_key = 0;
  for (const std::string& line : Lines(out.output)) {
    if (line.rfind("causal history", 0) == 0) in_history = true;
    if (!in_history) continue;
    for (const std::string key_field : {"key=", "dir="}) {
      const size_t at = line.find(key_field);
      if (at == std::string::npos) continue;
      ++history_lines_with_a_key;
      const size_t digits = line.find_first_not_of("0123456789", at + key_field.size());
      EXPECT_EQ(line.substr(at + key_field.size(), digits - at - key_field.size()), "3") << line;
    }
  }
  EXPECT_GT(history_lines_with_a_key, 5) << out.output;
  // The leases listed are key 3's: the paused owner's and its successor's.
  EXPECT_NE(out.output.find("  node 0, token 1: believed deadline"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("  node 2, token 14: believed deadline"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("token 5: believed deadline"), std::string::npos) << out.output;
}

// A long history is cut to its latest events, faults kept, with a note.
TEST_F(ExplainTest, LongHistory_IsCutWithANote) {
  const Outcome out = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json") + " --lines 8");
  EXPECT_NE(out.output.find("... 26 earlier events of the history skipped (0.000000s to 3.013344s)"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("node 2: !! PAUSE"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("resource: resource.accept{token=1 writer=2 seq=21 highest=3}"), std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("node 1: role{role=leader term=3 token=3}"), std::string::npos) << out.output;
  // Fewer lines than faults: every other event goes, and the note says so
  // rather than calling them earlier; the count is of the lines shown,
  // violation markers included.
  const Outcome faults_only = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json") + " --lines 1");
  EXPECT_NE(faults_only.output.find("* event; 4 lines):"), std::string::npos) << faults_only.output;
  EXPECT_NE(
      faults_only.output.find("... every event but the faults skipped, 31 of them (0.000000s to 5.009913s): the 3 "
                              "fault lines fill --lines 1"),
      std::string::npos)
      << faults_only.output;
  EXPECT_NE(faults_only.output.find("5.009913s  violation: stale_token (trace #1485)"), std::string::npos)
      << faults_only.output;
  const Outcome whole = Explain(CommittedRepro("lease-paused-holder-unfenced-seed1.repro.json"));
  EXPECT_NE(whole.output.find(". L . . .  node 1: role{role=leader term=3 token=3}"), std::string::npos)
      << whole.output;
}

}  // namespace
