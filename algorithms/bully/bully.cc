#include "algorithms/bully/bully.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "algorithms/bully/bully_mutants.h"
#include "algorithms/bully/bully_node.h"
#include "algorithms/epoch_election.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/check.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace algorithms {
namespace bully {

void BullyNode::OnStart(sim::Context& ctx) {
  const bool restarted = epoch_.Boot(ctx);
  // The highest live id wins, and a node never follows a lower id (it
  // challenges its claim): no agreement on a lower one, faults or not.
  DeclareAtBoot(ctx, self_.value(), RankPromise::kAnytime);
  election_round_ = epoch_.id_base();
  // A node that boots into a running cluster (a restart, or a first boot
  // held back by a pause) may find a coordinator it has not heard of yet.
  // Only the cluster's own start at time 0 finds none.
  if (restarted || ctx.MonotonicNow() != sim::TimeNs(0)) {
    listen_until_ = ctx.MonotonicNow() + config_.base.heartbeat_timeout_ns;
  }
  // A recovered node always challenges: if it is the highest live id it
  // must take over (that is the "bully").
  if (restarted || StartsAtBoot()) {
    BecomeCandidate(ctx);
  } else {
    silence_timer_.Arm(ctx, config_.base.heartbeat_timeout_ns);
  }
}

void BullyNode::OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const bool ours = message.Is(kBullyElection) || message.Is(kBullyAnswer) || message.Is(kBullyCoordinator) ||
                    message.Is(kBullyHeartbeat);
  if (!ours) return;  // e.g. the resource's acks to our writes
  // Every Bully message carries its epoch first.
  const uint64_t epoch = static_cast<uint64_t>(message.value(0));
  ObserveEpoch(ctx, epoch);
  const std::optional<bully::Election> challenge = message.As<bully::Election>();
  if (challenge) {
    if (from >= self_) return;  // only lower ids challenge us
    // Whatever our role, the challenger learns a higher id is alive.
    ctx.Send(from, bully::Answer{.epoch = Epoch(), .round = challenge->round});
  }
  switch (role()) {
    case Role::kFollower: StepFollower(ctx, from, message, epoch); return;
    case Role::kCandidate: StepCandidate(ctx, from, message, epoch); return;
    case Role::kLeader: StepLeader(ctx, from, message, epoch); return;
  }
}

void BullyNode::StepFollower(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch) {
  if (message.Is(kBullyElection)) {
    BecomeCandidate(ctx);  // challenged by a lower id: run our own election
    return;
  }
  // A claim of an old epoch (e.g. back from a partition) is answered by the
  // current leader only, so that it steps down without a storm.
  if (!IsClaim(message) || epoch < epoch_.max()) return;
  // From here on epoch == epoch_.max() (ObserveEpoch ran first).
  if (from == believed_leader() && epoch == belief_epoch()) {
    silence_timer_.Arm(ctx, config_.base.heartbeat_timeout_ns);
    return;
  }
  // Between two coordinators of one epoch, keep the higher id.
  if (believed_leader() != sim::kNoNode && epoch == belief_epoch() && from < believed_leader()) return;
  if (from < self_) {
    OnLowerClaimant(ctx, from, epoch);
  } else {
    BecomeFollower(ctx, from, epoch);
  }
}

void BullyNode::OnLowerClaimant(sim::Context& ctx, sim::NodeId, uint64_t) { BecomeCandidate(ctx); }

void BullyNode::StepCandidate(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch) {
  // A challenge is covered by our own running election.
  if (const auto answer = message.As<bully::Answer>()) {
    if (phase_ != Phase::kAwaitingAnswers || answer->round != election_round_) return;
    phase_ = Phase::kAwaitingCoordinator;
    election_timer_.Arm(ctx, config_.coordinator_timeout_ns);
    return;
  }
  // A lower claimant loses to our running election.
  if (IsClaim(message) && epoch == epoch_.max() && CandidateYieldsTo(from)) BecomeFollower(ctx, from, epoch);
}

void BullyNode::StepLeader(sim::Context& ctx, sim::NodeId from, const sim::Message& message, uint64_t epoch) {
  if (message.Is(kBullyElection)) {
    // Already coordinator: telling the challenger is enough; a fresh
    // election would only burn an epoch.
    ctx.Send(from, bully::Coordinator{.epoch = Epoch()});
    return;
  }
  if (!IsClaim(message)) return;
  // Two coordinators of one epoch (a healed partition): the higher id
  // keeps it. An old epoch's coordinator learns of ours.
  if (epoch == epoch_.max() && LeaderYieldsTo(from)) {
    BecomeFollower(ctx, from, epoch);
  } else {
    ctx.Send(from, bully::Coordinator{.epoch = Epoch()});
  }
}

void BullyNode::OnElectionTimer(sim::Context& ctx, sim::TimerId timer) {
  if (silence_timer_.Fired(timer)) {
    Believe(ctx, sim::kNoNode, epoch_.max());
    BecomeCandidate(ctx);
  } else if (election_timer_.Fired(timer)) {
    if (phase_ == Phase::kAwaitingAnswers) {
      BecomeLeader(ctx);  // nobody higher is alive
    } else {
      OnCoordinatorOverdue(ctx);
    }
  }
}

void BullyNode::OnCoordinatorOverdue(sim::Context& ctx) {
  Believe(ctx, sim::kNoNode, epoch_.max());
  BecomeCandidate(ctx);
}

bool BullyNode::StartsAtBoot() const {
  switch (config_.start_election) {
    case StartElection::kAll: return true;
    case StartElection::kLowest: return self_.value() == 0;
    case StartElection::kHighest: return self_.value() + 1 == config_.base.node_count;
    case StartElection::kNone: return false;
  }
  return false;
}

void BullyNode::BecomeCandidate(sim::Context& ctx) {
  SIM_CHECK(role() != Role::kLeader, "a leader does not run an election");
  silence_timer_.Cancel(ctx);
  SetRole(ctx, Role::kCandidate);
  phase_ = Phase::kAwaitingAnswers;
  ++election_round_;
  for (uint32_t id = self_.value() + 1; id < ChallengedIdsEnd(); ++id) {
    ctx.Send(sim::NodeId(id), bully::Election{.epoch = Epoch(), .round = election_round_});
  }
  // Waited even when there is nobody higher to ask, and by a node that
  // joined a running cluster at least until listen_until_: a live
  // coordinator is heard within heartbeat_timeout (or deemed dead), so the
  // node learns its epoch first and announces a higher one, not the same.
  const sim::TimeNs listen_left = listen_until_ - ctx.MonotonicNow();
  election_timer_.Arm(ctx, std::max(config_.answer_timeout_ns, listen_left));
}

void BullyNode::BecomeLeader(sim::Context& ctx) {
  const uint64_t epoch = NextEpoch();
  epoch_.Raise(ctx, epoch);
  election_timer_.Cancel(ctx);
  ClaimLeadership(ctx, epoch);
  Broadcast(ctx, bully::Coordinator{.epoch = Epoch()});
  StartLeading(ctx, epoch);
}

}  // namespace bully

namespace {

class Bully final : public Algorithm {
 public:
  std::string_view name() const override { return "bully"; }
  std::string_view summary() const override {
    return "Bully (Garcia-Molina): the highest live id wins; epochs as terms and fencing tokens; no quorum";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::Duration("heartbeat_interval", sim::TimeNs::Millis(50),
                             "how often the coordinator tells every node it is alive", sim::TimeNs(1)),
        OptionSpec::Duration("heartbeat_timeout", sim::TimeNs::Millis(200),
                             "coordinator silence after which a node starts an election", sim::TimeNs(1)),
        OptionSpec::Duration("answer_timeout", sim::TimeNs::Millis(100),
                             "how long a candidate waits for a higher id to answer before announcing itself",
                             sim::TimeNs(1)),
        OptionSpec::Duration("coordinator_timeout", sim::TimeNs::Millis(300),
                             "how long a candidate that got an answer waits for the announcement before retrying",
                             sim::TimeNs(1)),
        OptionSpec::Choice("start_election", {"all", "lowest", "highest", "none"},
                           "which nodes start an election at time 0 (\"none\": only on timeout)"),
        BugOption(bully::Mutants()),
    };
    return specs;
  }

  // Bully assumes what Garcia-Molina's does: reliable messages delivered
  // within its timeouts. Its epochs are no quorum's: a new coordinator takes
  // one above the highest it has seen, so one coordinator per epoch needs
  // every announcer to have heard of every epoch before it. A lost or late
  // answer, a partition or a one-way cut makes a node think every higher id
  // dead and announce the same epoch as the real coordinator; a candidate
  // paused past its answer timeout wakes up and announces an epoch that
  // another node may have taken meanwhile; drift shortens a timeout below a
  // round trip. Crashes break it too, however long a restarted node listens
  // first: while it was down the others used newer epochs, and if they are
  // all down when it comes back, nobody can tell it of them; being the
  // highest live id, it must take over (that is Bully's promise), and it
  // announces one of those epochs again (fuzz seed 902: node 0 back alone
  // announces epoch 5, which node 2 led while node 0 was down). Even
  // without that, the current coordinator leads until it hears the
  // restarted higher id's newer epoch: two in the leader role at once. So
  // one leader per epoch, one writer per token, one leader at a time and no
  // stale token hold only under duplicates and clock steps, where no node
  // misses anything, and so does the promise not to raise the epoch while
  // a majority hears its coordinator: a restarted higher id bullies its way
  // back, and every missed heartbeat or answer starts an election. Epochs
  // only grow, whatever happens: they reach the disk at once (Persist), so
  // a power loss is a crash to Bully. Who wins is Bully's one promise that
  // faults do not break: once messages flow again, any live node above the
  // coordinator challenges it and takes over; and since no node ever
  // follows a lower id, the cluster never agrees on a lower one, during the
  // faults either (declare.rank_anytime). Bully has no votes, no log
  // and no lease: single_vote, leader_completeness, committed_agreement
  // and lease_validity have nothing to judge.
  Guarantees guarantees(const OptionValues& options) const override {
    if (ChosenMutant(mutants(), options) != nullptr) return {};  // a mutant promises nothing
    const FaultKinds nothing_missed = {FaultKind::kDuplication, FaultKind::kClockStep};
    return {{"election_safety", nothing_missed},
            {"unique_token", nothing_missed},
            {"term_monotonic", FaultKinds::All()},
            {"single_leader", nothing_missed},
            {"stale_token", nothing_missed},
            {"disruption", nothing_missed},
            {"declared_winner", FaultKinds::All()},
            {"single_vote", FaultKinds::All()},
            {"leader_completeness", FaultKinds::All()},
            {"committed_agreement", FaultKinds::All()},
            {"lease_validity", FaultKinds::All()},
            {"owner_displaced", FaultKinds::All()}};
  }

  const std::vector<Mutant>& mutants() const override { return bully::Mutants(); }

  // Only a coordinator announces or heartbeats, stamped with its own epoch.
  // Answers and elections are no votes: Bully has none.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .leader_only = {{kBullyCoordinator, "epoch"}, {kBullyHeartbeat, "epoch"}},
        .steady_state = {&kBullyHeartbeat},
    };
    return roles;
  }

  std::optional<BenchTiming> bench_timing() const override {
    return BenchTiming{"heartbeat_interval", "heartbeat_timeout"};
  }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    if (cluster.node_count == 0) return absl::InvalidArgumentError("bully needs at least one node");
    for (const absl::Status& status : {
             RequireShorter(options, "heartbeat_interval", "heartbeat_timeout",
                            "followers would suspect a healthy coordinator"),
             RequireShorter(options, "answer_timeout", "coordinator_timeout",
                            "the node that answered itself waits answer_timeout before it can announce"),
         }) {
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override {
    bully::BullyConfig config;
    config.base.node_count = cluster.node_count;
    config.base.resource = cluster.resource;
    config.base.leader_work = cluster.leader_work;
    config.base.heartbeat_interval_ns = options.Duration("heartbeat_interval");
    config.base.heartbeat_timeout_ns = options.Duration("heartbeat_timeout");
    config.answer_timeout_ns = options.Duration("answer_timeout");
    config.coordinator_timeout_ns = options.Duration("coordinator_timeout");
    config.start_election = static_cast<bully::StartElection>(options.Int("start_election"));
    return bully::CreateNode(options.Int(kBugOption), self, config);
  }
};

}  // namespace

const Algorithm& BullyAlgorithm() {
  static const Bully algorithm;
  return algorithm;
}

}  // namespace algorithms
