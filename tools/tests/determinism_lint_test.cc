// Cheap insurance against the usual determinism traps creeping into the code
// that runs inside a simulation (sim/, vocab/, algorithms/, checkers/, the
// public headers in include/ and the example algorithms in examples/):
// hash-container iteration order, global or
// hardware randomness, <random> distributions, clocks, threads and the
// environment. Parallelism and I/O belong in tools/.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> SimulationSources() {
  std::vector<fs::path> sources;
  for (const char* dir : {"include", "sim", "vocab", "algorithms", "checkers", "examples"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(ELECTSIM_SOURCE_DIR) / dir)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) sources.push_back(entry.path());
    }
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

TEST(DeterminismLint, NoHiddenInputsOrHashOrderInsideTheSimulation) {
  const auto sources = SimulationSources();
  ASSERT_GE(sources.size(), 30u) << "sources not found under " << ELECTSIM_SOURCE_DIR;
  const std::vector<std::string> forbidden = {"unordered_map",
                                              "unordered_set",
                                              "flat_hash_",
                                              "node_hash_",
                                              "std::random_device",
                                              "#include <random>",
                                              "#include <chrono>",
                                              "#include <thread>",
                                              "std::thread",
                                              "std::async",
                                              "getenv",
                                              "time(nullptr)",
                                              "std::rand(",
                                              "srand(",
                                              "BitGen",
                                              "system_clock",
                                              "steady_clock",
                                              "high_resolution_clock"};
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
