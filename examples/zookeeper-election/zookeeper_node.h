// A node of ZooKeeper's election recipe (see zookeeper_election.h). The
// steps a mutant overrides (zookeeper_mutants.h) are protected and virtual;
// the reference holds no bug.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include "electsim/electsim.h"

namespace zookeeper {

namespace store = algorithms::store;

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

class Node : public sim::Process {
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
        OnPredecessorGone(ctx);
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

 protected:
  // ---- the steps a mutant overrides (zookeeper_mutants.cc) ----

  // A session is open: create our child, at the back of the line.
  virtual void OnSessionOpened(sim::Context& ctx) { Send(ctx, Request::kCreate); }

  // The child we watched is gone (a notice, or a watch set too late). That
  // says nothing of the children below it (it need not have been the
  // leader): ask again for the one just below ours.
  virtual void OnPredecessorGone(sim::Context& ctx) { Send(ctx, Request::kPredecessor); }

  // ---- what the steps do ----

  // Our child is `seq`: wait in line behind the child below it.
  void TakeChild(sim::Context& ctx, int64_t seq) {
    seq_ = seq;
    ctx.Observe(vocab::Rank(-seq_));  // the lowest sequence number leads
    if (static_cast<uint64_t>(seq_) > term_.max()) term_.Raise(ctx, static_cast<uint64_t>(seq_));
    state_ = State::kWaiting;
    report_.Role(ctx, vocab::Role::kFollower, Term());
    Send(ctx, Request::kPredecessor);
  }

  void BecomeLeader(sim::Context& ctx) {
    state_ = State::kLeader;
    const sim::FencingToken token(static_cast<uint64_t>(seq_));
    report_.Leader(ctx, Term(), token);
    work_.Begin(ctx, token);
    view_timer_.Arm(ctx, std::max(sim::TimeNs(0), view_until_ - ctx.MonotonicNow()));
  }

  // The highest sequence number this node has held, across sessions and
  // restarts.
  sim::Term Term() const { return sim::Term(term_.max()); }

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
      OnSessionOpened(ctx);
    } else if (const auto created = message.As<store::CreateReply>()) {
      if (created->ok == 0) {
        LoseSession(ctx);  // our session is gone already
        return;
      }
      TakeChild(ctx, created->seq);
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
        // Gone between the two questions.
        if (child->ok == 0 && child->seq == watched_) {
          watched_ = 0;
          OnPredecessorGone(ctx);
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

}  // namespace zookeeper
