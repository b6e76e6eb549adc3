// The virtual network decides each message's fate (lost, delayed, duplicated)
// from per-link settings, cuts and per-link random streams. It schedules
// nothing itself: the Simulator asks it and queues the deliveries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "electsim/sim/rng.h"
#include "electsim/sim/types.h"
#include "sim/link_table.h"

namespace sim {

// No single message may take longer than this (about 11.6 days): it keeps
// every arrival time far from int64 overflow.
inline constexpr TimeNs kMaxLatency = TimeNs::Seconds(1000000);

struct LatencyModel {
  enum class Kind : uint8_t {
    kFixed,        // always min_ns
    kUniform,      // uniform in [min_ns, max_ns]
    kExponential,  // min_ns + Exp(mean_ns), capped at max_ns: a light tail
    kPareto,       // Pareto(scale = min_ns, shape = alpha_milli/1000), capped at max_ns: a heavy tail
  };
  Kind kind = Kind::kFixed;
  TimeNs min_ns = TimeNs::Millis(1);
  TimeNs max_ns = TimeNs::Millis(1);
  TimeNs mean_ns = TimeNs::Millis(1);
  int64_t alpha_milli = 1500;

  static LatencyModel Fixed(TimeNs latency);
  static LatencyModel Uniform(TimeNs min, TimeNs max);
  static LatencyModel Exponential(TimeNs min, TimeNs mean, TimeNs cap);
  static LatencyModel Pareto(TimeNs scale, int64_t alpha_milli, TimeNs cap);

  absl::Status Validate() const;
  TimeNs Draw(Rng& rng) const;
  std::string Describe() const;
};

struct LinkConfig {
  LatencyModel latency;
  Probability drop;
  Probability duplicate;
  // Deliver in send order on this link (a TCP-like stream). Off by default:
  // random latency reorders messages, which protocols must survive.
  bool fifo = false;

  // A loss-free link with a fixed latency: the usual setting for exact tests.
  static LinkConfig Fixed(TimeNs latency) {
    LinkConfig link;
    link.latency = LatencyModel::Fixed(latency);
    return link;
  }

  absl::Status Validate() const { return latency.Validate(); }
};

// One direction of the link between two nodes.
struct Link {
  NodeId from;
  NodeId to;
  friend bool operator==(const Link&, const Link&) = default;
};

// The cuts one fault made, restored together: one-way links, or a
// partition (a layer of its own, held as a group per node: memory and time
// linear in nodes whatever the groups).
struct CutSet {
  std::vector<Link> links;
  uint64_t partition = 0;   // the partition layer, 0 for none
  uint64_t link_count = 0;  // directed links it cuts, as the trace reports them
};

// What the network decided for one send.
struct Routing {
  enum class Outcome : uint8_t { kDeliver, kLost, kPartitioned };
  Outcome outcome = Outcome::kDeliver;
  int copies = 0;     // 1, or 2 when duplicated
  TimeNs arrival[2];  // global arrival times of the copies
};

// The hashes of the link stream names, "network/link/<from>/<to>", of a
// cluster of up to LinkTable's kDirectNodes nodes, kept as they are first
// computed: a name's hash depends on the two ids alone, so a simulator keeps
// them across its runs (Simulator::Reset) instead of hashing the names of
// the links a run uses again (1% of a short Raft trial). Only the seed's
// part of a link's stream is derived each run.
class LinkStreamNames {
 public:
  // The hash of the name of link from -> to, among `node_count` nodes.
  uint64_t Hash(uint32_t node_count, NodeId from, NodeId to) {
    if (node_count > LinkTable<int>::kDirectNodes) return Compute(from, to);
    if (node_count != node_count_) {
      node_count_ = node_count;
      hashes_.assign(size_t{node_count} * node_count, 0);
    }
    uint64_t& hash = hashes_[size_t{from.value()} * node_count + to.value()];
    if (hash == 0) hash = Compute(from, to);  // a name that hashes to 0 is hashed every time
    return hash;
  }
  static uint64_t Compute(NodeId from, NodeId to);

 private:
  uint32_t node_count_ = 0;
  std::vector<uint64_t> hashes_;  // by from * node_count_ + to; 0 when not computed yet
};

class Network {
 public:
  // Set-up costs time and memory linear in nodes: settings and state are
  // kept only for the links that have them (see LinkTable). `names`, when
  // given, must outlive the network; it may be shared with later ones.
  Network(uint32_t node_count, uint64_t seed, LinkConfig default_link, LinkStreamNames* names = nullptr);

  uint32_t node_count() const { return node_count_; }

  absl::Status SetLink(NodeId from, NodeId to, const LinkConfig& config);
  absl::Status SetAllLinks(const LinkConfig& config);
  const LinkConfig& link(NodeId from, NodeId to) const {
    const LinkConfig* config = link_overrides_.Find(from, to);
    return config != nullptr ? *config : default_link_;
  }

  // Partitions into `groups`: cuts every link between nodes of different
  // groups. Nodes named in no group form one more group, except
  // `bystanders` named in no group: they stay reachable from every group
  // (shared services that each side can still reach). Partitions are layers
  // over the one-way cuts: a link carries messages only when no cut and no
  // partition in force separates its ends.
  absl::StatusOr<CutSet> Partition(const std::vector<std::vector<NodeId>>& groups,
                                   const std::vector<NodeId>& bystanders = {});
  // One-way cuts are counted per link, so overlapping faults compose: a link
  // carries messages again once every cut of it has been restored (or on HealAll).
  absl::Status Cut(const std::vector<Link>& links);
  absl::Status Restore(const std::vector<Link>& links);
  // Restores what one fault cut (a partition's layer, or its links).
  absl::Status Restore(const CutSet& cuts);
  // Removes every cut and partition.
  void HealAll();
  bool IsCut(NodeId from, NodeId to) const {
    if (cut_count_.Find(from, to) != nullptr) return true;
    return !partitions_.empty() && Separated(from, to);
  }

  // Decides a send at global time `now`. Consumes only the link's own stream.
  Routing Route(NodeId from, NodeId to, TimeNs now);

  absl::Status CheckNode(NodeId node) const;

 private:
  // What a link keeps once it has carried a message, in a cluster of up to
  // LinkTable::kDirectNodes nodes, where every link has a slot of its own.
  struct LinkState {
    // Derived on the link's first message: deriving n^2 streams up front cost
    // seconds and hundreds of MB for a few thousand nodes, most of whose links
    // never carry a message.
    Rng rng{0};
    TimeNs last_arrival;  // for FIFO links
  };
  // The same in a larger cluster, a third of the size. A link that has
  // carried one message keeps only how many draws it took from the link's
  // derived stream, and derives the stream again for its second message:
  // elections among thousands of nodes that all start at once use tens of
  // millions of links once each. From its second message on, a link's
  // stream is kept apart, in hot_streams_. The draws are the same either way.
  struct CompactLinkState {
    uint64_t stream = 0;  // 0: no message yet; 1 + the first's draws; kHotStream | index into hot_streams_
    TimeNs last_arrival;
  };
  static constexpr uint64_t kHotStream = uint64_t{1} << 63;
  // The draws of one send, from the link's stream.
  // Inline into Route, the path of every send in a small cluster; the
  // compact path of a large one keeps its own copy out of the way.
  [[gnu::always_inline]] static inline Routing RouteOn(Rng& rng, TimeNs& last_arrival, const LinkConfig& config,
                                                       TimeNs now);
  [[gnu::noinline]] Routing RouteCompact(NodeId from, NodeId to, const LinkConfig& config, TimeNs now);
  LinkState& StateOf(NodeId from, NodeId to) {
    bool inserted;
    LinkState& state = link_states_.FindOrInsert(from, to, &inserted);
    if (inserted) [[unlikely]]
      state.rng = DeriveLinkRng(from, to);
    return state;
  }
  Rng DeriveLinkRng(NodeId from, NodeId to) const;

  // Whether a partition in force puts `from` and `to` on different sides.
  bool Separated(NodeId from, NodeId to) const;

  // A partition in force: each node's group; kEveryGroup for a bystander.
  static constexpr uint32_t kEveryGroup = UINT32_MAX;
  struct PartitionLayer {
    uint64_t id;
    std::vector<uint32_t> group_of;
  };

  uint32_t node_count_;
  uint64_t seed_;
  LinkStreamNames* link_names_;  // may be null
  LinkConfig default_link_;
  LinkTable<LinkConfig> link_overrides_;  // links set one by one since the last SetAllLinks
  LinkTable<uint32_t> cut_count_;         // cuts in force, only for links that have some
  LinkTable<LinkState> link_states_;      // links that have carried a message (small clusters)
  bool compact_;                          // larger clusters: compact_states_ instead
  LinkTable<CompactLinkState> compact_states_;
  std::vector<Rng> hot_streams_;            // of links past their first message (larger clusters)
  std::vector<PartitionLayer> partitions_;  // in the order they were made
  uint64_t next_partition_ = 1;
};

}  // namespace sim
