#include "cli/rl_plugin.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agents/agent.h"
#include "cli/commands.h"

// The LibTorch this build's plugin links (CMakeLists.txt; empty without deep RL): its version,
// its library folder, and that folder relative to an installed plugin's folder (its run path).
#ifndef HLOGYM_TORCH_VERSION
#define HLOGYM_TORCH_VERSION ""
#define HLOGYM_TORCH_LIBRARY_DIR ""
#define HLOGYM_TORCH_INSTALL_RPATH ""
#endif

namespace hlogym::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kPluginFile[] = "libhlogym_rl.so";
constexpr char kLibTorchFile[] = "libtorch_cpu.so";

std::vector<fs::path> PluginCandidates() {
  const fs::path exe_dir = ExecutablePath().parent_path();
  return {exe_dir / kPluginFile, exe_dir / ".." / "lib" / "hlogym" / kPluginFile};
}

// The torch version of the LibTorch whose libtorch_cpu.so is `library`: PyPI's torch keeps
// version.py beside lib/, a LibTorch archive build-version; Debian's names the file by it.
std::string TorchVersionOf(const fs::path& library) {
  std::error_code ec;
  const fs::path real = fs::canonical(library, ec);
  if (ec) return "";
  const fs::path root = real.parent_path().parent_path();
  std::ifstream version_py(root / "version.py");
  const std::regex assignment(R"(^__version__\s*=\s*['"]([^'"]+)['"])");
  for (std::string line; std::getline(version_py, line);) {
    std::smatch match;
    if (std::regex_search(line, match, assignment)) return match[1];
  }
  std::ifstream build_version(root / "build-version");
  if (std::string line; std::getline(build_version, line) && !line.empty()) return line;
  const std::string name = real.filename().string();
  const std::string prefix = absl::StrCat(kLibTorchFile, ".");
  if (name.rfind(prefix, 0) == 0) return name.substr(prefix.size());
  return "";
}

// The libtorch_cpu.so loaded into this process, if any.
std::optional<fs::path> LoadedLibTorch() {
  std::optional<fs::path> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const fs::path path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (path.filename() != kLibTorchFile) return 0;
        *static_cast<std::optional<fs::path>*>(data) = path;
        return 1;
      },
      &found);
  return found;
}

// The libtorch_cpu.so the loader takes for the plugin in `plugin_dir`, in the loader's order:
// LD_LIBRARY_PATH, the plugin's run path (the build's torch, or an installed plugin's
// environment's), the system's folders.
std::optional<LibTorchLocation> ResolveLibTorch(const fs::path& plugin_dir) {
  std::vector<std::pair<fs::path, std::string>> folders;
  if (const char* paths = std::getenv("LD_LIBRARY_PATH"); paths != nullptr) {
    for (absl::string_view dir : absl::StrSplit(paths, ':', absl::SkipEmpty())) {
      folders.push_back({fs::path(std::string(dir)), "LD_LIBRARY_PATH"});
    }
  }
  if (*HLOGYM_TORCH_INSTALL_RPATH) {
    folders.push_back({plugin_dir / HLOGYM_TORCH_INSTALL_RPATH, "the plugin's run path"});
  }
  if (*HLOGYM_TORCH_LIBRARY_DIR) {
    folders.push_back({fs::path(HLOGYM_TORCH_LIBRARY_DIR), "the plugin's run path"});
  }
  for (const char* dir : {"/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib"}) {
    folders.push_back({dir, "the system's libraries"});
  }
  for (const auto& [dir, through] : folders) {
    std::error_code ec;
    const fs::path library = dir / kLibTorchFile;
    if (fs::exists(library, ec)) {
      return LibTorchLocation{library.lexically_normal().string(), TorchVersionOf(library),
                              through};
    }
  }
  return std::nullopt;
}

std::string Describe(const LibTorchLocation& libtorch) {
  return absl::StrCat("LibTorch ",
                      libtorch.version.empty() ? "(version unknown)" : libtorch.version, " at ",
                      libtorch.path);
}

// Why the plugin at `path` did not load: the loader's message, and when the LibTorch found
// is not the one built against, both.
std::string LoadFailure(const fs::path& path, const std::string& loader_message) {
  std::string message = absl::StrCat(path.string(), " does not load: ", loader_message);
  if (!*HLOGYM_TORCH_VERSION) return message;
  absl::StrAppend(&message, "\n  built against LibTorch ", HLOGYM_TORCH_VERSION, " at ",
                  HLOGYM_TORCH_LIBRARY_DIR);
  std::optional<LibTorchLocation> found = ResolveLibTorch(path.parent_path());
  if (!found.has_value()) {
    absl::StrAppend(&message, "\n  found no ", kLibTorchFile,
                    " (is the torch of requirements-rl.txt installed in this environment?)");
  } else {
    absl::StrAppend(&message, "\n  found ", Describe(*found), " (through ", found->found_through,
                    ")");
  }
  absl::StrAppend(&message,
                  "\n  rebuild the plugin against the torch you run: scripts/setup.sh --rl in the "
                  "checkout, or reinstall hlogym in the environment that has that torch");
  return message;
}

struct Loaded {
  absl::StatusOr<const rl::PluginApi*> api;
  fs::path path;  // the plugin loaded, or the first that exists
};

Loaded Load() {
  std::vector<std::string> tried;
  fs::path first_existing;
  for (const fs::path& path : PluginCandidates()) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      tried.push_back(absl::StrCat(path.lexically_normal().string(), " (missing)"));
      continue;
    }
    if (first_existing.empty()) first_existing = path.lexically_normal();
    // RTLD_GLOBAL is not needed: the plugin only takes symbols, from the executable.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return {absl::FailedPreconditionError(absl::StrCat("deep RL (LibTorch) is not available: ",
                                                         LoadFailure(path, dlerror()))),
              path};
    }
    using Entry = const rl::PluginApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, rl::kPluginEntryPoint));
    const rl::PluginApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->version != rl::kPluginApiVersion) {
      tried.push_back(absl::StrCat(path.string(), " (not a plugin of this version of hlogym)"));
      dlclose(handle);
      continue;
    }
    return {api, path.lexically_normal()};
  }
  return {absl::FailedPreconditionError(absl::StrCat(
              "deep RL (LibTorch) is not available: no loadable ", kPluginFile, " [",
              absl::StrJoin(tried, "; "),
              "]; build hlogym with torch installed in its venv (scripts/setup.sh --rl)")),
          first_existing};
}

const Loaded& LoadOnce() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;
  std::call_once(once, [] {
    loaded = new Loaded(Load());
    if (loaded->api.ok()) (*loaded->api)->register_policy_agents();
  });
  return *loaded;
}

}  // namespace

absl::StatusOr<const rl::PluginApi*> LoadRlPlugin() { return LoadOnce().api; }

void LoadRlPluginOnDemand() {
  SetAgentFactoryLoader([](std::string_view prefix) -> absl::Status {
    if (std::find(std::begin(rl::kPolicyAgentPrefixes), std::end(rl::kPolicyAgentPrefixes),
                  prefix) == std::end(rl::kPolicyAgentPrefixes)) {
      return absl::OkStatus();
    }
    return LoadRlPlugin().status();
  });
}

RlPluginReport DescribeRlPlugin() {
  const Loaded& loaded = LoadOnce();
  RlPluginReport report;
  report.built_against_version =
      loaded.api.ok() ? (*loaded.api)->torch_version : HLOGYM_TORCH_VERSION;
  report.built_against_dir = HLOGYM_TORCH_LIBRARY_DIR;
  report.plugin = loaded.path.string();
  report.status = loaded.api.status();
  if (std::optional<fs::path> library = LoadedLibTorch(); library.has_value()) {
    report.libtorch = {library->string(), TorchVersionOf(*library), "loaded"};
  } else if (!loaded.path.empty()) {
    if (std::optional<LibTorchLocation> found = ResolveLibTorch(loaded.path.parent_path())) {
      report.libtorch = *found;
    }
  }
  return report;
}

}  // namespace hlogym::cli
