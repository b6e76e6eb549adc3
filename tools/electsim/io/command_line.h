// Reproduce commands: the one builder behind every "reproduce:" line. It is
// fed the effective invocation (every flag that changed what ran, --set
// included) word by word and quotes each for a POSIX shell, so that the line
// pasted into a shell runs exactly that command and nothing else.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace electsim {

// `word` as one word of a shell command line: bare when it consists of
// [A-Za-z0-9_@%+=:,./-] only; in single quotes with each ' as '\'' when it
// has nothing a terminal would show escaped (EscapeForTerminal); else in
// $'...' with \\, \' and \ooo escapes, the only form that survives being
// printed and pasted (bash, zsh, ksh and POSIX.1-2024; not Debian's dash).
std::string ShellQuote(std::string_view word);

class CommandLine {
 public:
  // Starts with the program as it was started (argv[0]). When
  // $ELECTSIM_ALGORITHMS names algorithm manifests, the text sets it first:
  // without it the command would not know their algorithms.
  CommandLine();
  CommandLine& Add(std::string word);
  // A file named as an argument of its own (a scenario, a repro): one that
  // starts with "-" is written as "./-…", the same file, so that the pasted
  // line does not take it for an option.
  CommandLine& AddPath(std::string path);
  CommandLine& Add(std::string flag, std::string value);
  CommandLine& AddAll(const std::vector<std::string>& words);
  // --set PATH=VALUE for each of `sets`, in order.
  CommandLine& AddSets(const std::vector<std::string>& sets);
  const std::vector<std::string>& words() const { return words_; }
  // The words quoted and joined, ready to paste; pass it through
  // EscapeForTerminal before printing it.
  std::string Text() const;

 private:
  std::vector<std::string> words_;
  std::string manifests_;  // $ELECTSIM_ALGORITHMS as this program was started with it
};

}  // namespace electsim
