// Loading the deep-RL plugin (agents/rl/plugin.h) on first use, and what
// `hlogym doctor` says of it.
#ifndef HLOGYM_CLI_RL_PLUGIN_H_
#define HLOGYM_CLI_RL_PLUGIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "agents/rl/plugin.h"

namespace hlogym::cli {

// libhlogym_rl.so, loaded once: beside the executable (a build tree) or in
// ../lib/hlogym/ (an installed prefix). FailedPrecondition when it is missing
// (a build without torch has none) or does not load; when LibTorch is what
// fails, the message names the LibTorch the plugin was built against, the one
// the loader found instead, and how to rebuild.
absl::StatusOr<const rl::PluginApi*> LoadRlPlugin();

// Makes MakeAgent load the plugin when it meets policy:DIR, policy-beam:DIR or
// auto-policy:DIR (rl::kPolicyAgentPrefixes).
void LoadRlPluginOnDemand();

// A LibTorch: its libtorch_cpu.so and its torch version ("" when unknown).
struct LibTorchLocation {
  std::string path;
  std::string version;
  std::string found_through;  // LD_LIBRARY_PATH, the plugin's run path, the system
};

// The plugin and its LibTorch, for `hlogym doctor` (loads the plugin).
struct RlPluginReport {
  std::string built_against_version;  // "" when this build has no deep RL
  std::string built_against_dir;
  std::string plugin;         // the file loaded, or the first one found
  LibTorchLocation libtorch;  // loaded (or, after a failure, found)
  absl::Status status;        // ok when the plugin loaded
};
RlPluginReport DescribeRlPlugin();

}  // namespace hlogym::cli

#endif  // HLOGYM_CLI_RL_PLUGIN_H_
