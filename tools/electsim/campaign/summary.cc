#include "tools/electsim/campaign/summary.h"

#include <algorithm>

#include "fmt/format.h"
#include "tools/electsim/language/json_document.h"

namespace electsim::campaign {
namespace {

using nlohmann::json;

// A failing seed's text fields that are there only when known: the key in a
// summary, and the member.
constexpr std::pair<const char*, std::string FailingSeed::*> kOptionalFields[] = {
    {"trace_hash", &FailingSeed::trace_hash},
    {"repro", &FailingSeed::repro},
    {"timeline", &FailingSeed::timeline},
    {"shrunk_repro", &FailingSeed::shrunk_repro},
    {"shrunk_scenario", &FailingSeed::shrunk_scenario},
    {"shrunk", &FailingSeed::shrunk},
};

json FailingJson(const FailingSeed& f) {
  json entry = {{"seed", f.seed}, {"reasons", f.reasons}, {"findings", f.findings}, {"reproduce", f.reproduce}};
  for (const auto& [key, field] : kOptionalFields) {
    if (!(f.*field).empty()) entry[key] = f.*field;
  }
  return entry;
}

json CampaignJson(const CampaignSummary& c) {
  json failing = json::array();
  for (const auto& [seed, f] : c.failing) failing.push_back(FailingJson(f));
  json errors = json::array();
  for (const SeedError& e : c.errors) errors.push_back({{"seed", e.seed}, {"message", e.message}});
  return {{"label", c.label},
          {"identity", c.identity},
          {"seeds", {{"first", c.range.first()}, {"last", c.range.last()}}},
          {"shards", {{"count", c.shard_count}, {"included", c.shards}}},
          {"seeds_planned", c.SeedsPlanned()},
          {"seeds_run", c.seeds_run},
          {"stopped", c.stopped.empty() ? json(nullptr) : json(c.stopped)},
          {"complete", c.Complete()},
          {"seeds_failed", c.seeds_failed},
          {"seeds_with_findings", c.seeds_with_findings},
          {"failed_by", c.failed_by},
          {"violations", c.violations},
          {"options_drawn", c.options_drawn},
          {"unjudged", c.unjudged},
          {"failing_seeds", failing},
          {"errors", errors}};
}

// Reads one summary file field by field, naming the JSON path of whatever is
// missing or out of place.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  absl::Status Fail(const std::string& pointer, std::string_view expected) const {
    return JsonInputError(path_, pointer, expected);
  }

  absl::StatusOr<const json*> Field(const json& object, const std::string& pointer, const char* key) const {
    if (!object.is_object() || !object.contains(key))
      return Fail(pointer + "/" + key, "a value, as electsim writes it");
    return &object.at(key);
  }
  absl::StatusOr<uint64_t> Unsigned(const json& object, const std::string& pointer, const char* key) const {
    auto field = Field(object, pointer, key);
    if (!field.ok()) return field.status();
    if (!(*field)->is_number_unsigned()) return Fail(pointer + "/" + key, "an integer >= 0");
    return (*field)->get<uint64_t>();
  }
  absl::StatusOr<std::string> String(const json& object, const std::string& pointer, const char* key) const {
    auto field = Field(object, pointer, key);
    if (!field.ok()) return field.status();
    if (!(*field)->is_string()) return Fail(pointer + "/" + key, "a string");
    return (*field)->get<std::string>();
  }
  absl::StatusOr<std::map<std::string, uint64_t>> Counts(const json& object, const std::string& pointer,
                                                         const char* key) const {
    auto field = Field(object, pointer, key);
    if (!field.ok()) return field.status();
    std::map<std::string, uint64_t> counts;
    if (!(*field)->is_object()) return Fail(pointer + "/" + key, "an object of counts");
    for (const auto& [name, n] : (*field)->items()) {
      if (!n.is_number_unsigned()) return Fail(pointer + "/" + key + "/" + JsonPointerToken(name), "an integer >= 0");
      counts[name] = n.get<uint64_t>();
    }
    return counts;
  }
  absl::StatusOr<std::vector<std::string>> Strings(const json& object, const std::string& pointer,
                                                   const char* key) const {
    auto field = Field(object, pointer, key);
    if (!field.ok()) return field.status();
    std::vector<std::string> strings;
    if (!(*field)->is_array()) return Fail(pointer + "/" + key, "an array of strings");
    for (const json& s : **field) {
      if (!s.is_string()) return Fail(pointer + "/" + key, "an array of strings");
      strings.push_back(s.get<std::string>());
    }
    return strings;
  }

  absl::StatusOr<FailingSeed> Failing(const json& entry, const std::string& pointer) const;
  absl::StatusOr<CampaignSummary> Campaign(const json& c, const std::string& pointer) const;
  // The parts of a campaign, each into `s`.
  absl::Status ReadRange(const json& c, const std::string& pointer, CampaignSummary& s) const;
  absl::Status ReadCounts(const json& c, const std::string& pointer, CampaignSummary& s) const;
  // "failing_seeds" or "errors".
  absl::Status ReadList(const json& c, const std::string& pointer, const char* key, CampaignSummary& s) const;
  absl::Status CheckNumbers(const CampaignSummary& c, const std::string& pointer) const;

 private:
  const std::string& path_;
};

absl::StatusOr<FailingSeed> Reader::Failing(const json& entry, const std::string& pointer) const {
  FailingSeed f;
  auto seed = Unsigned(entry, pointer, "seed");
  auto reasons = Strings(entry, pointer, "reasons");
  auto findings = Strings(entry, pointer, "findings");
  auto reproduce = String(entry, pointer, "reproduce");
  for (const absl::Status& s : {seed.status(), reasons.status(), findings.status(), reproduce.status()}) {
    if (!s.ok()) return s;
  }
  f.seed = *seed;
  f.reasons = *reasons;
  f.findings = *findings;
  f.reproduce = *reproduce;
  for (const auto& [key, field] : kOptionalFields) {
    if (!entry.contains(key)) continue;
    auto text = String(entry, pointer, key);
    if (!text.ok()) return text.status();
    f.*field = *text;
  }
  return f;
}

absl::Status Reader::ReadRange(const json& c, const std::string& pointer, CampaignSummary& s) const {
  auto seeds = Field(c, pointer, "seeds");
  auto shards = Field(c, pointer, "shards");
  if (!seeds.ok()) return seeds.status();
  if (!shards.ok()) return shards.status();
  auto first = Unsigned(**seeds, pointer + "/seeds", "first");
  auto last = Unsigned(**seeds, pointer + "/seeds", "last");
  if (!first.ok()) return first.status();
  if (!last.ok()) return last.status();
  if (*last < *first) return Fail(pointer + "/seeds/last", "a seed at or above /seeds/first");
  s.range = SeedRange::Between(*first, *last);
  auto count = Unsigned(**shards, pointer + "/shards", "count");
  if (!count.ok()) return count.status();
  if (*count < 1 || *count > Shard::kMaxCount) {
    return Fail(pointer + "/shards/count", fmt::format("a shard count in [1, {}]", Shard::kMaxCount));
  }
  s.shard_count = *count;
  auto included = Field(**shards, pointer + "/shards", "included");
  if (!included.ok()) return included.status();
  if (!(*included)->is_array() || (*included)->empty()) return Fail(pointer + "/shards/included", "shard numbers");
  s.shards.clear();
  for (const json& k : **included) {
    const bool in_range = k.is_number_unsigned() && k.get<uint64_t>() >= 1 && k.get<uint64_t>() <= s.shard_count;
    if (!in_range || !s.shards.insert(k.get<uint64_t>()).second) {
      return Fail(pointer + "/shards/included",
                  fmt::format("shard numbers in [1, {}] (the shard count), each once", s.shard_count));
    }
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadCounts(const json& c, const std::string& pointer, CampaignSummary& s) const {
  auto run = Unsigned(c, pointer, "seeds_run");
  auto failed = Unsigned(c, pointer, "seeds_failed");
  auto with_findings = Unsigned(c, pointer, "seeds_with_findings");
  auto failed_by = Counts(c, pointer, "failed_by");
  auto violations = Counts(c, pointer, "violations");
  for (const absl::Status& st :
       {run.status(), failed.status(), with_findings.status(), failed_by.status(), violations.status()}) {
    if (!st.ok()) return st;
  }
  s.seeds_run = *run;
  s.seeds_failed = *failed;
  s.seeds_with_findings = *with_findings;
  s.failed_by = *failed_by;
  s.violations = *violations;
  // Absent from summaries written before the option swarm.
  if (c.contains("options_drawn")) {
    auto drawn = Counts(c, pointer, "options_drawn");
    if (!drawn.ok()) return drawn.status();
    s.options_drawn = *drawn;
  }
  // Absent from summaries written before it was counted.
  if (c.contains("unjudged")) {
    auto unjudged = Counts(c, pointer, "unjudged");
    if (!unjudged.ok()) return unjudged.status();
    s.unjudged = *unjudged;
  }
  auto stopped = Field(c, pointer, "stopped");
  if (!stopped.ok()) return stopped.status();
  const auto known = [](const std::string& why) {
    return std::find(std::begin(kStoppedReasons), std::end(kStoppedReasons), why) != std::end(kStoppedReasons);
  };
  if ((*stopped)->is_string() && known((*stopped)->get<std::string>())) {
    s.stopped = (*stopped)->get<std::string>();
  } else if (!(*stopped)->is_null()) {
    return Fail(pointer + "/stopped",
                fmt::format("null, or why the campaign stopped early: \"{}\"", fmt::join(kStoppedReasons, "\", \"")));
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadList(const json& c, const std::string& pointer, const char* key, CampaignSummary& s) const {
  auto list = Field(c, pointer, key);
  if (!list.ok()) return list.status();
  if (!(*list)->is_array()) return Fail(fmt::format("{}/{}", pointer, key), "an array");
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const std::string at = fmt::format("{}/{}/{}", pointer, key, i);
    if (std::string_view(key) == "errors") {
      auto seed = Unsigned((**list)[i], at, "seed");
      auto message = String((**list)[i], at, "message");
      if (!seed.ok()) return seed.status();
      if (!message.ok()) return message.status();
      s.errors.push_back({*seed, *message});
      continue;
    }
    auto f = Failing((**list)[i], at);
    if (!f.ok()) return f.status();
    const uint64_t seed = f->seed;
    if (!s.failing.emplace(seed, std::move(*f)).second) return Fail(at + "/seed", "each failing seed once");
  }
  return absl::OkStatus();
}

absl::StatusOr<CampaignSummary> Reader::Campaign(const json& c, const std::string& pointer) const {
  CampaignSummary s;
  auto label = String(c, pointer, "label");
  auto identity = Field(c, pointer, "identity");
  if (!label.ok()) return label.status();
  if (!identity.ok()) return identity.status();
  s.label = *label;
  if (!(*identity)->is_object()) return Fail(pointer + "/identity", "an object");
  s.identity = **identity;
  for (const absl::Status& st : {ReadRange(c, pointer, s), ReadCounts(c, pointer, s),
                                 ReadList(c, pointer, "failing_seeds", s), ReadList(c, pointer, "errors", s)}) {
    if (!st.ok()) return st;
  }
  if (auto status = CheckNumbers(s, pointer); !status.ok()) return status;
  return s;
}

// The numbers must agree with the shards they claim to come from.
absl::Status Reader::CheckNumbers(const CampaignSummary& c, const std::string& pointer) const {
  if (c.seeds_run > c.SeedsPlanned()) {
    return Fail(pointer + "/seeds_run",
                fmt::format("at most {} seeds: the seeds of shard(s) {} of {} in {}", c.SeedsPlanned(),
                            fmt::join(c.shards, ","), c.shard_count, c.range.ToString()));
  }
  if (c.seeds_failed != c.failing.size() || c.seeds_failed > c.seeds_run) {
    return Fail(pointer + "/seeds_failed", "the number of failing seeds listed, at most seeds_run");
  }
  if (c.seeds_with_findings > c.seeds_run) return Fail(pointer + "/seeds_with_findings", "at most seeds_run");
  for (const auto* counts : {&c.failed_by, &c.violations, &c.options_drawn, &c.unjudged}) {
    for (const auto& [name, n] : *counts) {
      if (n > c.seeds_run) return Fail(pointer, fmt::format("at most seeds_run seeds for {}", name));
    }
  }
  for (const auto& [failing_seed, f] : c.failing) {
    const uint64_t seed = failing_seed;  // clang 14 cannot capture a structured binding
    const bool held = std::any_of(c.shards.begin(), c.shards.end(),
                                  [&](uint64_t k) { return Shard::Make(k, c.shard_count)->Holds(c.range, seed); });
    if (!held) {
      return Fail(pointer + "/failing_seeds",
                  fmt::format("seeds of shard(s) {} of {} in {}; seed {} is not one", fmt::join(c.shards, ","),
                              c.shard_count, c.range.ToString(), seed));
    }
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t CampaignSummary::SeedsPlanned() const {
  uint64_t planned = 0;
  for (uint64_t k : shards) planned += Shard::Make(k, shard_count)->SizeIn(range);
  return planned;
}

bool SummaryFile::Complete() const {
  return std::all_of(campaigns.begin(), campaigns.end(), [](const CampaignSummary& c) { return c.Complete(); });
}

bool SummaryFile::Failed() const {
  return std::any_of(campaigns.begin(), campaigns.end(),
                     [](const CampaignSummary& c) { return c.seeds_failed > 0 || !c.errors.empty(); });
}

json ToJson(const SummaryFile& file) {
  json campaigns = json::array();
  for (const CampaignSummary& c : file.campaigns) campaigns.push_back(CampaignJson(c));
  return {{"electsim_summary", kSummaryVersion},
          {"command", file.command},
          {"complete", file.Complete()},
          {"campaigns", campaigns}};
}

absl::StatusOr<SummaryFile> SummaryFromJson(const json& document, const std::string& path) {
  const Reader reader(path);
  if (!document.is_object() || !document.contains("electsim_summary") ||
      document["electsim_summary"] != kSummaryVersion) {
    return reader.Fail("/electsim_summary", fmt::format("{} (a summary written by this version of electsim: sweep "
                                                        "--summary, fuzz --summary)",
                                                        kSummaryVersion));
  }
  SummaryFile file;
  auto command = reader.String(document, "", "command");
  if (!command.ok()) return command.status();
  file.command = *command;
  auto campaigns = reader.Field(document, "", "campaigns");
  if (!campaigns.ok()) return campaigns.status();
  if (!(*campaigns)->is_array() || (*campaigns)->empty()) return reader.Fail("/campaigns", "campaign summaries");
  for (size_t i = 0; i < (*campaigns)->size(); ++i) {
    auto c = reader.Campaign((**campaigns)[i], fmt::format("/campaigns/{}", i));
    if (!c.ok()) return c.status();
    file.campaigns.push_back(std::move(*c));
  }
  return file;
}

std::string CountsText(const std::map<std::string, uint64_t>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", name, n);
  return text.empty() ? "none" : text;
}

}  // namespace electsim::campaign
