// The benchmark corpus: datasets/corpus/manifest.json, read in one place for
// the command line, the gym, the agents, the tests and (through the
// extension) Python. Each datasets folder's manifest is read once per process.
//
// A module is named "<name>", "corpus/<name>" or "<family>/<name>". Splits:
// "train" and "test" (by configuration: no test architecture is in train),
// and the leave-families-out protocol's two sides, "heldout" (every module of
// the manifest's heldout_families, never trained on) and "train-seen" (the
// train split of the other families, what the shipped agents train on).
#ifndef HLOGYM_TEXT_CORPUS_H_
#define HLOGYM_TEXT_CORPUS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hlogym {

inline constexpr std::string_view kHeldoutSplit = "heldout";
inline constexpr std::string_view kTrainSeenSplit = "train-seen";

struct CorpusModule {
  std::string name;
  std::string family;
  std::string frontend;             // jax, tensorflow
  std::string path;                 // absolute and normalized ("" when the entry has none)
  std::string split;                // train or test
  std::vector<std::string> suites;  // gpt2, diverse
  bool heldout = false;             // its family is held out of training
  bool readable = true;             // false: the generator recorded hlogym_error
  int64_t op_count = -1;            // I, the op count of the module as stored
  std::optional<int64_t> X;         // real XLA's target-independent op count
  int64_t bytes = 0;                // of the module's text
  std::string entry_json;           // the manifest entry as written (fields not modelled here)
};

class Corpus {
 public:
  // The corpus of DataRoot()'s datasets folder (text/module_locator.h).
  static const Corpus& Default();
  // The corpus of a datasets folder (one read per folder and process).
  static const Corpus& InDatasets(const std::string& datasets_dir);
  // Any folder whose manifest.json has the corpus's form, such as
  // datasets/xla_optimized (XLA's optimized modules of the corpus); one read
  // per folder and process.
  static const Corpus& InFolder(const std::string& folder);

  // Whether the manifest was read; when not, error() says why ("" when it
  // is simply absent).
  bool loaded() const { return loaded_; }
  const std::string& error() const { return error_; }
  const std::string& manifest_path() const { return manifest_path_; }

  // Name-sorted.
  const std::vector<CorpusModule>& modules() const { return modules_; }
  const std::vector<std::string>& heldout_families() const { return heldout_families_; }
  // By "<name>", "corpus/<name>" or "<family>/<name>"; null when unknown.
  const CorpusModule* Find(std::string_view name) const;
  // By the module's file (any spelling of the path); null when not listed.
  const CorpusModule* FindByPath(const std::string& path) const;
  // The readable modules of a suite ("" = all) in a split ("" = all; see
  // above), by name.
  std::vector<std::string> Names(std::string_view suite = "", std::string_view split = "") const;

 private:
  explicit Corpus(const std::string& folder);
  bool loaded_ = false;
  std::string error_;
  std::string manifest_path_;
  std::vector<CorpusModule> modules_;
  std::vector<std::string> heldout_families_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::map<std::string, size_t> by_path_;
};

// The corpus module names of Corpus::Default() (see Corpus::Names).
std::vector<std::string> CorpusBenchmarkNames(std::string_view suite = "",
                                              std::string_view split = "");

}  // namespace hlogym

#endif  // HLOGYM_TEXT_CORPUS_H_
