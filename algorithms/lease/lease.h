// Leader election by a lease on a compare-and-swap store (etcd's election
// recipe, Kubernetes' Lease lock): candidates race put_if_absent on the
// leader key with a TTL; the winner renews with cas on its version; everyone
// else watches the key and races again when it is gone. The fencing token is
// the revision at which the lease was created.
//
// The store measures the TTL on its own clock, the holder measures its right
// to act on its own: from the time it *sent* the acquire/renew request, it
// acts for safety_margin × lease_ttl on its monotonic clock. A holder whose
// clock runs slow, or that pauses past its view, can act after the store has
// already handed the lease to someone else; only fencing at the resource
// catches that. Option deadline_clock "wall" measures the view on the wall
// clock instead, a deliberate bug that a step of that clock exposes.
#pragma once

#include "algorithms/algorithm.h"

namespace algorithms {

// Name "lease"; uses_store() is true and CreateStore returns lease::MakeStore().
const Algorithm& LeaseAlgorithm();

}  // namespace algorithms
