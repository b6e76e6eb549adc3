// `electsim merge` (and `fuzz --merge`): the summaries of a campaign's shards
// into the summary of the whole campaign, checked (campaign/summary.h).
#include <iostream>
#include <memory>
#include <set>

#include "fmt/format.h"
#include "tools/electsim/campaign/finish.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/export/junit.h"
#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"
#include "tools/electsim/language/json_document.h"

namespace electsim::commands {
namespace {

struct MergeFlags {
  std::vector<std::string> paths;
  campaign::SummaryOutputs outputs;
  bool allow_incomplete = false;
};

absl::StatusOr<std::vector<campaign::SummaryFile>> ReadAll(const std::vector<std::string>& paths) {
  std::vector<campaign::SummaryFile> files;
  for (const std::string& path : paths) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    auto document = ParseJsonText(*text, path);
    if (!document.ok()) return document.status();
    auto file = campaign::SummaryFromJson(*document, path);
    if (!file.ok()) return file.status();
    files.push_back(std::move(*file));
  }
  return files;
}

// To standard error when standard output carries the merged summary (--json).
// The shards named are the files' (a complete merge is one unsharded
// campaign, shard 1 of 1, which is not what was merged).
void PrintMerged(const campaign::SummaryFile& merged, const std::vector<campaign::SummaryFile>& files,
                 std::ostream& out) {
  for (size_t j = 0; j < merged.campaigns.size(); ++j) {
    const campaign::CampaignSummary& c = merged.campaigns[j];
    std::set<uint64_t> given;
    for (const campaign::SummaryFile& file : files) {
      given.insert(file.campaigns[j].shards.begin(), file.campaigns[j].shards.end());
    }
    out << fmt::format("merge: {} summaries of {}: shards {} of {}, {} of {} seeds ({}){}; failed: {}\n", files.size(),
                       EscapeForTerminal(c.label), fmt::join(given, ","), files.front().campaigns[j].shard_count,
                       c.seeds_run, c.range.size(), c.range.ToString(), c.Complete() ? "" : " INCOMPLETE",
                       c.seeds_failed);
  }
}

}  // namespace

int MergeCommand(const std::vector<std::string>& paths, const campaign::SummaryOutputs& outputs,
                 bool allow_incomplete) {
  // A signal, or a write past the file size limit, removes the temporary
  // outputs as in every other command: nothing is finished until all is.
  HandleTerminatingSignals(SignalResponse::kExitNow);
  // Where the merge goes is checked before anything is read.
  campaign::OutputPlan plan(paths);
  campaign::DeclareSummaryOutputs(outputs, plan);
  if (auto status = plan.Check(); !status.ok()) return ReportError(status);
  auto files = ReadAll(paths);
  if (!files.ok()) return ReportError(files.status());
  auto merged = campaign::MergeSummaries(*files, paths, allow_incomplete);
  if (!merged.ok()) return ReportError(merged.status());
  PrintMerged(*merged, *files, outputs.json_to_stdout ? std::cerr : std::cout);
  CommandOutcome outcome;
  if (merged->Failed()) outcome.Failed();
  const absl::Status incomplete = merged->Complete() ? absl::OkStatus()
                                                     : absl::UnavailableError(
                                                           "merge: the merged summary is incomplete (written so, as "
                                                           "--allow-incomplete asks)");
  return campaign::FinishCampaigns(*merged, 0, incomplete, outputs, plan, outcome);
}

Command AddMergeCommand(CLI::App& parent) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* app =
      parent.add_subcommand("merge", "combine the summaries of a campaign's shards (sweep or fuzz --summary)");
  app->add_option("summaries", flags->paths, "summary files, one or more per shard")->required();
  app->add_option("--summary", flags->outputs.summary_path, "write the merged summary to FILE");
  app->add_option("--junit", flags->outputs.junit_path, "write a JUnit XML report of the merged campaign");
  app->add_flag("--json", flags->outputs.json_to_stdout, "print the merged summary on standard output");
  app->add_flag("--allow-incomplete", flags->allow_incomplete,
                "merge even when shards are missing or stopped early: the summary says incomplete, exit status 3");
  return {app, [flags] { return MergeCommand(flags->paths, flags->outputs, flags->allow_incomplete); }};
}

}  // namespace electsim::commands
