#include "checkers/node_logs.h"

#include <algorithm>

#include "electsim/vocab/vocabulary.h"

namespace checkers {

bool NodeLogs::Apply(const sim::TraceRecord& r) {
  if (r.node.value() >= logs_.size()) return false;
  std::vector<LoggedEntry>& log = logs_[r.node.value()];
  switch (r.kind) {
    case sim::TraceKind::kStart:
    case sim::TraceKind::kCrash:
    case sim::TraceKind::kRestart:
      if (log.empty()) return false;
      log.clear();
      return true;
    case sim::TraceKind::kObserve: break;
    default: return false;
  }
  if (r.payload == nullptr) return false;
  const sim::Observation& o = *r.payload;
  if (const auto append = o.As<vocab::LogAppended>()) {
    if (append->index < 1) return false;  // not an entry position: nothing to rebuild
    // An append ends the log at `index`: whatever followed is gone.
    if (log.capacity() == 0) log.reserve(8);  // a few entries per node, in one allocation
    log.resize(static_cast<size_t>(append->index - 1));
    log.push_back({append->term, append->entry});
    return true;
  }
  if (const auto truncate = o.As<vocab::LogTruncated>()) {
    if (truncate->index < 1) return false;
    log.resize(std::min(log.size(), static_cast<size_t>(truncate->index - 1)));
    return true;
  }
  return false;
}

std::optional<LoggedEntry> NodeLogs::EntryAt(uint32_t node, int64_t index) const {
  const std::vector<LoggedEntry>& log = logs_[node];
  if (index < 1 || static_cast<uint64_t>(index) > log.size()) return std::nullopt;
  return log[static_cast<size_t>(index - 1)];
}

}  // namespace checkers
