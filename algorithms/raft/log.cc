#include "algorithms/raft/log.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "electsim/sim/check.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms::raft {
namespace {

constexpr std::string_view kTermField = "term";
constexpr std::string_view kIdField = "id";

// "log.<index>.<field>", the key of one field of an entry, written into the
// object itself: two are built for every entry written, and building them
// through absl::StrCat cost about half as much as each write.
class EntryKey {
 public:
  // `field` is kTermField or kIdField.
  EntryKey(LogIndex index, std::string_view field) {
    SIM_CHECK(field.size() <= kMaxField, "an entry key's field fits its buffer");
    Append("log.");
    // Cannot fail: the buffer has room for any uint64_t's 20 digits.
    size_ = static_cast<size_t>(std::to_chars(text_ + size_, std::end(text_), index.value()).ptr - text_);
    Append(".");
    Append(field);
  }
  std::string_view view() const { return {text_, size_}; }

 private:
  void Append(std::string_view part) {
    for (const char c : part) text_[size_++] = c;
  }

  static constexpr size_t kMaxField = std::max(kTermField.size(), kIdField.size());
  // "log." + up to 20 digits + "." + the field.
  char text_[4 + 20 + 1 + kMaxField];
  size_t size_ = 0;
};

}  // namespace

void RaftLog::Recover(sim::Context& ctx) {
  entries_.clear();
  const uint64_t length = static_cast<uint64_t>(ctx.Load(kLogLengthKey).value_or(0));
  for (uint64_t i = 1; i <= length; ++i) {
    const LogIndex index(i);
    const Entry entry{sim::Term(static_cast<uint64_t>(ctx.Load(EntryKey(index, kTermField).view()).value_or(0))),
                      EntryId(static_cast<uint64_t>(ctx.Load(EntryKey(index, kIdField).view()).value_or(0)))};
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
  storage.Write(ctx, EntryKey(index, kTermField).view(), static_cast<int64_t>(entry.term.value()));
  storage.Write(ctx, EntryKey(index, kIdField).view(), static_cast<int64_t>(entry.id.value()));
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
