// Loading the deep-RL plugin (agents/rl/plugin.h) on first use.
#ifndef HLOGYM_CLI_RL_PLUGIN_H_
#define HLOGYM_CLI_RL_PLUGIN_H_

#include "absl/status/statusor.h"
#include "agents/rl/plugin.h"

namespace hlogym::cli {

// libhlogym_rl.so, loaded once: beside the executable (a build tree) or in
// ../lib/hlogym/ (an installed prefix). FailedPrecondition naming the paths
// tried and the loader's message when it is missing or unloadable (a build
// without LibTorch has none).
absl::StatusOr<const rl::PluginApi*> LoadRlPlugin();

// Makes MakeAgent load the plugin when it meets policy:DIR or policy-beam:DIR.
void LoadRlPluginOnDemand();

}  // namespace hlogym::cli

#endif  // HLOGYM_CLI_RL_PLUGIN_H_
