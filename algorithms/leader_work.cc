#include "electsim/algorithms/leader_work.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
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
    unkeyed_.token = ctx.Load("highest_token").value_or(0);
    unkeyed_.writer = ctx.Load("highest_token_writer").value_or(-1);
    keyed_.clear();  // a key's part is loaded when a write first names it
  }

  void OnMessage(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override {
    const std::optional<ResourceWrite> write = message.As<ResourceWrite>();
    if (!write) return;
    const std::optional<int64_t> key = vocab::KeyOf(message);
    Highest& highest = key ? PartOf(ctx, *key) : unkeyed_;
    const int64_t token = write->token;
    const int64_t seq = write->seq;
    const int64_t writer = from.value();
    const bool taken_by_another =
        exclusive_token_ && token == highest.token && highest.writer >= 0 && highest.writer != writer;
    const bool accept = !fencing_ || (token >= highest.token && !taken_by_another);
    sim::Observation decision(accept ? vocab::kResourceAccept : vocab::kResourceReject,
                              {token, writer, seq, highest.token});
    if (key) decision = vocab::WithKey(decision, *key);
    ctx.Observe(decision);
    if (accept && token > highest.token) {
      highest.token = token;
      ctx.Persist(StorageName("highest_token", key), highest.token);
    }
    if (accept && exclusive_token_ && token == highest.token && highest.writer != writer) {
      highest.writer = writer;
      ctx.Persist(StorageName("highest_token_writer", key), highest.writer);
    }
    sim::Message ack = ResourceAck{.token = token, .seq = seq, .accepted = accept ? 1 : 0, .highest = highest.token};
    if (key) ack.Set(4, *key);
    ctx.Send(from, ack);
  }

  void OnTimer(sim::Context&, sim::TimerId, uint64_t) override {}

 private:
  struct Highest {
    int64_t token = 0;  // highest token accepted so far (also in stable storage)
    // Who wrote it first, with exclusive_token (also in stable storage); -1: nobody yet.
    int64_t writer = -1;
  };

  // "highest_token", or "key/7/highest_token" for a key's part.
  static std::string StorageName(std::string_view field, std::optional<int64_t> key) {
    return key ? absl::StrCat("key/", *key, "/", absl::string_view(field.data(), field.size())) : std::string(field);
  }

  Highest& PartOf(sim::Context& ctx, int64_t key) {
    auto [it, inserted] = keyed_.try_emplace(key);
    if (inserted) {
      it->second.token = ctx.Load(StorageName("highest_token", key)).value_or(0);
      it->second.writer = ctx.Load(StorageName("highest_token_writer", key)).value_or(-1);
    }
    return it->second;
  }

  bool fencing_;
  bool exclusive_token_;
  Highest unkeyed_;
  std::map<int64_t, Highest> keyed_;  // per key, those written since the start
};

}  // namespace

std::unique_ptr<sim::Process> MakeSharedResource(bool fencing, bool exclusive_token) {
  return std::make_unique<SharedResource>(fencing, exclusive_token);
}

}  // namespace algorithms
