#include "tools/electsim/campaign/output_plan.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim::campaign {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kSeedInfix = "-seed";

fs::path Canonical(const fs::path& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : canonical;
}

bool SameFolder(const fs::path& a, const fs::path& b) {
  const fs::path folder_a = a.empty() ? fs::path(".") : a;
  const fs::path folder_b = b.empty() ? fs::path(".") : b;
  std::error_code ec;
  if (fs::exists(folder_a, ec) && fs::exists(folder_b, ec)) return fs::equivalent(folder_a, folder_b, ec);
  return Canonical(folder_a) == Canonical(folder_b);
}

// The files standard output and standard error go to, when they are files.
std::vector<std::string> StreamFiles() {
  std::vector<std::string> files;
  for (const char* stream : {"/dev/stdout", "/dev/stderr"}) {
    std::error_code ec;
    if (fs::is_regular_file(stream, ec)) files.emplace_back(stream);
  }
  return files;
}

std::string Quoted(const std::string& path) { return EscapeForTerminal(path); }

}  // namespace

std::string SeedFileFamily::PathFor(uint64_t seed, std::string_view suffix) const {
  return (fs::path(dir) / fmt::format("{}{}{}{}", stem, kSeedInfix, seed, suffix)).string();
}

std::optional<uint64_t> SeedFileFamily::SeedOf(std::string_view name) const {
  const std::string prefix = stem + std::string(kSeedInfix);
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const size_t digits =
      std::find_if(name.begin(), name.end(), [](char c) { return c < '0' || c > '9'; }) - name.begin();
  // Only the digits PathFor writes: no sign, no leading zero.
  if (digits == 0 || (digits > 1 && name.front() == '0')) return std::nullopt;
  const std::string_view suffix = name.substr(digits);
  if (std::find(suffixes.begin(), suffixes.end(), suffix) == suffixes.end()) return std::nullopt;
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + digits, seed);
  if (error != std::errc() || end != name.data() + digits || !seeds.Holds(seed)) return std::nullopt;
  return seed;
}

void OutputPlan::AddFile(std::string flag, std::string path) {
  if (path.empty() || path == "-") return;
  files_.push_back({std::move(flag), std::move(path)});
}

void OutputPlan::AddFamily(SeedFileFamily family) { families_.push_back(std::move(family)); }

std::vector<std::string> OutputPlan::inputs() const {
  std::vector<std::string> inputs = inputs_;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (std::string& file : algorithm->input_files()) inputs.push_back(std::move(file));
  }
  return inputs;
}

absl::Status CheckStandardOutputIsNoInput(const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (!fs::is_regular_file("/dev/stdout", ec)) return absl::OkStatus();
  for (const std::string& input : inputs) {
    if (!SameFile("/dev/stdout", input)) continue;
    return absl::InvalidArgumentError(fmt::format(
        "standard output goes to {}, which this command reads; expected another file for it", Quoted(input)));
  }
  return absl::OkStatus();
}

absl::Status OutputPlan::Check() const {
  const std::vector<std::string> protected_inputs = inputs();
  if (auto status = CheckStandardOutputIsNoInput(protected_inputs); !status.ok()) return status;
  for (size_t i = 0; i < files_.size(); ++i) {
    const File& file = files_[i];
    if (auto status = CheckOutputPath(file.path, protected_inputs); !status.ok()) {
      return absl::InvalidArgumentError(fmt::format("{} {}", file.flag, std::string(status.message())));
    }
    for (size_t j = 0; j < i; ++j) {
      if (SameFile(file.path, files_[j].path)) {
        return absl::InvalidArgumentError(fmt::format("{} {}: is also the {} file; expected another path", file.flag,
                                                      Quoted(file.path), files_[j].flag));
      }
    }
    for (const SeedFileFamily& family : families_) {
      const fs::path path(file.path);
      if (!SameFolder(path.parent_path(), family.dir)) continue;
      if (const auto seed = family.SeedOf(path.filename().string())) {
        return absl::InvalidArgumentError(
            fmt::format("{} {}: is where {} would write a file for seed {} of {}; expected another path", file.flag,
                        Quoted(file.path), family.flag, *seed, Quoted(family.stem)));
      }
    }
  }
  for (size_t i = 0; i < families_.size(); ++i) {
    if (auto status = CheckFamily(families_[i]); !status.ok()) return status;
    for (size_t j = 0; j < i; ++j) {
      if (families_[i].stem == families_[j].stem && SameFolder(families_[i].dir, families_[j].dir)) {
        return absl::InvalidArgumentError(fmt::format(
            "two runs named {} would write their repro files over each other in {}; expected distinct names (the "
            "file name, or \"name\")",
            Quoted(families_[i].stem), Quoted(families_[i].dir)));
      }
    }
  }
  return absl::OkStatus();
}

// A family writes only names it owns; an existing entry with such a name
// (a symbolic link, say) must not lead to an input or a stream's file.
absl::Status OutputPlan::CheckFamily(const SeedFileFamily& family) const {
  if (auto status = CheckOutputDir(family.dir); !status.ok()) {
    return absl::InvalidArgumentError(fmt::format("{} {}", family.flag, std::string(status.message())));
  }
  std::vector<std::string> protected_files = inputs();
  for (const std::string& stream : StreamFiles()) protected_files.push_back(stream);
  std::error_code ec;
  if (!fs::is_directory(family.dir, ec)) return absl::OkStatus();  // created on the first write, empty until then
  for (const fs::directory_entry& entry : fs::directory_iterator(family.dir, ec)) {
    const auto seed = family.SeedOf(entry.path().filename().string());
    if (!seed) continue;
    for (const std::string& file : protected_files) {
      if (!fs::equivalent(entry.path(), file, ec)) continue;
      const bool stream = file.rfind("/dev/", 0) == 0;
      return absl::InvalidArgumentError(
          fmt::format("{}: the file {} writes for seed {} of {} would replace {}; expected another {}",
                      Quoted(entry.path().string()), family.flag, *seed, Quoted(family.stem),
                      stream ? fmt::format("the file {} goes to", file.substr(5)) : Quoted(file), family.flag));
    }
  }
  return absl::OkStatus();
}

void OutputPlan::Discard() {
  for (const std::string& path : written_) {
    std::error_code ec;
    fs::remove(path, ec);
  }
  written_.clear();
}

}  // namespace electsim::campaign
