// text/corpus.h: one reader of datasets/corpus/manifest.json. Names in their
// three spellings, files by any path spelling, the splits of the
// leave-families-out protocol, and manifests that cannot be read.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "scratch.h"
#include "text/corpus.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

// A datasets folder of its own per test (Corpus::InDatasets reads each once).
fs::path MakeDatasets(const std::string& test, const std::string& manifest) {
  const fs::path dir = testing::FreshScratchPath(test) / "datasets";
  fs::create_directories(dir / "corpus" / "fam_a");
  std::ofstream(dir / "corpus" / "manifest.json") << manifest;
  return dir;
}

constexpr char kManifest[] = R"({
  "heldout_families": ["fam_b"],
  "modules": {
    "m2": {"family": "fam_a", "path": "fam_a/m2.hlo", "split": "test", "suites": ["diverse"],
           "op_count": 7, "X": 5, "bytes": 70},
    "m1": {"family": "fam_a", "path": "fam_a/m1.hlo", "split": "train", "suites": ["gpt2", "diverse"],
           "op_count": 9},
    "m3": {"family": "fam_b", "path": "fam_b/m3.hlo", "split": "train", "suites": ["diverse"]},
    "m4": {"family": "fam_a", "path": "fam_a/m4.hlo", "split": "train", "hlogym_error": "unreadable"}
  }
})";

TEST(CorpusTest, ReadsTheManifestOnce) {
  const fs::path datasets = MakeDatasets("read", kManifest);
  const Corpus& corpus = Corpus::InDatasets(datasets.string());
  ASSERT_TRUE(corpus.loaded()) << corpus.error();
  EXPECT_EQ(&corpus, &Corpus::InDatasets((datasets / "." / "corpus" / "..").string()));
  ASSERT_EQ(corpus.modules().size(), 4u);
  EXPECT_EQ(corpus.modules()[0].name, "m1");  // name-sorted
  const CorpusModule* m2 = corpus.Find("m2");
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(m2->X, 5);
  EXPECT_EQ(m2->op_count, 7);
  EXPECT_EQ(m2->bytes, 70);
  EXPECT_EQ(corpus.Find("m1")->X, std::nullopt);
  EXPECT_EQ(fs::path(m2->path), fs::weakly_canonical(datasets / "corpus" / "fam_a" / "m2.hlo"));
}

TEST(CorpusTest, FindsByEverySpelling) {
  const fs::path datasets = MakeDatasets("find", kManifest);
  const Corpus& corpus = Corpus::InDatasets(datasets.string());
  const CorpusModule* m2 = corpus.Find("m2");
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(corpus.Find("corpus/m2"), m2);
  EXPECT_EQ(corpus.Find("fam_a/m2"), m2);
  EXPECT_EQ(corpus.Find("fam_b/m2"), nullptr);  // the family must match
  EXPECT_EQ(corpus.Find("m9"), nullptr);
  EXPECT_EQ(corpus.FindByPath((datasets / "corpus" / "fam_a" / ".." / "fam_a" / "m2.hlo").string()),
            m2);
  EXPECT_EQ(corpus.FindByPath((datasets / "corpus" / "fam_a" / "m9.hlo").string()), nullptr);
}

TEST(CorpusTest, SplitsAndSuites) {
  const Corpus& corpus = Corpus::InDatasets(MakeDatasets("splits", kManifest).string());
  using Names = std::vector<std::string>;
  // m4 (hlogym_error) is never listed.
  EXPECT_EQ(corpus.Names(), (Names{"m1", "m2", "m3"}));
  EXPECT_EQ(corpus.Names("", "train"), (Names{"m1", "m3"}));
  EXPECT_EQ(corpus.Names("", "test"), (Names{"m2"}));
  EXPECT_EQ(corpus.Names("", kHeldoutSplit), (Names{"m3"}));
  EXPECT_EQ(corpus.Names("", kTrainSeenSplit), (Names{"m1"}));
  EXPECT_EQ(corpus.Names("gpt2"), (Names{"m1"}));
  EXPECT_EQ(corpus.Names("diverse", "test"), (Names{"m2"}));
  EXPECT_TRUE(corpus.Find("m3")->heldout);
  EXPECT_FALSE(corpus.Find("m4")->readable);
}

TEST(CorpusTest, UnreadableAndMissingManifests) {
  const Corpus& broken = Corpus::InDatasets(MakeDatasets("broken", "{\"modules\": [1,").string());
  EXPECT_FALSE(broken.loaded());
  EXPECT_NE(broken.error().find("manifest.json"), std::string::npos) << broken.error();
  EXPECT_TRUE(broken.modules().empty());

  const Corpus& no_modules = Corpus::InDatasets(MakeDatasets("no_modules", "{}").string());
  EXPECT_FALSE(no_modules.loaded());
  EXPECT_NE(no_modules.error().find("no \"modules\" object"), std::string::npos);

  const fs::path empty = MakeDatasets("missing", "");
  fs::remove(empty / "corpus" / "manifest.json");
  const Corpus& missing = Corpus::InDatasets(empty.string());
  EXPECT_FALSE(missing.loaded());
  EXPECT_EQ(missing.error(), "");  // absent is not an error
  EXPECT_TRUE(missing.Names().empty());
}

}  // namespace
}  // namespace hlogym
