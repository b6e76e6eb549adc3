// The message a scenario text is refused with, for loader tests.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

inline std::string ErrorOf(const std::string& text) {
  auto scenario = ParseScenario(text, "scenarios/x.json");
  EXPECT_FALSE(scenario.ok()) << "accepted: " << text;
  if (scenario.ok()) return "";
  EXPECT_EQ(scenario.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(scenario.status().message());
}

}  // namespace electsim
