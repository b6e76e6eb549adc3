// Failover episodes: what a fault step that hits the leader sets off,
// measured from the fault's moment. The run's election episodes
// (checkers/metrics.h) start whenever a leader is lost, from any cause; these
// start at the fault and end with the event a user comparing failover asks
// about:
//   - leader crashed: a new leader known to every live node;
//   - leader paused: a new leader known to every other live node; and, once
//     it resumes, how long the old leader went on acting as leader;
//   - leader cut off (isolated, or on a minority side of a partition): a new
//     leader known to every live node of the majority side; and how long the
//     cut-off leader kept acting, until it stepped down or the cut healed.
// After the fault is undone (restart, resume, heal) each episode also says
// when one leader was known to all again, and whether that leader was the
// old one winning back: its own named event, never the failover.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/cluster_view.h"
#include "checkers/metrics.h"
#include "electsim/sim/types.h"
#include "sim/trace.h"

namespace electsim {

// The records [first_record, end_record) that applying one fault step made
// (its note, its crash, its cut...), or that its "during" moment made later.
struct FaultApplication {
  std::string step_path;  // "/faults/3"
  uint64_t first_record = 0;
  uint64_t end_record = 0;
};

struct FailoverEpisode {
  enum class Hit { kCrash, kPause, kCut };
  std::string step;  // the fault step, "/faults/0"
  Hit hit = Hit::kCrash;
  sim::TimeNs started;  // the fault's moment
  uint32_t old_leader = 0;
  // From `started`: the first node expected to take over entering the
  // candidate or leader role, its first leader claim, and that leader known
  // to every live node expected to know it.
  std::optional<sim::TimeNs> detected;
  std::optional<sim::TimeNs> elected;
  std::optional<sim::TimeNs> known;
  int64_t new_leader = -1;
  // How long the old leader acted as leader while it should not have: cut
  // off, from the cut until it stepped down or the cut healed; paused, from
  // its resume until it stepped down. Unset for a crash, or while it lasts.
  std::optional<sim::TimeNs> old_leader_acting;
  // When the fault was undone, and then when one leader was known to all.
  std::optional<sim::TimeNs> undone;
  std::optional<sim::TimeNs> settled;
  bool old_leader_back = false;  // the leader known to all after the undo was the old one
  // Election messages (checkers::MessageClass::kElection) sent from the
  // fault until the new leader was known, and their estimated bytes.
  uint64_t election_messages = 0;
  uint64_t election_bytes = 0;

  // "leader crashed", "leader paused", "leader cut off".
  std::string_view HitName() const;
};

// Measures the episodes from the cluster view it shares with the runner's
// watch (which applies each record first); told by the fault driver when a
// step hits the leader and when a cut is restored.
class FailoverTracker final : public sim::TraceSink {
 public:
  // `messages` classifies sends (it must outlive the tracker).
  FailoverTracker(checkers::ClusterView& view, const checkers::MetricsCollector& messages)
      : view_(view), messages_(messages) {}
  // `step` hit the leader `leader` at `now`; `side`: the election nodes
  // expected to elect a new one among themselves.
  void OnLeaderHit(const std::string& step, FailoverEpisode::Hit hit, uint32_t leader, sim::TimeNs now,
                   std::vector<uint32_t> side);
  // The cuts `step` made are gone (its "for" passed, or a heal).
  void OnCutRestored(const std::string& step, sim::TimeNs now);
  void OnHeal(sim::TimeNs now);

  void OnRecord(const sim::TraceRecord& record) override;
  sim::TraceKinds kinds() const override { return view_.kinds().With({sim::TraceKind::kSend}); }
  sim::ObservationTypes observation_types() const override { return checkers::ClusterView::observation_types(); }

  // The run ends at `end`: an old leader still acting has acted until then.
  void Finish(sim::TimeNs end);
  std::vector<FailoverEpisode> TakeEpisodes() { return std::move(episodes_); }

 private:
  struct Open {
    size_t episode;
    std::vector<uint32_t> side;
    bool acting = false;  // the old leader acts as leader now, while it should not
    sim::TimeNs acting_since;
  };
  void Undone(Open& open, sim::TimeNs now);
  void Update(Open& open, const sim::TraceRecord& record);
  void StopActing(Open& open, sim::TimeNs now);
  // The leader every live node of `side` knows, or -1.
  int64_t KnownLeader(const std::vector<uint32_t>& side, uint32_t old_leader) const;

  void CountSend(const sim::TraceRecord& send);

  checkers::ClusterView& view_;
  const checkers::MetricsCollector& messages_;
  std::vector<FailoverEpisode> episodes_;
  std::vector<Open> open_;  // episodes still measuring something
};

}  // namespace electsim
