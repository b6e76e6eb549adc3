#include "sim/network.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"

namespace sim {

LatencyModel LatencyModel::Fixed(TimeNs latency) {
  LatencyModel m;
  m.kind = Kind::kFixed;
  m.min_ns = m.max_ns = m.mean_ns = latency;
  return m;
}

LatencyModel LatencyModel::Uniform(TimeNs min, TimeNs max) {
  LatencyModel m;
  m.kind = Kind::kUniform;
  m.min_ns = min;
  m.max_ns = max;
  m.mean_ns = TimeNs((min.ns() + max.ns()) / 2);
  return m;
}

LatencyModel LatencyModel::Exponential(TimeNs min, TimeNs mean, TimeNs cap) {
  LatencyModel m;
  m.kind = Kind::kExponential;
  m.min_ns = min;
  m.mean_ns = mean;
  m.max_ns = cap;
  return m;
}

LatencyModel LatencyModel::Pareto(TimeNs scale, int64_t alpha_milli, TimeNs cap) {
  LatencyModel m;
  m.kind = Kind::kPareto;
  m.min_ns = scale;
  m.alpha_milli = alpha_milli;
  m.max_ns = cap;
  m.mean_ns = scale;
  return m;
}

absl::Status LatencyModel::Validate() const {
  if (min_ns > kMaxLatency || (kind != Kind::kFixed && max_ns > kMaxLatency) || mean_ns > kMaxLatency) {
    return absl::InvalidArgumentError(absl::StrCat("latency must be at most ", kMaxLatency.ns() / 1000000000, "s"));
  }
  if (min_ns < TimeNs(0)) {
    return absl::InvalidArgumentError(absl::StrCat("latency min must be >= 0ns, got ", min_ns.ns(), "ns"));
  }
  if (kind != Kind::kFixed && max_ns < min_ns) {
    return absl::InvalidArgumentError(
        absl::StrCat("latency max (", max_ns.ns(), "ns) must be >= min (", min_ns.ns(), "ns)"));
  }
  if (kind == Kind::kExponential && mean_ns <= TimeNs(0)) {
    return absl::InvalidArgumentError("exponential latency mean must be > 0ns");
  }
  if (kind == Kind::kPareto && (alpha_milli <= 0 || min_ns <= TimeNs(0))) {
    return absl::InvalidArgumentError("pareto latency needs scale > 0ns and shape alpha > 0");
  }
  return absl::OkStatus();
}

TimeNs LatencyModel::Draw(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed: return min_ns;
    case Kind::kUniform: return TimeNs(rng.Between(min_ns.ns(), max_ns.ns()));
    case Kind::kExponential: return std::min(max_ns, min_ns + rng.Exponential(mean_ns));
    case Kind::kPareto: return std::min(max_ns, rng.Pareto(min_ns, alpha_milli));
  }
  return min_ns;
}

std::string LatencyModel::Describe() const {
  switch (kind) {
    case Kind::kFixed: return fmt::format("fixed {}ns", min_ns.ns());
    case Kind::kUniform: return fmt::format("uniform [{}ns, {}ns]", min_ns.ns(), max_ns.ns());
    case Kind::kExponential:
      return fmt::format("exponential min {}ns mean {}ns cap {}ns", min_ns.ns(), mean_ns.ns(), max_ns.ns());
    case Kind::kPareto:
      return fmt::format("pareto scale {}ns alpha {}.{:03} cap {}ns", min_ns.ns(), alpha_milli / 1000,
                         alpha_milli % 1000, max_ns.ns());
  }
  return "?";
}

Network::Network(uint32_t node_count, uint64_t seed, LinkConfig default_link, LinkStreamNames* names)
    : node_count_(node_count),
      seed_(seed),
      link_names_(names),
      default_link_(default_link),
      link_overrides_(node_count),
      cut_count_(node_count),
      link_states_(node_count),
      compact_(node_count > LinkTable<LinkState>::kDirectNodes),
      compact_states_(node_count) {}

uint64_t LinkStreamNames::Compute(NodeId from, NodeId to) {
  // "network/link/<from>/<to>", hashed without building the name.
  static const uint64_t kPrefixHash = HashName("network/link/");
  const uint64_t from_hash = ExtendNameHash(ExtendNameHashDecimal(kPrefixHash, from.value()), "/");
  return ExtendNameHashDecimal(from_hash, to.value());
}

Rng Network::DeriveLinkRng(NodeId from, NodeId to) const {
  const uint64_t name_hash =
      link_names_ != nullptr ? link_names_->Hash(node_count_, from, to) : LinkStreamNames::Compute(from, to);
  return Rng::ForStreamHash(seed_, name_hash);
}

absl::Status Network::CheckNode(NodeId node) const {
  if (node.value() >= node_count_) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown node ", node.value(), " (nodes are 0..", node_count_ - 1, ")"));
  }
  return absl::OkStatus();
}

absl::Status Network::SetLink(NodeId from, NodeId to, const LinkConfig& config) {
  if (auto s = CheckNode(from); !s.ok()) return s;
  if (auto s = CheckNode(to); !s.ok()) return s;
  if (auto s = config.Validate(); !s.ok()) return s;
  link_overrides_.FindOrInsert(from, to) = config;
  return absl::OkStatus();
}

absl::Status Network::SetAllLinks(const LinkConfig& config) {
  if (auto s = config.Validate(); !s.ok()) return s;
  default_link_ = config;
  link_overrides_.Clear();
  return absl::OkStatus();
}

absl::StatusOr<CutSet> Network::Partition(const std::vector<std::vector<NodeId>>& groups,
                                          const std::vector<NodeId>& bystanders) {
  // Group number per node; unlisted nodes share the extra group `groups.size()`,
  // unlisted bystanders are in every group (kEveryGroup).
  PartitionLayer layer{next_partition_, std::vector<uint32_t>(node_count_, static_cast<uint32_t>(groups.size()))};
  for (NodeId node : bystanders) {
    if (auto s = CheckNode(node); !s.ok()) return s;
    layer.group_of[node.value()] = kEveryGroup;
  }
  std::vector<bool> seen(node_count_, false);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (NodeId node : groups[g]) {
      if (auto s = CheckNode(node); !s.ok()) return s;
      if (seen[node.value()]) {
        return absl::InvalidArgumentError(absl::StrCat("node ", node.value(), " is in more than one partition group"));
      }
      seen[node.value()] = true;
      layer.group_of[node.value()] = static_cast<uint32_t>(g);
    }
  }
  // The directed links between different groups: every ordered pair of the
  // nodes in some group, less the pairs within one.
  std::vector<uint64_t> sizes(groups.size() + 1, 0);
  uint64_t grouped = 0;
  for (uint32_t group : layer.group_of) {
    if (group == kEveryGroup) continue;
    ++sizes[group];
    ++grouped;
  }
  uint64_t within = 0;
  for (uint64_t size : sizes) within += size * size;
  CutSet cuts{.partition = next_partition_++, .link_count = grouped * grouped - within};
  partitions_.push_back(std::move(layer));
  return cuts;
}

bool Network::Separated(NodeId from, NodeId to) const {
  if (from.value() >= node_count_ || to.value() >= node_count_) return false;
  for (const PartitionLayer& layer : partitions_) {
    const uint32_t a = layer.group_of[from.value()];
    const uint32_t b = layer.group_of[to.value()];
    if (a != b && a != kEveryGroup && b != kEveryGroup) return true;
  }
  return false;
}

absl::Status Network::Restore(const CutSet& cuts) {
  if (auto s = Restore(cuts.links); !s.ok()) return s;
  // Already healed: nothing left to restore.
  std::erase_if(partitions_, [&](const PartitionLayer& layer) { return layer.id == cuts.partition; });
  return absl::OkStatus();
}

absl::Status Network::Cut(const std::vector<Link>& links) {
  for (const Link& link : links) {
    if (auto s = CheckNode(link.from); !s.ok()) return s;
    if (auto s = CheckNode(link.to); !s.ok()) return s;
  }
  for (const Link& link : links) ++cut_count_.FindOrInsert(link.from, link.to);
  return absl::OkStatus();
}

absl::Status Network::Restore(const std::vector<Link>& links) {
  for (const Link& link : links) {
    if (auto s = CheckNode(link.from); !s.ok()) return s;
    if (auto s = CheckNode(link.to); !s.ok()) return s;
  }
  for (const Link& link : links) {
    uint32_t* count = cut_count_.Find(link.from, link.to);
    if (count == nullptr) continue;  // already healed: nothing left to restore
    if (--*count == 0) cut_count_.Erase(link.from, link.to);
  }
  return absl::OkStatus();
}

void Network::HealAll() {
  cut_count_.Clear();
  partitions_.clear();
}

inline Routing Network::RouteOn(Rng& rng, TimeNs& last_arrival, const LinkConfig& config, TimeNs now) {
  Routing routing;
  if (rng.Chance(config.drop)) {
    routing.outcome = Routing::Outcome::kLost;
    return routing;
  }
  routing.copies = rng.Chance(config.duplicate) ? 2 : 1;
  for (int copy = 0; copy < routing.copies; ++copy) {
    // Latencies are bounded by kMaxLatency, so this cannot overflow before
    // the end of representable time; past it, saturate.
    TimeNs arrival = now > TimeNs::Max() - kMaxLatency ? TimeNs::Max() : now + config.latency.Draw(rng);
    if (config.fifo) arrival = std::max(arrival, last_arrival);
    last_arrival = std::max(last_arrival, arrival);
    routing.arrival[copy] = arrival;
  }
  return routing;
}

Routing Network::Route(NodeId from, NodeId to, TimeNs now) {
  Routing routing;
  if (IsCut(from, to)) {
    routing.outcome = Routing::Outcome::kPartitioned;
    return routing;
  }
  const LinkConfig& config = link(from, to);
  if (compact_) [[unlikely]]
    return RouteCompact(from, to, config, now);
  LinkState& state = StateOf(from, to);
  return RouteOn(state.rng, state.last_arrival, config, now);
}

Routing Network::RouteCompact(NodeId from, NodeId to, const LinkConfig& config, TimeNs now) {
  CompactLinkState& state = compact_states_.FindOrInsert(from, to);
  if ((state.stream & kHotStream) != 0) {
    return RouteOn(hot_streams_[state.stream & ~kHotStream], state.last_arrival, config, now);
  }
  Rng rng = DeriveLinkRng(from, to);
  if (state.stream != 0) {
    // The second message: past the first's draws, the stream is kept.
    for (uint64_t draw = 1; draw < state.stream; ++draw) rng.Next();
    hot_streams_.push_back(rng);
    state.stream = kHotStream | (hot_streams_.size() - 1);
    return RouteOn(hot_streams_.back(), state.last_arrival, config, now);
  }
  const Routing routing = RouteOn(rng, state.last_arrival, config, now);
  // The first: how many draws it took, by stepping a fresh stream to where
  // this one stands (a send draws a handful).
  Rng fresh = DeriveLinkRng(from, to);
  uint64_t draws = 0;
  while (!(fresh == rng)) {
    fresh.Next();
    ++draws;
    SIM_CHECK(draws < (uint64_t{1} << 20), "a send drew more than a million numbers");
  }
  state.stream = 1 + draws;
  return routing;
}

}  // namespace sim
