// doctor: what hlogym runs on, the way `ray status` or `python -m torch.utils.collect_env`
// report it: the version, the data root, the deep-RL plugin and its LibTorch, and the Python
// packages of the environment the command is installed in.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/rl_plugin.h"
#include "nlohmann/json.hpp"
#include "text/module_locator.h"

#ifndef HLOGYM_VENV_PYTHON
#define HLOGYM_VENV_PYTHON ""
#endif

namespace hlogym::cli {
namespace {

namespace fs = std::filesystem;

// Prints the versions of the packages hlogym works with, as JSON ("" for one not installed),
// without importing them.
constexpr char kPythonProbe[] =
    "import importlib.metadata as m, json, sys\n"
    "def v(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        return ''\n"
    "names = ['hlogym', 'jax', 'jaxlib', 'torch', 'numpy', 'gymnasium', 'stable-baselines3',\n"
    "         'ray', 'rliable']\n"
    "print(json.dumps({'python': sys.executable, 'version': sys.version.split()[0],\n"
    "                  'packages': {n: v(n) for n in names}}))\n";

nlohmann::json ProbePython(const std::string& python) {
  if (python.empty()) return {{"error", "no Python environment beside the command"}};
  const std::string command = absl::StrCat("'", python, "' -c \"", kPythonProbe, "\" 2>/dev/null");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  if (pipe != nullptr) {
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe.get())) out.append(buffer, n);
  }
  nlohmann::json parsed = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return {{"python", python}, {"error", "it did not run"}};
  return parsed;
}

int RunDoctor(bool json) {
  const RlPluginReport plugin = DescribeRlPlugin();
  nlohmann::json report = {
      {"hlogym", HLOGYM_VERSION},
      {"executable", ExecutablePath().string()},
      {"data_root", DataRoot()},
      {"plugin",
       {{"path", plugin.plugin},
        {"loaded", plugin.status.ok()},
        {"error", plugin.status.ok() ? "" : std::string(plugin.status.message())},
        {"built_against", plugin.built_against_version},
        {"built_against_dir", plugin.built_against_dir}}},
      {"libtorch",
       {{"path", plugin.libtorch.path},
        {"version", plugin.libtorch.version},
        {"found_through", plugin.libtorch.found_through}}},
      {"python", ProbePython(EnvironmentPython())}};
  if (json) {
    std::cout << report.dump(2) << "\n";
    return kExitOk;
  }
  const auto or_none = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::cout << "hlogym      " << HLOGYM_VERSION << " (" << report["executable"].get<std::string>()
            << ")\n"
            << "data root   " << or_none(DataRoot()) << "\n";
  if (plugin.built_against_version.empty()) {
    std::cout << "deep RL     not built (no torch in the build's venv; scripts/setup.sh --rl)\n";
  } else {
    std::cout << "deep RL     " << (plugin.status.ok() ? "loaded " : "NOT LOADED ")
              << or_none(plugin.plugin) << "\n"
              << "  built against LibTorch " << plugin.built_against_version << " ("
              << plugin.built_against_dir << ")\n"
              << "  LibTorch  " << or_none(plugin.libtorch.version) << " ("
              << or_none(plugin.libtorch.path) << ", " << or_none(plugin.libtorch.found_through)
              << ")\n";
    if (!plugin.status.ok()) std::cout << "  error: " << plugin.status.message() << "\n";
  }
  const nlohmann::json& python = report["python"];
  if (python.contains("packages")) {
    std::cout << "python      " << python["version"].get<std::string>() << " ("
              << python["python"].get<std::string>() << ")\n";
    for (const auto& [name, version] : python["packages"].items()) {
      std::cout << "  " << name << std::string(name.size() < 18 ? 18 - name.size() : 1, ' ')
                << or_none(version.get<std::string>()) << "\n";
    }
  } else {
    std::cout << "python      " << python["error"].get<std::string>() << "\n";
  }
  return kExitOk;
}

}  // namespace

void RegisterDoctorCommand(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Print what hlogym runs on: its version, data root, deep-RL plugin and the LibTorch it "
      "loads, and the Python packages of its environment (jaxlib, torch, ...)");
  doctor->add_flag("--json", *json, "Print JSON");
  SetAction(doctor, [json] { return RunDoctor(*json); });
}

}  // namespace hlogym::cli
