#include "algorithms/shards/shard_replica.h"

#include <algorithm>

#include "electsim/sim/check.h"

namespace algorithms::shards {

using store::KeyState;

ShardReplica::ShardReplica(sim::NodeId self, ShardsConfig config) : self_(self), config_(config), boots_("shards") {
  SIM_CHECK(config_.store != sim::kNoNode, "the shards workload needs a store");
  keys_.resize(static_cast<size_t>(config_.keys + (config_.policy == Policy::kFair ? config_.replicas : 0)));
  if (config_.queue) lines_.resize(static_cast<size_t>(config_.keys));
  held_by_.assign(config_.replicas, 0);
}

void ShardReplica::OnStart(sim::Context& ctx) {
  // Ids of requests from an earlier incarnation never match this one's.
  boots_.Boot(ctx);
  next_req_ = boots_.id_base() + 1;
  ctx.Observe(vocab::LeaseMargin(config_.safety_margin_ppm));
  // Until the store says otherwise, every configured replica is a member.
  live_members_ = config_.replicas;
  if (config_.queue) {
    // Lines first: a replica goes for a key only at the head of its line.
    OpenSession(ctx);
    session_timer_.Arm(ctx, config_.renew_interval);
  } else {
    StartRace(ctx);
  }
  retry_timer_.Arm(ctx, config_.retry_interval);
  if (config_.writes) write_tick_timer_.Arm(ctx, config_.leader_work.write_interval);
}

void ShardReplica::StartRace(sim::Context& ctx) {
  // Watch every key (each answer doubles as a read), race for the wanted ones.
  for (int64_t key = 0; key < static_cast<int64_t>(keys_.size()); ++key) SendWatch(ctx, key);
  if (config_.policy == Policy::kFair) SendAcquire(ctx, config_.member_key(self_.value()));
  // Replicas start their race at different keys, so that capped and fair
  // ones do not all go for the same few first.
  const int64_t start = config_.keys * static_cast<int64_t>(self_.value()) / std::max<int64_t>(1, config_.replicas);
  int64_t attempts = 0;
  for (int64_t i = 0; i < config_.keys && attempts < Target(); ++i) {
    const int64_t key = (start + i) % config_.keys;
    SendAcquire(ctx, key);
    ++attempts;
  }
}

int64_t ShardReplica::Target() const {
  switch (config_.policy) {
    case Policy::kAll: return config_.keys;
    case Policy::kCap: return std::min(config_.cap, config_.keys);
    case Policy::kFair: {
      const int64_t members = std::max<int64_t>(1, live_members_);
      return (config_.keys + members - 1) / members;
    }
  }
  return config_.keys;
}

bool ShardReplica::Wants(int64_t key) const {
  if (IsMemberKey(key)) return key == config_.member_key(self_.value());
  // Acquires in flight count: a replica asks for no more keys than it may hold.
  return owned_shards_ + acquiring_ < Target();
}

void ShardReplica::OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& m) {
  if (from != config_.store) return;  // resource acks carry nothing acted on
  if (const std::optional<store::Event> event = m.As<store::Event>()) {
    if (event->key < 0 || event->key >= static_cast<int64_t>(keys_.size())) return;
    // In a line, every event is the one a one-shot watch sent.
    if (config_.queue) lines_[static_cast<size_t>(event->key)].key_watched = false;
    HandleState(ctx, event->key, store::KeyStateOf(*event), event->rev);
    MaybeAcquire(ctx, event->key);
    AdvanceLine(ctx, event->key);
    ArmTimers(ctx);
    return;
  }
  if (config_.queue) {
    if (m.Is(store::SessionReply::kType)) {
      HandleSessionReply(ctx, m);
      ArmTimers(ctx);
      return;
    }
    if (m.Is(store::ChildDeleted::kType)) {
      const int64_t key = m.Get("dir");
      if (key < 0 || key >= config_.keys) return;
      Line& l = lines_[static_cast<size_t>(key)];
      // The child it waited behind is gone: is it the head now?
      if ((l.step == kBehind || l.step == kWatchingPredecessor) && l.predecessor == m.Get("seq")) {
        l.req = 0;
        FindPredecessor(ctx, key);
      }
      return;
    }
    // Replies to a line's requests: create, predecessor, watch_delete, watch_once.
    const auto line = line_of_req_.find(m.Get("req"));
    if (line != line_of_req_.end()) {
      const int64_t key = line->second.key;
      line_of_req_.erase(line);
      HandleLineReply(ctx, key, m);
      ArmTimers(ctx);
      return;
    }
  }
  const std::optional<store::Reply> reply = m.As<store::Reply>();
  if (!reply) return;
  const auto request = key_of_req_.find(reply->req);
  if (request == key_of_req_.end()) return;  // answered already, or of an earlier incarnation
  const int64_t key = request->second.key;
  key_of_req_.erase(request);
  Key& k = keys_[static_cast<size_t>(key)];
  const KeyState state = store::KeyStateOf(*reply);
  HandleState(ctx, key, state, reply->rev);
  if (k.req == reply->req) {
    const int64_t op = k.op;
    const sim::TimeNs sent_at = k.sent_at;
    timeouts_.erase({(k.sent_at + config_.request_timeout).ns(), key});
    k.req = 0;
    SetOp(key, kNone);
    HandleAnswer(ctx, key, op, reply->ok != 0, state, sent_at);
  }
  MaybeAcquire(ctx, key);
  ArmTimers(ctx);
}

// What the store says of `key`, newest first: an older answer (`rev` below
// what is known) must not undo a newer one. A lease the store no longer
// shows as this replica's is lost.
void ShardReplica::HandleState(sim::Context& ctx, int64_t key, const KeyState& state, int64_t rev) {
  Key& k = keys_[static_cast<size_t>(key)];
  if (rev < k.seen_rev) return;
  k.seen_rev = rev;
  if (IsMemberKey(key)) {
    // Counted live until the store first says otherwise.
    const bool was_live = !k.heard || k.known.exists();
    if (was_live != state.exists()) live_members_ += state.exists() ? 1 : -1;
  }
  // Whom it believes owns the key: what liveness judges, per key.
  if (!k.heard || state.holder != k.known.holder || state.create_rev != k.known.create_rev) {
    const sim::NodeId holder = state.exists() ? sim::NodeId(static_cast<uint32_t>(state.holder)) : sim::kNoNode;
    Observe(ctx, key, vocab::Belief(holder, sim::Term(static_cast<uint64_t>(state.create_rev))));
  }
  if (!IsMemberKey(key)) {
    // Who holds how many, as the store says: what fair shares are judged by.
    if (k.heard && k.known.exists()) CountHeld(k.known.holder, -1);
    if (state.exists()) CountHeld(state.holder, +1);
  }
  k.heard = true;
  k.known = state;
  if (k.owned && !(state.exists() && state.holder == Self() && state.create_rev == k.token)) StepDown(ctx, key, false);
}

void ShardReplica::HandleAnswer(sim::Context& ctx, int64_t key, int64_t op, bool ok, const KeyState& state,
                                sim::TimeNs sent_at) {
  Key& k = keys_[static_cast<size_t>(key)];
  switch (op) {
    case kAcquire:
      if (ok && state.holder == Self()) {
        Own(ctx, key, state, sent_at);
      } else if (!k.owned && state.exists() && state.holder == Self() && Wants(key)) {
        // The store names this replica: an acquire whose reply was lost, or
        // a lease of an earlier incarnation. Take it back by compare-and-swap,
        // which gives a view from that request's send.
        SendReclaim(ctx, key, state.mod_rev);
      } else if (!IsMemberKey(key) && !config_.queue) {
        // Lost the race for it: go for another free key now rather than at
        // the next retry, from a random place so that the losers of one race
        // do not all run into the next one together.
        AcquireAnotherFreeKey(ctx);
      }
      break;
    case kRenew:
      if (ok && k.owned) {
        k.view_start = std::max(k.view_start, sent_at);
        view_end_.insert({ViewEnd(k).ns(), key});
      }
      // A refusal has already ended the ownership in HandleState.
      break;
    default: break;
  }
}

void ShardReplica::AcquireAnotherFreeKey(sim::Context& ctx) {
  if (config_.keys == 0) return;
  const int64_t start = static_cast<int64_t>(ctx.rng().Below(static_cast<uint64_t>(config_.keys)));
  for (int64_t i = 0; i < config_.keys && Wants(start); ++i) {
    const int64_t key = (start + i) % config_.keys;
    const Key& k = keys_[static_cast<size_t>(key)];
    if (!k.owned && k.req == 0 && !k.known.exists()) {
      SendAcquire(ctx, key);
      return;
    }
  }
}

void ShardReplica::MaybeAcquire(sim::Context& ctx, int64_t key) {
  const Key& k = keys_[static_cast<size_t>(key)];
  if (k.owned || k.req != 0 || k.known.exists() || !Wants(key) || !Contends(key)) return;
  SendAcquire(ctx, key);
}

void ShardReplica::SetOp(int64_t key, int64_t op) {
  Key& k = keys_[static_cast<size_t>(key)];
  if (!IsMemberKey(key)) acquiring_ += (op == kAcquire ? 1 : 0) - (k.op == kAcquire ? 1 : 0);
  k.op = op;
}

int64_t ShardReplica::NewRequest(sim::Context& ctx, int64_t key, int64_t op) {
  Key& k = keys_[static_cast<size_t>(key)];
  // A request replaced (or timed out) keeps its entry in key_of_req_: its
  // late reply still says what the store holds.
  if (k.req != 0) timeouts_.erase({(k.sent_at + config_.request_timeout).ns(), key});
  const int64_t req = next_req_++;
  k.req = req;
  SetOp(key, op);
  k.sent_at = ctx.MonotonicNow();
  key_of_req_[req] = Sent{key, k.sent_at};
  timeouts_.insert({(k.sent_at + config_.request_timeout).ns(), key});
  return req;
}

void ShardReplica::SendAcquire(sim::Context& ctx, int64_t key) {
  const int64_t req = NewRequest(ctx, key, kAcquire);
  Observe(ctx, key, vocab::LeaseRequest(req));
  ctx.Send(config_.store,
           store::PutIfAbsentRequest{.req = req, .key = key, .holder = Self(), .ttl = config_.lease_ttl.ns()});
}

void ShardReplica::SendReclaim(sim::Context& ctx, int64_t key, int64_t version) {
  const int64_t req = NewRequest(ctx, key, kAcquire);
  Observe(ctx, key, vocab::LeaseRequest(req));
  ctx.Send(
      config_.store,
      store::CasRequest{.req = req, .key = key, .version = version, .holder = Self(), .ttl = config_.lease_ttl.ns()});
}

void ShardReplica::SendRenew(sim::Context& ctx, int64_t key) {
  Key& k = keys_[static_cast<size_t>(key)];
  const int64_t req = NewRequest(ctx, key, kRenew);
  Observe(ctx, key, vocab::LeaseRequest(req));
  ctx.Send(config_.store,
           store::KeepAliveRequest{
               .req = req, .key = key, .create_rev = k.token, .holder = Self(), .ttl = config_.lease_ttl.ns()});
}

void ShardReplica::SendWatch(sim::Context& ctx, int64_t key) {
  // A watch is no request of the key's own line: it never replaces one in flight.
  const int64_t req = next_req_++;
  key_of_req_[req] = Sent{key, ctx.MonotonicNow()};
  ctx.Send(config_.store, store::WatchRequest{.req = req, .key = key});
}

void ShardReplica::SendRelease(sim::Context& ctx, int64_t key, int64_t version) {
  const int64_t req = NewRequest(ctx, key, kRelease);
  ctx.Send(config_.store, store::DeleteRequest{.req = req, .key = key, .version = version});
}

void ShardReplica::Own(sim::Context& ctx, int64_t key, const KeyState& state, sim::TimeNs sent_at) {
  Key& k = keys_[static_cast<size_t>(key)];
  if (k.owned) return;
  k.owned = true;
  k.token = state.create_rev;
  k.version = state.mod_rev;
  k.view_start = sent_at;
  if (!IsMemberKey(key)) ++owned_shards_;
  Observe(ctx, key,
          vocab::BecameLeader(sim::Term(static_cast<uint64_t>(k.token)),
                              sim::FencingToken(static_cast<uint64_t>(k.token))));
  view_end_.insert({ViewEnd(k).ns(), key});
  ScheduleRenewal(ctx, key, sent_at);
  // A new owner proves itself at once, as a new leader does (LeaderWork).
  if (config_.writes && !IsMemberKey(key)) PrepareWrite(ctx, key);
  // Holding more than its share now (a member joined): give keys back.
  if (config_.policy == Policy::kFair && owned_shards_ > Target()) Rebalance(ctx);
}

void ShardReplica::StepDown(sim::Context& ctx, int64_t key, bool release) {
  Key& k = keys_[static_cast<size_t>(key)];
  if (!k.owned) return;
  k.owned = false;
  // A write of the key still being prepared is abandoned, as LeaderWork::End
  // abandons one: once released, the key may go to the next owner at once,
  // and the write could reach the resource after that owner's first one. A
  // write whose send time has passed (the node was paused at that point) is
  // already on its way: nothing checks it again (OnWriteSend).
  if (ctx.MonotonicNow() < write_send_at_) AbandonWrites(key);
  if (!IsMemberKey(key)) --owned_shards_;
  renew_due_.erase({k.renew_due.ns(), key});
  // Stale entries of view_end_ are skipped when they come due.
  Observe(ctx, key, vocab::RoleChange(vocab::Role::kFollower, sim::Term(static_cast<uint64_t>(k.token))));
  const int64_t version = k.version;
  k.token = 0;
  k.version = 0;
  if (release) SendRelease(ctx, key, version);
  // Still at the head of its line: it watches the key again.
  AdvanceLine(ctx, key);
}

// A key given back while its owner's view still holds: a write prepared
// for it and not sent yet is abandoned first, as LeaderWork::End abandons
// one. Sent after the release, it could reach the resource after the next
// owner's first write, though nothing forced the owner to stop.
void ShardReplica::GiveBack(sim::Context& ctx, int64_t key) {
  AbandonWrites(key);
  StepDown(ctx, key, true);
}

void ShardReplica::AbandonWrites(int64_t key) {
  std::erase_if(writes_prepared_, [key](const std::pair<int64_t, int64_t>& write) { return write.first == key; });
}

void ShardReplica::Rebalance(sim::Context& ctx) {
  // The highest keys go first, so every replica agrees which it keeps.
  for (int64_t key = config_.keys - 1; key >= 0 && owned_shards_ > Target(); --key) {
    if (keys_[static_cast<size_t>(key)].owned) GiveBack(ctx, key);
  }
}

void ShardReplica::CountHeld(int64_t holder, int64_t delta) {
  if (holder < 0 || holder >= static_cast<int64_t>(held_by_.size())) return;
  held_by_[static_cast<size_t>(holder)] += delta;
  held_total_ += delta;
}

// Shares of ceil(keys / members) can settle unevenly (5, 5, 5, 3 of 18 keys):
// nobody is above its share and nobody finds a free key. A replica holding
// two more than the least loaded live member gives one key back (one per
// retry, so that replicas giving at once do not overshoot), for it to take;
// only once every key is held, so that the race of a start or a takeover is
// over and the counts are not still moving.
void ShardReplica::EvenOut(sim::Context& ctx) {
  if (held_total_ < config_.keys) return;
  int64_t least = -1;
  for (uint32_t replica = 0; replica < config_.replicas; ++replica) {
    const Key& member = keys_[static_cast<size_t>(config_.member_key(replica))];
    if (!member.heard || !member.known.exists()) continue;
    const int64_t held = held_by_[replica];
    if (least < 0 || held < least) least = held;
  }
  if (least < 0 || owned_shards_ < least + 2) return;
  for (int64_t key = config_.keys - 1; key >= 0; --key) {
    if (keys_[static_cast<size_t>(key)].owned) {
      GiveBack(ctx, key);
      return;
    }
  }
}

void ShardReplica::ScheduleRenewal(sim::Context& ctx, int64_t key, sim::TimeNs from) {
  Key& k = keys_[static_cast<size_t>(key)];
  sim::TimeNs interval = config_.renew_interval;
  if (config_.renew_jitter_ppm > 0) {
    const int64_t spread_ns =
        static_cast<int64_t>(static_cast<__int128>(interval.ns()) * config_.renew_jitter_ppm / kPpm);
    interval = interval - sim::TimeNs(ctx.rng().Between(0, spread_ns));
  }
  k.renew_due = from + interval;
  renew_due_.insert({k.renew_due.ns(), key});
}

void ShardReplica::OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) {
  // The view check first: after a pause nothing below may act on a view
  // that has run out.
  OnViewCheck(ctx);
  if (view_timer_.timer.Fired(timer)) {
    // Its work is the view check above.
  } else if (write_send_timer_.Fired(timer)) {
    OnWriteSend(ctx);
  } else if (write_tick_timer_.Fired(timer)) {
    OnWriteTick(ctx);
  } else if (renew_timer_.timer.Fired(timer)) {
    OnRenewDue(ctx);
  } else if (timeout_timer_.timer.Fired(timer)) {
    OnTimeouts(ctx);
  } else if (retry_timer_.Fired(timer)) {
    OnRetry(ctx);
  } else if (session_timer_.Fired(timer)) {
    OnSessionTick(ctx);
  }
  ArmTimers(ctx);
}

void ShardReplica::OnViewCheck(sim::Context& ctx) {
  const int64_t now_ns = ctx.MonotonicNow().ns();
  while (!view_end_.empty() && view_end_.begin()->first <= now_ns) {
    const auto [end_ns, key] = *view_end_.begin();
    view_end_.erase(view_end_.begin());
    const Key& k = keys_[static_cast<size_t>(key)];
    // An entry left by an earlier view (renewed since, or stepped down) is stale.
    if (k.owned && ViewEnd(k).ns() == end_ns) StepDown(ctx, key, config_.release_on_stepdown);
  }
}

void ShardReplica::OnRenewDue(sim::Context& ctx) {
  const int64_t now_ns = ctx.MonotonicNow().ns();
  while (!renew_due_.empty() && renew_due_.begin()->first <= now_ns) {
    const int64_t key = renew_due_.begin()->second;
    renew_due_.erase(renew_due_.begin());
    SendRenew(ctx, key);
    ScheduleRenewal(ctx, key, ctx.MonotonicNow());
  }
}

void ShardReplica::OnTimeouts(sim::Context& ctx) {
  const int64_t now_ns = ctx.MonotonicNow().ns();
  while (!timeouts_.empty() && timeouts_.begin()->first <= now_ns) {
    const int64_t key = timeouts_.begin()->second;
    timeouts_.erase(timeouts_.begin());
    Key& k = keys_[static_cast<size_t>(key)];
    const int64_t op = k.op;
    k.req = 0;
    SetOp(key, kNone);
    // A lost renewal is not a lost lease: try again at once, acting on the
    // view of the last one granted until it runs out.
    if (op == kRenew && k.owned) SendRenew(ctx, key);
    // A lost acquire: the retry tick tries again.
  }
}

void ShardReplica::OnRetry(sim::Context& ctx) {
  retry_timer_.Arm(ctx, config_.retry_interval);
  // Requests unanswered for a TTL are given up for good (ids grow with time).
  const sim::TimeNs now = ctx.MonotonicNow();
  while (!key_of_req_.empty() && now - key_of_req_.begin()->second.sent_at > config_.lease_ttl) {
    key_of_req_.erase(key_of_req_.begin());
  }
  while (!line_of_req_.empty() && now - line_of_req_.begin()->second.sent_at > config_.lease_ttl) {
    line_of_req_.erase(line_of_req_.begin());
  }
  for (int64_t key = 0; key < static_cast<int64_t>(keys_.size()); ++key) {
    const Key& k = keys_[static_cast<size_t>(key)];
    if (config_.queue && !IsMemberKey(key) && lines_[static_cast<size_t>(key)].req != 0 &&
        now - lines_[static_cast<size_t>(key)].sent_at > config_.request_timeout) {
      // A line's request unanswered: the step is sent again.
      lines_[static_cast<size_t>(key)].req = 0;
      AdvanceLine(ctx, key);
    }
    if (!k.owned && k.req == 0 && Wants(key) && Contends(key) && (!k.known.exists() || k.known.holder == Self())) {
      SendAcquire(ctx, key);
    }
  }
  if (config_.policy == Policy::kFair && owned_shards_ > Target()) Rebalance(ctx);
  if (config_.policy == Policy::kFair) EvenOut(ctx);
  // The fallback for watch events lost on the way, or watches a store
  // restart forgot: each key is watched again once per poll_interval.
  if (config_.poll_interval.ns() > 0 && !keys_.empty()) {
    const int64_t total = static_cast<int64_t>(keys_.size());
    const int64_t ticks = std::max<int64_t>(1, config_.poll_interval.ns() / config_.retry_interval.ns());
    for (int64_t n = (total + ticks - 1) / ticks; n > 0; --n) {
      if (config_.queue) {
        PollLine(ctx, poll_next_key_);
      } else {
        SendWatch(ctx, poll_next_key_);
      }
      poll_next_key_ = (poll_next_key_ + 1) % total;
    }
  }
}

void ShardReplica::OnWriteTick(sim::Context& ctx) {
  write_tick_timer_.Arm(ctx, config_.leader_work.write_interval);
  if (write_send_timer_.armed()) return;  // the last writes are still being prepared
  for (int64_t key = 0; key < config_.keys; ++key) {
    if (keys_[static_cast<size_t>(key)].owned) PrepareWrite(ctx, key);
  }
}

// Decides a write of `key`'s part under its token; it goes out with the
// batch being prepared, or write_duration from now.
void ShardReplica::PrepareWrite(sim::Context& ctx, int64_t key) {
  const Key& k = keys_[static_cast<size_t>(key)];
  Observe(ctx, key, vocab::WriteBegun{.token = k.token});
  writes_prepared_.emplace_back(key, k.token);
  if (!write_send_timer_.armed()) {
    write_send_timer_.Arm(ctx, config_.leader_work.write_duration);
    write_send_at_ = ctx.MonotonicNow() + config_.leader_work.write_duration;
  }
}

void ShardReplica::OnWriteSend(sim::Context& ctx) {
  // No re-check: the decision was made at write_begin; a pause in between
  // is what the fencing token is for.
  for (const auto& [key, token] : writes_prepared_) {
    const int64_t seq = ++writes_sent_;
    sim::Message write = ResourceWrite{.token = token, .seq = seq};
    write.Set(2, key);
    ctx.Send(config_.resource, write);
    Observe(ctx, key, vocab::WriteSent{.token = token, .seq = seq});
  }
  writes_prepared_.clear();
}

// ---- the lines ----

void ShardReplica::OpenSession(sim::Context& ctx) {
  session_req_ = next_req_++;
  session_sent_at_ = ctx.MonotonicNow();
  // It lives a TTL from the last ping, as each key lives a TTL from the last renewal.
  ctx.Send(config_.store, store::SessionOpenRequest{.req = session_req_, .timeout = config_.lease_ttl.ns()});
}

// The store ended the session, and with it every child of the replica's:
// it joins each line again at its end. Keys it owns stay owned, on their
// own leases.
void ShardReplica::LoseSession(sim::Context& ctx) {
  session_ = 0;
  for (Line& l : lines_) {
    l.step = kOut;
    l.seq = 0;
    l.req = 0;
    l.predecessor = -1;
    l.key_watched = false;
  }
  OpenSession(ctx);
}

void ShardReplica::OnSessionTick(sim::Context& ctx) {
  session_timer_.Arm(ctx, config_.renew_interval);
  if (session_ != 0) {
    ping_req_ = next_req_++;
    ctx.Send(config_.store, store::SessionPingRequest{.req = ping_req_, .session = session_});
  } else if (ctx.MonotonicNow() - session_sent_at_ > config_.request_timeout) {
    OpenSession(ctx);
  }
}

void ShardReplica::HandleSessionReply(sim::Context& ctx, const sim::Message& m) {
  const std::optional<store::SessionReply> reply = m.As<store::SessionReply>();
  if (!reply) return;
  if (reply->req == session_req_ && session_ == 0) {
    session_req_ = 0;
    if (reply->ok == 0) return;  // the session tick asks again
    session_ = reply->session;
    // Each replica joins from a different key, so that the lines' heads
    // (the keys' first owners) spread over the replicas.
    const int64_t start = config_.keys * static_cast<int64_t>(self_.value()) / std::max<int64_t>(1, config_.replicas);
    for (int64_t i = 0; i < config_.keys; ++i) AdvanceLine(ctx, (start + i) % config_.keys);
  } else if (reply->req == ping_req_ && reply->ok == 0 && reply->session == session_) {
    LoseSession(ctx);
  }
}

int64_t ShardReplica::NewLineRequest(sim::Context& ctx, int64_t key) {
  Line& l = lines_[static_cast<size_t>(key)];
  l.req = next_req_++;
  l.sent_at = ctx.MonotonicNow();
  line_of_req_[l.req] = Sent{key, l.sent_at};
  return l.req;
}

void ShardReplica::FindPredecessor(sim::Context& ctx, int64_t key) {
  Line& l = lines_[static_cast<size_t>(key)];
  l.step = kFinding;
  const int64_t req = NewLineRequest(ctx, key);
  ctx.Send(config_.store, store::PredecessorRequest{.req = req, .dir = key, .seq = l.seq});
}

void ShardReplica::AdvanceLine(sim::Context& ctx, int64_t key) {
  if (!config_.queue || session_ == 0 || IsMemberKey(key)) return;
  const Key& k = keys_[static_cast<size_t>(key)];
  Line& l = lines_[static_cast<size_t>(key)];
  if (l.req != 0) return;
  switch (l.step) {
    case kOut:
      l.step = kJoining;
      l.create_req = next_req_++;
      [[fallthrough]];
    case kJoining:
      // Sent again under the first id, so that the store answers with the
      // child the first made rather than a second one behind it.
      l.req = l.create_req;
      l.sent_at = ctx.MonotonicNow();
      line_of_req_[l.req] = Sent{key, l.sent_at};
      ctx.Send(config_.store,
               store::CreateRequest{.req = l.create_req, .dir = key, .holder = Self(), .session = session_});
      return;
    case kFinding: FindPredecessor(ctx, key); return;
    case kWatchingPredecessor: {
      const int64_t req = NewLineRequest(ctx, key);
      ctx.Send(config_.store, store::WatchDeleteRequest{.req = req, .dir = key, .seq = l.predecessor});
      return;
    }
    case kBehind: return;
    case kHead: {
      // An owner renews rather than watches; a replica the store names as
      // holder is taking the key already.
      if (k.owned || l.key_watched || (k.known.exists() && k.known.holder == Self())) return;
      const int64_t req = NewLineRequest(ctx, key);
      ctx.Send(config_.store, store::WatchOnceRequest{.req = req, .key = key});
      return;
    }
  }
}

void ShardReplica::HandleLineReply(sim::Context& ctx, int64_t key, const sim::Message& m) {
  Line& l = lines_[static_cast<size_t>(key)];
  if (m.Get("req") != l.req) {
    // An earlier step's late answer; a watch_once's still says what the store holds.
    if (const std::optional<store::Reply> reply = m.As<store::Reply>()) {
      HandleState(ctx, key, store::KeyStateOf(*reply), reply->rev);
    }
    return;
  }
  l.req = 0;
  switch (l.step) {
    case kJoining:
      if (!m.Is(store::CreateReply::kType)) return;
      if (m.Get("ok") == 0) {
        LoseSession(ctx);  // only a session gone makes a create on a valid directory fail
        return;
      }
      l.seq = m.Get("seq");
      FindPredecessor(ctx, key);
      return;
    case kFinding:
      if (!m.Is(store::ChildReply::kType)) return;
      if (m.Get("seq") < 0) {
        l.step = kHead;
        l.predecessor = -1;
        AdvanceLine(ctx, key);
        MaybeAcquire(ctx, key);
        return;
      }
      // Only the child just below is watched: its deletion wakes this replica alone.
      l.predecessor = m.Get("seq");
      l.step = kWatchingPredecessor;
      AdvanceLine(ctx, key);
      return;
    case kWatchingPredecessor:
      if (!m.Is(store::ChildReply::kType)) return;
      if (m.Get("ok") != 0) {
        l.step = kBehind;
      } else {
        FindPredecessor(ctx, key);  // gone already
      }
      return;
    case kHead:
      if (const std::optional<store::Reply> reply = m.As<store::Reply>()) {
        l.key_watched = true;
        HandleState(ctx, key, store::KeyStateOf(*reply), reply->rev);
        MaybeAcquire(ctx, key);
      }
      return;
    default: return;
  }
}

// A replica behind in a line hears nothing of the key: it learns who holds
// it by reading, as ZooKeeper clients read the lowest child. The poll is
// also the fallback for what a store restart forgets (watches, of keys and
// of children) and for notices lost on the way: each step that waits on a
// watch sets it again.
void ShardReplica::PollLine(sim::Context& ctx, int64_t key) {
  Line& l = lines_[static_cast<size_t>(key)];
  if (keys_[static_cast<size_t>(key)].owned) return;
  if (l.step != kHead) {
    const int64_t req = next_req_++;
    key_of_req_[req] = Sent{key, ctx.MonotonicNow()};
    ctx.Send(config_.store, store::GetRequest{.req = req, .key = key});
  }
  if (l.req != 0) return;
  if (l.step == kBehind) {
    // Watched again: refused if that child is gone (a notice lost), which
    // sends the replica looking for its predecessor anew.
    l.step = kWatchingPredecessor;
    AdvanceLine(ctx, key);
  } else if (l.step == kHead) {
    l.key_watched = false;
    AdvanceLine(ctx, key);
  }
}

void ShardReplica::ArmTimers(sim::Context& ctx) {
  renew_timer_.ArmAtEarliest(ctx, renew_due_);
  view_timer_.ArmAtEarliest(ctx, view_end_);
  timeout_timer_.ArmAtEarliest(ctx, timeouts_);
}

void ShardReplica::QueueTimer::ArmAtEarliest(sim::Context& ctx, const std::set<std::pair<int64_t, int64_t>>& due) {
  if (due.empty()) {
    timer.Cancel(ctx);
    return;
  }
  // Re-armed only when the earliest moves: most changes are behind it.
  const int64_t at_ns = due.begin()->first;
  if (timer.armed() && at_ns == armed_at_ns) return;
  timer.Arm(ctx, sim::TimeNs(std::max<int64_t>(0, at_ns - ctx.MonotonicNow().ns())));
  armed_at_ns = at_ns;
}

}  // namespace algorithms::shards
