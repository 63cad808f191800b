#include "text/module_locator.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#ifndef HLOGYM_SOURCE_DIR
#define HLOGYM_SOURCE_DIR ""
#endif

namespace hlogym {
namespace {

namespace fs = std::filesystem;

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// `dir` and each of its parents, nearest first.
std::vector<fs::path> SelfAndParents(fs::path dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  dir = fs::weakly_canonical(dir, ec);
  if (ec) return out;
  while (true) {
    out.push_back(dir);
    fs::path parent = dir.parent_path();
    if (parent.empty() || parent == dir) break;
    dir = parent;
  }
  return out;
}

// A datasets folder of this project, not just any folder of that name.
bool IsHlogymDatasets(const fs::path& dir) {
  return IsFile(dir / "corpus" / "manifest.json") || IsDir(dir / "policies") ||
         IsDir(dir / "smoke");
}

// The file this code was loaded from: the Python extension when hlogym runs
// inside Python, else the executable.
fs::path CodeFile() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&CodeFile), &info) != 0 && info.dli_fname != nullptr) {
    // For the main program dladdr gives argv[0], which may be relative.
    const fs::path file(info.dli_fname);
    if (file.is_absolute() && IsFile(file)) return file;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

// The data roots found from the running code upward, nearest first: a
// checkout (<dir>/datasets) or an installed prefix (<dir>/share/hlogym/datasets).
// Found once: the code does not move while it runs.
const std::vector<fs::path>& RootsNearCode() {
  static const std::vector<fs::path>* const roots = [] {
    auto* found = new std::vector<fs::path>();
    const fs::path code = CodeFile();
    if (code.empty()) return found;
    for (const fs::path& dir : SelfAndParents(code.parent_path())) {
      if (IsHlogymDatasets(dir / "datasets")) found->push_back(dir);
      if (IsHlogymDatasets(dir / "share" / "hlogym" / "datasets")) {
        found->push_back(dir / "share" / "hlogym");
      }
    }
    return found;
  }();
  return *roots;
}

// The parsed manifest of one datasets folder (null when absent or unreadable),
// read once per process.
std::shared_ptr<const nlohmann::json> Manifest(const fs::path& datasets) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<const nlohmann::json>>();
  const fs::path path = datasets / "corpus" / "manifest.json";
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(path.string()); it != cache->end()) return it->second;
  std::shared_ptr<const nlohmann::json> modules;
  if (IsFile(path)) {
    try {
      std::ifstream in(path);
      nlohmann::json j = nlohmann::json::parse(in);
      if (j.contains("modules") && j["modules"].is_object()) {
        modules = std::make_shared<const nlohmann::json>(std::move(j["modules"]));
      }
    } catch (const std::exception&) {
      // An unreadable manifest is treated as no manifest.
    }
  }
  (*cache)[path.string()] = modules;
  return modules;
}

std::string EntryPath(const fs::path& datasets, const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string()) return "";
  fs::path p = datasets / "corpus" / entry["path"].get<std::string>();
  return IsFile(p) ? p.string() : "";
}

std::string FindIn(const fs::path& datasets, const std::string& name) {
  if (std::shared_ptr<const nlohmann::json> modules = Manifest(datasets)) {
    // "<name>" or "corpus/<name>".
    std::string plain = name.rfind("corpus/", 0) == 0 ? name.substr(7) : name;
    if (auto it = modules->find(plain); it != modules->end()) {
      if (std::string p = EntryPath(datasets, *it); !p.empty()) return p;
    }
    // "<family>/<name>".
    if (size_t slash = name.find('/'); slash != std::string::npos) {
      const std::string family = name.substr(0, slash);
      if (auto it = modules->find(name.substr(slash + 1)); it != modules->end()) {
        const nlohmann::json& entry = *it;
        if (entry.is_object() && entry.contains("family") && entry["family"] == family) {
          if (std::string p = EntryPath(datasets, entry); !p.empty()) return p;
        }
      }
    }
  }
  std::string smoke = name.rfind("smoke/", 0) == 0 ? name.substr(6) : name;
  if (!smoke.empty() && smoke.find('/') == std::string::npos) {
    for (const char* ext : {".hlo", ".hlo.gz", ".hlo.zst"}) {
      fs::path p = datasets / "smoke" / (smoke + ext);
      if (IsFile(p)) return p.string();
    }
  }
  return "";
}

}  // namespace

std::string DataRoot() {
  if (const char* root = std::getenv("HLOGYM_ROOT"); root != nullptr && *root != '\0') {
    return root;
  }
  const std::vector<fs::path>& roots = RootsNearCode();
  if (!roots.empty()) return roots.front().string();
  return std::string_view(HLOGYM_SOURCE_DIR).empty() ? "." : HLOGYM_SOURCE_DIR;
}

std::vector<std::string> DatasetsDirs() {
  std::vector<fs::path> candidates;
  if (const char* root = std::getenv("HLOGYM_ROOT"); root != nullptr && *root != '\0') {
    candidates.push_back(fs::path(root) / "datasets");
  }
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    for (const fs::path& dir : SelfAndParents(cwd)) candidates.push_back(dir / "datasets");
  }
  for (const fs::path& root : RootsNearCode()) candidates.push_back(root / "datasets");
  if (std::string_view(HLOGYM_SOURCE_DIR).size() > 0) {
    candidates.push_back(fs::path(HLOGYM_SOURCE_DIR) / "datasets");
  }
  std::vector<std::string> dirs;
  for (const fs::path& c : candidates) {
    if (!IsDir(c)) continue;
    std::string key = fs::weakly_canonical(c, ec).string();
    if (ec) key = c.string();
    bool seen = false;
    for (const std::string& d : dirs) seen = seen || d == key;
    if (!seen) dirs.push_back(key);
  }
  return dirs;
}

absl::StatusOr<std::string> LocateModule(std::string_view name_in) {
  const std::string name(name_in);
  if (name.empty()) return absl::InvalidArgumentError("empty module name");
  if (IsFile(name)) return name;
  if (!fs::path(name).is_absolute()) {
    for (const std::string& dir : DatasetsDirs()) {
      if (std::string p = FindIn(dir, name); !p.empty()) return p;
    }
  }
  return absl::NotFoundError(absl::StrCat(
      name, ": no such file, corpus module (<family>/<name> or <name> in "
            "datasets/corpus/manifest.json) or smoke module (smoke/<name>)"));
}

}  // namespace hlogym
