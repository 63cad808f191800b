#include "gym/benchmark.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/verifier.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"
#include "text/module_locator.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string_view StripPrefix(std::string_view s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  return s;
}

struct Manifest {
  bool loaded = false;
  std::string error;
  nlohmann::json modules;  // name -> entry
  // Families held out of training whole (the leave-families-out protocol).
  std::vector<std::string> heldout_families;
};

// The corpus manifest, read once (a missing manifest is not an error).
const Manifest& CorpusManifest() {
  static std::mutex mu;
  static Manifest* manifest = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (manifest != nullptr) return *manifest;
  manifest = new Manifest();
  fs::path path = fs::path(DataRoot()) / "datasets/corpus/manifest.json";
  if (!IsFile(path)) return *manifest;
  try {
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.contains("modules") && j["modules"].is_object()) {
      manifest->modules = j["modules"];
      manifest->loaded = true;
      if (j.contains("heldout_families") && j["heldout_families"].is_array()) {
        for (const auto& f : j["heldout_families"]) {
          if (f.is_string()) manifest->heldout_families.push_back(f.get<std::string>());
        }
      }
    } else {
      manifest->error = absl::StrCat(path.string(), ": no \"modules\" object");
    }
  } catch (const std::exception& e) {
    manifest->error = absl::StrCat(path.string(), ": ", e.what());
  }
  return *manifest;
}

bool IsModuleFileName(const std::string& name) {
  if (name.find(".optimized.") != std::string::npos) return false;
  for (const char* ext : {".hlo", ".hlo.gz", ".hlo.zst", ".txt.gz", ".txt.zst"}) {
    std::string_view e(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> ResolveBenchmarkPath(std::string_view spec_in) {
  std::string_view spec = StripPrefix(spec_in, "benchmark://");
  if (spec.empty()) return absl::InvalidArgumentError("empty benchmark name");
  const fs::path root(DataRoot());
  const std::string s(spec);
  if (IsFile(s)) return s;
  if (fs::path(s).is_relative() && IsFile(root / s)) return (root / s).string();

  const Manifest& manifest = CorpusManifest();
  const std::string corpus_name(StripPrefix(spec, "corpus/"));
  if (manifest.loaded && manifest.modules.contains(corpus_name)) {
    const nlohmann::json& entry = manifest.modules[corpus_name];
    if (entry.contains("path") && entry["path"].is_string()) {
      fs::path p = root / "datasets/corpus" / entry["path"].get<std::string>();
      if (IsFile(p)) return p.string();
      return absl::NotFoundError(absl::StrCat("benchmark '", s, "': the corpus manifest lists ",
                                              p.string(), " but that file does not exist"));
    }
  }
  const std::string smoke_name(StripPrefix(spec, "smoke/"));
  for (const char* ext : {".hlo", ".hlo.gz", ".hlo.zst"}) {
    fs::path p = root / "datasets/smoke" / (smoke_name + ext);
    if (IsFile(p)) return p.string();
  }
  // "<family>/<name>" and datasets/ found from the working directory or the
  // executable (text/module_locator.h).
  if (absl::StatusOr<std::string> located = LocateModule(s); located.ok()) return *located;
  std::string message = absl::StrCat(
      "unknown benchmark '", s, "': not a file (relative to ", fs::current_path().string(),
      " or ", root.string(), "), ");
  if (manifest.loaded) {
    absl::StrAppend(&message, "not a module of the corpus manifest (",
                    manifest.modules.size(), " modules), ");
  } else if (!manifest.error.empty()) {
    absl::StrAppend(&message, "the corpus manifest is unreadable (", manifest.error, "), ");
  } else {
    absl::StrAppend(&message, "no corpus manifest (datasets/corpus/manifest.json), ");
  }
  absl::StrAppend(&message, "and not a smoke module (datasets/smoke/", smoke_name, ".hlo)");
  return absl::NotFoundError(message);
}

absl::StatusOr<Benchmark> LoadBenchmark(std::string_view spec_in) {
  std::string spec(StripPrefix(spec_in, "benchmark://"));
  absl::StatusOr<std::string> path = ResolveBenchmarkPath(spec);
  if (!path.ok()) return path.status();
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(*path, ec);
  const std::string key = ec ? *path : canonical.string();

  static std::mutex mu;
  static auto* cache = new std::map<std::string, StatePtr>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return Benchmark{spec, *path, it->second};
  }
  absl::StatusOr<std::unique_ptr<Module>> module = LoadModule(*path);
  if (!module.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark '", spec, "': ", module.status().message()));
  }
  if (absl::Status verified = VerifyModule(**module); !verified.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("benchmark '", spec, "' (", *path,
                                                   ") does not verify: ", verified.message()));
  }
  StatePtr state = ModuleState::Make(std::move(*module));
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(key, state);
  return Benchmark{spec, *path, it->second};
}

absl::StatusOr<std::vector<std::string>> ExpandBenchmarkLocs(
    const std::vector<std::string>& locs) {
  std::vector<std::string> specs;
  const fs::path root(DataRoot());
  for (const std::string& loc_in : locs) {
    const std::string loc(StripPrefix(loc_in, "benchmark://"));
    fs::path p(loc);
    std::error_code ec;
    if (!fs::exists(p, ec) && p.is_relative() && fs::exists(root / p, ec)) p = root / p;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (entry.is_regular_file() && IsModuleFileName(entry.path().filename().string())) {
          found.push_back(entry.path().string());
        }
      }
      if (found.empty()) {
        return absl::NotFoundError(
            absl::StrCat("benchmark directory ", p.string(), " holds no .hlo/.hlo.gz/.hlo.zst"));
      }
      std::sort(found.begin(), found.end());
      specs.insert(specs.end(), found.begin(), found.end());
    } else if (IsFile(p) && p.extension() == ".txt") {
      std::ifstream in(p);
      std::string line;
      size_t before = specs.size();
      while (std::getline(in, line)) {
        size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        line.erase(0, line.find_first_not_of(" \t\r"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (!line.empty()) specs.push_back(line);
      }
      if (specs.size() == before) {
        return absl::InvalidArgumentError(absl::StrCat("suite file ", p.string(), " is empty"));
      }
    } else {
      specs.push_back(loc);
    }
  }
  if (specs.empty()) return absl::InvalidArgumentError("no benchmarks given");
  return specs;
}

std::vector<std::string> CorpusBenchmarkNames(std::string_view suite, std::string_view split) {
  std::vector<std::string> names;
  const Manifest& manifest = CorpusManifest();
  if (!manifest.loaded) return names;
  for (auto it = manifest.modules.begin(); it != manifest.modules.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (!entry.is_object()) continue;
    const std::string family = entry.value("family", std::string());
    const bool heldout_family =
        std::find(manifest.heldout_families.begin(), manifest.heldout_families.end(), family) !=
        manifest.heldout_families.end();
    if (split == kHeldoutSplit) {
      if (!heldout_family) continue;
    } else if (split == kTrainSeenSplit) {
      if (heldout_family || entry.value("split", std::string()) != "train") continue;
    } else if (!split.empty() && entry.value("split", std::string()) != split) {
      continue;
    }
    if (!suite.empty()) {
      bool in_suite = false;
      if (entry.contains("suites") && entry["suites"].is_array()) {
        for (const auto& s : entry["suites"]) {
          in_suite |= s.is_string() && s.get<std::string>() == suite;
        }
      }
      if (!in_suite) continue;
    }
    if (entry.contains("hlogym_error")) continue;  // modules hlogym could not read
    names.push_back(name);
  }
  return names;
}

}  // namespace hlogym
