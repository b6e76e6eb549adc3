// The stable-storage keys a run has used, each given a small number on first
// use, so that each node keeps its storage in a vector indexed by that number
// rather than in a string-keyed tree: a write looks its key up once here, and
// a sync moves numbers, not strings (string compares and tree inserts took
// about a fifth of a Raft trial). Like LinkTable it offers no iteration by
// slot: numbers follow first use, which is part of the run, and nothing
// depends on where a key happens to hash. The hash need not be portable
// either: it reads the key in a few native-order loads (HashName's FNV-1a,
// byte by byte, was most of the cost of a write).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/same_bytes.h"
#include "sim/trace.h"

namespace sim {

using StorageKeyId = uint32_t;

class StorageKeys {
 public:
  // The key's number, given it now if it has none.
  StorageKeyId Intern(std::string_view key) {
    const uint64_t hash = Hash(key);
    if (!slots_.empty()) {
      const StorageKeyId id = slots_[Probe(key, hash)];
      if (id != kEmpty) return id;
    }
    return Insert(key, hash);
  }
  // The key's number if any node has used it.
  std::optional<StorageKeyId> Find(std::string_view key) const {
    if (slots_.empty()) return std::nullopt;
    const StorageKeyId id = slots_[Probe(key, Hash(key))];
    return id == kEmpty ? std::nullopt : std::optional<StorageKeyId>(id);
  }
  // No key known, as constructed; the memory stays for the next run's keys
  // (three allocations a run otherwise).
  void Clear() {
    names_.clear();
    hashes_.clear();
    std::fill(slots_.begin(), slots_.end(), kEmpty);
  }
  std::string_view Name(StorageKeyId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  static constexpr StorageKeyId kEmpty = ~StorageKeyId{0};

  // Keys are short ("term", "log.12.id"): the first and last eight bytes
  // (four, or three single bytes, for shorter keys; they may overlap), and
  // any middle words folded in, mixed with the length.
  static uint64_t Hash(std::string_view key) {
    using trace_hash_internal::Mum;
    const char* p = key.data();
    const size_t n = key.size();
    uint64_t first = 0;
    uint64_t last = 0;
    if (n >= 8) {
      first = LoadNative<uint64_t>(p);
      last = LoadNative<uint64_t>(p + n - 8);
      for (size_t at = 8; at + 8 < n; at += 8) {
        first =
            Mum(first ^ trace_hash_internal::kSecret2, LoadNative<uint64_t>(p + at) ^ trace_hash_internal::kSecret3);
      }
    } else if (n >= 4) {
      first = LoadNative<uint32_t>(p);
      last = LoadNative<uint32_t>(p + n - 4);
    } else if (n > 0) {
      first = (uint64_t{static_cast<unsigned char>(p[0])} << 16) |
              (uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) | static_cast<unsigned char>(p[n - 1]);
    }
    return Mum(first ^ trace_hash_internal::kSecret0 ^ n, last ^ trace_hash_internal::kSecret1);
  }

  // The slot that holds `key`, or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const {
    size_t i = hash & mask_;
    while (slots_[i] != kEmpty && !(hashes_[slots_[i]] == hash && SameBytes(names_[slots_[i]], key))) {
      i = (i + 1) & mask_;
    }
    return i;
  }
  // A key seen for the first time: numbered next. Out of line: a run's few
  // keys are each new once and looked up many times.
  [[gnu::noinline]] StorageKeyId Insert(std::string_view key, uint64_t hash) {
    if (names_.size() * 2 >= slots_.size()) Grow();
    const size_t slot = Probe(key, hash);
    slots_[slot] = static_cast<StorageKeyId>(names_.size());
    names_.emplace_back(key);
    hashes_.push_back(hash);
    return slots_[slot];
  }

  void Grow() {
    const size_t capacity = slots_.empty() ? 32 : slots_.size() * 2;
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
  std::vector<std::string> names_;  // by number
  std::vector<uint64_t> hashes_;    // by number
};

}  // namespace sim
