// The single-threaded discrete-event simulator. Events run in (time, sequence)
// order; the sequence number is assigned at scheduling, so ties resolve in
// insertion order and a run is a pure function of (setup, seed).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "electsim/sim/process.h"
#include "electsim/sim/rng.h"
#include "electsim/sim/types.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/storage_keys.h"
#include "sim/trace.h"
#include "sim/trace_router.h"

namespace sim {

// The furthest a wall-clock step may set a node's wall clock from 0, either
// way: 2^62ns, about 146 years. A clock that runs on past int64 afterwards
// reads TimeNs::Max().
inline constexpr TimeNs kMaxClockReading = TimeNs(int64_t{1} << 62);

// How a node goes down. Both lose the process and its volatile state; they
// differ in what happens to stable-storage writes that were not yet synced.
enum class CrashKind {
  // The process dies (killed, panics); the machine and its page cache stay
  // up, so buffered writes still reach the disk.
  kProcess,
  // The machine loses power: buffered writes that no Sync made durable are gone.
  kPowerLoss,
};

struct SimulatorStats {
  uint64_t events = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_delivered = 0;
  uint64_t messages_dropped = 0;
  uint64_t messages_duplicated = 0;
  uint64_t timers_fired = 0;
};

// How long a node itself takes, beside the network. Both default to zero,
// which models nothing and draws nothing, so runs without a model are
// unchanged.
struct NodeModel {
  // Handling one message. A node handles one at a time: a delivery that
  // arrives while it is busy waits, and the handler runs when its processing
  // is over. Timers are not delayed.
  LatencyModel processing = LatencyModel::Fixed(TimeNs(0));
  // A Sync or Persist reaching the disk (fsync). What the handler that synced
  // sends leaves only once the sync is done.
  LatencyModel persist = LatencyModel::Fixed(TimeNs(0));

  absl::Status Validate() const;
};

// A node's stable storage by key, in key order, as tests and tools read it
// (the simulator keeps it by key number, see StorageKeys).
using StableStorage = absl::btree_map<std::string, int64_t, std::less<>>;

// What one pending event costs in memory, all told: its queue entry, and for
// a message in flight its record and payload (measured on message storms,
// results/performance.md, "Storms"). Sizes a memory budget into a limit.
inline constexpr uint64_t kBytesPerPendingEvent = 160;

class Simulator {
 public:
  // `node_count` processes are added with AddNode before Start().
  Simulator(uint64_t seed, uint32_t node_count, LinkConfig default_link = LinkConfig{});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The simulator as newly constructed with `seed` (and the node count and
  // default link it was constructed with), keeping only its trace sinks and
  // process factories: a campaign runs seed after seed of one scenario, and
  // building a simulator and registering its ten sinks again was about a
  // tenth of a short Raft trial. The node model, the limits and the trace
  // hash are for the caller to set again, as on a new simulator; the sinks
  // must be in the state a new run expects (Checker::Renew).
  [[gnu::cold]] void Reset(uint64_t seed);

  uint64_t seed() const { return seed_; }
  uint32_t node_count() const { return network_.node_count(); }

  // Installs node `id`'s process factory. Every node needs one before Start.
  absl::Status SetProcess(NodeId id, ProcessFactory factory);
  // The same model for every node; before Start. Draws come from one stream
  // per node ("node-model/<id>"), so no other stream shifts.
  absl::Status SetNodeModel(const NodeModel& model);
  // Sinks see every record of the kinds they read (TraceSink::kinds) from
  // then on, in the order they were added; they must outlive the
  // simulator's use.
  void AddTraceSink(TraceSink* sink);
  // From now on, every sink that reads observations is offered every one,
  // whatever types it declares (TraceSink::observation_types): for tests
  // that check those declarations by comparing runs with and without.
  void OfferEveryObservation() { router_.OfferEveryObservation(); }
  // Before any sink is added: every sink is offered every record, whatever
  // kinds and types it declares, and none is told where instants start
  // (TraceSink::reads_instant_starts): it sees time move in the records
  // themselves. For the tests of those declarations.
  void OfferEveryRecord() { router_.OfferEveryRecord(); }
  // Hashes every record from now on, before any sink sees it (so a sink may
  // read trace_hasher() for the hash up to and including its record). The
  // same as adding a TraceHasher as the first sink, without a virtual call
  // per record.
  void EnableTraceHash() { hash_trace_ = true; }
  // See TraceHasher::KeepCheckpoints.
  void KeepTraceHashCheckpoints(uint64_t every, size_t max) { trace_hasher_.KeepCheckpoints(every, max); }
  const TraceHasher& trace_hasher() const { return trace_hasher_; }

  // Boots every node at time 0 (in id order).
  absl::Status Start();
  // Runs events with time <= end, then sets now to `end`. Returns the first
  // error any process caused (bad send, negative timer), ResourceExhausted
  // when more events are pending than SetMaxPendingEvents allows, or OK.
  absl::Status RunUntil(TimeNs end);
  // Caps the events pending at once (queued, or held at paused nodes); past
  // it RunUntil stops. A runaway configuration, such as a heartbeat every
  // nanosecond over a millisecond link, would otherwise fill memory within
  // milliseconds of simulated time (about 1.6 GB at 1 ms in one case).
  // Default kDefaultMaxPendingEvents (about 160 MB of events and messages
  // in flight; the shipped scenarios never hold more than a few dozen).
  static constexpr uint64_t kDefaultMaxPendingEvents = 1000000;
  void SetMaxPendingEvents(uint64_t max) { max_pending_events_ = max; }
  // On by default: a timer armed while a stale event of its slot is queued
  // rides on it (TimerSlot::deferred). Off queues every timer when armed:
  // for the test that deferring changes no trace.
  void SetTimerDeferral(bool on) { defers_timers_ = on; }
  // The limit that keeps pending events within `bytes` of memory.
  static uint64_t MaxPendingEventsFor(uint64_t bytes) { return std::max<uint64_t>(1, bytes / kBytesPerPendingEvent); }
  // Makes the running RunUntil return once every event at the current
  // instant has run, leaving now() at that instant (a scenario's stop
  // condition). Each request ends one RunUntil.
  void StopAtEndOfInstant() { stop_requested_ = true; }
  // Runs one event; false when the queue is empty.
  bool Step();

  TimeNs now() const { return now_; }
  const SimulatorStats& stats() const { return stats_; }
  const absl::Status& status() const { return status_; }
  uint64_t trace_records() const { return next_record_index_; }

  // Runs `action` at global time `at` (>= now), in order with other events.
  // For scenario drivers: fault schedules, checks, annotations.
  absl::Status ScheduleAt(TimeNs at, std::function<void()> action);

  // Process faults.
  absl::Status Crash(NodeId node, CrashKind kind = CrashKind::kProcess);
  absl::Status Restart(NodeId node);
  // A paused node keeps its process and clock but receives nothing: deliveries
  // and timers that come due are held.
  absl::Status Pause(NodeId node);
  // Runs the held events before returning, in the order they came due, so
  // they precede anything else due at this instant.
  absl::Status Resume(NodeId node);
  // Changes the rate of the node's clocks (both run on one oscillator) from
  // now on: they gain `drift_ppm` millionths of a second per second
  // (negative: they run slow). Timers follow the new rate.
  absl::Status SetClockDrift(NodeId node, int64_t drift_ppm);
  // Steps the node's wall clock by `delta` (either direction), as NTP in step
  // mode or settimeofday do. The monotonic clock and every timer are left
  // alone. Refused, changing nothing, when the wall reading would end up
  // beyond +-kMaxClockReading: that keeps clock arithmetic far from int64
  // overflow however many steps add up.
  absl::Status StepWallClock(NodeId node, TimeNs delta);

  // Network faults; each is traced.
  absl::Status SetLink(NodeId from, NodeId to, const LinkConfig& config);
  absl::Status SetAllLinks(const LinkConfig& config);
  // Cuts every link between groups (see Network::Partition for nodes in
  // no group and `bystanders`); returns those links so the caller can
  // restore exactly them later (other cuts in force stay).
  absl::StatusOr<CutSet> Partition(const std::vector<std::vector<NodeId>>& groups,
                                   const std::vector<NodeId>& bystanders = {});
  absl::Status CutOneWay(NodeId from, NodeId to);
  // Undoes one Partition or CutOneWay: each link loses one cut.
  absl::Status RestoreLinks(const CutSet& cuts);
  // Removes every cut.
  void HealNetwork();

  // Annotates the trace (e.g. the scenario step that is about to happen).
  void Note(std::string_view text, NodeId node = kNoNode);
  // Whether a record of `kind` is hashed or read by a sink: when it is not,
  // its text goes nowhere, and a caller need not build it (a fault's note,
  // formatted in every run, was 1% of a Raft trial).
  bool RecordIsUsed(TraceKind kind) const { return hash_trace_ || router_.HasReaders(kind); }

  bool IsUp(NodeId node) const;
  bool IsPaused(NodeId node) const;
  // The node's clock readings now (see Context::MonotonicNow and WallNow).
  TimeNs MonotonicTime(NodeId node) const;
  TimeNs WallTime(NodeId node) const;
  // A node's durable stable storage (what a power loss would leave), for tests and tools.
  StableStorage StableStorageOf(NodeId node) const;
  // A node's buffered writes that no Sync has made durable yet.
  StableStorage UnsyncedWritesOf(NodeId node) const;
  const Network& network() const { return network_; }

 private:
  class NodeContext;
  struct Node;
  struct InFlight {
    NodeId from;
    NodeId to;
    uint64_t message_id = 0;
    Message message;
  };
  struct TimerSlot {
    NodeId node;
    uint64_t serial = 0;      // TimerId value; 0 = slot free
    uint32_t generation = 0;  // bumped when the queued event goes stale
    TimeNs local_deadline;    // on the node's monotonic clock
    uint64_t tag = 0;
    // The newest event queued for this slot, while it is still in the queue.
    bool queued = false;
    uint32_t queued_generation = 0;
    TimeNs queued_time;
    // A timer armed while a stale event of this slot, due no later, was
    // still queued (a Raft follower re-arms its election timer at every
    // heartbeat, freeing and taking the same slot): it is not queued until
    // that event, the carrier, comes up, and then with the sequence number
    // it took when armed, so it fires exactly where it would have. Each
    // re-arm then costs no push, and no stale event to pop later.
    bool deferred = false;
    uint32_t carrier_generation = 0;
    TimeNs deferred_time;
    uint64_t deferred_seq = 0;
  };

  void Dispatch(const Event& event);
  // Dispatch's rarer cases, kept out of it (see Dispatch).
  [[gnu::noinline]] void StartEvent(const Event& event);
  [[gnu::noinline]] void RunAction(uint64_t index);
  // `already_arrived`: the message was held at a paused node and is being
  // released, so link cuts no longer apply to it.
  void DeliverMessage(const Event& event, bool already_arrived);
  // Traces and counts the loss of the message in in-flight `slot`, then frees the slot.
  void DropInFlight(uint32_t slot, const char* reason);
  void FireTimer(const Event& event);
  void StartProcess(NodeId node);
  // Each node's id, context and random stream, from seed_.
  void PrepareNodes();
  // Inline: two or three records per event, and the hash, inlined too,
  // folds each call site's constant fields (kind, no payload, no text).
  // (GCC keeps it out of line at most sites all the same. Moving the hash
  // out of line spares unhashed records Emit's large frame, but a hashed
  // delivery then cost 1.32x an unhashed one by instructions, over the
  // 1.3x target: EmitUsuallyUnread spares them where it matters instead.)
  // By reference: where GCC keeps it out of line, a record passed by value
  // (80 bytes, in memory) was built on the stack and copied again into the
  // argument area, and the copy's 16-byte loads of fields just stored 8
  // bytes at a time stalled on store forwarding.
  void Emit(TraceRecord&& record) {
    PlaceInTrace(record);
    if (hash_trace_) trace_hasher_.Add(record);
    router_.Route(record);
  }
  // Emit for the frequent records that no default checker reads: timers
  // (set, fire, cancel: two or three per timer) and storage (write, sync,
  // persist). Where nothing hashes the trace and no sink reads the kind, as
  // in sweeps, a record needs only its index and the instant check: `make`,
  // which builds the record at now_ (all but its kind), runs only when
  // something reads it or it begins an instant that sinks are told of. The
  // usual case then neither builds the record nor reads the node's clock
  // for it, and its caller keeps a smaller frame (4% of a Raft trial).
  template <typename MakeRecord>
  void EmitUsuallyUnread(TraceKind kind, MakeRecord make) {
    if (hash_trace_ || router_.HasReaders(kind)) [[unlikely]] {
      TraceRecord record = make();
      record.kind = kind;
      return Emit(std::move(record));
    }
    const uint64_t index = next_record_index_++;
    if (now_ > instant_time_) [[unlikely]] {
      TraceRecord record = make();
      record.kind = kind;
      record.index = index;
      StartInstant(record);
    }
  }
  // What every record takes, read or not: its index, and the start of a new
  // instant if it is the first record of one.
  void PlaceInTrace(TraceRecord& record) {
    record.index = next_record_index_++;
    if (record.time > instant_time_) [[unlikely]]
      StartInstant(record);
  }
  // `first` begins a later instant: tells the sinks that read instant starts.
  // Inline up to the call: where nothing reads them (most runs of most
  // scenarios, a benchmark's timer loop) a new instant costs a store.
  void StartInstant(const TraceRecord& first) {
    instant_time_ = first.time;
    if (router_.ReadsInstantStarts()) [[unlikely]]
      router_.TellInstantStart(first);
  }
  // Keeps `event` for when the paused `node` resumes.
  void Hold(Node& node, const Event& event);
  // Called when the queue outgrows its bound: drops timer events that went
  // stale (cancelled or re-armed timers) and resets the bound to twice what
  // is left, so that each compaction is paid for by as many pushes. A
  // cluster re-arming election timers on every heartbeat would otherwise
  // queue a stale event per heartbeat until its old deadline.
  void CompactQueue();
  void FailPendingEventsExceeded();
  void Fail(absl::Status status);
  absl::Status CheckNode(NodeId node) const { return network_.CheckNode(node); }
  void RescheduleTimers(NodeId node);
  // Queues timer `slot`'s event for its deadline on its node's clock.
  void ScheduleTimerEvent(uint32_t slot);
  // Queues `timer`, held in `slot`, to fire at global time `fire_at`, or
  // defers it onto the slot's stale queued event (see TimerSlot::deferred).
  void QueueTimer(uint32_t slot, TimerSlot& timer, TimeNs fire_at);
  // Pushes `timer`'s event for `fire_at`, with sequence number `seq`.
  void PushTimerEvent(uint32_t slot, TimerSlot& timer, TimeNs fire_at, uint64_t seq);
  TimeNs GlobalTimeForLocal(const Node& node, TimeNs local) const;

  // Context operations, called through NodeContext.
  void SendFrom(NodeId from, NodeId to, const Message& message);
  [[gnu::noinline, gnu::cold]] void FailNegativeTimerDelay(NodeId node, TimeNs delay);
  [[gnu::noinline]] void FailSendToUnknownNode(NodeId from, NodeId to, const Message& message);
  TimerId SetTimerFor(NodeId node, TimeNs delay, uint64_t tag);
  void CancelTimerFor(NodeId node, TimerId timer);
  void Persist(NodeId node, std::string_view key, int64_t value);
  void Write(NodeId node, std::string_view key, int64_t value);
  void Sync(NodeId node);
  // With a persist model: the running handler's sends wait for one more sync.
  void WaitForDisk(Node& node);
  void Observe(NodeId node, const Observation& observation);

  uint64_t seed_;
  LinkConfig constructed_link_;  // for Reset: SetAllLinks changes the network's default
  TimeNs now_;
  NodeModel node_model_;
  bool models_processing_ = false;
  bool models_persist_ = false;
  bool started_ = false;
  bool defers_timers_ = true;
  EventQueue queue_;
  // Kept across runs: what it holds depends on node ids alone. Before network_, which uses it.
  LinkStreamNames link_names_;
  Network network_;
  StorageKeys storage_keys_;  // every node's keys, numbered by first use
  std::vector<Node> nodes_;   // sized once at construction: a NodeContext's address never changes
  std::vector<InFlight> in_flight_;
  std::vector<uint32_t> free_in_flight_;
  std::vector<TimerSlot> timers_;
  std::vector<uint32_t> free_timers_;
  uint64_t next_timer_serial_ = 1;
  uint64_t next_message_id_ = 1;
  std::vector<std::function<void()>> actions_;
  // Which sinks see which records (sim/trace_router.h).
  TraceRouter router_;
  // The time of the current instant.
  TimeNs instant_time_;
  uint64_t next_record_index_ = 0;
  bool hash_trace_ = false;
  TraceHasher trace_hasher_;
  bool stop_requested_ = false;
  uint64_t held_events_ = 0;                                // over all nodes; pending like the queued ones
  uint64_t max_pending_events_ = kDefaultMaxPendingEvents;  // see SetMaxPendingEvents
  static constexpr size_t kFirstCompactionAt = 4096;
  size_t compact_at_queue_size_ = kFirstCompactionAt;  // see CompactQueue
  SimulatorStats stats_;
  absl::Status status_;
};

}  // namespace sim
