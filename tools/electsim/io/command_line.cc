#include "tools/electsim/io/command_line.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {

std::string ShellQuote(std::string_view word) {
  const auto bare = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), bare)) return std::string(word);
  // A byte the terminal would be shown escaped (a newline as "\n") cannot sit
  // raw between single quotes: the pasted line would carry the escape, not
  // the byte. Such a word is written in $'...' with every byte outside
  // printable ASCII in octal, so the line is plain ASCII.
  if (EscapeForTerminal(word) != word) {
    std::string quoted = "$'";
    for (const char c : word) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '\\' || c == '\'') {
        quoted += '\\';
        quoted += c;
      } else if (byte >= 0x20 && byte < 0x7f) {
        quoted += c;
      } else {
        quoted += fmt::format("\\{:03o}", byte);  // three digits: a digit after it is not read into it
      }
    }
    return quoted + "'";
  }
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

CommandLine& CommandLine::AddPath(std::string path) {
  // "-v.json" as a word of its own would be read as an option.
  if (path.starts_with('-')) path.insert(0, "./");
  words_.push_back(std::move(path));
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

}  // namespace electsim
