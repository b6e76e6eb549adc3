#include "tools/electsim/io/program_name.h"

#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {
std::string& Name() {
  static std::string name = "build/electsim";
  return name;
}
std::string& RawName() {
  static std::string name = "build/electsim";
  return name;
}
}  // namespace

const std::string& ProgramName() { return Name(); }
const std::string& RawProgramName() { return RawName(); }

void SetProgramName(std::string name) {
  if (name.empty()) return;
  Name() = EscapeForTerminal(name);
  RawName() = std::move(name);
}

}  // namespace electsim
