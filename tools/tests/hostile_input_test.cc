// Hostile input through the electsim binary: every file in tools/tests/hostile
// (and a few generated here: a 27 MB file, deep nesting, a file name with an
// escape sequence) is refused with exit status 2 and a message that names the
// file and carries no raw control character, and leaves nothing in the output
// folder. The one exception, "seed": -0, is accepted as seed 0.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/tests/electsim_command.h"
#include "tools/tests/sanitizer.h"

namespace {

namespace fs = std::filesystem;

#if defined(ELECTSIM_TEST_ASAN)
constexpr int kGeneratedFaultSteps = 20000;  // the same shapes, sized for a sanitizer build
constexpr int kStepsBeforeTheBadOne = 20000;
#else
constexpr int kGeneratedFaultSteps = 1000000;
// A file that passes the parser and fails the schema only at its end is
// explained by re-checking the long array window by window, copying every
// element: about 3x a plain load. A quarter of a million steps shows that the
// bad one is still named by its index without putting that slower path's
// CPU time near the limit on a busy machine.
constexpr int kStepsBeforeTheBadOne = 250000;
#endif

// Each input must be refused within ELECTSIM_HOSTILE_CPU_S seconds of CPU
// time (10 in a Release build): a loader gone quadratic again is stopped by
// SIGXCPU and fails the exit-status check, however loaded the machine is.
using electsim_test::Outcome;
Outcome Electsim(const std::vector<std::string>& args) {
  return electsim_test::RunCombined(args, ELECTSIM_HOSTILE_CPU_S);
}

// Every line as the terminal would get it: nothing EscapeForTerminal would change.
void ExpectNoRawControls(const std::string& output) {
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    EXPECT_EQ(electsim::EscapeForTerminal(line), line)
        << "raw control characters in: " << electsim::EscapeForTerminal(line);
    start = end + 1;
  }
}

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("electsim-hostile-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A fresh folder holding only `name`, with `content`; returns the file's path.
  std::string Place(const std::string& name, const std::string& content) {
    const fs::path case_dir = dir_ / ("case" + std::to_string(++cases_));
    fs::create_directories(case_dir);
    std::ofstream(case_dir / name, std::ios::binary) << content;
    return (case_dir / name).string();
  }

  // Runs `run` (or `replay` for *.repro.json) on `path` with every output
  // pointed into its folder, and checks the verdict of a refused input.
  Outcome Refuse(const std::string& path, const std::string& message) {
    const fs::path folder = fs::path(path).parent_path();
    const std::string trace = (folder / "trace.jsonl").string();
    const bool repro = path.size() > 11 && path.compare(path.size() - 11, 11, ".repro.json") == 0;
    const Outcome out = repro ? Electsim({"replay", path, "--trace", trace})
                              : Electsim({"run", path, "--trace", trace, "--repro-dir", folder.string()});
    const std::string shown = electsim::EscapeForTerminal(path);
    EXPECT_EQ(out.exit_status, 2) << shown << "\n" << out.output.substr(0, 500);
    EXPECT_NE(out.output.find(shown + ":"), std::string::npos) << out.output.substr(0, 500);
    EXPECT_NE(out.output.find(message), std::string::npos) << message << "\n" << out.output.substr(0, 500);
    EXPECT_EQ(out.output.find("trace-hash"), std::string::npos) << "ran anyway";
    ExpectNoRawControls(out.output);
    EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1)
        << "something was written next to " << shown;
    return out;
  }

  fs::path dir_;
  int cases_ = 0;
};

std::string Corpus(const std::string& name) {
  std::ifstream in(std::string(ELECTSIM_SOURCE_DIR) + "/tools/tests/hostile/" + name, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

TEST_F(HostileInput, EveryCorpusFileIsRefusedCleanly) {
  struct Case {
    std::string file;
    std::string message;
  };
  const std::vector<Case> cases = {
      // Whole-file validity, scenario and repro files alike.
      {"nul-after-document.json", ":2:1: invalid JSON: a NUL byte"},
      {"nul-inside-string.json", ":1:71: invalid JSON: a NUL byte"},
      {"nul-after-repro.repro.json", ": invalid JSON: a NUL byte"},
      {"second-document.json", ":2:1: invalid JSON: more text after the top-level value"},
      {"second-document.repro.json", ": invalid JSON: more text after the top-level value"},
      {"trailing-garbage.json", ":1:53: invalid JSON: more text after the top-level value"},
      {"trailing-bracket.json", ":1:52: invalid JSON: more text after the top-level value"},
      // Control characters from the file, shown escaped.
      {"clear-screen-key.json", "at /\\u001b[2J\\u001b[H: expected no key \"\\u001b[2J\\u001b[H\" in a scenario"},
      {"clipboard-algorithm.json", "got the string \"\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\""},
      {"clipboard-key.repro.json", "at /scenario/\\u001b]52;c;aGk=\\u0007: expected no key"},
      {"c1-csi-option.json", "at /algorithm/options/\\u009b2J: expected no key \"\\u009b2J\""},
      {"raw-c1-byte.json", "ill-formed UTF-8 byte; last read: '\"\\x9b'"},
      {"bidi-override-name.json", "got the string \"safe\\u202egnp.exe\""},
      {"escape-in-description.json", "expected a one-line string without control characters"},
      // -0 is zero: a true message.
      {"nodes-minus-zero.json", "at /nodes: expected an integer in [1, 100000], got the integer 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    Refuse(Place(c.file, Corpus(c.file)), c.message);
  }
}

TEST_F(HostileInput, SeedMinusZeroRunsAsSeedZero) {
  const std::string path = Place("seed-minus-zero.json", Corpus("seed-minus-zero.json"));
  const Outcome out = Electsim({"run", path, "--repro-dir", fs::path(path).parent_path().string()});
  EXPECT_EQ(out.exit_status, 0) << out.output;
  EXPECT_NE(out.output.find("algorithm: raft, 3 nodes, seed 0,"), std::string::npos) << out.output;
  const Outcome explicit_zero =
      Electsim({"run", path, "--seed", "0", "--repro-dir", fs::path(path).parent_path().string()});
  EXPECT_EQ(out.output, explicit_zero.output);
}

TEST_F(HostileInput, AMillionFaultStepsAreReadToTheEnd) {
  // A duplicate key after the last of the steps: found only by reading all
  // of them, which must take seconds, not minutes (the benchmark in
  // bench/loader_bench.cc measures the speed).
  std::string text = R"({"nodes": 3, "duration": "2s", "algorithm": "raft", "faults": [)";
  for (int i = 0; i < kGeneratedFaultSteps; ++i) {
    if (i > 0) text += ',';
    text += R"({"at":"1s","heal":true})";
  }
  text += R"(], "nodes": 3})";
  Refuse(Place("million.json", text), "at /nodes: expected each key once in an object, this key appears again");
}

TEST_F(HostileInput, AMillionBadFaultStepsGiveOneMessage) {
  // Every step is wrong: the explanation must not collect a million errors.
  std::string text = R"({"nodes": 3, "duration": "2s", "algorithm": "raft", "faults": [)";
  for (int i = 0; i < kGeneratedFaultSteps; ++i) {
    if (i > 0) text += ',';
    text += R"({"at":"soon","heal":"yes"})";
  }
  text += "]}";
  Refuse(Place("all-bad.json", text), "at /faults/0/heal: expected true, got the string \"yes\"");
}

TEST_F(HostileInput, OneBadStepAfterManyGoodOnesIsNamedByItsIndex) {
  std::string text = R"({"nodes": 3, "duration": "2s", "algorithm": "raft", "faults": [)";
  for (int i = 0; i < kStepsBeforeTheBadOne; ++i) text += R"({"at":"1s","crash":"leader"},)";
  text += R"({"at":"1s","crash":"nobody"}]})";
  Refuse(Place("last-bad.json", text),
         "at /faults/" + std::to_string(kStepsBeforeTheBadOne) + "/crash: expected a node");
}

TEST_F(HostileInput, DeepNestingIsRefused) {
  const std::string text = R"({"description": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  Refuse(Place("deep.json", text), "expected at most 32 levels of nested arrays and objects");
}

TEST_F(HostileInput, AFileNameWithAnEscapeSequenceIsShownEscaped) {
  const std::string path = Place("evil\x1b[2J\x1b]52;c;aGk=\x07.json", R"({"nodes": 0})");
  Refuse(path, "evil\\u001b[2J\\u001b]52;c;aGk=\\u0007.json: at /");
}

}  // namespace
