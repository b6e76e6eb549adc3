#include "electsim/algorithms/store.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "electsim/algorithms/timer.h"

namespace algorithms::store {

namespace {

// "key/leader/holder" for the leader key, "key/7/holder" for others.
std::string StorageName(int64_t key, std::string_view field) {
  if (key == kLeaderKey) return absl::StrCat("key/leader/", std::string(field));
  return absl::StrCat("key/", key, "/", std::string(field));
}

class Store final : public sim::Process {
 public:
  void OnStart(sim::Context& ctx) override {
    revision_ = ctx.Load("rev").value_or(0);
    max_key_used_ = ctx.Load("max_key").value_or(-1);
    for (int64_t key = 0; key <= max_key_used_; ++key) {
      const int64_t create_rev = ctx.Load(StorageName(key, "create_rev")).value_or(0);
      if (create_rev == 0) continue;
      keys_[key] = Entry{
          .holder = ctx.Load(StorageName(key, "holder")).value_or(-1),
          .create_rev = create_rev,
          .mod_rev = ctx.Load(StorageName(key, "mod_rev")).value_or(create_rev),
          .expiry_local_ns = ctx.Load(StorageName(key, "expiry_local_ns")).value_or(0),
      };
    }
    // Leases that ran out while the store was down end now; nobody watches yet.
    ExpireDue(ctx);
    ArmExpiryTimer(ctx);
  }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& m) override {
    const bool is_request = m.Is(kStoreGet) || m.Is(kStorePutIfAbsent) || m.Is(kStoreCas) ||
                            m.Is(kStoreKeepAlive) || m.Is(kStoreDelete) || m.Is(kStoreWatch);
    if (!is_request) return;
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
    } else if (const auto cas = m.As<CasRequest>()) {
      ok = Cas(ctx, key, cas->version, cas->holder, sim::TimeNs(cas->ttl));
    } else if (const auto keep_alive = m.As<KeepAliveRequest>()) {
      ok = KeepAlive(ctx, key, keep_alive->create_rev, keep_alive->holder, sim::TimeNs(keep_alive->ttl));
    } else if (const auto del = m.As<DeleteRequest>()) {
      ok = DeleteIfVersion(ctx, key, del->version);
    } else if (m.Is(kStoreWatch)) {
      AddWatcher(key, from);
    }
    Reply(ctx, from, req, ok, StateOf(key));
    ArmExpiryTimer(ctx);
  }

  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t) override {
    if (!expiry_timer_.Fired(timer)) return;
    ExpireDue(ctx);
    ArmExpiryTimer(ctx);
  }

 private:
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
    e = Entry{.holder = holder, .create_rev = rev, .mod_rev = rev, .expiry_local_ns = ExpiryFor(ctx, ttl)};
    SaveEntry(ctx, key, e);
    Notify(ctx, key, EventKind::kPut);
    return true;
  }

  // Compare-and-swap on the version; also the lease renewal (the TTL restarts).
  bool Cas(sim::Context& ctx, int64_t key, int64_t version, int64_t holder, sim::TimeNs ttl) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.mod_rev != version) return false;
    Entry& e = it->second;
    e.holder = holder;
    e.mod_rev = NextRevision(ctx);
    e.expiry_local_ns = ExpiryFor(ctx, ttl);
    SaveEntry(ctx, key, e);
    Notify(ctx, key, EventKind::kPut);
    return true;
  }

  // Restarts the TTL of the lease `create_rev` held by `holder`; not a write.
  bool KeepAlive(sim::Context& ctx, int64_t key, int64_t create_rev, int64_t holder, sim::TimeNs ttl) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.create_rev != create_rev || it->second.holder != holder) return false;
    it->second.expiry_local_ns = ExpiryFor(ctx, ttl);
    ctx.Persist(StorageName(key, "expiry_local_ns"), it->second.expiry_local_ns);
    return true;
  }

  bool DeleteIfVersion(sim::Context& ctx, int64_t key, int64_t version) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.mod_rev != version) return false;
    Remove(ctx, key, EventKind::kDelete);
    return true;
  }

  // Removes every key whose TTL has run out on the monotonic clock (in key order,
  // so revisions are assigned deterministically). Each expiry is a write.
  void ExpireDue(sim::Context& ctx) {
    const int64_t now_ns = ctx.MonotonicNow().ns();
    std::vector<int64_t> due;
    for (const auto& [key, e] : keys_) {
      if (e.expiry_local_ns != 0 && now_ns >= e.expiry_local_ns) due.push_back(key);
    }
    for (int64_t key : due) Remove(ctx, key, EventKind::kExpire);
  }

  void Remove(sim::Context& ctx, int64_t key, EventKind kind) {
    NextRevision(ctx);
    keys_.erase(key);
    ctx.Persist(StorageName(key, "create_rev"), 0);
    Notify(ctx, key, kind);
  }

  // Keeps one timer at the earliest expiry so watchers hear of it promptly
  // rather than at the next request.
  void ArmExpiryTimer(sim::Context& ctx) {
    int64_t earliest_ns = 0;
    for (const auto& [key, e] : keys_) {
      if (e.expiry_local_ns != 0 && (earliest_ns == 0 || e.expiry_local_ns < earliest_ns)) {
        earliest_ns = e.expiry_local_ns;
      }
    }
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

  KeyState StateOf(int64_t key) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return KeyState{};
    return KeyState{.holder = it->second.holder, .create_rev = it->second.create_rev, .mod_rev = it->second.mod_rev};
  }

  void AddWatcher(int64_t key, sim::NodeId node) {
    std::vector<sim::NodeId>& list = watchers_[key];
    auto at = std::lower_bound(list.begin(), list.end(), node);
    if (at == list.end() || *at != node) list.insert(at, node);
  }

  void Notify(sim::Context& ctx, int64_t key, EventKind kind) {
    auto it = watchers_.find(key);
    if (it == watchers_.end()) return;
    const KeyState s = StateOf(key);
    const sim::Message event = Event{.key = key,
                                     .kind = static_cast<int64_t>(kind),
                                     .holder = s.holder,
                                     .create_rev = s.create_rev,
                                     .mod_rev = s.mod_rev,
                                     .rev = revision_};
    for (sim::NodeId watcher : it->second) ctx.Send(watcher, event);
  }

  void Reply(sim::Context& ctx, sim::NodeId to, int64_t req, bool ok, const KeyState& s) {
    ctx.Send(to, store::Reply{.req = req,
                              .ok = ok ? 1 : 0,
                              .holder = s.holder,
                              .create_rev = s.create_rev,
                              .mod_rev = s.mod_rev,
                              .rev = revision_});
  }

  // Durable state (mirrored in stable storage).
  int64_t revision_ = 0;                // global revision of the last write
  int64_t max_key_used_ = -1;           // highest key id ever written: bounds the reload scan
  std::map<int64_t, Entry> keys_;       // live keys only
  // Volatile state.
  std::map<int64_t, std::vector<sim::NodeId>> watchers_;  // per key, sorted, lost on restart
  Timer expiry_timer_;  // at the earliest TTL, so watchers hear of an expiry promptly
  int64_t expiry_deadline_ns_ = 0;
};

}  // namespace

std::unique_ptr<sim::Process> MakeStore() { return std::make_unique<Store>(); }

}  // namespace algorithms::store
