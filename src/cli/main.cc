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
