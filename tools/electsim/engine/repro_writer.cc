#include "tools/electsim/engine/repro_writer.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "fmt/format.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/io/output_file.h"

namespace electsim {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view kSeedInfix = "-seed";
constexpr std::string_view kReproSuffix = ".repro.json";
}  // namespace

std::string ReproFilePath(const std::string& dir, const std::string& scenario_name, uint64_t seed) {
  return (fs::path(dir) / fmt::format("{}{}{}{}", scenario_name, kSeedInfix, seed, kReproSuffix)).string();
}

std::optional<uint64_t> SeedOfReproFileName(const std::string& file_name, const std::string& scenario_name) {
  std::string_view rest = file_name;
  const std::string prefix = scenario_name + std::string(kSeedInfix);
  if (!rest.starts_with(prefix) || !rest.ends_with(kReproSuffix)) return std::nullopt;
  rest.remove_prefix(prefix.size());
  rest.remove_suffix(kReproSuffix.size());
  // Only the digits ReproFilePath writes: no sign, no leading zero.
  if (rest.empty() || (rest.size() > 1 && rest.front() == '0') ||
      !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), seed);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return seed;
}

absl::Status WriteReproFile(const std::string& path, const Scenario& scenario, const RunResult& result,
                            const std::vector<std::string>& failed_by, const std::vector<std::string>& inputs) {
  // A repro without its trace hash could not tell a replay that differs.
  if (!result.trace_hashed) {
    return absl::InternalError(fmt::format("{}: the run's trace was not hashed (RunOptions::hash_trace)", path));
  }
  const fs::path folder = fs::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec) return absl::UnavailableError(fmt::format("{}: cannot create: {}", folder.string(), ec.message()));
  const std::string text = MakeRepro(scenario, result, path, failed_by).dump(2) + "\n";
  if (auto status = WriteFileAtomically(path, text, inputs); !status.ok()) {
    return absl::UnavailableError(status.message());
  }
  return absl::OkStatus();
}

}  // namespace electsim
