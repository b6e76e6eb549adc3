// SIM_CHECK stops the process in every build type, and the invariants the
// simulator guards with it fail loudly instead of being skipped.
#include "electsim/sim/check.h"

#include "electsim/sim/message.h"
#include "electsim/sim/rng.h"
#include "gtest/gtest.h"

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

struct TwoFields {
  static constexpr RecordType kType{"test.two", {"a", "b"}};
  int64_t a = 0;
  int64_t b = 0;
};
struct OtherTwoFields {
  static constexpr RecordType kType{"test.other", {"a", "b"}};
  int64_t a = 0;
  int64_t b = 0;
};

TEST(Payload_Typed, RoundTripsThroughItsStructAndRefusesOtherTypes) {
  const Payload payload = TwoFields{.a = 7, .b = -3};
  ASSERT_TRUE(payload.As<TwoFields>().has_value());
  EXPECT_EQ(payload.As<TwoFields>()->a, 7);
  EXPECT_EQ(payload.As<TwoFields>()->b, -3);
  EXPECT_FALSE(payload.As<OtherTwoFields>().has_value());
  EXPECT_EQ(payload.Get("b"), -3);
  EXPECT_EQ(payload.type_name(), "test.two");
}

TEST(Payload_Typed, AnOptionalFieldLeftOutIsAbsentAndReadsZero) {
  const Payload payload(TwoFields{.a = 1, .b = 2}, 1);
  EXPECT_EQ(payload.size(), 1);
  EXPECT_FALSE(payload.Has("b"));
  EXPECT_EQ(payload.As<TwoFields>()->b, 0);
  EXPECT_EQ(payload.Get("b", -1), -1);
}

TEST(Payload_Set, OverwritesAPresentFieldAndAppendsTheNextOne) {
  Payload payload(TwoFields::kType, {5});
  payload.Set(0, 6).Set(1, 9);
  EXPECT_EQ(payload.size(), 2);
  EXPECT_EQ(payload.As<TwoFields>()->a, 6);
  EXPECT_EQ(payload.As<TwoFields>()->b, 9);
}

TEST(Payload_SetDeathTest, PastItsTypesFieldsStopsTheProcessInsteadOfDroppingTheField) {
  Payload payload(TwoFields::kType, {1, 2});
  EXPECT_DEATH(payload.Set(2, 7), "message.h:[0-9]+: SIM_CHECK failed: .*within its record type");
}

TEST(RecordType_DeathTest, MoreThanMaxFieldsStopsTheProcess) {
  EXPECT_DEATH(RecordType("test.wide", {"a", "b", "c", "d", "e", "f", "g"}),
               "SIM_CHECK failed: .*at most kMaxFields fields");
}

TEST(Rng_BelowDeathTest, ZeroBoundStopsTheProcess) {
  Rng rng(1);
  EXPECT_DEATH(rng.Below(0), "Rng::Below needs a bound > 0");
  EXPECT_DEATH(rng.Between(2, 1), "Rng::Between needs lo <= hi");
}

}  // namespace
}  // namespace sim
