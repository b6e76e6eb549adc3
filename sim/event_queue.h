// A binary min-heap of small fixed-size events ordered by (time, seq). Events
// carry plain integers, never closures: a std::function per event would
// allocate and cost a third of the loop's speed.
#pragma once

#include <cstdint>
#include <vector>

#include "electsim/sim/types.h"

namespace sim {

enum class EventKind : uint32_t { kStart, kDeliver, kTimer, kAction };

struct Event {
  int64_t time_ns;
  uint64_t seq;     // insertion order: the deterministic tie-break
  EventKind kind;
  uint32_t node;
  uint64_t arg;     // in-flight slot, timer slot|generation, or action index
};

class EventQueue {
 public:
  void Push(int64_t time_ns, EventKind kind, uint32_t node, uint64_t arg) {
    heap_.push_back(Event{time_ns, next_seq_++, kind, node, arg});
    SiftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event Pop() {
    Event out = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0);
    return out;
  }

 private:
  static bool Before(const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.seq < b.seq;
  }
  void SiftUp(size_t i) {
    Event moving = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!Before(moving, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    Event moving = heap_[i];
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
      if (!Before(heap_[child], moving)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moving;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace sim
