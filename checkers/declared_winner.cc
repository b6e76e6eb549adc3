// declared_winner (off by default): an algorithm that promises who wins
// (vocab::kRank: Bully and Ring the highest live id, ZooKeeper's recipe the
// lowest live sequence) keeps that promise once the cluster is stable.
// Stable means: the faults are over (CheckerConfig::liveness_after, or
// OnFaultsOver) and one live node has held the leader role, believed in by
// every other live node, for kSettle. Then that leader must be, of the live
// nodes that state a rank, one of the highest rank. Each stretch of one
// known leader is judged once, when it has lasted kSettle, or at the end of
// the run if it has by then.
//
// A node that states its rank with vocab::kRankAnytime (Bully) promises
// more: it never believes in a leader ranked below it. Against such a node
// a stretch is judged once it has lasted kSettle, whether the faults are
// over or not: every live node agreeing on a lower leader is the broken
// promise, whatever the network did.
//
// A node that states no rank is never compared, so an algorithm that
// promises no winner (Raft, the lease) is never judged. A crash forgets a
// node's rank until its next process states one.
#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/factories.h"
#include "checkers/format.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

// Long enough for any shipped algorithm to move a leader it has agreed on
// to the node it promises (a restarted top id's challenge, a new rank's
// notice), short enough to judge the calm end of a fuzzed run.
constexpr sim::TimeNs kSettle = sim::TimeNs::Seconds(1);

class DeclaredWinnerChecker final : public Checker, ClusterView::InstantListener {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit DeclaredWinnerChecker(const CheckerConfig& config)
      : own_view_(config.cluster_view == nullptr ? std::make_unique<ClusterView>(config.node_count) : nullptr),
        view_(config.cluster_view == nullptr ? *own_view_ : *config.cluster_view),
        ranks_(config.node_count),
        faults_over_(config.liveness_after_from_run ? sim::TimeNs::Max() : config.liveness_after) {
    view_.AddInstantListener(this);
  }
  ~DeclaredWinnerChecker() override { view_.RemoveInstantListener(this); }
  DeclaredWinnerChecker(const DeclaredWinnerChecker&) = delete;
  DeclaredWinnerChecker& operator=(const DeclaredWinnerChecker&) = delete;

  std::string_view name() const override { return "declared_winner"; }
  // What the cluster view reads, plus the ranks; where each instant starts.
  sim::TraceKinds kinds() const override { return view_.kinds(); }
  sim::ObservationTypes observation_types() const override {
    return ClusterView::observation_types().With({&vocab::kRank, &vocab::kRankAnytime});
  }
  sim::ObservationTypes message_types() const override { return view_.message_types(); }
  bool reads_instant_starts() const override { return true; }

  void OnFaultsOver(sim::TimeNs at) override {
    if (faults_over_ == sim::TimeNs::Max()) faults_over_ = at;
    WakeAtNextInstant();  // the times it slept until have moved
  }

  // Called after an instant in which the view changed, and once a time
  // JudgeIfSettled acts at has come; at the instants between, it would do nothing.
  void OnInstantStart(const sim::TraceRecord& first) override {
    EndInstant(first.time, first.index);
    SleepUntilInstantAt(NextDue());
  }
  // A shared view may take in a later instant before this checker sees it.
  void OnInstantEnding() override { CloseInstant(); }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.time > now_) EndInstant(r.time, r.index);
    now_ = r.time;
    last_index_ = r.index;
    if (r.node.value() < ranks_.size()) {
      if (r.kind == sim::TraceKind::kCrash) ranks_[r.node.value()].reset();
      if (r.kind == sim::TraceKind::kObserve && r.payload != nullptr) {
        if (const auto rank = r.payload->As<vocab::RankDeclared>()) {
          ranks_[r.node.value()] = Rank{.value = rank->rank, .anytime = false};
        } else if (const auto anytime = r.payload->As<vocab::RankAnytimeDeclared>()) {
          ranks_[r.node.value()] = Rank{.value = anytime->rank, .anytime = true};
        }
      }
    }
    if (view_.Apply(r)) {
      changed_ = true;
      WakeAtNextInstant();
    }
  }

  void OnTraceEnd(uint64_t record_count) override {
    if (record_count > 0) last_index_ = record_count - 1;
  }

  void Finish(sim::TimeNs end) override {
    CloseInstant();
    JudgeIfSettled(end, last_index_);
  }

 private:
  // One live leader known to all, since `since`.
  struct Stretch {
    sim::NodeId leader;
    sim::TimeNs since;
    bool judged_anytime = false;  // against the nodes whose rank holds anytime
    bool judged = false;          // against every node, the faults over
  };
  // A rank as a node states it.
  struct Rank {
    int64_t value = 0;
    bool anytime = false;  // vocab::kRankAnytime
  };

  // The instant at now_ is over; the next record is at `next`.
  void EndInstant(sim::TimeNs next, uint64_t next_index) {
    CloseInstant();
    JudgeIfSettled(next, next_index);
  }

  void CloseInstant() {
    if (!changed_) return;
    changed_ = false;
    const sim::NodeId leader = view_.LeaderKnownToAll() ? view_.SoleLiveLeader() : sim::kNoNode;
    if (stretch_ && stretch_->leader == leader) return;
    stretch_.reset();
    if (leader != sim::kNoNode) stretch_ = Stretch{.leader = leader, .since = now_};
  }

  // The first time at which JudgeIfSettled acts while the view stays as it is.
  sim::TimeNs NextDue() const {
    if (!stretch_ || stretch_->judged || violation()) return sim::TimeNs::Max();
    sim::TimeNs due = sim::TimeNs::Max();
    if (!stretch_->judged_anytime) due = stretch_->since + kSettle;
    if (faults_over_ != sim::TimeNs::Max()) due = std::min(due, std::max(stretch_->since, faults_over_) + kSettle);
    return due;
  }

  // The state of the last instant has held until `until`.
  void JudgeIfSettled(sim::TimeNs until, uint64_t index) {
    if (!stretch_ || stretch_->judged || violation()) return;
    if (!stretch_->judged_anytime && until - stretch_->since >= kSettle) {
      stretch_->judged_anytime = true;
      if (Judge(stretch_->since, /*anytime_only=*/true, index)) return;
    }
    const sim::TimeNs calm_since = std::max(stretch_->since, faults_over_);
    if (faults_over_ == sim::TimeNs::Max() || until - calm_since < kSettle) return;
    stretch_->judged = true;
    Judge(calm_since, /*anytime_only=*/false, index);
  }

  // Reports the first live node, of those judged, that outranks the
  // stretch's leader; `calm_since` is where the settled time began.
  bool Judge(sim::TimeNs calm_since, bool anytime_only, uint64_t index) {
    const sim::NodeId leader = stretch_->leader;
    const std::optional<Rank>& leader_rank = ranks_[leader.value()];
    for (uint32_t i = 0; i < ranks_.size(); ++i) {
      const std::optional<Rank>& rank = ranks_[i];
      if (!view_.IsLive(i) || !rank || (anytime_only && !rank->anytime)) continue;
      if (leader_rank && rank->value <= leader_rank->value) continue;
      // Before the faults are over, only a node that never follows a lower rank is judged.
      const std::string_view never_follows = anytime_only ? " and never follows a lower one" : "";
      Report({.time = calm_since + kSettle,
              .trace_index = index,
              .nodes = {leader, sim::NodeId(i)},
              .term = view_.node(leader.value()).role_term,
              .message = fmt::format("node {} led, known to every live node, from {} to past {}, but live node {} "
                                     "states a higher rank ({} against {}){}: the algorithm promises the highest",
                                     leader.value(), sim::FormatSeconds(calm_since),
                                     sim::FormatSeconds(calm_since + kSettle), i, rank->value,
                                     leader_rank ? fmt::format("{}", leader_rank->value) : "none", never_follows)});
      return true;
    }
    return false;
  }

  std::unique_ptr<ClusterView> own_view_;
  ClusterView& view_;
  // Each election node's stated rank, while its process lives.
  std::vector<std::optional<Rank>> ranks_;
  sim::TimeNs faults_over_;
  sim::TimeNs now_;
  uint64_t last_index_ = 0;
  bool changed_ = true;
  std::optional<Stretch> stretch_;
};

}  // namespace

std::unique_ptr<Checker> MakeDeclaredWinnerChecker(const CheckerConfig& config) {
  return std::make_unique<DeclaredWinnerChecker>(config);
}

}  // namespace checkers
