// rng-expander: rng -> GetRngSeed-keyed Philox draws through
// rng-get-and-update-state and a call, equal to the evaluator's `rng`.
#include "passes/control_flow_test_util.h"
#include "passes/registry.h"

namespace hlogym::testing {
namespace {

std::string Rng(const std::string& type, const std::string& dims, const std::string& dist,
                const std::string& a, const std::string& b) {
  return "HloModule m\nENTRY e {\n  a = " + type + "[] constant(" + a + ")\n  b = " + type +
         "[] constant(" + b + ")\n  ROOT r = " + type + dims + " rng(a, b), distribution=" + dist +
         "\n}\n";
}

TEST(RngExpanderTest, UniformF32) {
  PassRun run = RunPass("rng-expander", Rng("f32", "[2,3]", "rng_uniform", "-1", "4"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: custom-call(), custom_call_target="GetRngSeed"
CHECK: xor(
CHECK: u64[2] rng-get-and-update-state(), delta=6
CHECK: ROOT {{.*}} f32[2,3] call(
CHECK-NOT: rng(
)");
  ExpectSameSemantics(run);
}

TEST(RngExpanderTest, SameDrawsAsTheEvaluator) {
  const std::vector<std::vector<std::string>> cases = {
      {"f32", "[7]", "rng_uniform", "0", "1"},     {"f64", "[3,2]", "rng_uniform", "-2", "5"},
      {"f32", "[3,5]", "rng_normal", "1", "2"},    {"f32", "[]", "rng_normal", "0", "1"},
      {"f64", "[4,3]", "rng_normal", "0", "1"},    {"bf16", "[6]", "rng_uniform", "0", "8"},
      {"f16", "[5]", "rng_normal", "0", "1"},      {"s32", "[9]", "rng_uniform", "-5", "100"},
      {"u32", "[4]", "rng_uniform", "3", "3"},     {"s64", "[2,2]", "rng_uniform", "0", "1000"},
      {"u64", "[3]", "rng_uniform", "7", "70000"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c[0] + c[1] + " " + c[2]);
    PassRun run = RunPass("rng-expander", Rng(c[0], c[1], c[2], c[3], c[4]));
    EXPECT_TRUE(run.changed);
    ExpectSameSemantics(run, 1);
  }
}

TEST(RngExpanderTest, UnsupportedTypeIsAnError) {
  auto module = ParseModule(Rng("s8", "[4]", "rng_uniform", "0", "3"), "t.hlo");
  ASSERT_TRUE(module.ok());
  auto pass = PassRegistry::Builtin().Create("rng-expander");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("r: rng of type s8"), std::string::npos)
      << changed.status();
}

TEST(RngExpanderTest, NoRngNoChange) {
  PassRun run = RunPass("rng-expander", R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
