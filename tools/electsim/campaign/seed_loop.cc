#include "tools/electsim/campaign/seed_loop.h"

#include <new>

#include "fmt/format.h"
#include "tools/electsim/io/termination.h"

namespace electsim::campaign {
namespace {

// What a worker threw, as the status the command reports.
absl::Status StatusOf(const std::exception_ptr& thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception& error) {
    return absl::UnknownError(fmt::format("stopped by an unexpected error: {}", error.what()));
  } catch (...) {
    return absl::UnknownError("stopped by an unexpected error");
  }
}

}  // namespace

SeedLoop::SeedLoop(LoopSettings settings, Progress* progress)
    : settings_(settings), progress_(progress), started_(std::chrono::steady_clock::now()) {}

bool SeedLoop::Stopping() const { return stop_.load(std::memory_order_relaxed) || StopSignal() != 0; }

bool SeedLoop::StartsMore() const {
  if (Stopping()) return false;
  if (OutOfTime()) return false;
  return cut_.load(std::memory_order_relaxed) == UINT64_MAX;
}

bool SeedLoop::OutOfTime() const {
  if (!settings_.time_budget_s) return false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >= *settings_.time_budget_s;
}

void SeedLoop::Fail(uint64_t unit, absl::Status error) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_unit_ || unit < *error_unit_) {
      error_unit_ = unit;
      error_ = std::move(error);
      thrown_ = nullptr;
    }
  }
  stop_.store(true);
}

void SeedLoop::Threw(uint64_t unit) {
  // Nothing here may allocate: the exception may be that memory ran out.
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_unit_ || unit < *error_unit_) {
      error_unit_ = unit;
      thrown_ = std::current_exception();
    }
  }
  stop_.store(true);
}

void SeedLoop::RunBatch(uint64_t start, uint64_t count, bool stop_at_failure,
                        const std::function<UnitState(uint64_t)>& run_one) {
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    // Nothing may leave a worker: an exception there would end the process
    // without removing its temporary files.
    uint64_t unit = start;
    try {
      while (!Stopping()) {
        const uint64_t i = next.fetch_add(1);
        if (i >= count || start + i > cut_.load(std::memory_order_relaxed) || OutOfTime()) return;
        unit = start + i;
        if (run_one(i) == UnitState::kFailed && stop_at_failure) {
          uint64_t seen = cut_.load();
          while (unit < seen && !cut_.compare_exchange_weak(seen, unit)) {
          }
        }
      }
    } catch (...) {
      Threw(unit);
    }
  };
  if (!workers_) workers_.emplace(settings_.jobs);
  workers_->Run(worker);
}

LoopResult SeedLoop::Ending(uint64_t folded, uint64_t total, bool fold_stopped) {
  LoopResult result;
  result.folded = folded;
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_unit_ && *error_unit_ >= folded) {
    result.end = LoopEnd::kError;
    result.error = thrown_ ? StatusOf(thrown_) : error_;
    result.error_unit = *error_unit_;
  } else if (folded == total && !fold_stopped) {
    result.end = LoopEnd::kDone;
  } else if (StopSignal() != 0) {
    result.end = LoopEnd::kSignal;
  } else if (fold_stopped) {
    result.end = LoopEnd::kFoldStopped;
  } else if (cut_.load() != UINT64_MAX) {
    result.end = LoopEnd::kFoldStopped;
  } else if (OutOfTime()) {
    result.end = LoopEnd::kTimeBudget;
  }
  return result;
}

}  // namespace electsim::campaign
