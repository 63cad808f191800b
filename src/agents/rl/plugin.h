// The deep-RL component (LibTorch: the trainers and the policy agents) as a
// plugin, libhlogym_rl.so, which the command line loads only for the commands
// that need it (train with ppo, a2c, trpo or dqn; agents policy:DIR and
// policy-beam:DIR), so that every other command starts without LibTorch.
//
// The plugin takes the core's symbols from the executable that loads it (built
// with ENABLE_EXPORTS and the core linked whole), so both share one pass
// registry and one set of agent factories.
#ifndef HLOGYM_AGENTS_RL_PLUGIN_H_
#define HLOGYM_AGENTS_RL_PLUGIN_H_

#include "absl/status/statusor.h"
#include "agents/rl/rl.h"

namespace hlogym::rl {

// Bumped whenever PluginApi or the types it passes change: a plugin from
// another tree is refused instead of called.
inline constexpr int kPluginApiVersion = 3;

struct PluginApi {
  int version = kPluginApiVersion;
  absl::StatusOr<TrainSummary> (*train)(const TrainOptions& options) = nullptr;
  void (*register_policy_agents)() = nullptr;
  const char* torch_version = "";  // the LibTorch it was built against
};

// The name of the plugin's entry point, hlogym_rl_plugin_api.
inline constexpr char kPluginEntryPoint[] = "hlogym_rl_plugin_api";

}  // namespace hlogym::rl

extern "C" const hlogym::rl::PluginApi* hlogym_rl_plugin_api();

#endif  // HLOGYM_AGENTS_RL_PLUGIN_H_
