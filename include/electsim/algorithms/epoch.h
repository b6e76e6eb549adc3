// An epoch kept in stable storage: the term and fencing token of the
// quorum-less algorithms (Bully, Ring), and the lease node's term (the
// highest create revision it has seen).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "electsim/sim/message.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"
#include "electsim/vocab/vocabulary.h"

namespace algorithms {

// The highest epoch a node has seen, kept in stable storage so that a
// restarted node never announces an epoch twice nor reports a lower term,
// plus a boot counter that tells a restart from the first boot and keeps ids
// of different incarnations apart.
class DurableEpoch {
 public:
  // Storage keys are "<algorithm>.max_epoch" and "<algorithm>.boots".
  explicit DurableEpoch(std::string_view algorithm)
      : max_epoch_key_(std::string(algorithm) + ".max_epoch"), boots_key_(std::string(algorithm) + ".boots") {}

  // Reads the stored epoch and counts this boot; true when this is a restart.
  bool Boot(sim::Context& ctx) {
    max_ = static_cast<uint64_t>(ctx.Load(max_epoch_key_).value_or(0));
    earlier_boots_ = ctx.Load(boots_key_).value_or(0);
    ctx.Persist(boots_key_, earlier_boots_ + 1);
    if (max_ > 0) ctx.Observe(vocab::TermChange(sim::Term(max_)));
    return earlier_boots_ > 0;
  }

  uint64_t max() const { return max_; }

  // Ids that come back in a reply (request ids, election rounds, hop
  // numbers) are id_base() + n with 0 < n < 2^32: each boot has a block of
  // its own, so a reply to an earlier incarnation never matches a request of
  // this one. Valid after Boot().
  int64_t id_base() const { return earlier_boots_ << kIdBitsPerBoot; }
  static constexpr int kIdBitsPerBoot = 32;

  // Records `epoch` as the highest seen; persisted before anything carries it.
  void Raise(sim::Context& ctx, uint64_t epoch) {
    max_ = epoch;
    ctx.Persist(max_epoch_key_, static_cast<int64_t>(epoch));
    ctx.Observe(vocab::TermChange(sim::Term(epoch)));
  }

 private:
  const std::string max_epoch_key_;
  const std::string boots_key_;
  uint64_t max_ = 0;
  int64_t earlier_boots_ = 0;
};

}  // namespace algorithms
