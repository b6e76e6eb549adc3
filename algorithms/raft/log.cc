#include "algorithms/raft/log.h"

#include <string>

#include "electsim/vocab/vocabulary.h"
#include "absl/strings/str_cat.h"

namespace algorithms::raft {
namespace {

// StrCat rather than fmt: these are built for every entry written.
std::string TermKey(LogIndex index) { return absl::StrCat("log.", index.value(), ".term"); }
std::string IdKey(LogIndex index) { return absl::StrCat("log.", index.value(), ".id"); }

}  // namespace

void RaftLog::Recover(sim::Context& ctx) {
  entries_.clear();
  const uint64_t length = static_cast<uint64_t>(ctx.Load(kLogLengthKey).value_or(0));
  for (uint64_t i = 1; i <= length; ++i) {
    const LogIndex index(i);
    const Entry entry{sim::Term(static_cast<uint64_t>(ctx.Load(TermKey(index)).value_or(0))),
                      EntryId(static_cast<uint64_t>(ctx.Load(IdKey(index)).value_or(0)))};
    entries_.push_back(entry);
    ctx.Observe(vocab::LogAppend(i, entry.term, entry.id.value()));
  }
}

std::optional<sim::Term> RaftLog::TermAt(LogIndex index) const {
  if (index.value() == 0) return sim::Term(0);
  if (index > last_index()) return std::nullopt;
  return at(index).term;
}

void RaftLog::Append(sim::Context& ctx, LogStorage& storage, const Entry& entry) {
  if (entries_.capacity() == 0) entries_.reserve(8);  // a few entries, in one allocation
  entries_.push_back(entry);
  const LogIndex index = last_index();
  storage.Write(ctx, TermKey(index), static_cast<int64_t>(entry.term.value()));
  storage.Write(ctx, IdKey(index), static_cast<int64_t>(entry.id.value()));
  storage.Write(ctx, kLogLengthKey, static_cast<int64_t>(index.value()));
  ctx.Observe(vocab::LogAppend(index.value(), entry.term, entry.id.value()));
}

void RaftLog::TruncateFrom(sim::Context& ctx, LogStorage& storage, LogIndex index) {
  entries_.resize(index.value() - 1);
  storage.Write(ctx, kLogLengthKey, static_cast<int64_t>(entries_.size()));
  ctx.Observe(vocab::LogTruncate(index.value()));
}

bool RaftLog::IsAtLeastAsUpToDateAsMine(LogIndex last_index, sim::Term last_term) const {
  if (last_term != this->last_term()) return last_term > this->last_term();
  return last_index >= this->last_index();
}

}  // namespace algorithms::raft
