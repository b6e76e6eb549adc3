#include "sim/simulator.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "sim/format.h"

// The size checks that keep Simulator::Reset and Node::Reset complete hold
// the sizes of the platform CI builds on (x86-64, libstdc++), with GCC and
// clang alike; elsewhere the sizes differ and the checks are left out.
#if defined(__x86_64__) && defined(__GLIBCXX__)
#define ELECTSIM_CHECK_RESET_SIZES 1
#else
#define ELECTSIM_CHECK_RESET_SIZES 0
#endif

namespace sim {
namespace {
constexpr int64_t kPpmScale = 1000000;
// Timer ids pack the slot index in the low bits so cancel finds it directly.
constexpr int kTimerSlotBits = 24;
constexpr uint64_t kTimerSlotMask = (uint64_t{1} << kTimerSlotBits) - 1;
// Marks a delivery event whose processing time is over (above the slot bits);
// the bits above it hold the incarnation that processed it.
constexpr uint64_t kProcessedDelivery = uint64_t{1} << 32;
constexpr int kProcessedIncarnationShift = 33;

bool IsZero(const LatencyModel& model) { return model.kind == LatencyModel::Kind::kFixed && model.min_ns == TimeNs(0); }
}  // namespace

class Simulator::NodeContext final : public Context {
 public:
  NodeContext() = default;
  NodeContext(Simulator* sim, NodeId id) : sim_(sim), id_(id) {}
  NodeId self() const override { return id_; }
  TimeNs MonotonicNow() const override { return sim_->MonotonicTime(id_); }
  TimeNs WallNow() const override { return sim_->WallTime(id_); }
  void Send(NodeId to, const Message& message) override { sim_->SendFrom(id_, to, message); }
  TimerId SetTimer(TimeNs delay, uint64_t tag) override { return sim_->SetTimerFor(id_, delay, tag); }
  void CancelTimer(TimerId timer) override { sim_->CancelTimerFor(id_, timer); }
  Rng& rng() override;
  void Persist(std::string_view key, int64_t value) override { sim_->Persist(id_, key, value); }
  void Write(std::string_view key, int64_t value) override { sim_->Write(id_, key, value); }
  void Sync() override { sim_->Sync(id_); }
  std::optional<int64_t> Load(std::string_view key) const override;
  void Observe(const Observation& observation) override { sim_->Observe(id_, observation); }
  void Fail(std::string_view reason) override {
    sim_->Fail(absl::AbortedError(fmt::format("node {}: {}", id_.value(), reason)));
  }

 private:
  Simulator* sim_ = nullptr;
  NodeId id_;
};

struct Simulator::Node {
  NodeId id;
  ProcessFactory factory;
  std::unique_ptr<Process> process;
  NodeContext context;
  bool up = true;
  bool paused = false;
  uint32_t incarnation = 0;  // bumped on restart; stale start events skip
  // Monotonic clock, piecewise linear: local = anchor_local + (g - anchor_global) * (1e6 + drift_ppm) / 1e6.
  TimeNs anchor_global;
  TimeNs anchor_local;
  int64_t drift_ppm = 0;
  // Wall clock = monotonic clock + the sum of the wall-clock steps so far.
  int64_t wall_offset_ns = 0;
  Rng rng{0};
  // Durable values by key number (StorageKeys); unset for keys never made durable.
  std::vector<std::optional<int64_t>> durable;
  // Written, not yet synced, one entry per key in the order first written;
  // shadows `durable`. A vector: a handler writes a few keys and syncs, and
  // the cleared vector keeps its capacity for the next handler.
  std::vector<std::pair<StorageKeyId, int64_t>> unsynced;

  std::pair<StorageKeyId, int64_t>* FindUnsynced(StorageKeyId key) {
    for (auto& write : unsynced) {
      if (write.first == key) return &write;
    }
    return nullptr;
  }
  // The vector is as long as the highest key number the node has made
  // durable: the nodes of one algorithm write the same keys, so that is
  // about the number of keys the node itself uses.
  // `known_keys`: how many keys the cluster has numbered so far (`key` among
  // them). Room for them all and more at once, rather than grown into a key
  // at a time (new keys come one by one as the nodes write them).
  void MakeDurable(StorageKeyId key, int64_t value, size_t known_keys) {
    if (key >= durable.size()) {
      if (key >= durable.capacity()) durable.reserve(std::max({known_keys, 2 * durable.capacity(), size_t{16}}));
      durable.resize(key + 1);
    }
    durable[key] = value;
  }
  // The node as constructed, but for its factory and the memory its vectors
  // hold; id, context and rng are PrepareNodes'. Member by member, in the
  // order declared (assigning a whole new Node cost half a Reset); the size
  // check after the struct fails when a member is added, until it is here.
  void Reset() {
    process.reset();
    up = true;
    paused = false;
    incarnation = 0;
    anchor_global = TimeNs();
    anchor_local = TimeNs();
    drift_ppm = 0;
    wall_offset_ns = 0;
    durable.clear();
    unsynced.clear();
    held.clear();
    model_rng = Rng{0};
    busy_until = TimeNs();
    sends_held_until = TimeNs();
  }
  std::vector<Event> held;  // events that arrived while paused, in order
  // The node model's state (see NodeModel).
  Rng model_rng{0};
  TimeNs busy_until;        // when the message being processed is done
  TimeNs sends_held_until;  // the running handler's sync completes then

  TimeNs ReadWallClock(TimeNs global) const {
    int64_t wall_ns;
    if (__builtin_add_overflow(ReadClock(global).ns(), wall_offset_ns, &wall_ns)) {
      wall_ns = wall_offset_ns < 0 ? INT64_MIN : INT64_MAX;
    }
    return TimeNs(wall_ns);
  }

  // The monotonic clock.
  TimeNs ReadClock(TimeNs global) const {
    const int64_t elapsed = global.ns() - anchor_global.ns();  // both in [0, now]: no overflow
    // 64-bit arithmetic whenever it cannot overflow: a 128-bit division is a
    // library call, and this runs on every timer and delivery.
    int64_t local_ns;
    if (drift_ppm == 0) {
      if (!__builtin_add_overflow(anchor_local.ns(), elapsed, &local_ns)) return TimeNs(local_ns);
    } else {
      int64_t scaled;
      if (!__builtin_mul_overflow(elapsed, kPpmScale + drift_ppm, &scaled) &&
          !__builtin_add_overflow(anchor_local.ns(), scaled / kPpmScale, &local_ns)) {
        return TimeNs(local_ns);
      }
    }
    return ReadClockWide(elapsed);
  }

  // ReadClock where 64 bits overflow: exact in 128 bits, then saturated, so a
  // fast clock reads TimeNs::Max() near the end of time rather than wrapping
  // negative.
  TimeNs ReadClockWide(int64_t elapsed) const {
    const __int128 local = anchor_local.ns() + static_cast<__int128>(elapsed) * (kPpmScale + drift_ppm) / kPpmScale;
    return TimeNs(static_cast<int64_t>(std::clamp<__int128>(local, INT64_MIN, INT64_MAX)));
  }
};

Rng& Simulator::NodeContext::rng() { return sim_->nodes_[id_.value()].rng; }

std::optional<int64_t> Simulator::NodeContext::Load(std::string_view key) const {
  const std::optional<StorageKeyId> id = sim_->storage_keys_.Find(key);
  if (!id) return std::nullopt;  // no node has written it
  Node& node = sim_->nodes_[id_.value()];
  if (const auto* write = node.FindUnsynced(*id); write != nullptr) return write->second;
  return *id < node.durable.size() ? node.durable[*id] : std::nullopt;
}

Simulator::Simulator(uint64_t seed, uint32_t node_count, LinkConfig default_link)
    : seed_(seed),
      constructed_link_(default_link),
      network_(node_count, seed, default_link, &link_names_),
      nodes_(node_count) {
  PrepareNodes();
}

Simulator::~Simulator() = default;

void Simulator::PrepareNodes() {
  // Each node's stream is "node/<id>", hashed without building the name.
  const uint64_t name_prefix_hash = HashName("node/");
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    node.id = NodeId(i);
    node.context = NodeContext(this, NodeId(i));
    node.rng = Rng::ForStreamHash(seed_, ExtendNameHashDecimal(name_prefix_hash, i));
  }
}

void Simulator::Reset(uint64_t seed) {
  // Every member, in the order declared, as the constructor leaves it (the
  // size check below fails when a member is added, until it is added here).
  // The pools and queues are emptied rather than replaced: empty is empty, whatever
  // memory a container keeps for the next run.
  // Node::Reset names every member of Node but the factory and those PrepareNodes sets.
#if ELECTSIM_CHECK_RESET_SIZES
  static_assert(sizeof(Node) == 264, "a member was added to Node or changed: reset it in Node::Reset");
#endif
  for (Node& node : nodes_) node.Reset();  // the processes go first, as they came last
  seed_ = seed;
  now_ = TimeNs();
  node_model_ = NodeModel{};
  models_processing_ = false;
  models_persist_ = false;
  started_ = false;
  defers_timers_ = true;
  queue_.Clear();
  // link_names_: kept, a function of the node ids.
  network_ = Network(node_count(), seed, constructed_link_, &link_names_);
  storage_keys_.Clear();
  PrepareNodes();
  in_flight_.clear();
  free_in_flight_.clear();
  timers_.clear();
  free_timers_.clear();
  next_timer_serial_ = 1;
  next_message_id_ = 1;
  actions_.clear();
  // router_: kept, with the sinks the caller renewed.
  instant_time_ = TimeNs();
  next_record_index_ = 0;
  hash_trace_ = false;
  trace_hasher_ = TraceHasher();
  stop_requested_ = false;
  held_events_ = 0;
  max_pending_events_ = kDefaultMaxPendingEvents;
  compact_at_queue_size_ = kFirstCompactionAt;
  stats_ = SimulatorStats{};
  status_ = absl::OkStatus();
}
// Reset names every member: one added changes the size, and must be reset there.
#if ELECTSIM_CHECK_RESET_SIZES
static_assert(sizeof(Simulator) == 6120,
              "a member was added or changed: reset it in Simulator::Reset, then update this size");
#endif

absl::Status Simulator::SetProcess(NodeId id, ProcessFactory factory) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  if (started_) return absl::FailedPreconditionError("SetProcess after Start");
  if (!factory) return absl::InvalidArgumentError("empty process factory");
  nodes_[id.value()].factory = std::move(factory);
  return absl::OkStatus();
}

absl::Status NodeModel::Validate() const {
  if (auto s = processing.Validate(); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat("processing: ", s.message()));
  if (auto s = persist.Validate(); !s.ok()) return absl::InvalidArgumentError(absl::StrCat("persist: ", s.message()));
  return absl::OkStatus();
}

absl::Status Simulator::SetNodeModel(const NodeModel& model) {
  if (started_) return absl::FailedPreconditionError("SetNodeModel after Start");
  if (auto s = model.Validate(); !s.ok()) return s;
  node_model_ = model;
  models_processing_ = !IsZero(model.processing);
  models_persist_ = !IsZero(model.persist);
  // Only a model draws from these streams: without one, none is derived.
  if (!models_processing_ && !models_persist_) return absl::OkStatus();
  const uint64_t name_prefix_hash = HashName("node-model/");
  for (Node& node : nodes_)
    node.model_rng = Rng::ForStreamHash(seed_, ExtendNameHashDecimal(name_prefix_hash, node.id.value()));
  return absl::OkStatus();
}

absl::Status Simulator::Start() {
  if (started_) return absl::FailedPreconditionError("Start called twice");
  for (const Node& node : nodes_) {
    if (!node.factory) {
      return absl::FailedPreconditionError(absl::StrCat("node ", node.id.value(), " has no process"));
    }
  }
  started_ = true;
  // The pools' usual working set at once (a few timers, messages and events
  // per node), rather than grown by doubling through a short run's first
  // events: each doubling is an allocation. Capped: past it, doubling is rare.
  const size_t per_node_room = std::min<size_t>(nodes_.size(), 1024);
  queue_.Reserve(4 * per_node_room + 16);
  timers_.reserve(2 * per_node_room);
  free_timers_.reserve(2 * per_node_room);
  in_flight_.reserve(2 * per_node_room);
  free_in_flight_.reserve(2 * per_node_room);
  for (const Node& node : nodes_) {
    queue_.Push(now_.ns(), EventKind::kStart, node.id.value(), node.incarnation);
  }
  return absl::OkStatus();
}

absl::Status Simulator::RunUntil(TimeNs end) {
  if (!started_) return absl::FailedPreconditionError("RunUntil before Start");
  if (end < now_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot run back in time: end ", end.ns(), "ns < now ", now_.ns(), "ns"));
  }
  while (status_.ok() && !queue_.empty() && queue_.top().time_ns <= end.ns()) {
    if (stop_requested_ && queue_.top().time_ns > now_.ns()) break;
    Step();
    // Checked here rather than at each push: one comparison per event. Stale
    // timer events do not count against the limit.
    if (queue_.size() >= compact_at_queue_size_) [[unlikely]]
      CompactQueue();
    if (queue_.size() + held_events_ > max_pending_events_) [[unlikely]] {
      CompactQueue();
      if (queue_.size() + held_events_ > max_pending_events_) FailPendingEventsExceeded();
    }
  }
  if (stop_requested_) {
    stop_requested_ = false;
    return status_;
  }
  if (status_.ok()) now_ = end;
  return status_;
}

void Simulator::CompactQueue() {
  queue_.RemoveIf([this](const Event& event) {
    if (event.kind != EventKind::kTimer) return false;
    TimerSlot& timer = timers_[static_cast<uint32_t>(event.arg & 0xffffffffu)];
    const auto generation = static_cast<uint32_t>(event.arg >> 32);
    if (timer.serial != 0 && timer.generation == generation) return false;       // live
    if (timer.deferred && timer.carrier_generation == generation) return false;  // carries a live one
    if (timer.queued && timer.queued_generation == generation) timer.queued = false;
    return true;
  });
  compact_at_queue_size_ = std::max<size_t>(4096, 2 * queue_.size());
}

void Simulator::FailPendingEventsExceeded() {
  Fail(absl::ResourceExhaustedError(fmt::format(
      "{} events pending at simulated time {} ({} queued, {} held at paused nodes; the limit is {}): a message or "
      "timer storm is the likely cause, such as timer or send intervals far below the link latencies",
      queue_.size() + held_events_, FormatDuration(now_), queue_.size(), held_events_, max_pending_events_)));
}

bool Simulator::Step() {
  if (queue_.empty()) return false;
  const Event event = queue_.Pop();
  now_ = TimeNs(event.time_ns);
  ++stats_.events;
  Dispatch(event);
  return true;
}

// Every case is a call at its end: with the rarer kinds' bodies out of
// line, the switch needs no stack frame of its own (the std::function of an
// action would give it one for every event).
void Simulator::Dispatch(const Event& event) {
  switch (event.kind) {
    case EventKind::kStart: StartEvent(event); break;
    case EventKind::kDeliver: DeliverMessage(event, /*already_arrived=*/false); break;
    case EventKind::kTimer: FireTimer(event); break;
    case EventKind::kAction: RunAction(event.arg); break;
  }
}

void Simulator::StartEvent(const Event& event) {
  Node& node = nodes_[event.node];
  if (!node.up || node.incarnation != event.arg) return;
  if (node.paused) {
    Hold(node, event);  // a frozen node boots when it resumes
    return;
  }
  StartProcess(node.id);
}

void Simulator::RunAction(uint64_t index) {
  // Move out first: the action may schedule more actions (reallocating).
  std::function<void()> action = std::move(actions_[index]);
  action();
}

void Simulator::StartProcess(NodeId id) {
  Node& node = nodes_[id.value()];
  node.process = node.factory(id);
  node.sends_held_until = TimeNs(0);
  Emit({.time = now_,
        .kind = TraceKind::kStart,
        .node = id,
        .local_time = node.ReadClock(now_),
        .value = node.incarnation});
  node.process->OnStart(node.context);
}

void Simulator::Hold(Node& node, const Event& event) {
  node.held.push_back(event);
  ++held_events_;
}

void Simulator::AddTraceSink(TraceSink* sink) { router_.Add(sink, started_); }

void Simulator::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

TimeNs Simulator::MonotonicTime(NodeId node) const {
  if (node.value() >= nodes_.size()) return TimeNs(0);
  return nodes_[node.value()].ReadClock(now_);
}

TimeNs Simulator::WallTime(NodeId node) const {
  if (node.value() >= nodes_.size()) return TimeNs(0);
  return nodes_[node.value()].ReadWallClock(now_);
}

bool Simulator::IsUp(NodeId node) const { return node.value() < nodes_.size() && nodes_[node.value()].up; }
bool Simulator::IsPaused(NodeId node) const { return node.value() < nodes_.size() && nodes_[node.value()].paused; }

StableStorage Simulator::StableStorageOf(NodeId node) const {
  StableStorage storage;
  const auto& durable = nodes_.at(node.value()).durable;
  SIM_CHECK(durable.size() <= storage_keys_.size(), "a node's durable values are by the numbers of the run's keys");
  for (StorageKeyId key = 0; key < durable.size(); ++key) {
    if (durable[key]) storage.emplace(storage_keys_.Name(key), *durable[key]);
  }
  return storage;
}

StableStorage Simulator::UnsyncedWritesOf(NodeId node) const {
  StableStorage storage;
  for (const auto& [key, value] : nodes_.at(node.value()).unsynced) storage.emplace(storage_keys_.Name(key), value);
  return storage;
}

// ---- messages ----

void Simulator::FailSendToUnknownNode(NodeId from, NodeId to, const Message& message) {
  Fail(absl::InvalidArgumentError(fmt::format("node {} sent {} to an {}", from.value(), message.type_name(),
                                              std::string(CheckNode(to).message()))));
}

void Simulator::SendFrom(NodeId from, NodeId to, const Message& message) {
  if (to.value() >= nodes_.size()) [[unlikely]] {
    FailSendToUnknownNode(from, to, message);
    return;
  }
  const uint64_t message_id = next_message_id_++;
  ++stats_.messages_sent;
  const TimeNs local = nodes_[from.value()].ReadClock(now_);
  TraceRecord record{.time = now_,
                     .kind = TraceKind::kSend,
                     .node = from,
                     .peer = to,
                     .message_id = message_id,
                     .local_time = local,
                     .payload = &message};
  PlaceInTrace(record);
  if (hash_trace_) trace_hasher_.Add(record);
  router_.RouteSend(record, message.type());
  // A sync earlier in this handler holds the send until the disk is done.
  const Routing routing = network_.Route(from, to, std::max(now_, nodes_[from.value()].sends_held_until));
  if (routing.outcome != Routing::Outcome::kDeliver) {
    ++stats_.messages_dropped;
    Emit({.time = now_,
          .kind = TraceKind::kDrop,
          .node = from,
          .peer = to,
          .message_id = message_id,
          .local_time = local,
          .detail = routing.outcome == Routing::Outcome::kLost ? "loss" : "partition"});
    return;
  }
  if (routing.copies == 2) {
    ++stats_.messages_duplicated;
    Emit({.time = now_,
          .kind = TraceKind::kDuplicate,
          .node = from,
          .peer = to,
          .message_id = message_id,
          .local_time = local});
  }
  for (int copy = 0; copy < routing.copies; ++copy) {
    uint32_t slot;
    if (!free_in_flight_.empty()) {
      slot = free_in_flight_.back();
      free_in_flight_.pop_back();
    } else {
      slot = static_cast<uint32_t>(in_flight_.size());
      in_flight_.emplace_back();
    }
    in_flight_[slot] = InFlight{from, to, message_id, message};
    queue_.Push(routing.arrival[copy].ns(), EventKind::kDeliver, to.value(), slot);
  }
}

void Simulator::DeliverMessage(const Event& event, bool already_arrived) {
  const uint32_t slot = static_cast<uint32_t>(event.arg);
  const bool processed = (event.arg & kProcessedDelivery) != 0;
  Node& node = nodes_[event.node];
  const InFlight& flight = in_flight_[slot];
  const char* drop_reason = nullptr;
  // A message in hand when its node crashed died with that process, even if
  // the node is back by the time its processing would be over.
  if (!node.up || (processed && (event.arg >> kProcessedIncarnationShift) != (node.incarnation & 0x7fffffffu))) {
    drop_reason = "node-down";
  } else if (!already_arrived && !processed && network_.IsCut(flight.from, flight.to)) {
    drop_reason = "partition";  // the link was cut while the message was in flight
  } else if (node.paused) {
    Hold(node, event);
    return;
  }
  if (drop_reason != nullptr) {
    DropInFlight(slot, drop_reason);
    return;
  }
  if (models_processing_ && !processed) {
    // Queue behind the message in hand; the handler runs when this one's
    // processing is over (a crash before then loses it, as "node-down").
    const TimeNs start = std::max(now_, node.busy_until);
    node.busy_until = start + node_model_.processing.Draw(node.model_rng);
    queue_.Push(node.busy_until.ns(), EventKind::kDeliver, event.node,
                slot | kProcessedDelivery |
                    (static_cast<uint64_t>(node.incarnation & 0x7fffffffu) << kProcessedIncarnationShift));
    return;
  }
  // Copy out: the handler may send, which can reuse this slot.
  const InFlight delivered = flight;
  free_in_flight_.push_back(slot);
  ++stats_.messages_delivered;
  // Built only where something takes it in: in a sweep, no sink reads most
  // deliveries, and the record then needs only its index and the instant check.
  if (hash_trace_ || router_.ReadsDelivery(delivered.message.type()) ||
      (now_ > instant_time_ && router_.ReadsInstantStarts())) {
    TraceRecord record{.time = now_,
                       .kind = TraceKind::kDeliver,
                       .node = delivered.to,
                       .peer = delivered.from,
                       .message_id = delivered.message_id,
                       .local_time = node.ReadClock(now_),
                       .payload = &delivered.message};
    PlaceInTrace(record);
    if (hash_trace_) trace_hasher_.Add(record);
    router_.RouteDelivery(record, delivered.message.type());
  } else {
    ++next_record_index_;
    instant_time_ = std::max(instant_time_, now_);  // an instant no sink is told of
  }
  node.sends_held_until = TimeNs(0);
  node.process->OnMessage(node.context, delivered.from, delivered.message);
}

void Simulator::DropInFlight(uint32_t slot, const char* reason) {
  const InFlight& flight = in_flight_[slot];
  ++stats_.messages_dropped;
  Emit({.time = now_,
        .kind = TraceKind::kDrop,
        .node = flight.from,
        .peer = flight.to,
        .message_id = flight.message_id,
        .local_time = nodes_[flight.to.value()].ReadClock(now_),
        .detail = reason});
  free_in_flight_.push_back(slot);
}

// ---- timers ----

TimeNs Simulator::GlobalTimeForLocal(const Node& node, TimeNs local) const {
  // The first global instant at which the node's clock reads >= local.
  // 128 bits: the distance to a deadline near TimeNs::Max() times the rate
  // does not fit in 64 (and wrapping would make it fire at once).
  if (node.drift_ppm == 0) {
    // The common case in 64 bits: no wide arithmetic, no division.
    int64_t ahead_ns, global_ns;
    if (!__builtin_sub_overflow(local.ns(), node.anchor_local.ns(), &ahead_ns) &&
        !__builtin_add_overflow(node.anchor_global.ns(), std::max<int64_t>(ahead_ns, 0), &global_ns)) {
      return std::max(now_, TimeNs(global_ns));
    }
  }
  const __int128 ahead = static_cast<__int128>(local.ns()) - node.anchor_local.ns();
  if (ahead <= 0) return std::max(now_, node.anchor_global);
  __int128 global = node.anchor_global.ns();
  if (node.drift_ppm == 0) {  // the common case, without the 128-bit division
    global += ahead;
  } else {
    const __int128 rate = kPpmScale + node.drift_ppm;
    global += (ahead * kPpmScale + rate - 1) / rate;
  }
  const __int128 capped = std::min<__int128>(global, TimeNs::Max().ns());
  return std::max(now_, TimeNs(static_cast<int64_t>(capped)));
}

void Simulator::ScheduleTimerEvent(uint32_t slot) {
  TimerSlot& timer = timers_[slot];
  QueueTimer(slot, timer, GlobalTimeForLocal(nodes_[timer.node.value()], timer.local_deadline));
}

void Simulator::QueueTimer(uint32_t slot, TimerSlot& timer, TimeNs fire_at) {
  const uint64_t seq = queue_.ReserveSeq();
  // The slot's queued event is stale here (the slot was free, or its
  // generation was just bumped), and pops no later than fire_at.
  if (defers_timers_ && timer.queued && timer.queued_time <= fire_at) {
    timer.deferred = true;
    timer.carrier_generation = timer.queued_generation;
    timer.deferred_time = fire_at;
    timer.deferred_seq = seq;
    return;
  }
  PushTimerEvent(slot, timer, fire_at, seq);
}

void Simulator::PushTimerEvent(uint32_t slot, TimerSlot& timer, TimeNs fire_at, uint64_t seq) {
  queue_.PushWithSeq(fire_at.ns(), seq, EventKind::kTimer, timer.node.value(),
                     slot | (static_cast<uint64_t>(timer.generation) << 32));
  timer.queued = true;
  timer.queued_generation = timer.generation;
  timer.queued_time = fire_at;
}

TimerId Simulator::SetTimerFor(NodeId node_id, TimeNs delay, uint64_t tag) {
  if (delay < TimeNs(0)) [[unlikely]] {
    FailNegativeTimerDelay(node_id, delay);
    return TimerId(0);
  }
  uint32_t slot;
  if (!free_timers_.empty()) {
    slot = free_timers_.back();
    free_timers_.pop_back();
  } else {
    slot = static_cast<uint32_t>(timers_.size());
    timers_.emplace_back();
  }
  Node& node = nodes_[node_id.value()];
  TimerSlot& timer = timers_[slot];
  timer.node = node_id;
  timer.serial = (next_timer_serial_++ << kTimerSlotBits) | slot;
  // Saturate rather than overflow: a deadline past the end of time never fires.
  const TimeNs local_now = node.ReadClock(now_);
  int64_t deadline_ns;
  const bool deadline_saturated = __builtin_add_overflow(local_now.ns(), delay.ns(), &deadline_ns);
  if (deadline_saturated) deadline_ns = TimeNs::Max().ns();
  timer.local_deadline = TimeNs(deadline_ns);
  timer.tag = tag;
  // Queued before its record is emitted: sinks cannot see the queue, and
  // only the serial is then live across the call to Emit.
  // Without drift the clock keeps the global rate, so unless a sum
  // saturated the timer fires exactly `delay` after now: what
  // GlobalTimeForLocal works out the long way, from the deadline.
  int64_t fire_ns;
  if (node.drift_ppm == 0 && !deadline_saturated && local_now < TimeNs::Max() &&
      !__builtin_add_overflow(now_.ns(), delay.ns(), &fire_ns)) [[likely]] {
    QueueTimer(slot, timer, TimeNs(fire_ns));
  } else {
    ScheduleTimerEvent(slot);
  }
  const uint64_t serial = timer.serial;
  EmitUsuallyUnread(TraceKind::kTimerSet, [&] {
    return TraceRecord{
        .time = now_, .node = node_id, .local_time = timer.local_deadline, .value = static_cast<int64_t>(serial)};
  });
  return TimerId(serial);
}

void Simulator::FailNegativeTimerDelay(NodeId node_id, TimeNs delay) {
  Fail(absl::InvalidArgumentError(
      absl::StrCat("node ", node_id.value(), " set a timer with negative delay ", delay.ns(), "ns")));
}

void Simulator::CancelTimerFor(NodeId node_id, TimerId timer_id) {
  const uint64_t slot = timer_id.value() & kTimerSlotMask;
  if (timer_id.value() == 0 || slot >= timers_.size()) return;
  TimerSlot& timer = timers_[slot];
  if (timer.serial != timer_id.value() || timer.node != node_id) return;
  timer.deferred = false;  // its carrier stays queued, stale
  EmitUsuallyUnread(TraceKind::kTimerCancel, [&] {
    return TraceRecord{.time = now_,
                       .node = node_id,
                       .local_time = nodes_[node_id.value()].ReadClock(now_),
                       .value = static_cast<int64_t>(timer.serial)};
  });
  timer.serial = 0;
  ++timer.generation;
  free_timers_.push_back(static_cast<uint32_t>(slot));
}

void Simulator::FireTimer(const Event& event) {
  const uint32_t slot = static_cast<uint32_t>(event.arg & 0xffffffffu);
  const uint32_t generation = static_cast<uint32_t>(event.arg >> 32);
  TimerSlot& timer = timers_[slot];
  if (generation == timer.queued_generation) timer.queued = false;  // it has left the queue
  if (timer.serial == 0 || timer.generation != generation) [[unlikely]] {
    // Cancelled or rescheduled; the carrier of a deferred timer queues it.
    if (timer.deferred && timer.carrier_generation == generation) {
      timer.deferred = false;
      PushTimerEvent(slot, timer, timer.deferred_time, timer.deferred_seq);
    }
    return;
  }
  // The event's copy of the timer's node (the same while the generation
  // matches), so that this load need not wait for the timer's.
  Node& node = nodes_[event.node];
  if (node.paused) {
    Hold(node, event);
    return;
  }
  const uint64_t serial = timer.serial;
  const uint64_t tag = timer.tag;
  timer.serial = 0;
  ++timer.generation;
  free_timers_.push_back(slot);
  ++stats_.timers_fired;
  EmitUsuallyUnread(TraceKind::kTimerFire, [&] {
    return TraceRecord{
        .time = now_, .node = node.id, .local_time = node.ReadClock(now_), .value = static_cast<int64_t>(serial)};
  });
  node.sends_held_until = TimeNs(0);
  node.process->OnTimer(node.context, TimerId(serial), tag);
}

void Simulator::RescheduleTimers(NodeId node) {
  // Queue them in (deadline, arming) order: deadlines that the new rate maps
  // to one global instant fire in queue order, and slot order is only the
  // order slots happened to be free.
  std::vector<uint32_t> slots;
  for (uint32_t slot = 0; slot < timers_.size(); ++slot) {
    const TimerSlot& timer = timers_[slot];
    if (timer.serial != 0 && timer.node == node) slots.push_back(slot);
  }
  // Serials grow with each timer armed (the slot is only in the low bits).
  std::sort(slots.begin(), slots.end(), [this](uint32_t a, uint32_t b) {
    return std::pair(timers_[a].local_deadline, timers_[a].serial) <
           std::pair(timers_[b].local_deadline, timers_[b].serial);
  });
  for (uint32_t slot : slots) {
    timers_[slot].deferred = false;  // queued again below, deferred or not
    ++timers_[slot].generation;
    ScheduleTimerEvent(slot);
  }
}

// ---- storage and observations ----

void Simulator::WaitForDisk(Node& node) {
  if (!models_persist_) return;
  // Syncs in one handler run one after another.
  const TimeNs start = std::max(now_, node.sends_held_until);
  node.sends_held_until = start + node_model_.persist.Draw(node.model_rng);
}

void Simulator::Persist(NodeId node, std::string_view key, int64_t value) {
  Node& n = nodes_[node.value()];
  const StorageKeyId id = storage_keys_.Intern(key);
  // Durable at once, and newer than any buffered value of the key.
  if (auto* write = n.FindUnsynced(id); write != nullptr)
    n.unsynced.erase(n.unsynced.begin() + (write - n.unsynced.data()));
  n.MakeDurable(id, value, storage_keys_.size());
  WaitForDisk(n);
  EmitUsuallyUnread(TraceKind::kPersist, [&] {
    return TraceRecord{.time = now_, .node = node, .local_time = n.ReadClock(now_), .value = value, .detail = key};
  });
}

void Simulator::Write(NodeId node, std::string_view key, int64_t value) {
  Node& n = nodes_[node.value()];
  const StorageKeyId id = storage_keys_.Intern(key);
  if (auto* write = n.FindUnsynced(id); write != nullptr) {
    write->second = value;
  } else {
    if (n.unsynced.capacity() == 0) n.unsynced.reserve(8);  // a handler's writes, in one allocation
    n.unsynced.emplace_back(id, value);
  }
  EmitUsuallyUnread(TraceKind::kWrite, [&] {
    return TraceRecord{.time = now_, .node = node, .local_time = n.ReadClock(now_), .value = value, .detail = key};
  });
}

void Simulator::Sync(NodeId node) {
  Node& n = nodes_[node.value()];
  const auto synced = static_cast<int64_t>(n.unsynced.size());
  for (const auto& [key, value] : n.unsynced) n.MakeDurable(key, value, storage_keys_.size());
  n.unsynced.clear();
  WaitForDisk(n);
  EmitUsuallyUnread(TraceKind::kSync, [&] {
    return TraceRecord{.time = now_, .node = node, .local_time = n.ReadClock(now_), .value = synced};
  });
}

void Simulator::Observe(NodeId node, const Observation& observation) {
  TraceRecord record{.time = now_,
                     .kind = TraceKind::kObserve,
                     .node = node,
                     .local_time = nodes_[node.value()].ReadClock(now_),
                     .payload = &observation};
  PlaceInTrace(record);
  if (hash_trace_) trace_hasher_.Add(record);
  router_.RouteObservation(record, observation.type());
}

// ---- faults ----

absl::Status Simulator::ScheduleAt(TimeNs at, std::function<void()> action) {
  if (at < now_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot schedule in the past: ", at.ns(), "ns < now ", now_.ns(), "ns"));
  }
  if (!action) return absl::InvalidArgumentError("empty action");
  actions_.push_back(std::move(action));
  queue_.Push(at.ns(), EventKind::kAction, 0, actions_.size() - 1);
  return absl::OkStatus();
}

absl::Status Simulator::Crash(NodeId id, CrashKind kind) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  Node& node = nodes_[id.value()];
  if (!node.up) return absl::FailedPreconditionError(absl::StrCat("node ", id.value(), " is already down"));
  int64_t lost_writes = 0;
  if (kind == CrashKind::kPowerLoss) {
    lost_writes = static_cast<int64_t>(node.unsynced.size());
    node.unsynced.clear();
  }
  node.up = false;
  node.paused = false;
  node.busy_until = TimeNs(0);
  node.process.reset();
  for (uint32_t slot = 0; slot < timers_.size(); ++slot) {
    TimerSlot& timer = timers_[slot];
    if (timer.serial == 0 || timer.node != id) continue;
    timer.serial = 0;
    timer.deferred = false;
    ++timer.generation;
    free_timers_.push_back(slot);
  }
  std::vector<Event> held = std::move(node.held);
  node.held.clear();
  held_events_ -= held.size();
  // A process crash keeps the record it always had (value 0, no detail).
  Emit({.time = now_,
        .kind = TraceKind::kCrash,
        .node = id,
        .local_time = node.ReadClock(now_),
        .value = lost_writes,
        .detail = kind == CrashKind::kPowerLoss ? "power-loss" : ""});
  // Messages that reached the paused node die with it, traced and counted like
  // any other loss so that sent == delivered + dropped still holds.
  for (const Event& event : held) {
    if (event.kind == EventKind::kDeliver) DropInFlight(static_cast<uint32_t>(event.arg), "node-down");
  }
  return absl::OkStatus();
}

absl::Status Simulator::Restart(NodeId id) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  Node& node = nodes_[id.value()];
  if (node.up) return absl::FailedPreconditionError(absl::StrCat("node ", id.value(), " is not down"));
  node.up = true;
  ++node.incarnation;
  Emit({.time = now_,
        .kind = TraceKind::kRestart,
        .node = id,
        .local_time = node.ReadClock(now_),
        .value = node.incarnation});
  // Boot now rather than through a queued start event: a message due at this
  // same instant must find a process to deliver to.
  StartProcess(id);
  return absl::OkStatus();
}

absl::Status Simulator::Pause(NodeId id) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  Node& node = nodes_[id.value()];
  if (!node.up) return absl::FailedPreconditionError(absl::StrCat("node ", id.value(), " is down"));
  if (node.paused) return absl::FailedPreconditionError(absl::StrCat("node ", id.value(), " is already paused"));
  node.paused = true;
  Emit({.time = now_, .kind = TraceKind::kPause, .node = id, .local_time = node.ReadClock(now_)});
  return absl::OkStatus();
}

absl::Status Simulator::Resume(NodeId id) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  Node& node = nodes_[id.value()];
  if (!node.paused) return absl::FailedPreconditionError(absl::StrCat("node ", id.value(), " is not paused"));
  node.paused = false;
  Emit({.time = now_,
        .kind = TraceKind::kResume,
        .node = id,
        .local_time = node.ReadClock(now_),
        .value = static_cast<int64_t>(node.held.size())});
  // Held events run here, in the order they were due. Re-queueing them would
  // give them sequence numbers newer than events already queued for this
  // instant (say a FIFO link's later message landing right now), which would
  // then overtake them.
  std::vector<Event> held = std::move(node.held);
  node.held.clear();
  held_events_ -= held.size();
  for (const Event& event : held) {
    ++stats_.events;  // each one runs, as if Step had popped it
    // A held message has arrived: a cut made since then cannot take it back.
    if (event.kind == EventKind::kDeliver) {
      DeliverMessage(event, /*already_arrived=*/true);
    } else {
      Dispatch(event);
    }
  }
  return absl::OkStatus();
}

absl::Status Simulator::SetClockDrift(NodeId id, int64_t drift_ppm) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  if (drift_ppm <= -kPpmScale / 2 || drift_ppm >= kPpmScale / 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("clock drift must be within (-500000, 500000) ppm, got ", drift_ppm));
  }
  Node& node = nodes_[id.value()];
  node.anchor_local = node.ReadClock(now_);
  node.anchor_global = now_;
  node.drift_ppm = drift_ppm;
  Emit({.time = now_,
        .kind = TraceKind::kClock,
        .node = id,
        .local_time = node.anchor_local,
        .value = drift_ppm,
        .detail = "drift"});
  RescheduleTimers(id);
  return absl::OkStatus();
}

absl::Status Simulator::StepWallClock(NodeId id, TimeNs delta) {
  if (auto s = CheckNode(id); !s.ok()) return s;
  Node& node = nodes_[id.value()];
  const TimeNs reading = node.ReadWallClock(now_);
  const __int128 stepped_ns = static_cast<__int128>(reading.ns()) + delta.ns();
  if (stepped_ns > kMaxClockReading.ns() || stepped_ns < -kMaxClockReading.ns()) {
    return absl::InvalidArgumentError(fmt::format(
        "node {}: stepping its wall clock by {}ns would move it from {}ns to {}ns, beyond the +-{}ns (about 146 "
        "years) a wall clock may reach",
        id.value(), delta.ns(), reading.ns(), stepped_ns, kMaxClockReading.ns()));
  }
  // Clamped only at the end of time, where the monotonic clock saturates.
  node.wall_offset_ns =
      static_cast<int64_t>(std::clamp<__int128>(stepped_ns - node.ReadClock(now_).ns(), INT64_MIN, INT64_MAX));
  // Timers run on the monotonic clock: nothing to reschedule.
  Emit({.time = now_,
        .kind = TraceKind::kClock,
        .node = id,
        .local_time = node.ReadClock(now_),
        .value = delta.ns(),
        .detail = "wall_step"});
  return absl::OkStatus();
}

absl::Status Simulator::SetLink(NodeId from, NodeId to, const LinkConfig& config) {
  if (auto s = network_.SetLink(from, to, config); !s.ok()) return s;
  const std::string detail =
      fmt::format("link latency {} drop {} duplicate {}{}", config.latency.Describe(), config.drop.ToDouble(),
                  config.duplicate.ToDouble(), config.fifo ? " fifo" : "");
  Emit({.time = now_, .kind = TraceKind::kNetwork, .node = from, .peer = to, .detail = detail});
  return absl::OkStatus();
}

absl::Status Simulator::SetAllLinks(const LinkConfig& config) {
  if (auto s = network_.SetAllLinks(config); !s.ok()) return s;
  const std::string detail =
      fmt::format("all links latency {} drop {} duplicate {}{}", config.latency.Describe(), config.drop.ToDouble(),
                  config.duplicate.ToDouble(), config.fifo ? " fifo" : "");
  Emit({.time = now_, .kind = TraceKind::kNetwork, .detail = detail});
  return absl::OkStatus();
}

absl::StatusOr<CutSet> Simulator::Partition(const std::vector<std::vector<NodeId>>& groups,
                                            const std::vector<NodeId>& bystanders) {
  auto cuts = network_.Partition(groups, bystanders);
  if (!cuts.ok()) return cuts.status();
  std::string detail = "partition";
  for (const auto& group : groups) {
    detail += " [";
    for (size_t i = 0; i < group.size(); ++i) absl::StrAppend(&detail, i ? "," : "", group[i].value());
    detail += "]";
  }
  Emit({.time = now_, .kind = TraceKind::kNetwork, .value = static_cast<int64_t>(cuts->link_count), .detail = detail});
  return cuts;
}

absl::Status Simulator::CutOneWay(NodeId from, NodeId to) {
  if (auto s = network_.Cut({Link{from, to}}); !s.ok()) return s;
  Emit({.time = now_, .kind = TraceKind::kNetwork, .node = from, .peer = to, .detail = "cut one-way"});
  return absl::OkStatus();
}

absl::Status Simulator::RestoreLinks(const CutSet& cuts) {
  if (auto s = network_.Restore(cuts); !s.ok()) return s;
  Emit({.time = now_,
        .kind = TraceKind::kNetwork,
        .value = static_cast<int64_t>(cuts.link_count + cuts.links.size()),
        .detail = "restore links"});
  return absl::OkStatus();
}

void Simulator::HealNetwork() {
  network_.HealAll();
  Emit({.time = now_, .kind = TraceKind::kNetwork, .detail = "heal"});
}

void Simulator::Note(std::string_view text, NodeId node) {
  Emit({.time = now_, .kind = TraceKind::kNote, .node = node, .detail = text});
}

}  // namespace sim
