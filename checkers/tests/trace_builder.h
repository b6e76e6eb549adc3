// Hand-built traces for checker and metrics tests: records with increasing
// indices whose payloads stay alive as long as the builder.
#pragma once

#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "checkers/checker.h"
#include "electsim/vocab/vocabulary.h"
#include "gtest/gtest.h"
#include "sim/trace.h"

namespace checkers::trace_testing {

inline sim::TimeNs Ms(int64_t ms) { return sim::TimeNs::Millis(ms); }

// A made-up algorithm's message roles: test.heartbeat is leader-only,
// test.vote with granted=1 grants a vote.
inline constexpr sim::RecordType kHeartbeat{"test.heartbeat", {"term"}};
inline constexpr sim::RecordType kVote{"test.vote", {"term", "granted"}};
inline const vocab::MessageRoles kTestRoles = {.leader_only = {{kHeartbeat, "term"}},
                                               .vote_grants = {{kVote, "term", "granted"}}};
inline sim::Message Heartbeat(int64_t term) { return sim::Message(kHeartbeat).Set(vocab::kFieldTerm, term); }
inline sim::Message VoteReply(int64_t term, bool granted) {
  return sim::Message(kVote).Set(vocab::kFieldTerm, term).Set("granted", granted ? 1 : 0);
}

class TraceBuilder {
 public:
  // Each returns the new record's trace index.
  // Its local time is `time`: a clock without drift.
  uint64_t Observe(sim::TimeNs time, uint32_t node, const sim::Observation& observation) {
    return ObserveAt(time, time, node, observation);
  }
  // With the node's clock reading `local` at `time`.
  uint64_t ObserveAt(sim::TimeNs time, sim::TimeNs local, uint32_t node, const sim::Observation& observation) {
    payloads_.push_back(observation);
    return Add({.time = time,
                .kind = sim::TraceKind::kObserve,
                .node = sim::NodeId(node),
                .local_time = local,
                .payload = &payloads_.back()});
  }
  uint64_t Send(sim::TimeNs time, uint32_t from, uint32_t to, const sim::Message& message) {
    payloads_.push_back(message);
    return Add({.time = time,
                .kind = sim::TraceKind::kSend,
                .node = sim::NodeId(from),
                .peer = sim::NodeId(to),
                .message_id = records_.size() + 1,
                .payload = &payloads_.back()});
  }
  // `message`, sent by `from`, handed to `to`.
  uint64_t Deliver(sim::TimeNs time, uint32_t to, uint32_t from, const sim::Message& message) {
    payloads_.push_back(message);
    return Add({.time = time,
                .kind = sim::TraceKind::kDeliver,
                .node = sim::NodeId(to),
                .peer = sim::NodeId(from),
                .message_id = records_.size() + 1,
                .payload = &payloads_.back()});
  }
  uint64_t Event(sim::TimeNs time, sim::TraceKind kind, uint32_t node) {
    return Add({.time = time, .kind = kind, .node = sim::NodeId(node)});
  }
  // Every election node boots at time 0, as the simulator does.
  void Boot(uint32_t node_count) {
    for (uint32_t i = 0; i < node_count; ++i) Event(sim::TimeNs(0), sim::TraceKind::kStart, i);
  }

  // Shorthands for the common observations.
  uint64_t Lead(sim::TimeNs time, uint32_t node, int64_t term) {
    return Observe(time, node, vocab::BecameLeader(sim::Term(term), sim::FencingToken(term)));
  }
  uint64_t Term(sim::TimeNs time, uint32_t node, int64_t term) {
    return Observe(time, node, vocab::TermChange(sim::Term(term)));
  }
  uint64_t Follow(sim::TimeNs time, uint32_t node, int64_t term) {
    return Observe(time, node, vocab::RoleChange(vocab::Role::kFollower, sim::Term(term)));
  }
  uint64_t Believe(sim::TimeNs time, uint32_t node, uint32_t leader, int64_t term) {
    return Observe(time, node, vocab::Belief(sim::NodeId(leader), sim::Term(term)));
  }
  uint64_t Append(sim::TimeNs time, uint32_t node, uint64_t index, int64_t term, uint64_t entry) {
    return Observe(time, node, vocab::LogAppend(index, sim::Term(term), entry));
  }
  uint64_t Truncate(sim::TimeNs time, uint32_t node, uint64_t from_index) {
    return Observe(time, node, vocab::LogTruncate(from_index));
  }
  uint64_t Commit(sim::TimeNs time, uint32_t node, uint64_t index, int64_t term, uint64_t entry, int64_t current_term) {
    return Observe(time, node, vocab::LogCommit(index, sim::Term(term), entry, sim::Term(current_term)));
  }
  uint64_t Accept(sim::TimeNs time, uint32_t resource, int64_t token, uint32_t writer, int64_t highest) {
    return Observe(time, resource,
                   vocab::ResourceAccepted{{.token = token, .writer = writer, .seq = 1, .highest = highest}});
  }

  // Feeds what a simulator would: the records of the kinds the sink reads
  // and, of the observations, those of the types it names, and, if it reads
  // them, where instants start. A checker's test that sees it fire thereby
  // also tests its declarations.
  void FeedTo(sim::TraceSink& sink) const {
    const sim::TraceKinds kinds = sink.kinds();
    const sim::ObservationTypes types = sink.observation_types();
    const sim::ObservationTypes message_types = sink.message_types();
    const bool instants = sink.reads_instant_starts();
    sim::TimeNs instant;
    for (const sim::TraceRecord& record : records_) {
      // As the simulator tells them: not before the time the sink wakes at.
      if (instants && record.time > instant) {
        instant = record.time;
        if (record.time >= sink.instant_wake_at()) sink.OnInstantStart(record);
      }
      if (!kinds.Has(record.kind)) continue;
      // As the simulator routes observations and sends: by type.
      if (record.kind == sim::TraceKind::kObserve && !Reads(types, record)) continue;
      const bool message = record.kind == sim::TraceKind::kSend || record.kind == sim::TraceKind::kDeliver;
      if (message && !Reads(message_types, record)) continue;
      sink.OnRecord(record);
    }
  }
  const std::vector<sim::TraceRecord>& records() const { return records_; }

 private:
  static bool Reads(const sim::ObservationTypes& types, const sim::TraceRecord& record) {
    return types.all() || (record.payload->type() != nullptr && types.Has(*record.payload->type()));
  }
  uint64_t Add(sim::TraceRecord record) {
    record.index = records_.size();
    records_.push_back(record);
    return record.index;
  }

  std::deque<sim::Payload> payloads_;  // deque: pointers stay valid as it grows
  std::vector<sim::TraceRecord> records_;
};

// Runs checker `name` over `trace` as a run would, ending at `end`.
inline std::unique_ptr<Checker> RunChecker(std::string_view name, const CheckerConfig& config,
                                           const TraceBuilder& trace, sim::TimeNs end) {
  auto checker = MakeChecker(name, config);
  EXPECT_TRUE(checker.ok()) << checker.status();
  trace.FeedTo(**checker);
  (*checker)->OnTraceEnd(trace.records().size());
  (*checker)->Finish(end);
  return std::move(*checker);
}

}  // namespace checkers::trace_testing
