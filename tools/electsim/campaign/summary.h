// The one summary of a campaign (sweep, fuzz, check-guarantees): what ran it
// (its identity: the command, the algorithm or scenario, the effective
// options, every --set, the generator's version), which seeds (the range and
// the shards included), how far it got, what failed and how to reproduce
// each failure. Shards of one campaign merge into the summary of the whole
// campaign, checked: a merge never claims seeds that did not run.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/campaign/seeds.h"
#include "tools/electsim/export/junit.h"

namespace electsim::campaign {

inline constexpr int kSummaryVersion = 2;

struct FailingSeed {
  uint64_t seed = 0;
  std::vector<std::string> reasons;   // what failed it: broken guarantees, expectations not met
  std::vector<std::string> findings;  // violations that did not fail it
  std::string reproduce;              // a command line, quoted for a POSIX shell
  std::string trace_hash;             // "0x…", when the seed was run again hashed for its repro
  // Files written for it ("" when not written).
  std::string repro;
  std::string timeline;
  std::string shrunk_repro;
  std::string shrunk_scenario;
  std::string shrunk;  // what shrinking left, readable
};

struct SeedError {
  uint64_t seed = 0;
  std::string message;
};

// The values of CampaignSummary::stopped, as summaries write them.
inline constexpr std::string_view kStoppedReasons[] = {"signal", "time budget", "first failure", "error"};

struct CampaignSummary {
  std::string label;        // "raft-leader-crash", "fuzz raft"
  nlohmann::json identity;  // an object: equal in every shard of one campaign
  SeedRange range = SeedRange::Between(1, 1);
  uint64_t shard_count = 1;
  std::set<uint64_t> shards = {1};  // the shards this summary covers
  uint64_t seeds_run = 0;
  // Why it stopped before running every seed of its shards: "" (it did
  // not) or one of kStoppedReasons.
  std::string stopped;
  uint64_t seeds_failed = 0;
  uint64_t seeds_with_findings = 0;
  std::map<std::string, uint64_t> failed_by;      // reason: seeds
  std::map<std::string, uint64_t> violations;     // checker: seeds on which it fired
  std::map<std::string, uint64_t> options_drawn;  // option (or option=value): seeds that drew it
  std::map<std::string, uint64_t> unjudged;       // "liveness (timings)": seeds that left it unjudged so
  std::map<uint64_t, FailingSeed> failing;
  std::vector<SeedError> errors;

  // The seeds of the shards it covers.
  uint64_t SeedsPlanned() const;
  // Every seed of those shards ran.
  bool ShardsDone() const { return stopped.empty() && errors.empty() && seeds_run == SeedsPlanned(); }
  // Every seed of the whole range ran: every shard is in and done.
  bool Complete() const { return shards.size() == shard_count && ShardsDone(); }
};

// A summary file: the campaigns of one command (sweep: one per scenario).
struct SummaryFile {
  std::string command;
  std::vector<CampaignSummary> campaigns;
  bool Complete() const;
  bool Failed() const;  // a seed failed, or could not be judged
};

nlohmann::json ToJson(const SummaryFile& file);
// Every field checked, and the numbers against each other: a summary whose
// shards are out of range, or that claims more seeds than its shards hold,
// is refused (InvalidArgument, naming `path` and the JSON path).
absl::StatusOr<SummaryFile> SummaryFromJson(const nlohmann::json& document, const std::string& path);

// Shards of one campaign (or of one command's campaigns) into one. Refused
// (InvalidArgument) unless every file has the same command, the same
// campaigns with the same identities and ranges, disjoint shards, and seeds
// that belong to their shards. When shards are missing or stopped early the
// result is incomplete: refused unless `allow_incomplete`.
absl::StatusOr<SummaryFile> MergeSummaries(const std::vector<SummaryFile>& files, const std::vector<std::string>& paths,
                                           bool allow_incomplete);

// One suite per campaign: a failure per failing seed (with its reproduce
// command and files), an error per seed that could not be judged, and one
// case for the campaign as a whole that passes only when it is complete.
std::vector<JUnitSuite> ToJUnit(const SummaryFile& file, double seconds);

// "single_leader 3, stale_token 1", or "none".
std::string CountsText(const std::map<std::string, uint64_t>& counts);

}  // namespace electsim::campaign
