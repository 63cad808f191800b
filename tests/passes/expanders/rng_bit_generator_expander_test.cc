// rng-bit-generator-expander: rng-bit-generator -> call of a plain-HLO
// Philox/ThreeFry computation with the same (state, bits), checked against
// the evaluator's native generators.
#include "passes/control_flow_test_util.h"
#include "passes/registry.h"

namespace hlogym::testing {
namespace {

std::string Module(const std::string& state_shape, const std::string& bits_shape,
                   const std::string& algorithm, const std::string& state = "") {
  std::string s = state.empty() ? "  s = " + state_shape + " parameter(0)\n"
                                : "  s = " + state_shape + " constant(" + state + ")\n";
  return "HloModule m\nENTRY e {\n" + s + "  ROOT r = (" + state_shape + ", " + bits_shape +
         ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

TEST(RngBitGeneratorExpanderTest, PhiloxDefaultBecomesCall) {
  PassRun run = RunPass("rng-bit-generator-expander", Module("u64[2]", "u32[4,8]", "rng_default"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: rng_philox
CHECK: iota()
CHECK: u64[] constant(3528531795)
CHECK: shift-right-logical(
CHECK: xor(
CHECK: ROOT {{.*}} call(u64[2] %s), to_apply=%rng_philox
CHECK-NOT: rng-bit-generator
)");
  ExpectSameSemantics(run);
}

TEST(RngBitGeneratorExpanderTest, SameBitsAcrossAlgorithmsTypesAndShapes) {
  for (const std::string alg : {"rng_philox", "rng_three_fry", "rng_default"}) {
    for (const std::string bits :
         {"u32[]", "u32[7]", "u32[3,5]", "s32[3,4,5]", "u64[5]", "s64[2,3]", "u16[9]", "u8[3,3]"}) {
      SCOPED_TRACE(alg + " " + bits);
      PassRun run = RunPass("rng-bit-generator-expander", Module("u64[2]", bits, alg));
      EXPECT_TRUE(run.changed);
      ExpectSameSemantics(run, 2);
    }
  }
}

TEST(RngBitGeneratorExpanderTest, PhiloxThreeWordStateWithCarry) {
  // The low counter word wraps within the draw and after it.
  PassRun run = RunPass("rng-bit-generator-expander", Module("u64[3]", "u32[4,5]", "rng_philox",
                                                             "{9, 18446744073709551613, 41}"));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, 1);
  run = RunPass("rng-bit-generator-expander",
                Module("u64[2]", "u64[7]", "rng_philox", "{9, 18446744073709551613}"));
  ExpectSameSemantics(run, 1);
}

TEST(RngBitGeneratorExpanderTest, DefaultPipelineEndsWithXlasOpCount) {
  // XLA's op count before layout-assignment for each module, read from the
  // dump of the pinned jaxlib (0.10.2) compiling it on the CPU. XLA's Philox
  // generator splits each state word into u32 halves and joins the counter's
  // words back, a round trip its simplifier keeps: without it the default
  // pipeline ended 14 instructions below XLA (a PyTorch/XLA step drawing
  // torch.randn on the device: 766 against 780 and 782).
  const struct {
    const char* state;
    const char* bits;
    const char* algorithm;
    int64_t xla_op_count;
  } cases[] = {
      {"u64[2]", "u32[8,2,32]", "rng_philox", 250},  {"u64[2]", "u64[16]", "rng_philox", 256},
      {"u64[3]", "u32[7]", "rng_philox", 258},       {"u64[3]", "u64[5,3]", "rng_philox", 265},
      {"u64[2]", "u32[8,2,32]", "rng_default", 250},
  };
  absl::StatusOr<std::unique_ptr<Pass>> pipeline = CreatePipeline("xla-cpu-default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.state) + " " + c.bits + " " + c.algorithm);
    PassRun run = RunPass(**pipeline, Module(c.state, c.bits, c.algorithm));
    EXPECT_EQ(run.module->instruction_count(), c.xla_op_count);
  }
}

// The generator is XLA's, instruction for instruction: its size right after
// the pass, read from the pinned XLA's dump of a PyTorch/XLA step that draws
// both (torchvision's ViT). The passes after the expander then go where
// XLA's go (in another form, the rbg PRNG's module ended 2 below XLA and the
// ViT step 7 above).
TEST(RngBitGeneratorExpanderTest, GeneratorHasXlasForm) {
  const struct {
    const char* bits;
    int64_t xla_instructions;
  } cases[] = {{"u32[1,2,3,32,32]", 353}, {"u64[2]", 363}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.bits);
    PassRun run = RunPass("rng-bit-generator-expander", Module("u64[2]", c.bits, "rng_default"));
    ASSERT_TRUE(run.changed);
    const Computation* generator = run.module->FindComputation("rng_philox");
    ASSERT_NE(generator, nullptr) << run.after;
    EXPECT_EQ(static_cast<int64_t>(generator->instructions().size()), c.xla_instructions);
    ExpectSameSemantics(run);
  }
}

TEST(RngBitGeneratorExpanderTest, OneGeneratorPerShape) {
  PassRun run = RunPass("rng-bit-generator-expander", R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  r0 = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_philox
  s1 = u64[2] get-tuple-element(r0), index=0
  r1 = (u64[2], u32[8]) rng-bit-generator(s1), algorithm=rng_philox
  b0 = u32[8] get-tuple-element(r0), index=1
  b1 = u32[8] get-tuple-element(r1), index=1
  ROOT t = (u32[8], u32[8]) tuple(b0, b1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 2);
  ExpectSameSemantics(run);
}

TEST(RngBitGeneratorExpanderTest, UnsupportedStateIsAnError) {
  auto module = ParseModule(Module("u64[3]", "u32[4]", "rng_three_fry"), "t.hlo");
  ASSERT_TRUE(module.ok());
  auto pass = PassRegistry::Builtin().Create("rng-bit-generator-expander");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("r: rng-bit-generator state must be u64[2]"),
            std::string::npos)
      << changed.status();
}

TEST(RngBitGeneratorExpanderTest, NoRngNoChange) {
  PassRun run = RunPass("rng-bit-generator-expander", R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT n = u64[2] negate(s)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
