// Every module of the benchmark corpus (datasets/corpus/manifest.json) loads
// from its .hlo.zst, verifies, has the op count the manifest records, and
// round-trips: print(parse(print(m))) == print(m). Also every (before, after)
// module of real XLA's pass pairs (datasets/corpus/xla_pass_pairs/) parses
// and verifies. Failures are collected and reported together, one line per
// module.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/verifier.h"
#include "corpus_manifest.h"
#include "gtest/gtest.h"
#include "text/file_io.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

using testing::CorpusDir;
using Listed = CorpusModule;

std::vector<Listed> ManifestModules() { return testing::CorpusManifestModules(); }

// "" when the module at `path` loads, verifies and round-trips; else why not.
std::string CheckModule(const fs::path& path, long long expected_ops, bool round_trip) {
  auto module = LoadModule(path.string());
  if (!module.ok()) return "parse: " + std::string(module.status().message());
  if (expected_ops >= 0 && (*module)->instruction_count() != expected_ops) {
    return "op count " + std::to_string((*module)->instruction_count()) + " != manifest " +
           std::to_string(expected_ops);
  }
  VerifierOptions options;
  options.module_unique_names = true;
  absl::Status verified = VerifyModule(**module, options);
  if (!verified.ok()) return "verify: " + std::string(verified.message());
  if (!round_trip) return "";
  const std::string printed = PrintModule(**module);
  auto again = ParseModule(printed, path.filename().string() + " (printed)");
  if (!again.ok()) return "printed text does not parse: " + std::string(again.status().message());
  if (PrintModule(**again) != printed) return "print(parse(print(m))) != print(m)";
  if ((*again)->instruction_count() != (*module)->instruction_count()) {
    return "round trip changed the op count";
  }
  return "";
}

TEST(CorpusTest, EveryManifestModuleParsesVerifiesAndRoundTrips) {
  if (!fs::exists(CorpusDir() / "manifest.json")) FAIL() << "no datasets/corpus";
  const std::vector<Listed> modules = ManifestModules();
  EXPECT_GE(modules.size(), 300u);
  std::vector<std::string> failures;
  for (const Listed& m : modules) {
    std::string why = CheckModule(m.path, m.op_count, /*round_trip=*/true);
    if (!why.empty()) failures.push_back(m.path + ": " + why.substr(0, 400));
  }
  std::string report;
  for (const auto& f : failures) report += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << modules.size()
                                << " corpus modules fail:\n"
                                << report;
}

TEST(CorpusTest, EveryXlaPassPairParsesAndVerifies) {
  const fs::path dir = CorpusDir() / "xla_pass_pairs";
  if (!fs::exists(dir)) FAIL() << "no datasets/corpus/xla_pass_pairs";
  std::vector<std::string> failures;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.size() < 8 ||
        name.compare(name.size() - 8, 8, ".hlo.zst") != 0) {
      continue;
    }
    ++count;
    std::string why = CheckModule(entry.path(), -1, /*round_trip=*/false);
    if (!why.empty()) {
      failures.push_back(fs::relative(entry.path(), dir).string() + ": " + why.substr(0, 400));
    }
  }
  EXPECT_GT(count, 0);
  std::string report;
  for (const auto& f : failures) report += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << count
                                << " XLA pass-pair modules fail:\n"
                                << report;
}

}  // namespace
}  // namespace hlogym
