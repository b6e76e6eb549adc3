// Raft's replicated log as one node holds it: in memory, in stable storage,
// and reported to the checkers entry by entry (vocab::kLogAppend and friends).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms::raft {

struct LogIndexTag {};
// Position in the log, from 1; 0 is the empty prefix before the first entry.
using LogIndex = sim::StrongInt<LogIndexTag, uint64_t>;
inline LogIndex Next(LogIndex index) { return LogIndex(index.value() + 1); }
inline LogIndex Previous(LogIndex index) { return LogIndex(index.value() - 1); }

struct EntryIdTag {};
// Names one entry cluster-wide (see NewEntryId in raft.cc): Raft itself only
// compares terms, the id is what lets a checker tell two entries apart.
using EntryId = sim::StrongInt<EntryIdTag, uint64_t>;

struct Entry {
  sim::Term term;
  EntryId id;
};

// Stable-storage layout of the log, next to Raft's "term" and "voted_for":
//   log.length            number of entries
//   log.<i>.term          term of entry i (1-based)
//   log.<i>.id            id of entry i
// Keys of entries past log.length are leftovers of a truncation, never read.
// Entries are written before log.length grows, so a log.length that made it
// to the disk never names an entry that did not.
inline constexpr std::string_view kLogLengthKey = "log.length";

// Where the log's writes go: buffered stable storage (Context::Write), made
// durable by the node's next Sync.
class LogStorage {
 public:
  virtual ~LogStorage() = default;
  virtual void Write(sim::Context& ctx, std::string_view key, int64_t value) = 0;
};

class RaftLog {
 public:
  // Reads the log back from stable storage and reports each entry.
  void Recover(sim::Context& ctx);

  LogIndex last_index() const { return LogIndex(entries_.size()); }
  sim::Term last_term() const { return entries_.empty() ? sim::Term(0) : entries_.back().term; }
  // Term of the entry at `index`: Term(0) at index 0, nullopt past the end.
  std::optional<sim::Term> TermAt(LogIndex index) const;
  // The entry at `index`, which must be in 1..last_index().
  const Entry& at(LogIndex index) const { return entries_[index.value() - 1]; }

  // Adds `entry` at last_index()+1: written (unsynced) and reported.
  void Append(sim::Context& ctx, LogStorage& storage, const Entry& entry);
  // Drops the entries from `index` on (index in 1..last_index()).
  void TruncateFrom(sim::Context& ctx, LogStorage& storage, LogIndex index);

  // Raft section 5.4.1: a log ending in (last_index, last_term) is at least
  // as up-to-date as this one when its last term is higher, or equal with a
  // log at least as long.
  bool IsAtLeastAsUpToDateAsMine(LogIndex last_index, sim::Term last_term) const;

 private:
  std::vector<Entry> entries_;  // entries_[i] is the entry at index i+1
};

}  // namespace algorithms::raft
