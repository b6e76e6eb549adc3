#include "electsim/algorithms/store.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "electsim/algorithms/timer.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms::store {

namespace {

// "key/leader/holder" for the leader key, "key/7/holder" for others.
std::string StorageName(int64_t key, std::string_view field) {
  if (key == kLeaderKey) return absl::StrCat("key/leader/", std::string(field));
  return absl::StrCat("key/", key, "/", std::string(field));
}
// "session/3/expiry_local_ns"; "dir/0/child/12/holder".
std::string SessionName(int64_t session, std::string_view field) {
  return absl::StrCat("session/", session, "/", std::string(field));
}
std::string ChildName(int64_t dir, int64_t seq, std::string_view field) {
  return absl::StrCat("dir/", dir, "/child/", seq, "/", std::string(field));
}

bool IsKeyRequest(const sim::Message& m) {
  return m.Is(kStoreGet) || m.Is(kStorePutIfAbsent) || m.Is(kStoreCas) || m.Is(kStoreKeepAlive) || m.Is(kStoreDelete) ||
         m.Is(kStoreDeleteKey) || m.Is(kStoreWatch) || m.Is(kStoreWatchOnce);
}
bool IsSessionRequest(const sim::Message& m) {
  return m.Is(SessionOpenRequest::kType) || m.Is(SessionPingRequest::kType) || m.Is(CreateRequest::kType) ||
         m.Is(PredecessorRequest::kType) || m.Is(LowestRequest::kType) || m.Is(WatchDeleteRequest::kType);
}

class Store final : public sim::Process {
 public:
  explicit Store(const StoreConfig& config) : config_(config) {}

  void OnStart(sim::Context& ctx) override {
    revision_ = ctx.Load("rev").value_or(0);
    max_key_used_ = ctx.Load("max_key").value_or(-1);
    for (int64_t key = 0; key <= max_key_used_; ++key) {
      const int64_t create_rev = ctx.Load(StorageName(key, "create_rev")).value_or(0);
      if (create_rev == 0) continue;
      Entry& e = keys_[key];
      e = Entry{
          .holder = ctx.Load(StorageName(key, "holder")).value_or(-1),
          .create_rev = create_rev,
          .mod_rev = ctx.Load(StorageName(key, "mod_rev")).value_or(create_rev),
      };
      SetExpiry(key, e, ctx.Load(StorageName(key, "expiry_local_ns")).value_or(0));
    }
    LoadSessionsAndChildren(ctx);
    // Leases and sessions that ran out while the store was down end now;
    // nobody watches yet.
    ExpireDue(ctx);
    ArmExpiryTimer(ctx);
    ExpireSessionsDue(ctx);
    ArmSessionTimer(ctx);
    if (config_.metrics_interval.ns() > 0) metrics_timer_.Arm(ctx, config_.metrics_interval);
    ArmSlowdownTimer(ctx);
  }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& m) override {
    if (!IsKeyRequest(m) && !IsSessionRequest(m)) return;
    if (ServiceTime(ctx).ns() <= 0 && !in_service_) {
      Serve(ctx, from, m);
      return;
    }
    if (!in_service_) {
      BeginService(ctx, Pending{.from = from, .message = m});
    } else if (config_.queue_limit > 0 && static_cast<int64_t>(waiting_.size()) >= config_.queue_limit) {
      ++load_.dropped;  // unanswered: the client's timeout tells it
    } else {
      waiting_.push_back(Pending{.from = from, .message = m});
    }
  }

  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) override {
    if (expiry_timer_.Fired(timer)) {
      ExpireDue(ctx);
      ArmExpiryTimer(ctx);
    } else if (session_timer_.Fired(timer)) {
      ExpireSessionsDue(ctx);
      ArmSessionTimer(ctx);
    } else if (service_timer_.Fired(timer)) {
      EndService(ctx);
    } else if (slowdown_timer_.Fired(timer)) {
      ctx.Observe(ServiceTimeChange{.service_time = ServiceTime(ctx).ns()});
      ArmSlowdownTimer(ctx);
    } else if (metrics_timer_.Fired(timer)) {
      load_.queued = static_cast<int64_t>(waiting_.size());
      ctx.Observe(load_);
      load_ = LoadReport{};
      metrics_timer_.Arm(ctx, config_.metrics_interval);
    }
  }

 private:
  // A request waiting for service, or in it.
  struct Pending {
    sim::NodeId from;
    sim::Message message;
  };

  void BeginService(sim::Context& ctx, const Pending& request) {
    in_service_ = true;
    in_service_request_ = request;
    service_timer_.Arm(ctx, ServiceTime(ctx));
  }

  bool InSlowdown(sim::TimeNs now) const {
    return config_.slowdown_at.ns() > 0 && now >= config_.slowdown_at &&
           now < config_.slowdown_at + config_.slowdown_for;
  }
  sim::TimeNs ServiceTime(sim::Context& ctx) const {
    return InSlowdown(ctx.MonotonicNow()) ? config_.slowdown_service_time : config_.service_time;
  }
  // At the slowdown's next end still ahead, if any.
  void ArmSlowdownTimer(sim::Context& ctx) {
    if (config_.slowdown_at.ns() <= 0) return;
    const sim::TimeNs now = ctx.MonotonicNow();
    const sim::TimeNs end = config_.slowdown_at + config_.slowdown_for;
    if (now < config_.slowdown_at) {
      slowdown_timer_.Arm(ctx, config_.slowdown_at - now);
    } else if (now < end) {
      slowdown_timer_.Arm(ctx, end - now);
    }
  }

  // The request in service takes effect now; the next in line starts.
  void EndService(sim::Context& ctx) {
    in_service_ = false;
    const Pending done = in_service_request_;
    Serve(ctx, done.from, done.message);
    if (waiting_.empty()) return;
    const Pending next = waiting_.front();
    waiting_.pop_front();
    BeginService(ctx, next);
  }

  // One request takes effect: its operation, its reply, its watch events.
  void Serve(sim::Context& ctx, sim::NodeId from, const sim::Message& m) {
    ++load_.served;
    if (IsSessionRequest(m)) {
      HandleSessionRequest(ctx, from, m);
      return;
    }
    // Every request starts with the request id and the key.
    const int64_t req = m.value(0);
    const int64_t key = m.value(1);
    if (key < 0 || key > kMaxKeyId) {
      Reply(ctx, from, req, false, KeyState{});
      return;
    }
    // Lazy expiry: a request must never see a lease the store's clock has ended.
    ExpireDue(ctx);
    bool ok = true;
    if (const auto put = m.As<PutIfAbsentRequest>()) {
      ok = PutIfAbsent(ctx, key, put->holder, sim::TimeNs(put->ttl));
      if (ok) ReportGrant(ctx, key, req, put->ttl);
    } else if (const auto cas = m.As<CasRequest>()) {
      ok = Cas(ctx, from, key, cas->version, cas->holder, sim::TimeNs(cas->ttl));
      if (ok) ReportGrant(ctx, key, req, cas->ttl);
    } else if (const auto keep_alive = m.As<KeepAliveRequest>()) {
      ok = KeepAlive(ctx, key, keep_alive->create_rev, keep_alive->holder, sim::TimeNs(keep_alive->ttl));
      if (ok) ReportGrant(ctx, key, req, keep_alive->ttl);
    } else if (const auto del = m.As<DeleteRequest>()) {
      ok = DeleteIfVersion(ctx, from, key, del->version);
    } else if (m.Is(kStoreDeleteKey)) {
      ok = DeleteAny(ctx, from, key);
    } else if (m.Is(kStoreWatch)) {
      AddWatcher(watchers_[key], from);
    } else if (m.Is(kStoreWatchOnce)) {
      AddWatcher(once_watchers_[key], from);
    }
    Reply(ctx, from, req, ok, StateOf(key));
    ArmExpiryTimer(ctx);
  }

  struct Entry {
    int64_t holder = -1;
    int64_t create_rev = 0;
    int64_t mod_rev = 0;
    int64_t expiry_local_ns = 0;  // 0: no TTL
  };

  bool PutIfAbsent(sim::Context& ctx, int64_t key, int64_t holder, sim::TimeNs ttl) {
    if (keys_.count(key) != 0) return false;
    const int64_t rev = NextRevision(ctx);
    Entry& e = keys_[key];
    e = Entry{.holder = holder, .create_rev = rev, .mod_rev = rev};
    SetExpiry(key, e, ExpiryFor(ctx, ttl));
    SaveEntry(ctx, key, e);
    Notify(ctx, key, EventKind::kPut);
    return true;
  }

  // Compare-and-swap on the version; also the lease renewal (the TTL restarts).
  bool Cas(sim::Context& ctx, sim::NodeId from, int64_t key, int64_t version, int64_t holder, sim::TimeNs ttl) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.mod_rev != version) return false;
    Entry& e = it->second;
    ReportIfTaken(ctx, from, key, e, vocab::kKeyTakenByOverwrite);
    if (e.holder != holder) ReportEnd(ctx, key, e);  // the lease goes to another holder
    e.holder = holder;
    e.mod_rev = NextRevision(ctx);
    SetExpiry(key, e, ExpiryFor(ctx, ttl));
    SaveEntry(ctx, key, e);
    Notify(ctx, key, EventKind::kPut);
    return true;
  }

  // Restarts the TTL of the lease `create_rev` held by `holder`; not a write.
  bool KeepAlive(sim::Context& ctx, int64_t key, int64_t create_rev, int64_t holder, sim::TimeNs ttl) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.create_rev != create_rev || it->second.holder != holder) return false;
    SetExpiry(key, it->second, ExpiryFor(ctx, ttl));
    ctx.Persist(StorageName(key, "expiry_local_ns"), it->second.expiry_local_ns);
    return true;
  }

  bool DeleteIfVersion(sim::Context& ctx, sim::NodeId from, int64_t key, int64_t version) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.mod_rev != version) return false;
    ReportIfTaken(ctx, from, key, it->second, vocab::kKeyTakenByDelete);
    Remove(ctx, key, EventKind::kDelete);
    return true;
  }

  bool DeleteAny(sim::Context& ctx, sim::NodeId from, int64_t key) {
    auto it = keys_.find(key);
    if (it == keys_.end()) return false;
    ReportIfTaken(ctx, from, key, it->second, vocab::kKeyTakenByDelete);
    Remove(ctx, key, EventKind::kDelete);
    return true;
  }

  // A request of `from` is about to delete or overwrite `e`: evidence for
  // owner_displaced when another node holds it.
  static void ReportIfTaken(sim::Context& ctx, sim::NodeId from, int64_t key, const Entry& e, int64_t how) {
    if (e.holder == static_cast<int64_t>(from.value())) return;
    ctx.Observe(vocab::KeyTaken{.key = key, .holder = e.holder, .token = e.create_rev, .by = from.value(), .how = how});
  }

  // The one place a key's expiry changes, so that the index stays exact.
  void SetExpiry(int64_t key, Entry& e, int64_t expiry_local_ns) {
    if (e.expiry_local_ns != 0) expiries_.erase({e.expiry_local_ns, key});
    e.expiry_local_ns = expiry_local_ns;
    if (expiry_local_ns != 0) expiries_.emplace(expiry_local_ns, key);
  }

  // Removes every key whose TTL has run out on the monotonic clock (in key order,
  // so revisions are assigned deterministically). Each expiry is a write.
  void ExpireDue(sim::Context& ctx) {
    const int64_t now_ns = ctx.MonotonicNow().ns();
    std::vector<int64_t> due;
    for (auto it = expiries_.begin(); it != expiries_.end() && it->first <= now_ns; ++it) due.push_back(it->second);
    std::sort(due.begin(), due.end());
    for (int64_t key : due) Remove(ctx, key, EventKind::kExpire);
  }

  void Remove(sim::Context& ctx, int64_t key, EventKind kind) {
    auto it = keys_.find(key);
    ReportEnd(ctx, key, it->second);
    NextRevision(ctx);
    SetExpiry(key, it->second, 0);
    keys_.erase(it);
    ctx.Persist(StorageName(key, "create_rev"), 0);
    Notify(ctx, key, kind);
  }

  // Keeps one timer at the earliest expiry so watchers hear of it promptly
  // rather than at the next request.
  void ArmExpiryTimer(sim::Context& ctx) {
    const int64_t earliest_ns = expiries_.empty() ? 0 : expiries_.begin()->first;
    if (expiry_timer_.armed() && earliest_ns == expiry_deadline_ns_) return;
    expiry_timer_.Cancel(ctx);
    if (earliest_ns == 0) return;
    const int64_t delay_ns = std::max<int64_t>(0, earliest_ns - ctx.MonotonicNow().ns());
    expiry_timer_.Arm(ctx, sim::TimeNs(delay_ns));
    expiry_deadline_ns_ = earliest_ns;
  }

  int64_t NextRevision(sim::Context& ctx) {
    ++revision_;
    ctx.Persist("rev", revision_);
    return revision_;
  }

  static int64_t ExpiryFor(sim::Context& ctx, sim::TimeNs ttl) {
    return ttl.ns() > 0 ? (ctx.MonotonicNow() + ttl).ns() : 0;
  }

  void SaveEntry(sim::Context& ctx, int64_t key, const Entry& e) {
    if (key > max_key_used_) {
      max_key_used_ = key;
      ctx.Persist("max_key", max_key_used_);
    }
    ctx.Persist(StorageName(key, "holder"), e.holder);
    ctx.Persist(StorageName(key, "mod_rev"), e.mod_rev);
    ctx.Persist(StorageName(key, "expiry_local_ns"), e.expiry_local_ns);
    // Written last: a non-zero create_rev is what marks the key as present.
    ctx.Persist(StorageName(key, "create_rev"), e.create_rev);
  }

  // What a lease checker reads (vocab::kLeaseGrant, kLeaseEnd): a key with a
  // TTL is a lease, its create revision the lease's token.
  // With StoreConfig::report_keys, each names its key.
  void ReportGrant(sim::Context& ctx, int64_t key, int64_t req, int64_t ttl_ns) {
    const Entry& e = keys_.at(key);
    if (ttl_ns > 0) ReportLease(ctx, key, vocab::LeaseGrant(e.create_rev, e.holder, req, sim::TimeNs(ttl_ns)));
  }
  void ReportEnd(sim::Context& ctx, int64_t key, const Entry& e) {
    if (e.expiry_local_ns != 0) ReportLease(ctx, key, vocab::LeaseEnd(e.create_rev, e.holder));
  }
  void ReportLease(sim::Context& ctx, int64_t key, const sim::Observation& observation) {
    ctx.Observe(config_.report_keys ? vocab::WithKey(observation, key) : observation);
  }

  KeyState StateOf(int64_t key) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return KeyState{};
    return KeyState{.holder = it->second.holder, .create_rev = it->second.create_rev, .mod_rev = it->second.mod_rev};
  }

  static void AddWatcher(std::vector<sim::NodeId>& list, sim::NodeId node) {
    auto at = std::lower_bound(list.begin(), list.end(), node);
    if (at == list.end() || *at != node) list.insert(at, node);
  }

  void Notify(sim::Context& ctx, int64_t key, EventKind kind) {
    auto forever = watchers_.find(key);
    auto once = once_watchers_.find(key);
    if (forever == watchers_.end() && once == once_watchers_.end()) return;
    const KeyState s = StateOf(key);
    const sim::Message event = Event{.key = key,
                                     .kind = static_cast<int64_t>(kind),
                                     .holder = s.holder,
                                     .create_rev = s.create_rev,
                                     .mod_rev = s.mod_rev,
                                     .rev = revision_};
    static const std::vector<sim::NodeId> kNone;
    const std::vector<sim::NodeId>& always = forever == watchers_.end() ? kNone : forever->second;
    for (sim::NodeId watcher : always) ctx.Send(watcher, event);
    load_.notified += static_cast<int64_t>(always.size());
    if (once == once_watchers_.end()) return;
    // Both lists are sorted: a node in both hears once.
    for (sim::NodeId watcher : once->second) {
      if (std::binary_search(always.begin(), always.end(), watcher)) continue;
      ctx.Send(watcher, event);
      ++load_.notified;
    }
    once_watchers_.erase(once);
  }

  void Reply(sim::Context& ctx, sim::NodeId to, int64_t req, bool ok, const KeyState& s) {
    ctx.Send(to, store::Reply{.req = req,
                              .ok = ok ? 1 : 0,
                              .holder = s.holder,
                              .create_rev = s.create_rev,
                              .mod_rev = s.mod_rev,
                              .rev = revision_});
  }

  // ---- sessions and sequential children ----

  struct Session {
    int64_t timeout_ns = 0;
    int64_t expiry_local_ns = 0;
  };
  struct Child {
    int64_t holder = -1;
    int64_t session = 0;  // 0: persistent
    int64_t create_rev = 0;
    int64_t create_req = 0;  // the request that made it, with the session: a repeat finds it
  };
  struct Directory {
    int64_t next_seq = 1;
    std::map<int64_t, Child> children;  // live children, by sequence number
    // The live children a session owns, by (session, create_req): what a
    // repeated create finds. One at most per pair: a repeat makes none.
    std::map<std::pair<int64_t, int64_t>, int64_t> by_request;
  };

  void LoadSessionsAndChildren(sim::Context& ctx) {
    next_session_ = ctx.Load("session/next").value_or(1);
    for (int64_t id = 1; id < next_session_; ++id) {
      const int64_t expiry_ns = ctx.Load(SessionName(id, "expiry_local_ns")).value_or(0);
      if (expiry_ns == 0) continue;  // expired, or never opened
      sessions_[id] =
          Session{.timeout_ns = ctx.Load(SessionName(id, "timeout_ns")).value_or(0), .expiry_local_ns = expiry_ns};
      session_expiries_.emplace(expiry_ns, id);
    }
    max_dir_used_ = ctx.Load("max_dir").value_or(-1);
    for (int64_t dir = 0; dir <= max_dir_used_; ++dir) {
      const int64_t next_seq = ctx.Load(absl::StrCat("dir/", dir, "/next_seq")).value_or(1);
      if (next_seq == 1) continue;
      Directory& directory = dirs_[dir];
      directory.next_seq = next_seq;
      for (int64_t seq = 1; seq < next_seq; ++seq) {
        const int64_t create_rev = ctx.Load(ChildName(dir, seq, "create_rev")).value_or(0);
        if (create_rev == 0) continue;
        AddChild(dir, seq,
                 Child{.holder = ctx.Load(ChildName(dir, seq, "holder")).value_or(-1),
                       .session = ctx.Load(ChildName(dir, seq, "session")).value_or(0),
                       .create_rev = create_rev,
                       .create_req = ctx.Load(ChildName(dir, seq, "create_req")).value_or(0)});
      }
    }
  }

  void HandleSessionRequest(sim::Context& ctx, sim::NodeId from, const sim::Message& m) {
    // Lazy expiry: a request must never see a session the store's clock has ended.
    ExpireSessionsDue(ctx);
    if (const auto open = m.As<SessionOpenRequest>()) {
      int64_t session = 0;
      if (open->timeout > 0) {
        session = next_session_++;
        ctx.Persist("session/next", next_session_);
        ctx.Persist(SessionName(session, "timeout_ns"), open->timeout);
        Touch(ctx, session, open->timeout);
      }
      ctx.Send(from, SessionReply{.req = open->req, .ok = session != 0, .session = session, .rev = revision_});
    } else if (const auto ping = m.As<SessionPingRequest>()) {
      auto it = sessions_.find(ping->session);
      const bool open = it != sessions_.end();
      if (open) Touch(ctx, ping->session, it->second.timeout_ns);
      ctx.Send(from, SessionReply{.req = ping->req, .ok = open, .session = ping->session, .rev = revision_});
    } else if (const auto create = m.As<CreateRequest>()) {
      const bool ok = ValidDir(create->dir) && (create->session == 0 || sessions_.count(create->session) != 0);
      CreateReply reply{.req = create->req, .ok = ok, .seq = 0, .create_rev = 0, .rev = 0};
      if (ok) {
        Directory& directory = dirs_[create->dir];
        const auto repeat = create->session == 0 ? directory.by_request.end()
                                                 : directory.by_request.find({create->session, create->req});
        if (repeat != directory.by_request.end()) {
          reply.seq = repeat->second;
          reply.create_rev = directory.children.at(repeat->second).create_rev;
        } else {
          reply.seq = directory.next_seq++;
          reply.create_rev = NextRevision(ctx);
          AddChild(create->dir, reply.seq,
                   Child{.holder = create->holder,
                         .session = create->session,
                         .create_rev = reply.create_rev,
                         .create_req = create->req});
          SaveChild(ctx, create->dir, reply.seq, directory);
        }
      }
      reply.rev = revision_;
      ctx.Send(from, reply);
    } else if (const auto query = m.As<PredecessorRequest>()) {
      ChildReply reply{.req = query->req, .ok = ValidDir(query->dir), .seq = -1, .holder = -1, .rev = revision_};
      if (auto dir = dirs_.find(query->dir); dir != dirs_.end()) {
        const auto& children = dir->second.children;
        if (auto below = children.lower_bound(query->seq); below != children.begin()) {
          --below;
          reply.seq = below->first;
          reply.holder = below->second.holder;
        }
      }
      ctx.Send(from, reply);
    } else if (const auto query = m.As<LowestRequest>()) {
      ChildReply reply{.req = query->req, .ok = ValidDir(query->dir), .seq = -1, .holder = -1, .rev = revision_};
      if (auto dir = dirs_.find(query->dir); dir != dirs_.end() && !dir->second.children.empty()) {
        reply.seq = dir->second.children.begin()->first;
        reply.holder = dir->second.children.begin()->second.holder;
      }
      ctx.Send(from, reply);
    } else if (const auto watch = m.As<WatchDeleteRequest>()) {
      const Child* child = FindChild(watch->dir, watch->seq);
      if (child != nullptr) {
        std::vector<sim::NodeId>& list = child_watchers_[{watch->dir, watch->seq}];
        if (std::find(list.begin(), list.end(), from) == list.end()) list.push_back(from);
      }
      ctx.Send(from, ChildReply{.req = watch->req,
                                .ok = child != nullptr,
                                .seq = watch->seq,
                                .holder = child != nullptr ? child->holder : -1,
                                .rev = revision_});
    }
    ArmSessionTimer(ctx);
  }

  static bool ValidDir(int64_t dir) { return dir >= 0 && dir <= kMaxKeyId; }

  const Child* FindChild(int64_t dir, int64_t seq) const {
    auto d = dirs_.find(dir);
    if (d == dirs_.end()) return nullptr;
    auto c = d->second.children.find(seq);
    return c == d->second.children.end() ? nullptr : &c->second;
  }

  // The session lives `timeout_ns` from now on the store's clock.
  void Touch(sim::Context& ctx, int64_t session, int64_t timeout_ns) {
    Session& s = sessions_[session];
    s.timeout_ns = timeout_ns;
    if (s.expiry_local_ns != 0) session_expiries_.erase({s.expiry_local_ns, session});
    s.expiry_local_ns = (ctx.MonotonicNow() + sim::TimeNs(timeout_ns)).ns();
    session_expiries_.emplace(s.expiry_local_ns, session);
    ctx.Persist(SessionName(session, "expiry_local_ns"), s.expiry_local_ns);
  }

  void SaveChild(sim::Context& ctx, int64_t dir, int64_t seq, const Directory& directory) {
    if (dir > max_dir_used_) {
      max_dir_used_ = dir;
      ctx.Persist("max_dir", max_dir_used_);
    }
    ctx.Persist(absl::StrCat("dir/", dir, "/next_seq"), directory.next_seq);
    const Child& child = directory.children.at(seq);
    ctx.Persist(ChildName(dir, seq, "holder"), child.holder);
    ctx.Persist(ChildName(dir, seq, "session"), child.session);
    ctx.Persist(ChildName(dir, seq, "create_req"), child.create_req);
    // Written last: a non-zero create_rev is what marks the child as present.
    ctx.Persist(ChildName(dir, seq, "create_rev"), child.create_rev);
  }

  // Ends every session whose time has run out (in id order) and deletes the
  // children it owned (in directory, then sequence order): each deletion is
  // a write and tells that child's watchers, once.
  void ExpireSessionsDue(sim::Context& ctx) {
    const int64_t now_ns = ctx.MonotonicNow().ns();
    std::vector<int64_t> due;
    for (auto it = session_expiries_.begin(); it != session_expiries_.end() && it->first <= now_ns; ++it) {
      due.push_back(it->second);
    }
    std::sort(due.begin(), due.end());
    for (int64_t id : due) {
      session_expiries_.erase({sessions_.at(id).expiry_local_ns, id});
      sessions_.erase(id);
      ctx.Persist(SessionName(id, "expiry_local_ns"), 0);
      auto owned = owned_children_.find(id);
      if (owned == owned_children_.end()) continue;
      const std::set<std::pair<int64_t, int64_t>> children = std::move(owned->second);
      owned_children_.erase(owned);
      for (const auto& [dir, seq] : children) DeleteChild(ctx, dir, seq);
    }
  }

  // Indexes a live child by its owner, for the repeat check and for expiry.
  void AddChild(int64_t dir, int64_t seq, const Child& child) {
    Directory& directory = dirs_[dir];
    directory.children[seq] = child;
    if (child.session == 0) return;
    directory.by_request.emplace(std::make_pair(child.session, child.create_req), seq);
    owned_children_[child.session].emplace(dir, seq);
  }

  void DeleteChild(sim::Context& ctx, int64_t dir, int64_t seq) {
    Directory& directory = dirs_.at(dir);
    const Child child = directory.children.at(seq);
    directory.children.erase(seq);
    if (child.session != 0) {
      if (auto mine = directory.by_request.find({child.session, child.create_req});
          mine != directory.by_request.end() && mine->second == seq) {
        directory.by_request.erase(mine);
      }
      if (auto owned = owned_children_.find(child.session); owned != owned_children_.end()) {
        owned->second.erase({dir, seq});
      }
    }
    NextRevision(ctx);
    ctx.Persist(ChildName(dir, seq, "create_rev"), 0);
    auto watchers = child_watchers_.find({dir, seq});
    if (watchers == child_watchers_.end()) return;
    const sim::Message deleted = ChildDeleted{.dir = dir, .seq = seq, .holder = child.holder, .rev = revision_};
    for (sim::NodeId watcher : watchers->second) ctx.Send(watcher, deleted);
    load_.notified += static_cast<int64_t>(watchers->second.size());
    child_watchers_.erase(watchers);  // one-shot, as ZooKeeper's watches are
  }

  // One timer at the earliest session expiry, so that a crashed client's
  // children go (and its watchers hear of it) without waiting for a request.
  void ArmSessionTimer(sim::Context& ctx) {
    const int64_t earliest_ns = session_expiries_.empty() ? 0 : session_expiries_.begin()->first;
    if (session_timer_.armed() && earliest_ns == session_deadline_ns_) return;
    session_timer_.Cancel(ctx);
    if (earliest_ns == 0) return;
    session_timer_.Arm(ctx, sim::TimeNs(std::max<int64_t>(0, earliest_ns - ctx.MonotonicNow().ns())));
    session_deadline_ns_ = earliest_ns;
  }

  const StoreConfig config_;
  // Durable state (mirrored in stable storage).
  int64_t revision_ = 0;           // global revision of the last write
  int64_t max_key_used_ = -1;      // highest key id ever written: bounds the reload scan
  std::map<int64_t, Entry> keys_;  // live keys only
  // (expiry_local_ns, key) of every live key with a TTL, kept by SetExpiry:
  // what is due, and the earliest expiry, without a scan of every key.
  std::set<std::pair<int64_t, int64_t>> expiries_;
  int64_t next_session_ = 1;
  std::map<int64_t, Session> sessions_;  // open sessions, by id
  // (expiry_local_ns, id) of every open session: what is due, and the earliest.
  std::set<std::pair<int64_t, int64_t>> session_expiries_;
  // Per session, the (dir, seq) of the live children it owns.
  std::map<int64_t, std::set<std::pair<int64_t, int64_t>>> owned_children_;
  int64_t max_dir_used_ = -1;  // highest directory ever written: bounds the reload scan
  std::map<int64_t, Directory> dirs_;
  // Volatile state.
  std::map<int64_t, std::vector<sim::NodeId>> watchers_;       // per key, sorted, lost on restart
  std::map<int64_t, std::vector<sim::NodeId>> once_watchers_;  // per key, sorted, cleared by the next change
  // Per child, the nodes watching for its deletion, in the order they asked.
  std::map<std::pair<int64_t, int64_t>, std::vector<sim::NodeId>> child_watchers_;
  Timer expiry_timer_;  // at the earliest TTL, so watchers hear of an expiry promptly
  int64_t expiry_deadline_ns_ = 0;
  Timer session_timer_;  // at the earliest session expiry
  int64_t session_deadline_ns_ = 0;
  // Capacity: the request in service, those waiting in arrival order, and
  // the load since the last metrics observation.
  bool in_service_ = false;
  Pending in_service_request_;
  std::deque<Pending> waiting_;
  Timer service_timer_;   // when the request in service takes effect
  Timer metrics_timer_;   // every metrics interval
  Timer slowdown_timer_;  // at the slowdown's start and end
  LoadReport load_;
};

}  // namespace

std::unique_ptr<sim::Process> MakeStore(const StoreConfig& config) { return std::make_unique<Store>(config); }
std::unique_ptr<sim::Process> MakeStore() { return MakeStore(StoreConfig{}); }

std::vector<OptionSpec> StoreOptions() {
  const StoreConfig defaults;
  std::vector<OptionSpec> specs = {
      OptionSpec::Duration(std::string(kOptionStoreServiceTime), defaults.service_time,
                           "how long the store takes over each request, one at a time in arrival order; the others "
                           "wait (0: no time, infinite capacity)"),
      OptionSpec::Int(std::string(kOptionStoreQueueLimit), defaults.queue_limit, 0, int64_t{1} << 30,
                      "requests that may wait for the store, beside the one it serves; one more is dropped "
                      "unanswered (0: any number)"),
      OptionSpec::Duration(std::string(kOptionStoreMetricsInterval), defaults.metrics_interval,
                           "every this long the store observes its load (store.load: requests served, queued, "
                           "dropped, watch notifications sent; 0: never)"),
  };
  specs.push_back(OptionSpec::Duration(std::string(kOptionStoreSlowdownAt), defaults.slowdown_at,
                                       "when, on the store's clock, a slowdown starts (0: none)"));
  specs.push_back(
      OptionSpec::Duration(std::string(kOptionStoreSlowdownFor), defaults.slowdown_for, "how long the slowdown lasts"));
  specs.push_back(OptionSpec::Duration(std::string(kOptionStoreSlowdownServiceTime), defaults.slowdown_service_time,
                                       "how long each request takes during the slowdown (as store_service_time)"));
  // The load a scenario puts on the store, not a choice of the algorithm's.
  for (OptionSpec& spec : specs) spec.swarmed = false;
  return specs;
}

StoreConfig StoreConfigFrom(const OptionValues& options) {
  return StoreConfig{.service_time = options.Duration(kOptionStoreServiceTime),
                     .queue_limit = options.Int(kOptionStoreQueueLimit),
                     .metrics_interval = options.Duration(kOptionStoreMetricsInterval),
                     .slowdown_at = options.Duration(kOptionStoreSlowdownAt),
                     .slowdown_for = options.Duration(kOptionStoreSlowdownFor),
                     .slowdown_service_time = options.Duration(kOptionStoreSlowdownServiceTime)};
}

absl::Status ValidateStoreOptions(const OptionValues& options) {
  const StoreConfig c = StoreConfigFrom(options);
  if (c.metrics_interval.ns() > 0 && c.metrics_interval < sim::TimeNs::Millis(1)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(kOptionStoreMetricsInterval),
                                                   "\": expected 0s (no load records) or at least 1ms"));
  }
  if (c.slowdown_at.ns() > 0 && (c.slowdown_for.ns() <= 0 || c.slowdown_service_time.ns() <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(kOptionStoreSlowdownAt), "\" is set: expected \"",
                                                   std::string(kOptionStoreSlowdownFor), "\" and \"",
                                                   std::string(kOptionStoreSlowdownServiceTime), "\" above 0s too"));
  }
  return absl::OkStatus();
}

}  // namespace algorithms::store
