#include "electsim/sim/rng.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "electsim/sim/check.h"

namespace sim {

uint64_t HashName(std::string_view name) { return ExtendNameHash(0xcbf29ce484222325ULL, name); }

uint64_t ExtendNameHash(uint64_t prefix_hash, std::string_view more) {
  uint64_t h = prefix_hash;
  for (unsigned char c : more) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t ExtendNameHashDecimal(uint64_t prefix_hash, uint64_t value) {
  char digits[20];  // UINT64_MAX has 20
  size_t first = sizeof(digits);
  do {
    digits[--first] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  return ExtendNameHash(prefix_hash, std::string_view(digits + first, sizeof(digits) - first));
}

absl::StatusOr<Probability> Probability::FromDouble(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {  // also rejects NaN
    return absl::InvalidArgumentError(absl::StrCat("probability must be within [0, 1], got ", p));
  }
  return Probability(static_cast<uint64_t>(std::llround(p * static_cast<double>(kOne))));
}

Rng Rng::ForStream(uint64_t seed, std::string_view stream_name) { return ForStreamHash(seed, HashName(stream_name)); }

Rng Rng::ForStreamHash(uint64_t seed, uint64_t stream_name_hash) {
  uint64_t mix = stream_name_hash;
  uint64_t derived = SplitMix64(mix) ^ seed;
  return Rng(derived);
}

static inline uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::Next() {
  const uint64_t result = RotateLeft(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = RotateLeft(s_[3], 45);
  return result;
}

uint64_t Rng::Below(uint64_t bound) {
  SIM_CHECK(bound > 0, "Rng::Below needs a bound > 0");
  // Lemire, "Fast Random Integer Generation in an Interval" (2019).
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Rng::Between(int64_t lo, int64_t hi) {
  SIM_CHECK(lo <= hi, "Rng::Between needs lo <= hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(Next());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + Below(span + 1));
}

bool Rng::Chance(Probability p) {
  if (p.parts() == 0) return false;  // consume nothing: a disabled fault leaves the stream alone
  if (p.parts() >= Probability::kOne) return true;
  return (Next() >> 32) < p.parts();
}

double Rng::UnitOpenZero() { return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53; }

TimeNs Rng::Exponential(TimeNs mean) {
  const double draw = -DeterministicLog(UnitOpenZero()) * static_cast<double>(mean.ns());
  if (!(draw < 9.0e18)) return TimeNs(static_cast<int64_t>(9.0e18));  // the cast must stay in range
  return TimeNs(static_cast<int64_t>(draw));
}

TimeNs Rng::Pareto(TimeNs scale, int64_t alpha_milli) {
  // x = scale * U^(-1/alpha) = scale * exp(-ln(U) / alpha)
  const double exponent = -DeterministicLog(UnitOpenZero()) * 1000.0 / static_cast<double>(alpha_milli);
  const double draw = static_cast<double>(scale.ns()) * DeterministicExp(exponent);
  if (!(draw < 9.0e18)) return TimeNs(static_cast<int64_t>(9.0e18));
  return TimeNs(static_cast<int64_t>(draw));
}

namespace {
constexpr double kLn2 = 0.6931471805599453094;
}

double DeterministicLog(double x) {
  // x = m * 2^e with m in [0.5, 1); frexp is exact.
  int exponent = 0;
  double m = std::frexp(x, &exponent);
  if (m < 0.7071067811865476) {
    m *= 2.0;
    exponent -= 1;
  }
  // ln(m) = 2 atanh(t), t = (m-1)/(m+1), |t| < 0.172: the series converges fast.
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;
  double term = t;
  double sum = 0.0;
  for (int k = 1; k < 40; k += 2) {
    sum += term / k;
    term *= t2;
  }
  return 2.0 * sum + exponent * kLn2;
}

double DeterministicExp(double x) {
  if (x > 700.0) x = 700.0;
  if (x < -700.0) return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; exp(r) by Taylor series; ldexp is exact.
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = x - k * kLn2;
  double term = 1.0;
  double sum = 1.0;
  for (int n = 1; n < 30; ++n) {
    term *= r / n;
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(k));
}

}  // namespace sim
