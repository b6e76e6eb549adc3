#include "sim/format.h"

#include <limits>

#include "gtest/gtest.h"

namespace sim {
namespace {

TEST(Format_Duration, LargestExactUnit) {
  EXPECT_EQ(FormatDuration(TimeNs::Millis(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(TimeNs::Seconds(2)), "2s");
  EXPECT_EQ(FormatDuration(TimeNs::Micros(250)), "250us");
  EXPECT_EQ(FormatDuration(TimeNs(7)), "7ns");
  EXPECT_EQ(FormatDuration(TimeNs(0)), "0s");
  EXPECT_EQ(FormatDuration(TimeNs(-3000)), "-3us");
}

TEST(Format_Seconds, SixDecimalsTruncatedAndSafeAtTheExtremes) {
  EXPECT_EQ(FormatSeconds(TimeNs(1234567891)), "1.234567s");
  EXPECT_EQ(FormatSeconds(TimeNs::Millis(5)), "0.005000s");
  EXPECT_EQ(FormatSeconds(TimeNs(std::numeric_limits<int64_t>::min())), "-9223372036.854775s");
  EXPECT_EQ(FormatMillis(TimeNs(186328555)), "186.328ms");
  EXPECT_EQ(FormatMillis(TimeNs(-1500)), "-0.001ms");
}

}  // namespace
}  // namespace sim
