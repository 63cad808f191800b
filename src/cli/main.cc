// hlogym command line: parses flags and hands off to the subcommands.
#include <cstdio>
#include <exception>
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/rl_plugin.h"

int main(int argc, char** argv) {
  CLI::App app{"hlogym: XLA's HLO graph level as a pass-ordering gym"};
  app.set_version_flag("--version", HLOGYM_VERSION);
  app.require_subcommand(1);
  hlogym::cli::RegisterTextCommands(app);
  hlogym::cli::RegisterPassCommands(app);
  hlogym::cli::RegisterEvalCommands(app);
  hlogym::cli::RegisterAgentCommands(app);
  hlogym::cli::RegisterTrainCommands(app);
  hlogym::cli::RegisterDoctorCommand(app);
  hlogym::cli::RegisterHarvestCommand(app);
  hlogym::cli::LoadRlPluginOnDemand();
  // A first word that names no command: say so (CLI11 would only say that
  // a command is required).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* command : app.get_subcommands({})) known |= command->check_name(argv[1]);
    if (!known) {
      std::cerr << "error: unknown command '" << argv[1] << "' (hlogym --help lists them)\n";
      return hlogym::cli::kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    // Usage errors are bad input (status 2); --help and --version exit 0.
    return code == 0 ? 0 : hlogym::cli::kExitBadInput;
  }
  try {
    return hlogym::cli::RunSelectedCommand(app);
  } catch (const std::exception& error) {
    std::cerr << "hlogym: internal error: " << error.what() << "\n";
    return hlogym::cli::kExitInternal;
  }
}
