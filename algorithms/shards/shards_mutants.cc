#include "algorithms/shards/shards_mutants.h"

#include "electsim/algorithms/store.h"

namespace algorithms::shards {
namespace {

// The unlock of a TTL lock that is not conditioned on the version the owner
// acquired (a plain DEL or etcd Delete): an owner that stalled past its TTL
// and wakes to release finds the key its successor acquired since, and
// deletes that.
class PlainRelease final : public ShardReplica {
 public:
  using ShardReplica::ShardReplica;

 protected:
  void SendRelease(sim::Context& ctx, int64_t key, int64_t) override {
    const int64_t req = NewRequest(ctx, key, kReleaseOp);
    ctx.Send(config().store, store::DeleteKeyRequest{.req = req, .key = key});
  }
};

using Table = algorithms::MutantTable<sim::Process, ShardsConfig>;

const Table& TheTable() {
  static const Table table({
      {{"plain_release",
        "an owner releases a key with a plain delete, not one conditioned on the version it acquired, so an owner "
        "that stalled past its TTL deletes its successor's key",
        "--fencing"},
       &Table::Make<PlainRelease>},
  });
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, ShardsConfig config) {
  return TheTable().Create<ShardReplica>(bug, self, config);
}

}  // namespace algorithms::shards
