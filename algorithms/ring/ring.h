// Ring election (Chang & Roberts, 1979) with the usual failure handling.
// Nodes sit on a logical ring in node order (the successor of i is i+1 mod n)
// and each has an election id. An election message carries the largest id it
// has met; it is dropped at any participant with a larger id, so only the
// largest id comes home, and its owner announces itself with an ELECTED
// message that travels once around the ring.
//
// Failures: every ring hop is acknowledged; a hop not acknowledged within
// ack_timeout is re-sent to the same successor, up to ack_retries times, so
// that one lost message does not cut a live node out; a successor that
// acknowledges none of them is marked dead and skipped. The leader
// heartbeats every node directly; a node that hears nothing for
// heartbeat_timeout, or whose round has no result after (ack_retries + 1)
// heartbeat timeouts, starts a new election. Each election round carries an
// epoch (1 + the highest epoch the initiator has seen, kept in stable
// storage): the term reported to checkers and the leader's fencing token.
// As with Bully there is no quorum: a partitioned ring elects one leader per
// side.
//
// The ring of one. Chang and Roberts assume a ring without failures, where
// the largest id always comes home. The failure handling follows the ring
// algorithm in Tanenbaum and van Steen's "Distributed Systems": a sender
// whose successor is down skips it and tries the next member along the ring,
// "until a running process is located", and the message ends when it is
// back at a node that has already seen it. When every other node is marked
// dead, the next running process along the ring is the sender itself: the
// message is home at once and the node is the largest live id it knows of
// (an id it was forwarding belongs to a node beyond the dead ones), so it
// leads that round (SendAround). That is sound only where "marked dead"
// means crashed for good, which is the source's assumption. Under message
// loss, latency past the ack timeouts, a partition or a one-way cut, a live
// successor looks dead: the ring splits into parts that each elect, down to
// a node alone. A crashed node that restarts is a live node still marked
// dead, with the same effect. That is why Ring declares election safety
// under duplication and clock steps only (guarantees()).
#pragma once

#include <string_view>

#include "electsim/algorithms/algorithm.h"

namespace algorithms {

// Message types. All carry field "epoch"; a ring hop carries the sequence
// number its ack echoes.
namespace ring {
// ELECTION: the largest election id met so far in round `epoch`.
struct Election {
  static constexpr sim::RecordType kType{"ring.election", {"id", "epoch", "seq"}};
  int64_t id = 0;
  int64_t epoch = 0;
  int64_t seq = 0;
};
// ELECTED: `leader` (a node, with election id `id`) won round `epoch`.
struct Elected {
  static constexpr sim::RecordType kType{"ring.elected", {"epoch", "id", "leader", "seq"}};
  int64_t epoch = 0;
  int64_t id = 0;
  int64_t leader = 0;
  int64_t seq = 0;
};
// The receiver of a hop is alive; epoch = its highest.
struct Ack {
  static constexpr sim::RecordType kType{"ring.ack", {"epoch", "seq"}};
  int64_t epoch = 0;
  int64_t seq = 0;
};
// The leader's periodic word to every node.
struct Heartbeat {
  static constexpr sim::RecordType kType{"ring.heartbeat", {"epoch", "id", "leader"}};
  int64_t epoch = 0;
  int64_t id = 0;
  int64_t leader = 0;
};
}  // namespace ring
inline constexpr const sim::RecordType& kRingElection = ring::Election::kType;
inline constexpr const sim::RecordType& kRingElected = ring::Elected::kType;
inline constexpr const sim::RecordType& kRingAck = ring::Ack::kType;
inline constexpr const sim::RecordType& kRingHeartbeat = ring::Heartbeat::kType;

// The algorithm, named "ring".
const Algorithm& RingAlgorithm();

}  // namespace algorithms
