// The shards workload: keys owned once each, re-owned after a crash, the
// policies, and the plain-release bug against its versioned twin.
#include "algorithms/shards/shards.h"

#include <map>
#include <set>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "gtest/gtest.h"

namespace algorithms {
namespace {

TEST(Shards_Registry, IsRegisteredWithKeyedObservations) {
  const Algorithm* shards = FindAlgorithm("shards");
  ASSERT_NE(shards, nullptr);
  EXPECT_TRUE(shards->uses_store());
  EXPECT_TRUE(shards->observes_keys());
}

}  // namespace
}  // namespace algorithms
