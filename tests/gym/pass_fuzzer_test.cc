// The differential pass fuzzer (`hlogym fuzz-passes`) must catch broken
// passes of each kind, blame the right one after minimizing, and pass clean
// ones.
#include "gym/pass_fuzzer.h"

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "gym_test_util.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

// Per process: ctest runs these tests side by side, and two of them write the
// same module.
std::string WriteModule(const std::string& name, const std::string& text) {
  return testing::WriteTestModule(name, text.c_str());
}

const char kSubtract[] = R"(HloModule sub
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  d = f32[8] subtract(x, y)
  e = f32[8] exponential(d)
  ROOT r = f32[8] add(e, d)
}
)";

// Computes y - x instead of x - y, and says so.
class SwapOperands : public Pass {
 public:
  std::string_view name() const override { return "mutant-swap-operands"; }
  absl::StatusOr<bool> Run(Module& module) override {
    bool changed = false;
    for (const auto& instruction : module.entry_computation()->instructions()) {
      if (instruction->opcode() != Opcode::kSubtract) continue;
      Instruction* a = instruction->operand(0);
      Instruction* b = instruction->operand(1);
      instruction->ReplaceOperandWith(0, b);
      instruction->ReplaceOperandWith(1, a);
      changed = true;
    }
    return changed;
  }
};

// Changes the module but reports no change.
class SilentRename : public Pass {
 public:
  std::string_view name() const override { return "mutant-silent-rename"; }
  absl::StatusOr<bool> Run(Module& module) override {
    Instruction* root = module.entry_computation()->root_instruction();
    root->set_name(root->name() + "x");
    return false;
  }
};

// Leaves a shape that does not check.
class BadShape : public Pass {
 public:
  std::string_view name() const override { return "mutant-bad-shape"; }
  absl::StatusOr<bool> Run(Module& module) override {
    for (const auto& instruction : module.entry_computation()->instructions()) {
      if (instruction->opcode() == Opcode::kExp) {
        instruction->set_shape(Shape(PrimitiveType::kF32, {9}));
        return true;
      }
    }
    return false;
  }
};

// A sound rewrite (a renaming, reported) behind a pre-check that says there is
// nothing to do.
class BlindPreCheck : public Pass {
 public:
  std::string_view name() const override { return "mutant-blind-pre-check"; }
  bool MayChange(const Module& module) const override { return false; }
  absl::StatusOr<bool> Run(Module& module) override {
    Instruction* root = module.entry_computation()->root_instruction();
    root->set_name(root->name() + "x");
    return true;
  }
};

// Renames the root (sound, and reported) on a run with no record of an earlier one, and skips
// the module whenever it has one, changes or not: change tracking that never looks at changes.
class StaleTracking : public Pass {
 public:
  std::string_view name() const override { return "mutant-stale-tracking"; }
  absl::StatusOr<bool> Run(Module& module) override {
    TrackedRun run(module, std::string(name()));
    const bool first = !run.since().has_value();
    if (first) {
      Instruction* root = module.entry_computation()->root_instruction();
      root->set_name(root->name() + "x");
    }
    run.Complete();
    return first;
  }
};

PassRegistry CleanRegistry() {
  PassRegistry registry;
  for (const char* name : {"dce", "cse", "algsimp"}) {
    registry.Register(*PassRegistry::Builtin().Find(name));
  }
  return registry;
}

TEST(PassFuzzer, CatchesEachKindOfBrokenPassAndBlamesIt) {
  PassRegistry registry = CleanRegistry();
  registry.Register({"mutant-swap-operands", "", [] { return std::make_unique<SwapOperands>(); }});
  registry.Register({"mutant-silent-rename", "", [] { return std::make_unique<SilentRename>(); }});
  registry.Register({"mutant-bad-shape", "", [] { return std::make_unique<BadShape>(); }});
  registry.Register(
      {"mutant-blind-pre-check", "", [] { return std::make_unique<BlindPreCheck>(); }});
  PassFuzzOptions options;
  options.sequences = 80;
  options.min_length = 3;
  options.max_length = 8;
  options.registry = &registry;
  absl::StatusOr<PassFuzzReport> report =
      FuzzPasses({WriteModule("fuzz_sub.hlo", kSubtract)}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->sequences, 80);
  std::set<std::string> kinds;
  for (const PassFuzzFailure& failure : report->failures) {
    kinds.insert(failure.kind);
    // Minimized to the one guilty pass.
    ASSERT_EQ(failure.passes.size(), 1u) << failure.kind << ": " << failure.message;
    EXPECT_THAT(failure.passes[0], ::testing::StartsWith("mutant-"));
    EXPECT_EQ(failure.drawn.back(), failure.passes[0]);
    const std::map<std::string, std::string> culprit = {{"not equivalent", "mutant-swap-operands"},
                                                        {"changed flag", "mutant-silent-rename"},
                                                        {"verifier", "mutant-bad-shape"},
                                                        {"pre-check", "mutant-blind-pre-check"}};
    ASSERT_TRUE(culprit.count(failure.kind)) << failure.kind << ": " << failure.message;
    EXPECT_EQ(failure.passes[0], culprit.at(failure.kind)) << failure.message;
  }
  EXPECT_EQ(kinds,
            (std::set<std::string>{"not equivalent", "changed flag", "verifier", "pre-check"}));
}

TEST(PassFuzzer, CatchesATrackedPassThatSkipsWhatAFullRunWouldChange) {
  PassRegistry registry = CleanRegistry();
  registry.Register(
      {"mutant-stale-tracking", "", [] { return std::make_unique<StaleTracking>(); }});
  PassFuzzOptions options;
  options.sequences = 40;
  options.min_length = 4;
  options.max_length = 8;
  options.registry = &registry;
  absl::StatusOr<PassFuzzReport> report =
      FuzzPasses({WriteModule("fuzz_sub.hlo", kSubtract)}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->failures.empty());
  for (const PassFuzzFailure& failure : report->failures) {
    EXPECT_EQ(failure.kind, "tracked run") << failure.message;
    // The mutant's first run leaves the record its second run wrongly trusts.
    EXPECT_EQ(failure.passes,
              (std::vector<std::string>{"mutant-stale-tracking", "mutant-stale-tracking"}));
  }
}

TEST(PassFuzzer, CleanPassesPassAndVacuousModulesAreNamed) {
  PassRegistry registry = CleanRegistry();
  PassFuzzOptions options;
  options.sequences = 30;
  options.registry = &registry;
  const std::string nan = WriteModule("fuzz_nan.hlo", R"(HloModule nan
ENTRY main {
  x = f32[8] parameter(0)
  t = f32[] constant(3)
  b = f32[8] broadcast(t), dimensions={}
  d = f32[8] subtract(x, b)
  ROOT s = f32[8] sqrt(d)
}
)");
  absl::StatusOr<PassFuzzReport> report =
      FuzzPasses({WriteModule("fuzz_sub.hlo", kSubtract), nan}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->failures.empty()) << report->failures[0].message;
  EXPECT_GT(report->pass_runs, 30);
  EXPECT_THAT(report->vacuous_modules, ::testing::ElementsAre(nan));
  // Bad options are errors, not empty reports.
  options.min_length = 0;
  EXPECT_FALSE(FuzzPasses({nan}, options).ok());
}

// A folder of real dumps holds modules the fuzzer cannot check: they are
// skipped, each with its reason, and the rest are fuzzed.
TEST(PassFuzzer, SkipsModulesItCannotCheckAndFuzzesTheRest) {
  PassRegistry registry = CleanRegistry();
  PassFuzzOptions options;
  options.sequences = 20;
  options.registry = &registry;
  const std::string bad_shape = WriteModule("fuzz_bad_shape.hlo", R"(HloModule bad_shape
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT sum = f32[2] add(a, b)
}
)");
  // One replica cannot compute a gather that grows its operand.
  const std::string gather = WriteModule("fuzz_all_gather.hlo", R"(HloModule gather
ENTRY main {
  x = f32[4] parameter(0)
  ROOT g = f32[8] all-gather(x), dimensions={0}, replica_groups={{0,1}}
}
)");
  const std::string good = WriteModule("fuzz_sub.hlo", kSubtract);
  absl::StatusOr<PassFuzzReport> report = FuzzPasses({bad_shape, good, gather}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->modules, 1);
  EXPECT_EQ(report->sequences, 20);  // every check on the module that can be checked
  EXPECT_TRUE(report->failures.empty());
  ASSERT_EQ(report->skipped_modules.size(), 2u);
  EXPECT_EQ(report->skipped_modules[0].module, bad_shape);
  EXPECT_THAT(report->skipped_modules[0].reason, ::testing::HasSubstr("fuzz_bad_shape.hlo"));
  EXPECT_EQ(report->skipped_modules[1].module, gather);
  EXPECT_THAT(report->skipped_modules[1].reason,
              ::testing::AllOf(::testing::StartsWith("cannot be evaluated: "),
                               ::testing::HasSubstr("collective whose result shape differs")));
  // Nothing left to fuzz is an error, not an empty report.
  absl::StatusOr<PassFuzzReport> none = FuzzPasses({bad_shape, gather}, options);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), ::testing::HasSubstr("no module could be fuzzed"));
}

// A module compiled for two partitions: once spmd-partitioning has split it,
// its parameters are one partition's, and it is checked against the original
// split the same way (per partition), not reported as a different signature.
TEST(PassFuzzer, ChecksASplitModuleAgainstTheOriginalSplit) {
  PassRegistry registry = CleanRegistry();
  registry.Register(*PassRegistry::Builtin().Find("spmd-partitioning"));
  PassFuzzOptions options;
  options.sequences = 20;
  options.registry = &registry;
  const std::string split =
      WriteModule("fuzz_shard_map.hlo", R"(HloModule shard_map, num_partitions=2
ENTRY main {
  p = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  s = f32[4,6] custom-call(p), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
  local = f32[2,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  e = f32[2,6] exponential(local), sharding={manual}
  d = f32[2,6] subtract(e, local), sharding={manual}
  ROOT full = f32[4,6] custom-call(d), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
}
)");
  absl::StatusOr<PassFuzzReport> report = FuzzPasses({split}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->failures.empty()) << report->failures[0].message;
  EXPECT_GT(report->equivalence_checks, 0);
}

// A split module whose batch norm reads an all-gather of the split batch is
// checked with every partition's copy run (one partition alone cannot
// evaluate it; the fuzzer had crashed on the second such check, reading a
// reference it never made, and then counted them not judged).
TEST(PassFuzzer, ASplitModuleWithAGatherIsCheckedAcrossPartitions) {
  PassRegistry registry = CleanRegistry();
  registry.Register(*PassRegistry::Builtin().Find("spmd-partitioning"));
  PassFuzzOptions options;
  options.sequences = 20;
  options.registry = &registry;
  const std::string split = WriteModule("fuzz_batch_norm.hlo", R"(HloModule bn, num_partitions=2
ENTRY main {
  x = f32[4,3] parameter(0), sharding={devices=[2,1]<=[2]}
  scale = f32[3] parameter(1), sharding={replicated}
  offset = f32[3] parameter(2), sharding={replicated}
  t = (f32[4,3], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  ROOT mean = f32[3] get-tuple-element(t), index=1
}
)");
  absl::StatusOr<PassFuzzReport> report = FuzzPasses({split}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->failures.empty()) << report->failures[0].message;
  EXPECT_GT(report->equivalence_checks, 0);
  EXPECT_EQ(report->not_judged, 0);
}

}  // namespace
}  // namespace hlogym
