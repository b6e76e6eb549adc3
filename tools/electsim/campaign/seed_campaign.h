// A campaign over seeds: the layer under sweep, fuzz and check-guarantees.
// A subject says what one seed runs and how it is judged; the campaign runs
// the seeds of a plan on the workers (SeedLoop), names each failing seed
// with the command that reproduces it, writes a repro (and, if asked, an
// HTML timeline and a shrunk repro) for the first ones, and sums it all up
// in a CampaignSummary.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/campaign/seed_loop.h"
#include "tools/electsim/campaign/summary.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/io/command_line.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/language/scenario.h"

namespace electsim::campaign {

// One seed's verdict: failed, and why; other violations are findings.
struct SeedVerdict {
  bool failed = false;
  std::vector<std::string> reasons;
  std::vector<std::string> findings;
  // What the seed drew of its configuration, counted in the summary
  // (options_drawn): "pre_vote=true", "heartbeat_interval".
  std::vector<std::string> drawn;
  // Guarantees the judge left unjudged for this seed, with why, counted in
  // the summary (unjudged): "liveness (timings)".
  std::vector<std::string> unjudged;
};

class CampaignSubject {
 public:
  virtual ~CampaignSubject() = default;
  // Names the campaign in lines and summaries: "raft-leader-crash", "fuzz raft".
  virtual std::string Label() const = 0;
  // Everything that decides what a seed runs and how it is judged.
  virtual nlohmann::json Identity() const = 0;
  // Repro files are STEM-seedN.repro.json.
  virtual std::string FileStem() const = 0;
  // May return one scenario shared by every seed.
  virtual absl::StatusOr<std::shared_ptr<const Scenario>> ScenarioFor(uint64_t seed) const = 0;
  // Judges by the expectations and violations; RunResult::metrics are kept
  // only for --metrics rows (a run collects what its expectations need).
  virtual SeedVerdict Judge(const Scenario& scenario, const RunResult& result) const = 0;
  // The command that runs `seed` alone and prints its verdict and trace hash.
  virtual CommandLine Reproduce(uint64_t seed) const = 0;
  // What a failing seed's line says after "seed N": "FAILED", "BROKE a declared guarantee".
  virtual std::string FailedWords() const { return "FAILED"; }
  // The verdict part of the last line: "expectations met in 9/10".
  virtual std::string VerdictText(const CampaignSummary& summary) const;
  // The scenario document of `seed`, to shrink a failure; nullopt: not shrunk.
  virtual std::optional<nlohmann::json> DocumentFor(uint64_t seed) const {
    (void)seed;
    return std::nullopt;
  }
};

struct CampaignSettings {
  SeedPlan plan;
  LoopSettings loop;
  bool stop_at_first_failure = false;
  std::string repro_dir = ".";   // "": no repro files
  uint64_t max_repros = 10;      // for the first failing seeds
  bool timelines = false;        // an HTML timeline next to each repro
  uint64_t shrink_runs = 0;      // per repro; 0: not shrunk
  std::ostream* text = nullptr;  // failing seeds and the last line (null: standard output)
  bool progress = true;          // the progress line (off where a caller shows its own)
  // --metrics: a CSV row per seed run, written in seed order.
  std::function<std::string(std::string_view label, const Scenario&, const RunResult&)> metrics_row;
  AtomicOutputFile* metrics = nullptr;
};

// Declares in `plan` the files the campaign may write for its failing seeds.
void DeclareSeedFiles(const CampaignSubject& subject, const CampaignSettings& settings, OutputPlan& plan);

struct CampaignRun {
  CampaignSummary summary;
  LoopResult loop;
  double seconds = 0;
};

// Runs the campaign. Files it writes go through `plan` (Written), outputs
// that could not be written are reported to `outcome`; a failing seed marks
// it failed.
CampaignRun RunCampaign(const CampaignSubject& subject, const CampaignSettings& settings, OutputPlan& plan,
                        CommandOutcome& outcome);

// "stopped" in a summary for how a loop ended.
std::string StoppedText(const LoopResult& loop);

}  // namespace electsim::campaign
