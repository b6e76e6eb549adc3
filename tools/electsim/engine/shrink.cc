#include "tools/electsim/engine/shrink.h"

#include <algorithm>
#include <iostream>

#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/engine/repro_writer.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/duration.h"

namespace electsim {
namespace {

using nlohmann::json;

constexpr sim::TimeNs kMillisecond = sim::TimeNs::Millis(1);
// A schedule this small reads at a glance; past it, shrinking also searches
// the subsets of this many steps.
constexpr size_t kSmallSchedule = 3;

std::string MillisRoundedUp(int64_t ns) {
  return fmt::format("{}ms", (ns + kMillisecond.ns() - 1) / kMillisecond.ns());
}

class Shrinker {
 public:
  Shrinker(std::string source, uint64_t seed, std::string invariant, uint64_t max_runs)
      : source_(std::move(source)), seed_(seed), invariant_(std::move(invariant)), max_runs_(max_runs) {}

  absl::StatusOr<ShrinkResult> Run(const json& document) {
    auto first = Parse(document);
    if (!first.ok()) return first.status();
    auto result = RunScenario(*first, seed_);
    if (!result.ok()) return result.status();
    ++out_.runs;
    out_.invariant = invariant_;
    original_unexpected_ = UnexpectedViolations(*first, *result);
    if (!Breaks(*result)) {
      return absl::FailedPreconditionError(
          fmt::format("{}: seed {} does not break {}; expected a run that does", source_, seed_, invariant_));
    }
    Keep(document, std::move(*first), std::move(*result));
    // Each pass can open the way for another; stop when a round removes
    // nothing, first under the seed alone, then letting a candidate also
    // try the next seeds (15, then 255: a run of a shrunk scenario costs a
    // millisecond or so): a step whose removal only moves a drop or a
    // timeout elsewhere then goes too.
    for (int reseeds : {0, 15, 255}) {
      reseeds_ = reseeds;
      ReduceWhilePossible();
    }
    // Delta debugging ends where no one step can go; a smaller schedule
    // may still break the invariant under another seed while none of the
    // schedules between fails (a drop or a timeout moves with the seed).
    if (SmallestSubset()) ReduceWhilePossible();
    out_.stopped_by_signal = StopSignal();
    out_.budget_exhausted = out_.stopped_by_signal == 0 && Exhausted();
    Redescribe(document.value("description", ""));
    ExpectWhatItShows();
    return std::move(out_);
  }

 private:
  void ReduceWhilePossible() {
    for (bool changed = true; changed && !Exhausted();) {
      const size_t removed_before = out_.removed.size();
      DropLiveness();
      CutAfterViolation();
      DropFaults();
      ShortenFaults();
      EarlierLeaders();
      FewerNodes();
      CalmWeather();
      changed = out_.removed.size() != removed_before;
    }
  }

  // Tries every subset of at most kSmallSchedule steps, smallest first and
  // in step order, each under the seed and the neighbouring ones; keeps the
  // first that breaks the invariant.
  bool SmallestSubset() {
    const json faults = out_.document.value("faults", json::array());
    if (faults.size() <= kSmallSchedule) return false;
    for (size_t size = 1; size <= kSmallSchedule; ++size) {
      std::vector<size_t> chosen(size);
      for (size_t i = 0; i < size; ++i) chosen[i] = i;
      while (!Exhausted()) {
        json kept = json::array();
        std::string which;
        for (size_t i : chosen) {
          kept.push_back(faults[i]);
          which += fmt::format("{}/faults/{}", which.empty() ? "" : ", ", i);
        }
        json candidate = out_.document;
        candidate["faults"] = std::move(kept);
        if (Try(candidate, fmt::format("every fault step but {} (of {})", which, faults.size()))) return true;
        // The next combination in lexicographic order.
        size_t i = size;
        while (i > 0 && chosen[i - 1] == faults.size() - size + i - 1) --i;
        if (i == 0) break;
        ++chosen[i - 1];
        for (size_t j = i; j < size; ++j) chosen[j] = chosen[j - 1] + 1;
      }
    }
    return false;
  }

  bool Exhausted() const { return out_.runs >= max_runs_ || StopSignal() != 0; }

  // The shrunk scenario expects the violations its run shows, but for those
  // the original did not expect either: an expected violation may be gone
  // with its faults (a demonstration still runs to exit 0), and one that made
  // the original fail (a bug found) makes the shrunk one fail as well, rather
  // than being taken in as expected.
  void ExpectWhatItShows() {
    if (!out_.document.contains("expect")) return;
    std::vector<std::string> expected;
    for (const std::string& name : out_.result.violated_checkers()) {
      if (std::find(original_unexpected_.begin(), original_unexpected_.end(), name) == original_unexpected_.end()) {
        expected.push_back(name);
      }
    }
    if (!out_.document["expect"].contains("violations") && expected.empty()) return;
    out_.document["expect"]["violations"] = expected;
    out_.scenario.document["expect"]["violations"] = expected;
    out_.scenario.expect.violations = expected;
  }

  // The original's description no longer fits what is left: say what is
  // (nodes, fault steps, run length, seed, what it breaks), then the
  // original's, as "shrunk from".
  void Redescribe(const std::string& original) {
    const Scenario& s = out_.scenario;
    std::string steps = s.faults.empty()
                            ? "no fault steps"
                            : fmt::format("{} fault step{}: ", s.faults.size(), s.faults.size() == 1 ? "" : "s");
    for (size_t i = 0; i < s.faults.size() && i < kSmallSchedule; ++i) {
      const FaultStep& step = s.faults[i];
      steps += fmt::format("{}{}{}", i == 0 ? "" : "; ", step.Describe(),
                           step.after ? "" : " at " + sim::FormatDuration(step.at));
    }
    if (s.faults.size() > kSmallSchedule) steps += fmt::format("; and {} more", s.faults.size() - kSmallSchedule);
    // A shrunk file shrunk again keeps the first original's words, not a chain.
    constexpr std::string_view kFrom = "Shrunk from: ";
    std::string_view first = original;
    if (const size_t at = first.rfind(kFrom); at != std::string_view::npos) first.remove_prefix(at + kFrom.size());
    std::string description =
        fmt::format("{} {} node{}, {}, {} simulated: seed {} breaks {}. {}{}", s.nodes, s.algorithm->name(),
                    s.nodes == 1 ? "" : "s", steps, sim::FormatDuration(s.duration), seed_, invariant_, kFrom,
                    first.empty() ? "(no description)" : first);
    // The loader takes descriptions up to kMaxDescriptionBytes; cut at a
    // character boundary, marked.
    if (description.size() > kMaxDescriptionBytes) {
      size_t cut = kMaxDescriptionBytes - 3;
      while (cut > 0 && (static_cast<unsigned char>(description[cut]) & 0xC0) == 0x80) --cut;
      description = description.substr(0, cut) + "...";
    }
    out_.document["description"] = description;
    out_.scenario.document["description"] = description;
    out_.scenario.description = description;
  }

  absl::StatusOr<Scenario> Parse(const json& document) const { return ParseScenarioJson(document, source_); }

  bool Breaks(const RunResult& result) const {
    const std::vector<std::string> fired = result.violated_checkers();
    return std::find(fired.begin(), fired.end(), invariant_) != fired.end();
  }

  void Keep(json document, Scenario scenario, RunResult result) {
    out_.document = std::move(document);
    out_.scenario = std::move(scenario);
    out_.result = std::move(result);
  }

  // Keeps `candidate` when it still breaks the invariant, under the seed
  // or (when reseeding) one of the next few.
  bool Try(json candidate, const std::string& what) {
    if (Exhausted()) return false;
    auto scenario = Parse(candidate);
    if (!scenario.ok()) return false;  // e.g. a node id past a smaller cluster
    for (int i = 0; i <= reseeds_ && !Exhausted(); ++i) {
      const uint64_t seed = seed_ + static_cast<uint64_t>(i);
      auto result = RunScenario(*scenario, seed);
      ++out_.runs;
      if (!result.ok() || !Breaks(*result)) continue;
      std::string note = what;
      if (seed != seed_) {
        note += fmt::format(" (and seed {} for {})", seed_, seed);
        seed_ = seed;
        candidate["seed"] = seed;
        scenario->document["seed"] = seed;
        scenario->seed = seed;
      }
      Keep(std::move(candidate), std::move(*scenario), std::move(*result));
      out_.removed.push_back(note);
      return true;
    }
    return false;
  }

  sim::TimeNs ViolationTime() const {
    for (const checkers::Violation& v : out_.result.violations) {
      if (v.checker == invariant_) return v.time;
    }
    return out_.scenario.duration;
  }

  // A safety violation needs no liveness judgement (whose window would
  // also keep the run from being cut).
  void DropLiveness() {
    if (invariant_ == "liveness" || !out_.document.contains("liveness")) return;
    json candidate = out_.document;
    candidate.erase("liveness");
    Try(candidate, "the liveness judgement");
  }

  // Nothing after the violation can have caused it: end the run just after.
  void CutAfterViolation() {
    const int64_t end_ms = (ViolationTime() + kMillisecond).ns() / kMillisecond.ns() + 1;
    const sim::TimeNs end = sim::TimeNs::Millis(end_ms);
    if (end >= out_.scenario.duration) return;
    json candidate = out_.document;
    candidate["duration"] = MillisRoundedUp(end.ns());
    json kept = json::array();
    for (size_t i = 0; i < out_.scenario.faults.size(); ++i) {
      if (out_.scenario.faults[i].at <= end) kept.push_back(candidate["faults"][i]);
    }
    if (candidate.contains("faults")) candidate["faults"] = std::move(kept);
    Try(candidate, fmt::format("run cut from {} to {}, just after the violation",
                               sim::FormatDuration(out_.scenario.duration), MillisRoundedUp(end.ns())));
  }

  // ddmin over the steps: remove chunks of size/n, from halves down to
  // single steps, refining when no chunk can go.
  void DropFaults() {
    size_t chunks = 2;
    while (!Exhausted()) {
      const json faults = out_.document.value("faults", json::array());
      if (faults.empty()) return;
      chunks = std::min(chunks, faults.size());
      bool removed = false;
      for (size_t c = 0; c < chunks && !removed; ++c) {
        const size_t begin = faults.size() * c / chunks, end = faults.size() * (c + 1) / chunks;
        json kept = json::array();
        std::string what;
        for (size_t i = 0; i < faults.size(); ++i) {
          if (i >= begin && i < end) {
            what += fmt::format("{}{}", what.empty() ? "" : ", ", faults[i].dump());
          } else {
            kept.push_back(faults[i]);
          }
        }
        json candidate = out_.document;
        candidate["faults"] = std::move(kept);
        removed = Try(candidate, fmt::format("fault step{} {}", end - begin > 1 ? "s" : "", what));
      }
      if (removed) {
        chunks = std::max<size_t>(chunks - 1, 2);
      } else if (chunks < faults.size()) {
        chunks = std::min(chunks * 2, faults.size());
      } else {
        return;
      }
    }
  }

  // Halves each step's "for" while the invariant still breaks.
  void ShortenFaults() {
    for (size_t i = 0; i < out_.scenario.faults.size() && !Exhausted(); ++i) {
      while (!Exhausted()) {
        const std::optional<sim::TimeNs> for_ns = out_.scenario.faults[i].for_ns;
        if (!for_ns || *for_ns <= kMillisecond) break;
        const int64_t half = std::max(kMillisecond.ns(), for_ns->ns() / 2);
        json candidate = out_.document;
        candidate["faults"][i]["for"] = MillisRoundedUp(half);
        if (!Try(candidate, fmt::format("step /faults/{} shortened from {} to {}", i, sim::FormatDuration(*for_ns),
                                        MillisRoundedUp(half)))) {
          break;
        }
      }
    }
  }

  // A step for {"next_leader": N} tries the leader one election sooner
  // (N - 1, or, from 1, the leader in office): once a link of a leader
  // chain is gone, the links after it can close the gap, and a chain
  // shrinks to the leaders that matter.
  void EarlierLeaders() {
    for (size_t i = 0; i < out_.scenario.faults.size() && !Exhausted(); ++i) {
      while (!Exhausted()) {
        json candidate = out_.document;
        json* actor = Actor(candidate["faults"][i]);
        if (actor == nullptr || !actor->is_object() || !actor->contains("next_leader")) break;
        const json before = *actor;
        const int64_t n = (*actor)["next_leader"].get<int64_t>();
        *actor = n > 1 ? json{{"next_leader", n - 1}} : json("leader");
        if (!Try(candidate, fmt::format("step /faults/{} from {} to {}", i, before.dump(), actor->dump()))) break;
      }
    }
  }

  // The node a step acts on, as written, or nullptr.
  static json* Actor(json& step) {
    for (const char* key : {"crash", "pause", "isolate"}) {
      if (step.contains(key)) return &step[key];
    }
    if (step.contains("cut")) return &step["cut"]["from"];
    if (step.contains("clock")) return &step["clock"]["node"];
    return nullptr;
  }

  // Drops the highest node id: out of every partition group (a group left
  // empty goes, and a partition left without groups), and with every other
  // step that names it.
  void FewerNodes() {
    while (out_.scenario.nodes > 1 && !Exhausted()) {
      const uint64_t gone = out_.scenario.nodes - 1;
      json candidate = out_.document;
      candidate["nodes"] = gone;
      json kept = json::array();
      for (json step : candidate.value("faults", json::array())) {
        if (step.contains("partition")) {
          json groups = json::array();
          for (json group : step["partition"]) {
            group.erase(std::remove(group.begin(), group.end(), json(gone)), group.end());
            if (!group.empty()) groups.push_back(std::move(group));
          }
          if (groups.empty()) continue;
          step["partition"] = std::move(groups);
        } else if (Names(step, gone)) {
          continue;
        }
        kept.push_back(std::move(step));
      }
      if (candidate.contains("faults")) candidate["faults"] = std::move(kept);
      if (!Try(candidate, fmt::format("cluster from {} nodes to {}", out_.scenario.nodes, gone))) return;
    }
  }

  // Whether a step's action names node `id` (crash 3, a cut from 3, ...).
  static bool Names(const json& step, uint64_t id) {
    for (const char* key : {"crash", "restart", "pause", "resume", "isolate"}) {
      if (step.contains(key) && step[key] == json(id)) return true;
    }
    for (const char* key : {"cut", "link"}) {
      if (step.contains(key) &&
          (step[key].value("from", json()) == json(id) || step[key].value("to", json()) == json(id))) {
        return true;
      }
    }
    return step.contains("clock") && step["clock"].value("node", json()) == json(id);
  }

  // No loss, no duplicates, a fixed 1ms latency.
  void CalmWeather() {
    if (!out_.document.contains("network") || out_.document["network"].empty()) return;
    json candidate = out_.document;
    candidate.erase("network");
    Try(candidate, fmt::format("network weather {}", out_.document["network"].dump()));
  }

  const std::string source_;
  uint64_t seed_;
  int reseeds_ = 0;
  const std::string invariant_;
  const uint64_t max_runs_;
  ShrinkResult out_;
  std::vector<std::string> original_unexpected_;
};

}  // namespace

std::string ShrinkResult::CutShort() const {
  if (stopped_by_signal != 0) return fmt::format("stopped by {}", SignalName(stopped_by_signal));
  return budget_exhausted ? "budget spent" : "";
}

absl::StatusOr<ShrinkResult> ShrinkScenario(const json& document, const std::string& source, uint64_t seed,
                                            const std::string& invariant, uint64_t max_runs) {
  return Shrinker(source, seed, invariant, max_runs).Run(document);
}

ShrinkOutputs ShrinkOutputsFor(const std::string& prefix) { return {prefix + ".repro.json", prefix + ".json"}; }

absl::Status WriteShrinkOutputs(const ShrinkOutputs& outputs, const ShrinkResult& shrunk,
                                const std::vector<std::string>& inputs) {
  Scenario ran = shrunk.scenario;
  ran.source = outputs.scenario;
  if (!shrunk.document.contains("name")) ran.name = ScenarioNameFromPath(outputs.scenario);
  // Shrunk again, the same invariant by default, while it is what fails.
  std::vector<std::string> failed_by;
  const std::vector<std::string> unexpected = UnexpectedViolations(ran, shrunk.result);
  if (std::find(unexpected.begin(), unexpected.end(), shrunk.invariant) != unexpected.end()) {
    failed_by.push_back(shrunk.invariant);
  }
  if (auto status = WriteReproFile(outputs.repro, ran, shrunk.result, failed_by, inputs); !status.ok()) {
    return status;
  }
  if (auto status = WriteFileAtomically(outputs.scenario, shrunk.document.dump(2) + "\n", inputs); !status.ok()) {
    return absl::UnavailableError(status.message());
  }
  return absl::OkStatus();
}

}  // namespace electsim
