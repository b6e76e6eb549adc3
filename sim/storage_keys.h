// The stable-storage keys a run has used, each given a small number on first
// use, so that each node keeps its storage in a vector indexed by that number
// rather than in a string-keyed tree: a write looks its key up once here, and
// a sync moves numbers, not strings (string compares and tree inserts took
// about a fifth of a Raft trial). Like LinkTable it offers no iteration by
// slot: numbers follow first use, which is part of the run, so nothing
// depends on where a key happens to hash.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim {

using StorageKeyId = uint32_t;

class StorageKeys {
 public:
  // The key's number, given it now if it has none.
  StorageKeyId Intern(std::string_view key) {
    if (names_.size() * 2 >= slots_.size()) Grow();
    const uint64_t hash = Hash(key);
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
    const StorageKeyId id = slots_[Probe(key, Hash(key))];
    return id == kEmpty ? std::nullopt : std::optional<StorageKeyId>(id);
  }
  std::string_view Name(StorageKeyId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  static constexpr StorageKeyId kEmpty = ~StorageKeyId{0};

  // Eight bytes at a time through a multiply-fold: keys are short ("term",
  // "log.12.term"), so this is two or three multiplies.
  static uint64_t Hash(std::string_view key) {
    uint64_t hash = 0x9e3779b97f4a7c15ULL ^ key.size();
    size_t at = 0;
    for (; at + 8 <= key.size(); at += 8) {
      uint64_t word;
      std::memcpy(&word, key.data() + at, 8);
      hash = Fold(hash ^ word);
    }
    // The last 1-7 bytes as wyhash reads them: two overlapping 4-byte loads,
    // or three single bytes; no call to a variable-length memcpy.
    const size_t rest = key.size() - at;
    const auto* p = reinterpret_cast<const unsigned char*>(key.data() + at);
    uint64_t tail = 0;
    if (rest >= 4) {
      uint32_t first, last;
      std::memcpy(&first, p, 4);
      std::memcpy(&last, p + rest - 4, 4);
      tail = (uint64_t{first} << 32) | last;
    } else if (rest > 0) {
      tail = (uint64_t{p[0]} << 16) | (uint64_t{p[rest / 2]} << 8) | p[rest - 1];
    }
    return Fold(hash ^ tail);
  }
  static uint64_t Fold(uint64_t x) {
    const unsigned __int128 product = static_cast<unsigned __int128>(x) * 0xa0761d6478bd642fULL;
    return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
  }

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
