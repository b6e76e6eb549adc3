// electsim::RunScenarioFile: one scenario file, one seed, the verdict that
// `electsim run` would print.
#include "checkers/checker.h"
#include "electsim/electsim.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

absl::StatusOr<Verdict> RunScenarioFile(const std::string& path, std::optional<uint64_t> seed) {
  auto scenario = LoadScenarioFile(path);
  if (!scenario.ok()) return scenario.status();
  auto result = RunScenario(*scenario, seed.value_or(scenario->seed));
  if (!result.ok()) return result.status();
  Verdict verdict;
  verdict.seed = result->seed;
  verdict.trace_hash = result->trace_hash;
  for (const checkers::Violation& violation : result->violations) {
    verdict.violations.push_back(checkers::DescribeViolation(violation));
  }
  verdict.failed_expectations = result->failed_expectations;
  verdict.messages_by_type = result->metrics.messages_by_type;
  return verdict;
}

}  // namespace electsim
