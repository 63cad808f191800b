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

std::string EnvironmentPython() {
  std::error_code ec;
  const std::filesystem::path beside = ExecutablePath().parent_path() / "python";
  if (std::filesystem::is_regular_file(beside, ec)) return beside.string();
  if (std::filesystem::is_regular_file(HLOGYM_VENV_PYTHON, ec)) return HLOGYM_VENV_PYTHON;
  return "";
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
