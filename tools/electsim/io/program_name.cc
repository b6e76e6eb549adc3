#include "tools/electsim/io/program_name.h"

#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {
std::string& Name() {
  static std::string name = "build/electsim";
  return name;
}
}  // namespace

const std::string& ProgramName() { return Name(); }

void SetProgramName(std::string name) {
  if (!name.empty()) Name() = EscapeForTerminal(name);
}

}  // namespace electsim
