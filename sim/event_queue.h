// A binary min-heap of small fixed-size events ordered by (time, seq). Events
// carry plain integers, never closures: a std::function per event would
// allocate and cost a third of the loop's speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "electsim/sim/types.h"

namespace sim {

enum class EventKind : uint32_t { kStart, kDeliver, kTimer, kAction };

struct Event {
  int64_t time_ns;
  uint64_t seq;  // insertion order: the deterministic tie-break
  EventKind kind;
  uint32_t node;
  uint64_t arg;  // in-flight slot, timer slot|generation, or action index
};

class EventQueue {
 public:
  void Push(int64_t time_ns, EventKind kind, uint32_t node, uint64_t arg) {
    PushWithSeq(time_ns, next_seq_++, kind, node, arg);
  }
  // The sequence number the next Push would take, taken now for an event
  // pushed later with PushWithSeq: it then sorts where a Push now would have.
  uint64_t ReserveSeq() { return next_seq_++; }
  // `seq` from ReserveSeq, and the event no earlier than the last popped.
  void PushWithSeq(int64_t time_ns, uint64_t seq, EventKind kind, uint32_t node, uint64_t arg) {
    const Event event{time_ns, seq, kind, node, arg};
    if (root_taken_) {
      // The usual step: a handler schedules the next event where the one it
      // is handling was. One walk down replaces a pop's and a push's walks.
      root_taken_ = false;
      ReplaceTop(event);
      return;
    }
    heap_.emplace_back();  // written once, at its final place, by SiftUp
    SiftUp(heap_.size() - 1, event);
  }
  // Removes every event `dead` says will do nothing when popped, and
  // rebuilds the heap in O(size). The order of the rest is unchanged: it is
  // fixed by their unique (time, seq) keys, not by where they sit.
  template <typename Predicate>
  size_t RemoveIf(Predicate dead) {
    Settle();
    const size_t removed = std::erase_if(heap_, dead);
    if (removed != 0) {
      for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
    }
    return removed;
  }
  void Reserve(size_t events) { heap_.reserve(events); }
  // The queue as constructed, keeping the heap's memory.
  void Clear() {
    std::vector<Event> heap = std::move(heap_);
    heap.clear();
    *this = EventQueue();
    heap_ = std::move(heap);
  }
  bool empty() const { return size() == 0; }
  size_t size() const { return heap_.size() - (root_taken_ ? 1 : 0); }
  const Event& top() const {
    Settle();
    return heap_.front();
  }
  // The earliest event. Its slot is given back lazily: the next Push fills
  // it (see Push), anything else first removes it.
  Event Pop() {
    Settle();
    root_taken_ = true;
    return heap_.front();
  }

 private:
  // (time, seq) as one 128-bit key: a single wide compare, no branch on
  // equal times. Event times are never negative.
  static unsigned __int128 Key(const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.time_ns)) << 64) | e.seq;
  }
  static bool Before(const Event& a, const Event& b) { return Key(a) < Key(b); }
  // Removes the root that Pop handed out, if no Push has replaced it.
  // Const because the queue's contents do not change: the root was already
  // gone as far as callers can tell.
  void Settle() const {
    if (!root_taken_) return;
    root_taken_ = false;
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) ReplaceTop(last);
  }
  // Puts `moving` at hole `i` or above it. `moving` comes in registers
  // rather than being read back from the slot just written, which would
  // stall on store-to-load forwarding.
  void SiftUp(size_t i, const Event& moving) const {
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!Before(moving, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  // Puts `moving` at the root and restores the heap. Floyd's way, as
  // std::pop_heap does: walk the hole down to a leaf along the smaller
  // children (one compare per level), then sift `moving` up from there; the
  // last element, which `moving` usually is, belongs near the bottom.
  void ReplaceTop(const Event& moving) const {
    const size_t n = heap_.size();
    size_t hole = 0;
    while (true) {
      size_t child = 2 * hole + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
      heap_[hole] = heap_[child];
      hole = child;
    }
    SiftUp(hole, moving);
  }

  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    const Event moving = heap_[i];
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

  // Mutable for Settle only.
  mutable std::vector<Event> heap_;
  mutable bool root_taken_ = false;  // heap_.front() was popped and awaits its replacement
  uint64_t next_seq_ = 0;
};

}  // namespace sim
