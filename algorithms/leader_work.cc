#include "electsim/algorithms/leader_work.h"

#include <algorithm>

#include "electsim/vocab/vocabulary.h"

namespace algorithms {

void LeaderWork::Begin(sim::Context& ctx, sim::FencingToken token) {
  End(ctx);
  active_ = true;
  token_ = token;
  // The first write goes out at once: a new leader proves itself immediately.
  tick_timer_.Arm(ctx, sim::TimeNs(0));
}

void LeaderWork::End(sim::Context& ctx) {
  if (!active_) return;
  active_ = false;
  tick_timer_.Cancel(ctx);
  send_timer_.Cancel(ctx);
}

bool LeaderWork::OnTimer(sim::Context& ctx, sim::TimerId timer, const std::function<bool()>& may_act,
                         const std::function<void()>& wrote) {
  if (tick_timer_.Fired(timer)) {
    tick_timer_.Arm(ctx, config_.write_interval);
    if (!send_timer_.armed() && may_act()) {
      ctx.Observe(vocab::WriteBegun{.token = static_cast<int64_t>(token_.value())});
      send_timer_.Arm(ctx, config_.write_duration);
    }
    return true;
  }
  if (send_timer_.Fired(timer)) {
    // No re-check here: the decision was made at write_begin. That gap is real
    // (a GC pause, a slow disk) and is what fencing tokens exist for.
    const int64_t seq = static_cast<int64_t>(++writes_sent_);
    const int64_t token = static_cast<int64_t>(token_.value());
    ctx.Send(resource_, ResourceWrite{.token = token, .seq = seq});
    ctx.Observe(vocab::WriteSent{.token = token, .seq = seq});
    if (wrote) wrote();
    return true;
  }
  return false;
}

namespace {

class SharedResource final : public sim::Process {
 public:
  SharedResource(bool fencing, bool exclusive_token) : fencing_(fencing), exclusive_token_(exclusive_token) {}

  void OnStart(sim::Context& ctx) override {
    highest_ = ctx.Load("highest_token").value_or(0);
    highest_writer_ = ctx.Load("highest_token_writer").value_or(-1);
  }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    const std::optional<ResourceWrite> write = message.As<ResourceWrite>();
    if (!write) return;
    const int64_t token = write->token;
    const int64_t seq = write->seq;
    const int64_t writer = from.value();
    const bool taken_by_another =
        exclusive_token_ && token == highest_ && highest_writer_ >= 0 && highest_writer_ != writer;
    const bool accept = !fencing_ || (token >= highest_ && !taken_by_another);
    ctx.Observe(
        sim::Observation(accept ? vocab::kResourceAccept : vocab::kResourceReject, {token, writer, seq, highest_}));
    if (accept && token > highest_) {
      highest_ = token;
      ctx.Persist("highest_token", highest_);
    }
    if (accept && exclusive_token_ && token == highest_ && highest_writer_ != writer) {
      highest_writer_ = writer;
      ctx.Persist("highest_token_writer", highest_writer_);
    }
    ctx.Send(from, ResourceAck{.token = token, .seq = seq, .accepted = accept ? 1 : 0, .highest = highest_});
  }

  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}

 private:
  bool fencing_;
  bool exclusive_token_;
  int64_t highest_ = 0;  // highest token accepted so far (also in stable storage)
  // Who wrote highest_ first, with exclusive_token (also in stable storage); -1: nobody yet.
  int64_t highest_writer_ = -1;
};

}  // namespace

std::unique_ptr<sim::Process> MakeSharedResource(bool fencing, bool exclusive_token) {
  return std::make_unique<SharedResource>(fencing, exclusive_token);
}

}  // namespace algorithms
