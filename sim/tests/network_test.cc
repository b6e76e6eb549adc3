// Each network fault, observed through what processes actually receive.
#include "sim/network.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim/tests/test_processes.h"

namespace sim {
namespace {

using testing::InstallPingPong;
using testing::RecordCollector;
using testing::Seen;

constexpr TimeNs kInterval = TimeNs::Millis(10);

struct PingPongRun {
  explicit PingPongRun(uint64_t seed, LinkConfig link, int pings = 10) : sim(seed, 2, link) {
    sim.AddTraceSink(&records);
    InstallPingPong(sim, seen, pings, kInterval);
    EXPECT_TRUE(sim.Start().ok());
  }
  int PingsDelivered() const {
    int n = 0;
    for (const auto& d : seen.deliveries) n += (d.to == NodeId(1));
    return n;
  }
  Simulator sim;
  Seen seen;
  RecordCollector records;
};

TEST(Network_Latency, FixedLatencyArrivesExactlyThatLate) {
  PingPongRun run(1, LinkConfig::Fixed(TimeNs::Millis(3)), 1);
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.seen.deliveries.size(), 2u);
  EXPECT_EQ(run.seen.deliveries[0].global, kInterval + TimeNs::Millis(3));  // ping
  EXPECT_EQ(run.seen.deliveries[1].global, kInterval + TimeNs::Millis(6));  // pong
}

TEST(Network_Latency, UniformLatencyStaysInRangeAndVaries) {
  LinkConfig link;
  link.latency = LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(5));
  Network network(2, 9, link);
  TimeNs lo = TimeNs::Max(), hi;
  for (int i = 0; i < 1000; ++i) {
    const Routing r = network.Route(NodeId(0), NodeId(1), TimeNs(0));
    ASSERT_EQ(r.copies, 1);
    lo = std::min(lo, r.arrival[0]);
    hi = std::max(hi, r.arrival[0]);
  }
  EXPECT_GE(lo, TimeNs::Millis(1));
  EXPECT_LE(hi, TimeNs::Millis(5));
  EXPECT_LT(lo, TimeNs::Millis(2));
  EXPECT_GT(hi, TimeNs::Millis(4));
}

TEST(Network_LinkStreams, EachLinkDrawsFromTheStreamNamedAfterIt) {
  // Streams are derived on a link's first message, in whatever order links
  // are first used; each must still be Rng::ForStream of the link's name.
  LinkConfig link;
  link.latency = LatencyModel::Uniform(TimeNs(0), TimeNs::Seconds(1));
  constexpr uint64_t kSeed = 77;
  Network network(130, kSeed, link);
  const std::vector<Link> links = {{NodeId(129), NodeId(3)}, {NodeId(0), NodeId(1)}, {NodeId(10), NodeId(100)},
                                   {NodeId(5), NodeId(5)},   {NodeId(1), NodeId(0)}, {NodeId(100), NodeId(10)}};
  for (int round = 0; round < 3; ++round) {
    for (const Link& l : links) {
      Rng named = Rng::ForStream(kSeed, fmt::format("network/link/{}/{}", l.from.value(), l.to.value()));
      TimeNs expected;
      for (int i = 0; i <= round; ++i) expected = link.latency.Draw(named);
      EXPECT_EQ(network.Route(l.from, l.to, TimeNs(0)).arrival[0], expected)
          << l.from.value() << "->" << l.to.value() << " draw " << round;
    }
  }
}

// The network as it was when every setting and every link's state was a
// dense n x n array, with each link's stream derived by name up front.
class DenseNetworkModel {
 public:
  DenseNetworkModel(uint32_t n, uint64_t seed, LinkConfig link)
      : n_(n), links_(n * n, link), cuts_(n * n, 0), last_arrival_(n * n) {
    for (uint32_t from = 0; from < n; ++from) {
      for (uint32_t to = 0; to < n; ++to)
        rngs_.push_back(Rng::ForStream(seed, fmt::format("network/link/{}/{}", from, to)));
    }
  }
  void SetLink(Link l, const LinkConfig& config) { links_[Index(l)] = config; }
  void SetAllLinks(const LinkConfig& config) { std::fill(links_.begin(), links_.end(), config); }
  void Cut(const std::vector<Link>& links) {
    for (const Link& l : links) ++cuts_[Index(l)];
  }
  void Restore(const std::vector<Link>& links) {
    for (const Link& l : links) cuts_[Index(l)] -= cuts_[Index(l)] > 0;
  }
  void HealAll() { std::fill(cuts_.begin(), cuts_.end(), 0); }
  bool IsCut(Link l) const { return cuts_[Index(l)] > 0; }
  const LinkConfig& link(Link l) const { return links_[Index(l)]; }
  Routing Route(Link l, TimeNs now) {
    Routing routing;
    const size_t i = Index(l);
    if (cuts_[i] > 0) {
      routing.outcome = Routing::Outcome::kPartitioned;
      return routing;
    }
    if (rngs_[i].Chance(links_[i].drop)) {
      routing.outcome = Routing::Outcome::kLost;
      return routing;
    }
    routing.copies = rngs_[i].Chance(links_[i].duplicate) ? 2 : 1;
    for (int copy = 0; copy < routing.copies; ++copy) {
      TimeNs arrival = now + links_[i].latency.Draw(rngs_[i]);
      if (links_[i].fifo) arrival = std::max(arrival, last_arrival_[i]);
      last_arrival_[i] = std::max(last_arrival_[i], arrival);
      routing.arrival[copy] = arrival;
    }
    return routing;
  }

 private:
  size_t Index(Link l) const { return size_t{l.from.value()} * n_ + l.to.value(); }
  uint32_t n_;
  std::vector<LinkConfig> links_;
  std::vector<uint32_t> cuts_;
  std::vector<TimeNs> last_arrival_;
  std::vector<Rng> rngs_;
};

// Random settings, cuts, restores, heals and sends on the network and on the
// dense model: every setting read, cut check and routing decision must agree.
void CheckAgainstDenseModel(uint32_t n, uint64_t seed) {
  Rng rng(seed);
  auto random_config = [&] {
    LinkConfig config;
    switch (rng.Below(3)) {
      case 0: config.latency = LatencyModel::Fixed(TimeNs(static_cast<int64_t>(rng.Below(1000)))); break;
      case 1:
        config.latency = LatencyModel::Uniform(TimeNs(10), TimeNs(10 + static_cast<int64_t>(rng.Below(5000))));
        break;
      default: config.latency = LatencyModel::Exponential(TimeNs(5), TimeNs(300), TimeNs(4000)); break;
    }
    config.drop = rng.Below(3) == 0 ? *Probability::FromDouble(0.3) : Probability::Never();
    config.duplicate = rng.Below(3) == 0 ? *Probability::FromDouble(0.2) : Probability::Never();
    config.fifo = rng.Below(2) == 0;
    return config;
  };
  auto random_link = [&] {
    return Link{NodeId(static_cast<uint32_t>(rng.Below(n))), NodeId(static_cast<uint32_t>(rng.Below(n)))};
  };
  const LinkConfig initial = random_config();
  Network network(n, seed, initial);
  DenseNetworkModel model(n, seed, initial);
  // What each fault cut: the network's own record, and the links the model cut.
  std::vector<std::pair<CutSet, std::vector<Link>>> cuts_made;
  TimeNs now;
  for (int op = 0; op < 20000; ++op) {
    const uint64_t kind = rng.Below(100);
    if (kind < 5) {
      const Link l = random_link();
      const LinkConfig config = random_config();
      ASSERT_TRUE(network.SetLink(l.from, l.to, config).ok());
      model.SetLink(l, config);
    } else if (kind < 6) {
      const LinkConfig config = random_config();
      ASSERT_TRUE(network.SetAllLinks(config).ok());
      model.SetAllLinks(config);
    } else if (kind < 9) {
      std::vector<Link> links;
      CutSet cut;
      if (rng.Below(2) == 0) {
        for (uint64_t i = rng.Below(4); i > 0; --i) links.push_back(random_link());
        ASSERT_TRUE(network.Cut(links).ok());
        cut.links = links;
      } else {
        // Isolating a node cuts every link to and from it.
        const NodeId isolated(static_cast<uint32_t>(rng.Below(n)));
        auto partition = network.Partition({{isolated}});
        ASSERT_TRUE(partition.ok());
        for (uint32_t other = 0; other < n; ++other) {
          if (other == isolated.value()) continue;
          links.push_back({isolated, NodeId(other)});
          links.push_back({NodeId(other), isolated});
        }
        ASSERT_EQ(partition->link_count, links.size());
        cut = *partition;
      }
      model.Cut(links);
      cuts_made.emplace_back(cut, links);
    } else if (kind < 12 && !cuts_made.empty()) {
      const size_t which = rng.Below(cuts_made.size());
      ASSERT_TRUE(network.Restore(cuts_made[which].first).ok());
      model.Restore(cuts_made[which].second);
      cuts_made.erase(cuts_made.begin() + static_cast<std::ptrdiff_t>(which));
    } else if (kind < 13) {
      network.HealAll();
      model.HealAll();
      // A heal removes every cut; nothing made before it is restored after
      // it (the fault driver counts heals for that).
      cuts_made.clear();
    } else {
      const Link l = random_link();
      now += TimeNs(static_cast<int64_t>(rng.Below(100)));
      const Routing got = network.Route(l.from, l.to, now);
      const Routing want = model.Route(l, now);
      ASSERT_EQ(got.outcome, want.outcome) << "op " << op;
      ASSERT_EQ(got.copies, want.copies) << "op " << op;
      for (int copy = 0; copy < want.copies; ++copy) ASSERT_EQ(got.arrival[copy], want.arrival[copy]) << "op " << op;
    }
    const Link probe = random_link();
    ASSERT_EQ(network.IsCut(probe.from, probe.to), model.IsCut(probe)) << "op " << op;
    const LinkConfig& got = network.link(probe.from, probe.to);
    const LinkConfig& want = model.link(probe);
    ASSERT_EQ(got.latency.Describe(), want.latency.Describe()) << "op " << op;
    ASSERT_EQ(got.drop, want.drop);
    ASSERT_EQ(got.duplicate, want.duplicate);
    ASSERT_EQ(got.fifo, want.fifo);
  }
}

TEST(Network_SparseLinks, BehaveAsDenseOnesInASmallCluster) { CheckAgainstDenseModel(5, 11); }

TEST(Network_SparseLinks, BehaveAsDenseOnesInAHashedCluster) { CheckAgainstDenseModel(40, 12); }

// 160,000 links for 20,000 operations: most links carry one message or two,
// so a link's first send, its second (which derives its stream again and
// steps past the first's draws) and its later ones (a stream kept) all
// draw as a link with a stream of its own from the start would.
TEST(Network_SparseLinks, BehaveAsDenseOnesWhereMostLinksCarryAMessageOrTwo) { CheckAgainstDenseModel(400, 13); }

TEST(Network_SparseLinks, SetUpAndFirstMessagesOfAHugeClusterStayCheap) {
  // Dense per-link arrays would take 10^10 entries here.
  constexpr uint32_t kNodes = 100000;
  Network network(kNodes, 3, LinkConfig::Fixed(TimeNs(5)));
  ASSERT_TRUE(network.SetLink(NodeId(kNodes - 1), NodeId(0), LinkConfig::Fixed(TimeNs(9))).ok());
  ASSERT_TRUE(network.Cut({Link{NodeId(12345), NodeId(67890)}}).ok());
  EXPECT_EQ(network.Route(NodeId(kNodes - 1), NodeId(0), TimeNs(0)).arrival[0], TimeNs(9));
  EXPECT_EQ(network.Route(NodeId(0), NodeId(kNodes - 1), TimeNs(0)).arrival[0], TimeNs(5));
  EXPECT_EQ(network.Route(NodeId(12345), NodeId(67890), TimeNs(0)).outcome, Routing::Outcome::kPartitioned);
  EXPECT_FALSE(network.IsCut(NodeId(67890), NodeId(12345)));
  // Each link's stream is still the one named after it.
  LinkConfig uniform;
  uniform.latency = LatencyModel::Uniform(TimeNs(0), TimeNs::Seconds(1));
  ASSERT_TRUE(network.SetAllLinks(uniform).ok());
  Rng named = Rng::ForStream(3, "network/link/99999/54321");
  EXPECT_EQ(network.Route(NodeId(99999), NodeId(54321), TimeNs(0)).arrival[0], uniform.latency.Draw(named));
}

TEST(Network_Latency, LongTailsRespectMinimumAndCap) {
  for (const LatencyModel& model : {LatencyModel::Exponential(TimeNs::Millis(1), TimeNs::Millis(2), TimeNs::Millis(50)),
                                    LatencyModel::Pareto(TimeNs::Millis(1), 1200, TimeNs::Millis(50))}) {
    LinkConfig link;
    link.latency = model;
    Network network(2, 10, link);
    TimeNs hi;
    for (int i = 0; i < 20000; ++i) {
      const TimeNs arrival = network.Route(NodeId(0), NodeId(1), TimeNs(0)).arrival[0];
      ASSERT_GE(arrival, TimeNs::Millis(1));
      ASSERT_LE(arrival, TimeNs::Millis(50));
      hi = std::max(hi, arrival);
    }
    EXPECT_GT(hi, TimeNs::Millis(15)) << model.Describe();  // the tail is reached
  }
}

TEST(Network_Drop, DroppedMessagesAreNeverDelivered) {
  LinkConfig link = LinkConfig::Fixed(TimeNs::Millis(1));
  link.drop = Probability::Always();
  PingPongRun run(2, link);
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(run.seen.deliveries.size(), 0u);
  EXPECT_EQ(run.records.CountDetail(TraceKind::kDrop, "loss"), 10);
  EXPECT_EQ(run.sim.stats().messages_dropped, 10u);
}

TEST(Network_Drop, PartialLossLosesSomeButNotAll) {
  LinkConfig link = LinkConfig::Fixed(TimeNs::Millis(1));
  link.drop = *Probability::FromDouble(0.5);
  PingPongRun run(3, link, 200);
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(10)).ok());
  EXPECT_GT(run.PingsDelivered(), 50);
  EXPECT_LT(run.PingsDelivered(), 150);
  EXPECT_EQ(run.sim.stats().messages_delivered + run.sim.stats().messages_dropped, run.sim.stats().messages_sent);
}

TEST(Network_Duplicate, DuplicatedMessagesArriveTwice) {
  LinkConfig link = LinkConfig::Fixed(TimeNs::Millis(1));
  link.duplicate = Probability::Always();
  PingPongRun run(4, link, 1);
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  // One ping arrives twice; each copy is answered by a pong that arrives twice.
  EXPECT_EQ(run.PingsDelivered(), 2);
  EXPECT_EQ(run.seen.deliveries.size(), 6u);
  EXPECT_EQ(run.records.Count(TraceKind::kDuplicate), 3);
}

TEST(Network_Reorder, RandomLatencyReordersAndFifoDoesNot) {
  auto out_of_order = [](bool fifo) {
    LinkConfig link;
    link.latency = LatencyModel::Uniform(TimeNs::Millis(1), TimeNs::Millis(50));
    link.fifo = fifo;
    PingPongRun run(5, link, 100);
    EXPECT_TRUE(run.sim.RunUntil(TimeNs::Seconds(10)).ok());
    int inversions = 0;
    int64_t last = -1;
    for (const auto& d : run.seen.deliveries) {
      if (d.to != NodeId(1)) continue;
      inversions += d.seq < last;
      last = std::max(last, d.seq);
    }
    EXPECT_EQ(run.PingsDelivered(), 100);
    return inversions;
  };
  EXPECT_GT(out_of_order(false), 0);
  EXPECT_EQ(out_of_order(true), 0);
}

TEST(Network_Partition, PartitionedLinkDeliversNothingUntilHeal) {
  PingPongRun run(6, LinkConfig::Fixed(TimeNs::Millis(1)), 100);
  ASSERT_TRUE(
      run.sim.ScheduleAt(TimeNs::Millis(200),
                         [&] {
                           ASSERT_TRUE(run.sim.Partition({{NodeId(0)}, {NodeId(1)}}).ok());
                         })
          .ok());
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(600), [&] { run.sim.HealNetwork(); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(2)).ok());
  int during = 0, after = 0;
  for (const auto& d : run.seen.deliveries) {
    if (d.global >= TimeNs::Millis(200) && d.global < TimeNs::Millis(600)) ++during;
    if (d.global >= TimeNs::Millis(600)) ++after;
  }
  EXPECT_EQ(during, 0);
  EXPECT_GT(after, 0);
  EXPECT_GT(run.records.CountDetail(TraceKind::kDrop, "partition"), 0);
}

TEST(Network_Partition, InFlightMessagesAreCutToo) {
  PingPongRun run(7, LinkConfig::Fixed(TimeNs::Millis(8)), 1);
  // The ping leaves at 10ms and would land at 18ms; the cut at 12ms stops it.
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(12), [&] { ASSERT_TRUE(run.sim.Partition({{NodeId(0)}}).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(run.seen.deliveries.size(), 0u);
}

TEST(Network_Partition, MessageHeldAtAPausedNodeIsNotCutByALaterPartition) {
  PingPongRun run(7, LinkConfig::Fixed(TimeNs::Millis(1)), 1);
  // The ping lands at 11ms while node 1 is paused: it has arrived, so the
  // partition at 20ms cannot take it back. The pong, sent during the cut, is lost.
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(5), [&] { ASSERT_TRUE(run.sim.Pause(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(
      run.sim.ScheduleAt(TimeNs::Millis(20),
                         [&] {
                           ASSERT_TRUE(run.sim.Partition({{NodeId(0)}, {NodeId(1)}}).ok());
                         })
          .ok());
  ASSERT_TRUE(run.sim.ScheduleAt(TimeNs::Millis(30), [&] { ASSERT_TRUE(run.sim.Resume(NodeId(1)).ok()); }).ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.seen.deliveries.size(), 1u);
  EXPECT_EQ(run.seen.deliveries[0].to, NodeId(1));
  EXPECT_EQ(run.seen.deliveries[0].global, TimeNs::Millis(30));
  EXPECT_EQ(run.records.CountDetail(TraceKind::kDrop, "partition"), 1);  // the pong
  EXPECT_EQ(run.sim.stats().messages_delivered, 1u);
}

TEST(Network_Partition, RestoringOneFaultKeepsTheOthersCuts) {
  Network network(3, 1, LinkConfig{});
  ASSERT_TRUE(network.Cut({Link{NodeId(0), NodeId(1)}}).ok());  // a lasting one-way cut
  auto links = network.Partition({{NodeId(0)}});                // isolate node 0 for a while
  ASSERT_TRUE(links.ok());
  EXPECT_EQ(links->link_count, 4u);
  EXPECT_TRUE(network.IsCut(NodeId(2), NodeId(0)));
  ASSERT_TRUE(network.Restore(*links).ok());
  EXPECT_FALSE(network.IsCut(NodeId(2), NodeId(0)));
  EXPECT_FALSE(network.IsCut(NodeId(1), NodeId(0)));
  EXPECT_TRUE(network.IsCut(NodeId(0), NodeId(1)));  // the one-way cut is still in force
  network.HealAll();
  EXPECT_FALSE(network.IsCut(NodeId(0), NodeId(1)));
}

TEST(Network_Partition, BystandersInNoGroupReachEveryGroup) {
  // Nodes 0-3 split [0,1] / [2] / unlisted 3; node 4 a bystander, node 5 a
  // bystander placed in the first group.
  Network network(6, 1, LinkConfig{});
  auto links = network.Partition({{NodeId(0), NodeId(1), NodeId(5)}, {NodeId(2)}}, {NodeId(4), NodeId(5)});
  ASSERT_TRUE(links.ok()) << links.status();
  // Ordered pairs across the groups [0,1,5], [2] and [3]: 3x1 + 3x1 + 1x1, both ways.
  EXPECT_EQ(links->link_count, 14u);
  for (uint32_t node : {0, 1, 2, 3, 5}) {
    EXPECT_FALSE(network.IsCut(NodeId(node), NodeId(4))) << node;
    EXPECT_FALSE(network.IsCut(NodeId(4), NodeId(node))) << node;
  }
  EXPECT_TRUE(network.IsCut(NodeId(0), NodeId(2)));
  EXPECT_TRUE(network.IsCut(NodeId(2), NodeId(3)));
  EXPECT_FALSE(network.IsCut(NodeId(5), NodeId(1)));  // placed: it belongs to its group
  EXPECT_TRUE(network.IsCut(NodeId(5), NodeId(2)));
  EXPECT_TRUE(network.IsCut(NodeId(3), NodeId(5)));
}

TEST(Network_OneWayCut, BlocksOnlyOneDirection) {
  PingPongRun run(8, LinkConfig::Fixed(TimeNs::Millis(1)), 5);
  ASSERT_TRUE(run.sim.CutOneWay(NodeId(1), NodeId(0)).ok());  // pongs cannot return
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  EXPECT_EQ(run.PingsDelivered(), 5);
  EXPECT_EQ(run.seen.deliveries.size(), 5u);  // no pong reached node 0
}

TEST(Network_LinkChange, LatencyCanChangeMidRun) {
  PingPongRun run(9, LinkConfig::Fixed(TimeNs::Millis(1)), 2);
  ASSERT_TRUE(
      run.sim
          .ScheduleAt(
              TimeNs::Millis(15),
              [&] { ASSERT_TRUE(run.sim.SetLink(NodeId(0), NodeId(1), LinkConfig::Fixed(TimeNs::Millis(7))).ok()); })
          .ok());
  ASSERT_TRUE(run.sim.RunUntil(TimeNs::Seconds(1)).ok());
  ASSERT_EQ(run.PingsDelivered(), 2);
  EXPECT_EQ(run.seen.deliveries[0].global, TimeNs::Millis(11));  // ping 0 at 10ms + 1ms
  EXPECT_EQ(run.seen.deliveries[2].global, TimeNs::Millis(27));  // ping 1 at 20ms + 7ms
}

TEST(Network_BadInput, RejectedWithClearErrors) {
  Network network(3, 1, LinkConfig{});
  LinkConfig negative;
  negative.latency = LatencyModel::Fixed(TimeNs(-1));
  EXPECT_EQ(network.SetAllLinks(negative).code(), absl::StatusCode::kInvalidArgument);
  LinkConfig inverted;
  inverted.latency = LatencyModel::Uniform(TimeNs(5), TimeNs(1));
  EXPECT_FALSE(network.SetLink(NodeId(0), NodeId(1), inverted).ok());
  const absl::Status unknown = network.SetLink(NodeId(0), NodeId(3), LinkConfig{});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown node 3"), std::string_view::npos) << unknown;
  EXPECT_FALSE(network.Partition({{NodeId(0)}, {NodeId(0)}}).ok());
  EXPECT_FALSE(network.Cut({Link{NodeId(9), NodeId(0)}}).ok());
  LinkConfig too_slow;
  too_slow.latency = LatencyModel::Fixed(kMaxLatency + TimeNs(1));
  EXPECT_FALSE(network.SetAllLinks(too_slow).ok());
}

// A partition is a group per node, not a list of cut links: two halves of
// 100,000 nodes cut 5 billion directed links, which a list could not hold.
TEST(Network_Partition, HalvesOfAHundredThousandNodesAreAGroupPerNode) {
  constexpr uint32_t kNodes = 100000;
  Network network(kNodes, 1, LinkConfig{});
  std::vector<NodeId> first, second;
  for (uint32_t n = 0; n < kNodes; ++n) (n < kNodes / 2 ? first : second).push_back(NodeId(n));
  auto cut = network.Partition({first, second});
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->link_count, uint64_t{2} * (kNodes / 2) * (kNodes / 2));
  EXPECT_TRUE(network.IsCut(NodeId(0), NodeId(kNodes - 1)));
  EXPECT_TRUE(network.IsCut(NodeId(kNodes - 1), NodeId(0)));
  EXPECT_FALSE(network.IsCut(NodeId(0), NodeId(kNodes / 2 - 1)));
  ASSERT_TRUE(network.Restore(*cut).ok());
  EXPECT_FALSE(network.IsCut(NodeId(0), NodeId(kNodes - 1)));
}

}  // namespace
}  // namespace sim
