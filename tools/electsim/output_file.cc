#include "tools/electsim/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fmt/format.h"

namespace electsim {
namespace fs = std::filesystem;

namespace {

// Temporary files to remove if a signal ends the process. Plain arrays and
// lock-free flags, because a signal handler may touch nothing else.
constexpr size_t kMaxOpenFiles = 8;
constexpr size_t kMaxPathBytes = 4096;
std::array<std::array<char, kMaxPathBytes>, kMaxOpenFiles> g_temp_paths;
std::array<std::atomic<bool>, kMaxOpenFiles> g_temp_in_use;

int RegisterTemp(const std::string& temp) {
  if (temp.size() >= kMaxPathBytes) return -1;
  for (size_t i = 0; i < kMaxOpenFiles; ++i) {
    if (g_temp_in_use[i].load()) continue;
    std::memcpy(g_temp_paths[i].data(), temp.c_str(), temp.size() + 1);
    g_temp_in_use[i].store(true);  // published after the path is complete
    return static_cast<int>(i);
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temp_in_use[static_cast<size_t>(slot)].store(false);
}

void OnTerminatingSignal(int signal_number) {
  for (size_t i = 0; i < kMaxOpenFiles; ++i) {
    if (g_temp_in_use[i].load()) unlink(g_temp_paths[i].data());
  }
  _exit(128 + signal_number);
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

// Checks that `path` can become an output file (see AtomicOutputFile::Open)
// and returns where the file will land.
absl::StatusOr<fs::path> CheckedTarget(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return absl::InvalidArgumentError("an output file path must not be empty");
  auto target = ResolveTarget(path);
  if (!target.ok()) return target.status();
  std::error_code ec;
  const fs::file_status status = fs::status(*target, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) {
      return absl::InvalidArgumentError(fmt::format("{}: is a folder; expected a file path", path));
    }
    if (!fs::is_regular_file(status)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: is a device, pipe or socket, which would be replaced; expected a file path", path));
    }
    for (const std::string& input : inputs) {
      if (fs::equivalent(*target, input, ec)) {
        return absl::InvalidArgumentError(fmt::format("{}: is the input file {}; expected another path", path, input));
      }
    }
  }
  if (auto status = CheckWritableFolder(path, FolderOf(*target)); !status.ok()) return status;
  return target;
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

AtomicOutputFile::AtomicOutputFile(std::string path, std::string target, std::string temp, std::FILE* file)
    : path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), file_(file) {}

absl::StatusOr<std::unique_ptr<AtomicOutputFile>> AtomicOutputFile::Open(const std::string& path,
                                                                          const std::vector<std::string>& inputs) {
  auto target = CheckedTarget(path, inputs);
  if (!target.ok()) return target.status();
  // A fresh name of our own next to the target (same file system, so the
  // rename is atomic), never a fixed "PATH.tmp" that could be someone's file.
  std::string temp = fmt::format("{}/.{}.XXXXXX.tmp", FolderOf(*target), target->filename().string());
  const int fd = mkstemps(temp.data(), 4);
  if (fd < 0) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot create a file next to it: {}", path, std::strerror(errno)));
  }
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);  // mkstemp makes 0600; the result should look like any new file
  std::FILE* file = fdopen(fd, "wb");
  if (file == nullptr) {
    close(fd);
    unlink(temp.c_str());
    return absl::InvalidArgumentError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  auto out = std::unique_ptr<AtomicOutputFile>(new AtomicOutputFile(path, target->string(), temp, file));
  out->slot_ = RegisterTemp(temp);
  return out;
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

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  auto file = AtomicOutputFile::Open(path);
  if (!file.ok()) return file.status();
  (*file)->Write(content);
  return (*file)->Commit();
}

absl::StatusOr<std::unique_ptr<JsonlTraceWriter>> JsonlTraceWriter::Open(const std::string& path,
                                                                          const std::vector<std::string>& inputs) {
  auto file = AtomicOutputFile::Open(path, inputs);
  if (!file.ok()) return file.status();
  return std::unique_ptr<JsonlTraceWriter>(new JsonlTraceWriter(std::move(*file)));
}

void JsonlTraceWriter::OnRecord(const sim::TraceRecord& record) {
  std::string line = sim::TraceRecordToJson(record);
  line.push_back('\n');
  file_->Write(line);
}

void RemoveTemporaryFilesOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = OnTerminatingSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace electsim
