#include "tools/electsim/io/termination.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "tools/electsim/io/output_file.h"

namespace electsim {
namespace {

std::atomic<int> g_stop_signal{0};
SignalResponse g_response = SignalResponse::kExitNow;

sigset_t TerminatingSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : kTerminatingSignals) sigaddset(&set, signal_number);
  return set;
}

// Only async-signal-safe calls from here on.
[[noreturn]] void ExitNow(int signal_number) {
  RemoveTemporaryOutputFiles();
  _exit(128 + signal_number);
}

void OnTerminatingSignal(int signal_number, siginfo_t* info, void*) {
  // The kernel sends SIGXFSZ from inside the write that crossed the limit,
  // with our own pid as the sender; a SIGXFSZ from anyone else is a request.
  if (signal_number == SIGXFSZ && info != nullptr && info->si_code == SI_USER && info->si_pid == getpid()) return;
  if (g_response == SignalResponse::kExitNow) ExitNow(signal_number);
  int none = 0;
  if (!g_stop_signal.compare_exchange_strong(none, signal_number)) ExitNow(signal_number);  // asked twice
}

}  // namespace

void HandleTerminatingSignals(SignalResponse response) {
  g_response = response;
  struct sigaction action {};
  action.sa_sigaction = OnTerminatingSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  action.sa_mask = TerminatingSet();  // one handler at a time
  for (int signal_number : kTerminatingSignals) sigaction(signal_number, &action, nullptr);
}

int StopSignal() { return g_stop_signal.load(); }

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "a signal";
  }
}

TerminatingSignalsBlocked::TerminatingSignalsBlocked() {
  const sigset_t set = TerminatingSet();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

TerminatingSignalsBlocked::~TerminatingSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

WorkerPool::WorkerPool(unsigned jobs) {
  try {
    TerminatingSignalsBlocked blocked;  // inherited by the workers for good
    for (unsigned j = 0; j < std::max(1u, jobs); ++j) threads_.emplace_back([this] { Work(); });
  } catch (...) {
    Close();
    throw;
  }
}

WorkerPool::~WorkerPool() { Close(); }

void WorkerPool::Close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  task_given_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void WorkerPool::Run(const std::function<void()>& task) {
  std::unique_lock lock(mutex_);
  task_ = &task;
  busy_ = threads_.size();
  ++tasks_given_;
  task_given_.notify_all();
  task_finished_.wait(lock, [this] { return busy_ == 0; });
  task_ = nullptr;
}

void WorkerPool::Work() {
  uint64_t tasks_seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    task_given_.wait(lock, [&] { return closing_ || tasks_given_ != tasks_seen; });
    if (tasks_given_ == tasks_seen) return;  // closing, and no task left to run
    tasks_seen = tasks_given_;
    const std::function<void()>& task = *task_;
    lock.unlock();
    task();
    lock.lock();
    if (--busy_ == 0) task_finished_.notify_one();
  }
}

}  // namespace electsim
