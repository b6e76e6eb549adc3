#include "checkers/shard_metrics.h"

#include <algorithm>

#include "electsim/vocab/vocabulary.h"

namespace checkers {
namespace {

// store.event's kinds of a removal (store.h's EventKind: kDelete, kExpire).
// Checkers do not include the algorithms' headers, so its fields (and
// store.child_deleted's) are read by name; only the store's sends are looked at.
constexpr int64_t kEventDelete = 2;
constexpr int64_t kEventExpire = 3;

// One watch notice of a removal named (a, b): a key and its revision, or a
// line's directory and child. The store sends a removal's notices back to
// back, so a notice naming another removal than the last starts a new one.
void CountNotice(int64_t a, int64_t b, int64_t& last_a, int64_t& last_b, int64_t& removals, int64_t& wakeups) {
  if (a != last_a || b != last_b) {
    ++removals;
    last_a = a;
    last_b = b;
  }
  ++wakeups;
}

sim::TimeNs Percentile(const std::vector<int64_t>& sorted_ns, int percent) {
  if (sorted_ns.empty()) return sim::TimeNs(0);
  // Nearest rank.
  const size_t rank = (sorted_ns.size() * static_cast<size_t>(percent) + 99) / 100;
  return sim::TimeNs(sorted_ns[std::max<size_t>(rank, 1) - 1]);
}

}  // namespace

ShardMetricsCollector::ShardMetricsCollector(uint32_t node_count, int64_t keys, sim::NodeId store,
                                             sim::TimeNs measured_from)
    : node_count_(node_count),
      keys_count_(keys),
      store_(store),
      measured_from_(measured_from),
      keys_(static_cast<size_t>(keys)),
      up_(node_count, true) {}

sim::TraceKinds ShardMetricsCollector::kinds() const {
  return {sim::TraceKind::kObserve, sim::TraceKind::kCrash, sim::TraceKind::kStart, sim::TraceKind::kSend,
          sim::TraceKind::kDeliver};
}

void ShardMetricsCollector::Lose(int64_t key, sim::TimeNs at) {
  Key& k = keys_[static_cast<size_t>(key)];
  k.owner = -1;
  k.lost_at = at;
}

void ShardMetricsCollector::OnRecord(const sim::TraceRecord& r) {
  const bool election_node = r.node.value() < node_count_;
  switch (r.kind) {
    case sim::TraceKind::kCrash:
      if (!election_node) return;
      up_[r.node.value()] = false;
      for (int64_t key = 0; key < keys_count_; ++key) {
        if (keys_[static_cast<size_t>(key)].owner == static_cast<int64_t>(r.node.value())) Lose(key, r.time);
      }
      return;
    case sim::TraceKind::kStart:
      if (election_node) up_[r.node.value()] = true;
      return;
    case sim::TraceKind::kDeliver: {
      if (r.node != store_ || r.time < measured_from_) return;
      const int64_t window = r.time.ns() / kStoreWindow.ns();
      if (window != window_) {
        window_ = window;
        window_requests_ = 0;
      }
      peak_window_requests_ = std::max(peak_window_requests_, ++window_requests_);
      return;
    }
    case sim::TraceKind::kSend: {
      if (r.node != store_ || r.payload == nullptr || r.time < measured_from_) return;
      if (r.payload->type_name() == "store.child_deleted") {
        // A waiter's line moved up: the deletion of a child wakes its watchers.
        CountNotice(r.payload->Get("dir"), r.payload->Get("seq"), last_child_dir_, last_child_seq_, removals_,
                    wakeups_);
        return;
      }
      if (r.payload->type_name() != "store.event") return;
      const sim::Payload& event = *r.payload;
      const int64_t kind = event.Get("kind");
      if (kind != kEventDelete && kind != kEventExpire) return;
      CountNotice(event.Get("key"), event.Get("rev"), last_removal_key_, last_removal_rev_, removals_, wakeups_);
      return;
    }
    case sim::TraceKind::kObserve: {
      if (!election_node || r.payload == nullptr || !r.payload->Is(vocab::kRoleChange)) return;
      const std::optional<int64_t> key = vocab::KeyOf(*r.payload);
      if (!key || *key < 0 || *key >= keys_count_) return;
      Key& k = keys_[static_cast<size_t>(*key)];
      const int64_t node = r.node.value();
      if (r.payload->Get(vocab::kFieldRole) == static_cast<int64_t>(vocab::Role::kLeader)) {
        if (k.lost_at && *k.lost_at >= measured_from_) gaps_ns_.push_back((r.time - *k.lost_at).ns());
        if (k.last_owner >= 0 && k.last_owner != node && r.time >= measured_from_) ++moved_;
        k.owner = node;
        k.last_owner = node;
        k.lost_at.reset();
      } else if (k.owner == node) {
        Lose(*key, r.time);
      }
      return;
    }
    default: return;
  }
}

ShardMetrics ShardMetricsCollector::Finish(sim::TimeNs end) {
  (void)end;  // every measure is closed by a record; kept for the collectors' common shape
  ShardMetrics m;
  m.keys = keys_count_;
  std::vector<int64_t> per_replica(node_count_, 0);
  for (const Key& k : keys_) {
    if (k.owner >= 0 && up_[static_cast<size_t>(k.owner)]) {
      ++m.owned_at_end;
      ++per_replica[static_cast<size_t>(k.owner)];
    } else if (k.lost_at) {
      ++m.unowned_at_end;
    }
  }
  bool first = true;
  for (uint32_t node = 0; node < node_count_; ++node) {
    if (!up_[node]) continue;
    m.min_per_replica = first ? per_replica[node] : std::min(m.min_per_replica, per_replica[node]);
    m.max_per_replica = first ? per_replica[node] : std::max(m.max_per_replica, per_replica[node]);
    first = false;
  }
  std::sort(gaps_ns_.begin(), gaps_ns_.end());
  m.ownership_gaps = static_cast<int64_t>(gaps_ns_.size());
  m.gap_p50 = Percentile(gaps_ns_, 50);
  m.gap_p99 = Percentile(gaps_ns_, 99);
  m.gap_max = gaps_ns_.empty() ? sim::TimeNs(0) : sim::TimeNs(gaps_ns_.back());
  m.keys_moved = moved_;
  m.peak_store_requests_per_s = peak_window_requests_ * (sim::TimeNs::Seconds(1).ns() / kStoreWindow.ns());
  m.removals = removals_;
  m.removal_wakeups = wakeups_;
  return m;
}

}  // namespace checkers
