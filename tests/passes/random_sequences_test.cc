// Corpus-wide random pass sequences (issues 5, 6, 17 and 19): 1,000
// deterministic sequences (5 shards of 200) of 10 to 30 registered passes, each
// on a corpus module from datasets/corpus/manifest.json, 600 on XLA's
// optimized modules (datasets/xla_optimized) and 200 on PyTorch/XLA's
// (datasets/pytorch); modules of at most kMaxOps
// instructions, so each test stays around a minute. Run by the same
// differential fuzzer as `hlogym fuzz-passes` (gym/pass_fuzzer.h): after
// every pass the module must verify, the pass must report "changed" exactly
// when the printed text changed, and the module must compute what the input
// module did. A failure prints the minimal failing sequence and
//   reproduce: build/hlogym opt FILE --verify-each --passes=a,b,c
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "corpus_manifest.h"
#include "gym/pass_fuzzer.h"

namespace hlogym {
namespace {

constexpr uint64_t kSeed = 0x5eed'1234'abcd'0005ULL;
// 1,000 sequences in all, in shards that ctest runs in parallel.
constexpr int kShards = 5;
constexpr int kSequencesPerShard = 200;
constexpr int kMinLength = 10;
constexpr int kMaxLength = 30;
constexpr long long kMaxOps = 1500;

using testing::CorpusDir;
using Listed = CorpusModule;

std::vector<Listed> ManifestModules() { return testing::CorpusManifestModules(); }

// The modules of `listed` of at most kMaxOps instructions.
std::vector<std::string> SmallModules(const std::vector<Listed>& listed) {
  std::vector<std::string> modules;
  for (const Listed& m : listed) {
    if (m.op_count <= kMaxOps) modules.push_back(m.path);
  }
  return modules;
}

// Runs `sequences` random sequences over `modules` and fails with a
// reproducer for every failure.
void ExpectSequencesStayValidAndEquivalent(const std::vector<std::string>& modules, uint64_t seed,
                                           int sequences, const std::string& label) {
  ASSERT_FALSE(modules.empty()) << "no " << label << " modules of at most " << kMaxOps
                                << " instructions";
  PassFuzzOptions options;
  options.seed = seed;
  options.sequences = sequences;
  options.min_length = kMinLength;
  options.max_length = kMaxLength;
  absl::StatusOr<PassFuzzReport> report = FuzzPasses(modules, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->sequences, sequences);
  std::cout << "[ RandomSequences ] " << label << ": " << report->sequences << " sequences over "
            << modules.size() << " modules (<= " << kMaxOps << " instructions), "
            << report->pass_runs << " pass runs (" << report->changed_runs
            << " changed the module, " << report->not_judged << " comparisons not judged, "
            << report->skipped_runs << " skipped as precision-changing on low-precision graphs), "
            << report->failures.size() << " failing, " << report->seconds << " s\n";
  for (const PassFuzzFailure& failure : report->failures) {
    ADD_FAILURE() << failure.kind << " in " << failure.module << ", sequence "
                  << failure.sequence_index << ": " << failure.message
                  << "\n  drawn: " << absl::StrJoin(failure.drawn, ",")
                  << "\n  reproduce: build/hlogym opt " << failure.path
                  << " --verify-each --passes=" << absl::StrJoin(failure.passes, ",");
  }
  // A module whose every comparison is vacuous tests nothing: none may be.
  EXPECT_TRUE(report->vacuous_modules.empty()) << absl::StrJoin(report->vacuous_modules, ", ");
}

class RandomSequencesTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomSequencesTest, CorpusModulesStayValidAndEquivalent) {
  ExpectSequencesStayValidAndEquivalent(
      SmallModules(ManifestModules()), kSeed + static_cast<uint64_t>(GetParam()),
      kSequencesPerShard, "corpus shard " + std::to_string(GetParam()));
}

// XLA's optimized modules (datasets/xla_optimized): fusions, non-default
// layouts and bitcasts that read them.
// They are mostly at XLA's fixed point already (few passes change them), so
// three shards' worth of sequences run in one.
TEST(XlaOptimizedRandomSequencesTest, ModulesStayValidAndEquivalent) {
  ExpectSequencesStayValidAndEquivalent(SmallModules(testing::XlaOptimizedManifestModules()),
                                        kSeed - 1, 3 * kSequencesPerShard, "XLA-optimized");
}

// PyTorch/XLA's modules (datasets/pytorch): the third frontend, every module a parameter,
// aten names, tuples of every live tensor as results.
TEST(PyTorchRandomSequencesTest, ModulesStayValidAndEquivalent) {
  ExpectSequencesStayValidAndEquivalent(SmallModules(testing::PyTorchManifestModules()), kSeed - 2,
                                        kSequencesPerShard, "PyTorch");
}

INSTANTIATE_TEST_SUITE_P(Shards, RandomSequencesTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hlogym
