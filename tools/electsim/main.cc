// Placeholder CLI until scenarios land: runs a built-in ping/pong simulation.
#include <cstdio>
#include <memory>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "sim/simulator.h"

int main(int argc, char** argv) {
  CLI::App app{"electsim: deterministic simulation testbed for leader election"};
  app.require_subcommand(1);
  uint64_t seed = 1;
  auto* demo = app.add_subcommand("demo", "run a short built-in simulation");
  demo->add_option("--seed", seed, "seed");
  CLI11_PARSE(app, argc, argv);
  (void)demo;
  return 0;
}
