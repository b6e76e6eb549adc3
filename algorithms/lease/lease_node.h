// The lease node: a candidate, holder or follower of the lease on the
// store's leader key (see lease.h). Its steps that a mutant overrides
// (lease_mutants.h) are protected and virtual; the reference holds no bug.
#pragma once

#include <algorithm>
#include <map>
#include <optional>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/leadership.h"
#include "electsim/algorithms/store.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/check.h"
#include "electsim/sim/process.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms::lease {

using store::KeyState;
using store::KeyStateOf;
using store::kLeaderKey;

constexpr int64_t kPpm = 1000000;

inline sim::TimeNs ScaleByPpm(sim::TimeNs span, int64_t ppm) {
  // 128-bit so that long TTLs times a ratio cannot overflow.
  return sim::TimeNs(static_cast<int64_t>(static_cast<__int128>(span.ns()) * ppm / kPpm));
}

// Which of its clocks the holder measures its lease view on (index into the
// option's choices).
enum class DeadlineClock : int64_t {
  kMonotonic = 0,  // right: a clock step cannot move the deadline
  kWall = 1,       // the classic bug: an NTP step backwards stretches the view
};

// How the holder renews (index into the option's choices).
enum class Renew : int64_t {
  // etcd's LeaseKeepAlive: the TTL starts again, the key is not written, its
  // revisions stay put.
  kKeepAlive = 0,
  // A compare-and-swap on the key's version with a fresh TTL, as a Kubernetes
  // Lease update: a write, so the version moves and watchers hear of it.
  kCas = 1,
};

struct LeaseConfig {
  sim::NodeId store;
  sim::NodeId resource;
  LeaderWorkConfig leader_work;
  sim::TimeNs lease_ttl;
  sim::TimeNs renew_interval;
  sim::TimeNs retry_interval;
  sim::TimeNs request_timeout;
  int64_t safety_margin_ppm = kPpm;
  bool release_on_stepdown = false;
  DeadlineClock deadline_clock = DeadlineClock::kMonotonic;
  Renew renew = Renew::kKeepAlive;

  // How long after sending an acquire/renew the holder may act on its own clock.
  sim::TimeNs lease_view() const { return ScaleByPpm(lease_ttl, safety_margin_ppm); }
};

class LeaseNode : public sim::Process {
 public:
  enum class State {
    // Holds no lease. Watches the key (polling as a fallback) and becomes a
    // candidate when the key is gone, or when the store still names this node
    // (an acquire whose reply was lost, a lease from before a step-down).
    kFollower,
    // An acquire is in flight: put_if_absent, or a cas reclaiming a key the
    // store says is ours. Leaves to leader on success, to follower on refusal
    // or timeout.
    kCandidate,
    // Holds the lease and its local view of it is valid; renews every
    // renew_interval. Leaves to follower (StepDown) when the view runs out,
    // a renewal is refused, or the store reports the lease gone.
    kLeader,
  };

  LeaseNode(sim::NodeId self, LeaseConfig config)
      : self_(self), config_(config), work_(config.resource, config.leader_work), term_("lease") {
    SIM_CHECK(config_.store != sim::kNoNode, "the lease algorithm needs a store");
  }

  void OnStart(sim::Context& ctx) override {
    // The term survives a crash and is reported again now. Replies sent
    // before the crash may arrive after the restart: those older than the
    // term are no news.
    term_.Boot(ctx);
    ctx.Observe(vocab::LeaseMargin(config_.safety_margin_ppm));
    seen_rev_ = term();
    next_req_ = term_.id_base() + 1;
    poll_timer_.Arm(ctx, config_.retry_interval);
    SendWatch(ctx);
    // Everyone races at boot; a refusal doubles as a read of who holds it.
    AcquireByPut(ctx);
  }

  // etcd's Step: what the store says about the key comes first, whatever
  // the message answers (the key's create revision is the term); then the
  // request it answers, if one is pending; then dispatch by role.
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& m) override {
    if (from != config_.store) return;  // resource acks carry nothing we act on
    const std::optional<store::Event> event = m.As<store::Event>();
    const std::optional<store::Reply> reply = m.As<store::Reply>();
    if (event && event->key != kLeaderKey) return;
    if (!event && !reply) return;
    const KeyState reported = event ? KeyStateOf(*event) : KeyStateOf(*reply);
    const bool current = Learn(ctx, reported, event ? event->rev : reply->rev);
    const std::optional<Answer> answer = reply ? TakeAnswer(ctx, *reply) : std::nullopt;
    if (answer) {
      switch (state_) {
        case State::kFollower: StepFollower(ctx, *answer, reported); break;
        case State::kCandidate: StepCandidate(ctx, *answer, current, reported); break;
        case State::kLeader: StepLeader(ctx, *answer, reported); break;
      }
    }
    // A reply past its timeout, or an event, is information only.
    MaybeAcquire(ctx);
  }

  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) override {
    // LeaderWork first: a write decided before a pause still goes out after
    // it (the stale write that fencing exists for).
    if (work_.OnTimer(ctx, timer, [&] { return LeaseViewValid(ctx); })) return;
    // After a pause the view-end timer may be queued behind others: nothing
    // below may act on a view that has already run out.
    if (state_ == State::kLeader && !LeaseViewValid(ctx)) OnLeaseViewEnd(ctx);
    for (auto& [req, pending] : pending_) {
      if (pending.timeout_timer.Fired(timer)) {
        OnRequestTimeout(ctx, req);
        return;
      }
    }
    if (poll_timer_.Fired(timer)) {
      OnPoll(ctx);
    } else if (renew_timer_.Fired(timer)) {
      OnRenewDue(ctx);
    } else if (validity_timer_.Fired(timer)) {
      OnLeaseViewEnd(ctx);
    }
  }

 protected:
  // ---- the steps a mutant overrides (lease_mutants.cc) ----

  // How long the holder may act from the start of its view, on its own
  // clock: safety_margin x TTL. The store counts the whole TTL from when
  // the request arrives, on its clock; the rest of the TTL absorbs a holder
  // clock that runs slow (lease.h).
  virtual sim::TimeNs LeaseView() const { return config_.lease_view(); }

  // Where the view a granted acquire or renewal gives starts: when that
  // request left (`sent_at`, on DeadlineNow()'s clock), never later, since
  // the store's TTL starts when it arrives.
  virtual sim::TimeNs LeaseViewStart(sim::Context& ctx, sim::TimeNs sent_at) const {
    (void)ctx;
    return sent_at;
  }

  // The fencing token the holder's writes carry under `lease`: its create
  // revision, which the store hands out once.
  virtual sim::FencingToken TokenOf(const KeyState& lease) {
    return sim::FencingToken(static_cast<uint64_t>(lease.create_rev));
  }

  // Unlike an acquire's, a renewal's reply that finds the node still leader
  // is never older than what it knows: a later state showing this lease
  // would need a later successful renewal of ours (a keep-alive leaves the
  // state as it is; a cas needs the version this reply brings); any other
  // later state has ended the leadership in Learn.
  virtual void OnRenewResult(sim::Context& ctx, bool ok, const KeyState& reported, sim::TimeNs sent_at) {
    if (ok) {
      lease_mod_rev_ = reported.mod_rev;
      ExtendView(ctx, sent_at);
      return;
    }
    if (reported.exists() && reported.holder == Self() && reported.create_rev == lease_create_rev_) {
      // Renewing by cas, an earlier renewal whose reply was lost moved the
      // version. Adopt it and renew again; the view stays anchored at the
      // last acknowledged send, which is earlier than that renewal's and so
      // still safe. (A keep-alive refused never finds the lease still ours.)
      lease_mod_rev_ = reported.mod_rev;
      SendRenew(ctx);
      return;
    }
    StepDown(ctx, StepDownReason::kLost);
  }

  // The latest renewal, sent at `sent_at`, had no reply within
  // request_timeout. A lost message is not a lost lease: retry at once and
  // keep acting on the view from the last acknowledged renewal until it
  // runs out.
  virtual void OnRenewTimeout(sim::Context& ctx, sim::TimeNs sent_at) {
    (void)sent_at;
    if (state_ == State::kLeader) SendRenew(ctx);
  }

  // A renewal sent at `sent_at` was granted: the view starts there (never
  // earlier than it did).
  void ExtendView(sim::Context& ctx, sim::TimeNs sent_at) {
    lease_view_start_ = std::max(lease_view_start_, LeaseViewStart(ctx, sent_at));
    ArmValidityTimer(ctx);
  }

  // ---- what the mutants read ----

  const LeaseConfig& config() const { return config_; }

  // The clock the lease view is measured on (see DeadlineClock).
  sim::TimeNs DeadlineNow(sim::Context& ctx) const {
    return config_.deadline_clock == DeadlineClock::kWall ? ctx.WallNow() : ctx.MonotonicNow();
  }

 private:
  enum class RequestKind { kAcquire, kRenew, kWatch, kRelease };
  struct Pending {
    RequestKind kind;
    sim::TimeNs sent_at;  // DeadlineNow() when the request left: the lease view starts here
    Timer timeout_timer;
  };
  // A reply to a request still pending, and what it was.
  struct Answer {
    RequestKind kind;
    bool ok;
    bool latest;          // the request of its kind whose outcome matters (not one replaced since)
    sim::TimeNs sent_at;  // when the request left, on DeadlineNow()'s clock
  };

  enum class StepDownReason {
    kViewExpired,  // the local view ran out (the lease may still be ours at the store)
    kLost,         // the store refused a renewal or reported the lease gone
  };

  // ---- knowledge from the store ----

  // Folds in what a reply or event says about the leader key. `rev` orders
  // them: replies and events can arrive out of order, and an older one must
  // not undo a newer one. Returns false for such an older one (ignored).
  bool Learn(sim::Context& ctx, const KeyState& state, int64_t rev) {
    if (rev < seen_rev_) return false;
    seen_rev_ = rev;
    key_ = state;
    RaiseTerm(ctx, state.create_rev);
    if (state.exists()) {
      ReportBelief(ctx, HolderId(state.holder), state.create_rev);
    } else {
      ReportBelief(ctx, sim::kNoNode, term());
    }
    if (state_ == State::kLeader &&
        !(state.exists() && state.holder == Self() && state.create_rev == lease_create_rev_)) {
      StepDown(ctx, StepDownReason::kLost);
    }
    return true;
  }

  int64_t term() const { return static_cast<int64_t>(term_.max()); }
  void RaiseTerm(sim::Context& ctx, int64_t create_rev) {
    if (create_rev > term()) term_.Raise(ctx, static_cast<uint64_t>(create_rev));
  }

  void ReportBelief(sim::Context& ctx, sim::NodeId holder, int64_t term) {
    report_.Belief(ctx, holder, sim::Term(static_cast<uint64_t>(term)));
  }

  // ---- transitions ----

  void BecomeFollower(sim::Context& ctx) { SetState(ctx, State::kFollower); }

  void BecomeCandidate(sim::Context& ctx) { SetState(ctx, State::kCandidate); }

  // `view_start`: where the lease view starts (LeaseViewStart).
  void BecomeLeader(sim::Context& ctx, const KeyState& lease, sim::TimeNs view_start) {
    lease_create_rev_ = lease.create_rev;
    lease_mod_rev_ = lease.mod_rev;
    lease_view_start_ = view_start;
    RaiseTerm(ctx, lease.create_rev);
    ReportBelief(ctx, self_, lease_create_rev_);
    state_ = State::kLeader;
    const sim::FencingToken token = TokenOf(lease);
    report_.Leader(ctx, sim::Term(static_cast<uint64_t>(lease_create_rev_)), token);
    work_.Begin(ctx, token);
    renew_timer_.Arm(ctx, config_.renew_interval);
    ArmValidityTimer(ctx);
  }

  void StepDown(sim::Context& ctx, StepDownReason reason) {
    work_.End(ctx);
    renew_timer_.Cancel(ctx);
    validity_timer_.Cancel(ctx);
    renew_req_ = 0;
    SetState(ctx, State::kFollower);
    if (reason == StepDownReason::kViewExpired && config_.release_on_stepdown) {
      // Hand the key back now instead of making everyone wait out the TTL;
      // harmless if a newer version exists (the delete is then refused).
      released_create_rev_ = lease_create_rev_;
      SendRelease(ctx, lease_mod_rev_);
    }
    lease_create_rev_ = 0;
    lease_mod_rev_ = 0;
  }

  void SendRelease(sim::Context& ctx, int64_t version) {
    const int64_t req = NewRequest(ctx, RequestKind::kRelease);
    ctx.Send(config_.store, store::DeleteRequest{.req = req, .key = kLeaderKey, .version = version});
  }

  // A renewal in flight at step-down may have moved the version past the one
  // the delete named; the refusal says the key is still ours, so try again.
  void RetryRelease(sim::Context& ctx, const KeyState& reported) {
    if (released_create_rev_ == 0) return;
    if (reported.exists() && reported.holder == Self() && reported.create_rev == released_create_rev_) {
      SendRelease(ctx, reported.mod_rev);
    }
  }

  void SetState(sim::Context& ctx, State state) {
    state_ = state;
    SIM_CHECK(state != State::kLeader, "the lease is claimed in BecomeLeader, with its token");
    report_.Role(ctx, state == State::kCandidate ? vocab::Role::kCandidate : vocab::Role::kFollower,
                 sim::Term(term_.max()));
  }

  // ---- acquiring ----

  // A follower goes for the lease when the key is free, or when the store
  // still names it (then a cas on that version makes the lease ours again
  // with a fresh TTL, so the view can start at the cas's send time).
  void MaybeAcquire(sim::Context& ctx) {
    if (state_ != State::kFollower) return;
    if (!key_.exists()) {
      AcquireByPut(ctx);
    } else if (key_.holder == Self() && key_.create_rev != released_create_rev_) {
      AcquireByCas(ctx, key_.mod_rev);
    }
  }

  void AcquireByPut(sim::Context& ctx) {
    BecomeCandidate(ctx);
    acquire_req_ = NewLeaseRequest(ctx, RequestKind::kAcquire);
    ctx.Send(config_.store,
             store::PutIfAbsentRequest{
                 .req = acquire_req_, .key = kLeaderKey, .holder = Self(), .ttl = config_.lease_ttl.ns()});
  }

  void AcquireByCas(sim::Context& ctx, int64_t version) {
    BecomeCandidate(ctx);
    acquire_req_ = NewLeaseRequest(ctx, RequestKind::kAcquire);
    ctx.Send(config_.store, store::CasRequest{.req = acquire_req_,
                                              .key = kLeaderKey,
                                              .version = version,
                                              .holder = Self(),
                                              .ttl = config_.lease_ttl.ns()});
  }

  // `current`: the reply is not older than what the node already knows.
  void OnAcquireResult(sim::Context& ctx, bool ok, bool current, const KeyState& reported, sim::TimeNs sent_at) {
    // A reply that is not current may grant a lease the node already knows
    // has ended (its token superseded): it counts as refused, and what the
    // node knows decides the next step (MaybeAcquire). The view check only
    // fails when Validate was skipped (request_timeout must be shorter than
    // the view): then the lease is held but not used.
    const sim::TimeNs start = LeaseViewStart(ctx, sent_at);
    if (ok && current && start + LeaseView() > DeadlineNow(ctx)) {
      BecomeLeader(ctx, reported, start);
    } else {
      BecomeFollower(ctx);
    }
  }

  // ---- holding ----

  bool LeaseViewValid(sim::Context& ctx) const {
    return state_ == State::kLeader && lease_view_start_ + LeaseView() > DeadlineNow(ctx);
  }

  void ArmValidityTimer(sim::Context& ctx) {
    // Timers run on the monotonic clock; a view on the wall clock is checked
    // again when this fires (OnLeaseViewEnd).
    const sim::TimeNs left = lease_view_start_ + LeaseView() - DeadlineNow(ctx);
    validity_timer_.Arm(ctx, std::max(left, sim::TimeNs(0)));
  }

  void OnRenewDue(sim::Context& ctx) {
    if (state_ != State::kLeader) return;
    renew_timer_.Arm(ctx, config_.renew_interval);
    if (renew_req_ == 0) SendRenew(ctx);
  }

  void SendRenew(sim::Context& ctx) {
    renew_req_ = NewLeaseRequest(ctx, RequestKind::kRenew);
    ctx.Send(config_.store, config_.renew == Renew::kKeepAlive
                                ? sim::Message(store::KeepAliveRequest{.req = renew_req_,
                                                                       .key = kLeaderKey,
                                                                       .create_rev = lease_create_rev_,
                                                                       .holder = Self(),
                                                                       .ttl = config_.lease_ttl.ns()})
                                : sim::Message(store::CasRequest{.req = renew_req_,
                                                                 .key = kLeaderKey,
                                                                 .version = lease_mod_rev_,
                                                                 .holder = Self(),
                                                                 .ttl = config_.lease_ttl.ns()}));
  }

  void OnLeaseViewEnd(sim::Context& ctx) {
    if (state_ != State::kLeader) return;
    if (LeaseViewValid(ctx)) {
      // Only a view on a wall clock stepped back gets here: it now ends later.
      ArmValidityTimer(ctx);
      return;
    }
    StepDown(ctx, StepDownReason::kViewExpired);
    MaybeAcquire(ctx);
  }

  // ---- requests ----

  // The pending request `reply` answers, taken off the books (its timeout
  // disarmed, the latest request of its kind marked answered); nullopt for a
  // reply past its timeout or to an earlier incarnation.
  std::optional<Answer> TakeAnswer(sim::Context& ctx, const store::Reply& reply) {
    auto it = pending_.find(reply.req);
    if (it == pending_.end()) return std::nullopt;
    it->second.timeout_timer.Cancel(ctx);
    Answer answer{.kind = it->second.kind, .ok = reply.ok != 0, .latest = true, .sent_at = it->second.sent_at};
    pending_.erase(it);
    if (int64_t* latest = LatestRequest(answer.kind)) {
      answer.latest = *latest == reply.req;
      if (answer.latest) *latest = 0;
    }
    return answer;
  }

  // The id of the request of `kind` whose outcome matters (0: none pending);
  // nullptr for releases, which are all followed up.
  int64_t* LatestRequest(RequestKind kind) {
    switch (kind) {
      case RequestKind::kAcquire: return &acquire_req_;
      case RequestKind::kRenew: return &renew_req_;
      case RequestKind::kWatch: return &watch_req_;
      case RequestKind::kRelease: return nullptr;
    }
    return nullptr;
  }

  // A follower's only pending business is handing back a lease it released.
  void StepFollower(sim::Context& ctx, const Answer& answer, const KeyState& reported) {
    if (answer.kind == RequestKind::kRelease && !answer.ok) RetryRelease(ctx, reported);
  }

  void StepCandidate(sim::Context& ctx, const Answer& answer, bool current, const KeyState& reported) {
    if (answer.kind == RequestKind::kAcquire && answer.latest) {
      OnAcquireResult(ctx, answer.ok, current, reported, answer.sent_at);
    }
  }

  void StepLeader(sim::Context& ctx, const Answer& answer, const KeyState& reported) {
    if (answer.kind == RequestKind::kRenew && answer.latest) OnRenewResult(ctx, answer.ok, reported, answer.sent_at);
  }

  int64_t NewRequest(sim::Context& ctx, RequestKind kind) {
    const int64_t req = next_req_++;
    Pending& pending = pending_[req] = Pending{kind, DeadlineNow(ctx), Timer()};
    pending.timeout_timer.Arm(ctx, config_.request_timeout);
    return req;
  }

  // A request that gives or renews the lease if the store grants it: the
  // lease view counts from its send, which the checkers are told of.
  int64_t NewLeaseRequest(sim::Context& ctx, RequestKind kind) {
    const int64_t req = NewRequest(ctx, kind);
    ctx.Observe(vocab::LeaseRequest(req));
    return req;
  }

  void OnRequestTimeout(sim::Context& ctx, int64_t req) {
    auto it = pending_.find(req);
    if (it == pending_.end()) return;
    const RequestKind kind = it->second.kind;
    const sim::TimeNs sent_at = it->second.sent_at;
    pending_.erase(it);
    switch (kind) {
      case RequestKind::kAcquire:
        if (req != acquire_req_) return;
        acquire_req_ = 0;
        // Counts as refused; the next poll tries again.
        if (state_ == State::kCandidate) BecomeFollower(ctx);
        return;
      case RequestKind::kRenew:
        if (req != renew_req_) return;
        renew_req_ = 0;
        OnRenewTimeout(ctx, sent_at);
        return;
      case RequestKind::kWatch:
        if (req == watch_req_) watch_req_ = 0;
        return;
      case RequestKind::kRelease: return;
    }
  }

  void SendWatch(sim::Context& ctx) {
    if (watch_req_ != 0) return;
    watch_req_ = NewRequest(ctx, RequestKind::kWatch);
    ctx.Send(config_.store, store::WatchRequest{.req = watch_req_, .key = kLeaderKey});
  }

  // The fallback for lost watches (the store forgets them on restart) and
  // lost events: a follower re-registers its watch, which also reads the key.
  void OnPoll(sim::Context& ctx) {
    poll_timer_.Arm(ctx, config_.retry_interval);
    if (state_ != State::kFollower) return;
    MaybeAcquire(ctx);
    if (state_ == State::kFollower) SendWatch(ctx);
  }

  int64_t Self() const { return static_cast<int64_t>(self_.value()); }
  static sim::NodeId HolderId(int64_t holder) {
    return holder < 0 ? sim::kNoNode : sim::NodeId(static_cast<uint32_t>(holder));
  }

  const sim::NodeId self_;
  const LeaseConfig config_;
  LeaderWork work_;  // the writes a leader makes, fenced by create_rev
  State state_ = State::kFollower;
  // What this node has told the checkers about its role and the holder.
  LeadershipReport report_;

  // What the store last said about the leader key (at revision seen_rev_).
  KeyState key_;
  int64_t seen_rev_ = 0;
  // Highest create_rev known: the lease's term. In stable storage, so that it
  // never goes down, also across a restart; also counts boots.
  DurableEpoch term_;

  // The lease in hand (meaningful in kLeader).
  int64_t lease_create_rev_ = 0;  // fencing token and term
  int64_t lease_mod_rev_ = 0;     // version the next renewal compares against
  sim::TimeNs lease_view_start_;  // LeaseViewStart() of the last acknowledged acquire/renew
  // Lease handed back on step-down, so the follower does not reclaim it.
  int64_t released_create_rev_ = 0;

  // Requests in flight, by id; the ids of the ones whose outcome matters.
  // Ids never repeat across restarts (term_.id_base()): a reply addressed to
  // an earlier incarnation must not be taken for ours.
  std::map<int64_t, Pending> pending_;
  int64_t next_req_ = 0;
  int64_t acquire_req_ = 0;
  int64_t renew_req_ = 0;
  int64_t watch_req_ = 0;

  Timer poll_timer_;      // a follower polls the key
  Timer renew_timer_;     // the holder renews
  Timer validity_timer_;  // the holder's view of its lease runs out
};

}  // namespace algorithms::lease
