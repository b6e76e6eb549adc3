// One output plan per command: every file it may write is declared before
// the first simulation, so that a path that would replace an input, or
// another output, is refused (exit 2) before anything runs. Files named per
// failing seed (repros, timelines, shrunk repros) are declared as families:
// a folder, a name stem and the seeds that may write one.
//
// The plan also remembers what the command wrote, so that an ending that
// must leave nothing behind (bad input found mid-way, exit 2) can take it
// back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/electsim/campaign/seeds.h"

namespace electsim::campaign {

// What a failing seed writes next to its repro.
inline constexpr std::string_view kReproSuffix = ".repro.json";
inline constexpr std::string_view kTimelineSuffix = ".html";
inline constexpr std::string_view kShrunkReproSuffix = ".shrunk.repro.json";
inline constexpr std::string_view kShrunkScenarioSuffix = ".shrunk.json";

// DIR/STEM-seedN followed by one of `suffixes`, for the seeds of `seeds`.
struct SeedFileFamily {
  std::string flag;  // the flag that put it there, for messages: "--repro-dir"
  std::string dir;
  std::string stem;  // the scenario's name
  SeedPlan seeds;
  std::vector<std::string_view> suffixes;

  std::string PathFor(uint64_t seed, std::string_view suffix) const;
  // The seed whose file `name` (a file name, no folder) would be.
  std::optional<uint64_t> SeedOf(std::string_view name) const;
};

// Refuses a standard output that goes to one of `inputs` (`run x.json >>
// x.json`): what the command prints would be written into what it reads.
absl::Status CheckStandardOutputIsNoInput(const std::vector<std::string>& inputs);

class OutputPlan {
 public:
  // `inputs`: every file the command reads, none of which may be replaced.
  explicit OutputPlan(std::vector<std::string> inputs) : inputs_(std::move(inputs)) {}

  void AddInput(const std::string& path) { inputs_.push_back(path); }
  // A file named by `flag` ("--summary"); "" adds nothing. Standard output
  // ("-") is not a file and is not added either.
  void AddFile(std::string flag, std::string path);
  void AddFamily(SeedFileFamily family);

  // Every check, in one place: each file can be written and is not an input
  // or the file standard output or error goes to; no two outputs are one
  // file; no file is one a family may write; no family may write over an
  // input, or over another family's files.
  absl::Status Check() const;

  // Every file no output may replace: the inputs given, and the files of
  // every registered algorithm (ExternalAlgorithm's manifest and program).
  std::vector<std::string> inputs() const;

  // Remembers a file the command has written, to take back with Discard.
  void Written(const std::string& path) { written_.push_back(path); }
  // Removes every file Written names: for an ending that must write nothing.
  void Discard();

 private:
  struct File {
    std::string flag;
    std::string path;
  };
  absl::Status CheckFamily(const SeedFileFamily& family) const;

  std::vector<std::string> inputs_;
  std::vector<File> files_;
  std::vector<SeedFileFamily> families_;
  std::vector<std::string> written_;
};

}  // namespace electsim::campaign
