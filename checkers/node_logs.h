// Every election node's replicated log, rebuilt from the log observations
// (vocab::kLogAppend, kLogTruncate). A process reports its whole log, the
// entries it recovered at boot included, so a node's log is forgotten when
// it crashes or restarts and rebuilt from what the new process reports.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "electsim/vocab/vocabulary.h"
#include "sim/trace.h"

namespace checkers {

struct LoggedEntry {
  int64_t term = -1;
  int64_t entry = -1;  // the entry id; -1 for a hole the node never reported
  friend bool operator==(const LoggedEntry&, const LoggedEntry&) = default;
};

class NodeLogs {
 public:
  explicit NodeLogs(uint32_t node_count) : logs_(node_count) {}

  // The observation types Apply reads (besides crashes and boots).
  static sim::ObservationTypes observation_types() { return {&vocab::kLogAppend, &vocab::kLogTruncate}; }

  // Applies one record; true when some node's log changed.
  bool Apply(const sim::TraceRecord& record);

  // The entry node `node` holds at `index` (from 1), if any.
  std::optional<LoggedEntry> EntryAt(uint32_t node, int64_t index) const;
  size_t length(uint32_t node) const { return logs_[node].size(); }

 private:
  std::vector<std::vector<LoggedEntry>> logs_;  // logs_[node][index - 1]
};

}  // namespace checkers
