// What `replay` says when a repro's trace differs: the first differing
// record, expected against actual, with records around it. The repro keeps
// only hashes, so exactly which record differs needs the expected trace
// (`--expected TRACE.jsonl`, from a good run); without it the repro's
// checkpoints narrow the difference down to a stretch of records, and this
// run's records there are shown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/runner.h"

namespace electsim {

// Re-runs the repro's scenario (deterministically: the same records as
// `actual`) to show the records where the traces part. Errors: the expected
// trace cannot be read (bad input).
// An error unless `path` opens and its first line is a trace header: the
// check replay --expected makes before anything runs.
absl::Status CheckExpectedTrace(const std::string& path);

// A note when the expected trace's header names another scenario or seed
// than the repro's ("" when they agree): its comparison would show where two
// different runs part, not what changed in this one.
std::string ExpectedTraceMismatch(const std::string& path, const Repro& repro);

struct TraceDifference {
  std::string text;  // where the traces part, for the user
  // Every checkpoint and the record count agree: the repro's trace_hash
  // alone differs, so the run may well be the repro's.
  bool only_the_hash = false;
};
absl::StatusOr<TraceDifference> DescribeTraceDifference(const Repro& repro, const RunResult& actual,
                                                        const std::optional<std::string>& expected_trace_path);

}  // namespace electsim
