#include "bench/alloc_counter.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace bench {
namespace {

// Plain globals: the benchmarks run on one thread.
AllocStats stats;

void* CountedAlloc(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  ++stats.allocations;
  // malloc_usable_size, not `size`: unsized deletes cannot say how much they free.
  stats.live_bytes += static_cast<int64_t>(malloc_usable_size(p));
  if (stats.live_bytes > stats.peak_live_bytes) stats.peak_live_bytes = stats.live_bytes;
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  stats.live_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

AllocStats CurrentAllocStats() { return stats; }
void ResetPeakLiveBytes() { stats.peak_live_bytes = stats.live_bytes; }

}  // namespace bench

void* operator new(std::size_t size) { return bench::CountedAlloc(size); }
void* operator new[](std::size_t size) { return bench::CountedAlloc(size); }
void operator delete(void* p) noexcept { bench::CountedFree(p); }
void operator delete[](void* p) noexcept { bench::CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept { bench::CountedFree(p); }
void operator delete[](void* p, std::size_t) noexcept { bench::CountedFree(p); }
