// A replica of the shard-ownership workload (see shards.h): it competes for
// the store's keys 0..keys-1, one TTL lease per key, under its policy, and
// acts (writes the shard's part of the resource under the key's fencing
// token) only within each lease's view. Its steps that a mutant overrides
// (shards_mutants.cc) are protected and virtual; the reference holds no bug.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/epoch.h"
#include "electsim/algorithms/leader_work.h"
#include "electsim/algorithms/store.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/process.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms::shards {

inline constexpr int64_t kPpm = 1000000;

// Which keys a replica goes for (index into the option's choices).
enum class Policy : int64_t {
  kAll = 0,   // every free key, first come
  kCap = 1,   // free keys until it holds `cap`
  kFair = 2,  // free keys until it holds its share of the members it sees; it releases keys above the share
};

struct ShardsConfig {
  sim::NodeId store;
  sim::NodeId resource;
  uint32_t replicas = 0;
  int64_t keys = 0;
  Policy policy = Policy::kAll;
  int64_t cap = 0;
  sim::TimeNs lease_ttl;
  sim::TimeNs renew_interval;
  int64_t renew_jitter_ppm = 0;  // each renewal comes up to this fraction of renew_interval early
  sim::TimeNs request_timeout;
  sim::TimeNs retry_interval;
  sim::TimeNs poll_interval;  // 0: never re-read a key (watches only)
  int64_t safety_margin_ppm = kPpm;
  bool release_on_stepdown = true;
  bool writes = true;
  // How a replica waits for keys: false, it watches every key and races for
  // each one freed (every watcher wakes: the herd); true, it stands in each
  // key's line, a child of the key's directory under its session, and only
  // the head of a line watches the key and goes for it (ZooKeeper's lock
  // recipe, etcd's Mutex). Lines are for policy all only.
  bool queue = false;
  LeaderWorkConfig leader_work;

  sim::TimeNs lease_view() const {
    return sim::TimeNs(static_cast<int64_t>(static_cast<__int128>(lease_ttl.ns()) * safety_margin_ppm / kPpm));
  }
  // The member key of replica `replica` (policy fair): after the shards.
  int64_t member_key(uint32_t replica) const { return keys + replica; }
};

class ShardReplica : public sim::Process {
 public:
  ShardReplica(sim::NodeId self, ShardsConfig config);

  void OnStart(sim::Context& ctx) override;
  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& m) override;
  void OnTimer(sim::Context& ctx, sim::TimerId timer, uint64_t tag) override;

 protected:
  // ---- the steps a mutant overrides (shards_mutants.cc) ----

  // Gives key `key` back to the store after this replica stopped owning it;
  // `version` is the mod revision its own last write gave the key. The
  // reference deletes only that version: a successor's key, written since,
  // survives the delete.
  virtual void SendRelease(sim::Context& ctx, int64_t key, int64_t version);

  // ---- what the mutants use ----
  static constexpr int64_t kReleaseOp = 3;
  // A request of `key`'s line (it replaces the one in flight); returns its id.
  int64_t NewRequest(sim::Context& ctx, int64_t key, int64_t op);
  const ShardsConfig& config() const { return config_; }

 private:
  enum Op : int64_t { kNone = 0, kAcquire = 1, kRenew = 2, kRelease = kReleaseOp };
  // Where a replica stands in a key's line, and the request each step waits on.
  enum LineStep : int8_t {
    kOut,                  // not in it (no session yet, or the session was lost)
    kJoining,              // store.create sent
    kFinding,              // store.predecessor sent
    kWatchingPredecessor,  // store.watch_delete of the child below sent
    kBehind,               // waiting for that child's deletion
    kHead,                 // no child below: it watches the key (once) and goes for it
  };

  struct Key {
    // What the store last said, at store revision seen_rev.
    store::KeyState known;
    int64_t seen_rev = 0;
    bool heard = false;  // the store has answered about it since the start
    // Ownership: the lease this replica holds, and where its view starts
    // (the local send time of the latest request the store granted).
    bool owned = false;
    int64_t token = 0;  // the lease's create revision
    int64_t version = 0;
    sim::TimeNs view_start;
    sim::TimeNs renew_due;  // local time of the next renewal, while owned
    // The one request in flight for this key, if any.
    int64_t req = 0;
    int64_t op = kNone;
    sim::TimeNs sent_at;
  };
  // Its place in a key's line (config_.queue), under the current session;
  // kept apart from Key, so that replicas that watch every key do not pay
  // for it (10,000 keys x 100 replicas).
  struct Line {
    LineStep step = kOut;
    bool key_watched = false;  // head: a one-shot watch of the key is set
    int64_t seq = 0;           // its child's sequence number
    int64_t create_req = 0;    // a resent create names the first's id, and the store answers with the same child
    int64_t req = 0;           // the line's one request in flight
    sim::TimeNs sent_at;
    int64_t predecessor = -1;  // the child it waits behind
  };

  bool IsMemberKey(int64_t key) const { return key >= config_.keys; }
  int64_t Self() const { return static_cast<int64_t>(self_.value()); }
  // Sets `key`'s request in flight to `op`, keeping acquiring_.
  void SetOp(int64_t key, int64_t op);
  int64_t Target() const;
  bool Wants(int64_t key) const;

  // Watches every key and races for the wanted ones (not config_.queue).
  void StartRace(sim::Context& ctx);
  void HandleState(sim::Context& ctx, int64_t key, const store::KeyState& state, int64_t rev);
  void HandleAnswer(sim::Context& ctx, int64_t key, int64_t op, bool ok, const store::KeyState& state,
                    sim::TimeNs sent_at);
  void MaybeAcquire(sim::Context& ctx, int64_t key);
  void AcquireAnotherFreeKey(sim::Context& ctx);
  void SendAcquire(sim::Context& ctx, int64_t key);
  void SendReclaim(sim::Context& ctx, int64_t key, int64_t version);
  void SendRenew(sim::Context& ctx, int64_t key);
  void SendWatch(sim::Context& ctx, int64_t key);
  void Own(sim::Context& ctx, int64_t key, const store::KeyState& state, sim::TimeNs sent_at);
  void StepDown(sim::Context& ctx, int64_t key, bool release);
  void GiveBack(sim::Context& ctx, int64_t key);
  // Drops the writes of `key` being prepared.
  void AbandonWrites(int64_t key);
  void Rebalance(sim::Context& ctx);
  void CountHeld(int64_t holder, int64_t delta);
  void EvenOut(sim::Context& ctx);
  void ScheduleRenewal(sim::Context& ctx, int64_t key, sim::TimeNs from);
  sim::TimeNs ViewEnd(const Key& k) const { return k.view_start + config_.lease_view(); }
  void ArmTimers(sim::Context& ctx);
  void OnRenewDue(sim::Context& ctx);
  void OnViewCheck(sim::Context& ctx);
  void OnTimeouts(sim::Context& ctx);
  void OnRetry(sim::Context& ctx);
  void OnWriteTick(sim::Context& ctx);
  void OnWriteSend(sim::Context& ctx);
  void PrepareWrite(sim::Context& ctx, int64_t key);
  // ---- the lines (config_.queue) ----
  // Whether the replica goes for `key` now: always, or at the head of its line.
  bool Contends(int64_t key) const { return !config_.queue || lines_[static_cast<size_t>(key)].step == kHead; }
  void OpenSession(sim::Context& ctx);
  void LoseSession(sim::Context& ctx);
  void OnSessionTick(sim::Context& ctx);
  // Sends the line's next request, unless one is in flight.
  void AdvanceLine(sim::Context& ctx, int64_t key);
  int64_t NewLineRequest(sim::Context& ctx, int64_t key);
  void FindPredecessor(sim::Context& ctx, int64_t key);
  void HandleLineReply(sim::Context& ctx, int64_t key, const sim::Message& m);
  void HandleSessionReply(sim::Context& ctx, const sim::Message& m);
  void PollLine(sim::Context& ctx, int64_t key);

  void Observe(sim::Context& ctx, int64_t key, const sim::Observation& observation) {
    ctx.Observe(vocab::WithKey(observation, key));
  }

  sim::NodeId self_;
  ShardsConfig config_;
  DurableEpoch boots_;
  std::vector<Key> keys_;    // the shards, then (policy fair) the member keys
  std::vector<Line> lines_;  // per shard key, with config_.queue only
  int64_t owned_shards_ = 0;
  int64_t acquiring_ = 0;         // shards with an acquire in flight
  std::vector<int64_t> held_by_;  // per replica, the shards the store last showed it holding
  int64_t held_total_ = 0;        // their sum
  // Member keys the store shows, and those it has not answered about yet (policy fair).
  int64_t live_members_ = 0;
  int64_t next_req_ = 0;
  struct Sent {
    int64_t key;
    sim::TimeNs sent_at;
  };
  // Requests sent within the last TTL (answered ones go) -> their key.
  std::map<int64_t, Sent> key_of_req_;
  // Local-time queues of what is due, one timer each at the earliest.
  std::set<std::pair<int64_t, int64_t>> renew_due_;  // (local ns, key)
  std::set<std::pair<int64_t, int64_t>> view_end_;   // (local ns, key)
  std::set<std::pair<int64_t, int64_t>> timeouts_;   // (local ns, key)
  // A timer at the earliest entry of a queue.
  struct QueueTimer {
    Timer timer;
    int64_t armed_at_ns = 0;
    void ArmAtEarliest(sim::Context& ctx, const std::set<std::pair<int64_t, int64_t>>& due);
  };
  QueueTimer renew_timer_;
  QueueTimer view_timer_;
  QueueTimer timeout_timer_;
  Timer retry_timer_;
  Timer write_tick_timer_;
  Timer write_send_timer_;
  sim::TimeNs write_send_at_;  // when the writes being prepared go out (monotonic clock)
  int64_t poll_next_key_ = 0;  // round robin of the re-reads
  // The lines' session (config_.queue): its id once open, the open or ping
  // in flight, and the lines' requests in flight -> their key.
  int64_t session_ = 0;
  int64_t session_req_ = 0;
  sim::TimeNs session_sent_at_;
  int64_t ping_req_ = 0;
  Timer session_timer_;
  std::map<int64_t, Sent> line_of_req_;
  // Writes decided at the last tick and not yet sent: (key, token).
  std::vector<std::pair<int64_t, int64_t>> writes_prepared_;
  int64_t writes_sent_ = 0;
};

}  // namespace algorithms::shards
