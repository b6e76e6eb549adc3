// What a run of many owners over one store did (an algorithm that observes
// keys, such as shards), read off the trace: how long keys went without an
// owner, how many changed hands, how evenly the live replicas hold them, the
// store's busiest moment and how many watchers each deletion woke. Given a
// time to measure from (a fault's, in bench), every measure but the balance
// at the end counts only what happened from then on: a loss, a move, a
// removal, a request.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "electsim/sim/types.h"
#include "sim/trace.h"

namespace checkers {

struct ShardMetrics {
  int64_t keys = 0;                       // shards: keys 0..keys-1 (others, such as member keys, are left out)
  int64_t owned_at_end = 0;               // keys with a live owner when the run ended
  int64_t ownership_gaps = 0;             // times a key that had an owner was without one, then owned again
  sim::TimeNs gap_p50, gap_p99, gap_max;  // of those gaps
  int64_t unowned_at_end = 0;             // keys that lost their owner and had none when the run ended
  int64_t keys_moved = 0;                 // owner claims by another node than the key's previous owner
  int64_t min_per_replica = 0;            // keys held by the least and most loaded live replica at the end
  int64_t max_per_replica = 0;
  int64_t peak_store_requests_per_s = 0;  // requests delivered to the store in its busiest 100ms, x10
  int64_t removals = 0;                   // deletions and expiries (of keys, and of the children in waiters'
                                          // lines) a watcher was told of
  int64_t removal_wakeups = 0;            // watch notifications those sent
};

class ShardMetricsCollector final : public sim::TraceSink {
 public:
  ShardMetricsCollector(uint32_t node_count, int64_t keys, sim::NodeId store,
                        sim::TimeNs measured_from = sim::TimeNs(0));

  sim::TraceKinds kinds() const override;
  void OnRecord(const sim::TraceRecord& r) override;
  ShardMetrics Finish(sim::TimeNs end);

  static constexpr sim::TimeNs kStoreWindow = sim::TimeNs::Millis(100);

 private:
  struct Key {
    int64_t owner = -1;  // the node in the leader role for it, -1: none
    int64_t last_owner = -1;
    std::optional<sim::TimeNs> lost_at;  // when it last lost an owner, while it has none
  };
  void Lose(int64_t key, sim::TimeNs at);

  uint32_t node_count_;
  int64_t keys_count_;
  sim::NodeId store_;
  sim::TimeNs measured_from_;
  std::vector<Key> keys_;
  std::vector<bool> up_;
  std::vector<int64_t> gaps_ns_;
  int64_t moved_ = 0;
  int64_t window_ = -1;  // the 100ms window of the store's last request
  int64_t window_requests_ = 0;
  int64_t peak_window_requests_ = 0;
  int64_t removals_ = 0;
  int64_t wakeups_ = 0;
  int64_t last_removal_key_ = -1;
  int64_t last_removal_rev_ = -1;
  int64_t last_child_dir_ = -1;
  int64_t last_child_seq_ = -1;
};

}  // namespace checkers
