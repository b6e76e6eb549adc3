#include "electsim/sim/check.h"

#include <cstdio>
#include <cstdlib>

namespace sim::internal {

void CheckFailed(const char* file, int line, const char* condition, const char* message) {
  // stdio rather than iostream: it needs no initialised state and does not
  // allocate, so it works however broken the process already is.
  std::fprintf(stderr, "%s:%d: SIM_CHECK failed: %s: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace sim::internal
