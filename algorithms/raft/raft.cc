#include "algorithms/raft/raft.h"

#include <string>
#include <utility>

#include "algorithms/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace algorithms {
namespace raft {
namespace {

sim::Message Make(std::string_view type, sim::Term term) {
  return sim::Message(type).Set(vocab::kFieldTerm, static_cast<int64_t>(term.value()));
}

sim::Message Reply(std::string_view type, sim::Term term, bool granted) {
  return Make(type, term).Set(kFieldGranted, granted ? 1 : 0);
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
    : self_(self),
      config_(std::move(config)),
      granted_(config_.node_count, false),
      recently_active_(config_.node_count, false),
      work_(config_.resource, config_.leader_work) {
  static_assert(kCheckQuorumTag < LeaderWork::kFirstReservedTag, "Raft's timer tags must not collide with LeaderWork's");
}

void RaftNode::OnStart(sim::Context& ctx) {
  // A restarted node comes back as a follower with the term and vote it
  // promised before the crash, and a fresh randomized timeout.
  const std::optional<int64_t> stored_term = ctx.Load(kTermKey);
  current_term_ = sim::Term(static_cast<uint64_t>(stored_term.value_or(0)));
  const int64_t stored_vote = ctx.Load(kVotedForKey).value_or(-1);
  voted_for_ = stored_vote < 0 ? sim::kNoNode : sim::NodeId(static_cast<uint32_t>(stored_vote));
  if (stored_term) ctx.Observe(vocab::TermChange(current_term_));
  ctx.Observe(vocab::RoleChange(vocab::Role::kFollower, current_term_));
  SetBelief(ctx, sim::kNoNode, /*force=*/true);
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
}

void RaftNode::OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) {
  if (work_.OnTimer(ctx, tag, [this] { return role_ == Role::kLeader; })) return;
  switch (tag) {
    case kElectionTag:
      if (!election_timer_armed_ || timer != election_timer_) return;
      election_timer_armed_ = false;
      if (role_ == Role::kLeader) return;
      if (config_.pre_vote) {
        BecomePreCandidate(ctx);
      } else {
        BecomeCandidate(ctx);
      }
      return;
    case kHeartbeatTag:
      if (role_ != Role::kLeader || timer != heartbeat_timer_) return;
      SendHeartbeats(ctx);
      heartbeat_timer_ = ctx.SetTimer(config_.heartbeat_interval_ns, kHeartbeatTag);
      return;
    case kCheckQuorumTag: {
      if (role_ != Role::kLeader || timer != check_quorum_timer_) return;
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
      check_quorum_timer_ = ctx.SetTimer(config_.election_timeout_min_ns, kCheckQuorumTag);
      return;
    }
    default:
      return;
  }
}

void RaftNode::Step(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const sim::Term term(static_cast<uint64_t>(message.Get(vocab::kFieldTerm)));

  // A pre-vote asks about a future term and must never move ours.
  if (message.Is(kPreVote)) {
    HandlePreVote(ctx, from, message);
    return;
  }

  if (term > current_term_) {
    // A granted pre-vote reply carries the term we proposed, not a newer term
    // someone has seen: it is counted below, not obeyed.
    const bool future_grant = message.Is(kPreVoteReply) && message.Get(kFieldGranted) != 0;
    if (!future_grant) {
      // With check_quorum a node that still hears a leader ignores vote
      // requests of a higher term (etcd's lease): a rejoining node must not
      // depose a healthy leader.
      if (message.Is(kRequestVote) && config_.check_quorum && HeardFromLeaderRecently(ctx)) return;
      if (role_ == Role::kLeader && config_.bug == Bug::kIgnoreHigherTerm) return;
      BecomeFollower(ctx, term, message.Is(kHeartbeat) ? from : sim::kNoNode);
    }
  } else if (term < current_term_) {
    // Tell a stale leader or candidate about the newer term so it steps down;
    // stale replies are simply dropped.
    if (message.Is(kHeartbeat)) ctx.Send(from, Reply(kHeartbeatReply, current_term_, false));
    if (message.Is(kRequestVote)) ctx.Send(from, Reply(kVote, current_term_, false));
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
  if (message.Is(kHeartbeat)) {
    HandleHeartbeat(ctx, from);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from);
  }
}

void RaftNode::StepPreCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (message.Is(kHeartbeat)) {
    // The leader of our term is alive after all.
    BecomeFollower(ctx, current_term_, from);
    HandleHeartbeat(ctx, from);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from);
  } else if (message.Is(kPreVoteReply) && message.Get(kFieldGranted) != 0 &&
             message.Get(vocab::kFieldTerm) == static_cast<int64_t>(current_term_.value() + 1)) {
    if (CountGrant(from)) BecomeCandidate(ctx);
  }
}

void RaftNode::StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  if (message.Is(kHeartbeat)) {
    // Someone won this term.
    BecomeFollower(ctx, current_term_, from);
    HandleHeartbeat(ctx, from);
  } else if (message.Is(kRequestVote)) {
    HandleRequestVote(ctx, from);
  } else if (message.Is(kVote) && message.Get(kFieldGranted) != 0) {
    if (CountGrant(from)) BecomeLeader(ctx);
  }
}

void RaftNode::StepLeader(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  // Any message of our term shows the peer can reach us.
  recently_active_[from.value()] = true;
  if (message.Is(kRequestVote)) HandleRequestVote(ctx, from);
  // A heartbeat of our own term means a second leader of this term, which
  // only a bug can produce; there is no log to reconcile, so it is ignored.
}

void RaftNode::HandleRequestVote(sim::Context& ctx, sim::NodeId from) {
  // The paper's up-to-date log check (section 5.4.1) is omitted: there is no
  // log, so every candidate's log is as up to date as any other.
  const bool grant = voted_for_ == sim::kNoNode || voted_for_ == from || config_.bug == Bug::kVoteTwice;
  if (grant) {
    if (voted_for_ != from) PersistVote(ctx, from);  // persisted before the reply leaves
    ctx.Observe(vocab::Vote(current_term_, from));
    // A node that just voted gives that candidate time to win.
    if (role_ != Role::kLeader) ResetElectionTimer(ctx);
  }
  ctx.Send(from, Reply(kVote, current_term_, grant));
}

void RaftNode::HandlePreVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const sim::Term proposed(static_cast<uint64_t>(message.Get(vocab::kFieldTerm)));
  // Granted only for a term beyond ours and only when no leader is known to
  // be alive (Raft thesis, section 9.6): that is what keeps a node that was
  // cut off from forcing an election when it comes back.
  const bool grant = proposed > current_term_ && !HeardFromLeaderRecently(ctx);
  // A rejection carries our term so a pre-candidate that is behind catches up.
  ctx.Send(from, Reply(kPreVoteReply, grant ? proposed : current_term_, grant));
}

void RaftNode::HandleHeartbeat(sim::Context& ctx, sim::NodeId from) {
  last_leader_contact_ = ctx.MonotonicNow();
  SetBelief(ctx, from);
  ResetElectionTimer(ctx);
  ctx.Send(from, Reply(kHeartbeatReply, current_term_, true));
}

void RaftNode::BecomeFollower(sim::Context& ctx, sim::Term term, sim::NodeId leader) {
  StepDown(ctx);
  if (term > current_term_) UpdateTerm(ctx, term);
  SetRole(ctx, Role::kFollower);
  SetBelief(ctx, leader);
  ResetElectionTimer(ctx);
}

void RaftNode::BecomePreCandidate(sim::Context& ctx) {
  // No term change and no vote: this round only asks.
  SetRole(ctx, Role::kPreCandidate);
  SetBelief(ctx, sim::kNoNode, /*force=*/true);
  ResetGrants();
  ResetElectionTimer(ctx);
  Broadcast(ctx, Make(kPreVote, sim::Term(current_term_.value() + 1)));
  if (CountGrant(self_)) BecomeCandidate(ctx);  // a one-node cluster
}

void RaftNode::BecomeCandidate(sim::Context& ctx) {
  UpdateTerm(ctx, sim::Term(current_term_.value() + 1));
  PersistVote(ctx, self_);
  ctx.Observe(vocab::Vote(current_term_, self_));
  SetRole(ctx, Role::kCandidate);
  SetBelief(ctx, sim::kNoNode, /*force=*/true);
  ResetGrants();
  ResetElectionTimer(ctx);
  Broadcast(ctx, Make(kRequestVote, current_term_));
  if (CountGrant(self_)) BecomeLeader(ctx);  // a one-node cluster
}

void RaftNode::BecomeLeader(sim::Context& ctx) {
  if (election_timer_armed_) ctx.CancelTimer(election_timer_);
  election_timer_armed_ = false;
  SetRole(ctx, Role::kLeader);
  SetBelief(ctx, self_);
  SendHeartbeats(ctx);
  heartbeat_timer_ = ctx.SetTimer(config_.heartbeat_interval_ns, kHeartbeatTag);
  if (config_.check_quorum) {
    recently_active_.assign(config_.node_count, false);
    check_quorum_timer_ = ctx.SetTimer(config_.election_timeout_min_ns, kCheckQuorumTag);
  }
  // Raft's fencing token is its term: terms only grow and one leader per term.
  work_.Begin(ctx, sim::FencingToken(current_term_.value()));
}

void RaftNode::StepDown(sim::Context& ctx) {
  if (role_ != Role::kLeader) return;
  work_.End(ctx);
  ctx.CancelTimer(heartbeat_timer_);
  if (config_.check_quorum) ctx.CancelTimer(check_quorum_timer_);
}

void RaftNode::UpdateTerm(sim::Context& ctx, sim::Term term) {
  current_term_ = term;
  voted_for_ = sim::kNoNode;
  // Persisted before anything is sent in the new term.
  ctx.Persist(kTermKey, static_cast<int64_t>(term.value()));
  ctx.Persist(kVotedForKey, -1);
  ctx.Observe(vocab::TermChange(term));
  leader_ = sim::kNoNode;  // a new term's leader is unknown until it speaks
}

void RaftNode::PersistVote(sim::Context& ctx, sim::NodeId candidate) {
  voted_for_ = candidate;
  ctx.Persist(kVotedForKey, static_cast<int64_t>(candidate.value()));
}

void RaftNode::SetRole(sim::Context& ctx, Role role) {
  // A candidate re-reports itself for each term it campaigns in.
  if (role == role_ && role != Role::kCandidate) return;
  role_ = role;
  if (role == Role::kLeader) {
    ctx.Observe(vocab::BecameLeader(current_term_, sim::FencingToken(current_term_.value())));
  } else {
    ctx.Observe(vocab::RoleChange(Reported(role), current_term_));
  }
}

void RaftNode::SetBelief(sim::Context& ctx, sim::NodeId leader, bool force) {
  if (!force && leader == leader_ && belief_term_ == current_term_) return;
  leader_ = leader;
  belief_term_ = current_term_;
  ctx.Observe(vocab::Belief(leader, current_term_));
}

void RaftNode::ResetElectionTimer(sim::Context& ctx) {
  if (election_timer_armed_) ctx.CancelTimer(election_timer_);
  // Uniform in [min, max]; min == max removes the randomization that keeps
  // candidates from splitting the vote again and again.
  const sim::TimeNs timeout(
      ctx.rng().Between(config_.election_timeout_min_ns.ns(), config_.election_timeout_max_ns.ns()));
  election_timer_ = ctx.SetTimer(timeout, kElectionTag);
  election_timer_armed_ = true;
}

void RaftNode::Broadcast(sim::Context& ctx, const sim::Message& message) {
  for (uint32_t i = 0; i < config_.node_count; ++i) {
    if (i != self_.value()) ctx.Send(sim::NodeId(i), message);
  }
}

void RaftNode::SendHeartbeats(sim::Context& ctx) { Broadcast(ctx, Make(kHeartbeat, current_term_)); }

bool RaftNode::CountGrant(sim::NodeId from) {
  granted_[from.value()] = true;  // a duplicated reply counts once
  uint32_t count = 0;
  for (bool granted : granted_) count += granted ? 1 : 0;
  return count >= quorum();
}

void RaftNode::ResetGrants() { granted_.assign(config_.node_count, false); }

bool RaftNode::HeardFromLeaderRecently(sim::Context& ctx) const {
  if (role_ == Role::kLeader) return true;
  return leader_ != sim::kNoNode && last_leader_contact_.has_value() &&
         ctx.MonotonicNow() - *last_leader_contact_ < config_.election_timeout_min_ns;
}

}  // namespace raft

namespace {

class Raft final : public Algorithm {
 public:
  std::string_view name() const override { return "raft"; }
  std::string_view summary() const override {
    return "Raft leader election: terms, randomized election timeouts, one vote per term, heartbeats; "
           "optional pre-vote and check-quorum as in etcd";
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
                               "how often a leader sends heartbeats; below election_timeout_min",
                               sim::TimeNs(1)),
          OptionSpec::Bool("pre_vote", false,
                           "ask for pre-votes before raising the term, so a node that was cut off "
                           "cannot disrupt the cluster when it returns"),
          OptionSpec::Bool("check_quorum", false,
                           "a leader steps down if a majority has not answered within an election timeout"),
          OptionSpec::Choice("bug", {"none", "vote_twice", "ignore_higher_term"},
                             "deliberate bug: vote_twice grants every candidate of a term; "
                             "ignore_higher_term keeps a leader leading after it sees a higher term"),
      };
      return list;
    }();
    return specs;
  }

  // Votes, terms and fencing tokens (the term) rest on quorums and stable
  // storage, not on timing, so no fault breaks them; a second leader in the
  // leader role at once (and with it a stale write) needs only a leader that
  // does not hear of the new term in time: message loss, latency, a
  // partition or one-way cut, a pause, or drift that outruns the heartbeats.
  // With a deliberate bug nothing is promised.
  Guarantees guarantees(const OptionValues& options) const override {
    if (options.Choice("bug") != "none") return {};
    const FaultKinds timing_safe = {FaultKind::kDuplication, FaultKind::kCrash, FaultKind::kClockStep};
    return {{"election_safety", kEveryFaultButPowerLoss},
            {"single_vote", kEveryFaultButPowerLoss},
            {"term_monotonic", kEveryFaultButPowerLoss},
            {"unique_token", kEveryFaultButPowerLoss},
            {"single_leader", timing_safe},
            {"stale_token", timing_safe}};
  }

  // The one place that says which Raft messages are leader-only and which
  // grant votes: update it with the message set.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .leader_only = {{raft::kHeartbeat, vocab::kFieldTerm}},
        .vote_grants = {{raft::kVote, vocab::kFieldTerm, raft::kFieldGranted}},
    };
    return roles;
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
    raft::RaftConfig config;
    config.node_count = cluster.node_count;
    config.election_timeout_min_ns = options.Duration("election_timeout_min");
    config.election_timeout_max_ns = options.Duration("election_timeout_max");
    config.heartbeat_interval_ns = options.Duration("heartbeat_interval");
    config.pre_vote = options.Bool("pre_vote");
    config.check_quorum = options.Bool("check_quorum");
    const std::string& bug = options.Choice("bug");
    config.bug = bug == "vote_twice"           ? raft::Bug::kVoteTwice
                 : bug == "ignore_higher_term" ? raft::Bug::kIgnoreHigherTerm
                                               : raft::Bug::kNone;
    config.resource = cluster.resource;
    config.leader_work = cluster.leader_work;
    return std::make_unique<raft::RaftNode>(self, std::move(config));
  }
};

}  // namespace

const Algorithm& RaftAlgorithm() {
  static const Raft algorithm;
  return algorithm;
}

}  // namespace algorithms
