// What the parts of an `explain` account share: the run, the trace kept of
// it, which fault did what, and the questions every part asks of them (who
// claimed leadership when, which input a node was handling, how to name a
// node or a message).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checkers/checker.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/export/explain_faults.h"
#include "tools/electsim/export/explain_trace.h"
#include "tools/electsim/language/scenario.h"

namespace electsim::explain {

// As the checkers print times: seconds with every microsecond.
std::string Seconds(sim::TimeNs t);
// "node 2", "nodes 2 and 3", "nodes 2, 3 and 4".
std::string NodeList(const Scenario& scenario, std::vector<uint32_t> nodes);
// "type{field=value …}", roles and store event kinds named.
std::string DescribePayload(const sim::Payload& p);
// "#42", "#42, #43 and #44", "#42, #43, … and #51".
std::string TraceRefs(std::vector<uint64_t> indices);
// An option's value as a scenario writes it, a choice without its quotes.
std::string Unquoted(const std::string& text);
// The deliberate bugs a scenario turns on: "bug=vote_twice", or any option
// whose help calls a value a deliberate bug, set away from its default.
std::vector<std::string> DeliberateBugs(const Scenario& scenario);

class Story {
 public:
  Story(const Scenario& scenario, const RunResult& result, const Recorder& recorder, const FaultLedger& ledger);

  const Scenario& scenario() const { return scenario_; }
  const RunResult& result() const { return result_; }
  const Recorder& recorder() const { return recorder_; }
  const FaultLedger& ledger() const { return ledger_; }
  const std::vector<Event>& events() const { return recorder_.events(); }
  // "term" or "epoch", as the algorithm counts.
  const std::string& epoch_word() const { return epoch_word_; }

  std::string Node(uint32_t node) const;
  // "election message", "vote", "heartbeat", "leader message", "write", ...
  std::string MessageClass(const sim::Payload& message) const;

  // The node's last leader claim at or before trace index `up_to` (of
  // `key`, for an owner of many keys judged per key).
  const Event* LeaderClaim(uint32_t node, uint64_t up_to, std::optional<int64_t> key = std::nullopt) const;
  // The key the first violation was judged for, when each key is judged on
  // its own: the key the account follows.
  const std::optional<int64_t>& focus_key() const { return focus_key_; }
  // Whether `e` is about another key than the focus key: a record naming
  // one (a line's request names it as its directory), or the store's answer
  // to a request for one.
  bool OfOtherKey(const Event& e) const;
  static std::optional<int64_t> NamedKey(const sim::Payload& p);
  // The last event at `node` before `e` (at or before `e`'s index) that `match` accepts.
  const Event* LastAt(uint32_t node, const Event& e, const std::function<bool(const Event&)>& match) const;
  // The delivery or timer firing `e`'s node was handling when `e` happened.
  const Event* HandlerInput(const Event& e) const;
  // Where the event with trace index `index` (or the first after it) sits in events().
  size_t PositionOf(uint64_t index) const;

 private:
  const Scenario& scenario_;
  const RunResult& result_;
  const Recorder& recorder_;
  const FaultLedger& ledger_;
  std::string epoch_word_;
  std::optional<int64_t> focus_key_;
  sim::NodeId store_;
  std::set<std::pair<uint32_t, int64_t>> other_key_requests_;  // (client, req) of store requests for other keys
};

}  // namespace electsim::explain
