// The corpus manifest (datasets/corpus/manifest.json) for tests that walk the
// corpus: one entry per module, in the manifest's (name-sorted) order.
#ifndef HLOGYM_TESTS_CORPUS_MANIFEST_H_
#define HLOGYM_TESTS_CORPUS_MANIFEST_H_

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace hlogym::testing {

inline std::filesystem::path CorpusDir() {
  return std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "corpus";
}

struct CorpusEntry {
  std::string name;
  std::string path;  // relative to CorpusDir()
  long long op_count = -1;
};

// Empty when the manifest is missing or unreadable (callers fail on that).
inline std::vector<CorpusEntry> CorpusManifestModules() {
  std::ifstream in(CorpusDir() / "manifest.json");
  nlohmann::json manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<CorpusEntry> modules;
  if (!manifest.is_object() || !manifest.contains("modules")) return modules;
  for (const auto& [name, entry] : manifest["modules"].items()) {
    modules.push_back(CorpusEntry{name, entry.value("path", std::string()),
                                  entry.value("op_count", -1LL)});
  }
  return modules;
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_CORPUS_MANIFEST_H_
