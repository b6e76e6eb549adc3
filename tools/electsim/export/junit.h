// JUnit XML, as CI systems read it: the one writer behind every --junit.
// Text from users (scenario names, --set values, summaries read back for a
// merge) is escaped so that the document is always well-formed XML 1.0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace electsim {

struct JUnitCase {
  enum class Kind {
    kPassed,
    kFailure,  // a verdict: a seed that broke what it must keep
    kError,    // the run could not be judged (bad input mid-way, out of memory, ...)
    kSkipped,  // not run: the campaign was stopped before it
  };
  std::string name;
  Kind kind = Kind::kPassed;
  std::string message;  // one line
  std::string body;     // lines: reproduce command, repro, timeline, shrunk repro
  double seconds = 0;
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
  double seconds = 0;
};

std::string JUnitXml(const std::vector<JUnitSuite>& suites);

// `text` as XML character data or an attribute value: markup characters as
// entities, and what XML 1.0 cannot hold (control characters, malformed
// UTF-8) made visible as the terminal escaping does. Newlines and tabs stay.
std::string XmlText(std::string_view text);

}  // namespace electsim
