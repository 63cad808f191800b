// Semantic checks for the control-flow pass tests: the rewritten module
// computes what the original did on seeded random inputs.
#ifndef HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_
#define HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "eval/equivalence.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {

inline void ExpectSameSemantics(const PassRun& run, int trials = 3) {
  ASSERT_NE(run.module, nullptr);
  auto original = ParseModule(run.before, "before.hlo");
  ASSERT_TRUE(original.ok()) << original.status();
  EquivalenceOptions options;
  options.trials = trials;
  auto result = CheckEquivalent(**original, *run.module, options);
  ASSERT_TRUE(result.ok()) << result.status();
  // A comparison the check could not judge (vacuous outputs) proves nothing.
  EXPECT_TRUE(result->judged) << result->message << "\n" << run.after;
  EXPECT_TRUE(result->equivalent) << result->message << "\n" << run.after;
}

// One level of nested counted loops: NAME_body and NAME_cond over (i, x, dead) for `trips`
// iterations. The body runs the loop INNER (when given) on (0, x, -x) and carries its x on,
// else doubles x; the third element is dead at every level.
inline std::string LoopLevel(const std::string& name, const std::string& inner, int trips) {
  const std::string value = inner.empty()
                                ? "  y = f32[4] add(x, x)\n"
                                : "  neg = f32[4] negate(x)\n  zero = s32[] constant(0)\n"
                                  "  init = (s32[], f32[4], f32[4]) tuple(zero, x, neg)\n"
                                  "  w = (s32[], f32[4], f32[4]) while(init), condition=" +
                                      inner + "_cond, body=" + inner +
                                      "_body\n  y = f32[4] get-tuple-element(w), index=1\n";
  return name + R"(_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
)" + value +
         R"(  junk = f32[4] get-tuple-element(p), index=2
  junk2 = f32[4] multiply(junk, junk)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, y, junk2)
}
)" + name +
         R"(_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant()" +
         std::to_string(trips) + R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
)";
}

// Loops nested in the order given (innermost first, with their trip counts), the outermost run
// by the entry on (0, x, -x).
inline std::string NestedLoops(const std::vector<std::pair<std::string, int>>& levels) {
  std::string text = "HloModule nested\n";
  std::string inner;
  for (const auto& [name, trips] : levels) {
    text += LoopLevel(name, inner, trips);
    inner = name;
  }
  return text + R"(ENTRY main {
  x = f32[4] parameter(0)
  neg = f32[4] negate(x)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, neg)
  w = (s32[], f32[4], f32[4]) while(init), condition=)" +
         inner + "_cond, body=" + inner + R"(_body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_
