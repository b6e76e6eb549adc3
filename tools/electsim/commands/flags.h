// The flags several commands share, declared once: how a seed, a count, a
// --set or a --jobs is read and checked is the same wherever it appears.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace electsim::commands {

// A command: its CLI11 subcommand, and what runs it once parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// CLI11 2.1 turns "-3" into 2^64-3 and "18446744073709551616" into 2^64-1
// without a word, and reads " 3" as 3, so counts and seeds are checked as text
// (decimal digits only, within range) before they are converted.
CLI::Validator UnsignedText(std::string what, uint64_t min, uint64_t max);

// --set PATH=VALUE (repeatable).
void AddSetFlag(CLI::App& app, std::vector<std::string>& sets, const std::string& what = "the scenario",
                const std::string& examples = "nodes=7 or algorithm.options.election_timeout_max=300ms");
// --jobs N, defaulting to every core.
CLI::Option* AddJobsFlag(CLI::App& app, unsigned& jobs);
// --seed N: one seed, checked as text.
CLI::Option* AddSeedFlag(CLI::App& app, std::string& seed, const std::string& help);

// Whether the command line gave `option` (null: an option not declared).
inline bool OptionGiven(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

// "a,b,c" split at commas.
std::vector<std::string> SplitCommas(const std::string& text);

}  // namespace electsim::commands
