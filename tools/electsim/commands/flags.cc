#include "tools/electsim/commands/flags.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim::commands {

CLI::Validator UnsignedText(std::string what, uint64_t min, uint64_t max) {
  return CLI::Validator(
      [what, min, max](const std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit);
        if (!digits_only || error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("expected {}: an integer in [{}, {}], got \"{}\"", what, min, max,
                             EscapeForTerminal(text));
        }
        return "";
      },
      "UINT");
}

void AddSetFlag(CLI::App& app, std::vector<std::string>& sets, const std::string& what, const std::string& examples) {
  app.add_option(
         "--set", sets,
         fmt::format("change one value of {}, checked like a file: PATH=VALUE, e.g. {} (repeatable)", what, examples))
      ->expected(1)
      // One value each time: the word after it is the scenario, not another.
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option* AddJobsFlag(CLI::App& app, unsigned& jobs) {
  jobs = std::max(1u, std::thread::hardware_concurrency());
  return app.add_option("--jobs", jobs, "parallel simulations (default: every core)")
      ->check(UnsignedText("a number of jobs", 1, 256))
      ->capture_default_str();
}

CLI::Option* AddSeedFlag(CLI::App& app, std::string& seed, const std::string& help) {
  return app.add_option("--seed", seed, help);
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

}  // namespace electsim::commands
