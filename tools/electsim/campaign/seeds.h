// Which seeds a campaign runs: a checked range "A..B" of seeds, and the
// shard "K/N" of it that this process runs. Every command that runs many
// seeds (sweep, fuzz, check-guarantees, merge) reads and checks them here,
// so an empty, reversed, negative or overflowing range is refused the same
// way everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace electsim::campaign {

// A seed as the command line writes it: decimal digits only, at most
// 2^64 - 1 ("-1" and " 3" are refused, not wrapped or trimmed).
absl::StatusOr<uint64_t> ParseSeed(std::string_view flag, std::string_view text);

// Seeds first..last, both included. The full 2^64 seeds cannot be counted in
// 64 bits and are refused; every other non-empty range is allowed.
class SeedRange {
 public:
  // "A..B" with A <= B.
  static absl::StatusOr<SeedRange> Parse(std::string_view flag, std::string_view text);
  // `count` seeds from `first`; the count must be at least 1 and the range
  // must end at or below 2^64 - 1.
  static absl::StatusOr<SeedRange> FromCount(std::string_view flag, uint64_t first, uint64_t count);
  // What a --seeds flag says: a range "A..B" as Parse reads it, or a number
  // of seeds N, the seeds first..first + N - 1 (FromCount), so that sweep and
  // fuzz take the same two forms.
  static absl::StatusOr<SeedRange> ParseCountOrRange(std::string_view flag, std::string_view text, uint64_t first);
  // Whether `text` is meant as a range (it has ".."), not as a number of seeds.
  static bool IsRangeText(std::string_view text) { return text.find("..") != std::string_view::npos; }
  // Seeds `first`..`last`; the caller has checked first <= last.
  static SeedRange Between(uint64_t first, uint64_t last);

  uint64_t first() const { return first_; }
  uint64_t last() const { return last_; }
  uint64_t size() const { return last_ - first_ + 1; }
  bool Contains(uint64_t seed) const { return seed >= first_ && seed <= last_; }
  std::string ToString() const;  // "A..B"
  friend bool operator==(const SeedRange&, const SeedRange&) = default;

 private:
  SeedRange(uint64_t first, uint64_t last) : first_(first), last_(last) {}
  uint64_t first_;
  uint64_t last_;
};

// Shard `index` of `count` runs the seeds first + index - 1 + i * count: the
// shards of one range are disjoint and together the whole range.
class Shard {
 public:
  static constexpr uint64_t kMaxCount = 1'000'000;
  // "K/N" with 1 <= K <= N <= kMaxCount.
  static absl::StatusOr<Shard> Parse(std::string_view flag, std::string_view text);
  static absl::StatusOr<Shard> Make(uint64_t index, uint64_t count);
  Shard() = default;

  uint64_t index() const { return index_; }
  uint64_t count() const { return count_; }
  bool whole() const { return count_ == 1; }
  // How many seeds of `range` this shard runs, and the i-th of them.
  uint64_t SizeIn(const SeedRange& range) const;
  uint64_t SeedAt(const SeedRange& range, uint64_t i) const;
  bool Holds(const SeedRange& range, uint64_t seed) const;
  std::string ToString() const;  // "K/N"
  friend bool operator==(const Shard&, const Shard&) = default;

 private:
  Shard(uint64_t index, uint64_t count) : index_(index), count_(count) {}
  uint64_t index_ = 1;
  uint64_t count_ = 1;
};

// The seeds of one process: a range and its shard. A shard that would run
// no seed at all (more shards than seeds) is refused.
struct SeedPlan {
  SeedRange range = SeedRange::Between(1, 1);
  Shard shard;
  uint64_t size() const { return shard.SizeIn(range); }
  uint64_t SeedAt(uint64_t i) const { return shard.SeedAt(range, i); }
  bool Holds(uint64_t seed) const { return shard.Holds(range, seed); }
  static absl::StatusOr<SeedPlan> Make(SeedRange range, Shard shard);
};

}  // namespace electsim::campaign
