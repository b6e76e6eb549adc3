// Leader election by a lease on a compare-and-swap store (etcd's election
// recipe, Kubernetes' Lease lock): candidates race put_if_absent on the
// leader key with a TTL; the winner renews it, by default with a keep-alive
// as etcd does (the TTL restarts, the key's revisions do not move; option
// renew "cas" rewrites the key on its version instead, as a Kubernetes Lease
// update does); everyone else watches the key and races again when it is
// gone. The fencing token is the revision at which the lease was created.
//
// The store measures the TTL on its own clock, the holder measures its right
// to act on its own: from the time it *sent* the acquire/renew request, it
// acts for safety_margin × lease_ttl on its monotonic clock. A holder whose
// clock runs slow, or that pauses past its view, can act after the store has
// already handed the lease to someone else; only fencing at the resource
// catches that. Option deadline_clock "wall" measures the view on the wall
// clock instead, a deliberate bug that a step of that clock exposes.
//
// The clock-drift bound safety_margin assumes. Let m = safety_margin, T =
// lease_ttl, and let the holder's clocks run at rate 1 + r_h and the store's
// at 1 + r_s (r = drift_ppm / 10^6). The holder sends its request at real
// time t and acts until its clock has counted m·T, i.e. until
// t + m·T / (1 + r_h). The store receives the request at t + d (d >= 0, the
// latency) and expires the lease once its clock has counted T, at
// t + d + T / (1 + r_s); nobody else can hold the lease before then. No
// overlap for any d >= 0 needs
//     m / (1 + r_h) <= 1 / (1 + r_s),   i.e.   m · (1 + r_s) <= 1 + r_h.
// With the store's clock true (r_s = 0) the holder's clock may run slow by at
// most 1 - m: the default 0.75 covers drift_ppm >= -250000 on the holder.
// Exactly at the bound the two ends meet at t + T when d = 0, and a latency
// of at least 1ns keeps them apart; past it the holder acts on after the
// store has expired its lease (scenarios lease-drift-at-bound and
// lease-drift-past-bound). A pause is drift without bound.
#pragma once

#include "electsim/algorithms/algorithm.h"

namespace algorithms {

// Name "lease"; uses_store() is true and CreateStore returns store::MakeStore().
const Algorithm& LeaseAlgorithm();

// What a TTL lease over the store keeps, `one_holder` being the fault kinds
// under which one node at a time holds it (lease.cc says why for each): the
// lease algorithm's table, and each key's for shards.
Guarantees LeaseGuarantees(FaultKinds one_holder);

// The timing a lease holder needs, from options lease_ttl, renew_interval,
// request_timeout and safety_margin: renewals and request timeouts shorter
// than the TTL and than the holder's view of it.
absl::Status ValidateLeaseTiming(const OptionValues& options);

}  // namespace algorithms
