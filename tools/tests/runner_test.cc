// How the runner applies fault steps.
#include "tools/electsim/engine/runner.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

// Counts deliveries from one node to another after a given time, and notes
// where the boots and the first pause fall in the trace.
class Watcher final : public sim::TraceSink {
 public:
  Watcher(uint32_t from, uint32_t to, sim::TimeNs after) : from_(from), to_(to), after_(after) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kDeliver && r.peer == sim::NodeId(from_) && r.node == sim::NodeId(to_) &&
        r.time >= after_) {
      ++deliveries;
    }
    if (r.kind == sim::TraceKind::kStart) last_start_index = r.index;
    if (r.kind == sim::TraceKind::kPause && !pause_index) pause_index = r.index;
  }
  int deliveries = 0;
  uint64_t last_start_index = 0;
  std::optional<uint64_t> pause_index;

 private:
  uint32_t from_, to_;
  sim::TimeNs after_;
};

RunResult RunText(const std::string& text, sim::TraceSink* sink) {
  auto scenario = ParseScenario(text, "runner-test.json");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  RunOptions options;
  options.extra_sinks.push_back(sink);
  auto result = RunScenario(*scenario, 1, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RunResult{};
}

// A fault's note is written only where something takes it in; where it is,
// it has its text, and the trace is the same either way.
TEST(Runner_Faults, AFaultsNoteHasItsTextWhereverItIsReadOrHashed) {
  struct NoteReader final : sim::TraceSink {
    void OnRecord(const sim::TraceRecord& r) override { notes.emplace_back(r.detail); }
    sim::TraceKinds kinds() const override { return {sim::TraceKind::kNote}; }
    std::vector<std::string> notes;
  };
  auto scenario = ParseScenario(R"({"nodes": 3, "duration": "2s", "algorithm": "raft",
      "faults": [{"at": "1s", "crash": 2}]})",
                                "runner-test.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  NoteReader reader;
  auto read = RunScenario(*scenario, 1, {.extra_sinks = {&reader}, .hash_trace = false});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(reader.notes, std::vector<std::string>{"fault /faults/0: crash node 2"});
  // Hashed, with the note read (so written) and without: one hash.
  NoteReader hashed_reader;
  auto hashed_read = RunScenario(*scenario, 1, {.extra_sinks = {&hashed_reader}});
  auto hashed = RunScenario(*scenario, 1);
  auto unread = RunScenario(*scenario, 1, {.hash_trace = false});
  ASSERT_TRUE(hashed_read.ok() && hashed.ok() && unread.ok());
  EXPECT_EQ(hashed->trace_hash, hashed_read->trace_hash);
  EXPECT_EQ(unread->trace_records, hashed->trace_records);
}

TEST(Runner_Faults, AStepsForUndoesOnlyItsOwnCuts) {
  // A lasting one-way cut 0->1, and an unrelated partition that ends at 3s.
  // Node 2 goes down at 4s, so that 0 and 1 have to talk to elect a leader
  // (which they do over 1->0 only).
  const std::string text = R"({
    "nodes": 3, "duration": "6s", "algorithm": "raft",
    "faults": [
      {"at": "1s", "cut": {"from": 0, "to": 1}},
      {"at": "2s", "partition": [[2]], "for": "1s"},
      {"at": "4s", "crash": 2}
    ]})";
  Watcher watcher(0, 1, sim::TimeNs::Millis(1100));
  RunText(text, &watcher);
  EXPECT_EQ(watcher.deliveries, 0);  // the lasting cut survived the partition's end
  Watcher other_way(1, 0, sim::TimeNs::Seconds(4));
  RunText(text, &other_way);
  EXPECT_GT(other_way.deliveries, 0);
}

// Counts a node's crashes that lost unsynced writes, and what a Raft node
// reports as its term when it boots.
class PowerLossWatcher final : public sim::TraceSink {
 public:
  explicit PowerLossWatcher(uint32_t node) : node_(node) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.node != sim::NodeId(node_)) return;
    if (r.kind == sim::TraceKind::kCrash && r.detail == "power-loss") ++power_losses;
    if (r.kind == sim::TraceKind::kStart) booting = true;
    if (r.kind == sim::TraceKind::kObserve && booting && r.payload->Is(vocab::kRoleChange)) {
      terms_at_boot.push_back(r.payload->Get("term"));
      booting = false;
    }
  }
  int power_losses = 0;
  std::vector<int64_t> terms_at_boot;

 private:
  uint32_t node_;
  bool booting = false;
};

TEST(Runner_Faults, LoseUnsyncedMakesTheCrashAPowerLoss) {
  // A Raft that never syncs keeps its term across a plain crash (the page
  // cache survives) and loses it in a power loss.
  for (const bool lose : {false, true}) {
    const std::string text = std::string(R"({
      "nodes": 3, "duration": "3s", "algorithm": {"name": "raft", "options": {"bug": "skip_sync"}},
      "faults": [{"at": "1s", "crash": 0, "for": "100ms", "lose_unsynced": )") +
                             (lose ? "true" : "false") + "}]}";
    PowerLossWatcher watcher(0);
    RunText(text, &watcher);
    EXPECT_EQ(watcher.power_losses, lose ? 1 : 0);
    ASSERT_EQ(watcher.terms_at_boot.size(), 2u);
    EXPECT_EQ(watcher.terms_at_boot[0], 0);
    if (lose) {
      EXPECT_EQ(watcher.terms_at_boot[1], 0);
    } else {
      EXPECT_GT(watcher.terms_at_boot[1], 0);
    }
  }
}

// Where a step with "during" lands: the node's first record of `fault_kind`
// must follow its latest `moment` observation at the same instant, with no
// other input of that node (delivery, timer) in between: the handler that
// reached the moment finished, and nothing else ran on the node.
class MomentWatcher final : public sim::TraceSink {
 public:
  MomentWatcher(uint32_t node, const sim::RecordType& moment, sim::TraceKind fault_kind)
      : node_(node), moment_(moment), fault_kind_(fault_kind) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.node != sim::NodeId(node_) || fault_index) return;
    if (r.kind == sim::TraceKind::kObserve && r.payload->Is(moment_)) {
      moment_index = r.index;
      moment_time = r.time;
      inputs_between = 0;
    } else if (moment_index && (r.kind == sim::TraceKind::kDeliver || r.kind == sim::TraceKind::kTimerFire)) {
      ++inputs_between;
    } else if (r.kind == fault_kind_) {
      fault_index = r.index;
      fault_time = r.time;
    }
  }
  std::optional<uint64_t> moment_index, fault_index;
  sim::TimeNs moment_time, fault_time;
  int inputs_between = 0;

 private:
  uint32_t node_;
  const sim::RecordType& moment_;
  sim::TraceKind fault_kind_;
};

void ExpectFaultAtMoment(const std::string& algorithm, const std::string& step, uint32_t node,
                         const sim::RecordType& moment, sim::TraceKind fault_kind) {
  const std::string text = fmt::format(
      R"({{"nodes": 3, "duration": "3s", "algorithm": "{}", "faults": [{}], "liveness": {{"after": "2s", "within": "1s"}}}})",
      algorithm, step);
  MomentWatcher watcher(node, moment, fault_kind);
  RunText(text, &watcher);
  ASSERT_TRUE(watcher.moment_index.has_value()) << step;
  ASSERT_TRUE(watcher.fault_index.has_value()) << step;
  EXPECT_GT(*watcher.fault_index, *watcher.moment_index) << step;
  EXPECT_EQ(watcher.fault_time, watcher.moment_time) << step;
  EXPECT_GT(watcher.fault_time, sim::TimeNs(0)) << step;  // it waited for the moment, not for its "at"
  EXPECT_EQ(watcher.inputs_between, 0) << step;
}

TEST(Runner_Faults, DuringAMomentTheFaultLandsRightAfterTheHandlerThatReachedIt) {
  ExpectFaultAtMoment("raft", R"({"at": "0s", "crash": 1, "for": "100ms", "during": "vote"})", 1, vocab::kVote,
                      sim::TraceKind::kCrash);
  ExpectFaultAtMoment("raft", R"({"at": "0s", "crash": 2, "for": "100ms", "lose_unsynced": true, "during": "term"})", 2,
                      vocab::kTermChange, sim::TraceKind::kCrash);
  ExpectFaultAtMoment("bully", R"({"at": "0s", "pause": 2, "for": "100ms", "during": "term"})", 2, vocab::kTermChange,
                      sim::TraceKind::kPause);
  ExpectFaultAtMoment("lease", R"({"at": "0s", "clock": {"node": 0, "shift": "-500ms"}, "during": "renewal"})", 0,
                      vocab::kLeaseRequest, sim::TraceKind::kClock);
  ExpectFaultAtMoment("lease", R"({"at": "0s", "pause": 0, "for": "100ms", "during": "renewal"})", 0,
                      vocab::kLeaseRequest, sim::TraceKind::kPause);
}

// What node `node` sent in the instant of its first `moment` (in the handler
// that reached it, before or after the observation), and what became of
// each of those messages: delivered to whom, or dropped and why.
class MomentSends final : public sim::TraceSink {
 public:
  // `first_field`: the observation's first field must hold it (a role).
  MomentSends(uint32_t node, const sim::RecordType& moment, std::optional<int64_t> first_field = std::nullopt)
      : node_(node), moment_(moment), first_field_(first_field) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (!moment_time && r.node == sim::NodeId(node_) && r.kind == sim::TraceKind::kObserve && r.payload->Is(moment_) &&
        (!first_field_ || r.payload->value(0) == *first_field_)) {
      moment_time = r.time;
    }
    if (r.kind == sim::TraceKind::kSend && r.node == sim::NodeId(node_))
      sends_[r.message_id] = {r.time, r.peer.value()};
    const auto sent = sends_.find(r.message_id);
    if (sent == sends_.end()) return;
    if (r.kind == sim::TraceKind::kDeliver) fates_[r.message_id] = {sent->second.second, "delivered"};
    if (r.kind == sim::TraceKind::kDrop) fates_[r.message_id] = {sent->second.second, std::string(r.detail)};
  }
  // Receiver -> "delivered" or the drop's reason, for what was sent at the moment.
  std::map<uint32_t, std::string> Fates() const {
    std::map<uint32_t, std::string> fates;
    for (const auto& [id, fate] : fates_) {
      if (moment_time && sends_.at(id).first == *moment_time) fates[fate.first] = fate.second;
    }
    return fates;
  }
  std::optional<sim::TimeNs> moment_time;

 private:
  uint32_t node_;
  const sim::RecordType& moment_;
  std::optional<int64_t> first_field_;
  std::map<uint64_t, std::pair<sim::TimeNs, uint32_t>> sends_;  // message id -> (time, receiver)
  std::map<uint64_t, std::pair<uint32_t, std::string>> fates_;  // message id -> (receiver, fate)
};

// An isolation or a one-way cut "during" a moment lands after the handler
// that reached it, as every such fault does, and what that handler sent is
// still on the wire: the cut loses it. A candidate's vote requests go out as
// it takes its term (node 2 is the first to campaign with this seed).
TEST(Runner_Faults, ACutDuringAMomentLosesWhatTheNodeSentThen) {
  const auto fates = [](const std::string& step) {
    MomentSends sends(2, vocab::kTermChange);
    RunText(fmt::format(R"({{"nodes": 3, "duration": "3s", "algorithm": "raft", "faults": [{}],
                            "liveness": {{"after": "2s", "within": "1s"}}}})",
                        step),
            &sends);
    EXPECT_TRUE(sends.moment_time.has_value()) << step;
    return sends.Fates();
  };
  using Fates = std::map<uint32_t, std::string>;
  EXPECT_EQ(fates(R"({"at": "0s", "isolate": 2, "for": "1s", "during": "term"})"),
            (Fates{{0, "partition"}, {1, "partition"}}));
  EXPECT_EQ(fates(R"({"at": "0s", "cut": {"from": 2, "to": 0}, "for": "1s", "during": "term"})"),
            (Fates{{0, "partition"}, {1, "delivered"}}));
  // Without a fault, both requests arrive: the cut above is what lost one.
  EXPECT_EQ(fates(R"({"at": "2s", "pause": 0, "for": "1ms"})"), (Fates{{0, "delivered"}, {1, "delivered"}}));
}

// Latencies drawn from a range, so that no other message reaches the node
// in the very instant it commits (those already due would run first).
TEST(Runner_Faults, ACrashDuringACommitLandsRightAfterTheNodeCommitted) {
  MomentWatcher watcher(2, vocab::kLogCommit, sim::TraceKind::kCrash);
  RunText(R"({"nodes": 3, "duration": "3s", "algorithm": "raft", "network": {"latency": {"uniform": ["1ms", "5ms"]}},
              "faults": [{"at": "1s", "crash": 2, "for": "100ms", "during": "commit"}],
              "liveness": {"after": "2s", "within": "1s"}})",
          &watcher);
  ASSERT_TRUE(watcher.moment_index.has_value());
  ASSERT_TRUE(watcher.fault_index.has_value());
  EXPECT_GT(*watcher.fault_index, *watcher.moment_index);
  EXPECT_EQ(watcher.fault_time, watcher.moment_time);
  EXPECT_GT(watcher.fault_time, sim::TimeNs::Seconds(1));
  EXPECT_EQ(watcher.inputs_between, 0);
}

// The first write begun (by whom, when) and the first crash.
class FirstWriteAndCrash final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (!write && r.kind == sim::TraceKind::kObserve && r.payload->Is(vocab::kWriteBegin)) write = {r.node, r.time};
    if (!crash && r.kind == sim::TraceKind::kCrash) crash = {r.node, r.time};
  }
  std::optional<std::pair<sim::NodeId, sim::TimeNs>> write, crash;
};

// "leader" with "during" while nobody leads waits for the next leader's
// moment rather than being skipped: at time 0 no node leads yet.
TEST(Runner_Faults, ALeaderStepDuringAMomentWhileNoneLeadsWaitsForTheNextLeader) {
  FirstWriteAndCrash watcher;
  const RunResult result = RunText(R"({"nodes": 3, "duration": "3s", "algorithm": "raft",
      "faults": [{"at": "0s", "crash": "leader", "for": "100ms", "during": "write"}],
      "liveness": {"after": "2s", "within": "1s"}})",
                                   &watcher);
  EXPECT_TRUE(result.notes.empty()) << result.notes[0];
  ASSERT_TRUE(watcher.write.has_value());
  ASSERT_TRUE(watcher.crash.has_value());
  EXPECT_EQ(watcher.crash, watcher.write);
  EXPECT_GT(watcher.crash->second, sim::TimeNs(0));
}

// Who took the leader role, in order, and each node's first crash.
class Elections final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kObserve && r.payload->Is(vocab::kRoleChange) &&
        r.payload->value(0) == static_cast<int64_t>(vocab::Role::kLeader)) {
      leaders.emplace_back(r.node.value(), r.time);
    }
    if (r.kind == sim::TraceKind::kCrash) crashes.emplace_back(r.node.value(), r.time);
  }
  std::vector<std::pair<uint32_t, sim::TimeNs>> leaders, crashes;
};

// {"next_leader": N} waits for the Nth election after the step's time: a
// chain of leaders, each crashed as it takes office, is one step each.
TEST(Runner_Faults, NextLeaderIsTheNthNodeToTakeTheRoleAfterTheStep) {
  Elections elections;
  const RunResult result = RunText(R"({"nodes": 3, "duration": "4s", "algorithm": "raft",
      "faults": [{"at": "1s", "crash": "leader", "for": "2s"},
                 {"at": "1s", "crash": {"next_leader": 1}, "for": "1500ms"},
                 {"at": "1s", "pause": {"next_leader": 2}, "for": "100ms", "during": "write", "within": "1s"}],
      "liveness": {"after": "3500ms", "within": "500ms"}})",
                                   &elections);
  ASSERT_GE(elections.leaders.size(), 3u);
  ASSERT_EQ(elections.crashes.size(), 2u);
  // The first leader after 1s was crashed right as it took the role.
  const auto first_after = std::find_if(elections.leaders.begin(), elections.leaders.end(),
                                        [](const auto& l) { return l.second > sim::TimeNs::Seconds(1); });
  ASSERT_NE(first_after, elections.leaders.end());
  EXPECT_EQ(elections.crashes[1], *first_after);
  // The second had none left to elect it: two of three nodes were down. Its
  // step waited a second for the election, then was skipped.
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("the leader 2 elections on was not elected within 1s"), std::string::npos)
      << result.notes[0];
}

// "campaign": the node just took the candidate role. A Raft candidate sends
// its vote requests in that handler, so a cut then loses them.
TEST(Runner_Faults, ACutDuringACampaignLosesTheVoteRequests) {
  MomentSends sends(2, vocab::kRoleChange, static_cast<int64_t>(vocab::Role::kCandidate));
  RunText(R"({"nodes": 3, "duration": "3s", "algorithm": "raft",
      "faults": [{"at": "0s", "isolate": 2, "for": "1s", "during": "campaign"}],
      "liveness": {"after": "2s", "within": "1s"}})",
          &sends);
  EXPECT_EQ(sends.Fates(), (std::map<uint32_t, std::string>{{0, "partition"}, {1, "partition"}}));
}

// A moment that does not come within the step's "within" skips the step: Raft
// on a calm network takes no new term after its first election.
TEST(Runner_Faults, AMomentThatDoesNotComeWithinItsWaitSkipsTheStep) {
  const std::string text = R"({"nodes": 3, "duration": "3s", "algorithm": "raft",
      "faults": [{"at": "1s", "crash": 0, "for": "100ms", "during": "term", "within": "500ms"}],
      "liveness": {"after": "2s", "within": "1s"}})";
  MomentWatcher watcher(0, vocab::kTermChange, sim::TraceKind::kCrash);
  const RunResult result = RunText(text, &watcher);
  EXPECT_FALSE(watcher.fault_index.has_value());
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("skipped /faults/0 at 1s: node 0 reached no term within 500ms"), std::string::npos)
      << result.notes[0];
}

// Network records of cuts and link changes, by whether they join a node to itself.
class CutRecords final : public sim::TraceSink {
 public:
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kNetwork || r.peer == sim::kNoNode) return;
    ++(r.node == r.peer ? to_itself : between_nodes);
  }
  int to_itself = 0;
  int between_nodes = 0;
};

// "leader" resolved to the other end of a cut or a link: the step is skipped
// with a note, as a file naming one node at both ends is refused, rather than
// recorded as a cut of a node from itself.
TEST(Runner_Faults, ACutOrLinkFromTheLeaderToItselfIsSkippedWithANote) {
  CutRecords cuts;
  const RunResult result = RunText(R"({"nodes": 3, "duration": "2s", "algorithm": "raft",
      "faults": [{"after": {"event": "leader_elected"}, "cut": {"from": "leader", "to": 0}, "for": "100ms"},
                 {"after": {"event": "leader_elected"}, "cut": {"from": "leader", "to": 1}, "for": "100ms"},
                 {"after": {"event": "leader_elected"}, "cut": {"from": "leader", "to": 2}, "for": "100ms"},
                 {"after": {"event": "leader_elected"}, "link": {"from": "leader", "to": 0, "latency": "2ms"}},
                 {"after": {"event": "leader_elected"}, "link": {"from": "leader", "to": 1, "latency": "2ms"}},
                 {"after": {"event": "leader_elected"}, "link": {"from": "leader", "to": 2, "latency": "2ms"}}]})",
                                   &cuts);
  EXPECT_EQ(cuts.to_itself, 0);
  EXPECT_GE(cuts.between_nodes, 4);  // two cuts (and their restores), two links
  int skipped = 0;
  for (const std::string& note : result.notes) {
    skipped += note.find("is at both ends: its messages to itself do not cross the network") != std::string::npos;
  }
  EXPECT_EQ(skipped, 2) << fmt::format("{}", fmt::join(result.notes, "\n"));
}

TEST(Runner_Faults, AFaultAtTimeZeroLandsAfterEveryNodeBooted) {
  const std::string text = R"({
    "nodes": 3, "duration": "1s", "algorithm": "raft",
    "faults": [{"at": "0s", "pause": 0, "for": "500ms"}]})";
  Watcher watcher(0, 1, sim::TimeNs(0));
  RunText(text, &watcher);
  // Every node boots (no restarts here), then the pause applies.
  ASSERT_TRUE(watcher.pause_index.has_value());
  EXPECT_LT(watcher.last_start_index, *watcher.pause_index);
}

// Counts crash and restart (and pause and resume) records of one node.
class ProcessFaults final : public sim::TraceSink {
 public:
  explicit ProcessFaults(uint32_t node) : node_(node) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.node != sim::NodeId(node_)) return;
    if (r.kind == sim::TraceKind::kRestart) restarts.push_back(r.time);
    if (r.kind == sim::TraceKind::kResume) resumes.push_back(r.time);
  }
  std::vector<sim::TimeNs> restarts;
  std::vector<sim::TimeNs> resumes;

 private:
  uint32_t node_;
};

TEST(Runner_Faults, ASkippedStepHasNothingToUndo) {
  // The second crash finds node 0 down already: it is skipped, and its "for"
  // must not restart the node the first step crashed for good.
  ProcessFaults faults(0);
  const RunResult result = RunText(R"({
    "nodes": 3, "duration": "4s", "algorithm": "raft",
    "faults": [{"at": "1s", "crash": 0}, {"at": "1500ms", "crash": 0, "for": "500ms"},
               {"at": "2s", "pause": 1}, {"at": "2200ms", "pause": 1, "for": "100ms"}]})",
                                   &faults);
  EXPECT_TRUE(faults.restarts.empty());
  ASSERT_EQ(result.notes.size(), 2u);
  EXPECT_NE(result.notes[0].find("skipped /faults/1"), std::string::npos) << result.notes[0];
  ProcessFaults pauses(1);
  RunText(R"({
    "nodes": 3, "duration": "4s", "algorithm": "raft",
    "faults": [{"at": "2s", "pause": 1}, {"at": "2200ms", "pause": 1, "for": "100ms"}]})",
          &pauses);
  EXPECT_TRUE(pauses.resumes.empty());  // the lasting pause was not lifted by the skipped one
}

TEST(Runner_Faults, AnUndoLeavesALaterStepsFaultAlone) {
  // /faults/0 crashes node 0 until 2s, but /faults/1 restarts it early and
  // /faults/2 crashes it for good: the 2s restart is no longer /faults/0's to do.
  ProcessFaults faults(0);
  const RunResult result = RunText(R"({
    "nodes": 3, "duration": "4s", "algorithm": "raft",
    "faults": [{"at": "1s", "crash": 0, "for": "1s"}, {"at": "1200ms", "restart": 0},
               {"at": "1500ms", "crash": 0}]})",
                                   &faults);
  EXPECT_EQ(faults.restarts, std::vector<sim::TimeNs>{sim::TimeNs::Millis(1200)});
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("no restart: a later step crashed, restarted, paused or resumed node 0 first"),
            std::string::npos)
      << result.notes[0];
}

// Counts deliveries from one node to another within [start, end).
class DeliveryWindow final : public sim::TraceSink {
 public:
  DeliveryWindow(uint32_t from, uint32_t to, sim::TimeNs start, sim::TimeNs end)
      : from_(from), to_(to), start_(start), end_(end) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind == sim::TraceKind::kDeliver && r.peer == sim::NodeId(from_) && r.node == sim::NodeId(to_) &&
        r.time >= start_ && r.time < end_) {
      ++deliveries;
    }
  }
  int deliveries = 0;

 private:
  uint32_t from_, to_;
  sim::TimeNs start_, end_;
};

TEST(Runner_Faults, CutsEndedByAHealAreNotRemovedAgainFromLaterSteps) {
  // The first isolation is healed at 1.5s; the second (1.8s to 2.8s) must
  // hold through 2s, when the first one's "for" would have ended it.
  const std::string text = R"({
    "nodes": 3, "duration": "4s", "algorithm": "raft",
    "faults": [{"at": "1s", "isolate": 0, "for": "1s"}, {"at": "1500ms", "heal": true},
               {"at": "1800ms", "isolate": 0, "for": "1s"}]})";
  DeliveryWindow isolated(0, 1, sim::TimeNs::Millis(1800), sim::TimeNs::Millis(2800));
  RunText(text, &isolated);
  EXPECT_EQ(isolated.deliveries, 0);
  DeliveryWindow afterwards(0, 1, sim::TimeNs::Millis(2800), sim::TimeNs::Seconds(4));
  RunText(text, &afterwards);
  EXPECT_GT(afterwards.deliveries, 0);
}

TEST(Runner_Stop, CheckingForAStopLeavesTheTraceAlone) {
  // Faults and a duration that is no multiple of the check interval.
  auto scenario = ParseScenario(R"({"nodes": 5, "duration": "3050ms", "algorithm": "raft",
      "network": {"latency": {"uniform": ["1ms", "10ms"]}, "drop": 0.1},
      "faults": [{"at": "1s", "crash": "leader", "for": "1s"}]})",
                                "runner-test.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  for (uint64_t seed : {1, 2, 3}) {
    auto whole = RunScenario(*scenario, seed);
    int checks = 0;
    RunOptions checked;
    checked.should_stop = [&checks] {
      ++checks;
      return false;
    };
    auto sliced = RunScenario(*scenario, seed, checked);
    ASSERT_TRUE(whole.ok() && sliced.ok());
    EXPECT_EQ(sliced->trace_hash, whole->trace_hash) << seed;
    EXPECT_EQ(sliced->trace_records, whole->trace_records) << seed;
    EXPECT_EQ(checks, 31) << "one check per started 100ms of the run";
  }
}

TEST(Runner_Stop, AStopRequestCancelsTheRun) {
  auto scenario = ParseScenario(R"({"nodes": 3, "duration": "1000000s", "algorithm": "raft"})", "runner-test.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  int checks = 0;
  RunOptions options;
  options.should_stop = [&checks] { return ++checks > 3; };
  auto result = RunScenario(*scenario, 1, options);
  EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  EXPECT_EQ(checks, 4);
}

// An algorithm that hides its leadership: the nodes in `leaders` heartbeat
// every 50ms in term 1, as only a leader may, and never report a role.
constexpr sim::RecordType kHiddenHeartbeat{"hidden.heartbeat", {"term"}};
class HiddenLeaders final : public algorithms::Algorithm {
 public:
  explicit HiddenLeaders(std::vector<uint32_t> leaders) : leaders_(std::move(leaders)) {}
  std::string_view name() const override { return "hidden_leaders"; }
  std::string_view summary() const override { return "leads without saying so"; }
  const std::vector<algorithms::OptionSpec>& options() const override {
    static const std::vector<algorithms::OptionSpec> none;
    return none;
  }
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {.leader_only = {{kHiddenHeartbeat, "term"}}};
    return roles;
  }
  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const algorithms::Cluster& cluster,
                                           const algorithms::OptionValues&) const override {
    const bool leads = std::find(leaders_.begin(), leaders_.end(), self.value()) != leaders_.end();
    return std::make_unique<Node>(leads, cluster.node_count);
  }

 private:
  class Node final : public sim::Process {
   public:
    Node(bool leads, uint32_t node_count) : leads_(leads), node_count_(node_count) {}
    void OnStart(sim::Context& ctx) override {
      if (leads_) ctx.SetTimer(sim::TimeNs::Millis(50), 0);
    }
    void OnMessage(sim::Context&, sim::NodeId, const sim::Message&) override {}
    void OnTimer(sim::Context& ctx, sim::TimerId, uint64_t) override {
      for (uint32_t node = 0; node < node_count_; ++node) {
        if (sim::NodeId(node) != ctx.self()) {
          ctx.Send(sim::NodeId(node), sim::Message(kHiddenHeartbeat, {1}));
        }
      }
      ctx.SetTimer(sim::TimeNs::Millis(50), 0);
    }

   private:
    bool leads_;
    uint32_t node_count_;
  };
  std::vector<uint32_t> leaders_;
};

std::vector<std::string> ViolationsOfHiddenLeaders(std::vector<uint32_t> leaders) {
  auto scenario = ParseScenario(R"({"nodes": 3, "duration": "1s", "algorithm": "raft",
      "checkers": ["election_safety", "single_leader", "term_monotonic"]})",
                                "hidden-leaders.json");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  const HiddenLeaders algorithm(std::move(leaders));
  scenario->algorithm = &algorithm;
  scenario->options = algorithms::OptionValues::Defaults(algorithm.options());
  auto result = RunScenario(*scenario, 1);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->violated_checkers() : std::vector<std::string>{};
}

TEST(Runner_Evidence, TwoLeadersThatNeverSaySoAreCaughtByTheirMessages) {
  EXPECT_EQ(ViolationsOfHiddenLeaders({0, 2}), (std::vector<std::string>{"election_safety", "single_leader"}));
}

TEST(Runner_Evidence, OneLeaderThatNeverSaysSoBreaksNothing) { EXPECT_TRUE(ViolationsOfHiddenLeaders({1}).empty()); }

// Declared message roles go stale silently when an algorithm renames its
// messages: the checkers would then see no wire evidence at all. Every role
// an algorithm declares must show up in a short run with an election, a
// leader crash and a re-election.
class RoleWatcher final : public sim::TraceSink {
 public:
  explicit RoleWatcher(const vocab::MessageRoles& roles) : roles_(roles) {}
  void OnRecord(const sim::TraceRecord& r) override {
    if (r.kind != sim::TraceKind::kSend || r.payload == nullptr) return;
    if (roles_.LeaderTerm(*r.payload)) leader_only.insert(std::string(r.payload->type_name()));
    if (roles_.GrantTerm(*r.payload)) vote_grants.insert(std::string(r.payload->type_name()));
  }
  std::set<std::string> leader_only;
  std::set<std::string> vote_grants;

 private:
  const vocab::MessageRoles& roles_;
};

TEST(Runner_Evidence, EveryDeclaredMessageRoleIsOnTheWire) {
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    auto scenario = ParseScenario(fmt::format(R"({{"nodes": 3, "duration": "4s", "algorithm": "{}",
        "faults": [{{"at": "1500ms", "crash": "leader", "for": "1s"}}]}})",
                                              algorithm->name()),
                                  "roles.json");
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    const vocab::MessageRoles& roles = algorithm->message_roles();
    RoleWatcher watcher(roles);
    RunOptions options;
    options.extra_sinks.push_back(&watcher);
    auto result = RunScenario(*scenario, 1, options);
    ASSERT_TRUE(result.ok()) << result.status();
    // Sends name no key, so an algorithm with keys declares no role for them
    // (checkers/per_key.cc); every other one has leader-only messages.
    EXPECT_EQ(roles.leader_only.empty(), algorithm->observes_keys()) << algorithm->name();
    for (const vocab::LeaderOnlyMessage& role : roles.leader_only) {
      EXPECT_TRUE(watcher.leader_only.count(std::string(role.type->name())))
          << algorithm->name() << ": " << role.type->name();
    }
    for (const vocab::VoteGrantMessage& role : roles.vote_grants) {
      EXPECT_TRUE(watcher.vote_grants.count(std::string(role.type->name())))
          << algorithm->name() << ": " << role.type->name();
    }
  }
}

// Sweep, fuzz and bench run without the trace hash; a failing seed's repro
// comes from running it again, hashed.
TEST(Runner_Failovers, NotTrackingThemLeavesTheTraceAndTheVerdictAlone) {
  // A crash, a pause and an isolation of the leader, each undone.
  auto scenario = ParseScenario(R"({"nodes": 5, "duration": "6s", "algorithm": "raft",
      "network": {"latency": {"uniform": ["1ms", "10ms"]}, "drop": 0.05},
      "faults": [{"at": "1s", "crash": "leader", "for": "1s"}, {"at": "2500ms", "pause": "leader", "for": "1s"},
                 {"at": "4s", "isolate": "leader", "for": "1s"}]})",
                                "runner-test.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  for (uint64_t seed : {1, 2, 3}) {
    auto tracked = RunScenario(*scenario, seed);
    auto untracked = RunScenario(*scenario, seed, {.track_failovers = false});
    ASSERT_TRUE(tracked.ok() && untracked.ok()) << seed;
    EXPECT_EQ(tracked->failovers.size(), 3u) << seed;
    EXPECT_TRUE(untracked->failovers.empty()) << seed;
    EXPECT_EQ(untracked->trace_hash, tracked->trace_hash) << seed;
    EXPECT_EQ(untracked->trace_records, tracked->trace_records) << seed;
    EXPECT_EQ(untracked->violated_checkers(), tracked->violated_checkers()) << seed;
    EXPECT_EQ(untracked->failed_expectations, tracked->failed_expectations) << seed;
  }
}

// Fuzz and check-guarantees collect no metrics; a scenario that expects
// what only the metrics tell collects them all the same.
TEST(Runner_Metrics, NotCollectingThemLeavesTheTraceAndTheVerdictAlone) {
  const std::string run = R"({"nodes": 5, "duration": "3s", "algorithm": "raft",
      "network": {"latency": {"uniform": ["1ms", "10ms"]}},
      "faults": [{"at": "1s", "crash": "leader", "for": "1s"}])";
  auto plain = ParseScenario(run + "}", "runner-test.json");
  auto expecting = ParseScenario(run + R"(, "expect": {"elected": false}})", "runner-test.json");
  ASSERT_TRUE(plain.ok() && expecting.ok()) << plain.status() << expecting.status();
  for (uint64_t seed : {1, 2}) {
    auto collected = RunScenario(*plain, seed, {.track_failovers = false});
    auto uncollected = RunScenario(*plain, seed, {.collect_metrics = false, .track_failovers = false});
    ASSERT_TRUE(collected.ok() && uncollected.ok()) << seed;
    EXPECT_GT(collected->metrics.messages_sent, 0u) << seed;
    EXPECT_EQ(uncollected->metrics.messages_sent, 0u) << seed;
    EXPECT_EQ(uncollected->trace_hash, collected->trace_hash) << seed;
    EXPECT_EQ(uncollected->violated_checkers(), collected->violated_checkers()) << seed;
    // "elected": false is judged, and fails, either way.
    auto judged = RunScenario(*expecting, seed, {.collect_metrics = false, .track_failovers = false});
    ASSERT_TRUE(judged.ok()) << seed;
    EXPECT_EQ(judged->failed_expectations, std::vector<std::string>{"expected no leader to be elected, one was"});
  }
}

// "elected" is judged from the cluster view, metrics or none, and the view
// agrees with the metrics' leaders by term.
TEST(Runner_Metrics, ElectedIsJudgedTheSameWithAndWithoutThem) {
  // Too short for any timeout; candidates that hear nobody; elected.
  for (const auto& [setting, elected] :
       {std::pair{R"("duration": "50ms")", false}, std::pair{R"("duration": "3s", "network": {"drop": 1})", false},
        std::pair{R"("duration": "3s")", true}}) {
    auto scenario = ParseScenario(fmt::format(R"({{"nodes": 5, {}, "algorithm": "raft",
        "expect": {{"elected": true}}}})",
                                              setting),
                                  "runner-test.json");
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    const std::vector<std::string> failed =
        elected ? std::vector<std::string>{} : std::vector<std::string>{"expected a leader to be elected, none was"};
    for (uint64_t seed : {1, 2, 3}) {
      auto collected = RunScenario(*scenario, seed, {.track_failovers = false});
      auto uncollected = RunScenario(*scenario, seed, {.collect_metrics = false, .track_failovers = false});
      ASSERT_TRUE(collected.ok() && uncollected.ok()) << setting << " seed " << seed;
      EXPECT_EQ(collected->metrics.leaders_by_term.empty(), !elected) << setting << " seed " << seed;
      EXPECT_EQ(collected->failed_expectations, failed) << setting << " seed " << seed;
      EXPECT_EQ(uncollected->failed_expectations, failed) << setting << " seed " << seed;
    }
  }
}

// A runner used seed after seed starts each from nothing of the one before
// (ScenarioFiles.AReusedRunnerRunsEachSeedAsANewRunDoes compares every
// shipped scenario). Here two things the shipped ones do not show: a seed
// that elects no leader after seeds that did (the cluster view remembers who
// held the role), and fault times drawn anew from each seed (the fault
// driver keeps the last seed's).
TEST(Runner_Reuse, EachSeedRunsAsANewRunWhateverRanBefore) {
  const std::string no_leader_within_160ms = R"({"nodes": 5, "duration": "160ms", "algorithm": "raft",
      "expect": {"elected": true}})";
  const std::string crash_at_a_drawn_time = R"({"nodes": 5, "duration": "2s", "algorithm": "raft",
      "faults": [{"at": {"uniform": ["300ms", "900ms"]}, "crash": "leader", "for": {"uniform": ["50ms", "400ms"]}}]})";
  const RunOptions verdict_only{.hash_trace = false, .collect_metrics = false, .track_failovers = false};
  for (const std::string& text : {no_leader_within_160ms, crash_at_a_drawn_time}) {
    auto scenario = ParseScenario(text, "runner-test.json");
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    const auto shared = std::make_shared<const Scenario>(*scenario);
    for (const RunOptions& options : {RunOptions{}, verdict_only}) {
      ScenarioRunner runner(shared, options);
      std::set<bool> met;
      for (const uint64_t seed : {3, 1, 4, 2, 5, 1}) {
        auto reused = runner.Run(seed);
        auto fresh = RunScenario(*scenario, seed, options);
        ASSERT_TRUE(reused.ok() && fresh.ok()) << text << " seed " << seed;
        EXPECT_EQ(reused->failed_expectations, fresh->failed_expectations) << text << " seed " << seed;
        EXPECT_EQ(reused->trace_hash, fresh->trace_hash) << text << " seed " << seed;
        EXPECT_EQ(reused->trace_records, fresh->trace_records) << text << " seed " << seed;
        EXPECT_EQ(reused->end, fresh->end) << text << " seed " << seed;
        EXPECT_EQ(reused->stats.messages_sent, fresh->stats.messages_sent) << text << " seed " << seed;
        EXPECT_EQ(reused->failovers.size(), fresh->failovers.size()) << text << " seed " << seed;
        met.insert(fresh->met_expectations());
      }
      if (text == no_leader_within_160ms) {
        EXPECT_EQ(met.size(), 2u) << "seeds that elect and seeds that do not";
      }
    }
  }
}

// A run stopped part way (at its fourth stop check, not before it started)
// leaves the runner able to run the next seed as a new run does.
TEST(Runner_Reuse, ARunStoppedPartWayLeavesTheNextSeedAlone) {
  auto scenario = ParseScenario(R"({"nodes": 5, "duration": "2s", "algorithm": "raft"})", "runner-test.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  int checks_left = 3;
  RunOptions options;
  options.should_stop = [&checks_left] { return checks_left-- == 0; };
  ScenarioRunner runner(std::make_shared<const Scenario>(*scenario), options);
  EXPECT_EQ(runner.Run(1).status().code(), absl::StatusCode::kCancelled);
  checks_left = -1;  // no more stops
  auto after = runner.Run(2);
  auto fresh = RunScenario(*scenario, 2);
  ASSERT_TRUE(after.ok() && fresh.ok());
  EXPECT_EQ(after->trace_hash, fresh->trace_hash);
  EXPECT_EQ(after->trace_records, fresh->trace_records);
}

absl::StatusOr<Scenario> VoteTwiceScenario() {
  return LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/raft-bug-vote-twice.json");
}

TEST(Runner_TraceHash, AnUnhashedRunHasTheHashedRunsVerdictAndItsRepeatTheHash) {
  auto scenario = VoteTwiceScenario();
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  int violating = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    auto hashed = RunScenario(*scenario, seed);
    auto unhashed = RunScenario(*scenario, seed, {.hash_trace = false});
    ASSERT_TRUE(hashed.ok() && unhashed.ok()) << seed;
    EXPECT_TRUE(hashed->trace_hashed);
    EXPECT_FALSE(unhashed->trace_hashed);
    EXPECT_EQ(unhashed->trace_hash, 0u);
    EXPECT_TRUE(unhashed->checkpoints.hashes.empty());
    EXPECT_EQ(unhashed->trace_records, hashed->trace_records) << seed;
    EXPECT_EQ(unhashed->violated_checkers(), hashed->violated_checkers()) << seed;
    EXPECT_EQ(unhashed->failed_expectations, hashed->failed_expectations) << seed;
    if (!hashed->violations.empty()) ++violating;

    auto again = RunAgainHashed(*scenario, seed, *unhashed, RunOptions{});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->trace_hashed);
    EXPECT_EQ(again->trace_hash, hashed->trace_hash) << seed;
    EXPECT_EQ(again->checkpoints.hashes, hashed->checkpoints.hashes) << seed;
  }
  EXPECT_GT(violating, 0) << "the scenario's bug shows in some of these seeds";
}

// Loss keeps a shards holder's renewals from the store until its view runs
// out 4.6 ms into a write's preparation. It steps down and releases the key,
// which node 0 takes at once; the write must not follow (it used to, after
// node 0's first: stale_token, which the table keeps under loss).
TEST(Runner_Shards, AViewThatEndsWhileAWriteIsPreparedAbandonsTheWrite) {
  auto scenario = ParseScenario(R"({"algorithm": {"name": "shards", "options": {"cap": 5, "keys": 5,
      "lease_ttl": "1067ms", "poll_interval": "1455ms", "request_timeout": "368ms", "safety_margin": 0.604,
      "wait": "watch", "writes": true}}, "duration": "5608ms", "nodes": 2, "resource": {"fencing": false},
      "network": {"drop": 0.05, "latency": {"uniform": ["1ms", "1ms"]}}, "checkers": ["stale_token"]})",
                                "shards-deadline.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  auto result = RunScenario(*scenario, 1107, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->violations.empty()) << result->violations.front().message;
  EXPECT_GT(result->metrics.writes_accepted, 100);  // the holders do write
}

TEST(Runner_TraceHash, RunningAgainRefusesARunThatDoesNotRepeat) {
  auto scenario = VoteTwiceScenario();
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  auto first = RunScenario(*scenario, 1, {.hash_trace = false});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(RunAgainHashed(*scenario, 1, *first, RunOptions{}).ok());

  RunResult more_records = *first;
  ++more_records.trace_records;
  auto status = RunAgainHashed(*scenario, 1, more_records, RunOptions{}).status();
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_NE(status.message().find("did not repeat"), std::string::npos) << status;

  RunResult other_violation = *first;
  other_violation.violations.push_back({.checker = "election_safety"});
  EXPECT_TRUE(absl::IsInternal(RunAgainHashed(*scenario, 1, other_violation, RunOptions{}).status()));
  ASSERT_FALSE(first->violations.empty()) << "seed 1 of the scenario shows its bug";
  RunResult moved = *first;
  ++moved.violations.front().trace_index;
  EXPECT_TRUE(absl::IsInternal(RunAgainHashed(*scenario, 1, moved, RunOptions{}).status()));
  RunResult other_expectation = *first;
  other_expectation.failed_expectations.push_back("something else");
  EXPECT_TRUE(absl::IsInternal(RunAgainHashed(*scenario, 1, other_expectation, RunOptions{}).status()));
}

TEST(Runner_TraceHash, NoReproIsWrittenFromAnUnhashedRun) {
  auto scenario = VoteTwiceScenario();
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  auto unhashed = RunScenario(*scenario, 1, {.hash_trace = false});
  ASSERT_TRUE(unhashed.ok()) << unhashed.status();
  const std::string path = ::testing::TempDir() + "/runner-test-unhashed.repro.json";
  std::remove(path.c_str());
  const absl::Status status = WriteReproFile(path, *scenario, *unhashed, {}, {});
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_FALSE(std::ifstream(path).good()) << "nothing written";
}

// bench/etcd-raft-trial-default-checkers.json measures the trial with the
// default checkers alone, which do not judge re-election: it must run the
// same traces as the checked trial, whose liveness checker does.
TEST(Runner_EtcdTrial, TheDefaultCheckersVariantRunsTheCheckedTrialsTraces) {
  auto checked = LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/bench/etcd-raft-trial.json");
  auto unchecked = LoadScenarioFile(std::string(ELECTSIM_SOURCE_DIR) + "/bench/etcd-raft-trial-default-checkers.json");
  ASSERT_TRUE(checked.ok()) << checked.status();
  ASSERT_TRUE(unchecked.ok()) << unchecked.status();
  ASSERT_NE(std::find(checked->checkers.begin(), checked->checkers.end(), "liveness"), checked->checkers.end());
  ASSERT_EQ(std::find(unchecked->checkers.begin(), unchecked->checkers.end(), "liveness"), unchecked->checkers.end());
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    auto a = RunScenario(*checked, seed);
    auto b = RunScenario(*unchecked, seed);
    ASSERT_TRUE(a.ok() && b.ok()) << seed;
    EXPECT_TRUE(a->met_expectations() && a->violations.empty()) << seed << ": the checked trial re-elects";
    EXPECT_LT(a->end, sim::TimeNs::Seconds(2)) << seed << ": stopped by the new leader, not by max";
    EXPECT_EQ(b->trace_hash, a->trace_hash) << seed;
    EXPECT_EQ(b->end, a->end) << seed;
  }
}

}  // namespace
}  // namespace electsim
