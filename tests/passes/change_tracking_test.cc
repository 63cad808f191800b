// Change tracking (passes/change_tracking.h): a tracked pass skips what has not changed since its
// last complete run, and still finds what a change anywhere in a rule's reach made possible.
#include "passes/change_tracking.h"

#include "passes/pass_test_util.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "text/text_test_util.h"

namespace hlogym::testing {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

const char kScaled[] = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[8] parameter(0)
  c = f32[] constant(2)
  b = f32[8] broadcast(c), dimensions={}
  m = f32[8] multiply(p, b)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(m, zero), dimensions={0}, to_apply=add
}
)";

TEST(TrackedRunTest, SkipsOnlyWhatDidNotChangeSinceTheLastCompleteRun) {
  std::unique_ptr<Module> module = Parse(kScaled);
  ASSERT_NE(module, nullptr);
  {
    TrackedRun first(*module, "pass");
    EXPECT_FALSE(first.since().has_value());  // no record: everything is new
    EXPECT_TRUE(first.MustVisit(*module->entry_computation()));
    first.Complete();
  }
  Computation* entry = module->entry_computation();
  Computation* add = module->FindComputation("add");
  {
    TrackedRun second(*module, "pass");
    ASSERT_TRUE(second.since().has_value());
    EXPECT_FALSE(second.MustVisit(*entry));
    EXPECT_FALSE(second.MustVisit(*FindInstruction(*module, "m")));
    // Another pass (another key) has no record.
    EXPECT_FALSE(TrackedRun(*module, "other").since().has_value());
  }
  // A change in the reducer reaches the reduce and the entry that calls it, not the multiply.
  add->root_instruction()->mutable_attrs();
  {
    TrackedRun run(*module, "pass");
    EXPECT_TRUE(run.MustVisit(*add));
    EXPECT_TRUE(run.MustVisit(*entry));
    EXPECT_TRUE(run.MustVisit(*FindInstruction(*module, "r")));
    EXPECT_FALSE(run.MustVisit(*FindInstruction(*module, "b")));
    run.Complete();
  }
  // Two operand levels down: the constant under the broadcast the multiply reads.
  FindInstruction(*module, "c")->mutable_attrs();
  {
    TrackedRun run(*module, "pass");
    EXPECT_TRUE(run.MustVisit(*FindInstruction(*module, "m")));
    EXPECT_FALSE(run.MustVisit(*FindInstruction(*module, "zero")));
    run.Complete();
  }
  // A new entry or header invalidates every record.
  module->mutable_raw_attributes();
  EXPECT_FALSE(TrackedRun(*module, "pass").since().has_value());
}

// algsimp: a second run over its own output looks at nothing, and a change two operand levels
// below an instruction (here a constant's value, edited in place) still gets it rewritten.
TEST(TrackedRunTest, AlgsimpFindsWhatAChangeBelowAnOperandMadePossible) {
  std::unique_ptr<Module> module = Parse(kScaled);
  ASSERT_NE(module, nullptr);
  AlgebraicSimplifier algsimp;
  ASSERT_TRUE(algsimp.Run(*module).ok());
  const uint64_t clock = module->change_clock();
  absl::StatusOr<bool> again = algsimp.Run(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(module->change_clock(), clock);

  // multiply(p, broadcast(1)) is p; only the constant changes.
  Instruction* c = FindInstruction(*module, "c");
  ASSERT_NE(c, nullptr);
  c->mutable_attrs().literal =
      std::make_shared<const Literal>(Literal::Scalar(PrimitiveType::kF32, 1.0f));
  absl::StatusOr<bool> changed = algsimp.Run(*module);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_CHECKS(PrintModule(*module), "CHECK-NOT: multiply\nCHECK: reduce(f32[8] %p");
}

}  // namespace
}  // namespace hlogym::testing
