// A simulated linearizable store in the spirit of etcd's KV and lease API
// and of ZooKeeper's sessions and sequential nodes, reduced to what leader
// election needs. It is one process that handles requests one at a time in
// arrival order, so every operation takes effect at a single point:
// linearizable by construction. It is still an ordinary simulated node, so
// scenarios can slow, partition, pause or crash it; its data (keys, sessions,
// children) lives in stable storage (as a replicated store's would survive
// the loss of one replica), its watches do not.
//
// Keys (etcd's side; every field is an integer):
//   store.get            {req, key}                          -> store.reply
//   store.put_if_absent  {req, key, holder, ttl}             -> store.reply
//   store.cas            {req, key, version, holder, ttl}    -> store.reply
//   store.keep_alive     {req, key, create_rev, holder, ttl} -> store.reply
//   store.delete         {req, key, version}                 -> store.reply
//   store.delete_key     {req, key}                          -> store.reply
//   store.watch          {req, key}                          -> store.reply, then store.event on changes
//   store.watch_once     {req, key}                          -> store.reply, then one store.event
//   store.reply  {req, ok, holder, create_rev, mod_rev, rev}
//   store.event  {key, kind, holder, create_rev, mod_rev, rev}
// `rev` is the store's global revision when it answered; every successful
// write (and every expiry) increments it. A key's version is its mod_rev.
// keep_alive is etcd's LeaseKeepAlive: when the key still exists with that
// create_rev and holder, its TTL starts again; nothing is written, so no
// revision moves and no watcher hears of it. A cas on the key's own version
// also restarts the TTL (a Kubernetes Lease renewal), but as a write.
// delete_key is a plain delete, not conditioned on any version (etcd's
// Delete without a transaction, a Redis DEL): the unlock whose use by an old
// owner deletes its successor's lock. Whenever a request of one node deletes
// or overwrites a key another node holds, the store reports it
// (vocab::kKeyTaken), the evidence the owner_displaced checker judges.
// watch_once is the one-shot watch of a waiter that wants only the next
// change (etcd's Mutex waiting for one deletion, then cancelling): the next
// change sends it one event and clears the watch. A node that also watches
// the key for good hears of each change once.
// Replies and events always carry the key's current state, also on failure,
// so a failed put_if_absent doubles as a read. An absent key reads as
// holder -1 (vocab::kNobody), create_rev 0, mod_rev 0.
//
// Sessions and sequential children (ZooKeeper's side):
//   store.session_open  {req, timeout}             -> store.session_reply {req, ok, session, rev}
//   store.session_ping  {req, session}             -> store.session_reply (ok 0: the session is gone)
//   store.create        {req, dir, holder, session} -> store.create_reply {req, ok, seq, create_rev, rev}
//   store.predecessor   {req, dir, seq}            -> store.child_reply {req, ok, seq, holder, rev}
//   store.lowest        {req, dir}                 -> store.child_reply
//   store.watch_delete  {req, dir, seq}            -> store.child_reply, then one store.child_deleted
//   store.child_deleted {dir, seq, holder, rev}
// A session lives `timeout` on the store's clock from its last open or ping;
// then it expires, and with it every child it owns (ephemeral), each
// deletion a write. create makes a child of directory `dir` (0..kMaxKeyId)
// with the next sequence number of that directory (1, 2, ...; never reused,
// also across store restarts), owned by `session` (0: by none, persistent).
// A create repeated within a session (a duplicate, or a retry under the
// same req) answers with the child the first one made, as ZooKeeper's
// "protected" creates find theirs by a GUID in the name: a second child
// would wait in line for ever behind the first.
// predecessor answers with the live child of `dir` with the largest
// sequence number below `seq` (seq -1, holder -1: none), which is how a
// recipe finds the node to watch without listing every child; lowest, with
// the live child of smallest number, which is how it finds the leader (as
// ZooKeeper clients do from a listing). watch_delete
// sets a one-shot watch on one child: its deletion (or expiry) sends one
// store.child_deleted to each watcher and clears the watch; ok 0 when the
// child no longer exists (no watch is set). The sequence number of a child
// is a fencing token: it only grows.
//
// Capacity (StoreConfig): by default the store handles every request the
// instant it arrives, however many arrive. Given a service time, it serves
// one request at a time, each for that long on its own clock, in arrival
// order; the others wait in a FIFO queue, so load turns into latency (and
// the store stays linearizable: a request takes effect, expiry check,
// operation, reply and watch events, when its service ends). With a queue
// limit, a request arriving at a full queue is dropped unanswered, as an
// overloaded etcd sheds requests: its client times out and retries. The
// queue, like the watches, is lost with a crash. Every request type counts,
// key and session requests alike; the store's own expiries take no service.
// Given a metrics interval, the store observes its load over each interval
// (store.load, LoadReport). A slowdown (StoreConfig::slowdown_at) gives
// requests another service time for a while, as a compaction or a slow disk
// does; those waiting when it ends go at the usual pace.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "electsim/algorithms/options.h"
#include "electsim/sim/message.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms::store {

// Messages, each a typed record (see electsim/sim/message.h).
struct GetRequest {
  static constexpr sim::RecordType kType{"store.get", {"req", "key"}};
  int64_t req = 0;  // client's request id, echoed in the reply
  int64_t key = 0;  // key id, 0..kMaxKeyId
};
struct PutIfAbsentRequest {
  static constexpr sim::RecordType kType{"store.put_if_absent", {"req", "key", "holder", "ttl"}};
  int64_t req = 0;
  int64_t key = 0;
  int64_t holder = 0;  // the key's value (a node id for leases)
  int64_t ttl = 0;     // ns on the store's clock; <= 0: never expires
};
struct CasRequest {
  static constexpr sim::RecordType kType{"store.cas", {"req", "key", "version", "holder", "ttl"}};
  int64_t req = 0;
  int64_t key = 0;
  int64_t version = 0;  // expected mod_rev
  int64_t holder = 0;
  int64_t ttl = 0;
};
// create_rev doubles as the lease a keep_alive names (etcd's lease id).
struct KeepAliveRequest {
  static constexpr sim::RecordType kType{"store.keep_alive", {"req", "key", "create_rev", "holder", "ttl"}};
  int64_t req = 0;
  int64_t key = 0;
  int64_t create_rev = 0;
  int64_t holder = 0;
  int64_t ttl = 0;
};
struct DeleteRequest {
  static constexpr sim::RecordType kType{"store.delete", {"req", "key", "version"}};
  int64_t req = 0;
  int64_t key = 0;
  int64_t version = 0;  // expected mod_rev
};
struct DeleteKeyRequest {
  static constexpr sim::RecordType kType{"store.delete_key", {"req", "key"}};
  int64_t req = 0;
  int64_t key = 0;
};
struct WatchRequest {
  static constexpr sim::RecordType kType{"store.watch", {"req", "key"}};
  int64_t req = 0;
  int64_t key = 0;
};
struct WatchOnceRequest {
  static constexpr sim::RecordType kType{"store.watch_once", {"req", "key"}};
  int64_t req = 0;
  int64_t key = 0;
};
struct Reply {
  static constexpr sim::RecordType kType{"store.reply", {"req", "ok", "holder", "create_rev", "mod_rev", "rev"}};
  int64_t req = 0;
  int64_t ok = 0;  // 1 = the operation took effect
  int64_t holder = 0;
  int64_t create_rev = 0;
  int64_t mod_rev = 0;
  int64_t rev = 0;
};
struct Event {
  static constexpr sim::RecordType kType{"store.event", {"key", "kind", "holder", "create_rev", "mod_rev", "rev"}};
  int64_t key = 0;
  int64_t kind = 0;  // EventKind
  int64_t holder = 0;
  int64_t create_rev = 0;
  int64_t mod_rev = 0;
  int64_t rev = 0;
};
struct SessionOpenRequest {
  static constexpr sim::RecordType kType{"store.session_open", {"req", "timeout"}};
  int64_t req = 0;
  int64_t timeout = 0;  // ns on the store's clock, > 0
};
struct SessionPingRequest {
  static constexpr sim::RecordType kType{"store.session_ping", {"req", "session"}};
  int64_t req = 0;
  int64_t session = 0;
};
struct SessionReply {
  static constexpr sim::RecordType kType{"store.session_reply", {"req", "ok", "session", "rev"}};
  int64_t req = 0;
  int64_t ok = 0;       // 1: the session is open (open, or pinged in time)
  int64_t session = 0;  // the session's id (> 0)
  int64_t rev = 0;
};
struct CreateRequest {
  static constexpr sim::RecordType kType{"store.create", {"req", "dir", "holder", "session"}};
  int64_t req = 0;
  int64_t dir = 0;      // 0..kMaxKeyId
  int64_t holder = 0;   // the child's value (a node id for election recipes)
  int64_t session = 0;  // owner: the child goes with the session; 0: persistent
};
struct CreateReply {
  static constexpr sim::RecordType kType{"store.create_reply", {"req", "ok", "seq", "create_rev", "rev"}};
  int64_t req = 0;
  int64_t ok = 0;  // 0: a bad directory, or the session is gone
  int64_t seq = 0;
  int64_t create_rev = 0;
  int64_t rev = 0;
};
struct PredecessorRequest {
  static constexpr sim::RecordType kType{"store.predecessor", {"req", "dir", "seq"}};
  int64_t req = 0;
  int64_t dir = 0;
  int64_t seq = 0;
};
struct LowestRequest {
  static constexpr sim::RecordType kType{"store.lowest", {"req", "dir"}};
  int64_t req = 0;
  int64_t dir = 0;
};
struct WatchDeleteRequest {
  static constexpr sim::RecordType kType{"store.watch_delete", {"req", "dir", "seq"}};
  int64_t req = 0;
  int64_t dir = 0;
  int64_t seq = 0;
};
// The answer to predecessor, lowest and watch_delete: a child and its holder.
struct ChildReply {
  static constexpr sim::RecordType kType{"store.child_reply", {"req", "ok", "seq", "holder", "rev"}};
  int64_t req = 0;
  int64_t ok = 0;
  int64_t seq = 0;     // predecessor, lowest: the child found, -1 for none
  int64_t holder = 0;  // -1 for none
  int64_t rev = 0;
};
struct ChildDeleted {
  static constexpr sim::RecordType kType{"store.child_deleted", {"dir", "seq", "holder", "rev"}};
  int64_t dir = 0;
  int64_t seq = 0;
  int64_t holder = 0;
  int64_t rev = 0;
};

inline constexpr const sim::RecordType& kStoreGet = GetRequest::kType;
inline constexpr const sim::RecordType& kStorePutIfAbsent = PutIfAbsentRequest::kType;
inline constexpr const sim::RecordType& kStoreCas = CasRequest::kType;
inline constexpr const sim::RecordType& kStoreKeepAlive = KeepAliveRequest::kType;
inline constexpr const sim::RecordType& kStoreDelete = DeleteRequest::kType;
inline constexpr const sim::RecordType& kStoreDeleteKey = DeleteKeyRequest::kType;
inline constexpr const sim::RecordType& kStoreWatch = WatchRequest::kType;
inline constexpr const sim::RecordType& kStoreWatchOnce = WatchOnceRequest::kType;
inline constexpr const sim::RecordType& kStoreReply = Reply::kType;
inline constexpr const sim::RecordType& kStoreEvent = Event::kType;

// Keys are small integers (messages carry integers only); names appear only
// in stable storage, where they make a store's state readable.
inline constexpr int64_t kLeaderKey = 0;
inline constexpr int64_t kMaxKeyId = (int64_t{1} << 20) - 1;

enum class EventKind : int64_t {
  // The key was created or overwritten (put_if_absent, cas).
  kPut = 1,
  // The key was removed by delete_if_version.
  kDelete = 2,
  // The key's TTL ran out on the store's clock.
  kExpire = 3,
};

// A key's state as a reply or an event reports it.
struct KeyState {
  int64_t holder = -1;
  int64_t create_rev = 0;  // 0: the key does not exist
  int64_t mod_rev = 0;     // the key's version
  bool exists() const { return create_rev != 0; }
};
inline KeyState KeyStateOf(const Reply& reply) {
  return KeyState{.holder = reply.holder, .create_rev = reply.create_rev, .mod_rev = reply.mod_rev};
}
inline KeyState KeyStateOf(const Event& event) {
  return KeyState{.holder = event.holder, .create_rev = event.create_rev, .mod_rev = event.mod_rev};
}

// The store's load over one metrics interval, observed (not sent) at its
// end when StoreConfig::metrics_interval is set.
struct LoadReport {
  static constexpr sim::RecordType kType{"store.load", {"served", "queued", "dropped", "notified"}};
  int64_t served = 0;    // requests that took effect in the interval
  int64_t queued = 0;    // requests waiting at its end (the one in service not counted)
  int64_t dropped = 0;   // requests that found the queue full in the interval
  int64_t notified = 0;  // watch notifications sent (store.event, store.child_deleted)
};
inline constexpr const sim::RecordType& kStoreLoad = LoadReport::kType;

// Observed when a slowdown (StoreConfig::slowdown_at) starts and ends: the
// service time each request takes from then on.
struct ServiceTimeChange {
  static constexpr sim::RecordType kType{"store.service_time", {"service_time"}};
  int64_t service_time = 0;  // ns
};

// How much the store can do. The default is a store of infinite capacity
// that reports nothing: every request takes effect as it arrives.
struct StoreConfig {
  // How long one request occupies the store, on its monotonic clock; 0: no
  // time at all (infinite capacity).
  sim::TimeNs service_time = sim::TimeNs(0);
  // How many requests may wait for service (the one in service not
  // counted); 0: any number. Only with a service time.
  int64_t queue_limit = 0;
  // Every this long on the store's clock, from its start, a store.load
  // observation; 0: none (and no timer).
  sim::TimeNs metrics_interval = sim::TimeNs(0);
  // A slowdown, as a compaction or a slow disk makes one: from slowdown_at
  // on the store's monotonic clock, for slowdown_for, each request takes
  // slowdown_service_time (ServiceTimeChange records both ends). 0: none.
  sim::TimeNs slowdown_at = sim::TimeNs(0);
  sim::TimeNs slowdown_for = sim::TimeNs(0);
  sim::TimeNs slowdown_service_time = sim::TimeNs(0);
  // lease.grant and lease.end name their key (vocab::KeyOf), for clients
  // that hold many keys at once and whose checkers judge each key alone;
  // without it they name none, as a single-lease election's records do.
  bool report_keys = false;
};

// The store process.
std::unique_ptr<sim::Process> MakeStore(const StoreConfig& config);
// The default config: infinite capacity, no metrics.
std::unique_ptr<sim::Process> MakeStore();

// For an algorithm that lets scenarios set the store's capacity: the options
// store_service_time (duration), store_queue_limit (integer),
// store_metrics_interval (duration) and the slowdown's store_slowdown_at,
// store_slowdown_for and store_slowdown_service_time (durations), each
// defaulting to StoreConfig's default, to append to its own options; the
// config their values make; and their check (a slowdown names all three).
inline constexpr std::string_view kOptionStoreServiceTime = "store_service_time";
inline constexpr std::string_view kOptionStoreQueueLimit = "store_queue_limit";
inline constexpr std::string_view kOptionStoreMetricsInterval = "store_metrics_interval";
inline constexpr std::string_view kOptionStoreSlowdownAt = "store_slowdown_at";
inline constexpr std::string_view kOptionStoreSlowdownFor = "store_slowdown_for";
inline constexpr std::string_view kOptionStoreSlowdownServiceTime = "store_slowdown_service_time";
std::vector<OptionSpec> StoreOptions();
StoreConfig StoreConfigFrom(const OptionValues& options);
absl::Status ValidateStoreOptions(const OptionValues& options);

}  // namespace algorithms::store
