// Corpus-wide random pass sequences (issues 5, 6 and 17): 1,000 deterministic
// sequences (5 shards of 200) of 10 to 30 registered passes, each on a corpus
// module from datasets/corpus/manifest.json (modules of at most kMaxOps
// instructions, so each shard stays around a minute), run by the same
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


class RandomSequencesTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomSequencesTest, CorpusModulesStayValidAndEquivalent) {
  std::vector<std::string> modules;
  for (const Listed& m : ManifestModules()) {
    if (m.op_count <= kMaxOps) {
      modules.push_back(m.path);
    }
  }
  ASSERT_FALSE(modules.empty()) << "no corpus modules of at most " << kMaxOps << " instructions";
  PassFuzzOptions options;
  options.seed = kSeed + static_cast<uint64_t>(GetParam());
  options.sequences = kSequencesPerShard;
  options.min_length = kMinLength;
  options.max_length = kMaxLength;
  absl::StatusOr<PassFuzzReport> report = FuzzPasses(modules, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->sequences, kSequencesPerShard);
  std::cout << "[ RandomSequences ] shard " << GetParam() << ": " << report->sequences
            << " sequences over " << modules.size() << " modules (<= " << kMaxOps
            << " instructions), " << report->pass_runs << " pass runs (" << report->changed_runs
            << " changed the module, " << report->not_judged << " comparisons not judged, "
            << report->skipped_runs
            << " skipped as precision-changing on low-precision graphs), "
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

INSTANTIATE_TEST_SUITE_P(Shards, RandomSequencesTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hlogym
