// ZooKeeper's leader-election recipe, written against electsim's public API
// as any user would write an algorithm (see ../../README.md, "Write your own
// algorithm").
//
// Each node opens a session with the store and creates an ephemeral,
// sequential child of the election directory. The node whose child has the
// lowest sequence number leads; every other node watches only the child just
// below its own (its predecessor), so when a node goes, exactly one other
// node hears of it: no herd effect. A node that hears its predecessor is
// gone asks again for a child below its own; if there is none, it leads.
// The sequence number is the leader's term and its fencing token.
//
// A session dies when the store hears nothing from it for session_timeout
// on the store's clock, and its child goes with it. A node acts as leader
// only for safety_margin x session_timeout on its own clock since it sent
// the last ping the store answered; when that runs out, it gives the
// session up and joins again at the back of the line.
#pragma once

#include "electsim/electsim.h"

namespace zookeeper {

// The algorithm, named "zookeeper".
const algorithms::Algorithm& ZooKeeperElection();

}  // namespace zookeeper
