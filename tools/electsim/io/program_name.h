// The name reproduce and replay lines give the command line: the one it was
// started as (argv[0], set by electsim::Main), so that a line can be pasted
// back as it stands, also for a user's own binary that registered its
// algorithms. "build/electsim" until Main sets it.
#pragma once

#include <string>

namespace electsim {

const std::string& ProgramName();
// The same as it was given, unescaped: for reproduce commands, which quote it.
const std::string& RawProgramName();
// Called once, by Main, before any thread starts.
void SetProgramName(std::string name);

}  // namespace electsim
