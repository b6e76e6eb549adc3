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

using Factory = std::unique_ptr<sim::Process> (*)(sim::NodeId self, RingConfig config);

// A node that joins a round sends on the smaller incoming id instead of its
// own larger one: with a single initiator, a smaller id wins.
class ForwardSmallerId final : public RingNode {
 public:
  using RingNode::RingNode;

 protected:
  int64_t IdSentOnJoining(int64_t incoming) const override { return incoming; }
};

template <typename Node>
std::unique_ptr<sim::Process> Make(sim::NodeId self, RingConfig config) {
  return std::make_unique<Node>(self, std::move(config));
}

struct Entry {
  Mutant mutant;
  Factory create;
};

// The one table: each mutant's name, description and fuzz flags, and its node.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {{"keep_forwarded_ids",
        "the ids a node forwarded are not cleared when a new round begins, so it drops them in every later round", ""},
       &Make<KeepForwardedIds>},
      {{"no_new_round_while_participant",
        "a participant whose round times out starts no new round, as it believes an election is already running", ""},
       &Make<NoNewRoundWhileParticipant>},
      {{"epoch_from_decided",
        "a new round is numbered one above the last round whose leader is known, not above the highest epoch seen", ""},
       &Make<EpochFromDecided>},
      {{"forward_smaller_id", "a node joining a round sends on the smaller id it received instead of its own", ""},
       &Make<ForwardSmallerId>},
  };
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() {
  static const std::vector<Mutant> mutants = [] {
    std::vector<Mutant> list;
    for (const Entry& entry : Table()) list.push_back(entry.mutant);
    return list;
  }();
  return mutants;
}

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, RingConfig config) {
  SIM_CHECK(bug >= 0 && static_cast<size_t>(bug) <= Table().size(), "bug is an index into the \"bug\" option");
  if (bug == 0) return std::make_unique<RingNode>(self, std::move(config));
  return Table()[static_cast<size_t>(bug - 1)].create(self, std::move(config));
}

}  // namespace algorithms::ring
