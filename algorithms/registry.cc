#include <algorithm>
#include <mutex>

#include "absl/status/status.h"
#include "algorithms/bully/bully.h"
#include "algorithms/lease/lease.h"
#include "algorithms/raft/raft.h"
#include "algorithms/ring/ring.h"
#include "algorithms/shards/shards.h"
#include "electsim/algorithms/algorithm.h"
#include "fmt/format.h"

namespace algorithms {
namespace {

// The registry: the built-in algorithms, then the registered ones, sorted by
// name. Registration is open until the first lookup: a schema or a worker
// thread may read the list from then on, so it must not change any more.
struct Registry {
  std::mutex mutex;  // RegisterAlgorithm against the first lookup
  bool frozen = false;
  std::vector<const Algorithm*> algorithms = {&BullyAlgorithm(), &RingAlgorithm(), &RaftAlgorithm(), &LeaseAlgorithm(),
                                              &ShardsAlgorithm()};
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'; });
}

}  // namespace

absl::Status RegisterAlgorithm(const Algorithm& algorithm) {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  if (registry.frozen) {
    return absl::FailedPreconditionError(
        fmt::format("algorithm \"{}\" registered after the registry was first read; register every algorithm before "
                    "electsim::Main or any other call",
                    algorithm.name()));
  }
  if (!ValidName(algorithm.name())) {
    return absl::InvalidArgumentError(
        fmt::format("algorithm name \"{}\": expected 1 to 64 characters among a-z, 0-9, _ and -", algorithm.name()));
  }
  for (const Algorithm* known : registry.algorithms) {
    if (known->name() == algorithm.name()) {
      return absl::AlreadyExistsError(fmt::format("an algorithm named \"{}\" is already registered", algorithm.name()));
    }
  }
  registry.algorithms.push_back(&algorithm);
  return absl::OkStatus();
}

const std::vector<const Algorithm*>& AllAlgorithms() {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  if (!registry.frozen) {
    registry.frozen = true;
    std::sort(registry.algorithms.begin(), registry.algorithms.end(),
              [](const Algorithm* a, const Algorithm* b) { return a->name() < b->name(); });
  }
  return registry.algorithms;
}

const Algorithm* FindAlgorithm(std::string_view name) {
  for (const Algorithm* algorithm : AllAlgorithms()) {
    if (algorithm->name() == name) return algorithm;
  }
  return nullptr;
}

}  // namespace algorithms
