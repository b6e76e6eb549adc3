// EventQueue against a std::set of (time, seq) under random sequences of
// pushes, pops (a pop's slot is refilled by the next push) and removals.
#include "sim/event_queue.h"

#include <set>
#include <tuple>

#include "electsim/sim/rng.h"
#include "gtest/gtest.h"

namespace sim {
namespace {

using Key = std::tuple<int64_t, uint64_t>;  // (time, seq): the order events must come out in

TEST(EventQueue, PopsInTimeThenInsertionOrderUnderRandomOperations) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    EventQueue queue;
    std::set<Key> reference;
    uint64_t next_seq = 0;
    Rng rng(seed);
    for (int op = 0; op < 5000; ++op) {
      const uint64_t draw = rng.Below(100);
      if (draw < 45 || reference.empty()) {
        // Few distinct times, so that ties are common.
        const auto time = static_cast<int64_t>(rng.Below(50));
        queue.Push(time, EventKind::kTimer, 0, next_seq);
        reference.emplace(time, next_seq++);
      } else if (draw < 97) {
        const Event event = queue.Pop();
        ASSERT_EQ(Key(event.time_ns, event.seq), *reference.begin()) << "seed " << seed << " op " << op;
        EXPECT_EQ(event.arg, event.seq);
        reference.erase(reference.begin());
      } else {
        // Drop the events of odd sequence numbers, as compaction drops stale timers.
        queue.RemoveIf([](const Event& event) { return event.seq % 2 == 1; });
        std::erase_if(reference, [](const Key& key) { return std::get<1>(key) % 2 == 1; });
      }
      ASSERT_EQ(queue.size(), reference.size());
      ASSERT_EQ(queue.empty(), reference.empty());
      if (!reference.empty()) {
        ASSERT_EQ(Key(queue.top().time_ns, queue.top().seq), *reference.begin()) << "seed " << seed << " op " << op;
      }
    }
  }
}

TEST(EventQueue, APushAfterAPopTakesThePoppedSlot) {
  EventQueue queue;
  queue.Push(5, EventKind::kTimer, 0, 0);
  EXPECT_EQ(queue.Pop().time_ns, 5);
  EXPECT_TRUE(queue.empty());
  queue.Push(3, EventKind::kTimer, 0, 0);
  queue.Push(1, EventKind::kTimer, 0, 0);
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.Pop().time_ns, 1);
  EXPECT_EQ(queue.Pop().time_ns, 3);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace sim
