// The corpus of the source tree (datasets/corpus), XLA's optimized modules of
// it (datasets/xla_optimized) and PyTorch/XLA's modules (datasets/pytorch), for
// tests that walk them: text/corpus.h's reader, pointed at the checkout the
// tests were built from.
#ifndef HLOGYM_TESTS_CORPUS_MANIFEST_H_
#define HLOGYM_TESTS_CORPUS_MANIFEST_H_

#include <filesystem>
#include <vector>

#include "text/corpus.h"

namespace hlogym::testing {

inline std::filesystem::path CorpusDir() {
  return std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "corpus";
}

// Name-sorted; empty when the manifest is missing or unreadable (callers
// fail on that).
inline const std::vector<CorpusModule>& CorpusManifestModules() {
  return Corpus::InDatasets((std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets").string())
      .modules();
}

// XLA's optimized modules of the corpus's test split (datasets/xla_optimized):
// fusions and non-default layouts. Name-sorted; empty when the manifest is
// missing or unreadable.
inline const std::vector<CorpusModule>& XlaOptimizedManifestModules() {
  return Corpus::InFolder(
             (std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "xla_optimized").string())
      .modules();
}

// PyTorch/XLA's modules (datasets/pytorch): the third frontend. Name-sorted;
// empty when the manifest is missing or unreadable.
inline const std::vector<CorpusModule>& PyTorchManifestModules() {
  return Corpus::InFolder(
             (std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "pytorch").string())
      .modules();
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_CORPUS_MANIFEST_H_
