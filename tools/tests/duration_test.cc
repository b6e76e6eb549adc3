#include "tools/electsim/language/duration.h"

#include "gtest/gtest.h"

namespace electsim {
namespace {

TEST(Duration_Parse, UnitsAndValues) {
  EXPECT_EQ(*ParseDuration("150ms"), sim::TimeNs::Millis(150));
  EXPECT_EQ(*ParseDuration("2s"), sim::TimeNs::Seconds(2));
  EXPECT_EQ(*ParseDuration("7ns"), sim::TimeNs(7));
  EXPECT_EQ(*ParseDuration("250us"), sim::TimeNs::Micros(250));
  EXPECT_EQ(*ParseDuration("1m"), sim::TimeNs::Seconds(60));
  EXPECT_EQ(*ParseDuration("2h"), sim::TimeNs::Seconds(7200));
  EXPECT_EQ(*ParseDuration("0s"), sim::TimeNs(0));
  EXPECT_EQ(*ParseDuration("-200ms", true), sim::TimeNs::Millis(-200));
  EXPECT_EQ(*ParseDuration("+200ms", true), sim::TimeNs::Millis(200));
}

TEST(Duration_Parse, DecimalsAndCompounds) {
  EXPECT_EQ(*ParseDuration("2.05s"), sim::TimeNs::Millis(2050));
  EXPECT_EQ(*ParseDuration("1.5ms"), sim::TimeNs::Micros(1500));
  EXPECT_EQ(*ParseDuration("0.000000001s"), sim::TimeNs(1));
  EXPECT_EQ(*ParseDuration("0.1m"), sim::TimeNs::Seconds(6));
  EXPECT_EQ(*ParseDuration("1m30s"), sim::TimeNs::Seconds(90));
  EXPECT_EQ(*ParseDuration("1h1m1s1ms1us1ns"), sim::TimeNs(3661001001001));
  EXPECT_EQ(*ParseDuration("-1.5s", true), sim::TimeNs::Millis(-1500));
  EXPECT_EQ(*ParseDuration("-1m30s", true), sim::TimeNs::Seconds(-90));  // the sign covers the whole duration
  EXPECT_EQ(*ParseDuration("1000000s"), sim::TimeNs::Seconds(1000000));
  EXPECT_EQ(*ParseDuration("-1000000s", true), sim::TimeNs::Seconds(-1000000));
}

TEST(Duration_Parse, RejectsMalformedWithReason) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c : {Case{"", "missing number"},
                        Case{"ms", "missing number"},
                        Case{"150", "missing unit"},
                        Case{"0", "missing unit"},
                        Case{"150 ms", "unknown unit"},
                        Case{"5d", "unknown unit"},
                        Case{"inf", "missing number"},
                        Case{"-5ms", "cannot be negative"},
                        Case{"+5ms", "no sign allowed"},
                        Case{"1.5ns", "not a whole number of nanoseconds"},
                        Case{"0.0022us", "not a whole number of nanoseconds"},  // 2.2ns
                        Case{"1.0000000001s", "at most 9 digits after the point"},
                        Case{".5s", "missing number"},
                        Case{"5.s", "a digit must follow the point"},
                        Case{"1s5", "missing unit"},
                        Case{"1s-2s", "expected a number after the unit"},
                        Case{"99999999999999999999s", "too large"},
                        Case{"10000000000s", "too large"},
                        Case{"1000000.000000001s", "too large"},
                        Case{"278h", "too large"}}) {
    auto parsed = ParseDuration(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find("a duration such as"), std::string::npos) << parsed.status();
    EXPECT_NE(parsed.status().message().find(c.why), std::string::npos) << c.text << ": " << parsed.status();
  }
  EXPECT_FALSE(ParseDuration("-1000001s", true).ok());
  EXPECT_FALSE(ParseDuration("--1s", true).ok());
}

}  // namespace
}  // namespace electsim
