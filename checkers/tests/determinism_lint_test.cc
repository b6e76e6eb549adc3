// Cheap insurance against the usual determinism traps creeping into the
// checkers: hash containers, global randomness, clocks, threads, environment.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

TEST(DeterminismLint_Checkers, NoHiddenInputsOrHashOrder) {
  const std::filesystem::path dir = ELECTSIM_CHECKERS_SOURCE_DIR;
  std::vector<std::filesystem::path> sources;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) sources.push_back(entry.path());
  }
  std::sort(sources.begin(), sources.end());
  ASSERT_GE(sources.size(), 5u) << "sources not found in " << dir;
  const std::vector<std::string> forbidden = {
      "unordered_map", "unordered_set", "flat_hash", "node_hash", "random_device", "<random>",
      "<chrono>",      "<thread>",      "std::thread", "getenv",  "time(nullptr)", "rand(",
      "BitGen",        "-ffast-math"};
  for (const auto& path : sources) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    for (const std::string& word : forbidden) {
      EXPECT_EQ(text.str().find(word), std::string::npos) << path << " mentions " << word;
    }
  }
}

}  // namespace
