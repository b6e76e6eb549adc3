// LinkTable against a std::map under long random sequences of operations, in
// both layouts (one slot per link for small clusters, open addressing above).
#include "sim/link_table.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "electsim/sim/rng.h"
#include "gtest/gtest.h"

namespace sim {
namespace {

void CheckAgainstMap(uint32_t node_count, uint32_t nodes_used, int operations, uint64_t seed) {
  LinkTable<int64_t> table(node_count);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> reference;
  Rng rng(seed);
  // Links among the first `nodes_used` nodes and the last one, so keys
  // collide and probe runs wrap around the end of the table.
  auto pick = [&] {
    const uint64_t draw = rng.Below(nodes_used + 1);
    return NodeId(draw == nodes_used ? node_count - 1 : static_cast<uint32_t>(draw));
  };
  for (int op = 0; op < operations; ++op) {
    const NodeId from = pick();
    const NodeId to = pick();
    const auto key = std::pair(from.value(), to.value());
    switch (rng.Below(10)) {
      case 0:
      case 1:
      case 2:
      case 3: {
        bool inserted = false;
        int64_t& value = table.FindOrInsert(from, to, &inserted);
        ASSERT_EQ(inserted, !reference.contains(key)) << "op " << op;
        ASSERT_EQ(value, inserted ? 0 : reference[key]) << "op " << op;
        value = op;
        reference[key] = op;
        break;
      }
      case 4:
      case 5:
      case 6:
        table.Erase(from, to);
        reference.erase(key);
        break;
      case 7:
        if (rng.Below(50) == 0) {
          table.Clear();
          reference.clear();
        }
        break;
      default: break;
    }
    ASSERT_EQ(table.size(), reference.size()) << "op " << op;
    // Every link looked up, after every operation among a few nodes and
    // every 97th among many: a key lost by a wrong erasure or growth shows
    // at once, or within 97 operations.
    if (op % 97 == 0 || nodes_used <= 6) {
      for (uint32_t a = 0; a <= nodes_used; ++a) {
        for (uint32_t b = 0; b <= nodes_used; ++b) {
          const NodeId f(a == nodes_used ? node_count - 1 : a);
          const NodeId t(b == nodes_used ? node_count - 1 : b);
          const int64_t* found = table.Find(f, t);
          const auto it = reference.find({f.value(), t.value()});
          ASSERT_EQ(found != nullptr, it != reference.end()) << f.value() << "->" << t.value() << " op " << op;
          if (found != nullptr) {
            ASSERT_EQ(*found, it->second);
          }
        }
      }
    }
  }
}

TEST(LinkTable_Reference, DirectLayoutFilledToTheLastSlot) {
  // 4 nodes: 16 links in 16 slots, every slot used at times.
  CheckAgainstMap(4, 3, 20000, 1);
}

TEST(LinkTable_Reference, LargestDirectLayout) { CheckAgainstMap(LinkTable<int64_t>::kDirectNodes, 31, 20000, 2); }

TEST(LinkTable_Reference, HashedLayoutJustAboveTheDirectOne) {
  CheckAgainstMap(LinkTable<int64_t>::kDirectNodes + 1, 32, 50000, 3);
}

TEST(LinkTable_Reference, HashedLayoutWithFewLinksOfALargeCluster) { CheckAgainstMap(100000, 5, 20000, 4); }

TEST(LinkTable_Reference, HashedLayoutGrowsAndShrinks) { CheckAgainstMap(10000, 60, 200000, 5); }

TEST(LinkTable_Find, EmptyAndClearedTablesFindNothing) {
  for (uint32_t nodes : {3u, 1000u}) {
    LinkTable<int> table(nodes);
    EXPECT_EQ(table.Find(NodeId(0), NodeId(1)), nullptr);
    table.Erase(NodeId(0), NodeId(1));  // nothing to erase: no effect
    table.FindOrInsert(NodeId(0), NodeId(1)) = 7;
    EXPECT_EQ(table.Find(NodeId(1), NodeId(0)), nullptr);  // links are directed
    ASSERT_NE(table.Find(NodeId(0), NodeId(1)), nullptr);
    EXPECT_EQ(*table.Find(NodeId(0), NodeId(1)), 7);
    table.Clear();
    EXPECT_TRUE(table.empty());
    EXPECT_EQ(table.Find(NodeId(0), NodeId(1)), nullptr);
  }
}

}  // namespace
}  // namespace sim
