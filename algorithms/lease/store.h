// A simulated linearizable key-value store in the spirit of etcd's KV and
// lease API, reduced to what lease-based leader election needs. It is one
// process that handles requests one at a time in arrival order, so every
// operation takes effect at a single point: linearizable by construction.
// It is still an ordinary simulated node, so scenarios can slow, partition,
// pause or crash it; its data lives in stable storage (as a replicated store's
// would survive the loss of one replica), its watches do not.
//
// Protocol (every field is an integer; see the k*Field names below):
//   store.get            {req, key}                          -> store.reply
//   store.put_if_absent  {req, key, holder, ttl}             -> store.reply
//   store.cas            {req, key, version, holder, ttl}    -> store.reply
//   store.keep_alive     {req, key, create_rev, holder, ttl} -> store.reply
//   store.delete         {req, key, version}                 -> store.reply
//   store.watch          {req, key}                          -> store.reply, then store.event on changes
//   store.reply  {req, ok, holder, create_rev, mod_rev, rev}
//   store.event  {key, kind, holder, create_rev, mod_rev, rev}
// `rev` is the store's global revision when it answered; every successful
// write (and every expiry) increments it. A key's version is its mod_rev.
// keep_alive is etcd's LeaseKeepAlive: when the key still exists with that
// create_rev and holder, its TTL starts again; nothing is written, so no
// revision moves and no watcher hears of it. A cas on the key's own version
// also restarts the TTL (a Kubernetes Lease renewal), but as a write.
// Replies and events always carry the key's current state, also on failure,
// so a failed put_if_absent doubles as a read. An absent key reads as
// holder -1 (vocab::kNobody), create_rev 0, mod_rev 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "sim/payload.h"
#include "sim/process.h"
#include "sim/types.h"

namespace algorithms::lease {

// Message types.
inline constexpr std::string_view kStoreGet = "store.get";
inline constexpr std::string_view kStorePutIfAbsent = "store.put_if_absent";
inline constexpr std::string_view kStoreCas = "store.cas";
inline constexpr std::string_view kStoreKeepAlive = "store.keep_alive";
inline constexpr std::string_view kStoreDelete = "store.delete";
inline constexpr std::string_view kStoreWatch = "store.watch";
inline constexpr std::string_view kStoreReply = "store.reply";
inline constexpr std::string_view kStoreEvent = "store.event";

// Message fields.
inline constexpr std::string_view kFieldReq = "req";            // client's request id, echoed in the reply
inline constexpr std::string_view kFieldKey = "key";            // key id, 0..kMaxKeyId
inline constexpr std::string_view kFieldHolder = "holder";      // the key's value (a node id for leases)
inline constexpr std::string_view kFieldTtl = "ttl";            // ns on the store's clock; <= 0: never expires
inline constexpr std::string_view kFieldVersion = "version";    // expected mod_rev (cas, delete)
// create_rev doubles as the lease a keep_alive names (etcd's lease id).
inline constexpr std::string_view kFieldOk = "ok";              // 1 = the operation took effect
inline constexpr std::string_view kFieldCreateRev = "create_rev";
inline constexpr std::string_view kFieldModRev = "mod_rev";
inline constexpr std::string_view kFieldRev = "rev";
inline constexpr std::string_view kFieldKind = "kind";          // EventKind of a store.event

// Keys are small integers (messages carry integers only); names appear only
// in stable storage, where they make a store's state readable.
inline constexpr int64_t kLeaderKey = 0;
inline constexpr int64_t kMaxKeyId = 1023;

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
KeyState KeyStateOf(const sim::Message& reply_or_event);

// Request builders, so clients and tests spell the protocol one way.
sim::Message GetRequest(int64_t req, int64_t key);
sim::Message PutIfAbsentRequest(int64_t req, int64_t key, int64_t holder, sim::TimeNs ttl);
sim::Message CasRequest(int64_t req, int64_t key, int64_t version, int64_t holder, sim::TimeNs ttl);
sim::Message KeepAliveRequest(int64_t req, int64_t key, int64_t create_rev, int64_t holder, sim::TimeNs ttl);
sim::Message DeleteRequest(int64_t req, int64_t key, int64_t version);
sim::Message WatchRequest(int64_t req, int64_t key);

// The store process.
std::unique_ptr<sim::Process> MakeStore();

}  // namespace algorithms::lease
