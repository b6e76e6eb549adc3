// Raft leader election (Ongaro & Ousterhout, "In Search of an Understandable
// Consensus Algorithm", section 5.2) with etcd's pre-vote and check-quorum
// options. There is no log: only terms, votes and heartbeats, which is all an
// election needs. Deliberate bugs can be switched on so that the checkers can
// be seen to fire.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/leader_work.h"
#include "sim/process.h"
#include "sim/types.h"

namespace algorithms {

// The "raft" algorithm (options: election_timeout_min, election_timeout_max,
// heartbeat_interval, pre_vote, check_quorum, bug).
const Algorithm& RaftAlgorithm();

namespace raft {

// Wire message types. Every one carries `term`; replies carry `granted`.
inline constexpr std::string_view kRequestVote = "raft.request_vote";
inline constexpr std::string_view kVote = "raft.vote";
inline constexpr std::string_view kPreVote = "raft.pre_vote";
inline constexpr std::string_view kPreVoteReply = "raft.pre_vote_reply";
inline constexpr std::string_view kHeartbeat = "raft.heartbeat";
inline constexpr std::string_view kHeartbeatReply = "raft.heartbeat_reply";
inline constexpr std::string_view kFieldGranted = "granted";

// Stable-storage keys: what Raft must remember across a crash.
inline constexpr std::string_view kTermKey = "term";
inline constexpr std::string_view kVotedForKey = "voted_for";  // -1 = nobody

// Deliberately broken behaviours, for showing that the checkers fire.
enum class Bug {
  kNone,
  // Grants a vote to every candidate of the current term, even after voting.
  kVoteTwice,
  // A leader ignores messages carrying a higher term instead of stepping down.
  kIgnoreHigherTerm,
};

struct RaftConfig {
  uint32_t node_count = 0;
  sim::TimeNs election_timeout_min_ns = sim::TimeNs::Millis(150);
  sim::TimeNs election_timeout_max_ns = sim::TimeNs::Millis(300);
  sim::TimeNs heartbeat_interval_ns = sim::TimeNs::Millis(50);
  bool pre_vote = false;
  bool check_quorum = false;
  Bug bug = Bug::kNone;
  sim::NodeId resource = sim::kNoNode;
  LeaderWorkConfig leader_work;
};

// The role this node has, as in LogCabin's RaftConsensus::State.
enum class Role {
  // Follows the leader of the current term (if it knows one) and grants
  // votes. Left for kPreCandidate (pre_vote on) or kCandidate when no
  // heartbeat arrives within the election timeout.
  kFollower,
  // Pre-vote round (pre_vote on): asks whether peers would vote for it in
  // currentTerm+1 without changing any term. Left for kCandidate on a
  // majority of pre-votes, for kFollower on a heartbeat or a higher term, and
  // re-entered when the election timeout fires again. Reported to checkers as
  // vocab::Role::kCandidate.
  kPreCandidate,
  // Campaigning in its own term with its own vote. Left for kLeader on a
  // majority of votes, for kFollower on a heartbeat of its term or a higher
  // term, and re-entered (next term) when the election timeout fires.
  kCandidate,
  // Leads currentTerm: sends heartbeats and does the leader work. Left for
  // kFollower on a higher term, or (check_quorum on) when a majority has not
  // answered within an election timeout.
  kLeader,
};

// One Raft node. A pure state machine over the simulator's Context.
class RaftNode final : public sim::Process {
 public:
  RaftNode(sim::NodeId self, RaftConfig config);

  void OnStart(sim::Context& ctx) override;
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) override;

 private:
  // Own timer tags; all below LeaderWork::kFirstReservedTag.
  static constexpr uint64_t kElectionTag = 1;
  static constexpr uint64_t kHeartbeatTag = 2;
  static constexpr uint64_t kCheckQuorumTag = 3;

  // etcd's Step: term handling for every message, then role dispatch.
  void Step(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepFollower(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepPreCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
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
  void HandleRequestVote(sim::Context& ctx, sim::NodeId from);
  void HandlePreVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message);
  void HandleHeartbeat(sim::Context& ctx, sim::NodeId from);

  // Moves to a higher term: persists it with no vote, then reports it.
  void UpdateTerm(sim::Context& ctx, sim::Term term);
  void PersistVote(sim::Context& ctx, sim::NodeId candidate);
  void SetRole(sim::Context& ctx, Role role);
  // Reports the believed leader when it or the term changed (or `force`).
  void SetBelief(sim::Context& ctx, sim::NodeId leader, bool force = false);
  void ResetElectionTimer(sim::Context& ctx);
  void Broadcast(sim::Context& ctx, const sim::Message& message);
  void SendHeartbeats(sim::Context& ctx);
  // Counts `from`'s grant; true once a majority (self included) granted.
  bool CountGrant(sim::NodeId from);
  void ResetGrants();
  // Whether a leader has been heard from within election_timeout_min (the
  // leader itself always counts): the thesis' guard against disruptive
  // servers, used for pre-votes and (check_quorum on) for votes.
  bool HeardFromLeaderRecently(sim::Context& ctx) const;
  uint32_t quorum() const { return config_.node_count / 2 + 1; }

  const sim::NodeId self_;
  const RaftConfig config_;

  // Persistent state (stable storage is written before it is acted on).
  // Latest term this node has seen.
  sim::Term current_term_;
  // Candidate this node voted for in current_term_, kNoNode if none.
  sim::NodeId voted_for_ = sim::kNoNode;

  // Volatile state.
  Role role_ = Role::kFollower;
  // Leader of current_term_ as far as this node knows.
  sim::NodeId leader_ = sim::kNoNode;
  // Term of the last Belief observation, so a term change re-reports it.
  std::optional<sim::Term> belief_term_;
  // Monotonic time of the last heartbeat from the current leader.
  std::optional<sim::TimeNs> last_leader_contact_;
  // Peers that granted this round's (pre-)vote, indexed by node.
  std::vector<bool> granted_;
  // Leader with check_quorum: peers heard from in this quorum period.
  std::vector<bool> recently_active_;

  sim::TimerId election_timer_;
  bool election_timer_armed_ = false;
  sim::TimerId heartbeat_timer_;
  sim::TimerId check_quorum_timer_;

  LeaderWork work_;
};

}  // namespace raft
}  // namespace algorithms
