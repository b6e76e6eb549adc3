#include <algorithm>

#include "electsim/algorithms/algorithm.h"
#include "algorithms/raft/raft.h"
#include "algorithms/lease/lease.h"
#include "algorithms/bully/bully.h"
#include "algorithms/ring/ring.h"
// Each algorithm adds its header and its line below.

namespace algorithms {

const std::vector<const Algorithm*>& AllAlgorithms() {
  static const std::vector<const Algorithm*> all = [] {
    std::vector<const Algorithm*> list = {
        &BullyAlgorithm(),
        &RingAlgorithm(),
        &RaftAlgorithm(),
        &LeaseAlgorithm(),
    };
    std::sort(list.begin(), list.end(), [](const Algorithm* a, const Algorithm* b) { return a->name() < b->name(); });
    return list;
  }();
  return all;
}

const Algorithm* FindAlgorithm(std::string_view name) {
  for (const Algorithm* algorithm : AllAlgorithms()) {
    if (algorithm->name() == name) return algorithm;
  }
  return nullptr;
}

}  // namespace algorithms
