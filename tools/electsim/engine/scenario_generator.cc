#include "tools/electsim/engine/scenario_generator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "electsim/algorithms/guarantees.h"
#include "electsim/sim/rng.h"
#include "fmt/format.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {
namespace {

using algorithms::FaultKind;
using nlohmann::json;

std::string Millis(int64_t ms) { return fmt::format("{}ms", ms); }

class Generator {
 public:
  Generator(const algorithms::Algorithm& algorithm, const algorithms::OptionValues& values, uint64_t seed,
            const GeneratorSettings& settings)
      : algorithm_(algorithm),
        values_(values),
        settings_(settings),
        rng_(sim::Rng::ForStream(seed, "fuzz.generator")),
        chain_rng_(sim::Rng::ForStream(seed, "fuzz.generator.chain")),
        moment_rng_(sim::Rng::ForStream(seed, "fuzz.generator.moments")) {
    nodes_ = static_cast<uint32_t>(rng_.Between(settings.nodes_min, settings.nodes_max));
    duration_ms_ = rng_.Between(settings.duration_min.ns() / 1'000'000, settings.duration_max.ns() / 1'000'000);
    // Faults start in the first 40% of the run and last at most 20% of it;
    // then the weather calms, and the last 35% judges liveness: after the
    // faults, one leader known to all, to the end (a faulty phase, then a
    // healed one, as TigerBeetle's VOPR runs).
    fault_window_end_ms_ = std::max<int64_t>(600, duration_ms_ * 4 / 10);
    longest_fault_ms_ = std::max<int64_t>(100, duration_ms_ * 2 / 10);
    base_latency_max_ms_ = rng_.Between(1, 10);
    network_ = {{"latency", {{"uniform", {"1ms", Millis(base_latency_max_ms_)}}}}};
  }

  uint32_t nodes() const { return nodes_; }
  int64_t duration_ms() const { return duration_ms_; }
  const json& network() const { return network_; }
  const std::vector<std::string>& kinds() const { return kinds_; }

  json Faults() {
    const algorithms::FaultKinds allowed = FocusedKinds();
    for (FaultKind kind : algorithms::AllFaultKinds()) {
      if (!rng_.Chance(sim::Probability::FromParts(sim::Probability::kOne / 2))) continue;  // swarm: half the kinds
      if (!allowed.Has(kind)) continue;
      kinds_.emplace_back(algorithms::FaultKindName(kind));
      const int intensity = static_cast<int>(rng_.Between(1, 4));
      for (int i = 0; i < intensity; ++i) Add(kind);
    }
    AddLeaseMix();
    // File order is time order; steps of one instant keep the order drawn.
    if (network_.contains("drop") || network_.contains("duplicate")) {
      Push(fault_window_end_ms_ + longest_fault_ms_, {{"network", {{"drop", 0.0}, {"duplicate", 0.0}}}});
    }
    std::stable_sort(steps_.begin(), steps_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    json faults = json::array();
    for (auto& [at_ms, step] : steps_) faults.push_back(std::move(step));
    return faults;
  }

 private:
  // A quarter of the seeds focus on one promise the reference keeps under
  // some fault kinds only, and draw their faults from those kinds alone.
  // Otherwise a promise kept under few kinds (Bully's one leader per epoch,
  // Ring's winner) is judged only on the few seeds whose swarm happens to
  // leave every other kind out. The reference's table, "bug" at none: a
  // mutant runs the scenarios the reference runs.
  algorithms::FaultKinds FocusedKinds() {
    if (!OneIn(4)) return settings_.fault_kinds;
    algorithms::OptionValues reference = values_;
    if (!algorithm_.mutants().empty()) reference.Set(algorithms::kBugOption, 0);
    std::vector<algorithms::FaultKinds> partial;
    for (const algorithms::Guarantee& g : algorithm_.guarantees(reference)) {
      if (g.kept_under != algorithms::FaultKinds::All()) partial.push_back(g.kept_under);
    }
    if (partial.empty()) return settings_.fault_kinds;
    const algorithms::FaultKinds focus = partial[rng_.Below(partial.size())];
    return settings_.fault_kinds.Without(algorithms::FaultKinds::All().Without(focus));
  }

  int64_t At() { return rng_.Between(300, fault_window_end_ms_); }
  int64_t Lasting(int64_t min_ms, int64_t max_ms) {
    return rng_.Between(min_ms, std::max(min_ms, std::min(max_ms, longest_fault_ms_)));
  }
  bool OneIn(uint64_t n) { return rng_.Below(n) == 0; }
  json Node() { return static_cast<uint64_t>(rng_.Below(nodes_)); }
  // Every draw sits in a statement of its own or in a braced list (both
  // sequenced left to right), never two in one call's arguments, whose order
  // C++ leaves to the compiler.
  // The current leader half of the time: the node most faults matter on.
  json LeaderOrNode() { return OneIn(2) ? json("leader") : Node(); }

  void Push(int64_t at_ms, json step) {
    step["at"] = Millis(at_ms);
    steps_.emplace_back(at_ms, std::move(step));
  }
  void PushFor(int64_t at_ms, const std::string& action, json body, int64_t for_ms) {
    Push(at_ms, {{action, std::move(body)}, {"for", Millis(for_ms)}});
  }
  // A change to every link for a while, then back to the weather.
  void Burst(const std::string& key, json value, const json& calm) {
    const int64_t at = At();
    Push(at, {{"network", {{key, std::move(value)}}}});
    Push(at + Lasting(200, 3000), {{"network", {{key, calm}}}});
  }
  // A light, steady `key` ("drop", "duplicate") of at most `weather_max_percent`
  // all through the faulty phase, or a burst of 20-60%.
  void WeatherOrBurst(const std::string& key, int64_t weather_max_percent) {
    if (OneIn(2) && !network_.contains(key)) {
      network_[key] = Ratio(1, weather_max_percent);
    } else {
      Burst(key, Ratio(20, 60), network_.value(key, 0.0));
    }
  }
  double Ratio(int64_t min_percent, int64_t max_percent) {
    return static_cast<double>(rng_.Between(min_percent, max_percent)) / 100.0;
  }

  void Add(FaultKind kind) {
    switch (kind) {
      case FaultKind::kLoss: WeatherOrBurst("drop", 10); break;
      case FaultKind::kDuplication: WeatherOrBurst("duplicate", 20); break;
      case FaultKind::kLatency: {
        const int64_t max_ms = Lasting(50, 1500);
        Burst("latency", {{"uniform", {"1ms", Millis(max_ms)}}}, network_["latency"]);
        break;
      }
      case FaultKind::kPartition: AddPartition(); break;
      case FaultKind::kOneWayCut: {
        const int64_t at = At(), for_ms = Lasting(100, 4000);
        json from = Node(), to = Node();
        if (OneIn(2)) (OneIn(2) ? from : to) = "leader";
        if (from == to) to = (to.get<uint64_t>() + 1) % nodes_;
        json step = {{"cut", {{"from", from}, {"to", to}}}, {"for", Millis(for_ms)}};
        if (from != "leader") AtCampaign(at, step);
        Push(at, std::move(step));
        break;
      }
      case FaultKind::kCrash:
      case FaultKind::kPowerLoss: {
        if (OneIn(4)) {
          AddLeaderChain(kind);
          break;
        }
        const int64_t at = At();
        json step = {{"crash", LeaderOrNode()}, {"for", Millis(Lasting(50, 5000))}};
        if (kind == FaultKind::kPowerLoss) step["lose_unsynced"] = true;
        // Right after a vote or a new term (what a node must have stored by
        // then), or a write begun. A process restarted at once by its
        // supervisor, half the time: back while its peers' requests of the
        // same term are still arriving.
        if (OneIn(4)) {
          AtMoment(at, step, CrashMoment());
          if (OneIn(2)) step["for"] = Millis(rng_.Between(1, 2 * base_latency_max_ms_));
        }
        // First in the file: "leader" is still the leader the crash takes.
        CutOffAtRestart(at, step["crash"]);
        Push(at, std::move(step));
        break;
      }
      case FaultKind::kPause: {
        // Up to 4s: past election timeouts and lease TTLs, as a long GC is.
        const int64_t at = At();
        json step = {{"pause", LeaderOrNode()}, {"for", Millis(Lasting(20, 4000))}};
        // Mid-write, or just after a lease renewal was sent.
        if (OneIn(4)) AtMoment(at, step, algorithm_.uses_store() && OneIn(2) ? "renewal" : "write");
        Push(at, std::move(step));
        break;
      }
      case FaultKind::kClockDrift: {
        const int64_t at = At();
        json node = LeaderOrNode();
        Push(at, {{"clock", {{"node", node}, {"drift_ppm", rng_.Between(SlowestDriftPpm(), 300000)}}}});
        break;
      }
      case FaultKind::kClockStep: {
        const int64_t at = At(), ms = Lasting(50, 10000);
        json node = algorithm_.uses_store() && OneIn(4) ? json("store") : LeaderOrNode();
        const char* sign = OneIn(2) ? "-" : "+";
        json step = {{"clock", {{"node", node}, {"shift", fmt::format("{}{}", sign, Millis(ms))}}}};
        // Just after a lease renewal was sent: the holder's deadline counts from there.
        if (node != "store" && algorithm_.uses_store() && OneIn(4)) AtMoment(at, step, "renewal");
        Push(at, std::move(step));
        break;
      }
    }
  }

  // Faults where they hurt (FoundationDB's BUGGIFY): `step` waits for the
  // node's next `moment` after `at_ms`, until the end of the faulty phase,
  // so that it still ends before liveness is judged.
  void AtMoment(int64_t at_ms, json& step, const char* moment) const {
    step["during"] = moment;
    step["within"] = Millis(std::max<int64_t>(1, fault_window_end_ms_ - at_ms));
  }
  // On seeds that drew partitions, a quarter of the crashed nodes come back
  // with their network down for a moment (a rebooted machine whose link is
  // not up yet): `node` is isolated as it first campaigns, which for a
  // crashed node is after its restart. It decides alone, then rejoins.
  void CutOffAtRestart(int64_t at_ms, const json& node) {
    if (!Drawn(FaultKind::kPartition) || moment_rng_.Below(4) != 0) return;
    json step = {
        {"isolate", node},
        {"for", Millis(moment_rng_.Between(100, std::max<int64_t>(100, std::min<int64_t>(1000, longest_fault_ms_))))}};
    AtMoment(at_ms, step, "campaign");
    Push(at_ms, std::move(step));
  }

  // A quarter of the cuts and isolations of a node wait for it to begin an
  // election: what it sends then (its challenges, its answers, its vote
  // requests) is lost, and the peers decide without it. (From a stream of
  // its own: generator 4 added it without moving the seed's other draws.)
  void AtCampaign(int64_t at_ms, json& step) {
    if (moment_rng_.Below(4) == 0) AtMoment(at_ms, step, "campaign");
  }
  bool Votes() const { return !algorithm_.message_roles().vote_grants.empty(); }
  const char* CrashMoment() {
    switch (rng_.Below(3)) {
      case 0: return Votes() ? "vote" : "term";
      case 1: return "term";
      default: return "write";
    }
  }

  // Leader after leader crashed mid-write: each appended an entry that
  // reached few or none of its peers, and the next leader, elected in the
  // meantime, finds the logs disagreeing (the paper's Figure 8 is such a
  // chain). The first link crashes the leader in office as it begins a
  // write; each further link waits for the next leader and crashes it as it
  // begins its first write, right after sending its first entry. On seeds
  // that drew partitions or one-way cuts, each further link also cuts that
  // leader off in the same instant, so that the entry reaches nobody (a
  // crash alone leaves it on the wire). With a log, the last link waits
  // for that leader's first commit instead: a leader that reports a commit
  // and dies before its followers hear of it. (The link times drawn below
  // are those of generator 3, kept so that the seed's other steps stay as
  // they were; the draws generator 4 added come from a stream of their own.)
  void AddLeaderChain(FaultKind kind) {
    const int64_t at = At();
    int64_t end = at;
    int64_t links = rng_.Between(2, 4);
    std::vector<int64_t> down_ms;
    for (int64_t i = 0; i < links && end < fault_window_end_ms_; ++i) {
      down_ms.push_back(Lasting(50, 600));
      end += rng_.Between(100, 700);
    }
    // Figure 8 takes two lost entries of two terms, and a third leader that
    // commits: with a log, one link more.
    if (algorithm_.replicates_log())
      down_ms.push_back(chain_rng_.Between(50, std::min<int64_t>(600, longest_fault_ms_)));
    links = static_cast<int64_t>(down_ms.size());
    for (int64_t i = 0; i < links; ++i) {
      const json actor = i == 0 ? json("leader") : json{{"next_leader", i}};
      json step = {{"crash", actor}, {"for", Millis(down_ms[static_cast<size_t>(i)])}};
      if (kind == FaultKind::kPowerLoss) step["lose_unsynced"] = true;
      const char* moment = i > 0 && i + 1 == links && algorithm_.replicates_log() ? "commit" : "write";
      AtMoment(at, step, moment);
      Push(at, std::move(step));
      if (i > 0) CutOff(at, actor, moment);
    }
  }

  // `actor`, at its next `moment` after `at_ms`, cut off from every peer
  // for a moment, so that what it sent then is lost: an isolation, or one-
  // way cuts to every other node, as the seed drew partitions or cuts.
  void CutOff(int64_t at_ms, const json& actor, const char* moment) {
    std::vector<FaultKind> ways;
    for (FaultKind way : {FaultKind::kPartition, FaultKind::kOneWayCut}) {
      if (Drawn(way)) ways.push_back(way);
    }
    if (ways.empty()) return;
    // Past the calm latency, so that the messages in flight are lost.
    const int64_t for_ms = chain_rng_.Between(base_latency_max_ms_ + 1, 100);
    if (ways[chain_rng_.Below(ways.size())] == FaultKind::kPartition) {
      json step = {{"isolate", actor}, {"for", Millis(for_ms)}};
      AtMoment(at_ms, step, moment);
      Push(at_ms, std::move(step));
      return;
    }
    // One of them is the leader itself, whose cut is skipped.
    for (uint32_t to = 0; to < nodes_; ++to) {
      json step = {{"cut", {{"from", actor}, {"to", to}}}, {"for", Millis(for_ms)}};
      AtMoment(at_ms, step, moment);
      Push(at_ms, std::move(step));
    }
  }

  bool Drawn(FaultKind kind) const {
    return std::find(kinds_.begin(), kinds_.end(), algorithms::FaultKindName(kind)) != kinds_.end();
  }

  // What a lease deadline fears most: the holder's clock stepped while the
  // store's answers cannot reach it (or its renewals the store), at once.
  // Drawn for an algorithm with a store, on half the seeds whose swarm has
  // both clock steps and one-way cuts.
  void AddLeaseMix() {
    if (!algorithm_.uses_store() || !Drawn(FaultKind::kClockStep) || !Drawn(FaultKind::kOneWayCut) || OneIn(2)) {
      return;
    }
    const int64_t at = At(), for_ms = Lasting(100, 4000), step_ms = Lasting(50, 10000);
    const bool replies_lost = OneIn(2);
    const char* sign = OneIn(2) ? "-" : "+";
    Push(at, {{"clock", {{"node", "leader"}, {"shift", fmt::format("{}{}", sign, Millis(step_ms))}}}});
    PushFor(at, "cut",
            replies_lost ? json{{"from", "store"}, {"to", "leader"}} : json{{"from", "leader"}, {"to", "store"}},
            for_ms);
  }

  // The leader cut off from its peers, or a random minority from the
  // majority, or three groups.
  void AddPartition() {
    const int64_t at = At(), for_ms = Lasting(100, 5000);
    switch (rng_.Below(4)) {
      case 0: PushFor(at, "partition", json::array({json::array({"leader"})}), for_ms); return;
      case 1: {
        json step = {{"isolate", LeaderOrNode()}, {"for", Millis(for_ms)}};
        if (step["isolate"] != "leader") AtCampaign(at, step);
        Push(at, std::move(step));
        return;
      }
      default: break;
    }
    std::vector<uint64_t> order(nodes_);
    for (uint32_t i = 0; i < nodes_; ++i) order[i] = i;
    for (uint32_t i = nodes_ - 1; i > 0; --i) std::swap(order[i], order[rng_.Below(i + 1)]);  // Fisher-Yates
    const uint64_t minority = 1 + rng_.Below(std::max<uint32_t>(1, nodes_ / 2));
    json groups = json::array({json(std::vector<uint64_t>(order.begin(), order.begin() + minority))});
    const uint64_t rest = nodes_ - minority;
    if (rest >= 2 && OneIn(3)) {
      const uint64_t second = 1 + rng_.Below(rest - 1);
      groups.push_back(std::vector<uint64_t>(order.begin() + minority, order.begin() + minority + second));
    }
    if (algorithm_.uses_store() && OneIn(4)) groups[0].push_back("store");
    PushFor(at, "partition", std::move(groups), for_ms);
  }

  // A lease holder acts for safety_margin × TTL on its own clock, so its
  // clock may run slow by 1 - safety_margin against a true store clock
  // (README, "Leases and clock drift"); nodes of other algorithms may run
  // 30% slow.
  int64_t SlowestDriftPpm() const {
    for (const algorithms::OptionSpec& option : algorithm_.options()) {
      if (option.name == "safety_margin") {
        return std::max(-kMaxDriftPpm, -(1'000'000 - values_.RatioPpm("safety_margin")));
      }
    }
    return -300000;
  }

  const algorithms::Algorithm& algorithm_;
  const algorithms::OptionValues& values_;
  const GeneratorSettings& settings_;
  sim::Rng rng_;
  sim::Rng chain_rng_;   // generator 4's leader-chain draws
  sim::Rng moment_rng_;  // generator 4's cuts at a campaign and at a restart
  uint32_t nodes_ = 0;
  int64_t duration_ms_ = 0;
  int64_t fault_window_end_ms_ = 0;
  int64_t longest_fault_ms_ = 0;
  int64_t base_latency_max_ms_ = 0;
  json network_;
  std::vector<std::string> kinds_;
  std::vector<std::pair<int64_t, json>> steps_;
};

}  // namespace

std::string FaultKindList(algorithms::FaultKinds kinds) {
  std::string list;
  for (FaultKind kind : algorithms::AllFaultKinds()) {
    if (kinds.Has(kind)) list += fmt::format("{}{}", list.empty() ? "" : ",", algorithms::FaultKindName(kind));
  }
  return list;
}

std::optional<algorithms::FaultKinds> ParseFaultKindList(std::string_view text) {
  algorithms::FaultKinds kinds;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    const auto& all = algorithms::AllFaultKinds();
    const auto kind =
        std::find_if(all.begin(), all.end(), [&](FaultKind k) { return algorithms::FaultKindName(k) == name; });
    if (kind == all.end()) return std::nullopt;
    kinds = kinds.With({*kind});
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // a trailing comma
  }
  if (kinds == algorithms::FaultKinds()) return std::nullopt;
  return kinds;
}

json GenerateScenario(const algorithms::Algorithm& algorithm, const json& options,
                      const algorithms::OptionValues& values, uint64_t seed, const GeneratorSettings& settings) {
  Generator generator(algorithm, values, seed, settings);
  json faults = generator.Faults();
  const std::string kinds = fmt::format("{}", fmt::join(generator.kinds(), ", "));
  return {{"name", fmt::format("fuzz-{}", algorithm.name())},
          {"description", fmt::format("Generated by electsim fuzz from seed {}; fault kinds drawn: {}.", seed,
                                      kinds.empty() ? "none" : kinds)},
          {"nodes", generator.nodes()},
          {"seed", seed},
          {"duration", Millis(generator.duration_ms())},
          {"algorithm", {{"name", algorithm.name()}, {"options", options}}},
          {"network", generator.network()},
          {"resource", {{"fencing", settings.fencing}}},
          {"faults", std::move(faults)},
          {"checkers", SafetyCheckers()},
          // From when every fault is over (a pause that waits for a write
          // starts late: it has room) to 90% of the run.
          {"liveness",
           {{"after", Millis(generator.duration_ms() * 65 / 100)}, {"within", Millis(generator.duration_ms() / 4)}}},
          {"expect", {{"violations", json::array()}}}};
}

}  // namespace electsim
