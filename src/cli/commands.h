// Subcommand registration for the hlogym binary. Each Register* function adds
// its subcommands to the app; RunSelectedCommand runs whichever was chosen.
#ifndef HLOGYM_CLI_COMMANDS_H_
#define HLOGYM_CLI_COMMANDS_H_

#include <filesystem>
#include <functional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace hlogym::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

// fmt, verify, stats.
void RegisterTextCommands(CLI::App& app);

// list-passes, opt.
void RegisterPassCommands(CLI::App& app);

// run, equiv (src/cli/eval_commands.cc).
void RegisterEvalCommands(CLI::App& app);

// search, eval (src/cli/agent_commands.cc).
void RegisterAgentCommands(CLI::App& app);

// train (src/cli/train_commands.cc); also registers the policy agents
// ("policy:DIR") that search and eval accept.
void RegisterTrainCommands(CLI::App& app);

// doctor (src/cli/doctor_command.cc).
void RegisterDoctorCommand(CLI::App& app);

// harvest (src/cli/harvest_command.cc; the work is python/hlogym/harvest.py's).
void RegisterHarvestCommand(CLI::App& app);

// The running executable's path (/proc/self/exe), beside which an installed
// environment keeps its python and ../lib/hlogym its plugin; empty if unknown.
std::filesystem::path ExecutablePath();

// The Python of the environment this command is installed in (bin/python
// beside it), else the venv of the checkout it was built in; empty if neither.
std::string EnvironmentPython();

// Runs the action attached to the parsed subcommand; returns the exit status.
int RunSelectedCommand(CLI::App& app);

// Attaches `action` to `command`; RunSelectedCommand calls it.
void SetAction(CLI::App* command, std::function<int()> action);

// Prints `status` to stderr as "error: ..." (messages from the library
// already start with FILE:LINE:COL where they have one) and returns the exit
// status the error contract asks for: 2 for bad input, 1 otherwise.
int ReportError(const absl::Status& status);

}  // namespace hlogym::cli

#endif  // HLOGYM_CLI_COMMANDS_H_
