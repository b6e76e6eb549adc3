#include "tools/electsim/campaign/progress.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "fmt/format.h"

namespace electsim::campaign {
namespace {
constexpr double kLogEvery_s = 10;
}  // namespace

Progress::Progress(std::string label, std::string unit, uint64_t total)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      terminal_(isatty(STDERR_FILENO) != 0),
      started_(std::chrono::steady_clock::now()) {}

double Progress::ElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void Progress::UnitDone(bool failed) {
  if (failed) failed_.fetch_add(1);
  const uint64_t done = done_.fetch_add(1) + 1;
  // Cheap checks first: most units print nothing.
  if (terminal_ ? (done % 16 != 0 && done != total_) : ((done & (done - 1)) != 0 && done % 64 != 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!Due(done)) return;
  if (terminal_) {
    std::cerr << "\r" << Text(done) << "\033[K" << std::flush;
    shown_ = true;
  } else {
    std::cerr << Text(done) << "\n" << std::flush;
  }
}

// Off a terminal: at 16, 32, 64, ... units, and every 10 seconds (checked at
// every 64th unit).
bool Progress::Due(uint64_t done) {
  if (terminal_) return true;
  const double now = ElapsedSeconds();
  const bool power_of_two = done >= 16 && (done & (done - 1)) == 0;
  if (!power_of_two && now < last_line_s_ + kLogEvery_s) return false;
  last_line_s_ = now;
  return true;
}

std::string Progress::Text(uint64_t done) const {
  const double seconds = ElapsedSeconds();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  std::string text = total_ > 0 ? fmt::format("{}: {}/{} {}", label_, done, total_, unit_)
                                : fmt::format("{}: {} {}", label_, done, unit_);
  text += fmt::format(", {:.1f}/s", rate);
  if (const uint64_t failed = failed_.load(); failed > 0) text += fmt::format(", {} failed", failed);
  if (total_ > 0 && rate > 0) {
    text += fmt::format(", ETA {:.0f}s", static_cast<double>(total_ - std::min(done, total_)) / rate);
  }
  return text;
}

void Progress::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!terminal_ || !shown_) return;
  std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace electsim::campaign
