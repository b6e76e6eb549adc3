// Runs the electsim binary as a child process for the CLI tests: with its
// standard output and error apart, redirected to files, or under a file size
// limit; started, watched and signalled while it runs.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace electsim_test {

namespace fs = std::filesystem;

inline std::string ShippedScenario(const std::string& name) {
  return std::string(ELECTSIM_SOURCE_DIR) + "/scenarios/" + name;
}

// A repro file committed under results/repros.
inline std::string CommittedRepro(const std::string& name) {
  return std::string(ELECTSIM_SOURCE_DIR) + "/results/repros/" + name;
}

// The fields of a CSV file's rows, RFC 4180: quoted fields may hold commas,
// doubled quotes and line breaks.
inline std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

inline std::string ReadWholeFile(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

// A fresh, empty folder per test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // The process id too: two checkouts may run the same test at once.
    dir_ = fs::path(::testing::TempDir()) / ("electsim-" + std::string(info->test_suite_name()) + "-" +
                                             std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // A failed test's files stay, to look at.
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // A folder apart from the inputs, for what the commands write.
  fs::path OutDir() const {
    const fs::path out = dir_ / "out";
    fs::create_directories(out);
    return out;
  }
  // The names in a folder, sorted, hidden ones (temporary files) included.
  static std::vector<std::string> Names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

struct SpawnOptions {
  std::optional<std::string> stdout_file;  // else a pipe the test reads
  std::optional<std::string> stderr_file;
  std::optional<rlim_t> file_size_limit_bytes;      // RLIMIT_FSIZE: writes past it fail with EFBIG
  std::optional<rlim_t> address_space_limit_bytes;  // RLIMIT_AS: allocations past it fail
};

// A running electsim.
class ElectsimProcess {
 public:
  ElectsimProcess(const std::vector<std::string>& args, const SpawnOptions& options = {}) {
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (!options.stdout_file && pipe(out_pipe) != 0) return;
    if (!options.stderr_file && pipe(err_pipe) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      auto redirect = [](const std::optional<std::string>& file, int pipe_ends[2], int fd) {
        const int target = file ? open(file->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : pipe_ends[1];
        dup2(target, fd);
      };
      redirect(options.stdout_file, out_pipe, STDOUT_FILENO);
      redirect(options.stderr_file, err_pipe, STDERR_FILENO);
      for (const auto& [resource, bytes] : {std::pair{RLIMIT_FSIZE, options.file_size_limit_bytes},
                                            std::pair{RLIMIT_AS, options.address_space_limit_bytes}}) {
        if (!bytes) continue;
        const rlimit limit{*bytes, *bytes};
        setrlimit(resource, &limit);
      }
      // The test runner's own dispositions must not leak into the child.
      for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ}) signal(signal_number, SIG_DFL);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(ELECTSIM_BINARY));
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      execv(ELECTSIM_BINARY, argv.data());
      _exit(127);
    }
    for (int fd : {out_pipe[1], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
  }
  ~ElectsimProcess() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  ElectsimProcess(const ElectsimProcess&) = delete;
  ElectsimProcess& operator=(const ElectsimProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Whether it has ended (it stays to be reaped by Wait).
  bool Exited() const {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
  }

  // Reads standard output until it holds `text`; false if it ended first.
  bool WaitForOutput(const std::string& text) {
    while (out_.find(text) == std::string::npos) {
      if (!ReadSome()) return false;
    }
    return true;
  }

  // The same for standard error.
  bool WaitForError(const std::string& text) {
    while (err_.find(text) == std::string::npos) {
      if (!ReadSome()) return false;
    }
    return true;
  }

  // Reads both streams to their end and reaps the process. The exit status,
  // or -N when signal N killed it.
  int Wait() {
    while (ReadSome()) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    for (int fd : {out_fd_, err_fd_}) {
      if (fd >= 0) close(fd);
    }
    out_fd_ = err_fd_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  // Blocks until either open pipe has something; false once both are closed.
  bool ReadSome() {
    std::vector<pollfd> fds;
    for (int fd : {out_fd_, err_fd_}) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    if (fds.empty()) return false;
    if (poll(fds.data(), fds.size(), -1) < 0) return errno == EINTR;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(p.fd, buffer, sizeof buffer);
      std::string& sink = p.fd == out_fd_ ? out_ : err_;
      if (n > 0) {
        sink.append(buffer, static_cast<size_t>(n));
      } else {
        close(p.fd);
        (p.fd == out_fd_ ? out_fd_ : err_fd_) = -1;
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool waited_ = false;
  std::string out_;
  std::string err_;
};

struct Finished {
  int exit_status;
  std::string out;
  std::string err;
};

// Runs electsim to its end.
inline Finished RunElectsim(const std::vector<std::string>& args, const SpawnOptions& options = {}) {
  ElectsimProcess process(args, options);
  const int status = process.Wait();
  return {status, process.out(), process.err()};
}

}  // namespace electsim_test
