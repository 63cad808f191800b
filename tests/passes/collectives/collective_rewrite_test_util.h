// Shared pieces of the collective rewrite tests: reducer computations and
// the equivalence check against the unrewritten module.
#ifndef HLOGYM_TESTS_PASSES_COLLECTIVE_REWRITE_TEST_UTIL_H_
#define HLOGYM_TESTS_PASSES_COLLECTIVE_REWRITE_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "eval/equivalence.h"
#include "passes/pass_test_util.h"
#include "text/parser.h"

namespace hlogym::testing {

constexpr std::string_view kReducers = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

inline std::string CollectiveModule(std::string_view entry, std::string_view header = "") {
  return "HloModule m" + std::string(header) + "\n" + std::string(kReducers) + std::string(entry);
}

inline void ExpectSameValues(std::string_view hlo, const Module& after) {
  auto original = ParseModule(hlo, "before.hlo");
  ASSERT_TRUE(original.ok()) << original.status();
  auto result = CheckEquivalent(**original, after);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->equivalent) << result->message;
}

// Runs `pass` on `hlo` expecting an error whose message names `name`, with
// the module left as it was.
inline void ExpectErrorNaming(std::string_view pass, std::string_view hlo, std::string_view name) {
  auto module = ParseModule(hlo, "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto created = PassRegistry::Builtin().Create(pass);
  ASSERT_TRUE(created.ok()) << created.status();
  auto changed = (*created)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.status().message()).find(name), std::string::npos)
      << changed.status();
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_PASSES_COLLECTIVE_REWRITE_TEST_UTIL_H_
