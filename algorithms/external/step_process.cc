#include "algorithms/external/step_process.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

extern char** environ;

namespace algorithms::external {
namespace {

constexpr size_t kMaxLineBytes = size_t{1} << 20;

std::string Errno(int error) { return std::strerror(error); }

}  // namespace

absl::StatusOr<std::unique_ptr<StepProcess>> StepProcess::Start(const std::vector<std::string>& argv,
                                                                std::chrono::milliseconds budget) {
  if (argv.empty()) return absl::InvalidArgumentError("an empty command");
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
  return std::unique_ptr<StepProcess>(new StepProcess(pid, fds[0], budget));
}

StepProcess::~StepProcess() {
  close(fd_);
  if (!reaped_) {
    // A crash of the node is this kill: nothing it has not written survives.
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
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
  // The budget is a watchdog on real time: it decides only whether a run
  // ends with an error, never what a run does.
  const auto deadline = std::chrono::steady_clock::now() + budget_;
  while (true) {
    const size_t newline = buffer_.find('\n', scanned_);
    if (newline != std::string::npos) {
      line_start_ = newline + 1;
      scanned_ = 0;
      return std::string_view(buffer_).substr(0, newline);
    }
    scanned_ = buffer_.size();
    if (buffer_.size() > kMaxLineBytes) return absl::AbortedError("wrote a line of more than 1 MiB");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return absl::AbortedError(fmt::format("gave no answer within the step budget of {} ms", budget_.count()));
    }
    pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
    const int polled = poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno != EINTR) return absl::AbortedError(fmt::format("poll: {}", Errno(errno)));
    if (polled <= 0) continue;
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
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
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

}  // namespace algorithms::external
