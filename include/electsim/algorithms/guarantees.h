// What an algorithm promises, machine-readably: which safety invariants
// (named as their checkers are) it keeps under which kinds of fault. Bully
// and Ring lose safety under message loss alone; that is their nature, and it
// must be stated rather than discovered. A fuzzer fails a run only on a
// declared guarantee it breaks, so declarations must be true: each one is
// checked by sweeps under every fault kind (build/check-guarantees), and
// anything the theory does not support is left out even when sweeps pass.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace algorithms {

// The kinds of fault a scenario can inflict. A guarantee holds in every run
// whose faults are all of kinds it is declared under; a run without faults
// is one of them.
enum class FaultKind : uint8_t {
  kLoss,         // messages dropped ("drop")
  kDuplication,  // messages delivered twice ("duplicate")
  kLatency,      // delays beyond the algorithm's timeouts, and the reordering they bring
                 // (a latency within them, reordering included, is no fault)
  kPartition,    // groups that cannot reach each other ("partition", "isolate")
  kOneWayCut,    // one direction of a link cut ("cut")
  kCrash,        // a node stops and may restart with its stable storage ("crash", "restart")
  kPowerLoss,    // a crash that also loses stable-storage writes not yet synced
  kPause,        // a node frozen while time goes on ("pause"), GC-like
  kClockDrift,   // clocks running fast or slow ("clock.drift_ppm"): within the bound the algorithm
                 // declares (Algorithm::clock_drift_bound), or any drift when it declares none.
                 // Drift past a declared bound counts as kPause: a pause is drift without bound
  kClockStep,    // a wall clock stepped ("clock.shift")
};
inline constexpr int kFaultKindCount = 10;

// "loss", "duplication", "latency", "partition", "one_way_cut", "crash",
// "power_loss", "pause", "clock_drift", "clock_step".
std::string_view FaultKindName(FaultKind kind);
// Every kind, in declaration order.
const std::vector<FaultKind>& AllFaultKinds();

// A set of fault kinds.
class FaultKinds {
 public:
  constexpr FaultKinds() = default;
  constexpr FaultKinds(std::initializer_list<FaultKind> kinds) {
    for (FaultKind kind : kinds) mask_ |= Bit(kind);
  }
  static constexpr FaultKinds All() {
    FaultKinds all;
    all.mask_ = (uint32_t{1} << kFaultKindCount) - 1;
    return all;
  }
  constexpr FaultKinds With(FaultKinds other) const {
    FaultKinds out;
    out.mask_ = mask_ | other.mask_;
    return out;
  }
  constexpr FaultKinds Without(FaultKinds other) const {
    FaultKinds out;
    out.mask_ = mask_ & ~other.mask_;
    return out;
  }
  constexpr bool Has(FaultKind kind) const { return (mask_ & Bit(kind)) != 0; }
  // Whether every kind of `other` is in this set.
  constexpr bool Covers(FaultKinds other) const { return (other.mask_ & ~mask_) == 0; }
  friend constexpr bool operator==(FaultKinds, FaultKinds) = default;

 private:
  static constexpr uint32_t Bit(FaultKind kind) { return uint32_t{1} << static_cast<int>(kind); }
  uint32_t mask_ = 0;
};

// One invariant the algorithm keeps, and the fault kinds it keeps it under.
struct Guarantee {
  std::string_view invariant;  // a checker's name: "election_safety", ...
  FaultKinds kept_under;
};

// The invariants an algorithm keeps; one not listed is not promised at all,
// not even without faults. They describe the algorithm against a resource
// that checks no tokens ("fencing": false): with fencing on, stale_token
// holds whatever the algorithm does, and with exclusive_token unique_token
// does too.
using Guarantees = std::vector<Guarantee>;

}  // namespace algorithms
