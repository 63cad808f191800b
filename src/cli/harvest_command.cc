// harvest: runs a user's JAX, PyTorch/XLA or TensorFlow program and keeps the
// modules it hands to XLA as a dataset. The work is Python's (hlogym.harvest:
// it reads XLA's pass log and needs the extension to fingerprint modules), so
// the command hands its arguments to that module in the environment's Python.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace hlogym::cli {
namespace {

struct HarvestOptions {
  std::string out = "harvested";
  bool force = false;
  std::string family;
  int min_instructions = 10;  // hlogym.harvest.DEFAULT_MIN_INSTRUCTIONS
  std::vector<std::string> command;
};

int RunHarvest(const HarvestOptions& o) {
  const std::string python = EnvironmentPython();
  if (python.empty() || access(python.c_str(), X_OK) != 0) {
    std::cerr << "error: harvest needs the Python environment hlogym is installed in, and "
                 "none was found beside this executable (run scripts/setup.sh)\n";
    return kExitInternal;
  }
  std::vector<std::string> args = {python,
                                   "-m",
                                   "hlogym.harvest",
                                   "--out",
                                   o.out,
                                   "--min-instructions",
                                   std::to_string(o.min_instructions)};
  if (o.force) args.push_back("--force");
  if (!o.family.empty()) args.insert(args.end(), {"--family", o.family});
  args.push_back("--");
  args.insert(args.end(), o.command.begin(), o.command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(python.c_str(), argv.data());
  std::cerr << "error: cannot run " << python << "\n";
  return kExitInternal;
}

}  // namespace

void RegisterHarvestCommand(CLI::App& app) {
  auto o = std::make_shared<HarvestOptions>();
  CLI::App* harvest = app.add_subcommand(
      "harvest",
      "Run a JAX, PyTorch/XLA or TensorFlow program (after --) and keep each distinct module it "
      "hands to XLA, with real XLA's X from its pass log, as a dataset for --suite DIR");
  harvest->add_option("--out", o->out, "Dataset folder to write (default ./harvested)");
  harvest->add_flag("--force", o->force, "Replace DIR when it is a harvested dataset");
  harvest->add_option("--family", o->family, "Family of the modules (default: DIR's name)");
  harvest->add_option("--min-instructions", o->min_instructions,
                      "Leave out modules with fewer instructions (default 10)");
  harvest->add_option("command", o->command, "-- COMMAND [ARGS...]: the program to run")
      ->required();
  SetAction(harvest, [o] { return RunHarvest(*o); });
}

}  // namespace hlogym::cli
