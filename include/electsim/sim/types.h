// Strong value types shared by every layer. Mixing a node id with a term or a
// time with a token must not compile: those mix-ups are exactly the bugs a
// simulator of elections is built to find elsewhere.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace sim {

// An integer wrapped so that values of different meanings cannot be mixed.
template <typename Tag, typename Rep>
class StrongInt {
 public:
  using rep = Rep;
  constexpr StrongInt() = default;
  constexpr explicit StrongInt(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }
  friend constexpr auto operator<=>(StrongInt, StrongInt) = default;

 private:
  Rep value_{};
};

struct NodeIdTag {};
struct TermTag {};
struct FencingTokenTag {};

// Index of a simulated process, dense from 0.
using NodeId = StrongInt<NodeIdTag, uint32_t>;
// An election round: Raft's term, Bully/Ring's epoch, a lease's acquisition.
using Term = StrongInt<TermTag, uint64_t>;
// Token a leader attaches to writes so storage can reject stale leaders.
using FencingToken = StrongInt<FencingTokenTag, uint64_t>;

inline constexpr NodeId kNoNode{std::numeric_limits<uint32_t>::max()};

// Virtual time (an instant or a span) in integer nanoseconds. Integer so that
// every machine and compiler computes exactly the same schedule.
class TimeNs {
 public:
  constexpr TimeNs() = default;
  constexpr explicit TimeNs(int64_t ns) : ns_(ns) {}
  constexpr int64_t ns() const { return ns_; }

  static constexpr TimeNs Micros(int64_t us) { return TimeNs(us * 1000); }
  static constexpr TimeNs Millis(int64_t ms) { return TimeNs(ms * 1000000); }
  static constexpr TimeNs Seconds(int64_t s) { return TimeNs(s * 1000000000); }
  static constexpr TimeNs Max() { return TimeNs(std::numeric_limits<int64_t>::max()); }

  friend constexpr auto operator<=>(TimeNs, TimeNs) = default;
  friend constexpr TimeNs operator+(TimeNs a, TimeNs b) { return TimeNs(a.ns_ + b.ns_); }
  friend constexpr TimeNs operator-(TimeNs a, TimeNs b) { return TimeNs(a.ns_ - b.ns_); }
  friend constexpr TimeNs operator*(TimeNs a, int64_t k) { return TimeNs(a.ns_ * k); }
  friend constexpr TimeNs operator/(TimeNs a, int64_t k) { return TimeNs(a.ns_ / k); }
  constexpr TimeNs& operator+=(TimeNs b) {
    ns_ += b.ns_;
    return *this;
  }
  constexpr TimeNs& operator-=(TimeNs b) {
    ns_ -= b.ns_;
    return *this;
  }

 private:
  int64_t ns_ = 0;
};

}  // namespace sim
