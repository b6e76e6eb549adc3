// SIM_CHECK: the simulator's own invariants, checked in every build type.
// A broken one is a programmer error, not an input error or a protocol bug:
// carrying on would produce a trace that looks valid but is not, so the
// process stops, naming the place and the broken condition. Unlike assert it
// is not compiled out by NDEBUG (TigerBeetle keeps its assertions in
// production for the same reason).
#pragma once

namespace sim::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition, const char* message);
}  // namespace sim::internal

// SIM_CHECK(condition, "what it means") prints "file:line: SIM_CHECK failed:
// condition: what it means" to stderr and aborts when `condition` is false.
#define SIM_CHECK(condition, message)                                        \
  do {                                                                       \
    if (!(condition)) [[unlikely]] {                                         \
      ::sim::internal::CheckFailed(__FILE__, __LINE__, #condition, message); \
    }                                                                        \
  } while (false)
