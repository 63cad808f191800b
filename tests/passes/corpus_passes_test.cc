// Every registered pass alone, and xla-cpu-default, over every
// pre-optimization smoke module: the result verifies, "changed" matches the
// printed text, and the module computes the same as before on seeded random
// inputs (when the evaluator can run the original).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/verifier.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "gtest/gtest.h"
#include "hlo/fingerprint.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "text/file_io.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym {
namespace {

std::vector<std::string> SmokeModules() {
  std::vector<std::string> files;
  std::filesystem::path dir = std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "smoke";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hlo" || name.find(".optimized") != std::string::npos ||
        name.find(".debuginfo") != std::string::npos) {
      continue;
    }
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Reference {
  std::unique_ptr<Module> module;
  // Some computation has several control-flow call sites: flattening and
  // inlining then copy it legitimately, as XLA does, so the op count may grow.
  bool has_shared_callees = false;
  std::string text;
  std::vector<Literal> arguments;
  bool evaluated = false;
  Literal output;
};

// Parsed modules and their outputs on seed-1 random inputs, computed once.
const Reference& GetReference(const std::string& path) {
  static auto* cache = new std::map<std::string, Reference>();
  auto it = cache->find(path);
  if (it != cache->end()) return it->second;
  Reference& ref = (*cache)[path];
  auto module = LoadModule(path);
  if (!module.ok()) {
    ADD_FAILURE() << module.status();
    return ref;
  }
  ref.module = std::move(*module);
  ref.text = PrintModule(*ref.module);
  std::map<const Computation*, int> sites;
  for (const auto& computation : ref.module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      Opcode op = instruction->opcode();
      if (op != Opcode::kCall && op != Opcode::kWhile && op != Opcode::kConditional) continue;
      for (const Computation* callee : instruction->called_computations()) {
        if (++sites[callee] > 1) ref.has_shared_callees = true;
      }
    }
  }
  ref.arguments = *MakeRandomArguments(*ref.module, /*seed=*/1);
  auto output = Evaluate(*ref.module, ref.arguments);
  if (output.ok()) {
    ref.evaluated = true;
    ref.output = std::move(*output);
  }
  return ref;
}

// Runs `pass` over a clone of every smoke module and checks the result.
void CheckOnSmokeModules(const std::function<std::unique_ptr<Pass>()>& make_pass,
                         bool op_count_must_not_grow) {
  for (const std::string& path : SmokeModules()) {
    SCOPED_TRACE(path);
    const Reference& ref = GetReference(path);
    if (ref.module == nullptr) continue;
    std::unique_ptr<Module> module = ref.module->Clone();
    std::unique_ptr<Pass> pass = make_pass();
    const bool may_change = pass->MayChange(*module);
    auto changed = pass->Run(*module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(may_change || !*changed) << "pass " << pass->name() << ": MayChange said no";
    std::string after = PrintModule(*module);
    EXPECT_EQ(*changed, after != ref.text) << "pass " << pass->name();
    absl::Status verified = VerifyModule(*module);
    EXPECT_TRUE(verified.ok()) << verified;
    if (!verified.ok()) continue;
    // XLA itself grows these: einsum.hlo because algsimp rewrites dots
    // without contracting dimensions into multiply(broadcast, broadcast), and
    // topk_sort.hlo because comparison-expander lowers its total-order float
    // compares to integer compares of the bits (the bitcast/xor/select
    // comparators in datasets/smoke/topk_sort.optimized.hlo), and
    // rng_bit_generator.hlo because rng-bit-generator-expander spells out the
    // Philox rounds (datasets/smoke/rng_bit_generator.optimized.hlo), and
    // kv_cache_bf16.hlo because float-normalization-bf16 puts f32 converts
    // around the ops XLA:CPU does not compute in bf16 (with these converts the
    // corpus's bf16 modules match XLA's op counts, bench/default_vs_xla.py).
    bool grows_in_xla = path.ends_with("/einsum.hlo") || path.ends_with("/topk_sort.hlo") ||
                        path.ends_with("/rng_bit_generator.hlo") ||
                        path.ends_with("/kv_cache_bf16.hlo");
    if (op_count_must_not_grow && !ref.has_shared_callees && !grows_in_xla) {
      EXPECT_LE(module->instruction_count(), ref.module->instruction_count());
    }
    if (!ref.evaluated || !*changed) continue;
    auto output = Evaluate(*module, ref.arguments);
    ASSERT_TRUE(output.ok()) << output.status();
    // As CheckEquivalent: low-precision tolerances when either module
    // computes in f16/bf16/f8 (float normalization changes bf16 rounding).
    EquivalenceOptions options;
    options.computes_in_low_precision =
        ComputesInLowPrecision(*ref.module) || ComputesInLowPrecision(*module);
    EquivalenceResult result = CompareLiterals(ref.output, *output, options);
    EXPECT_TRUE(result.equivalent) << result.message;
  }
}

class PassOnSmokeModulesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PassOnSmokeModulesTest, VerifiesAndStaysEquivalent) {
  const std::string name = GetParam();
  CheckOnSmokeModules(
      [&] {
        auto pass = PassRegistry::Builtin().Create(name);
        return pass.ok() ? std::move(*pass) : nullptr;
      },
      /*op_count_must_not_grow=*/false);
}

std::vector<std::string> RegisteredPassNames() {
  std::vector<std::string> names;
  for (const PassInfo& info : PassRegistry::Builtin().passes()) names.push_back(info.name);
  return names;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllPasses, PassOnSmokeModulesTest,
                         ::testing::ValuesIn(RegisteredPassNames()), TestName);

TEST(XlaCpuDefaultTest, VerifiesShrinksAndStaysEquivalent) {
  CheckOnSmokeModules(
      [] {
        auto pipeline = CreatePipeline("xla-cpu-default");
        return pipeline.ok() ? std::move(*pipeline) : nullptr;
      },
      /*op_count_must_not_grow=*/true);
}

TEST(XlaCpuDefaultTest, ListsMissingPasses) {
  const PipelineInfo* info = nullptr;
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    if (pipeline.name == "xla-cpu-default") info = &pipeline;
  }
  ASSERT_NE(info, nullptr);
  for (const std::string& missing : info->missing_passes) {
    EXPECT_EQ(PassRegistry::Builtin().Find(missing), nullptr) << missing;
  }
  // The passes XLA's CPU pipeline runs that hlogym has, and the rest, add up.
  for (const char* name : {"dce", "cse", "tuple-simplifier", "flatten-call-graph"}) {
    EXPECT_EQ(std::count(info->missing_passes.begin(), info->missing_passes.end(), name), 0);
  }
}

// The exact default leaves out passes (ExactPipelineOmits); where none of them
// changes a module in the default's run, both make the same module (auto then
// skips the exact start). The bf16 smoke modules show the other side: float
// normalization changes them and the two results differ.
TEST(XlaCpuDefaultExactTest, SameModuleWhereNoOmittedPassChangesIt) {
  int same = 0;
  int differ = 0;
  for (const std::string& path : SmokeModules()) {
    auto d = LoadModule(path);
    auto exact = LoadModule(path);
    ASSERT_TRUE(d.ok() && exact.ok()) << path;
    auto default_pipeline = CreatePipeline(kDefaultPipeline);
    auto exact_pipeline = CreatePipeline(kExactPipeline);
    ASSERT_TRUE(default_pipeline.ok() && exact_pipeline.ok());
    bool omitted_pass_changed = false;
    {
      PassTimer timer;
      ASSERT_TRUE((*default_pipeline)->Run(**d).ok()) << path;
      for (const PassTimer::Change& change : timer.changes()) {
        omitted_pass_changed |= ExactPipelineOmits(change.name);
      }
    }
    ASSERT_TRUE((*exact_pipeline)->Run(**exact).ok()) << path;
    const bool identical = ModuleFingerprint(**d) == ModuleFingerprint(**exact);
    if (!omitted_pass_changed) {
      EXPECT_TRUE(identical) << path;
      ++same;
    } else if (!identical) {
      ++differ;
    }
  }
  EXPECT_GT(same, 0);
  EXPECT_GT(differ, 0) << "no smoke module where float normalization changes the default's result";
}

TEST(XlaGpuDefaultTest, VerifiesShrinksAndStaysEquivalent) {
  CheckOnSmokeModules(
      [] {
        auto pipeline = CreatePipeline("xla-gpu-default");
        return pipeline.ok() ? std::move(*pipeline) : nullptr;
      },
      /*op_count_must_not_grow=*/true);
}

TEST(XlaGpuDefaultTest, ListsMissingPassesAndDiffersFromCpu) {
  const PipelineInfo* gpu = nullptr;
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    if (pipeline.name == "xla-gpu-default") gpu = &pipeline;
  }
  ASSERT_NE(gpu, nullptr);
  for (const std::string& missing : gpu->missing_passes) {
    EXPECT_EQ(PassRegistry::Builtin().Find(missing), nullptr) << missing;
  }
  // GPU-only steps that hlogym lacks are listed; the GPU variants hlogym has
  // (and the CPU-only passes) are not.
  for (const char* name : {"all-reduce-splitter"}) {
    EXPECT_EQ(std::count(gpu->missing_passes.begin(), gpu->missing_passes.end(), name), 1) << name;
  }
  for (const char* name :
       {"algsimp-gpu", "all-reduce-simp", "dot-merger", "reshape-mover-1d-broadcast-cheap",
        "slice-sinker", "convert-mover", "computation-deduplicator", "convolution-canonicalization",
        "cse_barrier_expander", "dot_dimension_sorter", "scatter-slice-simplifier", "topk-splitter",
        "stable-sort-expander", "gpu_scatter_expander"}) {
    EXPECT_EQ(std::count(gpu->missing_passes.begin(), gpu->missing_passes.end(), name), 0) << name;
  }
}

// The GPU pipeline runs passes the CPU one does not (dot-merger merges the two
// dots sharing an operand; CPU's pipeline leaves them), so the two baselines
// differ where they should.
TEST(XlaGpuDefaultTest, MergesDotsTheCpuPipelineLeaves) {
  const char* text = R"(HloModule m

ENTRY e {
  x = f32[8,16]{1,0} parameter(0)
  a = f32[16,4]{1,0} parameter(1)
  b = f32[16,4]{1,0} parameter(2)
  d0 = f32[8,4]{1,0} dot(x, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[8,4]{1,0} dot(x, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(d0, d1)
}
)";
  auto count_dots = [](const Module& module) {
    int dots = 0;
    for (const auto& computation : module.computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode() == Opcode::kDot) ++dots;
      }
    }
    return dots;
  };
  auto run = [&](const char* pipeline_name) -> int {
    auto module = ParseModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return -1;
    auto pipeline = CreatePipeline(pipeline_name);
    EXPECT_TRUE(pipeline.ok()) << pipeline.status();
    if (!pipeline.ok()) return -1;
    auto changed = (*pipeline)->Run(**module);
    EXPECT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(VerifyModule(**module).ok());
    return count_dots(**module);
  };
  EXPECT_EQ(run("xla-cpu-default"), 2);
  EXPECT_EQ(run("xla-gpu-default"), 1);
}

}  // namespace
}  // namespace hlogym
