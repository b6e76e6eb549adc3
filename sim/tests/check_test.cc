// SIM_CHECK stops the process in every build type, and the invariants the
// simulator guards with it fail loudly instead of being skipped.
#include "sim/check.h"

#include "gtest/gtest.h"
#include "sim/payload.h"
#include "sim/rng.h"

namespace sim {
namespace {

TEST(SimCheck, PassingConditionDoesNothing) {
  int evaluated = 0;
  SIM_CHECK(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

TEST(SimCheckDeathTest, FailingConditionAbortsWithFileLineAndMessage) {
  EXPECT_DEATH(SIM_CHECK(1 + 1 == 3, "arithmetic still works"),
               "check_test.cc:[0-9]+: SIM_CHECK failed: 1 \\+ 1 == 3: arithmetic still works");
}

TEST(Payload_Set, OverwritesAnExistingFieldWithoutTakingASlot) {
  Payload payload("m");
  for (int i = 0; i < Payload::kMaxFields; ++i) payload.Set(std::string_view("abcdef").substr(i, 1), i);
  payload.Set("a", 42);
  EXPECT_EQ(payload.fields().size(), static_cast<size_t>(Payload::kMaxFields));
  EXPECT_EQ(payload.Get("a"), 42);
}

TEST(Payload_SetDeathTest, PastCapacityStopsTheProcessInsteadOfDroppingTheField) {
  Payload payload("m");
  for (int i = 0; i < Payload::kMaxFields; ++i) payload.Set(std::string_view("abcdef").substr(i, 1), i);
  EXPECT_DEATH(payload.Set("g", 7), "payload.h:[0-9]+: SIM_CHECK failed: .*at most kMaxFields fields");
}

TEST(Rng_BelowDeathTest, ZeroBoundStopsTheProcess) {
  Rng rng(1);
  EXPECT_DEATH(rng.Below(0), "Rng::Below needs a bound > 0");
  EXPECT_DEATH(rng.Between(2, 1), "Rng::Between needs lo <= hi");
}

}  // namespace
}  // namespace sim
