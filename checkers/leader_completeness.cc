// leader_completeness: an entry reported committed is in the log of every
// later leader (Raft's Leader Completeness property, section 5.4). "Later"
// is by term: an entry committed while its reporter was in term C must be
// at the same index in the log of every leader of a term above C. A leader
// of a lower term may lack it; such a leader, elected by votes cast before
// the commit, can no longer replicate anything.
//
// Checked both ways: when a node claims leadership, against every commit
// reported so far; when a commit is reported, against the nodes leading a
// higher term at that moment (their logs only grow while they lead).
#include <map>
#include <utility>
#include <vector>

#include "checkers/factories.h"
#include "checkers/node_logs.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

class LeaderCompletenessChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit LeaderCompletenessChecker(const CheckerConfig& config)
      : logs_(config.node_count), leading_term_(config.node_count) {}

  std::string_view name() const override { return "leader_completeness"; }
  // Logs and leader claims; a crash or a boot forgets a node's log.
  sim::TraceKinds kinds() const override {
    return {sim::TraceKind::kStart, sim::TraceKind::kCrash, sim::TraceKind::kRestart, sim::TraceKind::kObserve};
  }
  sim::ObservationTypes observation_types() const override {
    return NodeLogs::observation_types().With({&vocab::kRoleChange, &vocab::kLogCommit});
  }

  void OnRecord(const sim::TraceRecord& r) override {
    logs_.Apply(r);
    if (r.node.value() >= leading_term_.size()) return;
    const uint32_t node = r.node.value();
    if (r.kind == sim::TraceKind::kCrash || r.kind == sim::TraceKind::kStart) leading_term_[node].reset();
    if (r.kind != sim::TraceKind::kObserve || r.payload == nullptr) return;
    const sim::Observation& o = *r.payload;
    if (const auto role = o.As<vocab::RoleChanged>()) {
      leading_term_[node].reset();
      if (role->role != static_cast<int64_t>(vocab::Role::kLeader)) return;
      const int64_t term = role->term;
      leading_term_[node] = term;
      for (const auto& [key, commit] : commits_) {
        if (commit.current_term < term) CheckLeaderHas(r, node, term, key.first, commit);
      }
      return;
    }
    const std::optional<vocab::LogCommitted> committed = o.As<vocab::LogCommitted>();
    if (!committed) return;
    const int64_t index = committed->index;
    const Commit commit{.term = committed->term,
                        .entry = committed->entry,
                        .current_term = committed->current_term,
                        .reporter = r.node,
                        .time = r.time};
    auto [it, inserted] = commits_.try_emplace({index, commit.entry}, commit);
    if (!inserted) {
      // The earliest term it was known committed in binds the most leaders.
      if (commit.current_term >= it->second.current_term) return;
      it->second = commit;
    }
    for (uint32_t leader = 0; leader < leading_term_.size(); ++leader) {
      if (leading_term_[leader] && *leading_term_[leader] > commit.current_term) {
        CheckLeaderHas(r, leader, *leading_term_[leader], index, commit);
      }
    }
  }

 private:
  struct Commit {
    int64_t term;          // of the entry
    int64_t entry;         // its id
    int64_t current_term;  // the reporter's term when it reported the commit
    sim::NodeId reporter;
    sim::TimeNs time;
  };

  void CheckLeaderHas(const sim::TraceRecord& r, uint32_t leader, int64_t leader_term, int64_t index,
                      const Commit& commit) {
    const std::optional<LoggedEntry> held = logs_.EntryAt(leader, index);
    if (held && held->entry == commit.entry) return;
    const std::string instead = held ? fmt::format("holds entry {:#x} (term {}) there instead", held->entry, held->term)
                                     : fmt::format("has only {} entries", logs_.length(leader));
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {sim::NodeId(leader), commit.reporter},
            .term = leader_term,
            .message = fmt::format("node {} leads term {} without entry {:#x} (term {}) at index {}, which node {} "
                                   "reported committed in term {} at {}; the leader {}",
                                   leader, leader_term, commit.entry, commit.term, index, commit.reporter.value(),
                                   commit.current_term, sim::FormatSeconds(commit.time), instead)});
  }

  NodeLogs logs_;
  // The term each node currently leads, if it is in the leader role.
  std::vector<std::optional<int64_t>> leading_term_;
  // (index, entry id) -> the commit report with the lowest term.
  std::map<std::pair<int64_t, int64_t>, Commit> commits_;
};

}  // namespace

std::unique_ptr<Checker> MakeLeaderCompletenessChecker(const CheckerConfig& config) {
  return std::make_unique<LeaderCompletenessChecker>(config);
}

}  // namespace checkers
