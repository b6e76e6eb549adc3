#include "zookeeper_election.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zookeeper {
namespace {

namespace store = algorithms::store;
using algorithms::FaultKind;
using algorithms::FaultKinds;
using algorithms::OptionSpec;
using algorithms::OptionValues;

// The directory whose children are the candidates ("/election").
constexpr int64_t kElectionDir = 0;
constexpr int64_t kPpm = 1000000;

struct Config {
  sim::NodeId store;
  sim::NodeId resource;
  algorithms::LeaderWorkConfig leader_work;
  sim::TimeNs session_timeout;
  sim::TimeNs ping_interval;
  sim::TimeNs request_timeout;
  int64_t safety_margin_ppm = 0;

  // How long after sending a ping the store answered a node may act as leader.
  sim::TimeNs session_view() const {
    return sim::TimeNs(static_cast<int64_t>(static_cast<__int128>(session_timeout.ns()) * safety_margin_ppm / kPpm));
  }
};

class Node final : public sim::Process {
 public:
  enum class State {
    // Has no session or no child yet: opening one, then creating the child.
    // Left for kWaiting once the child exists.
    kJoining,
    // Holds child seq_: asks for the child below it and watches that one.
    // Left for kLeader when there is none, for kJoining when the session is
    // lost.
    kWaiting,
    // Holds the lowest child: leads term seq_ and writes under it, while its
    // view of the session lasts. Left for kJoining when the view runs out or
    // the store says the session is gone.
    kLeader,
  };

  Node(sim::NodeId self, Config config)
      : self_(self), config_(config), work_(config.resource, config.leader_work), term_("zookeeper") {}

  void OnStart(sim::Context& ctx) override {
    // The highest sequence number this node has held is its term, in stable
    // storage so that it is never reported lower after a restart; request
    // ids of each boot are apart (replies to an earlier one are no news).
    term_.Boot(ctx);
    next_req_ = term_.id_base() + 1;
    ping_timer_.Arm(ctx, config_.ping_interval);
    Join(ctx);
  }

  // etcd's Step, in the recipe's terms: what the store says about our
  // session comes first (a session the store has ended takes our child and
  // our place in line with it, whatever else the message says); then the
  // request a reply answers; then dispatch by state.
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    if (from != config_.store) return;  // the resource's acks carry nothing we act on
    if (const auto deleted = message.As<store::ChildDeleted>()) {
      // The one watch we set: our predecessor is gone.
      if (state_ == State::kWaiting && deleted->seq == watched_) {
        watched_ = 0;
        Send(ctx, Request::kPredecessor);
      }
      return;
    }
    const std::optional<Pending> answered = TakePending(ctx, message.value(0));  // every reply starts with req
    if (!answered) return;  // past its timeout, or to an earlier boot
    if (const auto session = message.As<store::SessionReply>()) {
      if (session->ok == 0 && session->session == session_) {
        LoseSession(ctx);
        return;
      }
      if (session->ok != 0) view_until_ = std::max(view_until_, answered->sent_at + config_.session_view());
    }
    switch (state_) {
      case State::kJoining: StepJoining(ctx, *answered, message); return;
      case State::kWaiting: StepWaiting(ctx, *answered, message); return;
      case State::kLeader: StepLeader(ctx, *answered, message); return;
    }
  }

  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) override {
    // LeaderWork first: a write decided before a pause goes out after it,
    // the stale write that fencing exists for.
    if (work_.OnTimer(ctx, timer, [&] { return state_ == State::kLeader && ViewValid(ctx); })) return;
    for (auto& [req, pending] : pending_) {
      if (pending.timeout.Fired(timer)) {
        OnRequestTimeout(ctx, req);
        return;
      }
    }
    if (ping_timer_.Fired(timer)) {
      ping_timer_.Arm(ctx, config_.ping_interval);
      if (session_ != 0 && !Outstanding(Request::kPing)) Send(ctx, Request::kPing);
      // Followers learn who leads as ZooKeeper clients do, from the lowest
      // child; that is also how one that missed its notice finds it is first.
      if (state_ == State::kWaiting && !Outstanding(Request::kLowest)) Send(ctx, Request::kLowest);
    } else if (view_timer_.Fired(timer)) {
      if (ViewValid(ctx)) {
        view_timer_.Arm(ctx, view_until_ - ctx.MonotonicNow());  // a late answer extended it
      } else {
        LoseSession(ctx);
      }
    }
  }

 private:
  enum class Request { kOpen, kPing, kCreate, kPredecessor, kLowest, kWatch };
  struct Pending {
    Request kind;
    sim::TimeNs sent_at;  // on the monotonic clock
    algorithms::Timer timeout;
  };

  // ---- by state ----

  void StepJoining(sim::Context& ctx, const Pending& answered, const sim::Message& message) {
    if (const auto session = message.As<store::SessionReply>(); session && answered.kind == Request::kOpen) {
      if (session->ok == 0) return;  // refused: the open's timeout tries again
      session_ = session->session;
      Send(ctx, Request::kCreate);
    } else if (const auto created = message.As<store::CreateReply>()) {
      if (created->ok == 0) {
        LoseSession(ctx);  // our session is gone already
        return;
      }
      seq_ = created->seq;
      ctx.Observe(vocab::Rank(-seq_));  // the lowest sequence number leads
      if (static_cast<uint64_t>(seq_) > term_.max()) term_.Raise(ctx, static_cast<uint64_t>(seq_));
      state_ = State::kWaiting;
      report_.Role(ctx, vocab::Role::kFollower, Term());
      Send(ctx, Request::kPredecessor);
    }
  }

  void StepWaiting(sim::Context& ctx, const Pending& answered, const sim::Message& message) {
    const auto child = message.As<store::ChildReply>();
    if (!child) return;
    switch (answered.kind) {
      case Request::kPredecessor:
        if (child->seq < 0) {
          BecomeLeader(ctx);  // nobody below us: we are first in line
        } else {
          watched_ = child->seq;
          Send(ctx, Request::kWatch);
        }
        return;
      case Request::kWatch:
        // Gone between the two questions: ask again for whoever is below now.
        if (child->ok == 0 && child->seq == watched_) {
          watched_ = 0;
          Send(ctx, Request::kPredecessor);
        }
        return;
      case Request::kLowest:
        if (child->seq == seq_) {
          // First in line, yet no one told us: the notice was lost, or the
          // watch was (a restarted store forgets them). Nobody is below us.
          BecomeLeader(ctx);
        } else if (child->seq > 0 && child->seq < seq_) {
          report_.Belief(ctx, sim::NodeId(static_cast<uint32_t>(child->holder)),
                         sim::Term(static_cast<uint64_t>(child->seq)));
        }
        return;
      default: return;
    }
  }

  // A leader's replies need nothing but the session's (handled in OnMessage).
  void StepLeader(sim::Context&, const Pending&, const sim::Message&) {}

  // ---- transitions ----

  // Opens a session; a child follows once it is open.
  void Join(sim::Context& ctx) {
    state_ = State::kJoining;
    report_.Role(ctx, vocab::Role::kCandidate, Term());
    report_.Belief(ctx, sim::kNoNode, Term());
    Send(ctx, Request::kOpen);
  }

  void BecomeLeader(sim::Context& ctx) {
    state_ = State::kLeader;
    const sim::FencingToken token(static_cast<uint64_t>(seq_));
    report_.Leader(ctx, Term(), token);
    work_.Begin(ctx, token);
    view_timer_.Arm(ctx, std::max(sim::TimeNs(0), view_until_ - ctx.MonotonicNow()));
  }

  // The session is gone, or may be: the child goes with it. Steps down and
  // joins again with a new session (the old one expires at the store, since
  // nobody pings it any more, and takes the old child with it).
  void LoseSession(sim::Context& ctx) {
    if (state_ == State::kLeader) work_.End(ctx);
    view_timer_.Cancel(ctx);
    for (auto& [req, pending] : pending_) pending.timeout.Cancel(ctx);
    pending_.clear();
    session_ = 0;
    seq_ = 0;
    watched_ = 0;
    view_until_ = sim::TimeNs(0);
    Join(ctx);
  }

  // ---- requests ----

  void Send(sim::Context& ctx, Request kind) {
    const int64_t req = next_req_++;
    Pending& pending = pending_[req] = Pending{kind, ctx.MonotonicNow(), algorithms::Timer()};
    pending.timeout.Arm(ctx, config_.request_timeout);
    ctx.Send(config_.store, RequestMessage(kind, req));
  }

  sim::Message RequestMessage(Request kind, int64_t req) const {
    switch (kind) {
      case Request::kOpen: return store::SessionOpenRequest{.req = req, .timeout = config_.session_timeout.ns()};
      case Request::kPing: return store::SessionPingRequest{.req = req, .session = session_};
      case Request::kCreate:
        return store::CreateRequest{.req = req, .dir = kElectionDir, .holder = self_.value(), .session = session_};
      case Request::kPredecessor: return store::PredecessorRequest{.req = req, .dir = kElectionDir, .seq = seq_};
      case Request::kLowest: return store::LowestRequest{.req = req, .dir = kElectionDir};
      case Request::kWatch: return store::WatchDeleteRequest{.req = req, .dir = kElectionDir, .seq = watched_};
    }
    return {};
  }

  std::optional<Pending> TakePending(sim::Context& ctx, int64_t req) {
    auto it = pending_.find(req);
    if (it == pending_.end()) return std::nullopt;
    it->second.timeout.Cancel(ctx);
    Pending pending = it->second;
    pending_.erase(it);
    return pending;
  }

  bool Outstanding(Request kind) const {
    return std::any_of(pending_.begin(), pending_.end(),
                       [kind](const auto& entry) { return entry.second.kind == kind; });
  }

  void OnRequestTimeout(sim::Context& ctx, int64_t req) {
    const Request kind = pending_.at(req).kind;
    pending_.erase(req);
    switch (kind) {
      case Request::kOpen:
        // An open that succeeded unheard leaves a session with no child, which
        // simply expires.
        if (state_ == State::kJoining && session_ == 0) Send(ctx, Request::kOpen);
        return;
      case Request::kCreate:
        // A create that succeeded unheard would leave a child of ours in line
        // before us, waiting on nothing: give the session up instead.
        LoseSession(ctx);
        return;
      case Request::kPredecessor:
      case Request::kWatch:
        if (state_ == State::kWaiting && (kind == Request::kPredecessor || watched_ != 0)) Send(ctx, kind);
        return;
      case Request::kPing:
      case Request::kLowest: return;  // the next ping interval asks again; the view runs out if nothing comes back
    }
  }

  bool ViewValid(sim::Context& ctx) const { return ctx.MonotonicNow() < view_until_; }
  sim::Term Term() const { return sim::Term(term_.max()); }

  const sim::NodeId self_;
  const Config config_;
  State state_ = State::kJoining;
  algorithms::LeaderWork work_;
  algorithms::LeadershipReport report_;
  // The highest sequence number held: the term. Also counts boots.
  algorithms::DurableEpoch term_;
  int64_t session_ = 0;  // 0: none open
  int64_t seq_ = 0;      // our child; 0: none
  int64_t watched_ = 0;  // the predecessor whose deletion we wait for; 0: none
  // Monotonic time until which the session is ours for sure: the send time
  // of the last answered open or ping, plus the session view.
  sim::TimeNs view_until_;
  std::map<int64_t, Pending> pending_;
  int64_t next_req_ = 0;
  algorithms::Timer ping_timer_;
  algorithms::Timer view_timer_;  // leader: the session view runs out
};

class ZooKeeper final : public algorithms::Algorithm {
 public:
  std::string_view name() const override { return "zookeeper"; }
  std::string_view summary() const override {
    return "ZooKeeper's recipe: ephemeral sequential children, the lowest leads, each node watches only its "
           "predecessor; fencing token = sequence number";
  }

  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> specs = {
        OptionSpec::Duration("session_timeout", sim::TimeNs::Seconds(1),
                             "how long the store keeps a silent session (and its child), on its own clock",
                             sim::TimeNs(1)),
        OptionSpec::Duration("ping_interval", sim::TimeNs::Millis(333),
                             "how often a node pings its session (ZooKeeper's clients: a third of the timeout)",
                             sim::TimeNs(1)),
        OptionSpec::Duration("request_timeout", sim::TimeNs::Millis(200),
                             "a store request unanswered this long counts as failed", sim::TimeNs(1)),
        OptionSpec::Ratio("safety_margin", 750000, 1, kPpm,
                          "fraction of session_timeout a leader acts for, on its own clock, after sending the "
                          "last ping the store answered"),
    };
    return specs;
  }

  absl::Status Validate(const OptionValues& options, const algorithms::Cluster&) const override {
    Config config = ConfigFrom(algorithms::Cluster{}, options);
    if (config.ping_interval >= config.session_view()) {
      return absl::InvalidArgumentError(
          "option ping_interval must be shorter than safety_margin x session_timeout: a leader would lose its "
          "view of the session between two pings");
    }
    if (config.request_timeout >= config.session_view()) {
      return absl::InvalidArgumentError("option request_timeout must be shorter than safety_margin x session_timeout");
    }
    return absl::OkStatus();
  }

  // A sequence number is handed out once, to one node, and only grows: no
  // term has two leaders, no token two writers, no node a falling term,
  // whatever happens. One leader at a time rests on a leader giving up, by
  // its own clock, before the store ends its session: as with the lease, a
  // pause or drift past the margin's bound (clock_drift_bound) breaks that,
  // and a write delayed in the network, or decided at the very end of a
  // view a slow clock stretched to the bound, can land after the next
  // leader's. Once the cluster is stable, the lowest live sequence number
  // leads: a leader's session ends with it, and each node waits on the
  // child below its own. There are no votes, no log, no leader-only
  // messages to followers and no key leases to judge.
  algorithms::Guarantees guarantees(const OptionValues&) const override {
    const FaultKinds one_leader = FaultKinds::All().Without({FaultKind::kPause});
    return {{"election_safety", FaultKinds::All()},
            {"unique_token", FaultKinds::All()},
            {"term_monotonic", FaultKinds::All()},
            {"single_leader", one_leader},
            {"stale_token", one_leader.Without({FaultKind::kLatency, FaultKind::kClockDrift})},
            {"declared_winner", FaultKinds::All()},
            {"single_vote", FaultKinds::All()},
            {"leader_completeness", FaultKinds::All()},
            {"committed_agreement", FaultKinds::All()},
            {"disruption", FaultKinds::All()},
            {"lease_validity", FaultKinds::All()}};
  }

  // A leader acts for safety_margin x session_timeout from sending a ping,
  // on its clock; the store ends the session session_timeout after the ping
  // arrives, on its own: the lease's bound.
  std::optional<ClockDriftBound> clock_drift_bound(const OptionValues& options) const override {
    return ClockDriftBound{.slowest_ppm = -(kPpm - options.RatioPpm("safety_margin"))};
  }

  // The session's pings, and the followers' look at the lowest child, are
  // what a healthy cluster keeps sending.
  const vocab::MessageRoles& message_roles() const override {
    static const vocab::MessageRoles roles = {
        .steady_state = {&store::SessionPingRequest::kType, &store::SessionReply::kType, &store::LowestRequest::kType},
    };
    return roles;
  }

  std::optional<BenchTiming> bench_timing() const override { return BenchTiming{"ping_interval", "session_timeout"}; }

  bool uses_store() const override { return true; }

  std::unique_ptr<sim::Process> CreateNode(sim::NodeId self, const algorithms::Cluster& cluster,
                                           const OptionValues& options) const override {
    return std::make_unique<Node>(self, ConfigFrom(cluster, options));
  }
  std::unique_ptr<sim::Process> CreateStore(const algorithms::Cluster&, const OptionValues&) const override {
    return store::MakeStore();
  }

 private:
  static Config ConfigFrom(const algorithms::Cluster& cluster, const OptionValues& options) {
    Config config;
    config.store = cluster.store;
    config.resource = cluster.resource;
    config.leader_work = cluster.leader_work;
    config.session_timeout = options.Duration("session_timeout");
    config.ping_interval = options.Duration("ping_interval");
    config.request_timeout = options.Duration("request_timeout");
    config.safety_margin_ppm = options.RatioPpm("safety_margin");
    return config;
  }
};

}  // namespace

const algorithms::Algorithm& ZooKeeperElection() {
  static const ZooKeeper algorithm;
  return algorithm;
}

}  // namespace zookeeper
