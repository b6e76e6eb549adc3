#include "tools/electsim/external/step_process.h"

#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include "fmt/format.h"

extern char** environ;

namespace electsim::external {
namespace {

constexpr size_t kMaxLineBytes = size_t{1} << 20;

std::string Errno(int error) { return std::strerror(error); }

// Killed processes not yet reaped. A killed process takes a while to go (its
// threads, its memory); waiting for each would hold the simulation up, so
// they are reaped whenever a process starts or ends, without waiting.
std::mutex unreaped_mutex;
std::vector<pid_t> unreaped;

void ReapWhatHasEnded() {
  std::lock_guard lock(unreaped_mutex);
  std::erase_if(unreaped, [](pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, WNOHANG) != 0;  // ended, or no longer ours
  });
}

// A node process and the simulation that drives it take turns and never run
// at once. On one CPU each step is a switch between the two; across two CPUs
// it is a wake-up of the other CPU, which made a step twice as slow
// (results/performance.md, "External nodes"). So each thread that runs
// simulations with external nodes keeps to one CPU of those allowed, and its
// node processes inherit it. Where the simulation runs changes nothing in
// what it does.
//
// The thread takes the allowed CPU that the fewest live threads of this
// process keep to, nearest after the one the scheduler has put it on. Counted
// from the first allowed CPU instead, every electsim process running at once
// (ctest -j, GNU parallel shards) would keep to that CPU and leave the others
// idle; taken in turn, two threads still running could share one.
class CpuKeeper {
 public:
  ~CpuKeeper() {
    if (cpu_ < 0) return;
    std::lock_guard lock(mutex_);
    --kept_[static_cast<size_t>(cpu_)];
  }

  void Keep() {
    if (tried_) return;
    tried_ = true;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
    const int current = std::max(0, sched_getcpu());
    std::lock_guard lock(mutex_);
    int best = -1;
    for (int step = 0; step < CPU_SETSIZE; ++step) {
      const int cpu = (current + step) % CPU_SETSIZE;
      if (CPU_ISSET(cpu, &allowed) &&
          (best < 0 || kept_[static_cast<size_t>(cpu)] < kept_[static_cast<size_t>(best)])) {
        best = cpu;
      }
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(best, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) return;
    cpu_ = best;
    ++kept_[static_cast<size_t>(best)];
  }

 private:
  bool tried_ = false;
  int cpu_ = -1;
  static inline std::mutex mutex_;
  static inline std::array<int, CPU_SETSIZE> kept_{};
};

void KeepToOneCpu() {
  thread_local CpuKeeper keeper;
  keeper.Keep();
}

}  // namespace

absl::StatusOr<std::unique_ptr<StepProcess>> StepProcess::Start(const std::vector<std::string>& argv,
                                                                int64_t budget_ms) {
  if (argv.empty()) return absl::InvalidArgumentError("an empty command");
  ReapWhatHasEnded();
  KeepToOneCpu();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::UnavailableError(fmt::format("cannot start {}: socketpair: {}", argv[0], Errno(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  // dup2 clears close-on-exec on the copies: the child keeps only 0, 1 and 2.
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // Its own process group, so a Ctrl-C meant for electsim does not kill the
  // nodes under it (electsim stops cleanly and kills them itself), and
  // default signal handling whatever electsim set up.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return absl::UnavailableError(fmt::format("cannot start {}: {}", argv[0], Errno(spawned)));
  }
  // The budget is a watchdog on real time: it decides only whether a run
  // ends with an error, never what a run does.
  timeval timeout{.tv_sec = static_cast<time_t>(budget_ms / 1000),
                  .tv_usec = static_cast<suseconds_t>(budget_ms % 1000 * 1000)};
  setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return std::unique_ptr<StepProcess>(new StepProcess(pid, fds[0], budget_ms));
}

StepProcess::~StepProcess() {
  close(fd_);
  if (!reaped_) {
    // A crash of the node is this kill: nothing it has not written survives.
    kill(pid_, SIGKILL);
    std::lock_guard lock(unreaped_mutex);
    unreaped.push_back(pid_);
  }
  ReapWhatHasEnded();
}

absl::Status StepProcess::WriteLine(std::string_view line) {
  std::string framed;
  framed.reserve(line.size() + 1);
  framed.append(line);
  framed.push_back('\n');
  size_t sent = 0;
  while (sent < framed.size()) {
    const ssize_t n = send(fd_, framed.data() + sent, framed.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::AbortedError(fmt::format("cannot write to the process ({}); it {}", Errno(errno), HowItEnded()));
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> StepProcess::ReadLine() {
  // Drop the line handed out last time, now that the caller is done with it.
  if (line_start_ > 0) {
    buffer_.erase(0, line_start_);
    line_start_ = 0;
  }
  while (true) {
    const size_t newline = buffer_.find('\n', scanned_);
    if (newline != std::string::npos) {
      line_start_ = newline + 1;
      scanned_ = 0;
      return std::string_view(buffer_).substr(0, newline);
    }
    scanned_ = buffer_.size();
    if (buffer_.size() > kMaxLineBytes) return absl::AbortedError("wrote a line of more than 1 MiB");
    // One blocking read, bounded by the socket's receive timeout (the
    // budget): a poll first would double the system calls of every step.
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return absl::AbortedError(fmt::format("wrote nothing for the step budget of {} ms", budget_ms_));
      }
      return absl::AbortedError(fmt::format("cannot read from the process ({}); it {}", Errno(errno), HowItEnded()));
    }
    if (n == 0) {
      return absl::AbortedError(buffer_.empty() ? fmt::format("ended: it {}", HowItEnded())
                                                : fmt::format("ended within a line: it {}", HowItEnded()));
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string StepProcess::HowItEnded() {
  int status = 0;
  // The socket's end came first; the exit follows within moments.
  pid_t waited = -1;
  for (int attempt = 0; attempt < 100; ++attempt) {
    waited = waitpid(pid_, &status, WNOHANG);
    if (waited != 0) break;
    usleep(10000);
  }
  if (waited != pid_) return "is still running";
  reaped_ = true;
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

}  // namespace electsim::external
