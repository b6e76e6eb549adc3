#include "algorithms/raft/raft.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/raft/raft_mutants.h"
#include "electsim/sim/check.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace algorithms {
namespace raft {
namespace {

int64_t Wire(sim::Term term) { return static_cast<int64_t>(term.value()); }
int64_t Wire(LogIndex index) { return static_cast<int64_t>(index.value()); }

// A rejected AppendEntries: `index` is the prev_index that did not match.
sim::Message AppendRejection(sim::Term term, int64_t index, LogIndex last_index) {
  return AppendReply{.term = Wire(term), .success = 0, .index = index, .hint = Wire(last_index)};
}

vocab::Role Reported(Role role) {
  switch (role) {
    case Role::kFollower: return vocab::Role::kFollower;
    case Role::kPreCandidate:
    case Role::kCandidate: return vocab::Role::kCandidate;
    case Role::kLeader: return vocab::Role::kLeader;
  }
  return vocab::Role::kFollower;
}

}  // namespace

RaftNode::RaftNode(sim::NodeId self, RaftConfig config)
    : self_(self), config_(std::move(config)), work_(config_.resource, config_.leader_work) {}

void RaftNode::OnStart(sim::Context& ctx) {
  // The boot counter is bookkeeping for entry ids, not Raft state: persisted
  // at once, whatever the node's own syncing does.
  boot_ = static_cast<uint64_t>(ctx.Load(kBootsKey).value_or(0)) + 1;
  ctx.Persist(kBootsKey, static_cast<int64_t>(boot_));
  // A restarted node comes back as a follower with the term, vote and log it
  // had made durable (or, after a process crash, at least written) before
  // the crash, and a fresh randomized timeout.
  const std::optional<int64_t> stored_term = ctx.Load(kTermKey);
  current_term_ = sim::Term(static_cast<uint64_t>(stored_term.value_or(0)));
  const int64_t stored_vote = ctx.Load(kVotedForKey).value_or(-1);
  voted_for_ = stored_vote < 0 ? sim::kNoNode : sim::NodeId(static_cast<uint32_t>(stored_vote));
  if (stored_term) ctx.Observe(vocab::TermChange(current_term_));
  log_.Recover(ctx);
  report_.Boot(ctx, current_term_);
  // A node that heard its leader within election_timeout_min neither times
  // out nor (with check-quorum) grants a vote or pre-vote. A pre-vote round
  // lasts one election timeout, and a reply from the round before may still
  // count, so a candidate's support is at most two timeouts old.
  ctx.Observe(vocab::Hearing(config_.election_timeout_min_ns, config_.election_timeout_max_ns * 2));
  ResetElectionTimer(ctx);
}

void RaftNode::OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  // The resource's acks are ignored: its highest token hints at a newer term,
  // but Raft learns terms only from its peers, which will tell this node soon
  // enough; stepping down on a resource's word would add a second, unvoted
  // source of truth.
  if (message.Is(kResourceAck)) return;
  if (from.value() >= config_.node_count) return;  // only peers speak Raft
  Step(ctx, from, message);
  // As etcd persists every Ready's hard state, answered or not: a term
  // learned from a message that needs no reply (a refused vote, an old
  // leader's rejected append) was reported at once, and a power loss must not
  // take it back. Timers need no such step: what they change, they send.
  MakeDurable(ctx);
}

void RaftNode::OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) {
  if (work_.OnTimer(
          ctx, timer, [this] { return role_ == Role::kLeader; }, [this, &ctx] { AppendAsLeader(ctx); })) {
    return;
  }
  if (election_timer_.Fired(timer)) {
    if (role_ == Role::kLeader) return;
    if (config_.pre_vote) {
      BecomePreCandidate(ctx);
    } else {
      BecomeCandidate(ctx);
    }
  } else if (heartbeat_timer_.Fired(timer)) {
    for (uint32_t i = 0; i < config_.node_count; ++i) {
      if (i != self_.value()) SendAppend(ctx, sim::NodeId(i));
    }
    heartbeat_timer_.Arm(ctx, config_.heartbeat_interval_ns);
  } else if (check_quorum_timer_.Fired(timer)) {
    uint32_t active = 1;  // the leader itself
    for (uint32_t i = 0; i < config_.node_count; ++i) {
      if (i != self_.value() && recently_active_[i]) ++active;
    }
    if (active < quorum()) {
      // Cut off from a majority: another leader may already exist, so stop
      // acting as one (etcd's CheckQuorum).
      BecomeFollower(ctx, current_term_, sim::kNoNode);
      return;
    }
    recently_active_.assign(config_.node_count, false);
    check_quorum_timer_.Arm(ctx, config_.election_timeout_min_ns);
  }
}

void RaftNode::Step(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  // Every Raft message carries its term first.
  const sim::Term term(static_cast<uint64_t>(message.value(0)));

  // etcd's rule (raft.go, Step, case m.Term > r.Term): a (pre-)vote request
  // of a higher term is ignored, without a reply and without touching our
  // term, while checkQuorum && lead != None && electionElapsed <
  // electionTimeout ("inLease"), unless it is a leadership transfer (there
  // are none here). With check-quorum a live leader keeps its followers, so
  // a node that merely lost touch cannot depose it. Without check-quorum
  // there is no such guard: a pre-vote is granted on term and log alone.
  if ((message.Is(kRequestVote) || message.Is(kPreVote)) && term > current_term_ && config_.check_quorum &&
      HeardFromLeaderRecently(ctx)) {
    return;
  }
  // A pre-vote asks about a future term and must never move ours.
  if (message.Is(kPreVote)) {
    HandlePreVote(ctx, from, message);
    return;
  }

  if (term > current_term_) {
    // A granted pre-vote reply carries the term we proposed, not a newer term
    // someone has seen: it is counted below, not obeyed.
    const auto pre_vote_reply = message.As<PreVoteReply>();
    const bool future_grant = pre_vote_reply && pre_vote_reply->granted != 0;
    if (!future_grant && !AdoptHigherTerm(ctx, term, message.Is(kAppend) ? from : sim::kNoNode)) return;
  } else if (term < current_term_) {
    // Tell a stale leader or candidate about the newer term so it steps down;
    // stale replies are simply dropped.
    if (const auto append = message.As<Append>()) {
      Send(ctx, from, AppendRejection(current_term_, append->prev_index, log_.last_index()));
    }
    if (message.Is(kRequestVote)) Send(ctx, from, Vote{.term = Wire(current_term_), .granted = 0});
    return;
  }

  switch (role_) {
    case Role::kFollower: StepFollower(ctx, from, message); return;
    case Role::kPreCandidate: StepPreCandidate(ctx, from, message); return;
    case Role::kCandidate: StepCandidate(ctx, from, message); return;
    case Role::kLeader: StepLeader(ctx, from, message); return;
  }
}

void RaftNode::StepFollower(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (message.Is(kAppend)) {
    HandleAppend(ctx, from, message);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from, message);
  }
}

void RaftNode::StepPreCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (message.Is(kAppend)) {
    // The leader of our term is alive after all.
    BecomeFollower(ctx, current_term_, from);
    HandleAppend(ctx, from, message);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from, message);
  } else if (const auto reply = message.As<PreVoteReply>()) {
    // A grant names the proposed term; a refusal the refuser's, here ours
    // (a higher one has made this node a follower already).
    if (reply->granted != 0) {
      if (reply->term == Wire(current_term_) + 1 && CountGrant(from)) BecomeCandidate(ctx);
    } else if (config_.step_down_on_lost_vote && reply->term == Wire(current_term_) && CountRefusal(from)) {
      LoseRound(ctx);
    }
  }
}

void RaftNode::StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (message.Is(kAppend)) {
    // Someone won this term.
    BecomeFollower(ctx, current_term_, from);
    HandleAppend(ctx, from, message);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from, message);
  } else if (const auto vote = message.As<Vote>()) {
    if (vote->granted != 0) {
      if (CountGrant(from)) BecomeLeader(ctx);
    } else if (config_.step_down_on_lost_vote && vote->term == Wire(current_term_) && CountRefusal(from)) {
      LoseRound(ctx);
    }
  }
}

void RaftNode::StepLeader(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  // Any message of our term shows the peer can reach us.
  if (config_.check_quorum) recently_active_[from.value()] = true;
  if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from, message);
  } else if (message.Is(kAppendReply)) {
    HandleAppendReply(ctx, from, message);
  }
  // AppendEntries of our own term means a second leader of this term, which
  // only a bug can produce; it is ignored.
}

void RaftNode::HandleRequestVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const auto request = message.As<RequestVote>();
  const bool grant = MayVoteFor(from) && CandidateLogIsUpToDate(request->last_index, request->last_term);
  if (grant) {
    if (voted_for_ != from) RecordVote(ctx, from);
    ctx.Observe(vocab::Vote(current_term_, from));
    // A node that just voted gives that candidate time to win.
    if (role_ != Role::kLeader) ResetElectionTimer(ctx);
  }
  Send(ctx, from, Vote{.term = Wire(current_term_), .granted = grant ? 1 : 0});
}

void RaftNode::HandlePreVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const PreVote request = *message.As<PreVote>();
  const sim::Term proposed(static_cast<uint64_t>(request.term));
  // As etcd grants a pre-vote: for a term beyond ours and a log at least as
  // up-to-date (Raft thesis, section 9.6). Whether a leader is still heard
  // matters only with check_quorum, in Step.
  const bool grant = proposed > current_term_ && CandidateLogIsUpToDate(request.last_index, request.last_term);
  // A rejection carries our term so a pre-candidate that is behind catches up.
  Send(ctx, from, PreVoteReply{.term = Wire(grant ? proposed : current_term_), .granted = grant ? 1 : 0});
}

void RaftNode::HandleAppend(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  last_leader_contact_ = ctx.MonotonicNow();
  SetBelief(ctx, from);
  ResetElectionTimer(ctx);
  const Append append = *message.As<Append>();
  const LogIndex prev(static_cast<uint64_t>(append.prev_index));
  const std::optional<sim::Term> term_at_prev = log_.TermAt(prev);
  if (!term_at_prev || term_at_prev->value() != static_cast<uint64_t>(append.prev_term)) {
    // Our log does not contain the leader's prev entry: the leader backs up.
    Send(ctx, from, AppendRejection(current_term_, Wire(prev), log_.last_index()));
    return;
  }
  LogIndex match = prev;
  if (message.size() > Append::kHeartbeatFields) {
    const Entry entry{sim::Term(static_cast<uint64_t>(append.entry_term)),
                      EntryId(static_cast<uint64_t>(append.entry))};
    match = Next(prev);
    // An entry we hold with the same term is the same entry (Log Matching);
    // only a conflicting one, and everything after it, goes. A late,
    // reordered message must not cut off entries that arrived after it.
    const std::optional<sim::Term> existing = log_.TermAt(match);
    if (existing && *existing != entry.term) {
      log_.TruncateFrom(ctx, *this, match);
      // Only a bug can truncate a committed entry; what gets committed at
      // these indices afterwards is then reported again.
      if (commit_index_ >= match) commit_index_ = prev;
    }
    if (match > log_.last_index()) log_.Append(ctx, *this, entry);
  }
  // Figure 2: commitIndex = min(leaderCommit, index of last new entry); only
  // entries this message proved to match the leader's are safe to commit.
  CommitTo(ctx, FollowerCommitBound(LogIndex(static_cast<uint64_t>(append.commit)), match));
  Send(ctx, from,
       sim::Message(AppendReply{.term = Wire(current_term_), .success = 1, .index = Wire(match)},
                    AppendReply::kSuccessFields));
}

void RaftNode::HandleAppendReply(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const uint32_t peer = from.value();
  const AppendReply reply = *message.As<AppendReply>();
  const LogIndex index(static_cast<uint64_t>(reply.index));
  if (reply.success != 0) {
    // Only a reply that moves the follower's match index forward sends the
    // next entry (as etcd's MaybeUpdate gates its sends): a duplicated or
    // stale acknowledgement must not, or every duplicate along a catch-up
    // would send one more copy, and the copies multiply with each entry.
    const bool progress = index > match_index_[peer];
    if (progress) match_index_[peer] = index;
    if (Next(index) > next_index_[peer]) next_index_[peer] = Next(index);
    // Only a match index that passed the commit index can commit more; the
    // rest (heartbeat replies, mostly) would make the leader count all
    // followers again for nothing: O(nodes^2) per heartbeat round.
    if (progress && index > commit_index_) {
      AdvanceLeaderCommit(ctx);
    } else {
      MakeDurable(ctx);  // what AdvanceLeaderCommit would have done first
    }
    if (progress && next_index_[peer] <= log_.last_index()) SendAppend(ctx, from);
    return;
  }
  // A rejection of a prev_index we no longer propose is a duplicate or an
  // older try: acting on it again would back up too far.
  if (Next(index) != next_index_[peer]) return;
  // Back up at least one entry, and straight to just past the follower's log
  // when that is shorter.
  const uint64_t hint = static_cast<uint64_t>(reply.hint);
  next_index_[peer] = LogIndex(std::max<uint64_t>(1, std::min(index.value(), hint + 1)));
  // A correct follower never rejects an index it matched; one that lost
  // synced entries (a bug) has to be caught up from below again.
  if (match_index_[peer] >= next_index_[peer]) match_index_[peer] = Previous(next_index_[peer]);
  SendAppend(ctx, from);
}

void RaftNode::AppendAsLeader(sim::Context& ctx) {
  log_.Append(ctx, *this, Entry{current_term_, NewEntryId()});
  const LogIndex index = log_.last_index();
  // Peers still catching up get it in turn, from their replies.
  for (uint32_t i = 0; i < config_.node_count; ++i) {
    if (i != self_.value() && next_index_[i] == index) SendAppend(ctx, sim::NodeId(i));
  }
  AdvanceLeaderCommit(ctx);  // a one-node cluster commits at once
}

void RaftNode::SendAppend(sim::Context& ctx, sim::NodeId peer) {
  // One entry per message: a payload holds at most six integers. etcd sends
  // batches (up to MaxSizePerMsg); one at a time is slower to catch up a
  // follower but is the same protocol.
  const LogIndex next = std::min(next_index_[peer.value()], Next(log_.last_index()));
  const LogIndex prev = Previous(next);
  Append append{.term = Wire(current_term_),
                .prev_index = Wire(prev),
                .prev_term = Wire(*log_.TermAt(prev)),
                .commit = Wire(commit_index_)};
  if (next > log_.last_index()) {
    Send(ctx, peer, sim::Message(append, Append::kHeartbeatFields));
    return;
  }
  const Entry& entry = log_.at(next);
  append.entry_term = Wire(entry.term);
  append.entry = static_cast<int64_t>(entry.id.value());
  Send(ctx, peer, append);
}

void RaftNode::AdvanceLeaderCommit(sim::Context& ctx) {
  // The leader counts itself, so its own entries must be on disk first.
  MakeDurable(ctx);
  for (LogIndex n = log_.last_index(); n > commit_index_; n = Previous(n)) {
    // Section 5.4.2: only an entry of the current term commits by counting
    // replicas; earlier ones commit with it. Terms only fall further back.
    if (!CommitsByCounting(log_.at(n))) return;
    uint32_t replicas = 1;
    for (uint32_t i = 0; i < config_.node_count; ++i) {
      if (i != self_.value() && match_index_[i] >= n) ++replicas;
    }
    if (replicas >= quorum()) {
      CommitTo(ctx, n);
      return;
    }
  }
}

void RaftNode::CommitTo(sim::Context& ctx, LogIndex index) {
  while (commit_index_ < index) {
    commit_index_ = Next(commit_index_);
    const Entry& entry = log_.at(commit_index_);
    ctx.Observe(vocab::LogCommit(commit_index_.value(), entry.term, entry.id.value(), current_term_));
  }
}

EntryId RaftNode::NewEntryId() {
  // Creator, incarnation, count: unique without coordination even when a bug
  // lets one node lead the same term twice. Room for 2^20 nodes, 2^16 boots
  // of each and 2^28 entries per boot (a write every 100ms for 300 days).
  ++entries_created_;
  SIM_CHECK(self_.value() < (1u << 20) && boot_ < (1u << 16) && entries_created_ < (1u << 28),
            "a Raft entry id has room for 2^20 nodes, 2^16 boots and 2^28 entries per boot");
  return EntryId((uint64_t{self_.value()} << 44) | (boot_ << 28) | entries_created_);
}

void RaftNode::BecomeFollower(sim::Context& ctx, sim::Term term, sim::NodeId leader) {
  StepDown(ctx);
  if (term > current_term_) UpdateTerm(ctx, term);
  SetRole(ctx, Role::kFollower);
  SetBelief(ctx, leader);
  // Figure 2: only AppendEntries from the leader or a granted vote reset the
  // election timer. Merely hearing a higher term does not, so a candidate
  // with a stale log that keeps asking cannot hold the others off forever.
  if (!election_timer_.armed()) ResetElectionTimer(ctx);
}

void RaftNode::BecomePreCandidate(sim::Context& ctx) {
  // No term change and no vote: this round only asks.
  SetRole(ctx, Role::kPreCandidate);
  SetBelief(ctx, sim::kNoNode);
  ResetGrants();
  ResetElectionTimer(ctx);
  Broadcast(ctx, PreVote{.term = Wire(current_term_) + 1,
                         .last_index = Wire(log_.last_index()),
                         .last_term = Wire(log_.last_term())});
  if (CountGrant(self_)) BecomeCandidate(ctx);  // a one-node cluster
}

void RaftNode::BecomeCandidate(sim::Context& ctx) {
  UpdateTerm(ctx, sim::Term(current_term_.value() + 1));
  RecordVote(ctx, self_);
  ctx.Observe(vocab::Vote(current_term_, self_));
  SetRole(ctx, Role::kCandidate);
  SetBelief(ctx, sim::kNoNode);
  ResetGrants();
  ResetElectionTimer(ctx);
  Broadcast(ctx, RequestVote{.term = Wire(current_term_),
                             .last_index = Wire(log_.last_index()),
                             .last_term = Wire(log_.last_term())});
  if (CountGrant(self_)) BecomeLeader(ctx);  // a one-node cluster
}

void RaftNode::BecomeLeader(sim::Context& ctx) {
  election_timer_.Cancel(ctx);
  SetRole(ctx, Role::kLeader);
  leader_ = self_;
  next_index_.assign(config_.node_count, Next(log_.last_index()));
  match_index_.assign(config_.node_count, LogIndex(0));
  // A no-op entry of the new term (Raft thesis section 6.4, as etcd does):
  // entries of earlier terms commit only once one of the current term does.
  // Sending it to every peer is also the first heartbeat.
  AppendAsLeader(ctx);
  heartbeat_timer_.Arm(ctx, config_.heartbeat_interval_ns);
  if (config_.check_quorum) {
    recently_active_.assign(config_.node_count, false);
    check_quorum_timer_.Arm(ctx, config_.election_timeout_min_ns);
  }
  // Raft's fencing token is its term: terms only grow and one leader per term.
  work_.Begin(ctx, sim::FencingToken(current_term_.value()));
}

void RaftNode::StepDown(sim::Context& ctx) {
  if (role_ != Role::kLeader) return;
  work_.End(ctx);
  heartbeat_timer_.Cancel(ctx);
  check_quorum_timer_.Cancel(ctx);
}

void RaftNode::UpdateTerm(sim::Context& ctx, sim::Term term) {
  current_term_ = term;
  voted_for_ = sim::kNoNode;
  Write(ctx, kTermKey, static_cast<int64_t>(term.value()));
  PersistVote(ctx, sim::kNoNode);
  ctx.Observe(vocab::TermChange(term));
  leader_ = sim::kNoNode;  // a new term's leader is unknown until it speaks
}

void RaftNode::RecordVote(sim::Context& ctx, sim::NodeId candidate) {
  voted_for_ = candidate;
  PersistVote(ctx, candidate);
}

void RaftNode::Write(sim::Context& ctx, std::string_view key, int64_t value) {
  ctx.Write(key, value);
  unsynced_ = true;
}

void RaftNode::MakeDurable(sim::Context& ctx) {
  if (!unsynced_) return;
  unsynced_ = false;
  SyncWrites(ctx);
}

void RaftNode::Send(sim::Context& ctx, sim::NodeId to, const sim::Message& message) {
  MakeDurable(ctx);
  ctx.Send(to, message);
}

void RaftNode::Broadcast(sim::Context& ctx, const sim::Message& message) {
  for (uint32_t i = 0; i < config_.node_count; ++i) {
    if (i != self_.value()) Send(ctx, sim::NodeId(i), message);
  }
}

void RaftNode::SetRole(sim::Context& ctx, Role role) {
  role_ = role;
  if (role == Role::kLeader) {
    // The token is the term (see BecomeLeader).
    report_.Leader(ctx, current_term_, sim::FencingToken(current_term_.value()));
  } else {
    report_.Role(ctx, Reported(role), current_term_);
  }
}

void RaftNode::SetBelief(sim::Context& ctx, sim::NodeId leader) {
  leader_ = leader;
  report_.Belief(ctx, leader, current_term_);
}

void RaftNode::ResetElectionTimer(sim::Context& ctx) {
  // Uniform in [min, max]; min == max removes the randomization that keeps
  // candidates from splitting the vote again and again.
  const sim::TimeNs timeout(
      ctx.rng().Between(config_.election_timeout_min_ns.ns(), config_.election_timeout_max_ns.ns()));
  election_timer_.Arm(ctx, timeout);
}

bool RaftNode::CountGrant(sim::NodeId from) {
  if (!granted_[from.value()]) {  // a duplicated reply counts once
    granted_[from.value()] = true;
    ++grant_count_;
  }
  return grant_count_ >= quorum();
}

bool RaftNode::CountRefusal(sim::NodeId from) {
  if (!refused_[from.value()]) {  // a duplicated reply counts once
    refused_[from.value()] = true;
    ++refusal_count_;
  }
  return refusal_count_ >= quorum();
}

void RaftNode::ResetGrants() {
  granted_.assign(config_.node_count, false);
  grant_count_ = 0;
  if (config_.step_down_on_lost_vote) refused_.assign(config_.node_count, false);
  refusal_count_ = 0;
}

void RaftNode::LoseRound(sim::Context& ctx) {
  // etcd's becomeFollower(r.Term, None): the timeout restarts from the moment
  // the round was lost, which differs from node to node, and so breaks the
  // lockstep of candidates that time out together (equal timeouts would
  // otherwise split the vote forever).
  BecomeFollower(ctx, current_term_, sim::kNoNode);
  ResetElectionTimer(ctx);
}

bool RaftNode::HeardFromLeaderRecently(sim::Context& ctx) const {
  if (role_ == Role::kLeader) return true;
  return leader_ != sim::kNoNode && last_leader_contact_.has_value() &&
         ctx.MonotonicNow() - *last_leader_contact_ < config_.election_timeout_min_ns;
}

bool RaftNode::MayVoteFor(sim::NodeId candidate) const { return voted_for_ == sim::kNoNode || voted_for_ == candidate; }

bool RaftNode::CandidateLogIsUpToDate(int64_t last_index, int64_t last_term) const {
  return log_.IsAtLeastAsUpToDateAsMine(LogIndex(static_cast<uint64_t>(last_index)),
                                        sim::Term(static_cast<uint64_t>(last_term)));
}

bool RaftNode::AdoptHigherTerm(sim::Context& ctx, sim::Term term, sim::NodeId leader) {
  BecomeFollower(ctx, term, leader);
  return true;
}

bool RaftNode::CommitsByCounting(const Entry& entry) const { return entry.term == current_term_; }

LogIndex RaftNode::FollowerCommitBound(LogIndex leader_commit, LogIndex matched) const {
  return std::min(leader_commit, matched);
}

void RaftNode::PersistVote(sim::Context& ctx, sim::NodeId candidate) {
  Write(ctx, kVotedForKey, candidate == sim::kNoNode ? -1 : static_cast<int64_t>(candidate.value()));
}

void RaftNode::SyncWrites(sim::Context& ctx) { ctx.Sync(); }

}  // namespace raft

namespace {

class Raft final : public Algorithm {
 public:
  std::string_view name() const override { return "raft"; }
  std::string_view summary() const override {
    return "Raft: terms, randomized election timeouts, one vote per term for an up-to-date log; the leader "
           "replicates its writes as log entries (AppendEntries, empty as heartbeats) and commits on a majority "
           "in its term; optional pre-vote and check-quorum as in etcd";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = [] {
      std::vector<OptionSpec> list = {
          OptionSpec::Duration("election_timeout_min", sim::TimeNs::Millis(150),
                               "lower bound of the randomized election timeout", sim::TimeNs(1)),
          OptionSpec::Duration("election_timeout_max", sim::TimeNs::Millis(300),
                               "upper bound of the randomized election timeout (equal to the minimum: no "
                               "randomization, so split votes repeat)",
                               sim::TimeNs(1)),
          OptionSpec::Duration("heartbeat_interval", sim::TimeNs::Millis(50),
                               "how often a leader sends AppendEntries to every follower (empty ones are the "
                               "heartbeats); below election_timeout_min",
                               sim::TimeNs(1)),
          OptionSpec::Bool("pre_vote", false,
                           "ask for pre-votes before raising the term, so a node that cannot win (cut off, or "
                           "with a stale log) does not inflate its term and depose the leader when it returns; "
                           "as in etcd a pre-vote is granted for a higher term and an up-to-date log, whether or "
                           "not a leader is still heard (that guard comes with check_quorum)"),
          OptionSpec::Bool("check_quorum", false,
                           "a leader steps down if a majority has not answered within election_timeout_min; and, "
                           "as in etcd (raft.go, Step), a node that heard its leader within election_timeout_min "
                           "ignores vote and pre-vote requests of higher terms"),
          OptionSpec::Bool("step_down_on_lost_vote", false,
                           "as etcd (raft.go, stepCandidate, VoteLost): a candidate or pre-candidate that a majority "
                           "refused becomes a follower at once and restarts its election timeout, rather than "
                           "waiting it out; without it, candidates that time out together stay in lockstep, and "
                           "equal timeouts split the vote forever (results/etcd-raft.md)"),
          BugOption(raft::Mutants()),
      };
      return list;
    }();
    return specs;
  }

  // Votes, terms, fencing tokens (the term) and committed entries rest on
  // quorums and stable storage, not on timing, so no fault breaks them; a
  // power loss neither, since term, vote and log are synced before anything
  // that depends on them leaves and before a message's handling ends. A
  // second leader in the leader role at once (and with it a stale write)
  // needs only a leader that does not hear of the new term in time: message
  // loss, latency, a partition or one-way cut, a pause, or drift that
  // outruns the heartbeats. A crash is enough for two leaders too (not for
  // a stale write): it leaves logs of different lengths, and a node whose
  // log is ahead refuses the winner's vote request without resetting its
  // timer, so it can time out before the winner's first heartbeat reaches
  // it and win the next term while the first winner still leads
  // (results/counterexamples/raft-single_leader-crash). With pre-vote and
  // check-quorum it must first win a pre-vote, and then the vote, from nodes
  // the winner's first heartbeat has not reached yet: 100,000 fuzz seeds of
  // crashes, power loss and duplication broke no declared guarantee. Raft
  // promises no winner and holds no lease.
  //
  // Disruption (a term raised while a majority hears its leader): any
  // follower that misses its leader's messages for an election timeout
  // campaigns, and without check-quorum the others grant it a vote (or a
  // pre-vote) on term and log alone, so loss, latency, partitions, cuts,
  // pauses and fast clocks all let it. Pre-vote alone changes no column:
  // the lone node's pre-vote is granted as readily. With check-quorum too,
  // nobody who hears its leader grants anything, which leaves three ways:
  // a grant given while the granter did not hear the leader, counted after
  // it heard it again for a while (a reply delayed in the network, or held
  // by a pause of the pre-candidate), and clocks fast enough that a
  // majority stops counting heartbeats the wire still delivers.
  Guarantees guarantees(const OptionValues& options) const override {
    if (ChosenMutant(mutants(), options) != nullptr) return {};  // a mutant promises nothing
    const FaultKinds timing_safe = {FaultKind::kDuplication, FaultKind::kCrash, FaultKind::kPowerLoss,
                                    FaultKind::kClockStep};
    const bool pre_vote_and_check_quorum = options.Bool("pre_vote") && options.Bool("check_quorum");
    const FaultKinds single_leader_safe =
        pre_vote_and_check_quorum ? timing_safe : FaultKinds{FaultKind::kDuplication, FaultKind::kClockStep};
    const FaultKinds undisrupted =
        pre_vote_and_check_quorum
            ? FaultKinds::All().Without({FaultKind::kLatency, FaultKind::kPause, FaultKind::kClockDrift})
            : timing_safe;
    return {{"election_safety", FaultKinds::All()},
            {"single_vote", FaultKinds::All()},
            {"term_monotonic", FaultKinds::All()},
            {"unique_token", FaultKinds::All()},
            {"leader_completeness", FaultKinds::All()},
            {"committed_agreement", FaultKinds::All()},
            {"single_leader", single_leader_safe},
            {"stale_token", timing_safe},
            {"disruption", undisrupted},
            {"declared_winner", FaultKinds::All()},
            {"lease_validity", FaultKinds::All()},
            {"owner_displaced", FaultKinds::All()}};
  }

  // The one place that says which Raft messages are leader-only and which
  // grant votes: update it with the message set. Only a leader sends
  // AppendEntries, empty (a heartbeat) or not; a granted pre-vote promises
  // nothing and is no vote.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .leader_only = {{raft::kAppend, "term"}},
        .vote_grants = {{raft::kVote, "term", "granted"}},
        // AppendEntries, empty or not, is the heartbeat; it also carries the log.
        .steady_state = {&raft::kAppend, &raft::kAppendReply},
    };
    return roles;
  }

  const std::vector<Mutant>& mutants() const override { return raft::Mutants(); }

  bool replicates_log() const override { return true; }

  // Raft's failure detection is the top of its randomized timeout range.
  std::optional<BenchTiming> bench_timing() const override {
    return BenchTiming{"heartbeat_interval", "election_timeout_max"};
  }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    (void)cluster;
    const sim::TimeNs min = options.Duration("election_timeout_min");
    const sim::TimeNs max = options.Duration("election_timeout_max");
    if (max < min) {
      return absl::InvalidArgumentError(
          fmt::format("option election_timeout_max ({}) must not be shorter than election_timeout_min ({})",
                      sim::FormatDuration(max), sim::FormatDuration(min)));
    }
    return RequireShorter(options, "heartbeat_interval", "election_timeout_min",
                          "followers would time out between heartbeats");
  }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override {
    return raft::CreateNode(options.Int(kBugOption), self, ConfigOf(cluster, options));
  }
  // The options read once a run, not once a node: seven lookups by name for
  // each node were 2% of a Raft trial.
  sim::ProcessFactory NodeFactory(const Cluster& cluster, const OptionValues& options) const override {
    return [bug = options.Int(kBugOption), config = ConfigOf(cluster, options)](sim::NodeId self) {
      return raft::CreateNode(bug, self, config);
    };
  }

 private:
  static raft::RaftConfig ConfigOf(const Cluster& cluster, const OptionValues& options) {
    raft::RaftConfig config;
    config.node_count = cluster.node_count;
    config.election_timeout_min_ns = options.Duration("election_timeout_min");
    config.election_timeout_max_ns = options.Duration("election_timeout_max");
    config.heartbeat_interval_ns = options.Duration("heartbeat_interval");
    config.pre_vote = options.Bool("pre_vote");
    config.check_quorum = options.Bool("check_quorum");
    config.step_down_on_lost_vote = options.Bool("step_down_on_lost_vote");
    config.resource = cluster.resource;
    config.leader_work = cluster.leader_work;
    return config;
  }
};

}  // namespace

const Algorithm& RaftAlgorithm() {
  static const Raft algorithm;
  return algorithm;
}

}  // namespace algorithms
