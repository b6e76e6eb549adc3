#include "tools/electsim/duration.h"

#include "gtest/gtest.h"

namespace electsim {
namespace {

TEST(Duration_Parse, UnitsAndValues) {
  EXPECT_EQ(*ParseDuration("150ms"), sim::TimeNs::Millis(150));
  EXPECT_EQ(*ParseDuration("2s"), sim::TimeNs::Seconds(2));
  EXPECT_EQ(*ParseDuration("7ns"), sim::TimeNs(7));
  EXPECT_EQ(*ParseDuration("250us"), sim::TimeNs::Micros(250));
  EXPECT_EQ(*ParseDuration("1m"), sim::TimeNs::Seconds(60));
  EXPECT_EQ(*ParseDuration("0s"), sim::TimeNs(0));
  EXPECT_EQ(*ParseDuration("-200ms", true), sim::TimeNs::Millis(-200));
  EXPECT_EQ(*ParseDuration("+200ms", true), sim::TimeNs::Millis(200));
}

TEST(Duration_Parse, RejectsMalformedWithReason) {
  for (const char* bad : {"", "ms", "150", "150 ms", "1.5s", "5h", "-5ms", "+5ms", "99999999999999999999s", "10000000000s"}) {
    auto parsed = ParseDuration(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("a duration such as"), std::string::npos) << parsed.status();
  }
  EXPECT_NE(ParseDuration("-5ms").status().message().find("cannot be negative"), std::string::npos);
}

}  // namespace
}  // namespace electsim
