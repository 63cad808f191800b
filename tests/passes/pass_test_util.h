// Helpers for pass tests: HLO text in, CHECK lines out (a small FileCheck),
// plus the "changed exactly when the text changed" rule every pass obeys.
// Defined in pass_test_util.cc: compiled once, not in each of the many test
// files that use them (std::regex is slow to compile).
#ifndef HLOGYM_TESTS_PASSES_PASS_TEST_UTIL_H_
#define HLOGYM_TESTS_PASSES_PASS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/verifier.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym::testing {

struct PassRun {
  bool changed = false;
  std::string before;  // printed before the pass
  std::string after;   // printed after the pass
  std::unique_ptr<Module> module;
};

// Parses `hlo`, runs the registered pass `pass_name` once, verifies the
// result, and checks that the pass reports "changed" exactly when the
// printed module changed, and never after its MayChange said it could not.
PassRun RunPass(std::string_view pass_name, std::string_view hlo);
// The same with a pass built here (options the registry does not offer).
PassRun RunPass(Pass& pass, std::string_view hlo);

// "HloModule m", a scalar f32 add named `sum` (the reducer most reduces in pass tests apply),
// then `entry`.
std::string WithSum(std::string_view entry);

// FileCheck-like matching of `text` against `checks`, one directive per line
// (a pattern is literal text, where {{regex}} spans are regular expressions):
//   CHECK: pattern       matches on some later line
//   CHECK-NEXT: pattern  matches on the line right after the previous match
//   CHECK-NOT: pattern   no line between the previous and next match has it
// Returns an empty string on success, else what failed.
std::string MatchChecks(std::string_view text, std::string_view checks);

#define EXPECT_CHECKS(text, checks)                                                             \
  do {                                                                                          \
    const std::string hlogym_text = (text);                                                     \
    const std::string hlogym_failure = ::hlogym::testing::MatchChecks(hlogym_text, (checks));   \
    EXPECT_TRUE(hlogym_failure.empty()) << hlogym_failure << "\n--- text ---\n" << hlogym_text; \
  } while (false)

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_PASSES_PASS_TEST_UTIL_H_
