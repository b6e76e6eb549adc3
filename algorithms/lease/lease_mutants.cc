#include "algorithms/lease/lease_mutants.h"

#include <optional>
#include <string_view>

#include "electsim/sim/check.h"

namespace algorithms::lease {
namespace {

// Acts for the whole TTL the store grants, as if its clock and the store's
// ran at one rate: it acts past the margin it declares, and a holder clock
// running slow (within the drift the margin is there to absorb) keeps it
// acting after the store has let the lease go.
class FullTtl final : public LeaseNode {
 public:
  using LeaseNode::LeaseNode;

 protected:
  sim::TimeNs LeaseView() const override { return config().lease_ttl; }
};

// Starts the view when the reply arrives, not when the request left: the
// store started the TTL when the request arrived, so the holder acts up to
// the reply's way back longer than its margin allows, and past the store's
// lease once that and a slow clock outgrow the margin.
class DeadlineFromReply final : public LeaseNode {
 public:
  using LeaseNode::LeaseNode;

 protected:
  sim::TimeNs LeaseViewStart(sim::Context& ctx, sim::TimeNs) const override { return DeadlineNow(ctx); }
};

// Caches the fencing token of the first lease it acquires and writes with it
// under every lease it acquires later.
class ReuseToken final : public LeaseNode {
 public:
  using LeaseNode::LeaseNode;

 protected:
  sim::FencingToken TokenOf(const KeyState& lease) override {
    if (!token_) token_ = LeaseNode::TokenOf(lease);
    return *token_;
  }

 private:
  std::optional<sim::FencingToken> token_;
};

// Takes every renewal reply as granted, without looking at the store's
// answer: a refused renewal extends the view as a granted one does.
class IgnoreRenewalResult final : public LeaseNode {
 public:
  using LeaseNode::LeaseNode;

 protected:
  void OnRenewResult(sim::Context& ctx, bool, const KeyState& reported, sim::TimeNs sent_at) override {
    LeaseNode::OnRenewResult(ctx, true, reported, sent_at);
  }
};

// Counts a renewal whose reply timed out as granted: the view is extended
// from when it left, though the store may never have seen it.
class RenewTimeoutAsGranted final : public LeaseNode {
 public:
  using LeaseNode::LeaseNode;

 protected:
  void OnRenewTimeout(sim::Context& ctx, sim::TimeNs sent_at) override {
    ExtendView(ctx, sent_at);
    LeaseNode::OnRenewTimeout(ctx, sent_at);
  }
};

using Table = algorithms::MutantTable<sim::Process, LeaseConfig>;

// Every mutant is fuzzed against a fencing resource: without one,
// `--guarantees-of defaults` fails the reference too (a write delayed past
// the next holder's is stale), so a failure would say nothing of the bug.
constexpr std::string_view kFencing = "--fencing";
// A refused renewal that still finds the lease ours (the step the mutant
// changes) takes a compare-and-swap renewal: a refused keep-alive never
// does, and Learn steps the holder down before the result is read.
constexpr std::string_view kFencingCas = "--fencing --option renew=cas";

// The one table: each mutant's name, description, fuzz flags and node.
const Table& TheTable() {
  static const Table table({
      {{"full_ttl",
        "the holder acts for the whole TTL on its own clock, leaving no margin for a clock slower than the store's",
        kFencing},
       &Table::Make<FullTtl>},
      {{"deadline_from_reply",
        "the holder measures its lease from when the store's reply arrived, not from when it sent the request",
        kFencing},
       &Table::Make<DeadlineFromReply>},
      {{"reuse_token", "the holder keeps the fencing token of its first lease when it acquires a new one", kFencing},
       &Table::Make<ReuseToken>},
      {{"ignore_renewal_result", "the holder takes every renewal reply as granted, without checking the store's answer",
        kFencingCas},
       &Table::Make<IgnoreRenewalResult>},
      {{"renew_timeout_as_granted", "the holder counts a renewal whose reply timed out as granted", kFencing},
       &Table::Make<RenewTimeoutAsGranted>},
  });
  return table;
}

}  // namespace

const std::vector<Mutant>& Mutants() { return TheTable().mutants(); }

std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, LeaseConfig config) {
  return TheTable().Create<LeaseNode>(bug, self, config);
}

}  // namespace algorithms::lease
