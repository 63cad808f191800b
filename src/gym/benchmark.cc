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
#include "text/corpus.h"
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
  if (std::string p = FindModuleInDatasetFolder(s); !p.empty()) return p;
  if (fs::path(s).is_relative()) {
    if (std::string p = FindModuleInDatasetFolder((root / s).string()); !p.empty()) return p;
  }

  const Corpus& corpus = Corpus::Default();
  if (const CorpusModule* m = corpus.Find(spec); m != nullptr && !m->path.empty()) {
    if (IsFile(m->path)) return m->path;
    return absl::NotFoundError(absl::StrCat("benchmark '", s, "': the corpus manifest lists ",
                                            m->path, " but that file does not exist"));
  }
  // The data root's datasets first, then every datasets/ text/module_locator.h
  // searches (the working directory's, the executable's).
  if (std::string p = FindModuleInDatasets((root / "datasets").string(), s); !p.empty()) return p;
  if (absl::StatusOr<std::string> located = LocateModule(s); located.ok()) return *located;
  // A path names one file: say only that it is not there.
  if (fs::path(s).is_absolute()) {
    return absl::NotFoundError(absl::StrCat("unknown benchmark '", s, "': no such file"));
  }
  const std::string cwd = fs::current_path().string();
  std::string message = absl::StrCat("unknown benchmark '", s, "': not a file (relative to ", cwd,
                                     cwd == root.string() ? "" : " or " + root.string(), "), ");
  if (corpus.loaded()) {
    absl::StrAppend(&message, "not a module of the corpus manifest (", corpus.modules().size(),
                    " modules), ");
  } else if (!corpus.error().empty()) {
    absl::StrAppend(&message, "the corpus manifest is unreadable (", corpus.error(), "), ");
  } else {
    absl::StrAppend(&message, "no corpus manifest (datasets/corpus/manifest.json), ");
  }
  const std::string smoke_name(StripPrefix(spec, "smoke/"));
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
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark '", spec, "' (", *path, ") does not verify: ", verified.message()));
  }
  StatePtr state = ModuleState::Make(std::move(*module));
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(key, state);
  return Benchmark{spec, *path, it->second};
}

absl::StatusOr<std::vector<std::string>> ExpandBenchmarkLocs(const std::vector<std::string>& locs) {
  std::vector<std::string> specs;
  const fs::path root(DataRoot());
  for (const std::string& loc_in : locs) {
    const std::string loc(StripPrefix(loc_in, "benchmark://"));
    fs::path p(loc);
    std::error_code ec;
    if (!fs::exists(p, ec) && p.is_relative() && fs::exists(root / p, ec)) p = root / p;
    if (fs::is_directory(p, ec) && IsFile(p / "manifest.json")) {
      // A dataset of the corpus's form (datasets/corpus, datasets/xla_optimized):
      // the modules its manifest lists, by name.
      const Corpus& dataset = Corpus::InFolder(p.string());
      if (!dataset.loaded()) {
        return absl::InvalidArgumentError(
            absl::StrCat("benchmark directory ", p.string(), ": ", dataset.error()));
      }
      size_t before = specs.size();
      for (const CorpusModule& m : dataset.modules()) {
        if (m.readable && !m.path.empty()) specs.push_back(m.path);
      }
      if (specs.size() == before) {
        return absl::NotFoundError(absl::StrCat("benchmark directory ", p.string(),
                                                ": its manifest lists no readable module"));
      }
    } else if (fs::is_directory(p, ec)) {
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

}  // namespace hlogym
