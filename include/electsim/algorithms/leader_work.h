// The work a leader does with its leadership: periodic writes to the shared
// resource, each carrying the leader's fencing token. Shared by all
// algorithms so that their leaders behave identically towards the resource.
#pragma once

#include <cstdint>
#include <functional>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/timer.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms {

// Resource protocol messages. A write may name a key (an owner of many
// shards writes each shard's part under that shard's token): the resource
// then fences each key on its own, and the ack and its records carry the key.
struct ResourceWrite {
  static constexpr sim::RecordType kType{"resource.write", {"token", "seq", "key"}};
  int64_t token = 0;
  int64_t seq = 0;
};
struct ResourceAck {
  static constexpr sim::RecordType kType{"resource.ack", {"token", "seq", "accepted", "highest", "key"}};
  int64_t token = 0;
  int64_t seq = 0;
  int64_t accepted = 0;  // 1 when the write was accepted
  int64_t highest = 0;   // the highest token accepted so far
};
inline constexpr const sim::RecordType& kResourceWrite = ResourceWrite::kType;
inline constexpr const sim::RecordType& kResourceAck = ResourceAck::kType;

class LeaderWork {
 public:
  LeaderWork(sim::NodeId resource, LeaderWorkConfig config) : resource_(resource), config_(config) {}

  // Starts writing with `token` (stops any earlier run).
  void Begin(sim::Context& ctx, sim::FencingToken token);
  // Stops writing; a write being prepared is abandoned.
  void End(sim::Context& ctx);
  bool active() const { return active_; }

  // Returns true when `timer` was LeaderWork's (and handles it). `may_act`
  // is asked before each write; returning false skips that write (the
  // leader's own view says it no longer may act). `wrote`, when given, runs
  // right after each write has gone to the resource (Raft appends the write
  // to its log there).
  bool OnTimer(sim::Context& ctx, sim::TimerId timer, const std::function<bool()>& may_act,
               const std::function<void()>& wrote = nullptr);

  uint64_t writes_sent() const { return writes_sent_; }

 private:
  sim::NodeId resource_;
  LeaderWorkConfig config_;
  bool active_ = false;
  sim::FencingToken token_;
  Timer tick_timer_;  // the next write is due
  Timer send_timer_;  // the write being prepared goes out
  uint64_t writes_sent_ = 0;
};

// The shared resource of the fencing-token argument (a blob store): accepts
// writes, and when `fencing` is on rejects any token lower than the highest
// it has accepted. A token equal to the highest is accepted from any writer,
// as Kleppmann's storage does: it trusts the token to name one holder, which
// Bully's and Ring's epochs do not after a partition. With `exclusive_token`
// as well, it remembers who wrote the highest token and rejects that token
// from anyone else: the first writer keeps it until a higher token comes. Its
// highest token and that token's writer live in stable storage.
std::unique_ptr<sim::Process> MakeSharedResource(bool fencing, bool exclusive_token = false);

}  // namespace algorithms
