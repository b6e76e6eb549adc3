#include "algorithms/ring/ring_mutants.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "electsim/sim/check.h"

namespace algorithms::ring {
namespace {

// The ids forwarded in one round are still remembered in the next, so an id
// forwarded once is dropped in every later round.
class KeepForwardedIds final : public RingNode {
 public:
  using RingNode::RingNode;

 protected:
  void ForgetForwardedIds() override {}
};

// A participant does not start a new round when its round times out: it
// takes itself to be in an election already.
class NoNewRoundWhileParticipant final : public RingNode {
 public:
  using RingNode::RingNode;

 protected:
  void OnSilence(sim::Context& ctx) override {
    if (!participant()) StartElection(ctx);
  }
};

// A node opens a round one above the last decided epoch instead of one
// above the highest it has seen: once it has seen a round beyond the next
// one, its epoch goes back down.
class EpochFromDecided final : public RingNode {
 public:
  using RingNode::RingNode;

 protected:
  uint64_t NextRoundEpoch() const override { return decided_epoch() + 1; }
};

// A node that joins a round sends on the smaller incoming id instead of its
// own larger one: with a single initiator, a smaller id wins.
class ForwardSmallerId final : public RingNode {
 public:
  using RingNode::RingNode;

 protected:
  int64_t IdSentOnJoining(int64_t incoming) const override { return incoming; }
};

using Table = algorithms::MutantTable<sim::Process, RingConfig>;

// The one table: each mutant's name, description and fuzz flags, and its node.
const Table& TheTable() {
  static const Table table({
      {{"keep_forwarded_ids",
        "the ids a node forwarded are not cleared when a new round begins, so it drops them in every later round", ""},
       &Table::Make<KeepForwardedIds>},
      {{"no_new_round_while_participant",
        "a participant whose round times out starts no new round, as it believes an election is already running", ""},
       &Table::Make<NoNewRoundWhileParticipant>},
      {{"epoch_from_decided",
        "a new round is numbered one above the last round whose leader is known, not above the highest epoch seen", ""},
       &Table::Make<EpochFromDecided>},
      {{"forward_smaller_id", "a node joining a round sends on the smaller id it received instead of its own", ""},
       &Table::Make<ForwardSmallerId>},
  });
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, RingConfig config) {
  return TheTable().Create<RingNode>(bug, self, std::move(config));
}

}  // namespace algorithms::ring
