#include "cli/commands.h"

#include <iostream>
#include <map>

namespace hlogym::cli {
namespace {

std::map<const CLI::App*, std::function<int()>>& Actions() {
  static auto* actions = new std::map<const CLI::App*, std::function<int()>>();
  return *actions;
}

bool IsBadInput(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kResourceExhausted:  // over a memory limit the user can raise
      return true;
    default:
      return false;
  }
}

}  // namespace

std::filesystem::path ExecutablePath() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

void SetAction(CLI::App* command, std::function<int()> action) {
  Actions()[command] = std::move(action);
}

int RunSelectedCommand(CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    auto it = Actions().find(command);
    if (it != Actions().end()) return it->second();
  }
  std::cerr << "error: no subcommand given\n";
  return kExitBadInput;
}

int ReportError(const absl::Status& status) {
  std::string message(status.message());
  // Parser messages carry their own "FILE:LINE:COL: error:" prefix.
  if (message.find(": error: ") == std::string::npos) message = "error: " + message;
  std::cerr << message << "\n";
  return IsBadInput(status) ? kExitBadInput : kExitInternal;
}

}  // namespace hlogym::cli
