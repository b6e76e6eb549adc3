// zk-electsim: the electsim command line with the ZooKeeper recipe
// registered next to the built-in algorithms. Every command works with it:
//   zk-electsim run scenarios/zk-leader-crash.json
//   zk-electsim list
#include <iostream>

#include "electsim/electsim.h"
#include "zookeeper_election.h"

int main(int argc, char** argv) {
  if (const absl::Status status = algorithms::RegisterAlgorithm(zookeeper::ZooKeeperElection()); !status.ok()) {
    std::cerr << "zk-electsim: " << status.message() << "\n";
    return 2;
  }
  return electsim::Main(argc, argv);
}
