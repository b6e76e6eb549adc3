// The one loop under every command that runs many simulations (sweep, fuzz,
// bench, check-guarantees). Units 0..total-1 (seeds, or trials) run on
// `jobs` worker threads, each an independent single-threaded simulation;
// their outcomes are folded on the calling thread in unit order, a batch at a
// time, so that memory grows with the jobs and not with the units, and every
// report, file and summary comes out the same whatever the jobs.
//
// It stops starting units on a terminating signal, an error, a time budget,
// or a fold that asks to (a first failure); what it folded is always a
// prefix 0..folded-1 of the units. A worker that runs out of memory (or
// throws anything) stops the loop with an error instead of ending the
// process: the caller reports it, and its output files are whole or absent.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/electsim/campaign/progress.h"
#include "tools/electsim/io/termination.h"

namespace electsim::campaign {

struct LoopSettings {
  unsigned jobs = 1;
  // Units per job in one batch: enough to keep every job busy between the
  // folds, few enough that a batch's outcomes stay small.
  uint64_t batch_per_job = 64;
  std::optional<double> time_budget_s;  // stop starting units after this long
};

enum class LoopEnd {
  kDone,         // every unit folded
  kFoldStopped,  // a fold asked to stop (a first failure)
  kSignal,       // a terminating signal
  kTimeBudget,   // the time budget was spent
  kError,        // a unit's error, or a worker out of memory
};

struct LoopResult {
  LoopEnd end = LoopEnd::kDone;
  uint64_t folded = 0;  // units 0..folded-1 were folded
  absl::Status error;   // kError: the error of the first unit that had one
  uint64_t error_unit = 0;
};

// What the loop calls for one unit. `run` (on a worker) returns the unit's
// outcome, or Cancelled when it was stopped before its end, or another
// error, which stops the loop. `failed` (on a worker, optional) says whether
// an outcome counts as failed for the progress line; with `stop_at_failure`
// no unit after a failed one is started. `fold` (on the calling thread, in
// unit order) returns false to stop after that unit.
template <typename Outcome>
struct UnitCalls {
  std::function<absl::StatusOr<Outcome>(uint64_t unit)> run;
  std::function<bool(uint64_t unit, Outcome& outcome)> fold;
  std::function<bool(const Outcome& outcome)> failed;
  bool stop_at_failure = false;
};

class SeedLoop {
 public:
  // `progress` may be null (no progress line).
  SeedLoop(LoopSettings settings, Progress* progress);
  SeedLoop(const SeedLoop&) = delete;
  SeedLoop& operator=(const SeedLoop&) = delete;

  // For RunOptions::should_stop: true once a signal or an error stops the
  // loop (a time budget or a first failure lets runs in flight finish).
  bool Stopping() const;
  std::function<bool()> StopCheck() const {
    return [this] { return Stopping(); };
  }

  template <typename Outcome>
  LoopResult Run(uint64_t total, const UnitCalls<Outcome>& calls);

 private:
  enum class UnitState { kDone, kFailed, kError };
  // Runs units start..start+count-1 (index i of the batch through `run_one`)
  // on the workers.
  void RunBatch(uint64_t start, uint64_t count, bool stop_at_failure,
                const std::function<UnitState(uint64_t)>& run_one);
  bool StartsMore() const;
  bool OutOfTime() const;
  void Fail(uint64_t unit, absl::Status error);
  // The unit's worker threw (out of memory, most likely): kept as it is.
  void Threw(uint64_t unit);
  LoopResult Ending(uint64_t folded, uint64_t total, bool fold_stopped);

  const LoopSettings settings_;
  Progress* const progress_;
  const std::chrono::steady_clock::time_point started_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> cut_{UINT64_MAX};  // no unit after this one starts
  std::mutex error_mutex_;
  std::optional<uint64_t> error_unit_;  // under error_mutex_
  absl::Status error_;                  // under error_mutex_
  std::exception_ptr thrown_;           // under error_mutex_; wins over error_ when set
  // Started by the first batch, for every batch after it. Last: the workers
  // are joined before anything they read goes.
  std::optional<WorkerPool> workers_;
};

template <typename Outcome>
LoopResult SeedLoop::Run(uint64_t total, const UnitCalls<Outcome>& calls) {
  const uint64_t batch = settings_.batch_per_job * std::max(1u, settings_.jobs);
  uint64_t folded = 0;
  for (uint64_t start = 0; start < total && StartsMore(); start += batch) {
    const uint64_t count = std::min(batch, total - start);
    std::vector<std::optional<Outcome>> outcomes(count);
    RunBatch(start, count, calls.stop_at_failure, [&](uint64_t i) {
      absl::StatusOr<Outcome> outcome = calls.run(start + i);
      if (!outcome.ok()) {
        if (absl::IsCancelled(outcome.status())) return UnitState::kDone;  // stopped: left out
        Fail(start + i, outcome.status());
        return UnitState::kError;
      }
      const bool failed = calls.failed && calls.failed(*outcome);
      outcomes[i] = std::move(*outcome);
      if (progress_ != nullptr) progress_->UnitDone(failed);
      return failed ? UnitState::kFailed : UnitState::kDone;
    });
    for (uint64_t i = 0; i < count; ++i) {
      if (!outcomes[i]) return Ending(folded, total, false);  // the prefix ends where a unit did not finish
      ++folded;
      const bool go_on = calls.fold(start + i, *outcomes[i]);
      outcomes[i].reset();
      if (!go_on) return Ending(folded, total, true);
    }
  }
  return Ending(folded, total, false);
}

}  // namespace electsim::campaign
