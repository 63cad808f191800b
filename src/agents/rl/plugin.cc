#include "agents/rl/plugin.h"

extern "C" const hlogym::rl::PluginApi* hlogym_rl_plugin_api() {
  static const hlogym::rl::PluginApi api{hlogym::rl::kPluginApiVersion, &hlogym::rl::Train,
                                         &hlogym::rl::RegisterPolicyAgents, HLOGYM_TORCH_VERSION};
  return &api;
}
