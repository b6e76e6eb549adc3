#include "electsim/vocab/vocabulary.h"

namespace vocab {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kFollower: return "follower";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "unknown";
}

sim::Observation WithKey(sim::Observation observation, int64_t key) {
  const int index = observation.type() == nullptr ? -1 : observation.type()->IndexOf(kFieldKey);
  SIM_CHECK(index >= 0, "WithKey needs a record type with a key field");
  for (int i = observation.size(); i < index; ++i) observation.Set(i, 0);
  observation.Set(index, key);
  return observation;
}

}  // namespace vocab
