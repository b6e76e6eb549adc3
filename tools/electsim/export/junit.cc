#include "tools/electsim/export/junit.h"

#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {

std::string XmlText(std::string_view text) {
  std::string out;
  // Line by line: the terminal escaping would make a newline visible too.
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    for (char c : EscapeForTerminal(text.substr(start, end - start))) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += c;
      }
    }
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

namespace {

const char* ElementOf(JUnitCase::Kind kind) {
  switch (kind) {
    case JUnitCase::Kind::kFailure: return "failure";
    case JUnitCase::Kind::kError: return "error";
    case JUnitCase::Kind::kSkipped: return "skipped";
    case JUnitCase::Kind::kPassed: return "";
  }
  return "";
}

std::string CaseXml(const std::string& suite, const JUnitCase& c) {
  const std::string head = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", XmlText(suite),
                                       XmlText(c.name), c.seconds);
  if (c.kind == JUnitCase::Kind::kPassed) return head + "/>\n";
  return fmt::format("{}>\n      <{} message=\"{}\">{}</{}>\n    </testcase>\n", head, ElementOf(c.kind),
                     XmlText(c.message), XmlText(c.body), ElementOf(c.kind));
}

}  // namespace

std::string JUnitXml(const std::vector<JUnitSuite>& suites) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (const JUnitSuite& suite : suites) {
    size_t failures = 0, errors = 0, skipped = 0;
    std::string cases;
    for (const JUnitCase& c : suite.cases) {
      failures += c.kind == JUnitCase::Kind::kFailure;
      errors += c.kind == JUnitCase::Kind::kError;
      skipped += c.kind == JUnitCase::Kind::kSkipped;
      cases += CaseXml(suite.name, c);
    }
    xml += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n{}  "
        "</testsuite>\n",
        XmlText(suite.name), suite.cases.size(), failures, errors, skipped, suite.seconds, cases);
  }
  return xml + "</testsuites>\n";
}

}  // namespace electsim
