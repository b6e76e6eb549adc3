// The one progress line of every long command (sweep, fuzz, bench,
// check-guarantees). On a terminal it rewrites one line of standard error as
// units finish; elsewhere (a CI log) it prints a line of its own at 16, 32,
// 64, ... units and at least every 10 seconds, so that a log stays short
// however long the run and still shows that it is alive.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace electsim::campaign {

class Progress {
 public:
  // `unit` names what is counted ("seeds", "trials"); `total` 0: not known
  // beforehand (a time budget decides).
  Progress(std::string label, std::string unit, uint64_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // From any thread, once per finished unit.
  void UnitDone(bool failed);
  // Before a line of its own is printed: takes the rewritten line away.
  void Clear();
  double ElapsedSeconds() const;
  uint64_t done() const { return done_.load(); }

 private:
  std::string Text(uint64_t done) const;
  bool Due(uint64_t done);

  const std::string label_;
  const std::string unit_;
  const uint64_t total_;
  const bool terminal_;
  const std::chrono::steady_clock::time_point started_;
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> failed_{0};
  std::mutex mutex_;
  double last_line_s_ = 0;  // under mutex_
  bool shown_ = false;      // a rewritten line is on the terminal; under mutex_
};

}  // namespace electsim::campaign
