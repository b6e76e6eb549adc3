// Typed, validated algorithm options. An algorithm declares its options as
// data (name, type, default, range, help); tools/ parses scenario JSON against
// that schema and `electsim list` prints it. Algorithms only ever read values
// that already passed validation, and never see JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "electsim/sim/types.h"

namespace algorithms {

enum class OptionType {
  kDuration,  // written "150ms", "2s"; held in ns
  kInt,
  kBool,
  kRatio,    // written as a number in [0, 1]; held in parts per million
  kChoice,   // one of `choices`; held as its index
  kIntList,  // a JSON array of integers
};
std::string_view OptionTypeName(OptionType type);

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::kInt;
  std::string help;
  int64_t default_value = 0;                          // ns, integer, 0/1, ppm or choice index
  int64_t min = std::numeric_limits<int64_t>::min();  // inclusive, in the held unit
  int64_t max = std::numeric_limits<int64_t>::max();
  // Whether the fuzzer's option swarm draws it: false for a setting of the
  // environment (the store's capacity) rather than a choice of the algorithm.
  bool swarmed = true;
  // When above 0, the values the swarm draws are whole multiples of it (in
  // the held unit): a grid the algorithm needs, as etcd's raft counts its
  // timeouts in ticks.
  int64_t step = 0;
  std::vector<std::string> choices;   // kChoice only
  std::vector<int64_t> default_list;  // kIntList only

  // Shorthands for declaring options.
  static OptionSpec Duration(std::string name, sim::TimeNs default_ns, std::string help,
                             sim::TimeNs min_ns = sim::TimeNs(0));
  static OptionSpec Int(std::string name, int64_t default_value, int64_t min, int64_t max, std::string help);
  static OptionSpec Bool(std::string name, bool default_value, std::string help);
  // min/max in ppm; (0, 1] is min = 1, max = 1000000.
  static OptionSpec Ratio(std::string name, int64_t default_ppm, int64_t min_ppm, int64_t max_ppm, std::string help);
  static OptionSpec Choice(std::string name, std::vector<std::string> choices, std::string help);
  static OptionSpec IntList(std::string name, std::string help);

  // The default, rendered as a scenario would write it.
  std::string DefaultText() const;
  // The accepted range, rendered for messages and `list` ("" when unbounded).
  std::string RangeText() const;
};

// Values for one algorithm instance; every spec'd name has a value.
class OptionValues {
 public:
  OptionValues() = default;
  static OptionValues Defaults(const std::vector<OptionSpec>& specs);

  int64_t Int(std::string_view name) const;
  sim::TimeNs Duration(std::string_view name) const { return sim::TimeNs(Int(name)); }
  bool Bool(std::string_view name) const { return Int(name) != 0; }
  int64_t RatioPpm(std::string_view name) const { return Int(name); }
  // The chosen string of a kChoice option.
  const std::string& Choice(std::string_view name) const;
  const std::vector<int64_t>& List(std::string_view name) const;

  void Set(std::string_view name, int64_t value);
  void SetList(std::string_view name, std::vector<int64_t> values);

  // Canonical "name=value" pairs in name order (for reports and repro files).
  std::map<std::string, std::string> Describe() const;

 private:
  struct IntValue {
    std::string name;
    int64_t value = 0;
  };
  // The value named `name`, or nullptr. A scan: an algorithm has a handful
  // of options, and nodes read them each time one is created.
  const IntValue* FindInt(std::string_view name) const;

  std::vector<IntValue> ints_;  // in declaration order
  std::map<std::string, std::vector<int64_t>, std::less<>> lists_;
  std::map<std::string, const OptionSpec*, std::less<>> specs_;
};

// For Validate: fails unless duration option `shorter` is below option
// `longer`, with a message naming both values and `consequence` (what would
// go wrong otherwise; may be empty).
absl::Status RequireShorter(const OptionValues& options, std::string_view shorter, std::string_view longer,
                            std::string_view consequence);
// The same against a derived bound, named `bound_name` in the message.
absl::Status RequireShorterThan(const OptionValues& options, std::string_view shorter, std::string_view bound_name,
                                sim::TimeNs bound, std::string_view consequence);

}  // namespace algorithms
