// LocateModule / LoadModule by name: corpus "<family>/<name>", "<name>",
// "corpus/<name>", smoke "smoke/<name>", from any working directory; unknown
// names give NotFound naming the argument.
#include "text/module_locator.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "text/file_io.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

constexpr char kName[] = "gpt2_infer_L2_d128_h8_s64_b2_f32";

fs::path Datasets() { return fs::path(HLOGYM_SOURCE_DIR) / "datasets"; }

bool SameFile(const std::string& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// Runs the test body from a directory (restoring the old one afterwards).
class ScopedCwd {
 public:
  explicit ScopedCwd(const fs::path& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCwd() { fs::current_path(old_); }

 private:
  fs::path old_;
};

TEST(ModuleLocatorTest, CorpusNamesResolve) {
  const fs::path want = Datasets() / "corpus" / "gpt2" / (std::string(kName) + ".hlo.zst");
  if (!fs::exists(want)) GTEST_SKIP() << "no corpus module " << want;
  for (const std::string& spec :
       {std::string("gpt2/") + kName, std::string(kName), std::string("corpus/") + kName}) {
    absl::StatusOr<std::string> p = LocateModule(spec);
    ASSERT_TRUE(p.ok()) << spec << ": " << p.status();
    EXPECT_TRUE(SameFile(*p, want)) << spec << " -> " << *p;
  }
  // The family must match.
  EXPECT_FALSE(LocateModule(std::string("bert/") + kName).ok());
}

TEST(ModuleLocatorTest, SmokeNamesResolve) {
  const fs::path want = Datasets() / "smoke" / "gpt2_infer.hlo";
  if (!fs::exists(want)) GTEST_SKIP() << "no smoke module " << want;
  absl::StatusOr<std::string> p = LocateModule("smoke/gpt2_infer");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(SameFile(*p, want)) << *p;
}

TEST(ModuleLocatorTest, ExistingPathsAreUnchanged) {
  const std::string path = (Datasets() / "smoke" / "gpt2_infer.hlo").string();
  if (!fs::exists(path)) GTEST_SKIP();
  absl::StatusOr<std::string> p = LocateModule(path);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, path);
}

TEST(ModuleLocatorTest, FoundFromASubdirectory) {
  const fs::path want = Datasets() / "corpus" / "gpt2" / (std::string(kName) + ".hlo.zst");
  if (!fs::exists(want)) GTEST_SKIP();
  ScopedCwd cwd(Datasets() / "corpus");
  absl::StatusOr<std::string> p = LocateModule(std::string("gpt2/") + kName);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(SameFile(*p, want)) << *p;
}

TEST(ModuleLocatorTest, LoadModuleFallsBackToNames) {
  if (!fs::exists(Datasets() / "corpus" / "manifest.json")) GTEST_SKIP();
  auto module = LoadModule(std::string("gpt2/") + kName);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_GT((*module)->instruction_count(), 0);
}

TEST(ModuleLocatorTest, UnknownNamesAreNotFoundAndNamed) {
  for (const std::string spec :
       {"gpt2/no_such_module", "no_such_module", "smoke/nope", "/nonexistent/dir/x.hlo"}) {
    absl::StatusOr<std::string> p = LocateModule(spec);
    ASSERT_FALSE(p.ok()) << spec;
    EXPECT_TRUE(absl::IsNotFound(p.status())) << p.status();
    EXPECT_NE(p.status().message().find(spec), std::string::npos) << p.status();
    auto module = LoadModule(spec);
    ASSERT_FALSE(module.ok());
    EXPECT_TRUE(absl::IsNotFound(module.status()));
    EXPECT_NE(module.status().message().find(spec), std::string::npos) << module.status();
  }
}

}  // namespace
}  // namespace hlogym
