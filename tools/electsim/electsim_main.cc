// The electsim binary: the built-in algorithms only.
#include "electsim/electsim.h"

int main(int argc, char** argv) { return electsim::Main(argc, argv); }
