// Shard ownership by leases: `keys` keys of one store, one TTL lease each,
// and every election node a replica competing for them under a policy
// (every key first come, a cap per replica, or a fair share of the members
// it sees). This is how leases are used in production to give each shard,
// scheduled job or partition one owner at a time (locks over etcd,
// ZooKeeper or Consul): many keys, many replicas, one store. Each key is
// the lease algorithm's single key again (acquire with put_if_absent, renew
// by keep-alive, act within safety_margin x TTL of the granted request's
// send, fencing token = the key's create revision), and each observation
// names its key, so every checker judges each key on its own.
#pragma once

#include "electsim/algorithms/algorithm.h"

namespace algorithms {

const Algorithm& ShardsAlgorithm();

}  // namespace algorithms
