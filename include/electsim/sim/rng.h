// The simulation's only source of randomness: xoshiro256** seeded through
// SplitMix64, with integer-only bounded draws. Fully specified here so that a
// seed means the same run on every compiler and standard library (the <random>
// distributions are implementation-defined and are therefore never used).
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "electsim/sim/types.h"

namespace sim {

// SplitMix64 step: expands one 64-bit seed into well-mixed state words.
constexpr uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a of a name, used to derive independent streams from (seed, name).
uint64_t HashName(std::string_view name);
// FNV-1a continued over `more` from `prefix_hash`, the hash of a prefix:
// ExtendNameHash(HashName(a), b) == HashName(a + b). Lets a family of names
// ("network/link/<from>/<to>") hash in time independent of its prefix.
uint64_t ExtendNameHash(uint64_t prefix_hash, std::string_view more);
// The same over the decimal digits of `value`, as fmt::format("{}") writes them.
uint64_t ExtendNameHashDecimal(uint64_t prefix_hash, uint64_t value);

// A probability held as an integer fraction of 2^32, so a Bernoulli draw is an
// integer comparison. Constructed from a double only through validation.
class Probability {
 public:
  static constexpr uint64_t kOne = uint64_t{1} << 32;
  constexpr Probability() = default;
  static constexpr Probability Never() { return Probability(0); }
  static constexpr Probability Always() { return Probability(kOne); }
  // Rejects NaN and values outside [0, 1].
  static absl::StatusOr<Probability> FromDouble(double p);
  static constexpr Probability FromParts(uint64_t parts_of_2_32) { return Probability(parts_of_2_32); }
  constexpr uint64_t parts() const { return parts_; }
  double ToDouble() const { return static_cast<double>(parts_) / static_cast<double>(kOne); }
  friend constexpr bool operator==(Probability, Probability) = default;

 private:
  constexpr explicit Probability(uint64_t parts) : parts_(parts) {}
  uint64_t parts_ = 0;
};

class Rng {
 public:
  // Inline and constexpr: a stream's placeholder seed (Rng{0}, replaced
  // before any draw) folds to constants, and a derived stream's seeding
  // inlines into its derivation.
  constexpr explicit Rng(uint64_t seed) : s_{} {
    uint64_t state = seed;
    for (uint64_t& word : s_) word = SplitMix64(state);
  }
  // An independent stream: its draws do not move when another stream is used
  // more or less, which is what lets two runs share "the same weather".
  static Rng ForStream(uint64_t seed, std::string_view stream_name);
  // ForStream for a name given by its hash (HashName or ExtendNameHash).
  static Rng ForStreamHash(uint64_t seed, uint64_t stream_name_hash);

  uint64_t Next();
  // Uniform in [0, bound); bound must be > 0. Lemire's multiply-shift with
  // rejection, so there is no modulo bias.
  uint64_t Below(uint64_t bound);
  // Uniform in [lo, hi] inclusive; requires lo <= hi.
  int64_t Between(int64_t lo, int64_t hi);
  bool Chance(Probability p);
  // Uniform in (0, 1], from the top 53 bits: never 0, so log() is safe.
  double UnitOpenZero();
  // Exponentially distributed with the given mean, rounded down, in ns.
  TimeNs Exponential(TimeNs mean);
  // Pareto with scale (minimum) and shape alpha given as alpha_milli/1000.
  TimeNs Pareto(TimeNs scale, int64_t alpha_milli);

  // Whether two streams stand at the same point (their next draws are the same).
  friend bool operator==(const Rng&, const Rng&) = default;

 private:
  uint64_t s_[4];
};

// log and exp from +, -, *, / only: IEEE-754 makes those exact-rounded, so the
// results do not depend on the libm version (build with -ffp-contract=off).
double DeterministicLog(double x);
double DeterministicExp(double x);

}  // namespace sim
