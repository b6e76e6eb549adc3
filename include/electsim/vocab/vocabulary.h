// The observation vocabulary: what algorithm nodes and services report and
// what checkers read. This header is the whole contract between algorithms/
// and checkers/; checkers never look at an algorithm's internals.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "electsim/sim/message.h"
#include "electsim/sim/types.h"

namespace vocab {

// The role a node believes it has.
enum class Role : int64_t {
  // Not trying to lead; may or may not know a leader. Left when the node
  // suspects the leader (Raft timeout, Bully/Ring missed heartbeats, lease gone).
  kFollower = 0,
  // Trying to become leader: Raft candidate (or pre-candidate), Bully/Ring
  // election in progress, lease acquisition in flight.
  kCandidate = 1,
  // Believes it leads `term` and may act (write to the shared resource).
  kLeader = 2,
};
std::string_view RoleName(Role role);

// ---- observation types and their fields ----
// Each type is a sim::RecordType constant, with a struct of the same fields
// for typed access (see electsim/sim/message.h); field names are listed below.

// Keys. A node that leads many things at once (an owner of shards, each a
// key of the store) says which one an observation is about in a trailing
// "key" field; checkers then judge each key on its own (a per-key run of
// every checker, see checkers/per_key.h). Records without it are about the
// node's one leadership, as every single-leader algorithm reports. The
// record types below that can carry it say so.

// Role change. Fields: role, term; token when role is leader; key (optional;
// with it, token is present for every role, 0 when not leading).
inline constexpr sim::RecordType kRoleChange{"role", {"role", "term", "token", "key"}};
// Whom the node now believes leads. Fields: leader (-1 = nobody), term; key (optional).
inline constexpr sim::RecordType kBelief{"believe", {"leader", "term", "key"}};
// The node's current term/epoch changed. Field: term.
inline constexpr sim::RecordType kTermChange{"term", {"term"}};
// The node granted its vote. Fields: term, candidate.
inline constexpr sim::RecordType kVote{"vote", {"term", "candidate"}};
// A leader decided to write (the check is done, the write is being prepared).
// Fields: token; key (optional). A process pause landing here is the fencing-token story.
inline constexpr sim::RecordType kWriteBegin{"write_begin", {"token", "key"}};
// A leader sent a write to the shared resource. Fields: token, seq; key (optional).
inline constexpr sim::RecordType kWrite{"write", {"token", "seq", "key"}};
// The shared resource accepted a write. Fields: token, writer, seq, highest
// (before this write, for that key); key (optional: the part of the resource
// written, each judged on its own).
inline constexpr sim::RecordType kResourceAccept{"resource.accept", {"token", "writer", "seq", "highest", "key"}};
// The shared resource rejected a stale write. Fields: token, writer, seq, highest; key (optional).
inline constexpr sim::RecordType kResourceReject{"resource.reject", {"token", "writer", "seq", "highest", "key"}};

// ---- replicated logs (Raft) ----
// Enough for a checker to rebuild every node's log and the set of committed
// entries. Indices start at 1. An entry id names one entry cluster-wide: the
// node that created it makes it unique, so two entries with equal index and
// term but different ids are different entries.
//
// A process reports its whole log: at boot, every entry it recovered from
// stable storage (index 1 first), then every change. A checker therefore
// forgets a node's log when the node crashes or restarts.
//
// The node put an entry at `index`; the log now ends there (anything after
// it was dropped). Fields: index, term, entry.
inline constexpr sim::RecordType kLogAppend{"log.append", {"index", "term", "entry"}};
// The node dropped its entries from `index` on; the log now ends at index-1. Field: index.
inline constexpr sim::RecordType kLogTruncate{"log.truncate", {"index"}};
// The node learned that the entry at `index` is committed. Fields: index,
// term and entry (of the entry), current_term (the node's own term when it
// learned it: the leader's term when the leader itself reports it).
inline constexpr sim::RecordType kLogCommit{"log.commit", {"index", "term", "entry", "current_term"}};

// ---- declarations: what an algorithm promises, stated by each node ----
// Facts a checker needs to judge a promise but cannot see on the wire, as
// data: a node reports them when it boots (and, for a rank, when it
// changes); a checker takes each node's latest and judges nothing for a node
// that states none.
//
// How the node tells it still hears its leader: the leader's leader-only
// messages (MessageRoles) arrive less than `within` ns apart, and have for
// at least `over` ns. Meant: while it hears its leader so, the node does
// nothing that raises a term (Raft with pre-vote and check-quorum ignores
// vote requests). The disruption checker counts such nodes. Fields: within,
// over.
inline constexpr sim::RecordType kHearing{"declare.hearing", {"within", "over"}};
// The node's place in the algorithm's promise of who wins: once the cluster
// is stable, the live node of highest rank leads (Bully: its id; Ring: its
// election id; ZooKeeper's recipe: minus its sequence number, the lowest
// leads). Field: rank.
inline constexpr sim::RecordType kRank{"declare.rank", {"rank"}};
// As declare.rank, and a stronger promise: the node never believes in a
// leader of lower rank than its own (Bully challenges a lower id's claim and
// never follows it). So whenever every live node has believed in one leader
// for a while, that leader is of the highest live rank, while the faults
// last too, not only once they are over. Field: rank.
inline constexpr sim::RecordType kRankAnytime{"declare.rank_anytime", {"rank"}};
// The node acts as a lease holder only within `margin` millionths of a
// lease's TTL, counted on its own monotonic clock from sending the request
// the store granted (lease.request, lease.grant). Field: margin.
inline constexpr sim::RecordType kLeaseMargin{"declare.lease_margin", {"margin"}};

// ---- leases ----
// The node sent the store request `req`, which grants or renews a lease if
// the store accepts it; the record's time and local time are when it left.
// Fields: req; key (optional).
inline constexpr sim::RecordType kLeaseRequest{"lease.request", {"req", "key"}};
// Reported by the store: it granted or renewed lease `token` (the key's
// create revision) to `holder`, answering `holder`'s request `req`, for
// `ttl` ns on its own clock from now. Fields: token, holder, req, ttl; key (optional).
inline constexpr sim::RecordType kLeaseGrant{"lease.grant", {"token", "holder", "req", "ttl", "key"}};
// Reported by the store: lease `token` of `holder` ended (it expired, was
// deleted, or went to another holder). Fields: token, holder; key (optional).
inline constexpr sim::RecordType kLeaseEnd{"lease.end", {"token", "holder", "key"}};
// Reported by the store: a request of node `by` deleted (how 1) or
// overwrote (how 2) key `key` while `holder` held it under lease `token`,
// which had not run out. Only reported when `by` is not the holder: an old
// owner's plain unlock (a delete not conditioned on the version it
// acquired) deleting its successor's lock. Fields: key, holder, token, by, how.
inline constexpr sim::RecordType kKeyTaken{"key.taken", {"key", "holder", "token", "by", "how"}};

inline constexpr std::string_view kFieldRole = "role";
inline constexpr std::string_view kFieldTerm = "term";
inline constexpr std::string_view kFieldToken = "token";
inline constexpr std::string_view kFieldLeader = "leader";
inline constexpr std::string_view kFieldCandidate = "candidate";
inline constexpr std::string_view kFieldWriter = "writer";
inline constexpr std::string_view kFieldSeq = "seq";
inline constexpr std::string_view kFieldHighest = "highest";
inline constexpr std::string_view kFieldIndex = "index";
inline constexpr std::string_view kFieldEntry = "entry";
inline constexpr std::string_view kFieldCurrentTerm = "current_term";

inline constexpr std::string_view kFieldWithin = "within";
inline constexpr std::string_view kFieldOver = "over";
inline constexpr std::string_view kFieldRank = "rank";
inline constexpr std::string_view kFieldMargin = "margin";
inline constexpr std::string_view kFieldReq = "req";
inline constexpr std::string_view kFieldHolder = "holder";
inline constexpr std::string_view kFieldTtl = "ttl";
inline constexpr std::string_view kFieldKey = "key";

inline constexpr int64_t kNobody = -1;

// Typed views of the observations, for checkers and tools.
struct RoleChanged {
  static constexpr const sim::RecordType& kType = kRoleChange;
  int64_t role = 0;
  int64_t term = 0;
  int64_t token = 0;  // present (size() == 3) only for the leader role
};
struct BeliefChanged {
  static constexpr const sim::RecordType& kType = kBelief;
  int64_t leader = kNobody;
  int64_t term = 0;
};
struct TermChanged {
  static constexpr const sim::RecordType& kType = kTermChange;
  int64_t term = 0;
};
struct VoteGranted {
  static constexpr const sim::RecordType& kType = kVote;
  int64_t term = 0;
  int64_t candidate = 0;
};
struct WriteBegun {
  static constexpr const sim::RecordType& kType = kWriteBegin;
  int64_t token = 0;
};
struct WriteSent {
  static constexpr const sim::RecordType& kType = kWrite;
  int64_t token = 0;
  int64_t seq = 0;
};
// resource.accept and resource.reject carry the same fields.
struct ResourceDecision {
  int64_t token = 0;
  int64_t writer = 0;
  int64_t seq = 0;
  int64_t highest = 0;
};
struct ResourceAccepted : ResourceDecision {
  static constexpr const sim::RecordType& kType = kResourceAccept;
};
struct ResourceRejected : ResourceDecision {
  static constexpr const sim::RecordType& kType = kResourceReject;
};
struct LogAppended {
  static constexpr const sim::RecordType& kType = kLogAppend;
  int64_t index = 0;
  int64_t term = 0;
  int64_t entry = 0;
};
struct LogTruncated {
  static constexpr const sim::RecordType& kType = kLogTruncate;
  int64_t index = 0;
};
struct LogCommitted {
  static constexpr const sim::RecordType& kType = kLogCommit;
  int64_t index = 0;
  int64_t term = 0;
  int64_t entry = 0;
  int64_t current_term = 0;
};

struct HearingDeclared {
  static constexpr const sim::RecordType& kType = kHearing;
  int64_t within = 0;
  int64_t over = 0;
};
struct RankDeclared {
  static constexpr const sim::RecordType& kType = kRank;
  int64_t rank = 0;
};
struct RankAnytimeDeclared {
  static constexpr const sim::RecordType& kType = kRankAnytime;
  int64_t rank = 0;
};
struct LeaseMarginDeclared {
  static constexpr const sim::RecordType& kType = kLeaseMargin;
  int64_t margin = 0;
};
struct LeaseRequested {
  static constexpr const sim::RecordType& kType = kLeaseRequest;
  int64_t req = 0;
};
struct LeaseGranted {
  static constexpr const sim::RecordType& kType = kLeaseGrant;
  int64_t token = 0;
  int64_t holder = 0;
  int64_t req = 0;
  int64_t ttl = 0;
};
struct LeaseEnded {
  static constexpr const sim::RecordType& kType = kLeaseEnd;
  int64_t token = 0;
  int64_t holder = 0;
};
struct KeyTaken {
  static constexpr const sim::RecordType& kType = kKeyTaken;
  int64_t key = 0;
  int64_t holder = 0;
  int64_t token = 0;
  int64_t by = 0;
  int64_t how = 0;  // 1: deleted, 2: overwritten
};
inline constexpr int64_t kKeyTakenByDelete = 1;
inline constexpr int64_t kKeyTakenByOverwrite = 2;

// The key an observation is about, when it names one (see "Keys" above).
inline std::optional<int64_t> KeyOf(const sim::Observation& observation) {
  const sim::RecordType* type = observation.type();
  if (type == nullptr) return std::nullopt;
  const int index = type->IndexOf(kFieldKey);
  if (!observation.Has(index)) return std::nullopt;
  return observation.value(index);
}
// `observation` about `key`: its type's optional fields before "key" are set
// to 0 where absent (a follower's token). The type must have a key field.
sim::Observation WithKey(sim::Observation observation, int64_t key);

// ---- message roles: what the wire shows ----
//
// Observations are what a node says about itself; its messages are what it
// did. Each algorithm declares, as data, which of its messages only a leader
// sends and which grant a vote, and where their term is, so that checkers can
// verify the observations against the send records without knowing the
// algorithm (and catch a node that leads without saying so).

// A message that only the leader of the term in `term_field` sends.
struct LeaderOnlyMessage {
  LeaderOnlyMessage(const sim::RecordType& message_type, std::string_view term_field_name)
      : type(&message_type), term_field(message_type.IndexOf(term_field_name)) {
    SIM_CHECK(term_field >= 0, "a leader-only message's term field is one of its fields");
  }
  const sim::RecordType* type;
  int term_field;
};

// A message by which its sender grants its vote, in the term in
// `term_field`, to its receiver: every such message, or with `granted_field`
// set only those where that field is not 0.
struct VoteGrantMessage {
  VoteGrantMessage(const sim::RecordType& message_type, std::string_view term_field_name,
                   std::string_view granted_field_name = {})
      : type(&message_type),
        term_field(message_type.IndexOf(term_field_name)),
        granted_field(granted_field_name.empty() ? -1 : message_type.IndexOf(granted_field_name)) {
    SIM_CHECK(term_field >= 0 && (granted_field_name.empty() || granted_field >= 0),
              "a vote grant's term and granted fields are fields of its message");
  }
  const sim::RecordType* type;
  int term_field;
  int granted_field;  // -1: every message of the type grants
};

struct MessageRoles {
  std::vector<LeaderOnlyMessage> leader_only;
  std::vector<VoteGrantMessage> vote_grants;
  // Steady-state traffic: the heartbeats or lease renewals a healthy cluster
  // keeps sending (and their replies), which metrics count apart from the
  // messages of an election.
  std::vector<const sim::RecordType*> steady_state;

  bool IsSteadyState(const sim::Message& message) const {
    for (const sim::RecordType* type : steady_state) {
      if (message.Is(*type)) return true;
    }
    return false;
  }

  // The term a message shows its sender leading, if it is leader-only.
  std::optional<int64_t> LeaderTerm(const sim::Message& message) const {
    for (const LeaderOnlyMessage& role : leader_only) {
      if (message.Is(*role.type)) return message.value(role.term_field);
    }
    return std::nullopt;
  }
  // The term a message grants a vote in (to its receiver), if it does.
  std::optional<int64_t> GrantTerm(const sim::Message& message) const {
    for (const VoteGrantMessage& role : vote_grants) {
      if (!message.Is(*role.type)) continue;
      if (role.granted_field >= 0 && message.value(role.granted_field) == 0) return std::nullopt;
      return message.value(role.term_field);
    }
    return std::nullopt;
  }
};

inline sim::Observation RoleChange(Role role, sim::Term term) {
  return sim::Observation(kRoleChange, {static_cast<int64_t>(role), static_cast<int64_t>(term.value())});
}
inline sim::Observation BecameLeader(sim::Term term, sim::FencingToken token) {
  return sim::Observation(kRoleChange, {static_cast<int64_t>(Role::kLeader), static_cast<int64_t>(term.value()),
                                        static_cast<int64_t>(token.value())});
}
inline sim::Observation Belief(sim::NodeId leader, sim::Term term) {
  return sim::Observation(kBelief, {leader == sim::kNoNode ? kNobody : static_cast<int64_t>(leader.value()),
                                    static_cast<int64_t>(term.value())});
}
inline sim::Observation TermChange(sim::Term term) {
  return sim::Observation(kTermChange, {static_cast<int64_t>(term.value())});
}
inline sim::Observation Vote(sim::Term term, sim::NodeId candidate) {
  return sim::Observation(kVote, {static_cast<int64_t>(term.value()), static_cast<int64_t>(candidate.value())});
}
inline sim::Observation LogAppend(uint64_t index, sim::Term term, uint64_t entry) {
  return sim::Observation(
      kLogAppend, {static_cast<int64_t>(index), static_cast<int64_t>(term.value()), static_cast<int64_t>(entry)});
}
inline sim::Observation LogTruncate(uint64_t from_index) {
  return sim::Observation(kLogTruncate, {static_cast<int64_t>(from_index)});
}
inline sim::Observation LogCommit(uint64_t index, sim::Term term, uint64_t entry, sim::Term current_term) {
  return sim::Observation(kLogCommit, {static_cast<int64_t>(index), static_cast<int64_t>(term.value()),
                                       static_cast<int64_t>(entry), static_cast<int64_t>(current_term.value())});
}

inline sim::Observation Hearing(sim::TimeNs within, sim::TimeNs over) {
  return HearingDeclared{.within = within.ns(), .over = over.ns()};
}
inline sim::Observation Rank(int64_t rank) { return RankDeclared{.rank = rank}; }
inline sim::Observation RankAnytime(int64_t rank) { return RankAnytimeDeclared{.rank = rank}; }
inline sim::Observation LeaseMargin(int64_t margin_ppm) { return LeaseMarginDeclared{.margin = margin_ppm}; }
inline sim::Observation LeaseRequest(int64_t req) { return LeaseRequested{.req = req}; }
inline sim::Observation LeaseGrant(int64_t token, int64_t holder, int64_t req, sim::TimeNs ttl) {
  return LeaseGranted{.token = token, .holder = holder, .req = req, .ttl = ttl.ns()};
}
inline sim::Observation LeaseEnd(int64_t token, int64_t holder) { return LeaseEnded{.token = token, .holder = holder}; }

}  // namespace vocab
