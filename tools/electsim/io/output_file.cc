#include "tools/electsim/io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fmt/format.h"
#include "tools/electsim/io/termination.h"

namespace electsim {
namespace fs = std::filesystem;

namespace {

// Temporary files to remove if a signal ends the process. Plain arrays and
// lock-free flags, because a signal handler may touch nothing else. A slot is
// claimed, filled, then published: the handler reads published slots only.
constexpr size_t kMaxOpenFiles = 8;
constexpr size_t kMaxPathBytes = PATH_MAX;  // longer paths fail in mkstemps first
enum SlotState : int { kFree, kClaimed, kPublished };
std::array<std::array<char, kMaxPathBytes>, kMaxOpenFiles> g_temp_paths;
std::array<std::atomic<int>, kMaxOpenFiles> g_temp_state;

int RegisterTemp(const std::string& temp) {
  if (temp.size() >= kMaxPathBytes) return -1;
  for (size_t i = 0; i < kMaxOpenFiles; ++i) {
    int expected = kFree;
    if (!g_temp_state[i].compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_temp_paths[i].data(), temp.c_str(), temp.size() + 1);
    g_temp_state[i].store(kPublished);
    return static_cast<int>(i);
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temp_state[static_cast<size_t>(slot)].store(kFree);
}

std::string FolderOf(const fs::path& file) {
  const fs::path parent = file.parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

absl::Status CheckWritableFolder(const std::string& what, const std::string& folder) {
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) return absl::InvalidArgumentError(fmt::format("{}: folder {} does not exist", what, folder));
  if (!fs::is_directory(status)) {
    return absl::InvalidArgumentError(fmt::format("{}: {} is not a folder", what, folder));
  }
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: folder {} is not writable: {}", what, folder, std::strerror(errno)));
  }
  // Permission bits do not bind root, and some file systems (sysfs, procfs)
  // refuse new files whatever they say: create one, as the write will.
  std::string probe = fmt::format("{}/.electsim-probe.XXXXXX", folder);
  TerminatingSignalsBlocked blocked;  // no probe left behind
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: folder {} is not writable: {}", what, folder, std::strerror(errno)));
  }
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

// Where writing `path` lands: the file a symbolic link points to, so that the
// link survives and its target gets the new content.
absl::StatusOr<fs::path> ResolveTarget(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return fs::path(path);
  const fs::path target = fs::canonical(path, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        fmt::format("{}: is a symbolic link to a missing file; expected a file path", path));
  }
  return target;
}

// Whether `path` is the regular file that descriptor `fd` writes to: an
// output there would replace the file under the shell's redirection.
bool IsFileOf(int fd, const fs::path& path) {
  struct stat open_file {};
  struct stat named {};
  if (fstat(fd, &open_file) != 0 || !S_ISREG(open_file.st_mode)) return false;
  if (stat(path.c_str(), &named) != 0) return false;
  return open_file.st_dev == named.st_dev && open_file.st_ino == named.st_ino;
}

// The longest legal file name on the file systems electsim writes to.
constexpr size_t kMaxNameBytes = NAME_MAX;
constexpr std::string_view kTempSuffix = ".XXXXXX.tmp";

// Checks that `path` can become an output file (see CheckOutputPath) and
// returns where the file will land.
absl::StatusOr<fs::path> CheckedTarget(const std::string& path, const std::vector<std::string>& inputs,
                                       OutputFolder folder) {
  if (path.empty()) return absl::InvalidArgumentError("an output file path must not be empty");
  std::error_code ec;
  // Followed through links first: /dev/stdout names a pipe or a terminal as
  // often as a file.
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) {
      return absl::InvalidArgumentError(fmt::format("{}: is a folder; expected a file path", path));
    }
    if (!fs::is_regular_file(status)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: is a device, pipe or socket, which would be replaced; expected a file path", path));
    }
    for (const std::string& input : inputs) {
      if (fs::equivalent(path, input, ec)) {
        return absl::InvalidArgumentError(fmt::format("{}: is the input file {}; expected another path", path, input));
      }
    }
    for (const auto& [fd, name] : {std::pair{STDOUT_FILENO, "standard output"}, {STDERR_FILENO, "standard error"}}) {
      if (IsFileOf(fd, path)) {
        return absl::InvalidArgumentError(
            fmt::format("{}: is the file {} goes to, which would be replaced; expected another path", path, name));
      }
    }
  }
  auto target = ResolveTarget(path);
  if (!target.ok()) return target.status();
  if (target->filename().string().size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: the file name is longer than {} bytes, the longest name a folder can hold", path, kMaxNameBytes));
  }
  const std::string target_folder = FolderOf(*target);
  if (folder == OutputFolder::kCreatedOnWrite && !fs::exists(fs::symlink_status(target_folder, ec))) {
    if (auto status = CheckOutputDir(target_folder); !status.ok()) return status;
    return target;
  }
  if (auto status = CheckWritableFolder(path, target_folder); !status.ok()) return status;
  return target;
}

// ".NAME.XXXXXX.tmp" next to the target, cut short enough to be a legal name
// itself when NAME is close to the longest legal name.
std::string TempTemplate(const fs::path& target) {
  const std::string name = target.filename().string();
  const size_t keep = std::min(name.size(), kMaxNameBytes - 1 - kTempSuffix.size());
  return fmt::format("{}/.{}{}", FolderOf(target), name.substr(0, keep), kTempSuffix);
}

}  // namespace

absl::Status CheckOutputDir(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("an output folder must not be empty");
  // The nearest folder that exists must be writable; the rest gets created.
  fs::path existing = dir;
  std::error_code ec;
  while (!fs::exists(fs::symlink_status(existing, ec)) && existing.has_parent_path() &&
         existing.parent_path() != existing) {
    existing = existing.parent_path();
  }
  if (!fs::exists(fs::symlink_status(existing, ec))) existing = ".";
  return CheckWritableFolder(dir, existing.string());
}

absl::Status CheckOutputPath(const std::string& path, const std::vector<std::string>& inputs, OutputFolder folder) {
  return CheckedTarget(path, inputs, folder).status();
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  std::error_code ec_a, ec_b;
  // Absolute first: a relative path whose first part does not exist yet
  // would otherwise stay relative ("t.jsonl" vs "./t.jsonl").
  const fs::path canonical_a = fs::weakly_canonical(fs::absolute(a, ec_a), ec_a);
  const fs::path canonical_b = fs::weakly_canonical(fs::absolute(b, ec_b), ec_b);
  return !ec_a && !ec_b && canonical_a == canonical_b;
}

AtomicOutputFile::AtomicOutputFile(std::string path, std::string target, std::string temp, std::FILE* file, int slot)
    : path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), file_(file), slot_(slot) {}

absl::StatusOr<std::unique_ptr<AtomicOutputFile>> AtomicOutputFile::Open(const std::string& path,
                                                                         const std::vector<std::string>& inputs) {
  auto target = CheckedTarget(path, inputs, OutputFolder::kMustExist);
  if (!target.ok()) return target.status();
  // A fresh name of our own next to the target (same file system, so the
  // rename is atomic), never a fixed "PATH.tmp" that could be someone's file.
  std::string temp = TempTemplate(*target);
  int fd = -1;
  int slot = -1;
  {
    // No signal between creating the file and registering it for clean-up.
    TerminatingSignalsBlocked blocked;
    fd = mkstemps(temp.data(), 4);
    if (fd < 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}: cannot create a file next to it: {}", path, std::strerror(errno)));
    }
    slot = RegisterTemp(temp);
    if (slot < 0) {
      close(fd);
      unlink(temp.c_str());
      return absl::InternalError(fmt::format("{}: more than {} output files open at once", path, kMaxOpenFiles));
    }
  }
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);  // mkstemp makes 0600; the result should look like any new file
  std::FILE* file = fdopen(fd, "wb");
  if (file == nullptr) {
    const int error = errno;
    close(fd);
    unlink(temp.c_str());
    UnregisterTemp(slot);
    return absl::InvalidArgumentError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(error)));
  }
  return std::unique_ptr<AtomicOutputFile>(new AtomicOutputFile(path, target->string(), temp, file, slot));
}

AtomicOutputFile::~AtomicOutputFile() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  unlink(temp_.c_str());
  UnregisterTemp(slot_);
}

void AtomicOutputFile::Write(std::string_view bytes) {
  if (write_errno_ != 0 || file_ == nullptr) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) write_errno_ = errno != 0 ? errno : EIO;
}

absl::Status AtomicOutputFile::Commit() {
  if (file_ == nullptr) return absl::FailedPreconditionError(fmt::format("{}: already committed", path_));
  if (std::fflush(file_) != 0 && write_errno_ == 0) write_errno_ = errno;
  if (std::fclose(file_) != 0 && write_errno_ == 0) write_errno_ = errno;
  file_ = nullptr;
  absl::Status status;
  if (write_errno_ != 0) {
    status = absl::UnavailableError(fmt::format("{}: write failed: {}", path_, std::strerror(write_errno_)));
  } else if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    status = absl::UnavailableError(fmt::format("{}: cannot move into place: {}", path_, std::strerror(errno)));
  }
  if (!status.ok()) unlink(temp_.c_str());
  UnregisterTemp(slot_);
  return status;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 const std::vector<std::string>& inputs) {
  auto file = AtomicOutputFile::Open(path, inputs);
  if (!file.ok()) return file.status();
  (*file)->Write(content);
  return (*file)->Commit();
}

absl::StatusOr<std::unique_ptr<TraceOutput>> TraceOutput::Open(const std::string& path,
                                                               const std::vector<std::string>& inputs) {
  auto file = AtomicOutputFile::Open(path, inputs);
  if (!file.ok()) return file.status();
  return std::unique_ptr<TraceOutput>(new TraceOutput(std::move(*file)));
}

std::unique_ptr<TraceOutput> TraceOutput::ToStandardOutput() {
  return std::unique_ptr<TraceOutput>(new TraceOutput(nullptr));
}

void TraceOutput::Write(std::string_view bytes) {
  if (file_ != nullptr) {
    file_->Write(bytes);
  } else if (stdout_errno_ == 0 && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
    stdout_errno_ = errno != 0 ? errno : EIO;
  }
}

absl::Status TraceOutput::Commit() {
  if (file_ != nullptr) return file_->Commit();
  if (std::fflush(stdout) != 0 && stdout_errno_ == 0) stdout_errno_ = errno;
  if (stdout_errno_ == 0) return absl::OkStatus();
  return absl::UnavailableError(
      fmt::format("the trace on standard output: write failed: {}", std::strerror(stdout_errno_)));
}

void RemoveTemporaryOutputFiles() {
  for (size_t i = 0; i < kMaxOpenFiles; ++i) {
    if (g_temp_state[i].load() == kPublished) unlink(g_temp_paths[i].data());
  }
}

}  // namespace electsim
