#include "text/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "text/module_locator.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

std::string NormalPath(const fs::path& p) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : canonical).string();
}

}  // namespace

Corpus::Corpus(const std::string& folder) {
  const fs::path dir(folder);
  manifest_path_ = (dir / "manifest.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(manifest_path_, ec)) return;
  try {
    std::ifstream in(manifest_path_);
    nlohmann::json j = nlohmann::json::parse(in);
    if (!j.contains("modules") || !j["modules"].is_object()) {
      error_ = absl::StrCat(manifest_path_, ": no \"modules\" object");
      return;
    }
    if (j.contains("heldout_families") && j["heldout_families"].is_array()) {
      for (const auto& f : j["heldout_families"]) {
        if (f.is_string()) heldout_families_.push_back(f.get<std::string>());
      }
    }
    for (const auto& [name, e] : j["modules"].items()) {
      if (!e.is_object()) continue;
      CorpusModule m;
      m.name = name;
      m.family = e.value("family", std::string());
      m.frontend = e.value("frontend", std::string());
      if (e.contains("path") && e["path"].is_string()) {
        m.path = NormalPath(dir / e["path"].get<std::string>());
      }
      m.split = e.value("split", std::string());
      if (e.contains("suites") && e["suites"].is_array()) {
        for (const auto& s : e["suites"]) {
          if (s.is_string()) m.suites.push_back(s.get<std::string>());
        }
      }
      m.heldout = std::find(heldout_families_.begin(), heldout_families_.end(), m.family) !=
                  heldout_families_.end();
      m.readable = !e.contains("hlogym_error");
      if (e.contains("op_count") && e["op_count"].is_number_integer()) {
        m.op_count = e["op_count"].get<int64_t>();
      }
      if (e.contains("X") && e["X"].is_number_integer()) m.X = e["X"].get<int64_t>();
      if (e.contains("bytes") && e["bytes"].is_number_integer())
        m.bytes = e["bytes"].get<int64_t>();
      m.entry_json = e.dump();
      modules_.push_back(std::move(m));
    }
  } catch (const std::exception& e) {
    error_ = absl::StrCat(manifest_path_, ": ", e.what());
    modules_.clear();
    return;
  }
  std::sort(modules_.begin(), modules_.end(),
            [](const CorpusModule& a, const CorpusModule& b) { return a.name < b.name; });
  for (size_t i = 0; i < modules_.size(); ++i) {
    by_name_[modules_[i].name] = i;
    if (!modules_[i].path.empty()) by_path_[modules_[i].path] = i;
  }
  loaded_ = true;
}

const Corpus& Corpus::InFolder(const std::string& folder) {
  static std::mutex mu;
  // One corpus per folder, however spelled; spellings seen before skip the
  // path normalization (resolving a benchmark asks on every reset).
  static auto* corpora = new std::map<std::string, std::unique_ptr<const Corpus>>();
  static auto* by_spelling = new std::map<std::string, const Corpus*>();
  std::lock_guard<std::mutex> lock(mu);
  const Corpus*& known = (*by_spelling)[folder];
  if (known == nullptr) {
    std::unique_ptr<const Corpus>& corpus = (*corpora)[NormalPath(folder)];
    if (!corpus) corpus.reset(new Corpus(folder));
    known = corpus.get();
  }
  return *known;
}

const Corpus& Corpus::InDatasets(const std::string& datasets_dir) {
  return InFolder((fs::path(datasets_dir) / "corpus").string());
}

const Corpus& Corpus::Default() { return InDatasets((fs::path(DataRoot()) / "datasets").string()); }

const CorpusModule* Corpus::Find(std::string_view name) const {
  if (name.substr(0, 7) == "corpus/") name.remove_prefix(7);
  if (auto it = by_name_.find(name); it != by_name_.end()) return &modules_[it->second];
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return nullptr;
  auto it = by_name_.find(name.substr(slash + 1));
  if (it == by_name_.end() || modules_[it->second].family != name.substr(0, slash)) return nullptr;
  return &modules_[it->second];
}

const CorpusModule* Corpus::FindByPath(const std::string& path) const {
  auto it = by_path_.find(NormalPath(path));
  return it != by_path_.end() ? &modules_[it->second] : nullptr;
}

std::vector<std::string> Corpus::Names(std::string_view suite, std::string_view split) const {
  std::vector<std::string> names;
  for (const CorpusModule& m : modules_) {
    if (split == kHeldoutSplit) {
      if (!m.heldout) continue;
    } else if (split == kTrainSeenSplit) {
      if (m.heldout || m.split != "train") continue;
    } else if (!split.empty() && m.split != split) {
      continue;
    }
    if (!suite.empty() && std::find(m.suites.begin(), m.suites.end(), suite) == m.suites.end()) {
      continue;
    }
    if (!m.readable) continue;  // modules hlogym could not read
    names.push_back(m.name);
  }
  return names;
}

std::vector<std::string> CorpusBenchmarkNames(std::string_view suite, std::string_view split) {
  return Corpus::Default().Names(suite, split);
}

}  // namespace hlogym
