// Corpus-wide random pass sequences (issues 5 and 6): 1,000 deterministic
// sequences (5 shards of 200) of 10 to 30 registered passes, each on a corpus module from
// datasets/corpus/manifest.json (modules of at most kMaxOps instructions, so
// each shard stays around a minute). After every pass the module must
// verify, the pass must report "changed" exactly when the printed text
// changed, and the module must be equivalent to the input module, with
// CheckEquivalent's default options (seed 0, one trial, default tolerances).
//
// To save time the input module's outputs are computed once per sequence and
// each step's module is evaluated only when its text changed; the comparison
// mirrors CheckEquivalent exactly (same arguments, entry-signature check,
// low-precision widening of the tolerance, CompareLiterals).
//
// A failure names the module, the sequence index and seed, the passes run so
// far and the error, with a command line that reproduces it:
//   build/hlogym opt datasets/corpus/FAMILY/NAME.hlo.zst --passes=a,b,c
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "analysis/verifier.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "hlo/primitive_type.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "corpus_manifest.h"
#include "text/file_io.h"
#include "text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSeed = 0x5eed'1234'abcd'0005ULL;
// 1,000 sequences in all, in shards that ctest runs in parallel.
constexpr int kShards = 5;
constexpr int kSequencesPerShard = 200;
constexpr int kMinLength = 10;
constexpr int kMaxLength = 30;
constexpr long long kMaxOps = 1500;

using testing::CorpusDir;
using Listed = testing::CorpusEntry;

std::vector<Listed> ManifestModules() { return testing::CorpusManifestModules(); }


// The input module, its arguments and outputs under CheckEquivalent's
// default options (seed 0, one trial).
struct Reference {
  const Module* module = nullptr;
  std::vector<Literal> arguments;
  Literal outputs;
  bool low_precision = false;
};

// "" when `current` is equivalent to the reference, as CheckEquivalent with
// default options would decide; else why not.
std::string CheckAgainst(const Reference& ref, const Module& current) {
  const EquivalenceOptions options;  // the defaults
  const Computation* ea = ref.module->entry_computation();
  const Computation* eb = current.entry_computation();
  if (eb == nullptr) return "module has no entry computation";
  if (ea->num_parameters() != eb->num_parameters()) {
    return absl::StrCat("entry parameter counts differ: ", ea->num_parameters(), " vs ",
                        eb->num_parameters());
  }
  for (int64_t p = 0; p < ea->num_parameters(); ++p) {
    Shape x = ea->parameter_instruction(p)->shape(), y = eb->parameter_instruction(p)->shape();
    x.clear_layout();
    y.clear_layout();
    if (!(x == y)) {
      return absl::StrCat("entry parameter ", p, " shapes differ: ", x.ToString(), " vs ",
                          y.ToString());
    }
  }
  EquivalenceOptions compare_options = options;
  compare_options.computes_in_low_precision |=
      ref.low_precision || ComputesInLowPrecision(current);
  auto outputs = Evaluate(current, ref.arguments, options.evaluator);
  if (!outputs.ok()) return absl::StrCat("evaluating the result: ", outputs.status().ToString());
  EquivalenceResult result = CompareLiterals(ref.outputs, *outputs, compare_options);
  if (result.equivalent) return "";
  return absl::StrCat("not equivalent: ", result.message, " (max relative error ",
                      result.max_relative_error, ")");
}

// Modules whose integer outputs come from comparing bf16-rounded floats
// (top-k indices), so an exact integer comparison fails on a rounding tie
// that any reassociating pass may create: algsimp makes two logits of this
// ViT equal and topk's tie-break then swaps two indices. The equivalence
// checker cannot yet tell such ties from real errors (see issue 4's note).
const char* const kTieSensitiveModules[] = {"vit_infer_L4_d32_h4_p4_px16_b4_bf16"};

bool IsTieSensitive(const std::string& path) {
  for (const char* name : kTieSensitiveModules) {
    if (path.find(name) != std::string::npos) return true;
  }
  return false;
}

// Passes that change numerics by design on graphs computing in bf16/f16/f8:
// simplify-fp-conversions removes convert pairs such as f32->bf16->f32, and
// float-normalization-* moves low-precision arithmetic to a wider type (XLA
// allows the excess precision). They run on the other graphs, where they must
// keep results exact, and are skipped on low-precision ones.
bool ChangesLowPrecisionNumerics(const std::string& pass) {
  return pass == "simplify-fp-conversions" || absl::StartsWith(pass, "float-normalization-");
}

class RandomSequencesTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomSequencesTest, CorpusModulesStayValidAndEquivalent) {
  const int first_sequence = GetParam() * kSequencesPerShard;
  std::vector<Listed> modules;
  for (const Listed& m : ManifestModules()) {
    if (m.op_count <= kMaxOps && !IsTieSensitive(m.path)) modules.push_back(m);
  }
  ASSERT_FALSE(modules.empty()) << "no corpus modules of at most " << kMaxOps << " instructions";

  // Every registered pass.
  std::vector<std::string> passes;
  for (const PassInfo& info : PassRegistry::Builtin().passes()) passes.push_back(info.name);
  ASSERT_FALSE(passes.empty());

  std::map<std::string, std::unique_ptr<Module>> loaded;  // by corpus path
  std::map<std::string, std::string> load_errors;
  int failures = 0, pass_runs = 0, changed_runs = 0, skipped_runs = 0;
  std::vector<std::string> summary;
  auto start = std::chrono::steady_clock::now();

  for (int index = first_sequence; index < first_sequence + kSequencesPerShard; ++index) {
    // Each sequence has its own generator, so one can be rerun alone.
    const uint64_t seed = kSeed + static_cast<uint64_t>(index);
    std::mt19937_64 rng(seed);
    const Listed& listed =
        modules[std::uniform_int_distribution<size_t>(0, modules.size() - 1)(rng)];
    const int length = std::uniform_int_distribution<int>(kMinLength, kMaxLength)(rng);
    std::vector<std::string> sequence;
    for (int i = 0; i < length; ++i) {
      sequence.push_back(passes[std::uniform_int_distribution<size_t>(0, passes.size() - 1)(rng)]);
    }

    const std::string file = (CorpusDir() / listed.path).string();
    const std::string where = absl::StrCat("module ", listed.path, ", sequence ", index,
                                           " (seed ", seed, ")");
    if (!loaded.count(listed.path) && !load_errors.count(listed.path)) {
      auto module = LoadModule(file);
      if (module.ok()) {
        loaded[listed.path] = std::move(*module);
      } else {
        load_errors[listed.path] = module.status().ToString();
      }
    }
    if (load_errors.count(listed.path)) {
      ADD_FAILURE() << where << ": cannot load: " << load_errors[listed.path];
      ++failures;
      continue;
    }
    const Module& original = *loaded[listed.path];

    Reference ref;
    ref.module = &original;
    {
      const EquivalenceOptions options;
      ref.arguments = MakeRandomArguments(original, options.seed, options.inputs);
      auto outputs = Evaluate(original, ref.arguments, options.evaluator);
      if (!outputs.ok()) {
        ADD_FAILURE() << where << ": cannot evaluate the input module: " << outputs.status();
        ++failures;
        continue;
      }
      ref.outputs = std::move(*outputs);
      ref.low_precision = ComputesInLowPrecision(original);
    }

    std::unique_ptr<Module> module = original.Clone();
    std::string text = PrintModule(*module);
    std::vector<std::string> done;
    for (const std::string& name : sequence) {
      done.push_back(name);
      if (ref.low_precision && ChangesLowPrecisionNumerics(name)) {
        ++skipped_runs;
        continue;
      }
      auto fail = [&](const std::string& error) {
        ++failures;
        std::string line = absl::StrCat(where, ", after ", done.size(), "/", sequence.size(),
                                        " passes: ", error);
        summary.push_back(line);
        ADD_FAILURE() << line << "\n  passes so far: " << absl::StrJoin(done, ",")
                      << "\n  full sequence: " << absl::StrJoin(sequence, ",")
                      << "\n  reproduce: build/hlogym opt datasets/corpus/" << listed.path
                      << " --passes=" << absl::StrJoin(done, ",");
      };
      auto pass = PassRegistry::Builtin().Create(name);
      if (!pass.ok()) {
        fail(absl::StrCat("cannot create pass ", name, ": ", pass.status().ToString()));
        break;
      }
      auto changed = (*pass)->Run(*module);
      ++pass_runs;
      if (!changed.ok()) {
        fail(absl::StrCat("pass ", name, " failed: ", changed.status().ToString()));
        break;
      }
      std::string after = PrintModule(*module);
      const bool text_changed = after != text;
      if (*changed != text_changed) {
        fail(absl::StrCat("pass ", name, " reported changed=", *changed,
                          " but the printed module ", text_changed ? "changed" : "did not change"));
        break;
      }
      text = std::move(after);
      absl::Status verified = VerifyModule(*module);
      if (!verified.ok()) {
        fail(absl::StrCat("after pass ", name, " the module does not verify: ",
                          verified.ToString()));
        break;
      }
      if (!text_changed) continue;  // the same module: equivalence still holds
      ++changed_runs;
      std::string mismatch = CheckAgainst(ref, *module);
      if (!mismatch.empty()) {
        fail(absl::StrCat("after pass ", name, ": ", mismatch));
        break;
      }
    }
  }

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ RandomSequences ] sequences " << first_sequence << ".."
            << first_sequence + kSequencesPerShard - 1 << " over " << modules.size()
            << " modules (<= " << kMaxOps << " instructions), " << passes.size()
            << " passes, " << pass_runs << " pass runs (" << changed_runs
            << " changed the module, " << skipped_runs
            << " skipped as precision-changing on low-precision graphs), " << failures << " failing sequences, " << seconds
            << " s\n";
  for (const std::string& line : summary) std::cout << "  FAIL " << line << "\n";
}

INSTANTIATE_TEST_SUITE_P(Shards, RandomSequencesTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hlogym
