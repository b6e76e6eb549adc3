#include "tools/electsim/campaign/seeds.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/json_document.h"

namespace electsim::campaign {
namespace {

constexpr uint64_t kLargestSeed = std::numeric_limits<uint64_t>::max();

absl::Status Expected(std::string_view flag, std::string_view expected, std::string_view got) {
  return InputError(fmt::format("{}: expected {}; got \"{}\"", flag, expected, EscapeForTerminal(got)));
}

// Decimal digits only: from_chars alone would take "-1" as an error but
// CLI11 would not, and " 3" or "+3" must not pass either.
std::optional<uint64_t> Digits(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

absl::StatusOr<uint64_t> ParseSeed(std::string_view flag, std::string_view text) {
  const auto seed = Digits(text);
  if (!seed) return Expected(flag, fmt::format("a seed: an integer in [0, {}]", kLargestSeed), text);
  return *seed;
}

absl::StatusOr<SeedRange> SeedRange::Parse(std::string_view flag, std::string_view text) {
  const size_t dots = text.find("..");
  const std::string expected = fmt::format("A..B, two seeds in [0, {}] with A <= B", kLargestSeed);
  if (dots == std::string_view::npos) return Expected(flag, expected, text);
  const auto first = Digits(text.substr(0, dots));
  const auto last = Digits(text.substr(dots + 2));
  if (!first || !last) return Expected(flag, expected, text);
  if (*last < *first) return Expected(flag, "A..B with A <= B (a reversed range runs no seed)", text);
  if (*first == 0 && *last == kLargestSeed) {
    return Expected(
        flag, fmt::format("at most {} seeds (all 2^64 cannot be counted); e.g. 0..{}", kLargestSeed, kLargestSeed - 1),
        text);
  }
  return SeedRange(*first, *last);
}

absl::StatusOr<SeedRange> SeedRange::FromCount(std::string_view flag, uint64_t first, uint64_t count) {
  if (count == 0) return InputError(fmt::format("{}: expected at least 1 seed; got 0", flag));
  if (first > kLargestSeed - (count - 1)) {
    return InputError(
        fmt::format("{}: {} seeds from seed {}: the range runs past the largest seed {}; expected a range within it",
                    flag, count, first, kLargestSeed));
  }
  return SeedRange(first, first + (count - 1));
}

absl::StatusOr<SeedRange> SeedRange::ParseCountOrRange(std::string_view flag, std::string_view text, uint64_t first) {
  if (IsRangeText(text)) return Parse(flag, text);
  const auto count = Digits(text);
  if (!count) {
    return Expected(flag,
                    fmt::format("a number of seeds (counted from seed {}) or a range A..B of seeds in [0, {}]", first,
                                kLargestSeed),
                    text);
  }
  return FromCount(flag, first, *count);
}

SeedRange SeedRange::Between(uint64_t first, uint64_t last) { return SeedRange(first, std::max(first, last)); }

std::string SeedRange::ToString() const { return fmt::format("{}..{}", first_, last_); }

absl::StatusOr<Shard> Shard::Parse(std::string_view flag, std::string_view text) {
  const size_t slash = text.find('/');
  const auto index = slash == std::string_view::npos ? std::nullopt : Digits(text.substr(0, slash));
  const auto count = slash == std::string_view::npos ? std::nullopt : Digits(text.substr(slash + 1));
  if (!index || !count || *index < 1 || *index > *count || *count > kMaxCount) {
    return Expected(flag, fmt::format("K/N with 1 <= K <= N <= {}", kMaxCount), text);
  }
  return Shard(*index, *count);
}

absl::StatusOr<Shard> Shard::Make(uint64_t index, uint64_t count) {
  if (index < 1 || index > count || count > kMaxCount) {
    return InputError(fmt::format("shard {}/{}: expected K/N with 1 <= K <= N <= {}", index, count, kMaxCount));
  }
  return Shard(index, count);
}

uint64_t Shard::SizeIn(const SeedRange& range) const {
  const uint64_t offset = index_ - 1;
  const uint64_t span = range.last() - range.first();  // size - 1, which cannot overflow
  return span < offset ? 0 : (span - offset) / count_ + 1;
}

uint64_t Shard::SeedAt(const SeedRange& range, uint64_t i) const { return range.first() + (index_ - 1) + i * count_; }

bool Shard::Holds(const SeedRange& range, uint64_t seed) const {
  return range.Contains(seed) && (seed - range.first()) % count_ == index_ - 1;
}

std::string Shard::ToString() const { return fmt::format("{}/{}", index_, count_); }

absl::StatusOr<SeedPlan> SeedPlan::Make(SeedRange range, Shard shard) {
  if (shard.SizeIn(range) == 0) {
    return InputError(fmt::format("--shard {}: the range {} has fewer seeds than {} shards; expected at most {} shards",
                                  shard.ToString(), range.ToString(), shard.count(), range.size()));
  }
  return SeedPlan{range, shard};
}

}  // namespace electsim::campaign
