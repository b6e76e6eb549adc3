// `sweep --metrics`: one CSV row per seed (README, "Using it").
#pragma once

#include <string>
#include <string_view>

#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The header line, and one seed's row (both end in a newline); `label` is
// the campaign's, which names the file too where two scenarios share a name.
std::string MetricsCsvHeader();
std::string MetricsCsvRow(std::string_view label, const Scenario& scenario, const RunResult& result);

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its
// quotes doubled.
std::string CsvQuoted(std::string_view text);

}  // namespace electsim
