// electsim::Main, the command-line front end: the electsim binary's main and
// the one a user's own main calls after registering its algorithms. Each
// command lives in its own file (commands.h); this one only dispatches.
#include "CLI/CLI.hpp"

#include <iostream>
#include <new>

#include "electsim/electsim.h"
#include "fmt/format.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/commands/revision.h"
#include "tools/electsim/external/external_algorithm.h"
#include "tools/electsim/io/exit_status.h"
#include "tools/electsim/io/program_name.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {
namespace {

// The command names, for messages about a missing or unknown one.
std::string CommandList(const CLI::App& app) {
  std::string list;
  for (const CLI::App* command : app.get_subcommands({})) {
    list += fmt::format("\n  {:<16} {}", command->get_name(), command->get_description());
  }
  return list;
}

// CLI11's own messages quote arguments as given: escaped like every other
// message, so that no argument reaches the terminal as a control sequence.
int ParseError(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  if (!app.get_subcommands().empty()) {
    std::cerr << "electsim: " << EscapeForTerminal(error.what()) << "\nrun 'electsim --help' for usage\n";
    return kExitBadInput;
  }
  // No command was recognised: say which there are.
  std::string given = "no command given";
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    given = fmt::format("unknown command \"{}\"", EscapeForTerminal(argv[i]));
    break;
  }
  std::cerr << fmt::format("electsim: {}; expected one of:{}\nrun 'electsim --help' for usage\n", given,
                           CommandList(app));
  return kExitBadInput;
}

// Commands read an empty value as "not given" (fuzz --seed "" ran the
// whole campaign, shrink --out "" wrote hidden files): every option that
// takes a value refuses an empty one, but --repro-dir, whose "" means none,
// and --trace, which says what it expects itself.
void RefuseEmptyValues(const std::vector<commands::Command>& all) {
  const CLI::Validator not_empty(
      [](std::string& value) { return value.empty() ? std::string("expected a value, got an empty one") : ""; }, "");
  for (const commands::Command& command : all) {
    for (CLI::Option* option : command.app->get_options()) {
      const std::string name = option->get_name();
      if (option->get_type_size() == 0 || name == "--repro-dir" || name == "--trace") continue;  // flags take none
      option->check(not_empty);
    }
  }
}

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"electsim: deterministic simulation testbed for leader-election algorithms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("electsim {} (revision {})", ELECTSIM_VERSION, BuildRevision()),
                       "print the version and the source revision it was built from");
  using commands::Command;
  const std::vector<Command> all = {commands::AddRunCommand(app),     commands::AddReplayCommand(app),
                                    commands::AddExplainCommand(app), commands::AddListCommand(app),
                                    commands::AddSweepCommand(app),   commands::AddFuzzCommand(app),
                                    commands::AddShrinkCommand(app),  commands::AddBenchCommand(app),
                                    commands::AddMergeCommand(app),   commands::AddCheckGuaranteesCommand(app)};
  RefuseEmptyValues(all);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    return ParseError(app, error, argc, argv);
  }
  for (const Command& command : all) {
    if (command.app->parsed()) return command.run();
  }
  return kExitBadInput;
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc > 0) SetProgramName(argv[0]);
  // No exception leaves here: out of memory, or anything else unforeseen,
  // is a message and exit status 3. Unwinding to here runs the destructors
  // that remove temporary files.
  try {
    // Manifests first: the registry closes at its first read.
    if (auto s = external::RegisterExternalAlgorithms(); !s.ok()) return ReportError(s);
    return RunCommandLine(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "electsim: out of memory\n";
  } catch (const std::exception& error) {
    std::cerr << "electsim: stopped by an unexpected error: " << EscapeForTerminal(error.what()) << "\n";
  } catch (...) {
    std::cerr << "electsim: stopped by an unexpected error\n";
  }
  return kExitIncomplete;
}

}  // namespace electsim
