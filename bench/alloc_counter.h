// Counts the heap allocations of the whole benchmark binary (alloc_counter.cc
// replaces the global operator new and delete), so a benchmark can report
// allocations per event and the bytes a structure holds.
#pragma once

#include <cstdint>

namespace bench {

struct AllocStats {
  uint64_t allocations = 0;  // calls to operator new since the start
  int64_t live_bytes = 0;    // allocated and not yet freed, as malloc sized them
  int64_t peak_live_bytes = 0;
};

AllocStats CurrentAllocStats();
// Lowers the peak to the bytes live now, so a later peak belongs to what ran since.
void ResetPeakLiveBytes();

}  // namespace bench
