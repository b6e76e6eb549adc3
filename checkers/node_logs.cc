#include "checkers/node_logs.h"

#include <algorithm>

#include "algorithms/vocabulary.h"

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
    case sim::TraceKind::kObserve:
      break;
    default:
      return false;
  }
  if (r.payload == nullptr) return false;
  const sim::Observation& o = *r.payload;
  const int64_t index = o.Get(vocab::kFieldIndex);
  if (index < 1) return false;  // not an entry position: nothing to rebuild
  const size_t before = static_cast<size_t>(index - 1);
  if (o.Is(vocab::kLogAppend)) {
    // An append ends the log at `index`: whatever followed is gone.
    log.resize(before);
    log.push_back({o.Get(vocab::kFieldTerm), o.Get(vocab::kFieldEntry)});
    return true;
  }
  if (o.Is(vocab::kLogTruncate)) {
    log.resize(std::min(log.size(), before));
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
