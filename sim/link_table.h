// A map from a directed link to a value, for settings and state kept only for
// the few links that have them: memory grows with the links used, not with
// nodes squared. Open addressing with linear probing under a fixed hash, so
// lookups cost a multiply and usually one probe. Small clusters (up to
// kDirectNodes nodes) get one slot per link instead: no collisions, so no
// probe loop for the branch predictor to miss on (that cost 5-8% of a message
// delivery among 5 nodes). It offers no iteration at all: a run can never
// come to depend on the order of its slots.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "electsim/sim/check.h"
#include "electsim/sim/types.h"

namespace sim {

template <typename Value>
class LinkTable {
 public:
  // At most 1024 links, allocated on the first insertion.
  static constexpr uint32_t kDirectNodes = 32;

  explicit LinkTable(uint32_t node_count) : node_count_(node_count), direct_(node_count <= kDirectNodes) {}

  static uint64_t Key(NodeId from, NodeId to) { return (uint64_t{from.value()} << 32) | to.value(); }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  Value* Find(NodeId from, NodeId to) {
    if (size_ == 0) return nullptr;
    const uint64_t key = Key(from, to);
    if (direct_) {
      Slot& slot = slots_[Home(key)];
      return slot.key == key ? &slot.value : nullptr;
    }
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  const Value* Find(NodeId from, NodeId to) const { return const_cast<LinkTable*>(this)->Find(from, to); }

  // The link's value, default-constructed when the link has none yet; `inserted`
  // says which. The reference lasts until the next insertion or erasure.
  Value& FindOrInsert(NodeId from, NodeId to, bool* inserted = nullptr) {
    const uint64_t key = Key(from, to);
    if (direct_ && !slots_.empty()) {
      Slot& slot = slots_[Home(key)];
      if (slot.key == key) {
        if (inserted != nullptr) *inserted = false;
        return slot.value;
      }
    } else if (!slots_.empty()) {
      for (size_t i = Home(key);; i = (i + 1) & mask_) {
        if (slots_[i].key == key) {
          if (inserted != nullptr) *inserted = false;
          return slots_[i].value;
        }
        if (slots_[i].key == kEmpty) break;
      }
    }
    if (inserted != nullptr) *inserted = true;
    return Insert(key);
  }

  void Erase(NodeId from, NodeId to) {
    if (size_ == 0) return;
    const uint64_t key = Key(from, to);
    size_t hole = Home(key);
    while (slots_[hole].key != key) {
      if (slots_[hole].key == kEmpty) return;
      hole = (hole + 1) & mask_;
    }
    if (direct_) {  // every key sits at its home: nothing to move up
      slots_[hole] = Slot{};
      --size_;
      return;
    }
    // Backward-shift deletion: move up each later entry of the probe run that
    // may sit in the hole (its home is not cyclically within (hole, i]), so
    // every remaining key stays reachable from its home without tombstones.
    for (size_t i = (hole + 1) & mask_; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      const size_t home = Home(slots_[i].key);
      const bool stays = hole < i ? (hole < home && home <= i) : (hole < home || home <= i);
      if (stays) continue;
      slots_[hole] = std::move(slots_[i]);
      hole = i;
    }
    slots_[hole] = Slot{};
    --size_;
  }

  // Empties the table and returns its memory.
  void Clear() {
    std::vector<Slot>().swap(slots_);
    mask_ = 0;
    size_ = 0;
  }

 private:
  // No valid link has this key: node ids are below kNoNode.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    Value value{};
  };

  size_t Home(uint64_t key) const {
    if (direct_) return static_cast<size_t>((key >> 32) * node_count_ + (key & 0xffffffffu));
    // Fibonacci hashing: the top bits of the product mix both node ids.
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  Value& Insert(uint64_t key) {
    // At most three quarters full, so probe runs stay short (2.5 slots to a
    // hit, 8.5 to a miss, on average) while a table of a storm's tens of
    // millions of links fits; a direct table has room for every link from
    // the start.
    if (slots_.empty() || (!direct_ && 4 * (size_ + 1) > 3 * slots_.size())) Grow();
    size_t i = Home(key);
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i].key = key;
    ++size_;
    return slots_[i].value;
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    size_t capacity = old.empty() ? 16 : 2 * old.size();
    if (direct_) capacity = std::max<size_t>(1, std::bit_ceil(size_t{node_count_} * node_count_));
    SIM_CHECK(capacity > old.size(), "link table size overflow");
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<int>(__builtin_ctzll(capacity));
    size_ = 0;
    for (Slot& slot : old) {
      if (slot.key == kEmpty) continue;
      size_t i = Home(slot.key);
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = std::move(slot);
      ++size_;
    }
  }

  uint32_t node_count_;
  bool direct_;  // one slot per link, at index from * node_count_ + to
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 63;  // 64 - log2(capacity); Home is never called while empty
  size_t size_ = 0;
};

}  // namespace sim
