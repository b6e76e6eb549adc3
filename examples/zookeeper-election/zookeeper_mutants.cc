#include "zookeeper_mutants.h"

#include <string_view>

namespace zookeeper {
namespace {

// Takes its predecessor's going as its turn to lead, without asking whether
// a child below its own is still there: a waiting node whose session
// expired was no leader, and the leader below it still leads.
class LeadOnNotice final : public Node {
 public:
  using Node::Node;

 protected:
  void OnPredecessorGone(sim::Context& ctx) override { BecomeLeader(ctx); }
};

// After losing its session (an expiry, a restart), takes back the child it
// held before instead of creating one: the store deletes that child with
// the old session, and whoever waited on it may already lead.
class KeepExpiredChild final : public Node {
 public:
  using Node::Node;

 protected:
  void OnSessionOpened(sim::Context& ctx) override {
    const int64_t held = static_cast<int64_t>(Term().value());
    if (held > 0) {
      TakeChild(ctx, held);
    } else {
      Node::OnSessionOpened(ctx);
    }
  }
};

using Table = algorithms::MutantTable<sim::Process, Config>;

// Every mutant is fuzzed against a fencing resource: without one,
// `--guarantees-of defaults` fails the reference too (a leader's write
// delayed past its successor's is stale), so a failure would say nothing of
// the bug.
constexpr std::string_view kFencing = "--fencing";

// The one table: each mutant's name, description, fuzz flags and node.
const Table& TheTable() {
  static const Table table({
      {{"lead_on_notice",
        "a node that hears its predecessor is gone leads, without checking for a child still below its own", kFencing},
       &Table::Make<LeadOnNotice>},
      {{"keep_expired_child",
        "a node that lost its session rejoins with the child it held before, which the store deleted with that "
        "session, instead of creating a new one",
        kFencing},
       &Table::Make<KeepExpiredChild>},
  });
  return table;
}

}  // namespace

const std::vector<algorithms::Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, Config config) {
  return TheTable().Create<Node>(bug, self, config);
}

}  // namespace zookeeper
