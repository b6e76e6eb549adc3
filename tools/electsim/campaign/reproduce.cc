#include "tools/electsim/campaign/reproduce.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "tools/electsim/io/program_name.h"

namespace electsim::campaign {

std::string ShellQuote(std::string_view word) {
  const auto bare = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), bare)) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

CommandLine::CommandLine() {
  words_.push_back(RawProgramName());
  if (const char* manifests = std::getenv("ELECTSIM_ALGORITHMS"); manifests != nullptr) manifests_ = manifests;
}

CommandLine& CommandLine::Add(std::string word) {
  words_.push_back(std::move(word));
  return *this;
}

CommandLine& CommandLine::Add(std::string flag, std::string value) {
  words_.push_back(std::move(flag));
  words_.push_back(std::move(value));
  return *this;
}

CommandLine& CommandLine::AddAll(const std::vector<std::string>& words) {
  words_.insert(words_.end(), words.begin(), words.end());
  return *this;
}

CommandLine& CommandLine::AddSets(const std::vector<std::string>& sets) {
  for (const std::string& set : sets) Add("--set", set);
  return *this;
}

std::string CommandLine::Text() const {
  // An assignment before the program: the shell sets it for that command only.
  std::string text = manifests_.empty() ? "" : "ELECTSIM_ALGORITHMS=" + ShellQuote(manifests_);
  for (const std::string& word : words_) {
    if (!text.empty()) text += ' ';
    text += ShellQuote(word);
  }
  return text;
}

}  // namespace electsim::campaign
