// LinkTable against a plain reference under long random sequences of operations, in
// both layouts (one slot per link for small clusters, open addressing above).
#include "sim/link_table.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "electsim/sim/rng.h"
#include "gtest/gtest.h"

namespace sim {
namespace {

// The reference is one optional value per link among the nodes used, indexed
// by their positions: as plain as a map, and cheap enough under the sanitizers
// to look every link up often (a std::map and an assertion per lookup made one
// case take 28 s there).
void CheckAgainstReference(uint32_t node_count, uint32_t nodes_used, int operations, uint64_t seed) {
  LinkTable<int64_t> table(node_count);
  const uint32_t positions = nodes_used + 1;
  std::vector<std::optional<int64_t>> reference(size_t{positions} * positions);
  size_t reference_size = 0;
  Rng rng(seed);
  // Links among the first `nodes_used` nodes and the last one, so keys
  // collide and probe runs wrap around the end of the table.
  auto node_at = [&](uint32_t position) { return NodeId(position == nodes_used ? node_count - 1 : position); };
  for (int op = 0; op < operations; ++op) {
    const auto from_position = static_cast<uint32_t>(rng.Below(positions));
    const auto to_position = static_cast<uint32_t>(rng.Below(positions));
    const NodeId from = node_at(from_position);
    const NodeId to = node_at(to_position);
    std::optional<int64_t>& expected = reference[size_t{from_position} * positions + to_position];
    switch (rng.Below(10)) {
      case 0:
      case 1:
      case 2:
      case 3: {
        bool inserted = false;
        int64_t& value = table.FindOrInsert(from, to, &inserted);
        ASSERT_EQ(inserted, !expected.has_value()) << "op " << op;
        ASSERT_EQ(value, expected.value_or(0)) << "op " << op;
        if (inserted) ++reference_size;
        value = op;
        expected = op;
        break;
      }
      case 4:
      case 5:
      case 6:
        table.Erase(from, to);
        if (expected.has_value()) --reference_size;
        expected.reset();
        break;
      case 7:
        if (rng.Below(50) == 0) {
          table.Clear();
          std::fill(reference.begin(), reference.end(), std::nullopt);
          reference_size = 0;
        }
        break;
      default: break;
    }
    ASSERT_EQ(table.size(), reference_size) << "op " << op;
    // Every link looked up, after every operation among a few nodes and
    // every 97th among many: a key lost by a wrong erasure or growth shows
    // at once, or within 97 operations.
    if (op % 97 == 0 || nodes_used <= 6) {
      for (uint32_t a = 0; a < positions; ++a) {
        for (uint32_t b = 0; b < positions; ++b) {
          const int64_t* found = table.Find(node_at(a), node_at(b));
          const std::optional<int64_t>& want = reference[size_t{a} * positions + b];
          if ((found != nullptr) != want.has_value() || (found != nullptr && *found != *want)) {
            FAIL() << node_at(a).value() << "->" << node_at(b).value() << " op " << op << ": found "
                   << (found != nullptr ? std::to_string(*found) : "nothing") << ", expected "
                   << (want.has_value() ? std::to_string(*want) : "nothing");
          }
        }
      }
    }
  }
}

TEST(LinkTable_Reference, DirectLayoutFilledToTheLastSlot) {
  // 4 nodes: 16 links in 16 slots, every slot used at times.
  CheckAgainstReference(4, 3, 20000, 1);
}

TEST(LinkTable_Reference, LargestDirectLayout) {
  CheckAgainstReference(LinkTable<int64_t>::kDirectNodes, 31, 20000, 2);
}

TEST(LinkTable_Reference, HashedLayoutJustAboveTheDirectOne) {
  CheckAgainstReference(LinkTable<int64_t>::kDirectNodes + 1, 32, 50000, 3);
}

TEST(LinkTable_Reference, HashedLayoutWithFewLinksOfALargeCluster) { CheckAgainstReference(100000, 5, 20000, 4); }

TEST(LinkTable_Reference, HashedLayoutGrowsAndShrinks) { CheckAgainstReference(10000, 60, 200000, 5); }

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
