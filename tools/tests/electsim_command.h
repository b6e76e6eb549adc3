// Runs the electsim binary under test (ELECTSIM_BINARY) through the shell and
// captures what it prints, stdout and stderr together (electsim_process.h runs
// it as a child with the two apart, and can signal it).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace electsim_test {

struct Outcome {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

// `args` as a shell would split them. A `cpu_limit_s` above 0 caps the
// command's CPU time (ulimit -t): the kernel stops it with SIGXCPU past it.
// Unlike a wall-clock timeout, that bound holds however busy the machine is.
inline Outcome RunCombined(const std::string& args, int cpu_limit_s = 0) {
  const std::string limit = cpu_limit_s > 0 ? "ulimit -t " + std::to_string(cpu_limit_s) + " && exec " : "exec ";
  const std::string command = limit + std::string(ELECTSIM_BINARY) + " " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, n);
  const int status = pclose(pipe);
  // The shell reports a child killed by signal N as 128 + N.
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// Each of `args` passed as one argument, whatever bytes it holds.
inline Outcome RunCombined(const std::vector<std::string>& args, int cpu_limit_s = 0) {
  auto quoted = [](const std::string& text) {
    std::string out = "'";
    for (char c : text) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out.push_back(c);
      }
    }
    return out + "'";
  };
  std::string line;
  for (const std::string& arg : args) {
    if (!line.empty()) line += ' ';
    line += quoted(arg);
  }
  return RunCombined(line, cpu_limit_s);
}

}  // namespace electsim_test
