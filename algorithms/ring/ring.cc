#include "algorithms/ring/ring.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "algorithms/epoch_election.h"
#include "algorithms/ring/ring_mutants.h"
#include "algorithms/ring/ring_node.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/check.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace algorithms {
namespace ring {
namespace {

// The ring hops, ELECTION and ELECTED, sent with their seq absent (SendAround sets it).
constexpr int kElectionSeq = ring::Election::kType.IndexOf("seq");
constexpr int kElectedSeq = ring::Elected::kType.IndexOf("seq");

// Every ring message carries an epoch; ELECTION has it second.
uint64_t EpochOf(const sim::Message& message) {
  return static_cast<uint64_t>(message.value(message.Is(kRingElection) ? ring::Election::kType.IndexOf("epoch") : 0));
}

// A successor that missed every ack of a hop is skipped for this many
// heartbeat timeouts (or until it is heard from): long enough to cover the
// rest of the election (a round of up to 4 tries per hop), short enough that
// a restarted or healed node rejoins the ring.
constexpr int64_t kDeadMarkTimeouts = 5;

}  // namespace

void RingNode::OnStart(sim::Context& ctx) {
  const bool restarted = epoch_.Boot(ctx);
  // The largest election id wins, once the faults are over: a node a round
  // skipped follows its winner until it is heard again.
  DeclareAtBoot(ctx, own_id_, RankPromise::kOnceStable);
  last_seq_ = epoch_.id_base();
  // Rounds begun before a crash are not rejoined: their messages may be
  // half-way round and the node has forgotten what it forwarded.
  decided_epoch_ = epoch_.max();
  // A restarted node just listens: the leader's heartbeats reach every node.
  if (!restarted && StartsAtBoot()) {
    StartElection(ctx);
  } else {
    silence_timer_.Arm(ctx, config_.base.heartbeat_timeout_ns);
  }
}

void RingNode::OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) {
  const bool ours =
      message.Is(kRingElection) || message.Is(kRingElected) || message.Is(kRingAck) || message.Is(kRingHeartbeat);
  if (!ours || from.value() >= config_.base.node_count) return;  // e.g. the resource's acks to our writes
  dead_until_.erase(from.value());                               // it is alive after all
  const uint64_t epoch = EpochOf(message);
  ObserveEpoch(ctx, epoch);
  if (const auto ack = message.As<ring::Ack>()) {
    HandleAck(ctx, from, ack->seq);
    return;
  }
  // Ring hops are acknowledged whatever becomes of them: the ack only says
  // "I am alive", which is what the sender needs to know. A re-sent hop
  // (same seq) is acked again, because the first ack may be the one that
  // was lost, and is then passed on at most once by the handlers' own
  // per-round state: forwarded_ids_, participant_, decided_epoch_ and
  // forwarded_elected_ already make any repeated ELECTION or ELECTED a no-op,
  // as they must for the network's own duplicates.
  if (const auto election = message.As<ring::Election>()) {
    ctx.Send(from, ring::Ack{.epoch = Epoch(), .seq = election->seq});
  } else if (const auto elected = message.As<ring::Elected>()) {
    ctx.Send(from, ring::Ack{.epoch = Epoch(), .seq = elected->seq});
  }
  switch (role()) {
    case Role::kFollower:
    case Role::kCandidate: StepElecting(ctx, message, epoch); return;
    case Role::kLeader: StepLeader(ctx, message, epoch); return;
  }
}

void RingNode::StepElecting(sim::Context& ctx, const sim::Message& message, uint64_t epoch) {
  if (const auto election = message.As<ring::Election>()) {
    HandleElection(ctx, election->id, epoch);
  } else if (const auto elected = message.As<ring::Elected>()) {
    HandleElected(ctx, sim::NodeId(static_cast<uint32_t>(elected->leader)), epoch);
  } else if (const auto heartbeat = message.As<ring::Heartbeat>()) {
    HandleHeartbeat(ctx, sim::NodeId(static_cast<uint32_t>(heartbeat->leader)), epoch);
  }
}

void RingNode::StepLeader(sim::Context& ctx, const sim::Message& message, uint64_t epoch) {
  if (const auto elected = message.As<ring::Elected>()) {
    HandleElected(ctx, sim::NodeId(static_cast<uint32_t>(elected->leader)), epoch);
  } else if (const auto heartbeat = message.As<ring::Heartbeat>()) {
    HandleHeartbeat(ctx, sim::NodeId(static_cast<uint32_t>(heartbeat->leader)), epoch);
  }
}

void RingNode::OnElectionTimer(sim::Context& ctx, sim::TimerId timer) {
  for (auto& [seq, hop] : pending_) {
    if (hop.ack_timer.Fired(timer)) {
      HandleAckTimeout(ctx, seq);
      return;
    }
  }
  if (silence_timer_.Fired(timer)) OnSilence(ctx);
}

sim::Message RingNode::Heartbeat() const {
  return ring::Heartbeat{.epoch = Epoch(), .id = own_id_, .leader = self_.value()};
}

void RingNode::OnNewEpoch() {
  participant_ = false;
  ForgetForwardedIds();
}

bool RingNode::StartsAtBoot() const {
  switch (config_.start_election) {
    case StartElection::kAll: return true;
    case StartElection::kLowest: return own_id_ == *std::min_element(config_.ids.begin(), config_.ids.end());
    case StartElection::kNone: return false;
  }
  return false;
}

void RingNode::StartElection(sim::Context& ctx) {
  SIM_CHECK(role() != Role::kLeader, "a leader does not start an election");
  Believe(ctx, sim::kNoNode, epoch_.max());  // suspects whoever led
  RaiseEpoch(ctx, NextRoundEpoch());
  BecomeCandidate(ctx);
  SendAround(ctx, ElectionMessage(own_id_, epoch_.max()));
}

void RingNode::BecomeCandidate(sim::Context& ctx) {
  SIM_CHECK(role() != Role::kLeader, "a leader does not join a round");
  if (!participant_) {
    participant_ = true;
    // The round must produce a leader within round_timeout, or this node
    // starts a newer one.
    silence_timer_.Arm(ctx, config_.round_timeout_ns);
  }
  SetRole(ctx, Role::kCandidate);
}

void RingNode::BecomeLeader(sim::Context& ctx, uint64_t epoch) {
  participant_ = false;
  decided_epoch_ = std::max(decided_epoch_, epoch);
  ClaimLeadership(ctx, epoch);
  StartLeading(ctx, epoch);
  forwarded_elected_ = {epoch, self_};
  SendAround(ctx, ElectedMessage(self_));
}

void RingNode::HandleElection(sim::Context& ctx, int64_t id, uint64_t epoch) {
  // An older round, or one whose result is already known, is over.
  if (epoch < epoch_.max() || epoch <= decided_epoch_) return;
  if (id == own_id_) {
    BecomeLeader(ctx, epoch);  // our id went all the way round: nobody is larger
  } else if (id > own_id_) {
    // Forward each id once per round: with successors skipped, an id whose
    // owner is unreachable could otherwise circle for ever.
    if (std::find(forwarded_ids_.begin(), forwarded_ids_.end(), id) != forwarded_ids_.end()) return;
    forwarded_ids_.push_back(id);
    BecomeCandidate(ctx);
    SendAround(ctx, ElectionMessage(id, epoch));
  } else if (!participant_) {
    BecomeCandidate(ctx);
    SendAround(ctx, ElectionMessage(IdSentOnJoining(id), epoch));
  }
  // else: a smaller id at a participant, which already sent something larger.
}

void RingNode::HandleElected(sim::Context& ctx, sim::NodeId leader, uint64_t epoch) {
  if (epoch < epoch_.max() || leader == self_ || leader.value() >= config_.base.node_count) return;
  if (forwarded_elected_ == std::pair{epoch, leader}) return;  // a duplicate
  if (!Outranks(leader, epoch)) return;
  forwarded_elected_ = {epoch, leader};
  decided_epoch_ = std::max(decided_epoch_, epoch);
  participant_ = false;
  BecomeFollower(ctx, leader, epoch);
  SendAround(ctx, ElectedMessage(leader));
}

void RingNode::HandleHeartbeat(sim::Context& ctx, sim::NodeId leader, uint64_t epoch) {
  if (epoch < epoch_.max() || leader == self_ || leader.value() >= config_.base.node_count) return;
  if (!Outranks(leader, epoch)) return;
  decided_epoch_ = std::max(decided_epoch_, epoch);
  participant_ = false;
  BecomeFollower(ctx, leader, epoch);
}

void RingNode::HandleAck(sim::Context& ctx, sim::NodeId from, int64_t seq) {
  auto it = pending_.find(seq);
  if (it == pending_.end() || it->second.to != from) return;
  it->second.ack_timer.Cancel(ctx);
  pending_.erase(it);
}

void RingNode::HandleAckTimeout(sim::Context& ctx, int64_t seq) {
  auto it = pending_.find(seq);
  if (it == pending_.end()) return;
  PendingHop& pending = it->second;
  // One lost message (the hop or its ack) must not cost a live successor
  // its place in the ring: re-send to the same node, under the same seq so
  // that an ack of any copy settles the hop.
  if (pending.resends_left > 0 && RoundOpen(pending.message)) {
    --pending.resends_left;
    ctx.Send(pending.to, pending.message);
    pending.ack_timer.Arm(ctx, config_.ack_timeout_ns);
    return;
  }
  const PendingHop hop = pending;
  pending_.erase(it);
  // A hop whose round ended while it still had re-sends left proves nothing
  // about its successor.
  if (hop.resends_left > 0) return;
  dead_until_[hop.to.value()] = ctx.MonotonicNow() + config_.base.heartbeat_timeout_ns * kDeadMarkTimeouts;
  // Pass the message on to the next live successor unless its round is over.
  if (RoundOpen(hop.message)) SendAround(ctx, hop.message);
}

bool RingNode::RoundOpen(const sim::Message& message) const {
  const uint64_t epoch = EpochOf(message);
  if (epoch < epoch_.max()) return false;
  return !(message.Is(kRingElection) && epoch <= decided_epoch_);
}

bool RingNode::Outranks(sim::NodeId leader, uint64_t epoch) const {
  const int64_t claimant = config_.ids[leader.value()];
  if (role() == Role::kLeader) return claimant > own_id_;  // our epoch == epoch here
  if (believed_leader() == sim::kNoNode || belief_epoch() != epoch || believed_leader() == leader) return true;
  return claimant > config_.ids[believed_leader().value()];
}

void RingNode::SendAround(sim::Context& ctx, sim::Message message) {
  std::optional<sim::NodeId> next;
  for (uint32_t step = 1; step < config_.base.node_count; ++step) {
    const uint32_t node = (self_.value() + step) % config_.base.node_count;
    const auto dead = dead_until_.find(node);
    if (dead == dead_until_.end() || dead->second <= ctx.MonotonicNow()) {
      next = sim::NodeId(node);
      break;
    }
  }
  if (!next) {
    // Nobody else answers: this node is a ring of one. An open round it
    // carries can only end with itself as leader.
    const uint64_t epoch = EpochOf(message);
    if (message.Is(kRingElection) && epoch == epoch_.max() && epoch > decided_epoch_) BecomeLeader(ctx, epoch);
    return;
  }
  const int64_t seq = ++last_seq_;
  message.Set(message.Is(kRingElection) ? kElectionSeq : kElectedSeq, seq);
  ctx.Send(*next, message);
  PendingHop& hop = pending_.emplace(seq, PendingHop{message, *next, Timer(), config_.ack_retries}).first->second;
  hop.ack_timer.Arm(ctx, config_.ack_timeout_ns);
}

sim::Message RingNode::ElectionMessage(int64_t id, uint64_t epoch) const {
  return sim::Message(ring::Election{.id = id, .epoch = static_cast<int64_t>(epoch)}, kElectionSeq);
}

sim::Message RingNode::ElectedMessage(sim::NodeId leader) const {
  return sim::Message(ring::Elected{.epoch = Epoch(), .id = config_.ids[leader.value()], .leader = leader.value()},
                      kElectedSeq);
}

}  // namespace ring

namespace {

class Ring final : public Algorithm {
 public:
  std::string_view name() const override { return "ring"; }
  std::string_view summary() const override {
    return "Ring (Chang-Roberts) with acked hops, dead-successor skipping and heartbeats; epochs as terms and "
           "fencing tokens; no quorum";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::IntList("ids",
                            "election id of each ring position, all distinct (empty: the node index); the "
                            "largest id wins"),
        OptionSpec::Duration("heartbeat_interval", sim::TimeNs::Millis(50),
                             "how often the leader tells every node it is alive", sim::TimeNs(1)),
        OptionSpec::Duration("heartbeat_timeout", sim::TimeNs::Millis(200),
                             "leader silence after which a node starts an election; an election without result "
                             "is given (ack_retries + 1) times as long before a node starts a newer one",
                             sim::TimeNs(1)),
        OptionSpec::Duration("ack_timeout", sim::TimeNs::Millis(25),
                             "how long a hop waits for the successor's ack before re-sending it (or, after "
                             "ack_retries re-sends, skipping the successor as dead)",
                             sim::TimeNs(1)),
        OptionSpec::Int("ack_retries", 2, 0, 10,
                        "how many times an unacknowledged hop is re-sent to the same successor, each after "
                        "ack_timeout, before that successor is skipped as dead (0: skip after the first missed "
                        "ack)"),
        OptionSpec::Choice("start_election", {"all", "lowest", "none"},
                           "which nodes start an election at time 0 (\"lowest\": the smallest id; \"none\": only "
                           "on timeout)"),
        BugOption(ring::Mutants()),
    };
    return specs;
  }

  // Chang-Roberts assumes a reliable ring; the failure handling here assumes
  // what the ring algorithm of Tanenbaum and van Steen does: a successor that
  // does not answer has crashed, for good. A lost ack, a late one, a
  // partition or a one-way cut makes a live successor look dead: the ring
  // splits and each part elects (down to a ring of one); a paused node acts
  // on a round that has moved on; drift shortens the ack timeout below a
  // round trip. Crashes break it too once nodes restart: a restarted node
  // stays marked dead by its predecessor for a while, so when the leader
  // crashes then, the predecessor's own election skips it, comes home and
  // wins, while the restarted node's goes round and wins the same epoch (in
  // check-guarantees' power-loss schedule, a plain crash to Ring: node 3 back
  // at the instant leader 4 went down). What is left is duplicates and clock
  // steps, for one leader per epoch and at a time, for the largest id
  // winning (a round that skips a live node elects without it, and a
  // restarted node only listens, following whoever leads) and for the epoch
  // staying put while a majority hears its leader (every suspicion opens a
  // round with a new epoch). Epochs only grow, whatever happens. Ring has
  // no votes, no log and no lease: single_vote, leader_completeness,
  // committed_agreement and lease_validity have nothing to judge.
  Guarantees guarantees(const OptionValues& options) const override {
    if (ChosenMutant(mutants(), options) != nullptr) return {};  // a mutant promises nothing
    const FaultKinds reliable_ring = {FaultKind::kDuplication, FaultKind::kClockStep};
    return {{"election_safety", reliable_ring},
            {"unique_token", reliable_ring},
            {"term_monotonic", FaultKinds::All()},
            {"single_leader", reliable_ring},
            {"stale_token", reliable_ring},
            {"declared_winner", reliable_ring},
            {"disruption", reliable_ring},
            {"single_vote", FaultKinds::All()},
            {"leader_completeness", FaultKinds::All()},
            {"committed_agreement", FaultKinds::All()},
            {"lease_validity", FaultKinds::All()},
            {"owner_displaced", FaultKinds::All()}};
  }

  const std::vector<Mutant>& mutants() const override { return ring::Mutants(); }

  // Only the leader heartbeats, stamped with its epoch. ELECTED starts at
  // the leader but every node forwards it, so it is no evidence of who leads.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .leader_only = {{kRingHeartbeat, "epoch"}},
        .steady_state = {&kRingHeartbeat},
    };
    return roles;
  }

  std::optional<BenchTiming> bench_timing() const override {
    return BenchTiming{"heartbeat_interval", "heartbeat_timeout"};
  }

  absl::Status Validate(const OptionValues& options, const Cluster& cluster) const override {
    if (cluster.node_count == 0) return absl::InvalidArgumentError("ring needs at least one node");
    const std::vector<int64_t>& ids = options.List("ids");
    if (!ids.empty()) {
      if (ids.size() != cluster.node_count) {
        return absl::InvalidArgumentError(
            fmt::format("option ids: expected {} entries (one per node), got {}", cluster.node_count, ids.size()));
      }
      std::map<int64_t, size_t> first_position;
      for (size_t position = 0; position < ids.size(); ++position) {
        auto [it, inserted] = first_position.emplace(ids[position], position);
        if (!inserted) {
          return absl::InvalidArgumentError(fmt::format("option ids: id {} appears twice (positions {} and {})",
                                                        ids[position], it->second, position));
        }
      }
    }
    for (const absl::Status& status : {
             RequireShorter(options, "heartbeat_interval", "heartbeat_timeout",
                            "followers would suspect a healthy leader"),
             RequireShorter(options, "ack_timeout", "heartbeat_timeout",
                            "skipping one dead successor would outlast the election"),
         }) {
      if (!status.ok()) return status;
    }
    // The same bound for the whole wait, every re-send included: a crashed
    // successor is still given up on within a heartbeat timeout, as without
    // re-sends, so the usual election after a crash keeps its pace;
    // round_timeout's extra time is for runs of dead successors. Checked after
    // the plain bound, so that an ack_timeout too long on its own is reported
    // as such.
    const int64_t ack_tries = options.Int("ack_retries") + 1;
    const sim::TimeNs ack_timeout_ns = options.Duration("ack_timeout");
    const sim::TimeNs heartbeat_timeout_ns = options.Duration("heartbeat_timeout");
    // In 128 bits: eleven times an ack_timeout near the int64 limit overflows.
    const __int128 skip_after_ns = static_cast<__int128>(ack_timeout_ns.ns()) * ack_tries;
    if (skip_after_ns >= heartbeat_timeout_ns.ns()) {
      const sim::TimeNs shown_ns(static_cast<int64_t>(std::min<__int128>(skip_after_ns, sim::TimeNs::Max().ns())));
      return absl::InvalidArgumentError(fmt::format(
          "option ack_timeout ({}) times (ack_retries + 1) ({}) = {} must be shorter than heartbeat_timeout ({}): "
          "skipping one dead successor would take longer than noticing a silent leader",
          sim::FormatDuration(ack_timeout_ns), ack_tries, sim::FormatDuration(shown_ns),
          sim::FormatDuration(heartbeat_timeout_ns)));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const Cluster& cluster,
                                           const OptionValues& options) const override {
    ring::RingConfig config;
    config.base.node_count = cluster.node_count;
    config.base.resource = cluster.resource;
    config.base.leader_work = cluster.leader_work;
    config.ids = options.List("ids");
    if (config.ids.empty()) {
      for (uint32_t node = 0; node < cluster.node_count; ++node) config.ids.push_back(node);
    }
    config.base.heartbeat_interval_ns = options.Duration("heartbeat_interval");
    config.base.heartbeat_timeout_ns = options.Duration("heartbeat_timeout");
    config.ack_timeout_ns = options.Duration("ack_timeout");
    config.ack_retries = options.Int("ack_retries");
    config.round_timeout_ns = sim::TimeNs(static_cast<int64_t>(
        std::min<__int128>(static_cast<__int128>(config.base.heartbeat_timeout_ns.ns()) * (config.ack_retries + 1),
                           sim::TimeNs::Max().ns())));
    config.start_election = static_cast<ring::StartElection>(options.Int("start_election"));
    return ring::CreateNode(options.Int(kBugOption), self, std::move(config));
  }
};

}  // namespace

const Algorithm& RingAlgorithm() {
  static const Ring algorithm;
  return algorithm;
}

}  // namespace algorithms
