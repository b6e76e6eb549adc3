// Small processes that exercise the hosting API in tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "electsim/sim/process.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace sim::testing {

struct Ping {
  static constexpr RecordType kType{"test.ping", {"seq"}};
  int64_t seq = 0;
};
struct Pong {
  static constexpr RecordType kType{"test.pong", {"seq"}};
  int64_t seq = 0;
};
inline constexpr const RecordType& kPing = Ping::kType;
inline constexpr const RecordType& kPong = Pong::kType;

// What a Recorder saw, kept outside the process so it survives crashes.
struct Seen {
  struct Delivery {
    TimeNs global;
    NodeId to;
    NodeId from;
    int64_t seq;
  };
  struct Firing {
    TimeNs global;
    TimeNs local;
    NodeId node;
    uint64_t tag;
  };
  std::vector<Delivery> deliveries;
  std::vector<Firing> firings;
  std::vector<NodeId> starts;
};

// Node 0 sends `count` pings to node 1, one every `interval`; node 1 answers
// each with a pong. Every node counts what it received in volatile memory and
// in stable storage ("received").
class PingPong final : public Process {
 public:
  PingPong(const Simulator* sim, Seen* seen, int count, TimeNs interval)
      : sim_(sim), seen_(seen), count_(count), interval_(interval) {}

  void OnStart(Context& ctx) override {
    seen_->starts.push_back(ctx.self());
    if (ctx.self() == NodeId(0) && count_ > 0) ctx.SetTimer(interval_, 0);
  }
  void OnMessage(Context& ctx, NodeId from, const Message& message) override {
    ++volatile_received_;
    ctx.Persist("received", ctx.Load("received").value_or(0) + 1);
    seen_->deliveries.push_back({sim_->now(), ctx.self(), from, message.Get("seq")});
    if (message.Is(kPing)) ctx.Send(from, Pong{.seq = message.Get("seq")});
  }
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    seen_->firings.push_back({sim_->now(), ctx.MonotonicNow(), ctx.self(), tag});
    ctx.Send(NodeId(1), Ping{.seq = static_cast<int64_t>(tag)});
    if (static_cast<int>(tag) + 1 < count_) ctx.SetTimer(interval_, tag + 1);
  }
  int volatile_received() const { return volatile_received_; }

 private:
  const Simulator* sim_;
  Seen* seen_;
  int count_;
  TimeNs interval_;
  int volatile_received_ = 0;
};

// Puts PingPong on nodes 0 and 1, the usual two-node test setup.
inline void InstallPingPong(Simulator& sim, Seen& seen, int count, TimeNs interval) {
  for (uint32_t i = 0; i < 2; ++i) {
    const absl::Status status = sim.SetProcess(NodeId(i), [&sim, &seen, count, interval](NodeId) {
      return std::make_unique<PingPong>(&sim, &seen, count, interval);
    });
    EXPECT_TRUE(status.ok()) << status;
  }
}

// Arms the timers it is told to at start and records every firing.
class TimerProbe final : public Process {
 public:
  TimerProbe(const Simulator* sim, Seen* seen, std::vector<TimeNs> delays)
      : sim_(sim), seen_(seen), delays_(std::move(delays)) {}
  void OnStart(Context& ctx) override {
    seen_->starts.push_back(ctx.self());
    for (size_t i = 0; i < delays_.size(); ++i) ctx.SetTimer(delays_[i], i);
  }
  void OnMessage(Context& ctx, NodeId from, const Message& message) override {
    seen_->deliveries.push_back({sim_->now(), ctx.self(), from, message.Get("seq")});
  }
  void OnTimer(Context& ctx, TimerId, uint64_t tag) override {
    seen_->firings.push_back({sim_->now(), ctx.MonotonicNow(), ctx.self(), tag});
  }

 private:
  const Simulator* sim_;
  Seen* seen_;
  std::vector<TimeNs> delays_;
};

// Collects every trace record's kind and detail for assertions.
class RecordCollector final : public TraceSink {
 public:
  void OnRecord(const TraceRecord& record) override {
    kinds.push_back(record.kind);
    details.emplace_back(record.detail);
    message_ids.push_back(record.message_id);
  }
  // Message ids of the records of `kind` with `detail` (any detail if empty), in trace order.
  std::vector<uint64_t> MessageIds(TraceKind kind, std::string_view detail = {}) const {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == kind && (detail.empty() || details[i] == detail)) ids.push_back(message_ids[i]);
    }
    return ids;
  }
  int Count(TraceKind kind) const {
    int n = 0;
    for (TraceKind k : kinds) n += (k == kind);
    return n;
  }
  int CountDetail(TraceKind kind, std::string_view detail) const {
    int n = 0;
    for (size_t i = 0; i < kinds.size(); ++i) n += (kinds[i] == kind && details[i] == detail);
    return n;
  }
  std::vector<TraceKind> kinds;
  std::vector<std::string> details;
  std::vector<uint64_t> message_ids;  // 0 for records not about a message
};

}  // namespace sim::testing
