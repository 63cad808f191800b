// Semantic checks for the control-flow pass tests: the rewritten module
// computes what the original did on seeded random inputs.
#ifndef HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_
#define HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_

#include <string>

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

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_PASSES_CONTROL_FLOW_TEST_UTIL_H_
