#include "tools/electsim/export/replay_diff.h"

#include <deque>
#include <fstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/export/trace_json.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {

constexpr size_t kContextRecords = 3;
constexpr uint64_t kShownRecords = 32;

// Compares each record of the run with the next line of the expected trace.
class ExpectedTraceComparer final : public sim::TraceSink {
 public:
  explicit ExpectedTraceComparer(std::ifstream& expected) : expected_(expected) {
    // Skip the header line; a trace from before it had none.
    std::string first;
    if (std::getline(expected_, first) && first.find("\"trace_version\"") == std::string::npos) pending_ = first;
  }

  void OnRecord(const sim::TraceRecord& record) override {
    std::string actual = TraceRecordToNamedJson(record);
    if (!differs_at_) {
      std::string expected;
      if (pending_) {
        expected = std::move(*pending_);
        pending_.reset();
      } else if (!std::getline(expected_, expected)) {
        expected = "(the expected trace has ended)";
      }
      expected = EscapeForTerminal(expected);
      if (expected == actual) {
        before_.push_back(std::move(actual));
        if (before_.size() > kContextRecords) before_.pop_front();
        return;
      }
      differs_at_ = record.index;
      expected_at_ = std::move(expected);
      actual_at_ = std::move(actual);
      return;
    }
    if (actual_after_.size() < kContextRecords) actual_after_.push_back(std::move(actual));
  }

  std::string Report() {
    if (!differs_at_) {
      std::string next;
      if (std::getline(expected_, next)) {
        return fmt::format(
            "replay: this run's records all match the expected trace, which goes on after it ends:\n"
            "  expected: {}\n",
            EscapeForTerminal(next));
      }
      return "replay: every record matches the expected trace\n";
    }
    std::string out = fmt::format("replay: first differing record: #{}\n", *differs_at_);
    for (const std::string& line : before_) out += fmt::format("  same:     {}\n", line);
    out += fmt::format("  expected: {}\n  actual:   {}\n", expected_at_, actual_at_);
    for (size_t i = 0; i < kContextRecords; ++i) {
      std::string expected;
      const bool more_expected = static_cast<bool>(std::getline(expected_, expected));
      if (more_expected) out += fmt::format("  expected: {}\n", EscapeForTerminal(expected));
      if (i < actual_after_.size()) out += fmt::format("  actual:   {}\n", actual_after_[i]);
    }
    return out;
  }

 private:
  std::ifstream& expected_;
  std::optional<std::string> pending_;  // a first line that was a record
  std::deque<std::string> before_;
  std::optional<uint64_t> differs_at_;
  std::string expected_at_, actual_at_;
  std::vector<std::string> actual_after_;
};

// Keeps the records in [from, to).
class RecordWindow final : public sim::TraceSink {
 public:
  RecordWindow(uint64_t from, uint64_t to) : from_(from), to_(to) {}
  void OnRecord(const sim::TraceRecord& record) override {
    if (record.index >= from_ && record.index < to_)
      lines_ += fmt::format("  #{}: {}\n", record.index, TraceRecordToNamedJson(record));
  }
  const std::string& lines() const { return lines_; }

 private:
  uint64_t from_, to_;
  std::string lines_;
};

// The checkpoints of both runs at the coarser spacing of the two.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> AtCommonSpacing(const TraceCheckpoints& a,
                                                                        const TraceCheckpoints& b, uint64_t& every) {
  every = std::max(a.every, b.every);
  auto thin = [every](const TraceCheckpoints& c) {
    std::vector<uint64_t> out;
    const uint64_t step = every / c.every;
    for (size_t i = step - 1; i < c.hashes.size(); i += step) out.push_back(c.hashes[i]);
    return out;
  };
  return {thin(a), thin(b)};
}

absl::StatusOr<std::string> ShowWindow(const Repro& repro, uint64_t from, uint64_t to, const std::string& why) {
  RecordWindow window(from, to);
  RunOptions options;
  options.extra_sinks.push_back(&window);
  auto rerun = RunScenario(repro.scenario, repro.seed, options);
  if (!rerun.ok()) return rerun.status();
  return why + window.lines();
}

// The first line of a JSON Lines trace, its header; an error naming the file
// unless it opens and that line is one.
absl::StatusOr<nlohmann::json> ReadTraceHeader(const std::string& path) {
  std::ifstream expected(path);
  if (!expected) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot open: expected a JSON Lines trace (--trace of a good run)", EscapeForTerminal(path)));
  }
  std::string line;
  std::getline(expected, line);
  nlohmann::json header = nlohmann::json::parse(line, nullptr, false);
  if (header.is_discarded() || !header.is_object() || !header.contains("trace_version")) {
    return absl::InvalidArgumentError(
        fmt::format("{}:1: expected a JSON Lines trace (--trace of a good run), whose first line is its header "
                    "(\"trace_version\")",
                    EscapeForTerminal(path)));
  }
  return header;
}

}  // namespace

absl::Status CheckExpectedTrace(const std::string& path) { return ReadTraceHeader(path).status(); }

std::string ExpectedTraceMismatch(const std::string& path, const Repro& repro) {
  auto header = ReadTraceHeader(path);
  if (!header.ok()) return "";
  const nlohmann::json scenario = header->value("scenario", nlohmann::json());
  const nlohmann::json seed = header->value("seed", nlohmann::json());
  const bool same_scenario = scenario.is_string() && scenario.get<std::string>() == repro.scenario.name;
  const bool same_seed = seed.is_number_unsigned() && seed.get<uint64_t>() == repro.seed;
  if (same_scenario && same_seed) return "";
  return fmt::format(
      "note: {} is a trace of scenario {} seed {}, and this repro runs {} seed {}: it is compared only if the "
      "replay differs from the repro, and then shows where two different runs part\n",
      EscapeForTerminal(path), EscapeForTerminal(scenario.is_string() ? scenario.get<std::string>() : "(unnamed)"),
      seed.dump(), EscapeForTerminal(repro.scenario.name), repro.seed);
}

absl::StatusOr<TraceDifference> DescribeTraceDifference(const Repro& repro, const RunResult& actual,
                                                        const std::optional<std::string>& expected_trace_path) {
  auto shown = [](absl::StatusOr<std::string> text) -> absl::StatusOr<TraceDifference> {
    if (!text.ok()) return text.status();
    return TraceDifference{.text = std::move(*text)};
  };
  if (expected_trace_path) {
    if (auto status = CheckExpectedTrace(*expected_trace_path); !status.ok()) return status;
    std::ifstream expected(*expected_trace_path);
    ExpectedTraceComparer comparer(expected);
    RunOptions options;
    options.extra_sinks.push_back(&comparer);
    auto rerun = RunScenario(repro.scenario, repro.seed, options);
    if (!rerun.ok()) return rerun.status();
    return TraceDifference{.text = comparer.Report()};
  }
  if (!repro.checkpoints) {
    return TraceDifference{
        .text =
            "replay: this repro has no trace checkpoints (an older electsim wrote it); to see the first differing "
            "record, pass --expected TRACE.jsonl, the trace of a run that matched\n"};
  }
  uint64_t every = 0;
  const auto [expected, got] = AtCommonSpacing(*repro.checkpoints, actual.checkpoints, every);
  size_t first_different = 0;
  while (first_different < expected.size() && first_different < got.size() &&
         expected[first_different] == got[first_different]) {
    ++first_different;
  }
  const uint64_t agreed = first_different * every;  // records that hash the same
  if (first_different < expected.size() && first_different < got.size()) {
    const uint64_t to = agreed + every;
    return shown(
        ShowWindow(repro, agreed, std::min(to, agreed + kShownRecords),
                   fmt::format("replay: the first {} records hash as in the repro; the first difference is among "
                               "records #{} to #{} (--expected TRACE.jsonl names it); this run's first {} of them:\n",
                               agreed, agreed, to - 1, std::min(every, kShownRecords))));
  }
  if (repro.trace_records != actual.trace_records) {
    const uint64_t shorter = std::min(repro.trace_records, actual.trace_records);
    const uint64_t from = shorter > kContextRecords ? shorter - kContextRecords : 0;
    return shown(
        ShowWindow(repro, from, shorter + kContextRecords,
                   fmt::format("replay: every checkpoint both traces reach matches (through record #{}); the repro "
                               "has {} records, this run {}; this run's records around #{}:\n",
                               agreed == 0 ? 0 : agreed - 1, repro.trace_records, actual.trace_records, shorter)));
  }
  return TraceDifference{
      .text = fmt::format("replay: every checkpoint matches and both traces have {} records: the repro's trace_hash "
                          "is not the hash of its own checkpoints' trace (was the file edited?)\n",
                          actual.trace_records),
      .only_the_hash = true};
}

}  // namespace electsim
