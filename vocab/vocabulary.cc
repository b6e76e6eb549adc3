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

}  // namespace vocab
