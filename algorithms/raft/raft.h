// Raft (Ongaro & Ousterhout, "In Search of an Understandable Consensus
// Algorithm"): leader election (section 5.2) with the replicated log that the
// election restriction protects (5.3, 5.4), plus etcd's pre-vote and
// check-quorum options. The log carries the leader_work writes, one entry per
// write, and a no-op entry each new leader appends in its own term. Term,
// vote and log live in stable storage and are synced before any message that
// depends on them leaves. Deliberate bugs can be switched on so that the
// checkers can be seen to fire.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms/raft/log.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/leadership.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms {

// The "raft" algorithm (options: election_timeout_min, election_timeout_max,
// heartbeat_interval, pre_vote, check_quorum, bug).
const Algorithm& RaftAlgorithm();

namespace raft {

// Wire messages. Every one carries `term` first.
// RequestVote and PreVote: term (PreVote: the term the sender would campaign
// in), last_index, last_term (of the sender's log).
struct RequestVote {
  static constexpr sim::RecordType kType{"raft.request_vote", {"term", "last_index", "last_term"}};
  int64_t term = 0;
  int64_t last_index = 0;
  int64_t last_term = 0;
};
struct PreVote {
  static constexpr sim::RecordType kType{"raft.pre_vote", {"term", "last_index", "last_term"}};
  int64_t term = 0;
  int64_t last_index = 0;
  int64_t last_term = 0;
};
// Vote and PreVote replies: term, granted.
struct Vote {
  static constexpr sim::RecordType kType{"raft.vote", {"term", "granted"}};
  int64_t term = 0;
  int64_t granted = 0;
};
struct PreVoteReply {
  static constexpr sim::RecordType kType{"raft.pre_vote_reply", {"term", "granted"}};
  int64_t term = 0;
  int64_t granted = 0;
};
// AppendEntries, sent by leaders only: term, prev_index, prev_term, commit
// (the leader's commit index) and, when it carries an entry (at
// prev_index+1), entry_term and entry. Without an entry it is a heartbeat:
// the message holds only its first kHeartbeatFields fields.
struct Append {
  static constexpr sim::RecordType kType{"raft.append",
                                         {"term", "prev_index", "prev_term", "commit", "entry_term", "entry"}};
  static constexpr int kHeartbeatFields = 4;
  int64_t term = 0;
  int64_t prev_index = 0;
  int64_t prev_term = 0;
  int64_t commit = 0;
  int64_t entry_term = 0;
  int64_t entry = 0;
};
// AppendEntries reply: term, success, index (on success the highest index
// known to match the leader's log; on failure the prev_index that did not
// match) and, on failure only, hint (the follower's last index, to skip back
// faster).
struct AppendReply {
  static constexpr sim::RecordType kType{"raft.append_reply", {"term", "success", "index", "hint"}};
  static constexpr int kSuccessFields = 3;
  int64_t term = 0;
  int64_t success = 0;
  int64_t index = 0;
  int64_t hint = 0;
};
inline constexpr const sim::RecordType& kRequestVote = RequestVote::kType;
inline constexpr const sim::RecordType& kPreVote = PreVote::kType;
inline constexpr const sim::RecordType& kVote = Vote::kType;
inline constexpr const sim::RecordType& kPreVoteReply = PreVoteReply::kType;
inline constexpr const sim::RecordType& kAppend = Append::kType;
inline constexpr const sim::RecordType& kAppendReply = AppendReply::kType;

// Stable-storage keys: what Raft must remember across a crash (the log's
// own keys are in log.h).
inline constexpr std::string_view kTermKey = "term";
inline constexpr std::string_view kVotedForKey = "voted_for";  // -1 = nobody
// Boots so far, persisted at each start: keeps entry ids of different
// incarnations apart.
inline constexpr std::string_view kBootsKey = "boots";

struct RaftConfig {
  uint32_t node_count = 0;
  sim::TimeNs election_timeout_min_ns = sim::TimeNs::Millis(150);
  sim::TimeNs election_timeout_max_ns = sim::TimeNs::Millis(300);
  sim::TimeNs heartbeat_interval_ns = sim::TimeNs::Millis(50);
  bool pre_vote = false;
  bool check_quorum = false;
  // etcd's rule (raft.go, stepCandidate, VoteLost): a (pre-)candidate that a
  // majority refused becomes a follower at once, with a fresh timeout.
  bool step_down_on_lost_vote = false;
  sim::NodeId resource = sim::kNoNode;
  LeaderWorkConfig leader_work;
};

// The role this node has, as in LogCabin's RaftConsensus::State.
enum class Role {
  // Follows the leader of the current term (if it knows one), appends what
  // it sends and grants votes. Left for kPreCandidate (pre_vote on) or
  // kCandidate when neither AppendEntries from the leader nor a vote it
  // granted reset the election timer within the election timeout.
  kFollower,
  // Pre-vote round (pre_vote on): asks whether peers would vote for it in
  // currentTerm+1 without changing any term. Left for kCandidate on a
  // majority of pre-votes, for kFollower on AppendEntries or a higher term,
  // and re-entered when the election timeout fires again. Reported to
  // checkers as vocab::Role::kCandidate.
  kPreCandidate,
  // Campaigning in its own term with its own vote. Left for kLeader on a
  // majority of votes, for kFollower on AppendEntries of its term or a
  // higher term, and re-entered (next term) when the election timeout fires.
  kCandidate,
  // Leads currentTerm: replicates its log, commits, does the leader work.
  // Left for kFollower on a higher term, or (check_quorum on) when a
  // majority has not answered within an election timeout.
  kLeader,
};

// One Raft node. A pure state machine over the simulator's Context. The
// virtual steps are where mutants (raft_mutants.cc) differ from it.
class RaftNode : public sim::Process, private LogStorage {
 public:
  // Timer tags: the timers' purposes, for tests that fire them by hand.
  static constexpr uint64_t kElectionTag = 1;
  static constexpr uint64_t kHeartbeatTag = 2;
  static constexpr uint64_t kCheckQuorumTag = 3;

  RaftNode(sim::NodeId self, RaftConfig config);

  void OnStart(sim::Context& ctx) override;
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) override;

 protected:
  Role role() const { return role_; }
  sim::Term current_term() const { return current_term_; }
  sim::NodeId voted_for() const { return voted_for_; }
  const RaftConfig& config() const { return config_; }
  const RaftLog& log() const { return log_; }

  // The steps a mutant may override.
  //
  // Whether this node may vote for `candidate` in the current term: not yet
  // voted, or voted for it already (a repeated request).
  virtual bool MayVoteFor(sim::NodeId candidate) const;
  // The (pre-)vote request's log is at least as up-to-date as ours.
  virtual bool CandidateLogIsUpToDate(int64_t last_index, int64_t last_term) const;
  // A message of a higher term arrived (from `leader` when it is
  // AppendEntries): become its follower. False drops the message.
  virtual bool AdoptHigherTerm(sim::Context& ctx, sim::Term term, sim::NodeId leader);
  // Whether the leader may commit `entry` by counting its replicas (section
  // 5.4.2: only entries of its own term).
  virtual bool CommitsByCounting(const Entry& entry) const;
  // How far a follower commits on AppendEntries: Figure 2's min(leaderCommit,
  // index of last new entry), the last index this message proved to match.
  virtual LogIndex FollowerCommitBound(LogIndex leader_commit, LogIndex matched) const;
  // Stores votedFor (kNoNode: nobody) with the next sync.
  virtual void PersistVote(sim::Context& ctx, sim::NodeId candidate);
  // Makes the buffered writes durable.
  virtual void SyncWrites(sim::Context& ctx);
  // Votes (or pre-votes) a candidate needs, itself included.
  virtual uint32_t quorum() const { return config_.node_count / 2 + 1; }
  virtual void HandlePreVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  virtual void StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message);

  // etcd's Step: term handling for every message, then role dispatch.
  void Step(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepFollower(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepPreCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepLeader(sim::Context& ctx, sim::NodeId from, const sim::Message& message);

  // Transitions.
  void BecomeFollower(sim::Context& ctx, sim::Term term, sim::NodeId leader);
  void BecomePreCandidate(sim::Context& ctx);
  void BecomeCandidate(sim::Context& ctx);
  void BecomeLeader(sim::Context& ctx);
  // Leaves leadership (ends the leader work and the leader's timers); the
  // caller then becomes follower. Does nothing when not leader.
  void StepDown(sim::Context& ctx);

  // Handlers shared by several roles.
  void HandleRequestVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void HandleAppend(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void HandleAppendReply(sim::Context& ctx, sim::NodeId from, const sim::Message& message);

  // Leader: appends an entry of the current term and sends it to the peers
  // that were up to date.
  void AppendAsLeader(sim::Context& ctx);
  // Leader: AppendEntries for `peer` at its next_index_ (with the entry
  // there, if any; a heartbeat otherwise).
  void SendAppend(sim::Context& ctx, sim::NodeId peer);
  // Leader: commits the highest index a majority holds (see CommitsByCounting).
  void AdvanceLeaderCommit(sim::Context& ctx);
  // Raises commit_index_ to `index` (never lowers it), reporting each entry.
  void CommitTo(sim::Context& ctx, LogIndex index);
  EntryId NewEntryId();

  // Moves to a higher term: writes it with no vote, then reports it.
  void UpdateTerm(sim::Context& ctx, sim::Term term);
  void RecordVote(sim::Context& ctx, sim::NodeId candidate);
  // LogStorage: a buffered write that the next Send, or the end of the
  // message being handled, syncs.
  void Write(sim::Context& ctx, std::string_view key, int64_t value) override;
  // Syncs the buffered writes, if any.
  void MakeDurable(sim::Context& ctx);
  // Every send goes through here: whatever the message depends on (term,
  // vote, log) is made durable before it leaves.
  void Send(sim::Context& ctx, sim::NodeId to, const sim::Message& message);
  void Broadcast(sim::Context& ctx, const sim::Message& message);

  // Takes `role` and reports it (see LeadershipReport for what is reported when).
  void SetRole(sim::Context& ctx, Role role);
  // Believes `leader` leads current_term_, and reports it when that is news.
  void SetBelief(sim::Context& ctx, sim::NodeId leader);
  void ResetElectionTimer(sim::Context& ctx);
  // Counts `from`'s grant; true once a majority (self included) granted.
  bool CountGrant(sim::NodeId from);
  // Counts `from`'s refusal; true once a majority refused (step_down_on_lost_vote).
  bool CountRefusal(sim::NodeId from);
  void ResetGrants();
  // A round a majority refused: back to follower, with a fresh timeout.
  void LoseRound(sim::Context& ctx);
  // Whether a leader has been heard from within election_timeout_min (the
  // leader itself always counts): etcd's "lease" that, with check_quorum,
  // makes a node ignore (pre-)vote requests.
  bool HeardFromLeaderRecently(sim::Context& ctx) const;

 private:
  const sim::NodeId self_;
  const RaftConfig config_;

  // Persistent state (written before it is acted on, synced before any
  // message that depends on it leaves).
  // Latest term this node has seen.
  sim::Term current_term_;
  // Candidate this node voted for in current_term_, kNoNode if none.
  sim::NodeId voted_for_ = sim::kNoNode;
  RaftLog log_;

  // Volatile state.
  Role role_ = Role::kFollower;
  // Highest index known to be committed.
  LogIndex commit_index_;
  // Stable-storage writes not synced yet.
  bool unsynced_ = false;
  // This incarnation's number (from kBootsKey) and the entries it created.
  uint64_t boot_ = 0;
  uint64_t entries_created_ = 0;
  // Leader of current_term_ as far as this node knows.
  sim::NodeId leader_ = sim::kNoNode;
  // What this node has told the checkers about its role and its leader.
  LeadershipReport report_;
  // Monotonic time of the last AppendEntries from the current leader.
  std::optional<sim::TimeNs> last_leader_contact_;
  // Peers that granted this round's (pre-)vote, indexed by node, and how
  // many. Sized when a round starts: a follower of a 10,000-node cluster
  // holds no per-peer state.
  std::vector<bool> granted_;
  uint32_t grant_count_ = 0;
  // The same for refusals, with step_down_on_lost_vote only.
  std::vector<bool> refused_;
  uint32_t refusal_count_ = 0;
  // Leader with check_quorum: peers heard from in this quorum period (sized
  // on becoming leader).
  std::vector<bool> recently_active_;
  // Leader: per peer, the next index to send and the highest index known to
  // match (Figure 2's nextIndex and matchIndex).
  std::vector<LogIndex> next_index_;
  std::vector<LogIndex> match_index_;

  Timer election_timer_{kElectionTag};
  Timer heartbeat_timer_{kHeartbeatTag};       // leader: AppendEntries to every peer
  Timer check_quorum_timer_{kCheckQuorumTag};  // leader with check_quorum: count who answered

  LeaderWork work_;
};

}  // namespace raft
}  // namespace algorithms
