// MergeSummaries and ToJUnit (campaign/summary.h).
#include <algorithm>

#include "fmt/format.h"
#include "tools/electsim/campaign/summary.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/language/json_document.h"

namespace electsim::campaign {
namespace {

absl::Status NotAShardOf(const std::string& path, const std::string& pointer, const std::string& first_path,
                         std::string_view what) {
  return JsonInputError(path, pointer, fmt::format("a shard of the same campaign as {} ({})", first_path, what));
}

// Adds `shard`'s counts and seeds to `merged`, both checked already.
void Add(CampaignSummary& merged, const CampaignSummary& shard) {
  merged.shards.insert(shard.shards.begin(), shard.shards.end());
  merged.seeds_run += shard.seeds_run;
  merged.seeds_failed += shard.seeds_failed;
  merged.seeds_with_findings += shard.seeds_with_findings;
  for (const auto& [name, n] : shard.failed_by) merged.failed_by[name] += n;
  for (const auto& [name, n] : shard.violations) merged.violations[name] += n;
  for (const auto& [name, n] : shard.options_drawn) merged.options_drawn[name] += n;
  for (const auto& [name, n] : shard.unjudged) merged.unjudged[name] += n;
  merged.failing.insert(shard.failing.begin(), shard.failing.end());
  merged.errors.insert(merged.errors.end(), shard.errors.begin(), shard.errors.end());
  if (merged.stopped.empty()) merged.stopped = shard.stopped;
}

absl::Status CheckSameCampaign(const CampaignSummary& merged, const CampaignSummary& shard, const std::string& path,
                               const std::string& pointer, const std::string& first_path) {
  if (shard.identity != merged.identity) {
    // The first field that differs, with both values, so that the user
    // sees which flag or file changed between the shards.
    const nlohmann::json patch = nlohmann::json::diff(merged.identity, shard.identity);
    const std::string at = patch.empty() ? "" : patch[0].value("path", "");
    const nlohmann::json::json_pointer field(at);
    auto value = [&](const nlohmann::json& identity) {
      if (!identity.contains(field)) return std::string("none");
      std::string text = identity[field].dump();
      return text.size() > 200 ? text.substr(0, 197) + "..." : text;
    };
    return NotAShardOf(path, pointer + "/identity" + at, first_path,
                       fmt::format("the same command, scenario (its contents too), options and --set; it has {}, "
                                   "this file {}",
                                   value(merged.identity), value(shard.identity)));
  }
  if (shard.label != merged.label) {
    return NotAShardOf(path, pointer + "/label", first_path, fmt::format("label {}", merged.label));
  }
  if (!(shard.range == merged.range)) {
    return NotAShardOf(path, pointer + "/seeds", first_path, fmt::format("seeds {}", merged.range.ToString()));
  }
  if (shard.shard_count != merged.shard_count) {
    return NotAShardOf(path, pointer + "/shards/count", first_path, fmt::format("{} shards", merged.shard_count));
  }
  for (uint64_t k : shard.shards) {
    if (merged.shards.contains(k)) {
      return JsonInputError(
          path, pointer + "/shards/included",
          fmt::format("shards not merged already; shard {} of {} is in an earlier file", k, shard.shard_count));
    }
  }
  return absl::OkStatus();
}

// "shards 2, 3 of 3 missing; shard 1 stopped early (signal)".
std::string WhatIsMissing(const CampaignSummary& c) {
  std::vector<uint64_t> missing;
  for (uint64_t k = 1; k <= c.shard_count && missing.size() < 20; ++k) {
    if (!c.shards.contains(k)) missing.push_back(k);
  }
  std::string text;
  if (!missing.empty()) {
    text = fmt::format("shard{} {}{} of {} missing", missing.size() > 1 ? "s" : "", fmt::join(missing, ", "),
                       c.shards.size() + missing.size() < c.shard_count ? ", ..." : "", c.shard_count);
  }
  if (!c.ShardsDone()) {
    text += fmt::format("{}{} of {} seeds of the shards given ran{}", text.empty() ? "" : "; ", c.seeds_run,
                        c.SeedsPlanned(), c.stopped.empty() ? "" : fmt::format(" (stopped: {})", c.stopped));
  }
  return text;
}

}  // namespace

absl::StatusOr<SummaryFile> MergeSummaries(const std::vector<SummaryFile>& files, const std::vector<std::string>& paths,
                                           bool allow_incomplete) {
  SummaryFile merged = files.front();
  for (size_t i = 1; i < files.size(); ++i) {
    const SummaryFile& file = files[i];
    if (file.command != merged.command) {
      return NotAShardOf(paths[i], "/command", paths[0], fmt::format("command {}", merged.command));
    }
    if (file.campaigns.size() != merged.campaigns.size()) {
      return NotAShardOf(paths[i], "/campaigns", paths[0], fmt::format("{} campaigns", merged.campaigns.size()));
    }
    for (size_t j = 0; j < file.campaigns.size(); ++j) {
      const std::string pointer = fmt::format("/campaigns/{}", j);
      if (auto s = CheckSameCampaign(merged.campaigns[j], file.campaigns[j], paths[i], pointer, paths[0]); !s.ok()) {
        return s;
      }
      Add(merged.campaigns[j], file.campaigns[j]);
    }
  }
  // Every shard in: the campaign is the unsharded one, and says so.
  for (CampaignSummary& c : merged.campaigns) {
    if (c.shards.size() == c.shard_count) {
      c.shard_count = 1;
      c.shards = {1};
    }
  }
  if (!merged.Complete() && !allow_incomplete) {
    for (const CampaignSummary& c : merged.campaigns) {
      if (c.Complete()) continue;
      return InputError(fmt::format(
          "merge: {}: {}; expected every shard of the campaign, each run to its end (--allow-incomplete writes an "
          "explicitly incomplete summary)",
          EscapeForTerminal(c.label), WhatIsMissing(c)));
    }
  }
  return merged;
}

namespace {

std::string FailureBody(const FailingSeed& f) {
  std::string body = fmt::format("reproduce: {}\n", f.reproduce);
  if (!f.trace_hash.empty()) body += fmt::format("trace-hash: {}\n", f.trace_hash);
  if (!f.findings.empty()) body += fmt::format("findings: {}\n", fmt::join(f.findings, ", "));
  if (!f.repro.empty()) body += fmt::format("repro: {}\n", f.repro);
  if (!f.timeline.empty()) body += fmt::format("timeline: {}\n", f.timeline);
  if (!f.shrunk_repro.empty()) body += fmt::format("shrunk repro: {}\n", f.shrunk_repro);
  if (!f.shrunk_scenario.empty()) body += fmt::format("shrunk scenario: {}\n", f.shrunk_scenario);
  if (!f.shrunk.empty()) body += fmt::format("shrunk: {}\n", f.shrunk);
  return body;
}

JUnitCase WholeCampaignCase(const CampaignSummary& c) {
  JUnitCase whole;
  whole.name =
      fmt::format("seeds {}{}", c.range.ToString(),
                  c.shard_count > 1 ? fmt::format(" (shards {} of {})", fmt::join(c.shards, ","), c.shard_count) : "");
  if (!c.Complete()) {
    whole.kind = JUnitCase::Kind::kError;
    whole.message = fmt::format("incomplete: {}", WhatIsMissing(c));
  }
  return whole;
}

}  // namespace

std::vector<JUnitSuite> ToJUnit(const SummaryFile& file, double seconds) {
  std::vector<JUnitSuite> suites;
  for (const CampaignSummary& c : file.campaigns) {
    JUnitSuite suite{.name = fmt::format("electsim {} {}", file.command, c.label), .seconds = seconds};
    for (const auto& [seed, f] : c.failing) {
      suite.cases.push_back({.name = fmt::format("seed {}", seed),
                             .kind = JUnitCase::Kind::kFailure,
                             .message = fmt::format("seed {}: {}", seed, fmt::join(f.reasons, "; ")),
                             .body = FailureBody(f)});
    }
    for (const SeedError& e : c.errors) {
      suite.cases.push_back({.name = fmt::format("seed {}", e.seed),
                             .kind = JUnitCase::Kind::kError,
                             .message = fmt::format("seed {} could not be judged", e.seed),
                             .body = e.message});
    }
    suite.cases.push_back(WholeCampaignCase(c));
    suites.push_back(std::move(suite));
  }
  return suites;
}

}  // namespace electsim::campaign
