#include "algorithms/leader_work.h"

#include <algorithm>

#include "algorithms/vocabulary.h"

namespace algorithms {

void LeaderWork::Begin(sim::Context& ctx, sim::FencingToken token) {
  End(ctx);
  active_ = true;
  token_ = token;
  // The first write goes out at once: a new leader proves itself immediately.
  tick_timer_ = ctx.SetTimer(sim::TimeNs(0), kTickTag);
}

void LeaderWork::End(sim::Context& ctx) {
  if (!active_) return;
  active_ = false;
  ctx.CancelTimer(tick_timer_);
  if (send_pending_) ctx.CancelTimer(send_timer_);
  send_pending_ = false;
}

bool LeaderWork::OnTimer(sim::Context& ctx, uint64_t tag, const std::function<bool()>& may_act,
                         const std::function<void()>& wrote) {
  if (tag == kTickTag) {
    if (!active_) return true;
    tick_timer_ = ctx.SetTimer(config_.write_interval, kTickTag);
    if (!send_pending_ && may_act()) {
      ctx.Observe(sim::Observation(vocab::kWriteBegin)
                      .Set(vocab::kFieldToken, static_cast<int64_t>(token_.value())));
      send_pending_ = true;
      send_timer_ = ctx.SetTimer(config_.write_duration, kSendTag);
    }
    return true;
  }
  if (tag == kSendTag) {
    // No re-check here: the decision was made at write_begin. That gap is real
    // (a GC pause, a slow disk) and is what fencing tokens exist for.
    send_pending_ = false;
    if (!active_) return true;
    const int64_t seq = static_cast<int64_t>(++writes_sent_);
    const int64_t token = static_cast<int64_t>(token_.value());
    ctx.Send(resource_, sim::Message(kResourceWrite).Set(vocab::kFieldToken, token).Set(vocab::kFieldSeq, seq));
    ctx.Observe(sim::Observation(vocab::kWrite).Set(vocab::kFieldToken, token).Set(vocab::kFieldSeq, seq));
    if (wrote) wrote();
    return true;
  }
  return false;
}

namespace {

class SharedResource final : public sim::Process {
 public:
  explicit SharedResource(bool fencing) : fencing_(fencing) {}

  void OnStart(sim::Context& ctx) override { highest_ = ctx.Load("highest_token").value_or(0); }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    if (!message.Is(kResourceWrite)) return;
    const int64_t token = message.Get(vocab::kFieldToken);
    const int64_t seq = message.Get(vocab::kFieldSeq);
    const bool accept = !fencing_ || token >= highest_;
    sim::Observation seen(accept ? vocab::kResourceAccept : vocab::kResourceReject);
    seen.Set(vocab::kFieldToken, token)
        .Set(vocab::kFieldWriter, from.value())
        .Set(vocab::kFieldSeq, seq)
        .Set(vocab::kFieldHighest, highest_);
    ctx.Observe(seen);
    if (accept && token > highest_) {
      highest_ = token;
      ctx.Persist("highest_token", highest_);
    }
    ctx.Send(from, sim::Message(kResourceAck)
                       .Set(vocab::kFieldToken, token)
                       .Set(vocab::kFieldSeq, seq)
                       .Set("accepted", accept ? 1 : 0)
                       .Set(vocab::kFieldHighest, highest_));
  }

  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}

 private:
  bool fencing_;
  int64_t highest_ = 0;  // highest token accepted so far (also in stable storage)
};

}  // namespace

std::unique_ptr<sim::Process> MakeSharedResource(bool fencing) { return std::make_unique<SharedResource>(fencing); }

}  // namespace algorithms
