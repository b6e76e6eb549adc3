#include "algorithms/raft/raft_mutants.h"

#include <algorithm>
#include <utility>

#include "electsim/sim/check.h"

namespace algorithms::raft {
namespace {

class VoteTwice final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  bool MayVoteFor(sim::NodeId) const override { return true; }
};

class IgnoreHigherTerm final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  bool AdoptHigherTerm(sim::Context& ctx, sim::Term term, sim::NodeId leader) override {
    if (role() == Role::kLeader) return false;
    return RaftNode::AdoptHigherTerm(ctx, term, leader);
  }
};

class SkipLogCheck final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  bool CandidateLogIsUpToDate(int64_t, int64_t) const override { return true; }
};

class ForgetVoteOnRestart final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  void PersistVote(sim::Context&, sim::NodeId) override {}
};

class CommitPreviousTerm final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  bool CommitsByCounting(const Entry&) const override { return true; }
};

class SkipSync final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  void SyncWrites(sim::Context&) override {}
};

class PreVoteAdoptsTerm final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  void HandlePreVote(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    const PreVote request = *message.As<PreVote>();
    const sim::Term proposed(static_cast<uint64_t>(request.term));
    const bool grant = proposed > current_term() && CandidateLogIsUpToDate(request.last_index, request.last_term);
    RaftNode::HandlePreVote(ctx, from, message);
    if (grant) BecomeFollower(ctx, proposed, sim::kNoNode);
  }
};

class CountsRejectedVotes final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  void StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    if (message.Is(kVote)) {
      if (CountGrant(from)) BecomeLeader(ctx);
      return;
    }
    RaftNode::StepCandidate(ctx, from, message);
  }
};

class QuorumOfHalf final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  uint32_t quorum() const override { return std::max<uint32_t>(1, config().node_count / 2); }
};

// Equivalent in this Raft (its table entry says why): the bound matters
// only for a follower holding entries past the match that are not the
// leader's, which one entry per message and truncation at the first
// conflict never leave. With batched AppendEntries it would not be.
class CommitToLastIndex final : public RaftNode {
 public:
  using RaftNode::RaftNode;

 protected:
  LogIndex FollowerCommitBound(LogIndex leader_commit, LogIndex) const override {
    return std::min(leader_commit, log().last_index());
  }
};

using Table = algorithms::MutantTable<RaftNode, RaftConfig>;

// The "bug" option lists them in this order; appending keeps the values of
// the ones before.
const Table& TheTable() {
  static const Table table({
      {{"vote_twice", "grants a vote to every candidate of the current term, even after voting", ""},
       &Table::Make<VoteTwice>},
      {{"ignore_higher_term", "a leader ignores messages of a higher term instead of stepping down", ""},
       &Table::Make<IgnoreHigherTerm>},
      {{"skip_log_check", "votes and pre-votes without comparing the candidate's log with its own (section 5.4.1)", ""},
       &Table::Make<SkipLogCheck>},
      {{"forget_vote_on_restart", "never stores votedFor, so a restarted node forgets whom it voted for", ""},
       &Table::Make<ForgetVoteOnRestart>},
      {{"commit_previous_term", "a leader commits an earlier term's entry by counting its replicas (Figure 8)", ""},
       &Table::Make<CommitPreviousTerm>},
      {{"skip_sync", "writes term, vote and log but never syncs them, so a power loss forgets them", ""},
       &Table::Make<SkipSync>},
      {{"pre_vote_adopts_term", "a node that grants a pre-vote moves to the term it proposes",
        "--option pre_vote=true --option check_quorum=true"},
       &Table::Make<PreVoteAdoptsTerm>},
      {{"counts_rejected_votes", "a candidate counts every vote reply of its term, granted or not", ""},
       &Table::Make<CountsRejectedVotes>},
      {{"quorum_of_half", "takes half the cluster, rounded down, for a majority", ""}, &Table::Make<QuorumOfHalf>},
      {{"commit_to_last_index",
        "a follower commits up to the leader's commit index or its own last index, not the last index the "
        "message matched",
        "",
        "one entry per AppendEntries, a back-up of one entry per rejection and truncation at the first conflict "
        "leave no entry past the match that is not the leader's own (results/fuzz.md)"},
       &Table::Make<CommitToLastIndex>},
  });
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<RaftNode> CreateNode(int64_t bug, sim::NodeId self, RaftConfig config) {
  return TheTable().Create<RaftNode>(bug, self, config);
}

std::unique_ptr<RaftNode> CreateNode(std::string_view bug, sim::NodeId self, RaftConfig config) {
  if (bug == "none") return CreateNode(0, self, config);
  const std::vector<Mutant>& mutants = Mutants();
  for (size_t i = 0; i < mutants.size(); ++i) {
    if (mutants[i].name == bug) return CreateNode(static_cast<int64_t>(i + 1), self, config);
  }
  SIM_CHECK(false, "no Raft mutant of that name");
  return nullptr;
}

}  // namespace algorithms::raft
