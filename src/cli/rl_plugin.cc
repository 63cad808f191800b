#include "cli/rl_plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/agent.h"

namespace hlogym::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kPluginFile[] = "libhlogym_rl.so";

absl::StatusOr<const rl::PluginApi*> Load() {
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const std::vector<fs::path> candidates = {exe_dir / kPluginFile,
                                            exe_dir / ".." / "lib" / "hlogym" / kPluginFile};
  std::vector<std::string> tried;
  for (const fs::path& path : candidates) {
    if (!fs::exists(path, ec)) {
      tried.push_back(absl::StrCat(path.lexically_normal().string(), " (missing)"));
      continue;
    }
    // RTLD_GLOBAL is not needed: the plugin only takes symbols, from the executable.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      tried.push_back(absl::StrCat(path.string(), " (", dlerror(), ")"));
      continue;
    }
    using Entry = const rl::PluginApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, rl::kPluginEntryPoint));
    const rl::PluginApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->version != rl::kPluginApiVersion) {
      tried.push_back(absl::StrCat(path.string(), " (not a plugin of this version of hlogym)"));
      dlclose(handle);
      continue;
    }
    return api;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "deep RL (LibTorch) is not available: no loadable ", kPluginFile, " [",
      absl::StrJoin(tried, "; "), "]; build hlogym where LibTorch is installed (scripts/setup.sh)"));
}

}  // namespace

absl::StatusOr<const rl::PluginApi*> LoadRlPlugin() {
  static std::once_flag once;
  static absl::StatusOr<const rl::PluginApi*>* loaded = nullptr;
  std::call_once(once, [] {
    loaded = new absl::StatusOr<const rl::PluginApi*>(Load());
    if (loaded->ok()) (**loaded)->register_policy_agents();
  });
  return *loaded;
}

void LoadRlPluginOnDemand() {
  SetAgentFactoryLoader([](std::string_view prefix) -> absl::Status {
    if (prefix != "policy" && prefix != "policy-beam") return absl::OkStatus();
    return LoadRlPlugin().status();
  });
}

}  // namespace hlogym::cli
