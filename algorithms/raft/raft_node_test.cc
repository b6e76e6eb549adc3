// One Raft node driven by hand through a FakeContext: the vote restriction,
// etcd's pre-vote rule, AppendEntries on the follower side, the leader's
// commit rule and backing up, and what reaches the disk before a message
// leaves. Whole-cluster behaviour is in raft_test.cc.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/raft/raft.h"
#include "algorithms/raft/raft_mutants.h"
#include "algorithms/testing/fake_context.h"
#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"

namespace algorithms::raft {
namespace {

using ::algorithms::testing::FakeContext;
using sim::NodeId;
using sim::TimeNs;

constexpr uint32_t kNodes = 3;

RaftConfig Config(bool check_quorum = false) {
  RaftConfig config;
  config.node_count = kNodes;
  config.resource = NodeId(kNodes);
  config.pre_vote = true;
  config.check_quorum = check_quorum;
  return config;
}

sim::Message RequestVote(const sim::RecordType& type, uint64_t term, uint64_t last_index, uint64_t last_term) {
  return sim::Message(type,
                      {static_cast<int64_t>(term), static_cast<int64_t>(last_index), static_cast<int64_t>(last_term)});
}

struct NewEntry {
  uint64_t term;
  uint64_t id;
};

sim::Message Append(uint64_t term, uint64_t prev_index, uint64_t prev_term, uint64_t commit,
                    std::optional<NewEntry> entry = std::nullopt) {
  const raft::Append append{.term = static_cast<int64_t>(term),
                            .prev_index = static_cast<int64_t>(prev_index),
                            .prev_term = static_cast<int64_t>(prev_term),
                            .commit = static_cast<int64_t>(commit),
                            .entry_term = entry ? static_cast<int64_t>(entry->term) : 0,
                            .entry = entry ? static_cast<int64_t>(entry->id) : 0};
  return entry ? sim::Message(append) : sim::Message(append, raft::Append::kHeartbeatFields);
}

sim::Message AppendReply(uint64_t term, bool success, uint64_t index, uint64_t hint = 0) {
  return raft::AppendReply{.term = static_cast<int64_t>(term),
                           .success = success ? 1 : 0,
                           .index = static_cast<int64_t>(index),
                           .hint = static_cast<int64_t>(hint)};
}

sim::Message Vote(uint64_t term) { return raft::Vote{.term = static_cast<int64_t>(term), .granted = 1}; }

// A node booted from stable storage holding `term` and a log whose entries
// have the given terms (entry ids 101, 102, ...).
struct Harness {
  // `bug`: "none" (the reference) or a mutant's name.
  Harness(uint32_t self, RaftConfig config, uint64_t term, const std::vector<uint64_t>& entry_terms,
          std::string_view bug = "none")
      : ctx(NodeId(self)), node_ptr(CreateNode(bug, NodeId(self), config)), node(*node_ptr) {
    ctx.durable["term"] = static_cast<int64_t>(term);
    for (size_t i = 0; i < entry_terms.size(); ++i) {
      ctx.durable["log." + std::to_string(i + 1) + ".term"] = static_cast<int64_t>(entry_terms[i]);
      ctx.durable["log." + std::to_string(i + 1) + ".id"] = static_cast<int64_t>(101 + i);
    }
    ctx.durable["log.length"] = static_cast<int64_t>(entry_terms.size());
    node.OnStart(ctx);
    ctx.ClearOutputs();
  }
  void Deliver(uint32_t from, const sim::Message& message) { node.OnMessage(ctx, NodeId(from), message); }
  void FireElectionTimer() { node.OnTimer(ctx, *ctx.LiveTimer(RaftNode::kElectionTag), RaftNode::kElectionTag); }
  // The only reply of `type` sent since the last call, or nullopt.
  std::optional<sim::Message> TakeReply(const sim::RecordType& type) {
    const auto sent = ctx.SentOf(type);
    ctx.sent.clear();
    if (sent.size() != 1) return std::nullopt;
    return sent[0].message;
  }
  bool Granted(const sim::RecordType& request, const sim::RecordType& reply, uint32_t from, uint64_t term,
               uint64_t last_index, uint64_t last_term) {
    Deliver(from, RequestVote(request, term, last_index, last_term));
    const auto answer = TakeReply(reply);
    EXPECT_TRUE(answer.has_value()) << request.name() << " got no reply";
    return answer && answer->Get("granted") != 0;
  }
  // What the node would read back now (written, synced or not).
  int64_t Load(const std::string& key) const { return ctx.Load(key).value_or(-2); }
  // What a power loss would leave.
  int64_t Durable(const std::string& key) const {
    auto it = ctx.durable.find(key);
    return it == ctx.durable.end() ? -2 : it->second;
  }
  std::vector<int64_t> CommittedIndices() const {
    std::vector<int64_t> out;
    for (const auto& o : ctx.Observed(vocab::kLogCommit)) out.push_back(o.Get("index"));
    return out;
  }

  FakeContext ctx;
  std::unique_ptr<RaftNode> node_ptr;
  RaftNode& node;
};

// ---- section 5.4.1: vote only for an up-to-date log ----

TEST(RaftNode_VoteRestriction, ComparesLastTermsThenLengths) {
  const std::vector<uint64_t> log = {1, 2};  // ends in (index 2, term 2)
  struct Case {
    uint64_t last_index, last_term;
    bool granted;
  };
  for (const Case& c : {Case{5, 1, false},    // longer, but an older last term
                        Case{1, 2, false},    // same last term, shorter
                        Case{2, 2, true},     // identical
                        Case{1, 3, true},     // shorter, but a newer last term
                        Case{3, 2, true}}) {  // same last term, longer
    Harness vote(1, Config(), 2, log);
    EXPECT_EQ(vote.Granted(kRequestVote, kVote, 0, 3, c.last_index, c.last_term), c.granted)
        << "vote for (" << c.last_index << ", " << c.last_term << ")";
    Harness pre_vote(1, Config(), 2, log);
    EXPECT_EQ(pre_vote.Granted(kPreVote, kPreVoteReply, 0, 3, c.last_index, c.last_term), c.granted)
        << "pre-vote for (" << c.last_index << ", " << c.last_term << ")";
  }
}

TEST(RaftNode_VoteRestriction, SkipLogCheckVotesForAStaleLog) {
  Harness vote(1, Config(), 2, {1, 2}, "skip_log_check");
  EXPECT_TRUE(vote.Granted(kRequestVote, kVote, 0, 3, 5, 1));
  Harness pre_vote(1, Config(), 2, {1, 2}, "skip_log_check");
  EXPECT_TRUE(pre_vote.Granted(kPreVote, kPreVoteReply, 0, 3, 0, 0));
}

TEST(RaftNode_VoteRestriction, ARefusedVoteStillMovesTheTermButKeepsTheVoteFree) {
  Harness h(1, Config(), 2, {1, 2});
  EXPECT_FALSE(h.Granted(kRequestVote, kVote, 0, 3, 1, 1));
  EXPECT_EQ(h.Durable("term"), 3);
  EXPECT_EQ(h.Durable("voted_for"), -1);
  EXPECT_TRUE(h.Granted(kRequestVote, kVote, 2, 3, 2, 2));
  EXPECT_EQ(h.Durable("voted_for"), 2);
  EXPECT_FALSE(h.Granted(kRequestVote, kVote, 0, 3, 9, 9));  // one vote per term, logs aside
}

// ---- pre-vote and check-quorum, as etcd (raft.go, Step) ----

// Node 1 follows node 0 in term 2 (heard at 1s), then node 2 asks for a
// pre-vote and a vote for term 3 at `asked_at`, with a log as good as ours.
struct LeaseOutcome {
  bool pre_vote_answered = false;
  bool pre_vote_granted = false;
  bool vote_answered = false;
  int64_t term_after = 0;
};
LeaseOutcome AskWhileFollowing(bool check_quorum, TimeNs asked_at) {
  Harness h(1, Config(check_quorum), 2, {1, 2});
  h.ctx.now = TimeNs::Seconds(1);
  h.Deliver(0, Append(2, 2, 2, 0));
  EXPECT_TRUE(h.TakeReply(kAppendReply).has_value());
  h.ctx.now = asked_at;
  LeaseOutcome out;
  h.Deliver(2, RequestVote(kPreVote, 3, 2, 2));
  const auto pre_vote = h.TakeReply(kPreVoteReply);
  out.pre_vote_answered = pre_vote.has_value();
  out.pre_vote_granted = pre_vote && pre_vote->Get("granted") != 0;
  h.Deliver(2, RequestVote(kRequestVote, 3, 2, 2));
  out.vote_answered = h.TakeReply(kVote).has_value();
  out.term_after = h.Load("term");
  return out;
}

TEST(RaftNode_PreVote, WithoutCheckQuorumAPreVoteIsGrantedWhileTheLeaderIsHeard) {
  const LeaseOutcome out = AskWhileFollowing(/*check_quorum=*/false, TimeNs::Millis(1050));
  EXPECT_TRUE(out.pre_vote_granted);
  EXPECT_TRUE(out.vote_answered);
  EXPECT_EQ(out.term_after, 3);
}

TEST(RaftNode_PreVote, WithCheckQuorumRequestsAreIgnoredWithinTheLease) {
  const LeaseOutcome in_lease = AskWhileFollowing(/*check_quorum=*/true, TimeNs::Millis(1149));
  EXPECT_FALSE(in_lease.pre_vote_answered);  // ignored: no reply at all
  EXPECT_FALSE(in_lease.vote_answered);
  EXPECT_EQ(in_lease.term_after, 2);  // and the term did not move
  // election_timeout_min (150ms) after the last AppendEntries the lease is over.
  const LeaseOutcome after = AskWhileFollowing(/*check_quorum=*/true, TimeNs::Millis(1150));
  EXPECT_TRUE(after.pre_vote_granted);
  EXPECT_TRUE(after.vote_answered);
  EXPECT_EQ(after.term_after, 3);
}

// ---- AppendEntries, follower side ----

// etcd's VoteLost: with step_down_on_lost_vote a candidate refused by a
// majority becomes a follower at once, with a fresh timeout; without it, it
// stays a candidate and waits its timeout out (Figure 2).
TEST(RaftNode_LostVote, ACandidateRefusedByAMajorityStepsDownOnlyWithTheOption) {
  for (const bool step_down : {false, true}) {
    RaftConfig config = Config();
    config.node_count = 5;
    config.pre_vote = false;
    config.step_down_on_lost_vote = step_down;
    Harness h(0, config, 1, {});
    h.FireElectionTimer();
    ASSERT_EQ(h.ctx.Observed(vocab::kRoleChange).back().Get("role"), static_cast<int64_t>(vocab::Role::kCandidate));
    const std::optional<sim::TimerId> timer = h.ctx.LiveTimer(RaftNode::kElectionTag);
    h.ctx.ClearOutputs();
    const sim::Message refused = raft::Vote{.term = 2, .granted = 0};
    h.Deliver(1, refused);
    h.Deliver(1, refused);  // a duplicate counts once
    h.Deliver(2, refused);
    EXPECT_TRUE(h.ctx.Observed(vocab::kRoleChange).empty()) << "two refusals of five are no majority";
    h.Deliver(3, refused);
    const auto roles = h.ctx.Observed(vocab::kRoleChange);
    if (step_down) {
      ASSERT_EQ(roles.size(), 1u);
      EXPECT_EQ(roles.back().Get("role"), static_cast<int64_t>(vocab::Role::kFollower));
      EXPECT_EQ(roles.back().Get("term"), 2);  // the term stays
      EXPECT_NE(h.ctx.LiveTimer(RaftNode::kElectionTag), timer) << "the timeout restarts";
    } else {
      EXPECT_TRUE(roles.empty());
      EXPECT_EQ(h.ctx.LiveTimer(RaftNode::kElectionTag), timer);
    }
  }
}

TEST(RaftNode_LostVote, APreCandidateRefusedByAMajorityStepsDownWithTheOption) {
  RaftConfig config = Config();
  config.step_down_on_lost_vote = true;
  Harness h(0, config, 1, {});
  h.FireElectionTimer();
  h.ctx.ClearOutputs();
  // A refusal carries the refuser's term, here the pre-candidate's own.
  h.Deliver(1, raft::PreVoteReply{.term = 1, .granted = 0});
  EXPECT_TRUE(h.ctx.Observed(vocab::kRoleChange).empty()) << "one refusal of three is no majority";
  h.Deliver(2, raft::PreVoteReply{.term = 1, .granted = 0});
  const auto roles = h.ctx.Observed(vocab::kRoleChange);
  ASSERT_EQ(roles.size(), 1u);
  EXPECT_EQ(roles.back().Get("role"), static_cast<int64_t>(vocab::Role::kFollower));
  EXPECT_EQ(roles.back().Get("term"), 1);  // a pre-vote round never moves the term
}

TEST(RaftNode_Append, RejectsAMissingOrMismatchedPrevEntryWithItsLastIndex) {
  Harness h(1, Config(), 3, {1, 1, 2});
  h.Deliver(0, Append(3, 5, 2, 0));  // we have no index 5
  auto reply = h.TakeReply(kAppendReply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->Get("success"), 0);
  EXPECT_EQ(reply->Get("index"), 5);
  EXPECT_EQ(reply->Get("hint"), 3);
  h.Deliver(0, Append(3, 3, 3, 0));  // index 3 holds term 2, not 3
  reply = h.TakeReply(kAppendReply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->Get("success"), 0);
  EXPECT_EQ(reply->Get("index"), 3);
  EXPECT_EQ(h.Load("log.length"), 3);  // nothing dropped on a mismatch
}

TEST(RaftNode_Append, ReplacesAConflictingSuffixButNotOnAReorderedDuplicate) {
  Harness h(1, Config(), 3, {1, 1, 2, 2});
  const sim::Message first = Append(3, 2, 1, 0, NewEntry{3, 77});
  h.Deliver(0, first);
  EXPECT_EQ(h.Load("log.length"), 3);
  EXPECT_EQ(h.Load("log.3.id"), 77);
  ASSERT_EQ(h.ctx.Observed(vocab::kLogTruncate).size(), 1u);
  EXPECT_EQ(h.ctx.Observed(vocab::kLogTruncate)[0].Get("index"), 3);
  auto reply = h.TakeReply(kAppendReply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->Get("success"), 1);
  EXPECT_EQ(reply->Get("index"), 3);
  h.Deliver(0, Append(3, 3, 3, 0, NewEntry{3, 78}));
  EXPECT_EQ(h.Load("log.length"), 4);
  // The first message arrives again, late: its entry is already there.
  h.Deliver(0, first);
  EXPECT_EQ(h.Load("log.length"), 4);
  EXPECT_EQ(h.Load("log.4.id"), 78);
  EXPECT_EQ(h.ctx.Observed(vocab::kLogTruncate).size(), 1u);
}

TEST(RaftNode_Append, CommitsNoFurtherThanTheLeaderDidAndThisMessageVerified) {
  // Entries 2..4 came from an older leader and may yet be replaced.
  Harness h(1, Config(), 2, {1, 1, 1, 1});
  h.Deliver(0, Append(2, 1, 1, 4));  // matches only up to index 1
  EXPECT_EQ(h.CommittedIndices(), std::vector<int64_t>{1});
  h.Deliver(0, Append(2, 2, 1, 4));
  EXPECT_EQ(h.CommittedIndices(), (std::vector<int64_t>{1, 2}));
  h.Deliver(0, Append(2, 3, 1, 2, NewEntry{2, 90}));  // the leader has committed only 2
  EXPECT_EQ(h.CommittedIndices(), (std::vector<int64_t>{1, 2}));
}

// ---- the leader: backing up, and what counting replicas may commit ----

// Node 0 holds [term 1, term 2] in term 2, wins term 3 with node 1's vote
// and brings node 1, whose log is [term 1], up to date. Returns the indices
// it reported committed at each step.
struct LeaderRun {
  std::vector<int64_t> after_old_entry_replicated;
  std::vector<int64_t> after_own_entry_replicated;
  bool every_message_left_synced = true;
  size_t sent_on_duplicate_ack = 0;
};
LeaderRun LeadAndReplicate(std::string_view bug) {
  Harness h(0, Config(), 2, {1, 2}, bug);
  h.FireElectionTimer();  // pre-candidate
  h.Deliver(1, sim::Message(kPreVoteReply).Set("term", 3).Set("granted", 1));
  h.Deliver(1, Vote(3));
  LeaderRun run;
  // The no-op of term 3 goes out at once, after entry 2.
  const auto appends = h.ctx.SentOf(kAppend);
  EXPECT_EQ(appends.size(), 2u);
  EXPECT_EQ(appends.back().message.Get("prev_index"), 2);
  EXPECT_EQ(appends.back().message.Get("entry_term"), 3);
  h.ctx.sent.clear();
  h.Deliver(1, AppendReply(3, false, 2, 1));  // node 1 has only index 1
  auto resend = h.TakeReply(kAppend);
  EXPECT_TRUE(resend);
  if (resend) {
    EXPECT_EQ(resend->Get("prev_index"), 1);
    EXPECT_EQ(resend->Get("entry_term"), 2);
  }
  h.Deliver(1, AppendReply(3, false, 2, 1));  // the duplicate of that rejection changes nothing
  EXPECT_TRUE(h.ctx.sent.empty());
  h.Deliver(1, AppendReply(3, true, 2));  // entry 2 (term 2) now on a majority
  run.after_old_entry_replicated = h.CommittedIndices();
  auto next = h.TakeReply(kAppend);
  EXPECT_TRUE(next);
  if (next) {
    EXPECT_EQ(next->Get("prev_index"), 2);
  }
  h.Deliver(1, AppendReply(3, true, 2));  // that acknowledgement again, duplicated on the way
  run.sent_on_duplicate_ack = h.ctx.sent.size();
  h.ctx.sent.clear();
  h.Deliver(1, AppendReply(3, true, 3));  // the no-op of term 3 too
  run.after_own_entry_replicated = h.CommittedIndices();
  run.every_message_left_synced = h.ctx.sent_with_unsynced_writes == 0;
  return run;
}

TEST(RaftNode_Leader, CommitsEarlierTermsOnlyWithAnEntryOfItsOwnTerm) {
  const LeaderRun run = LeadAndReplicate("none");
  EXPECT_TRUE(run.after_old_entry_replicated.empty());
  EXPECT_EQ(run.after_own_entry_replicated, (std::vector<int64_t>{1, 2, 3}));
}

// Each copy of an acknowledgement used to send the next entry once more, so
// duplicates multiplied along a follower's catch-up into a message storm.
TEST(RaftNode_Leader, ADuplicatedAcknowledgementSendsNothing) {
  EXPECT_EQ(LeadAndReplicate("none").sent_on_duplicate_ack, 0u);
}

TEST(RaftNode_Leader, CommitPreviousTermCommitsAnOlderEntryByCountingReplicas) {
  const LeaderRun run = LeadAndReplicate("commit_previous_term");
  EXPECT_EQ(run.after_old_entry_replicated, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(run.after_own_entry_replicated, (std::vector<int64_t>{1, 2, 3}));
}

// ---- what is on disk when a message leaves ----

TEST(RaftNode_Sync, AVoteLeavesOnlyOnceTermAndVoteAreDurable) {
  Harness h(1, Config(), 2, {1});
  h.Deliver(0, RequestVote(kRequestVote, 3, 1, 1));
  ASSERT_EQ(h.ctx.sent.size(), 1u);
  EXPECT_TRUE(h.ctx.sent[0].all_writes_synced);
  EXPECT_EQ(h.Durable("term"), 3);
  EXPECT_EQ(h.Durable("voted_for"), 0);

  Harness unsynced(1, Config(), 2, {1}, "skip_sync");
  unsynced.Deliver(0, RequestVote(kRequestVote, 3, 1, 1));
  ASSERT_EQ(unsynced.ctx.sent.size(), 1u);
  EXPECT_FALSE(unsynced.ctx.sent[0].all_writes_synced);
  EXPECT_EQ(unsynced.ctx.syncs, 0);
  EXPECT_EQ(unsynced.Durable("voted_for"), -2);  // only in the page cache
}

TEST(RaftNode_Sync, AnAcknowledgedEntryIsDurable) {
  Harness h(1, Config(), 2, {1});
  h.Deliver(0, Append(2, 1, 1, 0, NewEntry{2, 55}));
  ASSERT_EQ(h.ctx.sent.size(), 1u);
  EXPECT_TRUE(h.ctx.sent[0].all_writes_synced);
  EXPECT_EQ(h.Durable("log.length"), 2);
  EXPECT_EQ(h.Durable("log.2.id"), 55);
}

TEST(RaftNode_Sync, EveryMessageOfAnElectionAndReplicationLeftSynced) {
  EXPECT_TRUE(LeadAndReplicate("none").every_message_left_synced);
}

// A term learned from a message that needs no answer (here a refused vote
// of a later term) is still made durable: the node reported it, and a
// power loss must not take it back (term_monotonic).
TEST(RaftNode_Sync, ATermLearnedWithoutAnsweringIsDurable) {
  Harness h(0, Config(), 2, {1});
  h.FireElectionTimer();                                                       // pre-candidate for term 3
  h.Deliver(1, sim::Message(kPreVoteReply).Set("term", 3).Set("granted", 1));  // candidate, term 3
  ASSERT_EQ(h.Durable("term"), 3);
  h.ctx.sent.clear();
  h.Deliver(2, sim::Message(kVote).Set("term", 7).Set("granted", 0));
  EXPECT_TRUE(h.ctx.sent.empty());  // nothing to answer
  EXPECT_EQ(h.Load("term"), 7);
  EXPECT_EQ(h.Durable("term"), 7);
}

// ---- restarts ----

// Node 1 votes for node 0 in term 3, restarts, and is asked by node 2.
bool VotesTwiceInATermAcrossARestart(std::string_view bug) {
  Harness h(1, Config(), 2, {1}, bug);
  EXPECT_TRUE(h.Granted(kRequestVote, kVote, 0, 3, 1, 1));
  const std::unique_ptr<RaftNode> restarted = CreateNode(bug, NodeId(1), Config());
  restarted->OnStart(h.ctx);  // same stable storage, fresh process
  h.ctx.sent.clear();
  restarted->OnMessage(h.ctx, NodeId(2), RequestVote(kRequestVote, 3, 1, 1));
  const auto reply = h.TakeReply(kVote);
  EXPECT_TRUE(reply);
  return reply && reply->Get("granted") != 0;
}

TEST(RaftNode_Restart, RemembersItsVoteUnlessTheBugForgetsIt) {
  EXPECT_FALSE(VotesTwiceInATermAcrossARestart("none"));
  EXPECT_TRUE(VotesTwiceInATermAcrossARestart("forget_vote_on_restart"));
}

TEST(RaftNode_Restart, RecoversAndReportsItsLog) {
  Harness h(1, Config(), 4, {1, 1, 3});
  RaftNode restarted(NodeId(1), Config());
  restarted.OnStart(h.ctx);
  const auto appends = h.ctx.Observed(vocab::kLogAppend);
  ASSERT_EQ(appends.size(), 3u);
  EXPECT_EQ(appends[2].Get("index"), 3);
  EXPECT_EQ(appends[2].Get("term"), 3);
  EXPECT_EQ(appends[2].Get("entry"), 103);
  // Its log is what it compares candidates against.
  h.ctx.sent.clear();
  restarted.OnMessage(h.ctx, NodeId(0), RequestVote(kRequestVote, 5, 3, 2));
  const auto reply = h.TakeReply(kVote);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->Get("granted"), 0);
}

}  // namespace
}  // namespace algorithms::raft
