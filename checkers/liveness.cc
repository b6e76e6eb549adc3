// liveness (off by default; a scenario's liveness block switches it on):
// once the faults have healed at `liveness_after`, by `liveness_after +
// liveness_within` (the deadline) one live election node holds the leader
// role and every other live node believes it leads, and then that stays so,
// with the same leader, until the end of the run, or for
// `liveness_stable_for` when it is set. A first instant of agreement is not
// enough: a leader that is deposed a moment later has not made the cluster
// live.
//
// Live means up and not paused: a frozen node can neither lead nor learn,
// so it is left out on both sides (single_leader is the checker that cares
// about a paused node still believing it leads). The leader needs no belief
// record of itself; holding the role is its belief. An instant is judged by
// the state after all of its records, and that state holds until the next
// record's time. Agreement that began before `liveness_after` counts from
// `liveness_after`. When the faults end at a time known only as the run goes,
// `liveness_after` is that time (OnFaultsOver), or the run's end if they never
// do; until then nothing is judged.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

class LivenessChecker final : public Checker, ClusterView::InstantListener {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit LivenessChecker(const CheckerConfig& config)
      : own_view_(config.cluster_view == nullptr ? std::make_unique<ClusterView>(config.node_count) : nullptr),
        view_(config.cluster_view == nullptr ? *own_view_ : *config.cluster_view),
        within_(config.liveness_within),
        after_(config.liveness_after_from_run ? sim::TimeNs::Max() : config.liveness_after),
        deadline_(config.liveness_after_from_run ? sim::TimeNs::Max() : config.liveness_after + within_),
        stable_for_(config.liveness_stable_for) {
    view_.AddInstantListener(this);
  }
  ~LivenessChecker() override { view_.RemoveInstantListener(this); }
  LivenessChecker(const LivenessChecker&) = delete;
  LivenessChecker& operator=(const LivenessChecker&) = delete;

  // A shared view may be about to take in a later instant's first record
  // before this checker sees it: the instant that ends is judged now, on the
  // state it ended in (OnRecord's own CloseInstant then finds nothing to do).
  void OnInstantEnding() override {
    if (!settled_) CloseInstant();
  }

  void OnFaultsOver(sim::TimeNs at) override {
    if (after_ != sim::TimeNs::Max()) return;
    after_ = at;
    deadline_ = at + within_;
    WakeAtNextInstant();  // the times it slept until have moved
  }

  std::string_view name() const override { return "liveness"; }

  // The records that can change the view, and where each instant starts
  // (most records, timers and storage, change nothing: a Raft trial's 249
  // records hold about 60 of these). Fed every record instead, and no
  // instant starts, it sees time move in the records themselves: the same
  // verdicts (ScenarioFiles.SinksMissNoRecordTheyRead).
  sim::TraceKinds kinds() const override { return view_.kinds(); }
  sim::ObservationTypes observation_types() const override { return ClusterView::observation_types(); }
  sim::ObservationTypes message_types() const override { return view_.message_types(); }
  bool reads_instant_starts() const override { return true; }

  // Called after an instant in which the view changed, and once a time
  // HoldUntil acts at has come; at the instants between, it would do
  // nothing (and last_index_ is read only after a change).
  void OnInstantStart(const sim::TraceRecord& first) override {
    if (settled_) return;
    // The instant at now_ ended with the record before `first`.
    if (first.index > 0) last_index_ = first.index - 1;
    EndInstantBefore(first);
    now_ = first.time;
    SleepUntilInstantAt(NextDue());
  }

  // The last record of the run, which a verdict at the end names.
  void OnTraceEnd(uint64_t record_count) override {
    if (!settled_ && record_count > 0) last_index_ = record_count - 1;
  }

  // The hot path keeps no stack frame; an instant's judging is out of line.
  void OnRecord(const sim::TraceRecord& r) override {
    if (settled_) return;
    if (r.time > now_) [[unlikely]] {
      EndInstantBefore(r);
      if (settled_) return;
    }
    now_ = r.time;
    last_index_ = r.index;
    if (view_.Apply(r)) {
      changed_ = true;
      WakeAtNextInstant();
    }
  }

  void Finish(sim::TimeNs end) override {
    OnFaultsOver(end);
    if (settled_) return;
    CloseInstant();
    if (settled_) return;
    settled_ = true;
    // The last state holds over [now_, end], the end included.
    if (Viable()) {
      if (!stable_for_ || end - EffectiveStart(*stretch_) >= *stable_for_) return;
      Report({.time = end,
              .trace_index = last_index_,
              .nodes = {stretch_->leader},
              .term = stretch_->term,
              .message = fmt::format("the run ended at {}, {} after node {} became the leader known to every live "
                                     "node, before it had held for {}",
                                     sim::FormatSeconds(end), sim::FormatMillis(end - EffectiveStart(*stretch_)),
                                     stretch_->leader.value(), sim::FormatDuration(*stable_for_))});
      return;
    }
    if (end >= deadline_) {
      ReportNoStableLeader(last_index_);
      return;
    }
    Report({.time = end,
            .trace_index = last_index_,
            .nodes = Involved(),
            .term = LeaderTerm(),
            .message = fmt::format("the run ended at {}, before the liveness deadline {}, without a single leader "
                                   "known to every live node since {}; at the end {}",
                                   sim::FormatSeconds(end), sim::FormatSeconds(deadline_), sim::FormatSeconds(after_),
                                   DescribeState())});
  }

 private:
  // An unbroken run of instants with one known leader, the same one.
  struct Stretch {
    sim::NodeId leader;
    int64_t term = -1;
    sim::TimeNs start;
    // Set once it is over: when, the record that ended it, and what the state was then.
    std::optional<sim::TimeNs> end;
    uint64_t end_index = 0;
    std::string end_state;
  };

  sim::TimeNs EffectiveStart(const Stretch& stretch) const { return std::max(stretch.start, after_); }
  // The open stretch can still make the run live: it began by the deadline.
  bool Viable() const { return stretch_ && EffectiveStart(*stretch_) <= deadline_; }

  // Judges the state after all the records at now_.
  void CloseInstant() {
    if (!changed_) return;
    changed_ = false;
    const bool agreed = view_.LeaderKnownToAll();
    const sim::NodeId leader = view_.SoleLiveLeader();
    if (stretch_ && (!agreed || leader != stretch_->leader)) {
      Stretch ended = *stretch_;
      ended.end = now_;
      ended.end_index = last_index_;
      ended.end_state = DescribeState();
      // One that was live at `after` is the one to tell about, should nothing better come.
      if (*ended.end > EffectiveStart(ended) && EffectiveStart(ended) <= deadline_) broken_ = std::move(ended);
      stretch_.reset();
    }
    if (agreed && !stretch_) {
      stretch_ = Stretch{.leader = leader, .term = view_.node(leader.value()).role_term, .start = now_};
    }
  }

  // `next` is the first record after now_: the instant at now_ is over.
  [[gnu::noinline]] void EndInstantBefore(const sim::TraceRecord& next) {
    CloseInstant();
    if (!settled_) HoldUntil(next.time, next.index);
  }

  // The first time at which HoldUntil acts while the view stays as it is.
  sim::TimeNs NextDue() const {
    if (settled_) return sim::TimeNs::Max();
    if (Viable()) {
      if (!stable_for_) return sim::TimeNs::Max();
      int64_t due_ns;
      if (__builtin_add_overflow(EffectiveStart(*stretch_).ns(), stable_for_->ns(), &due_ns)) {
        return sim::TimeNs::Max();
      }
      return sim::TimeNs(due_ns);
    }
    return deadline_ == sim::TimeNs::Max() ? deadline_ : deadline_ + sim::TimeNs(1);
  }

  // The state judged at now_ holds over [now_, next).
  void HoldUntil(sim::TimeNs next, uint64_t next_index) {
    if (Viable()) {
      if (stable_for_ && next - EffectiveStart(*stretch_) >= *stable_for_) settled_ = true;
      return;
    }
    if (next > deadline_) {
      settled_ = true;
      ReportNoStableLeader(next_index);
    }
  }

  std::string MustHold() const {
    return stable_for_ ? fmt::format("for {}", sim::FormatDuration(*stable_for_)) : "until the end of the run";
  }

  // Past the deadline with no stretch that could still do.
  void ReportNoStableLeader(uint64_t trace_index) {
    settled_ = true;
    if (broken_) {
      const Stretch& b = *broken_;
      Report(
          {.time = *b.end,
           .trace_index = b.end_index,
           .nodes = {b.leader},
           .term = b.term,
           .message = fmt::format("node {} was the leader known to every live node from {}, but at {} {}: it held "
                                  "{}, and a leader must hold {}",
                                  b.leader.value(), sim::FormatSeconds(EffectiveStart(b)), sim::FormatSeconds(*b.end),
                                  b.end_state, sim::FormatMillis(*b.end - EffectiveStart(b)), MustHold())});
      return;
    }
    Report({.time = deadline_,
            .trace_index = trace_index,
            .nodes = Involved(),
            .term = LeaderTerm(),
            .message = fmt::format("no single leader was known to every live node between {} and the deadline {}; "
                                   "at the deadline {}",
                                   sim::FormatSeconds(after_), sim::FormatSeconds(deadline_), DescribeState())});
  }

  // The leaders, then the live nodes that did not follow the only leader.
  std::vector<sim::NodeId> Involved() const {
    std::vector<sim::NodeId> nodes = view_.LiveLeaders();
    if (nodes.size() == 1) {
      for (const sim::NodeId node : view_.LiveNonBelievers(nodes[0].value())) nodes.push_back(node);
    }
    return nodes;
  }

  int64_t LeaderTerm() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    return leaders.size() == 1 ? view_.node(leaders[0].value()).role_term : -1;
  }

  std::string DescribeState() const {
    const std::vector<sim::NodeId> leaders = view_.LiveLeaders();
    if (leaders.empty()) return "no live election node was in the leader role";
    if (leaders.size() > 1) {
      return fmt::format("{} were {} in the leader role", NodesPhrase(leaders), leaders.size() == 2 ? "both" : "all");
    }
    const std::vector<sim::NodeId> doubters = view_.LiveNonBelievers(leaders[0].value());
    if (doubters.empty()) return fmt::format("node {} led and every live node believed it", leaders[0].value());
    return fmt::format("{} did not believe node {} led", NodesPhrase(doubters), leaders[0].value());
  }

  std::unique_ptr<ClusterView> own_view_;
  ClusterView& view_;
  sim::TimeNs within_;
  sim::TimeNs after_;
  sim::TimeNs deadline_;
  std::optional<sim::TimeNs> stable_for_;
  // Time of the records being applied; the state before the first record holds from 0.
  sim::TimeNs now_;
  uint64_t last_index_ = 0;
  // Some record at now_ changed the view: the instant needs judging. True at
  // first, so that the state before any record is judged too.
  bool changed_ = true;
  std::optional<Stretch> stretch_;
  // The last stretch that began by the deadline and ended.
  std::optional<Stretch> broken_;
  // Decided either way; later records change nothing.
  bool settled_ = false;
};

}  // namespace

std::unique_ptr<Checker> MakeLivenessChecker(const CheckerConfig& config) {
  return std::make_unique<LivenessChecker>(config);
}

}  // namespace checkers
