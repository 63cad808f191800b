#include "text/module_locator.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "text/corpus.h"

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

}  // namespace

std::string FindModuleInDatasetFolder(std::string_view spec) {
  // The folder is everything before the last or the second-to-last '/'.
  size_t cut = spec.size();
  for (int tries = 0; tries < 2; ++tries) {
    cut = cut == 0 ? std::string_view::npos : spec.rfind('/', cut - 1);
    if (cut == std::string_view::npos || cut == 0) break;
    const fs::path folder(spec.substr(0, cut));
    if (!IsFile(folder / "manifest.json")) continue;
    // Absolute, so that a relative spelling read before a change of directory is not reused.
    std::error_code ec;
    const CorpusModule* m =
        Corpus::InFolder(fs::absolute(folder, ec).string()).Find(spec.substr(cut + 1));
    if (m != nullptr && IsFile(m->path)) return m->path;
  }
  return "";
}

std::string FindModuleInDatasets(const std::string& datasets_dir, std::string_view name_in) {
  const fs::path datasets(datasets_dir);
  const std::string name(name_in);
  if (const CorpusModule* m = Corpus::InDatasets(datasets.string()).Find(name);
      m != nullptr && IsFile(m->path)) {
    return m->path;
  }
  std::string smoke = name.rfind("smoke/", 0) == 0 ? name.substr(6) : name;
  if (!smoke.empty() && smoke.find('/') == std::string::npos) {
    for (const char* ext : {".hlo", ".hlo.gz", ".hlo.zst"}) {
      fs::path p = datasets / "smoke" / (smoke + ext);
      if (IsFile(p)) return p.string();
    }
  }
  return FindModuleInDatasetFolder((datasets / name).string());
}

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
      if (std::string p = FindModuleInDatasets(dir, name); !p.empty()) return p;
    }
  }
  return absl::NotFoundError(
      absl::StrCat(name,
                   ": no such file, corpus module (<family>/<name> or <name> in "
                   "datasets/corpus/manifest.json) or smoke module (smoke/<name>)"));
}

}  // namespace hlogym
