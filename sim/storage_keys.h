// The stable-storage keys a run has used, each given a small number on first
// use, so that each node keeps its storage in a vector indexed by that number
// rather than in a string-keyed tree: a write looks its key up once here, and
// a sync moves numbers, not strings (string compares and tree inserts took
// about a fifth of a Raft trial). Like LinkTable it offers no iteration by
// slot: numbers follow first use, which is part of the run, so nothing
// depends on where a key happens to hash. Keys hash as stream names do
// (HashName, FNV-1a).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "electsim/sim/rng.h"

namespace sim {

using StorageKeyId = uint32_t;

class StorageKeys {
 public:
  // The key's number, given it now if it has none.
  StorageKeyId Intern(std::string_view key) {
    if (names_.size() * 2 >= slots_.size()) Grow();
    const uint64_t hash = HashName(key);
    const size_t slot = Probe(key, hash);
    if (slots_[slot] == kEmpty) {
      slots_[slot] = static_cast<StorageKeyId>(names_.size());
      names_.emplace_back(key);
      hashes_.push_back(hash);
    }
    return slots_[slot];
  }
  // The key's number if any node has used it.
  std::optional<StorageKeyId> Find(std::string_view key) const {
    if (slots_.empty()) return std::nullopt;
    const StorageKeyId id = slots_[Probe(key, HashName(key))];
    return id == kEmpty ? std::nullopt : std::optional<StorageKeyId>(id);
  }
  std::string_view Name(StorageKeyId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  static constexpr StorageKeyId kEmpty = ~StorageKeyId{0};

  // The slot that holds `key`, or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const {
    size_t i = hash & mask_;
    while (slots_[i] != kEmpty && !(hashes_[slots_[i]] == hash && names_[slots_[i]] == key)) i = (i + 1) & mask_;
    return i;
  }

  void Grow() {
    const size_t capacity = slots_.empty() ? 16 : slots_.size() * 2;
    // Room for as many keys as the table takes before it grows again.
    names_.reserve(capacity / 2);
    hashes_.reserve(capacity / 2);
    slots_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    for (StorageKeyId id = 0; id < names_.size(); ++id) {
      size_t i = hashes_[id] & mask_;
      while (slots_[i] != kEmpty) i = (i + 1) & mask_;
      slots_[i] = id;
    }
  }

  std::vector<StorageKeyId> slots_;  // a power of two long, at most half full
  size_t mask_ = 0;
  std::vector<std::string> names_;   // by number
  std::vector<uint64_t> hashes_;     // by number
};

}  // namespace sim
