// What a run checks and what it must show: "checkers" (or the default set),
// "liveness" (the liveness checker and its deadline) and "expect". The schema
// has checked the names; here an expected violation must come from a checker
// that runs, and the liveness deadline (and any stability window after it)
// must fall inside the run.
#include <algorithm>
#include <set>

#include "checkers/checker.h"
#include "fmt/format.h"
#include "sim/format.h"
#include "tools/electsim/language/scenario_reader.h"

namespace electsim::scenario_reader {
namespace {

using nlohmann::json;

void ReadLiveness(const Reader& reader, const json& liveness, Scenario& s) {
  s.liveness = true;
  s.liveness_within = reader.PositiveDuration(liveness.at("within"), "/liveness/within");
  if (const json* after = Reader::Find(liveness, "after")) {
    s.liveness_after = reader.Duration(*after, "/liveness/after");
  } else if (std::any_of(s.faults.begin(), s.faults.end(),
                         [](const FaultStep& f) { return f.during != FaultStep::Moment::kNone; })) {
    // Such a step starts at a moment of the node's, so when it ends is known only as the run goes.
    reader.Fail("/liveness/after",
                "a duration (this key is required when a step waits for a moment with \"during\": its end is not "
                "known before the run)");
  }
  if (s.stop_when_leader_known && Reader::Find(liveness, "stable_for")) {
    reader.Fail("/liveness/stable_for", "no \"stable_for\" with \"stop\" (the run ends as soon as a leader is known)",
                Reader::Find(liveness, "stable_for"));
  }
  // A step with "after" happens when the run gets there: its deadline is judged then.
  const std::optional<sim::TimeNs> after = s.LivenessAfter();
  const sim::TimeNs deadline = after.value_or(sim::TimeNs(0)) + s.liveness_within;
  if (after && deadline > s.duration) {
    reader.Fail(
        "/liveness",
        fmt::format("a deadline within the run: liveness is judged from {}{} until {} later, {}, past the run's "
                    "end at {}",
                    sim::FormatDuration(*after), s.liveness_after ? "" : " (when the last fault step ends)",
                    sim::FormatDuration(s.liveness_within), sim::FormatDuration(deadline),
                    sim::FormatDuration(s.duration)));
  }
  if (const json* stable_for = Reader::Find(liveness, "stable_for")) {
    s.liveness_stable_for = reader.PositiveDuration(*stable_for, "/liveness/stable_for");
    if (after && deadline + *s.liveness_stable_for > s.duration) {
      reader.Fail("/liveness/stable_for",
                  fmt::format("a window that fits in the run: a leader found at the deadline {} must hold {} more, "
                              "until {}, past the run's end at {}",
                              sim::FormatDuration(deadline), sim::FormatDuration(*s.liveness_stable_for),
                              sim::FormatDuration(deadline + *s.liveness_stable_for), sim::FormatDuration(s.duration)),
                  stable_for);
    }
  }
}

Expectation ReadExpectation(const Reader& reader, const json& expect, const std::set<std::string>& enabled) {
  Expectation expectation;
  if (const json* list = Reader::Find(expect, "violations")) {
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string path = Reader::Child("/expect/violations", i);
      const std::string& name = reader.String((*list)[i], path);
      if (!enabled.count(name))
        reader.Fail(path, "the name of a checker this scenario runs (see \"checkers\")", &(*list)[i]);
      expectation.violations.push_back(name);
    }
    std::sort(expectation.violations.begin(), expectation.violations.end());
    expectation.violations.erase(std::unique(expectation.violations.begin(), expectation.violations.end()),
                                 expectation.violations.end());
  }
  if (const json* b = Reader::Find(expect, "multi_leader"))
    expectation.multi_leader = reader.Bool(*b, "/expect/multi_leader");
  if (const json* b = Reader::Find(expect, "elected")) expectation.elected = reader.Bool(*b, "/expect/elected");
  if (const json* n = Reader::Find(expect, "writes_rejected_min")) {
    expectation.writes_rejected_min = reader.Integer(*n, "/expect/writes_rejected_min", 0, int64_t{1} << 40);
  }
  if (const json* n = Reader::Find(expect, "writes_accepted_min")) {
    expectation.writes_accepted_min = reader.Integer(*n, "/expect/writes_accepted_min", 0, int64_t{1} << 40);
  }
  return expectation;
}

}  // namespace

void ReadCheckersAndExpectations(const Reader& reader, const json& document, Scenario& s) {
  std::set<std::string> enabled;
  if (const json* list = Reader::Find(document, "checkers")) {
    for (size_t i = 0; i < list->size(); ++i) enabled.insert(reader.String((*list)[i], Reader::Child("/checkers", i)));
  } else {
    for (const auto& info : checkers::AllCheckers()) {
      if (info.on_by_default) enabled.insert(info.name);
    }
  }
  if (const json* liveness = Reader::Find(document, "liveness")) {
    ReadLiveness(reader, *liveness, s);
    enabled.insert("liveness");
  }
  s.checkers.assign(enabled.begin(), enabled.end());
  if (const json* expect = Reader::Find(document, "expect")) s.expect = ReadExpectation(reader, *expect, enabled);
}

}  // namespace electsim::scenario_reader
